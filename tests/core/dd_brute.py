"""A brute-force double-dummy minimax for the tests: no pruning, no table, no
equivalent cards -- every legal card of every hand, to the end of the deal.

The follow rule is contract_games.legal_cards (the tests' own reading of RULES.md and
RULES-contracts.md); the play order and the trick's winner are the kind's."""

from __future__ import annotations

from contract_games import legal_cards

from controller.core.deal import PRIKUP


def brute_value(kind, hands: dict, counted: frozenset, maximise: bool, trick: int, previous,
                laid: list, prikup: list) -> int:
    """The counted seats' tricks from here (the trick in progress included)."""
    order = kind.trick_order(trick, previous)
    if len(laid) == len(order):
        winner = kind.winner(laid)
        gain = 1 if winner in counted else 0
        if not any(hands.values()):
            return gain
        return gain + brute_value(kind, hands, counted, maximise, trick + 1, winner, [], prikup)
    zone = order[len(laid)]
    if zone == PRIKUP:
        return brute_value(kind, hands, counted, maximise, trick, previous, laid + [(PRIKUP, prikup[trick])], prikup)
    led = laid[0][1].suit if laid else None
    results = []
    hand = hands[zone]
    for card in legal_cards(hand, led, kind.trump):
        hands[zone] = [c for c in hand if c != card]
        results.append(brute_value(kind, hands, counted, maximise, trick, previous, laid + [(zone, card)], prikup))
    hands[zone] = hand
    return max(results) if (zone in counted) == maximise else min(results)
