"""Deal tracker throughput: 10,000 generated deals replayed through the tracker.

Prints table events per second and the cost of one event beside the cost of
one bare ``transitions`` trigger on a two-state machine (same flags as the
tracker: auto_transitions=False, queued=True), measured in the same run.
Targets (issue 2): >= 50,000 events/s on one core, <= 3x the bare trigger.

    python bench/bench_tracker.py [--deals 10000] [--noise]
"""

from __future__ import annotations

import argparse
import gc
import logging
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from transitions import Machine  # noqa: E402

from controller.core.config import GameConfig  # noqa: E402
from controller.app.sim import Noise, TableSimulator  # noqa: E402
from controller.core.tracker import DealTracker  # noqa: E402

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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--deals", type=int, default=10_000)
    ap.add_argument("--noise", action="store_true", help="add flicker, repeats, out-of-turn cards …")
    ap.add_argument("--chunk", type=int, default=500, help="deals generated per batch")
    args = ap.parse_args()
    game = GameConfig()
    sim = TableSimulator(game, seed=1, noise=Noise.demo() if args.noise else Noise())
    tracker = DealTracker(game)
    feed = tracker.feed
    events = 0
    busy = 0.0
    done = 0
    bare_before = bare_trigger_cost()
    while done < args.deals:
        batch = list(sim.deals(min(args.chunk, args.deals - done)))
        gc.disable()
        start = time.perf_counter()
        for event in batch:
            feed(event)
        busy += time.perf_counter() - start
        gc.enable()
        events += len(batch)
        done += min(args.chunk, args.deals - done)
        print(f"\r{done}/{args.deals} deals", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)
    bare = (bare_before + bare_trigger_cost()) / 2
    complete = sum(1 for r in tracker.records if r.complete)
    per_event = busy / events
    print(f"deals replayed:            {complete} complete of {args.deals}")
    print(f"table events:              {events}  ({events / args.deals:.1f} per deal)")
    print(f"tracker throughput:        {events / busy:,.0f} events/s")
    print(f"cost of one event:         {per_event * 1e6:.2f} us")
    print(f"bare transitions trigger:  {bare * 1e6:.2f} us")
    print(f"ratio event / trigger:     {per_event / bare:.2f}x")


if __name__ == "__main__":
    main()
