"""The checkpoint journal's records: the tracker's state between deals, as JSON.

The tracker hands out its state between deals as plain data
(:class:`~controller.core.tracker.BetweenDeals`); this module encodes it as one
journal object and decodes it back.  :mod:`controller.store.gamelog` writes the
objects to ``checkpoints.jsonl`` (one per ended deal) and resumes from the last
one, replaying the table events after it -- so a resume covers every phase of a
deal: the deal in progress is rebuilt by those events.

A record keeps the ended deal's summary entry, what it wrote (exact fractions as
strings) and, for a complete deal, its accepted lines (cards and control lines),
which ``undo`` may take back -- a claim and the ``confirm`` that ended its deal
among them, so an ``undo`` after a restart makes the claim wait again.  Earlier
deals' lines stay raw bytes until first used, so a 1,000-deal session resumes
without decoding them all.  An entry written before a field existed is completed
on reading (every field present, FORMATS-contracts.md).
"""

from __future__ import annotations

import json
from fractions import Fraction
from typing import Any, Callable, Iterable

from ..core.cards import parse_card
from ..core.config import GameConfig
from ..core.deal import CARD
from ..core.deck import Deck
from ..core.scoring import Pulka, Writes, exact
from ..core.tracker import BetweenDeals, DealRecord, DealTracker, Records, completed_entry


def _fractions(mapping: dict) -> dict:
    return {k: str(v) for k, v in mapping.items()}


def encode_writes(w: Writes) -> dict:
    return {"gora": _fractions(w.gora), "pulya": _fractions(w.pulya),
            "whists": [[a, b, str(v)] for (a, b), v in w.whists.items()]}


def decode_writes(d: dict) -> Writes:
    return Writes({k: exact(Fraction(v)) for k, v in d["gora"].items()},
                  {k: exact(Fraction(v)) for k, v in d["pulya"].items()},
                  {(a, b): exact(Fraction(v)) for a, b, v in d["whists"]})


def _encode_lines(lines) -> list | None:
    if lines is None:
        return None
    return [[kind, who, str(value) if kind == CARD else value] for kind, who, value in lines]


def _decode_lines(lines) -> list | None:
    if lines is None:
        return None
    return [(kind, who, parse_card(value) if kind == CARD else value) for kind, who, value in lines]


def encode_record(r: DealRecord, lines=None) -> dict:
    return {"number": r.number, "dealer": r.dealer, "price": r.price, "step": r.step,
            "complete": r.complete, "abandoned": r.abandoned, "kind": r.kind, "entry": r.entry,
            "writes": encode_writes(r.writes) if r.writes else None, "plays": r.plays,
            "lines": _encode_lines(lines)}


def decode_record(rec: dict) -> DealRecord:
    writes = decode_writes(rec["writes"]) if rec["writes"] else None
    # journals written before contract deals have no "kind": every deal was a raspasovka
    plays = rec.get("plays")
    count = plays if isinstance(plays, int) else len(plays or ())   # older journals: the cards themselves
    entry = rec["entry"]
    entry = completed_entry(entry, writes, tuple(entry.get("taken") or ()))
    return DealRecord(rec["number"], rec["dealer"], rec["price"], rec["step"], rec["complete"],
                      rec["abandoned"], rec.get("kind", "raspasovka"), entry, writes, count)


def _record_lines(rec: dict) -> list | None:
    if "lines" in rec:
        return _decode_lines(rec["lines"])
    plays = rec.get("plays")       # an older journal: the raspasovka deal's cards
    if not isinstance(plays, list):
        return None
    return [(CARD, zone, parse_card(card)) for zone, card in plays]


def encode(state: BetweenDeals) -> dict:
    """One journal object (without the gamelog's offset fields) for ``state``."""
    cards = lambda keys: sorted([zone, str(card)] for zone, card in keys)  # noqa: E731
    return {"record": encode_record(state.record, state.lines),
            "pulka": state.pulka.exact(),
            "present": cards(state.present), "ignored": cards(state.ignored),
            "leftover": cards(state.leftover), "alerts": list(state.alerts),
            "unknown": sorted([z, u] for z, u in state.unknown),
            "events_seen": state.events_seen, "finished_after": state.finished_after}


def _decode_journal_record(line: bytes) -> DealRecord:
    """An earlier journal line's record.  A complete deal keeps its lines: ``undo`` reaches it
    again once the deals after it are taken back (RULES-contracts.md "Mistakes at the table")."""
    rec = json.loads(line)["record"]
    record = decode_record(rec)
    if record.complete:
        record.lines = tuple(_record_lines(rec) or ()) or None
    return record


def decode(config: GameConfig, last: dict, events: int) -> BetweenDeals:
    """The state a journal object stands for (``events``: the table events before it)."""
    rec = last["record"]
    keys = lambda pairs: {(z, parse_card(c)) for z, c in pairs}  # noqa: E731
    return BetweenDeals(decode_record(rec), _record_lines(rec),
                        Pulka.from_exact(config.table.seats, last["pulka"]),
                        keys(last["present"]), keys(last["ignored"]), keys(last["leftover"]),
                        list(last["alerts"]), {(z, u) for z, u in last["unknown"]},
                        last.get("events_seen", events), last.get("finished_after"))


def restore(config: GameConfig, deck: Deck | None, earlier: Iterable, last: dict | None,
            read: Callable[[Any], bytes] = bytes) -> DealTracker:
    """A tracker between deals as at journal object ``last``; ``earlier`` stand for the
    journal's lines before it (one per ended deal): ``read(item)`` gives an item's line,
    read and decoded only when the tracker needs that deal."""
    if last is None:
        return DealTracker(config, deck)
    state = decode(config, last, last.get("events", 0))

    def record(item) -> DealRecord:
        return _decode_journal_record(read(item))

    return DealTracker.restore(config, deck, state, Records(earlier, record))
