"""Deck files (FORMATS.md "Deck file"): tag UIDs mapped to the 32 cards.

A deck with a missing, repeated or unknown card, or a UID given twice, is
refused with a :class:`~controller.errors.DeckError` naming the card or UID.
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

_KEY_LINE = re.compile(r'^\s*(?:"([^"]*)"|\'([^\']*)\'|([A-Za-z0-9_-]+))\s*=')
_SECTION_LINE = re.compile(r"^\s*\[([^\]]*)\]")


@dataclass(frozen=True)
class Deck:
    """UID (upper-case hex) → card."""

    cards: Mapping[str, Card] = field(default_factory=dict)

    def card_for(self, uid: str) -> Card | None:
        return self.cards.get(uid.upper())

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
        return "\n".join(lines) + "\n"


def _duplicate_uids(text: str) -> str | None:
    """Find a UID written twice in ``[cards]`` (tomllib would only say "cannot overwrite")."""
    seen: dict[str, int] = {}
    section = None
    for number, line in enumerate(text.splitlines(), start=1):
        head = _SECTION_LINE.match(line)
        if head:
            section = head.group(1).strip()
            continue
        if section != "cards":
            continue
        m = _KEY_LINE.match(line)
        if not m:
            continue
        key = next(g for g in m.groups() if g is not None).upper()
        if key in seen:
            return f"UID {key} given twice (lines {seen[key]} and {number})"
        seen[key] = number
    return None


def deck_from_dict(doc: Mapping, *, complete: bool = True) -> Deck:
    """Validate a decoded deck file.  ``complete=False`` accepts a partial deck (enrolment)."""
    for key in doc:
        if key != "cards":
            raise DeckError(f"unknown section or key {key!r} (a deck file has only [cards])")
    cards = doc.get("cards")
    if not isinstance(cards, dict):
        raise DeckError("no [cards] table")
    out: dict[str, Card] = {}
    by_card: dict[Card, str] = {}
    for raw_uid, raw_card in cards.items():
        try:
            uid = normalise_uid(raw_uid)
        except EventError:
            raise DeckError(f"UID {raw_uid!r} is not hex digits") from None
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
    deck = Deck(out)
    if complete and deck.missing:
        missing = deck.missing
        raise DeckError(f"card{'s' if len(missing) > 1 else ''} missing: "
                        + " ".join(str(c) for c in missing))
    return deck


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
