"""Cards, suits and seats in the notation of RULES.md.

Ranks low to high ``7 8 9 10 J Q K A``, suits ``s c d h``.  A card is written
rank+suit (``7s``, ``10h``); parsers also accept ``T`` for 10 and the suit
symbols.
"""

from __future__ import annotations

from functools import lru_cache
from typing import NamedTuple

from .errors import CardError

RANKS: tuple[str, ...] = ("7", "8", "9", "10", "J", "Q", "K", "A")
SUITS: tuple[str, ...] = ("s", "c", "d", "h")
SUIT_SYMBOLS = {"s": "\u2660", "c": "\u2663", "d": "\u2666", "h": "\u2665"}
SUIT_NAMES = {"s": "spades", "c": "clubs", "d": "diamonds", "h": "hearts"}
# A game's strain: its trump suit, or n for no trumps (RULES-contracts.md), low to high.
STRAINS: tuple[str, ...] = SUITS + ("n",)
STRAIN_SYMBOLS = {**SUIT_SYMBOLS, "n": "NT"}
SYMBOL_TO_SUIT = {
    "\u2660": "s", "\u2663": "c", "\u2666": "d", "\u2665": "h",   # filled ♠♣♦♥
    "\u2664": "s", "\u2667": "c", "\u2662": "d", "\u2661": "h",   # white ♤♧♢♡
}
_SYMBOL_TO_SUIT = SYMBOL_TO_SUIT


def ascii_text(text: str) -> str:
    """Text in the characters a serial line or a hub's display row can carry: printable
    ASCII without ``$``/``*`` (PROTOCOL.md frames); suit symbols become ``s c d h``,
    anything else ``?``.  The one sanitiser of the project."""
    out = []
    for ch in str(text):
        ch = SYMBOL_TO_SUIT.get(ch, ch)
        out.append(ch if " " <= ch <= "~" and ch not in "$*" else "?")
    return "".join(out)
_RANK_ALIASES = {"T": "10"}


class Card(NamedTuple):
    """A playing card; ``rank`` is an index into :data:`RANKS` (0 = 7, 7 = A)."""

    rank: int
    suit: str

    def __str__(self) -> str:
        return RANKS[self.rank] + self.suit

    @property
    def pretty(self) -> str:
        """The card with its suit symbol, for displays: ``7♠``."""
        return RANKS[self.rank] + SUIT_SYMBOLS[self.suit]

    def beats(self, other: "Card") -> bool:
        """True if this card wins over ``other`` led in ``other``'s suit (no trumps)."""
        return self.suit == other.suit and self.rank > other.rank


DECK: tuple[Card, ...] = tuple(Card(r, s) for s in SUITS for r in range(len(RANKS)))
_BY_CODE: dict[str, Card] = {str(c): c for c in DECK}


def parse_card(text: object) -> Card:
    """Parse a card code (``7s``, ``10h``, ``Th``, ``Q♦``); raise :class:`CardError`."""
    if not isinstance(text, str):
        raise CardError(f"card must be a string like '7s', got {text!r}")
    code = text.strip()
    if len(code) < 2:
        raise CardError(f"unknown card {text!r} (expected rank 7 8 9 10 J Q K A and suit s c d h)")
    rank, suit = code[:-1].upper(), code[-1]
    rank = _RANK_ALIASES.get(rank, rank)
    suit = _SYMBOL_TO_SUIT.get(suit, suit.lower())
    card = _BY_CODE.get(rank + suit)
    if card is None:
        raise CardError(f"unknown card {text!r} (expected rank 7 8 9 10 J Q K A and suit s c d h)")
    return card


@lru_cache(maxsize=16)      # a pure function of the table, asked at every deal
def seat_names(players: int) -> tuple[str, ...]:
    """``('seat1', …, 'seatN')``."""
    return tuple(f"seat{i}" for i in range(1, players + 1))


def zone_names(players: int) -> tuple[str, ...]:
    """The table's zones: the seats plus ``prikup``."""
    return seat_names(players) + ("prikup",)


def next_seat(seat: str, players: int, step: int = 1) -> str:
    """The seat ``step`` places clockwise from ``seat``."""
    index = int(seat[4:]) - 1
    return f"seat{(index + step) % players + 1}"
