"""Deal tracker throughput: generated deals replayed through the tracker.

Prints table events per second and the cost of one event beside the cost of
one bare ``transitions`` trigger on a two-state machine (same flags as the
tracker: auto_transitions=False, queued=True), measured in the same run, for
10,000 raspasovka deals and for a mixed game with ``rules.bidding`` (auctions,
contracts, misères, unplayed deals, raspasovka; tests/core/contract_games.py).
Then a whole 1,000-deal mixed session is replayed
(``controller.store.replay.replay_file``) beside a bare ``json.loads`` of every
line of the same file: its game log ``events.jsonl`` as the table writes it
(every event followed by its derived lines, which a replay skips; FORMATS.md
"Game log"), and its table events alone, with the share of parsing (reading and
validation alone) and of the ``transitions`` machinery (the triggers the replay
fires, counted in a separate run, times the bare trigger's cost).

Targets: raspasovka >= 50,000 events/s on one core, <= 3x the bare trigger;
a mixed game no slower per event than raspasovka within 10 %, and
the 1,000-deal replay within 3x the bare ``json.loads``.  The
per-event figures are also given against the bare trigger, which carries them
across runs and machines: the raspasovka tracker before the contract game
(commit ce11718, its own bench_tracker.py) cost 0.91-1.03x the bare trigger
per event.

    python bench/bench_tracker.py [--deals 10000] [--mixed-deals 3000] [--noise]
"""

from __future__ import annotations

import argparse
import gc
import json
import logging
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests"), str(ROOT / "tests" / "core")]

from transitions import Machine  # noqa: E402
from transitions.core import Event  # noqa: E402

from controller.core.cards import zone_names  # noqa: E402
from controller.core.config import GameConfig  # noqa: E402
from controller.app.sim import Noise, TableSimulator  # noqa: E402
from controller.core.tracker import DealTracker  # noqa: E402
from controller.core.config import Rules, Table  # noqa: E402
from controller.store.gamelog import event_lines as event_group  # noqa: E402
from controller.store.replay import events_of_stream, replay_file  # noqa: E402
from contract_games import MixedGame  # noqa: E402

logging.getLogger("transitions").setLevel(logging.WARNING)

# CPU time of this process: on a shared, loaded machine the wall clock also counts the time
# other processes hold the cores; every figure here is measured with the same clock.
clock = time.process_time


def bare_trigger_cost(n: int = 200_000) -> float:
    class Model:
        pass

    m = Model()
    Machine(model=m, states=["a", "b"], initial="a", auto_transitions=False, queued=True,
            transitions=[{"trigger": "go", "source": "a", "dest": "b"},
                         {"trigger": "back", "source": "b", "dest": "a"}])
    go, back = m.go, m.back
    start = clock()
    for _ in range(n // 2):
        go()
        back()
    return (clock() - start) / n


def timed_feed(tracker: DealTracker, batches) -> tuple[int, float]:
    """Feed every batch of events; return (events, busy seconds), GC off while timing."""
    feed = tracker.feed
    events, busy = 0, 0.0
    for batch in batches:
        gc.disable()
        start = clock()
        for event in batch:
            feed(event)
        busy += clock() - start
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


def write_session(game: GameConfig, deals: int, path: Path, log: Path) -> None:
    """The session's table events at ``path`` (a table event file), and at ``log`` its
    game log's ``events.jsonl`` as the table writes it: each event followed by its
    derived lines (SessionLog.append's own grouping, without its fsyncs)."""
    tracker = DealTracker(game)
    with open(path, "w", encoding="utf-8") as fh, open(log, "wb") as lh:
        for event in MixedGame(game, seed=7).deals(deals):
            fh.write(event.to_json() + "\n")
            lh.write(event_group(event, tracker.feed(event)))


def bare_loads(path: Path) -> float:
    """Seconds to json.loads every line of ``path`` (read and decoded whole)."""
    start = clock()
    with open(path, "rb") as fh:
        for line in fh.read().decode("utf-8").split("\n"):
            if line:
                json.loads(line)
    return clock() - start


def replay_vs_json(game: GameConfig, path: Path, repeats: int) -> dict:
    """Seconds to replay the session file at ``path``, to json.loads its lines, and to parse
    its events alone (reading and validation, no tracker): where the replay's time goes.

    Each is measured ``repeats`` times, interleaved (a busy spell of the machine slows the
    three alike), each run from a collected heap; the figures are the best of each (as
    ``timeit`` advises: the slower runs are other processes' doing) and the median of the
    runs' own replay / json.loads ratios."""
    bare, replay, parse, ratios = [], [], [], []
    deals = 0
    for _ in range(repeats):
        gc.collect()
        bare.append(bare_loads(path))
        gc.collect()
        start = clock()
        tracker = replay_file(path, game)
        replay.append(clock() - start)
        deals = len(tracker.records)
        del tracker
        gc.collect()
        start = clock()
        with open(path, "rb") as fh:
            for _ in events_of_stream(fh, tuple(zone_names(game.table.players))):
                pass
        parse.append(clock() - start)
        ratios.append(replay[-1] / bare[-1])
    return {"replay": min(replay), "bare": min(bare), "parse": min(parse), "deals": deals,
            "median_ratio": statistics.median(ratios), "ratios": ratios}


def triggers_fired(path: Path, game: GameConfig) -> int:
    """How many ``transitions`` triggers replaying ``path`` fires, counted in a separate run
    (not timed): the part of the replay that is the state machine's own machinery."""
    count = 0
    trigger = Event.trigger

    def counted(self, model, *args, **kwargs):
        nonlocal count
        count += 1
        return trigger(self, model, *args, **kwargs)

    Event.trigger = counted
    try:
        replay_file(path, game)
    finally:
        Event.trigger = trigger
    return count


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--deals", type=int, default=10_000)
    ap.add_argument("--noise", action="store_true", help="add flicker, repeats, out-of-turn cards …")
    ap.add_argument("--mixed-deals", type=int, default=3000, help="deals of the mixed contract game")
    ap.add_argument("--replay-deals", type=int, default=1000, help="deals of the replayed session file")
    ap.add_argument("--chunk", type=int, default=500, help="deals generated per batch")
    ap.add_argument("--repeats", type=int, default=5, help="interleaved runs of the replay figures")
    args = ap.parse_args()
    game = GameConfig()
    mixed_game = GameConfig(Table(), Rules(bidding=True))
    rasp_batches = list(raspasovka_batches(game, args.deals, args.chunk, args.noise))
    mix_batches = list(mixed_batches(mixed_game, args.mixed_deals, args.chunk, args.noise))
    tracker, mixed = DealTracker(game), DealTracker(mixed_game)
    events = busy = m_events = m_busy = 0
    bare_costs = []
    # interleaved, so that a busy machine slows both kinds of game (and the bare trigger) alike
    for i in range(max(len(rasp_batches), len(mix_batches))):
        bare_costs.append(bare_trigger_cost(20_000))
        e, b = timed_feed(tracker, rasp_batches[i:i + 1])
        events, busy = events + e, busy + b
        e, b = timed_feed(mixed, mix_batches[i:i + 1])
        m_events, m_busy = m_events + e, m_busy + b
    bare = sum(bare_costs) / len(bare_costs)
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
    # the trackers and batches above hold millions of objects: every full collection during
    # the replay would walk them too, a cost of this benchmark and not of a replay
    del tracker, mixed, rasp_batches, mix_batches
    gc.collect()
    with tempfile.TemporaryDirectory() as tmp:
        session, log = Path(tmp) / "session.jsonl", Path(tmp) / "events.jsonl"
        write_session(mixed_game, args.replay_deals, session, log)
        r = replay_vs_json(mixed_game, session, args.repeats)
        g = replay_vs_json(mixed_game, log, args.repeats)
        triggers = triggers_fired(session, mixed_game)
    replay, loads, parse = r["replay"], r["bare"], r["parse"]
    # a session is its game log (FORMATS.md "Game log"): what `preftable replay` is given
    print(f"{r['deals']}-deal session replay, its game log events.jsonl (derived lines skipped): "
          f"{g['replay']:.3f} s; bare json.loads of its lines {g['bare']:.3f} s "
          f"({g['replay'] / g['bare']:.2f}x, best of {args.repeats} each; median of the runs' ratios "
          f"{g['median_ratio']:.2f}x)")
    print(f"  its table events alone (a table event file): {replay:.3f} s; bare json.loads of its lines "
          f"{loads:.3f} s ({replay / loads:.2f}x; median {r['median_ratio']:.2f}x: "
          f"{', '.join(f'{x:.2f}' for x in r['ratios'])})")
    print(f"    of which parsing:      {parse:.3f} s ({parse / loads:.2f}x json.loads); the tracker the rest "
          f"({(replay - parse) / loads:.2f}x)")
    # the machine's own share: every phase change is one trigger
    print(f"    of which transitions:  {triggers} triggers x the bare trigger = {triggers * bare:.3f} s "
          f"({triggers * bare / loads:.2f}x json.loads)")

if __name__ == "__main__":
    main()
