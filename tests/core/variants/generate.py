"""Random whole pulkas for the differential check against the score programs.

Writes one JSON file of pulkas per (preset, players): each deal as the score programs take
it -- tricks per player, never cards -- with the dealer the table's own series gives under
that preset (a four-player deal's active seats depend on it).  The programs' harness (kept
outside this repository: their code is theirs) reads the file, runs each program over its
deals and adds what the program printed; tests/core/test_program_variants.py replays the
deals through the table's scoring and compares.

    PYTHONPATH=. python tests/core/variants/generate.py kozlov 3 --pulkas 80 --seed 1 > deals.json

A deal: ``{"kind": "raspasovka", "dealer", "taken"}``, or for a game
``{"kind": "contract" | "misere", "dealer", "game", "declarer", "ending", "whisters",
"half_whister", "taken"}`` (``taken`` of the active seats; ``{}`` for an unplayed deal).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from types import SimpleNamespace

from controller.core.cards import seat_names
from controller.core.config import GameConfig, Table, parse_rules
from controller.core.contract_scoring import ContractDeal, score_contract
from controller.core.scoring import Pulka, pulya_order, score_deal
from controller.core.series import next_deal

STRAINS = "scdhn"
LEVELS = (6, 6, 6, 6, 7, 7, 7, 8, 8, 9, 10)


def split(rng: random.Random, total: int, seats, caps=None) -> dict[str, int]:
    """``total`` tricks dealt at random over ``seats`` (``caps``: a seat's most)."""
    caps = caps or {}
    while True:
        counts = {s: 0 for s in seats}
        for _ in range(total):
            open_seats = [s for s in seats if counts[s] < caps.get(s, 10)]
            counts[rng.choice(open_seats)] += 1
        return counts


def active_seats(seats, dealer):
    order = pulya_order(seats, dealer)
    return order if len(seats) == 3 else order[:3]


def random_deal(rng: random.Random, rules, seats, dealer: str, stalingrad: bool) -> dict:
    active = active_seats(seats, dealer)
    roll = rng.random()
    if roll < 0.3:
        if len(seats) == 4:     # the sitting-out dealer: at most the two prikup tricks
            prikup = rng.choice((0, 0, 0, 1, 1, 2))
            taken = split(rng, 10 - prikup, active)
            taken[dealer] = prikup
        else:
            taken = split(rng, 10, active)
        return {"kind": "raspasovka", "dealer": dealer, "taken": taken}
    declarer = rng.choice(active)
    i = active.index(declarer)
    defenders = [active[(i + 1) % 3], active[(i + 2) % 3]]
    if roll < 0.4:
        t = rng.choice((0, 0, 0, 1, 1, 2, 3))
        taken = {declarer: t, **split(rng, 10 - t, defenders)}
        return {"kind": "misere", "dealer": dealer, "game": "misere", "declarer": declarer, "ending": "played",
                "whisters": [], "half_whister": None, "taken": taken}
    level = rng.choice(LEVELS)
    game = f"{level}{rng.choice(STRAINS)}"
    base = {"kind": "contract", "dealer": dealer, "game": game, "declarer": declarer, "half_whister": None}
    choice = rng.random()
    if game == "6s" and stalingrad:
        choice = 1.0                        # Stalingrad: a 6♠ is whisted by both
    if choice < 0.12:
        return {**base, "ending": "passed", "whisters": [], "taken": {}}
    if choice < 0.2 and level in (6, 7) and rules.half_whist:
        return {**base, "ending": "half_whist", "whisters": [], "half_whister": defenders[1], "taken": {}}
    whisters = [rng.choice(defenders)] if choice < 0.55 else defenders
    t = max(0, min(10, level + rng.choice((-3, -2, -1, -1, 0, 0, 0, 0, 1, 2))))
    taken = {declarer: t, **split(rng, 10 - t, defenders)}
    return {**base, "ending": "played", "whisters": whisters, "taken": taken}


def outcome_of(rules, deal: dict, seats) -> str | None:
    if deal["kind"] == "raspasovka":
        return None
    active = active_seats(seats, deal["dealer"])
    i = active.index(deal["declarer"])
    d = ContractDeal(game=deal["game"], declarer=deal["declarer"], ending=deal["ending"],
                     defenders=(active[(i + 1) % 3], active[(i + 2) % 3]), whisters=tuple(deal["whisters"]),
                     half_whister=deal["half_whister"], dealer=deal["dealer"], seats=seats,
                     taken=deal["taken"])
    return score_contract(rules, d)[1]


def table_rules(preset: str, players: int, target: int | None):
    return parse_rules({"preset": preset} | ({"pulya_target": target} if target else {}), players)


def replay(preset: str, players: int, pulka: dict):
    """The table's scoring over one generated pulka: yields (deal, dealer, price, pulka after
    it, help entries) for each deal, then returns the :class:`Pulka` and the rules."""
    seats = seat_names(players)
    rules = table_rules(preset, players, pulka["pulya_target"])
    config = GameConfig(Table(players=players, first_dealer=pulka["first_dealer"]), rules)
    book = Pulka(seats)
    last = None
    for deal in pulka["deals"]:
        dealer, step = next_deal(config, last)
        price = rules.progression[step]
        active = active_seats(seats, dealer)
        if deal["kind"] == "raspasovka":
            taken = {s: deal["taken"].get(s, 0) for s in seats}
            writes, outcome = score_deal(rules, seats, active, dealer, price, step, taken, None), None
        else:
            i = active.index(deal["declarer"])
            d = ContractDeal(game=deal["game"], declarer=deal["declarer"], ending=deal["ending"],
                             defenders=(active[(i + 1) % 3], active[(i + 2) % 3]),
                             whisters=tuple(deal["whisters"]), half_whister=deal["half_whister"],
                             dealer=dealer, seats=seats, taken=deal["taken"])
            writes, outcome = score_contract(rules, d)
        written = book.write_deal(rules, writes, pulya_order(seats, dealer))
        yield deal, dealer, price, book.to_dict(), written.help
        last = SimpleNamespace(dealer=dealer, step=step, abandoned=False, kind=deal["kind"],
                               entry={"kind": deal["kind"], "outcome": outcome})
    return book, rules


def pulkas(preset: str, players: int, count: int, seed: int, deals: tuple[int, int] = (4, 8),
           targets=(None,), stalingrad: bool = False) -> dict:
    rng = random.Random(seed)
    seats = seat_names(players)
    out = []
    for _ in range(count):
        target = rng.choice(targets)
        keys = {"preset": preset} | ({"pulya_target": target} if target else {})
        rules = parse_rules(keys, players)
        first = rng.choice(seats)
        config = GameConfig(Table(players=players, first_dealer=first), rules)
        last, pulka = None, []
        for _ in range(rng.randint(*deals)):
            dealer, step = next_deal(config, last)
            deal = random_deal(rng, rules, seats, dealer, stalingrad)
            pulka.append(deal)
            last = SimpleNamespace(dealer=dealer, step=step, abandoned=False, kind=deal["kind"],
                                   entry={"kind": deal["kind"], "outcome": outcome_of(rules, deal, seats)})
        out.append({"first_dealer": first, "pulya_target": target, "deals": pulka})
    return {"preset": preset, "players": players, "seed": seed, "pulkas": out}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("preset")
    p.add_argument("players", type=int, choices=(3, 4))
    p.add_argument("--pulkas", type=int, default=40)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--targets", default="", help="pulya targets to pick from, comma-separated (none: no target)")
    p.add_argument("--stalingrad", action="store_true", help="every 6♠ whisted by both (kozlov)")
    args = p.parse_args(argv)
    targets = tuple(int(t) for t in args.targets.split(",") if t) or (None,)
    json.dump(pulkas(args.preset, args.players, args.pulkas, args.seed, targets=targets,
                     stalingrad=args.stalingrad), sys.stdout, indent=None, separators=(",", ":"))
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
