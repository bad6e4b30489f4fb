"""Double-dummy analysis speed: the whole analysis of a played deal (its value and every
card's cost, docs/analysis.md) over random played deals of each kind, and the public
Python solver avysogorets/preferans-solver beside ours on the same start positions.

Deals are whole mixed games (tests/core/contract_games.py: random auctions, legal random
play) replayed through the tracker; the first ``--deals`` analysable deals of each kind
(contract, misère, raspasovka) are analysed one by one.  Printed per kind: median and
max CPU time of one deal's whole analysis, median and max search nodes, and the peak
traced memory of the slowest deal analysed again under tracemalloc; then the process's
peak RSS.  Targets: median <= 30 ms, max <= 1 s, memory <= 100 MB per deal.

The other solver is imported only from the folder given by ``--other PATH``, the
environment variable ``PREFERANS_SOLVER``, or /work/ext/preferans-solver when that holds
a checkout (of its public repository, kept outside this tree); without one that part is
skipped with one line.  It solves the value at the start of a contract or misère (it
has no raspasovka), each position in a child process bounded by ``--bound`` seconds of
CPU time and 2 GB of memory; ours is timed on the same start position (a fresh solver,
the value alone), and the positions it does not finish are listed.

    python bench/bench_analysis.py [--deals 200] [--other PATH] [--other-deals 20] [--bound 20]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import signal
import statistics
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests"), str(ROOT / "tests" / "core")]

from contract_games import MixedGame  # noqa: E402

from controller.core.analysis import analyse_entry  # noqa: E402
from controller.core.config import GameConfig, Rules, Table  # noqa: E402
from controller.core.deal import ContractPlay, active_seats  # noqa: E402
from controller.core.cards import parse_card  # noqa: E402
from controller.core.double_dummy import SUIT_INDEX, Solver, hand_mask  # noqa: E402
from controller.core.tracker import DealTracker  # noqa: E402

clock = time.process_time
# where other projects' code is kept on the development machine, outside this tree
OTHER_HOME = Path("/work/ext/preferans-solver")
KINDS = ("contract", "misere", "raspasovka")

# run in a child process: the other solver on one start position (its own API:
# backend.game.Game(type 'P'/'M', turn, player, trumps), hands of its CARDS)
OTHER_RUNNER = r"""
import json, sys, time
sys.setrecursionlimit(10000)
path, spec = sys.argv[1], json.loads(sys.argv[2])
sys.path.insert(0, path)
from backend.game import Game
from backend.hand import Hand
from backend.solver import Solver
from backend.utils.globals import CARDS     # its cards are compared by identity: use its own
game = Game(type=spec["type"], turn=spec["turn"], player=spec["player"], trumps=spec["trumps"])
for i, cards in enumerate(spec["hands"]):
    game.hands[i] = Hand([CARDS[s * 8 + r] for s, r in cards])
solver = Solver(game)
start = time.process_time()
solver.solve()
used = time.process_time() - start
print(json.dumps({"value": solver.dp[game.to_string()][0], "cpu": used, "nodes": len(solver.dp)}))
"""


def played_deals(per_kind: int, seed: int = 1):
    """(config, entry) of the first ``per_kind`` analysable deals of each kind."""
    found = {kind: [] for kind in KINDS}
    configs = [GameConfig(Table(players=3), Rules(bidding=True)),
               GameConfig(Table(players=4), Rules(bidding=True, prikup="suit_only"))]
    round_ = 0
    while any(len(v) < per_kind for v in found.values()):
        cfg = configs[round_ % len(configs)]
        tracker = DealTracker(cfg)
        tracker.feed_all(MixedGame(cfg, seed=seed + round_).deals(100))
        for entry in tracker.summary()["deals"]:
            kind = entry["kind"]
            if kind in found and len(found[kind]) < per_kind and entry["complete"] and entry["revoke"] is None:
                found[kind].append((cfg, entry))
        round_ += 1
    return found


def start_position(cfg, entry):
    """(kind, active, declarer, hands by seat) of a contract or misère deal's first lead."""
    active = active_seats(cfg.table.players, entry["dealer"])
    hands = {seat: [] for seat in active}
    for trick in entry["tricks"]:
        for zone, code in trick["cards"].items():
            hands[zone].append(parse_card(code))
    return ContractPlay(cfg.rules, entry["game"], active), active, entry["declarer"], hands


def ours_at_start(cfg, entry) -> tuple[int, float, int]:
    kind, active, declarer, hands = start_position(cfg, entry)
    start = clock()
    solver = Solver(kind, active, [declarer], entry["kind"] == "contract")
    value = solver.value([hand_mask(hands[s]) for s in active], solver.plan(0, None))
    return value, clock() - start, solver.nodes


def other_at_start(path: str, bound: float, cfg, entry) -> dict | None:
    kind, active, declarer, hands = start_position(cfg, entry)
    spec = {"type": "M" if entry["kind"] == "misere" else "P", "turn": 0, "player": active.index(declarer),
            "trumps": SUIT_INDEX[kind.trump] if kind.trump else "-",
            "hands": [[(SUIT_INDEX[c.suit], c.rank) for c in hands[s]] for s in active]}

    cpu = math.ceil(bound)

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))
        # the bound is CPU time, as ours is measured: a shared machine's load does not cut it short
        resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))

    try:
        done = subprocess.run([sys.executable, "-c", OTHER_RUNNER, path, json.dumps(spec)], capture_output=True,
                              text=True, timeout=bound * 30, preexec_fn=limit)
    except subprocess.TimeoutExpired:
        return None                 # subprocess.run killed the child
    if done.returncode in (-signal.SIGXCPU, -signal.SIGKILL):
        return None
    if done.returncode != 0:
        return {"error": (done.stderr.strip().splitlines() or ["exit %d" % done.returncode])[-1]}
    return json.loads(done.stdout)


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--deals", type=int, default=200, help="deals of each kind (default 200)")
    parser.add_argument("--other", default=os.environ.get("PREFERANS_SOLVER") or (
                        str(OTHER_HOME) if (OTHER_HOME / "backend" / "solver.py").is_file() else None),
                        help=f"a checkout of avysogorets/preferans-solver (default: $PREFERANS_SOLVER, else "
                             f"{OTHER_HOME} when it holds one)")
    parser.add_argument("--other-deals", type=int, default=20,
                        help="start positions of each kind given to the other solver (default 20)")
    parser.add_argument("--bound", type=float, default=20.0, help="CPU seconds per position for the other solver")
    args = parser.parse_args()

    deals = played_deals(args.deals)
    print(f"whole analysis of one deal (value + every card's cost), {args.deals} deals of each kind, CPU time")
    print(f"{'kind':<11} {'median':>10} {'max':>10} {'nodes med':>10} {'nodes max':>10} {'peak mem (slowest)':>19}")
    for kind in KINDS:
        times, nodes, slowest = [], [], None
        for cfg, entry in deals[kind]:
            start = clock()
            result = analyse_entry(entry, cfg.rules, cfg.table.players)
            used = clock() - start
            assert result.analysed, result.reason
            times.append(used)
            nodes.append(result.nodes)
            if slowest is None or used > slowest[0]:
                slowest = (used, cfg, entry)
        tracemalloc.start()
        analyse_entry(slowest[2], slowest[1].rules, slowest[1].table.players)
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        print(f"{kind:<11} {ms(statistics.median(times)):>10} {ms(max(times)):>10} "
              f"{int(statistics.median(nodes)):>10,} {max(nodes):>10,} {peak / 1e6:>16.1f} MB")
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"process peak RSS {rss:.0f} MB")

    if not args.other:
        print("other solver: skipped (give --other PATH or PREFERANS_SOLVER: a checkout of "
              "avysogorets/preferans-solver)")
        return 0
    if not (Path(args.other) / "backend" / "solver.py").is_file():
        print(f"other solver: skipped ({args.other} holds no backend/solver.py)")
        return 0
    print(f"\nstart positions (the value alone), ours beside avysogorets/preferans-solver "
          f"(bound {args.bound:g} s of CPU, 2 GB each), first {args.other_deals} deals of each kind")
    print(f"{'kind':<11} {'finished':>9} {'ours med':>10} {'other med':>10} {'ratio med':>10} "
          f"{'ratio min':>10} {'other nodes med':>16}  values")
    for kind in ("contract", "misere"):
        ratios, ours_t, other_t, other_nodes, unfinished, agree = [], [], [], [], [], 0
        for cfg, entry in deals[kind][:args.other_deals]:
            value, used, _ = ours_at_start(cfg, entry)
            other = other_at_start(args.other, args.bound, cfg, entry)
            if other is None or "error" in other:
                unfinished.append((entry["number"], "over the bound" if other is None else other["error"]))
                continue
            ours_t.append(used)
            other_t.append(other["cpu"])
            other_nodes.append(other["nodes"])
            ratios.append(other["cpu"] / max(used, 1e-6))
            agree += other["value"] == value
        finished = len(ours_t)
        if finished:
            print(f"{kind:<11} {finished:>4} of {finished + len(unfinished):<3} {ms(statistics.median(ours_t)):>10} "
                  f"{ms(statistics.median(other_t)):>10} {statistics.median(ratios):>9.0f}x {min(ratios):>9.0f}x "
                  f"{int(statistics.median(other_nodes)):>16,}  {agree} of {finished} equal")
        else:
            print(f"{kind:<11} 0 of {len(unfinished)}")
        for number, why in unfinished:
            print(f"    not finished: {kind} deal {number} ({why})")
    print("raspasovka  the other solver has no raspasovka (its contracts are play and misère only)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
