"""Deal tracker throughput: generated deals replayed through the tracker.

Prints table events per second and the cost of one event beside the cost of
one bare ``transitions`` trigger on a two-state machine (same flags as the
tracker: auto_transitions=False, queued=True), measured in the same run, for
10,000 raspasovka deals and for a mixed game with ``rules.bidding`` (auctions,
contracts, misères, unplayed deals, raspasovka; tests/core/contract_games.py).
Then a whole 1,000-deal mixed session is replayed from its JSON Lines file
(``controller.store.replay.replay_file``) beside a bare ``json.loads`` of every
line of the same file.

Targets: raspasovka >= 50,000 events/s on one core, <= 3x the bare trigger
(issue 2); a mixed game no slower per event than raspasovka within 10 %, and
the 1,000-deal replay within 3x the bare ``json.loads`` (issue 12).

    python bench/bench_tracker.py [--deals 10000] [--mixed-deals 3000] [--noise]
"""

from __future__ import annotations

import argparse
import gc
import json
import logging
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests"), str(ROOT / "tests" / "core")]

from transitions import Machine  # noqa: E402

from controller.core.config import GameConfig  # noqa: E402
from controller.app.sim import Noise, TableSimulator  # noqa: E402
from controller.core.tracker import DealTracker  # noqa: E402
from controller.core.config import Rules, Table  # noqa: E402
from controller.store.replay import replay_file  # noqa: E402
from contract_games import MixedGame  # noqa: E402

logging.getLogger("transitions").setLevel(logging.WARNING)


def bare_trigger_cost(n: int = 200_000) -> float:
    class Model:
        pass

    m = Model()
    Machine(model=m, states=["a", "b"], initial="a", auto_transitions=False, queued=True,
            transitions=[{"trigger": "go", "source": "a", "dest": "b"},
                         {"trigger": "back", "source": "b", "dest": "a"}])
    go, back = m.go, m.back
    start = time.perf_counter()
    for _ in range(n // 2):
        go()
        back()
    return (time.perf_counter() - start) / n


def timed_feed(tracker: DealTracker, batches) -> tuple[int, float]:
    """Feed every batch of events; return (events, busy seconds), GC off while timing."""
    feed = tracker.feed
    events, busy = 0, 0.0
    for batch in batches:
        gc.disable()
        start = time.perf_counter()
        for event in batch:
            feed(event)
        busy += time.perf_counter() - start
        gc.enable()
        events += len(batch)
    return events, busy


def raspasovka_batches(game: GameConfig, deals: int, chunk: int, noise: bool):
    sim = TableSimulator(game, seed=1, noise=Noise.demo() if noise else Noise())
    done = 0
    while done < deals:
        n = min(chunk, deals - done)
        yield list(sim.deals(n))
        done += n
        print(f"\r{done}/{deals} raspasovka deals", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)


def mixed_batches(game: GameConfig, deals: int, chunk: int, noise: bool):
    sim = MixedGame(game, seed=1, noise=noise)
    done = 0
    while done < deals:
        n = min(chunk, deals - done)
        yield list(sim.deals(n))
        done += n
        print(f"\r{done}/{deals} mixed deals", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)


def replay_vs_json(game: GameConfig, deals: int, path: Path) -> tuple[float, float, int]:
    """Seconds to replay a ``deals``-deal mixed session file, and to json.loads its lines."""
    with open(path, "w", encoding="utf-8") as fh:
        for event in MixedGame(game, seed=7).deals(deals):
            fh.write(event.to_json() + "\n")
    start = time.perf_counter()
    with open(path, "rb") as fh:
        for line in fh.read().decode("utf-8").split("\n"):
            if line:
                json.loads(line)
    bare = time.perf_counter() - start
    start = time.perf_counter()
    tracker = replay_file(path, game)
    replay = time.perf_counter() - start
    return replay, bare, len(tracker.records)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--deals", type=int, default=10_000)
    ap.add_argument("--noise", action="store_true", help="add flicker, repeats, out-of-turn cards …")
    ap.add_argument("--mixed-deals", type=int, default=3000, help="deals of the mixed contract game")
    ap.add_argument("--replay-deals", type=int, default=1000, help="deals of the replayed session file")
    ap.add_argument("--chunk", type=int, default=500, help="deals generated per batch")
    args = ap.parse_args()
    game = GameConfig()
    bare_before = bare_trigger_cost()
    tracker = DealTracker(game)
    events, busy = timed_feed(tracker, raspasovka_batches(game, args.deals, args.chunk, args.noise))
    mixed_game = GameConfig(Table(), Rules(bidding=True))
    mixed = DealTracker(mixed_game)
    m_events, m_busy = timed_feed(mixed, mixed_batches(mixed_game, args.mixed_deals, args.chunk, args.noise))
    bare = (bare_before + bare_trigger_cost()) / 2
    complete = sum(1 for r in tracker.records if r.complete)
    per_event = busy / events
    m_per_event = m_busy / m_events
    kinds = {}
    for r in mixed.records:
        kinds[r.kind] = kinds.get(r.kind, 0) + 1
    print(f"deals replayed:            {complete} complete of {args.deals}")
    print(f"table events:              {events}  ({events / args.deals:.1f} per deal)")
    print(f"tracker throughput:        {events / busy:,.0f} events/s")
    print(f"cost of one event:         {per_event * 1e6:.2f} us")
    print(f"bare transitions trigger:  {bare * 1e6:.2f} us")
    print(f"ratio event / trigger:     {per_event / bare:.2f}x")
    print(f"mixed game deals:          {len(mixed.records)} ({', '.join(f'{k} {v}' for k, v in sorted(kinds.items()))})")
    print(f"mixed game events:         {m_events}  ({m_events / args.mixed_deals:.1f} per deal)")
    print(f"mixed game throughput:     {m_events / m_busy:,.0f} events/s")
    print(f"mixed cost of one event:   {m_per_event * 1e6:.2f} us  "
          f"({m_per_event / per_event:.2f}x raspasovka, {m_per_event / bare:.2f}x the bare trigger)")
    with tempfile.TemporaryDirectory() as tmp:
        replay, loads, deals = replay_vs_json(mixed_game, args.replay_deals, Path(tmp) / "session.jsonl")
    print(f"{deals}-deal session replay:  {replay:.3f} s; bare json.loads of its lines {loads:.3f} s "
          f"({replay / loads:.2f}x)")


if __name__ == "__main__":
    main()
