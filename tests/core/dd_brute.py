"""A brute-force double-dummy minimax for the tests: no pruning, no bounds, no equivalent
cards -- every legal card of every hand, to the end of the deal (positions met twice are
looked up, which changes no value).

The follow rule is contract_games.legal_cards (the tests' own reading of RULES.md and
RULES-contracts.md); the play order and the trick's winner are the kind's."""

from __future__ import annotations

from contract_games import legal_cards

from controller.core.deal import PRIKUP


def brute_value(kind, hands: dict, counted: frozenset, maximise: bool, trick: int, previous,
                laid: list, prikup: list) -> int:
    """The counted seats' tricks from here (the trick in progress included)."""
    seen: dict = {}

    def value(hands: dict, trick: int, previous, laid: tuple) -> int:
        key = (tuple(sorted((s, frozenset(h)) for s, h in hands.items())), trick, previous, laid)
        if key in seen:
            return seen[key]
        order = kind.trick_order(trick, previous)
        if len(laid) == len(order):
            winner = kind.winner(list(laid))
            gain = 1 if winner in counted else 0
            result = gain if not any(hands.values()) else gain + value(hands, trick + 1, winner, ())
        else:
            zone = order[len(laid)]
            if zone == PRIKUP:
                result = value(hands, trick, previous, laid + ((PRIKUP, prikup[trick]),))
            else:
                led = laid[0][1].suit if laid else None
                hand = hands[zone]
                results = []
                for card in legal_cards(hand, led, kind.trump):
                    rest = dict(hands)
                    rest[zone] = [c for c in hand if c != card]
                    results.append(value(rest, trick, previous, laid + ((zone, card),)))
                result = max(results) if (zone in counted) == maximise else min(results)
        seen[key] = result
        return result

    return value({s: list(h) for s, h in hands.items()}, trick, previous, tuple(laid))
