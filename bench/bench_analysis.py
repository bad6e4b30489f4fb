"""Double-dummy analysis speed: the whole analysis of a played deal (its value and every
card's cost, docs/analysis.md) over random played deals of each kind, and the public
Python solver avysogorets/preferans-solver beside ours on the same start positions.

Deals are whole mixed games (tests/core/contract_games.py: random auctions, legal random
play) replayed through the tracker; the first ``--deals`` analysable deals of each kind
(contract, misère, raspasovka) are analysed one by one, by each search the solver has
(controller.core.double_dummy.ENGINES: the pure Python one, and the compiled one when
the install built it), side by side.  Printed per kind and search: median and max CPU
time of one deal's whole analysis, median and max search nodes (the two searches visit
the same nodes), and the memory of the slowest deal analysed again alone in a fresh
process: its peak RSS, and how much the analysis added to it (the compiled search's
tables are C memory, which tracemalloc does not see).  Targets: median <= 30 ms,
max <= 1 s, memory <= 100 MB per deal.

The other solver is imported only from the folder given by ``--other PATH``, the
environment variable ``PREFERANS_SOLVER``, or /work/ext/preferans-solver when that holds
a checkout (of its public repository, kept outside this tree); without one that part is
skipped with one line.  It solves the value at the start of a contract or misère (it
has no raspasovka), each position in a child process bounded by ``--bound`` seconds of
CPU time and 2 GB of memory; ours (each search) is timed on the same start position (a
fresh solver, the value alone), and the positions it does not finish are listed.

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
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests"), str(ROOT / "tests" / "core")]

from contract_games import MixedGame  # noqa: E402

from controller.core.analysis import analyse_entry  # noqa: E402
from controller.core.config import GameConfig, Rules, Table  # noqa: E402
from controller.core.deal import ContractPlay, active_seats  # noqa: E402
from controller.core.cards import parse_card  # noqa: E402
from controller.core.double_dummy import ENGINES, SUIT_INDEX, Solver, hand_mask  # noqa: E402
from controller.core.tracker import DealTracker  # noqa: E402

clock = time.process_time
# where other projects' code is kept on the development machine, outside this tree
OTHER_HOME = Path("/work/ext/preferans-solver")
KINDS = ("contract", "misere", "raspasovka")
# the tables the deals are played at: (players, rules)
CONFIGS = ((3, {"bidding": True}), (4, {"bidding": True, "prikup": "suit_only"}))

# run in a fresh process: one deal's analysis, its peak RSS and what the analysis added to
# the RSS before it (Linux: the high-water mark is reset first through clear_refs)
MEMORY_RUNNER = r"""
import json, sys
spec = json.load(sys.stdin)
sys.path[:0] = spec["path"]
from controller.core.analysis import analyse_entry
from controller.core.config import Rules

def status(field):
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) * 1024 for line in f if line.startswith(field + ":"))

before = status("VmRSS")
with open("/proc/self/clear_refs", "w") as f:
    f.write("5")
result = analyse_entry(spec["entry"], Rules(**spec["rules"]), spec["players"], engine=spec["engine"])
peak = status("VmHWM")
print(json.dumps({"peak": peak, "added": peak - before, "analysed": result.analysed}))
"""

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
    configs = [GameConfig(Table(players=players), Rules(**rules)) for players, rules in CONFIGS]
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


def ours_at_start(cfg, entry, engine: str) -> tuple[int, float, int]:
    kind, active, declarer, hands = start_position(cfg, entry)
    start = clock()
    solver = Solver(kind, active, [declarer], entry["kind"] == "contract", engine=engine)
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


def memory(cfg, entry, engine: str) -> dict:
    """The peak RSS of a fresh process analysing one deal, and what the analysis added."""
    players = cfg.table.players
    rules = next(r for p, r in CONFIGS if p == players)
    spec = {"path": [str(ROOT)], "entry": entry, "rules": rules, "players": players, "engine": engine}
    done = subprocess.run([sys.executable, "-c", MEMORY_RUNNER], input=json.dumps(spec), capture_output=True,
                          text=True, timeout=600, check=True)
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
    print(f"whole analysis of one deal (value + every card's cost), {args.deals} deals of each kind, CPU time; "
          f"searches: {', '.join(ENGINES)}")
    print(f"{'kind':<11} {'search':<7} {'median':>10} {'max':>10} {'nodes med':>10} {'nodes max':>10} "
          f"{'slowest alone: peak RSS':>24} {'added':>9}")
    for kind in KINDS:
        medians = {}
        for engine in ENGINES:
            times, nodes, slowest = [], [], None
            for cfg, entry in deals[kind]:
                start = clock()
                result = analyse_entry(entry, cfg.rules, cfg.table.players, engine=engine)
                used = clock() - start
                assert result.analysed, result.reason
                times.append(used)
                nodes.append(result.nodes)
                if slowest is None or used > slowest[0]:
                    slowest = (used, cfg, entry)
            mem = memory(slowest[1], slowest[2], engine)
            medians[engine] = statistics.median(times)
            print(f"{kind:<11} {engine:<7} {ms(medians[engine]):>10} {ms(max(times)):>10} "
                  f"{int(statistics.median(nodes)):>10,} {max(nodes):>10,} {mem['peak'] / 1e6:>21.1f} MB "
                  f"{mem['added'] / 1e6:>6.1f} MB")
        if len(medians) > 1:
            print(f"{'':<11} the compiled search's median {medians['python'] / medians['c']:.0f}x the pure one's")
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"this process's peak RSS {rss:.0f} MB")

    if not args.other:
        print("other solver: skipped (give --other PATH or PREFERANS_SOLVER: a checkout of "
              "avysogorets/preferans-solver)")
        return 0
    if not (Path(args.other) / "backend" / "solver.py").is_file():
        print(f"other solver: skipped ({args.other} holds no backend/solver.py)")
        return 0
    print(f"\nstart positions (the value alone), ours beside avysogorets/preferans-solver "
          f"(bound {args.bound:g} s of CPU, 2 GB each), first {args.other_deals} deals of each kind")
    heads = "".join(f" {'ours ' + e:>10}" for e in ENGINES) + f" {'other med':>10}"
    heads += "".join(f" {'ratio ' + e:>10}" for e in ENGINES) + "".join(f" {'min ' + e:>9}" for e in ENGINES)
    print(f"{'kind':<11} {'finished':>9}{heads} {'other nodes med':>16}  values")
    for kind in ("contract", "misere"):
        ours_t = {e: [] for e in ENGINES}
        other_t, other_nodes, unfinished, agree = [], [], [], 0
        for cfg, entry in deals[kind][:args.other_deals]:
            values = {}
            used = {}
            for engine in ENGINES:
                values[engine], used[engine], _ = ours_at_start(cfg, entry, engine)
            other = other_at_start(args.other, args.bound, cfg, entry)
            if other is None or "error" in other:
                why = "over the bound" if other is None else other["error"]
                unfinished.append((entry["number"], why, used))
                continue
            for engine in ENGINES:
                ours_t[engine].append(used[engine])
            other_t.append(other["cpu"])
            other_nodes.append(other["nodes"])
            agree += all(v == other["value"] for v in values.values())
        finished = len(other_t)
        if finished:
            ratios = {e: [o / max(u, 1e-6) for o, u in zip(other_t, ours_t[e])] for e in ENGINES}
            row = "".join(f" {ms(statistics.median(ours_t[e])):>10}" for e in ENGINES)
            row += f" {ms(statistics.median(other_t)):>10}"
            row += "".join(f" {statistics.median(ratios[e]):>9.0f}x" for e in ENGINES)
            row += "".join(f" {min(ratios[e]):>8.0f}x" for e in ENGINES)
            print(f"{kind:<11} {finished:>4} of {finished + len(unfinished):<3}{row} "
                  f"{int(statistics.median(other_nodes)):>16,}  {agree} of {finished} equal")
        else:
            print(f"{kind:<11} 0 of {len(unfinished)}")
        for number, why, used in unfinished:
            ours = ", ".join(f"ours {e} {ms(u)}" for e, u in used.items())
            print(f"    not finished: {kind} deal {number} ({why}; {ours})")
    print("raspasovka  the other solver has no raspasovka (its contracts are play and misère only)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
