"""What the deal tracker decides: :class:`Signal` (a derived log line) and the kinds of mistake.

The mistake kinds and their messages are those of FORMATS.md and FORMATS-contracts.md
("mistake" lines); a signal becomes a derived line of the game log.
"""

from __future__ import annotations

from typing import NamedTuple

# mistake types
OUT_OF_TURN = "out_of_turn"
SAME_CARD = "same_card"
UNKNOWN_TAG = "unknown_tag"
TABLE_NOT_CLEAR = "table_not_clear"
REVOKE = "revoke"
ORDER_GUESSED = "order_guessed"     # a card whose order among others the hub link could not know
INVALID_CONTROL = "invalid_control"
NOT_IN_PLAY = "not_in_play"
MAX_ALERTS = 8
CONTRACT_MISTAKES = (INVALID_CONTROL, NOT_IN_PLAY)     # kinds that always carry deal, line and message

MESSAGES = {
    OUT_OF_TURN: "a card out of turn",
    SAME_CARD: "a card already played in this deal",
    UNKNOWN_TAG: "a tag not in the deck file",
    TABLE_NOT_CLEAR: "the table is not clear",
    REVOKE: "a revoke, proven",
    NOT_IN_PLAY: "a card outside play",
}


def alert_key(alert: dict) -> tuple:
    """What makes two alerts the same problem: its kind, where, and with which card, tag or line."""
    return (alert.get("type"), alert.get("zone"), alert.get("card"), alert.get("uid"),
            alert.get("line_event"))


class _SignalFields(NamedTuple):
    kind: str
    t: float
    data: dict


class Signal(_SignalFields):
    """Something the tracker decided; ``kind`` plus fields.  Becomes a derived log line.

    A named tuple (frozen, made at C speed: a card played makes one or two)."""

    __slots__ = ()

    def __new__(cls, kind: str, t: float, data: dict | None = None) -> "Signal":
        return new_signal(cls, (kind, t, {} if data is None else data))

    def to_dict(self) -> dict:
        return {"t": self.t, "kind": self.kind, **self.data}


new_signal = tuple.__new__
