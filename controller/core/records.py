"""A deal tracker's history as plain data: the ended deals' records and summary entries.

A :class:`DealRecord` is a deal that ended, with its summary entry as FORMATS.md and
FORMATS-contracts.md list it (:func:`deal_entry`: every field, whatever
``rules.bidding`` is); :class:`Records` keeps them, oldest first, decoding the ones a
checkpoint journal restored only when first used; :class:`BetweenDeals` is the
tracker's whole state between deals (``controller.store.checkpoints`` encodes it).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterable

from .cards import Card
from .lazy import LazySequence
from .deal import CARD, KIND_RASPASOVKA, Deal
from .scoring import DealWritten, Pulka, Writes


@dataclass
class DealRecord:
    """A deal that ended (complete or abandoned): its summary entry and what it wrote.

    ``deal`` is kept for the most recent record only, which ``undo`` may reopen; an older
    complete record keeps just its accepted ``lines``, so that once the deals after it are
    taken back it is "the deal just finished" again (RULES-contracts.md: "`undo` may reach
    back into the previous deal once the current deal's only line was taken back").
    """

    number: int
    dealer: str
    price: int
    step: int
    complete: bool
    abandoned: bool
    kind: str | None
    entry: dict
    writes: Writes | None           # what the deal wrote after the help rule (exact)
    plays: int = 0                  # cards accepted in the deal
    deal: Deal | None = None
    lines: tuple | None = None      # an older complete deal's accepted lines (``deal`` dropped)

    def to_dict(self) -> dict:
        return self.entry


class Records(LazySequence):
    """The ended deals, oldest first.  Deals restored from a checkpoint journal may stay
    undecoded until first used (``decode`` turns one into a :class:`DealRecord`, kept in its
    place), so a long session resumes without decoding them all."""

    def __init__(self, raw: Iterable = (), decode: Callable[[object], DealRecord] | None = None):
        super().__init__(list(raw))
        self._decode = decode

    def _item(self, index: int) -> DealRecord:
        item = self._items[index]
        if not isinstance(item, DealRecord):
            item = self._items[index] = self._decode(item)
        return item

    def frozen(self) -> tuple[tuple, Callable[[object], DealRecord] | None]:
        """The items as they are now (records, or journal lines not decoded yet) and the
        decoder: what a snapshot's deal history reads without decoding a long session."""
        return tuple(self._items), self._decode

    def append(self, record: DealRecord) -> None:
        self._items.append(record)

    def pop(self) -> DealRecord:
        record = self[-1]
        self._items.pop()
        return record


@dataclass
class BetweenDeals:
    """The tracker's whole state between deals, as plain data (a checkpoint).

    ``record`` is the deal that just ended, with ``lines`` (its accepted lines, so
    that ``undo`` can reopen it) when it was complete."""

    record: DealRecord
    lines: list[tuple[str, str, object]] | None
    pulka: Pulka
    present: set[tuple[str, Card]]
    ignored: set[tuple[str, Card]]
    leftover: set[tuple[str, Card]]
    alerts: list[dict]
    unknown: set[tuple[str, str]]
    events_seen: int
    finished_after: int | None


def replayed_deal(record: DealRecord, players: int, rules, lines) -> Deal:
    """The deal of ``record`` rebuilt from its accepted lines (cards and control lines)."""
    deal = Deal(record.number, record.dealer, record.price, record.step, players, rules)
    for kind, who, value in lines:
        if kind == CARD:
            deal.play(who, value)
        else:
            deal.call(kind, who, value)
    return deal


def deal_entry(deal: Deal, outcome: str | None = None, written: DealWritten | None = None) -> dict:
    """A deal as FORMATS.md's summary lists it, with every field of FORMATS-contracts.md,
    whatever ``rules.bidding`` is (its second edition: "always present")."""
    b = deal.bidding
    entry = {"number": deal.number, "dealer": deal.dealer, "price": deal.price,
             "kind": deal.kind_name,
             "auction": [{"seat": s, "bid": v} for s, v in b.auction.calls] if b else [],
             "declarer": b.declarer if b else None,
             "game": b.game if b else None,
             "value": deal.value,
             "whist_calls": [{"seat": s, "call": c} for s, c in b.whisting.calls] if b and b.whisting else [],
             "whisters": list(deal.whisters),
             "whist_mode": deal.whist_mode,
             "outcome": outcome,
             "tricks": [t.to_dict() for t in deal.tricks], "taken": deal.taken,
             "claimed": deal.claimed,
             "revoke": deal.charged_revoke, "revoke_trick": deal.revoke_trick,
             "complete": deal.complete,
             "written": written.written(deal.seats) if written is not None else None,
             "help": written.help_list() if written is not None else []}
    return entry


# A deal entry's fields with the values they have in a deal they do not apply to (a
# raspasovka): what an entry kept from before they existed (a journal of an older
# version) is completed with, so every entry has them all, in their order.
ENTRY_DEFAULTS = {"number": None, "dealer": None, "price": None, "kind": KIND_RASPASOVKA, "auction": [],
                  "declarer": None, "game": None, "value": None, "whist_calls": [], "whisters": [],
                  "whist_mode": None, "outcome": None, "tricks": [], "taken": {}, "claimed": None,
                  "revoke": None, "revoke_trick": None, "complete": False, "written": None, "help": []}


def completed_entry(entry: dict, writes: Writes | None, seats: tuple[str, ...]) -> dict:
    """``entry`` with every field of a deal entry, in order (an older journal's raspasovka
    entry lacks the contract fields; its ``written`` is its exact writes, help had none)."""
    if len(entry) == len(ENTRY_DEFAULTS) and all(key in entry for key in ENTRY_DEFAULTS):
        return entry
    out = {key: entry[key] if key in entry else (default.copy() if isinstance(default, (list, dict)) else default)
           for key, default in ENTRY_DEFAULTS.items()}
    if "written" not in entry and writes is not None:
        out["written"] = DealWritten(writes, []).written(seats)
    return out
