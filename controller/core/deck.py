"""Deck files (FORMATS.md "Deck file"): tag UIDs mapped to the 32 cards, and the
optional ``[bids]`` table of bidding tokens (:mod:`controller.core.tokens`).

A deck with a missing, repeated or unknown card, or a UID given twice, is
refused with a :class:`~controller.errors.DeckError` naming the card or UID.
``[bids]`` maps UIDs to token words (``pass``, ``6s`` … ``10n``, ``misere``,
``whist``, ``half``, ``open``, ``closed``); a word may be on many tokens (a set per
seat), but a UID is a card or a token, never both, and an unknown word is named.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping

from .cards import DECK, Card, parse_card
from .errors import CardError, DeckError, EventError
from .events import normalise_uid
from .tokens import TOKENS, parse_token

_KEY_LINE = re.compile(r'^\s*(?:"([^"]*)"|\'([^\']*)\'|([A-Za-z0-9_-]+))\s*=')
_SECTION_LINE = re.compile(r"^\s*\[([^\]]*)\]")


@dataclass(frozen=True)
class Deck:
    """UID (upper-case hex) → card, and UID → bidding token word."""

    cards: Mapping[str, Card] = field(default_factory=dict)
    bids: Mapping[str, str] = field(default_factory=dict)

    def card_for(self, uid: str) -> Card | None:
        return self.cards.get(uid.upper())

    def token_for(self, uid: str) -> str | None:
        """The word of the bidding token with this UID, or None."""
        return self.bids.get(uid.upper())

    def uid_for(self, card: Card) -> str | None:
        for uid, c in self.cards.items():
            if c == card:
                return uid
        return None

    @property
    def missing(self) -> list[Card]:
        have = set(self.cards.values())
        return [c for c in DECK if c not in have]

    def to_toml(self) -> str:
        lines = ["[cards]"]
        order = {c: i for i, c in enumerate(DECK)}
        for uid, card in sorted(self.cards.items(), key=lambda item: order[item[1]]):
            lines.append(f'"{uid}" = "{card}"')
        if self.bids:
            lines += ["", "[bids]"]
            order = {word: i for i, word in enumerate(TOKENS)}
            for uid, word in sorted(self.bids.items(), key=lambda item: (order[item[1]], item[0])):
                lines.append(f'"{uid}" = "{word}"')
        return "\n".join(lines) + "\n"


def _duplicate_uids(text: str) -> str | None:
    """Find a UID written twice in ``[cards]`` or ``[bids]`` (tomllib would only say
    "cannot overwrite")."""
    seen: dict[tuple[str, str], int] = {}
    section = None
    for number, line in enumerate(text.splitlines(), start=1):
        head = _SECTION_LINE.match(line)
        if head:
            section = head.group(1).strip()
            continue
        if section not in ("cards", "bids"):
            continue
        m = _KEY_LINE.match(line)
        if not m:
            continue
        uid = next(g for g in m.groups() if g is not None).upper()
        key = (section, uid)        # a UID in both tables is deck_from_dict's finding
        if key in seen:
            return f"UID {uid} given twice in [{section}] (lines {seen[key]} and {number})"
        seen[key] = number
    return None


def deck_from_dict(doc: Mapping, *, complete: bool = True) -> Deck:
    """Validate a decoded deck file.  ``complete=False`` accepts a partial deck (enrolment),
    also one with no ``[cards]`` yet."""
    for key in doc:
        if key not in ("cards", "bids"):
            raise DeckError(f"unknown section or key {key!r} (a deck file has only [cards] and [bids])")
    cards = doc.get("cards", None if complete else {})
    if not isinstance(cards, dict):
        raise DeckError("no [cards] table")
    out: dict[str, Card] = {}
    by_card: dict[Card, str] = {}
    for raw_uid, raw_card in cards.items():
        uid = _uid(raw_uid)
        if uid in out:
            raise DeckError(f"UID {uid} given twice")
        try:
            card = parse_card(raw_card)
        except CardError:
            raise DeckError(f"UID {uid}: unknown card {raw_card!r}") from None
        if card in by_card:
            raise DeckError(f"card {card} given twice (UIDs {by_card[card]} and {uid})")
        out[uid] = card
        by_card[card] = uid
    deck = Deck(out, _bids(doc.get("bids", {}), out))
    if complete and deck.missing:
        missing = deck.missing
        raise DeckError(f"card{'s' if len(missing) > 1 else ''} missing: "
                        + " ".join(str(c) for c in missing))
    return deck


def _uid(raw: object) -> str:
    try:
        return normalise_uid(raw)
    except EventError:
        raise DeckError(f"UID {raw!r} is not hex digits") from None


def _bids(table: object, cards: Mapping[str, Card]) -> dict[str, str]:
    """The ``[bids]`` table: UID -> token word (a word may repeat: one set per seat)."""
    if not isinstance(table, dict):
        raise DeckError("[bids] must be a table of UID = token")
    out: dict[str, str] = {}
    for raw_uid, raw_word in table.items():
        uid = _uid(raw_uid)
        if uid in out:
            raise DeckError(f"UID {uid} given twice in [bids]")
        if uid in cards:
            raise DeckError(f"UID {uid} is both a card ({cards[uid]}) and a bidding token ({raw_word!r})")
        try:
            out[uid] = parse_token(raw_word)
        except EventError:
            raise DeckError(f"UID {uid}: unknown bidding token {raw_word!r} (expected pass, 6s ... 10n, "
                            "misere, whist, half, open or closed)") from None
    return out


def load_deck(path: str | Path | None, *, complete: bool = True) -> Deck | None:
    """Load a deck file; ``None`` when no path is given.  Errors name the file."""
    if path is None:
        return None
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise DeckError(f"{path}: no such deck file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise DeckError(f"{path}: cannot read the deck file: {getattr(exc, 'strerror', None) or exc}") from None
    dup = _duplicate_uids(text)
    if dup:
        raise DeckError(f"{path}: {dup}")
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise DeckError(f"{path}: not valid TOML: {exc}") from None
    try:
        return deck_from_dict(doc, complete=complete)
    except DeckError as exc:
        raise DeckError(f"{path}: {exc}") from None


__all__ = ["Deck", "load_deck", "deck_from_dict"]
