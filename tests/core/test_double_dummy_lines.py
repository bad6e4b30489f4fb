"""The double-dummy solver against the brute-force minimax (dd_brute.py) along played
lines, as the analysis asks it: one solver, its transposition table shared, valued
before every card of a random legal line from a random ending to the end of the deal.

The table's entries stand for every position whose cards from the lowest one an
answer rested on upward lie alike; a wrong entry shows as a value that differs from the
brute force's on a later position of the same line.  ``DD_RANDOM_LINES`` sets how many
lines of each size to check (the default keeps this file to a few seconds).  Every
search built, the pure and the compiled (``ENGINES``), against the one brute force."""

from __future__ import annotations

import os
import random

import pytest
from contract_games import legal_cards
from dd_brute import brute_value
from test_double_dummy import random_ending

from controller.core.deal import PRIKUP
from controller.core.double_dummy import ENGINES, Solver, card_index, hand_mask

LINES = int(os.environ.get("DD_RANDOM_LINES", "0"))


def check_line(rng: random.Random, n: int) -> int:
    """Value one random ending's line card by card, by one solver of each search built (each
    its table shared along the line) against one brute force; the number of positions checked."""
    kind, hands, counted, maximise, trick, previous, laid, prikup = random_ending(rng, n)
    solvers = [Solver(kind, kind.active, counted, maximise, prikup, engine) for engine in ENGINES]
    checked = 0
    while True:
        order = kind.trick_order(trick, previous)
        if len(laid) == len(order):
            previous = kind.winner(laid)
            trick, laid = trick + 1, []
            if not any(hands.values()):
                return checked
            continue
        zone = order[len(laid)]
        if zone == PRIKUP:
            laid.append((PRIKUP, prikup[trick]))
            continue
        position = (kind, hands, counted, maximise, trick, previous, list(laid), prikup)
        masks = [hand_mask(hands[seat]) for seat in kind.active]
        expected = brute_value(*position)
        for solver in solvers:
            got = solver.value(masks, solver.plan(trick, previous), [card_index(c) for _, c in laid])
            assert got == expected, (solver.engine, position)
        checked += 1
        led = laid[0][1].suit if laid else None
        card = rng.choice(legal_cards(hands[zone], led, kind.trump))
        hands = dict(hands, **{zone: [c for c in hands[zone] if c != card]})
        laid.append((zone, card))


@pytest.mark.parametrize("n, count, seed", [(3, 300, 11), (4, 40, 12), (5, 4, 13)])
def test_lines_equal_brute_force(n, count, seed):
    rng = random.Random(seed)
    checked = sum(check_line(rng, n) for _ in range(LINES or count))
    assert checked >= (LINES or count) * 3
