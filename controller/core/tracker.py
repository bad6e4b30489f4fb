"""The deal tracker: table events in, signals out.

A state machine built with ``transitions`` follows the table between deals
(``idle``), waiting for a trick's lead (``lead``) and waiting for the next
card of an open trick (``follow``).  States and transitions are data
(:data:`STATES`, :data:`TRANSITIONS`); one thread feeds one tracker.

The mess of a real table -- out-of-turn cards, the same card twice, unknown
tags, flicker, a leader who lays before the last trick is cleared, revokes --
never raises: each becomes a ``mistake`` :class:`Signal`.  Feeding the same
events always gives the same signals, so a game log replays exactly.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from typing import Iterable, Iterator

from transitions import Machine

from .cards import Card, next_seat, parse_card, zone_names
from .config import GameConfig
from .deal import Deal, Trick
from .deck import Deck
from .events import BUTTON, PLACED, TableEvent
from .scoring import Pulka, Writes, rounded, score_deal, settle
from fractions import Fraction

logging.getLogger("transitions").setLevel(logging.WARNING)

IDLE, LEAD, FOLLOW = "idle", "lead", "follow"
STATES = [IDLE, LEAD, FOLLOW]
TRANSITIONS = [
    {"trigger": "start_deal", "source": IDLE, "dest": LEAD},
    {"trigger": "lead_card", "source": LEAD, "dest": FOLLOW},
    {"trigger": "follow_card", "source": FOLLOW, "dest": None},     # internal: the trick stays open
    {"trigger": "close_trick", "source": FOLLOW, "dest": LEAD},
    {"trigger": "finish_deal", "source": FOLLOW, "dest": IDLE},
    {"trigger": "abandon", "source": [LEAD, FOLLOW], "dest": IDLE},
    {"trigger": "undo_lead", "source": FOLLOW, "dest": LEAD},       # took back a trick's lead card
    {"trigger": "undo_follow", "source": FOLLOW, "dest": None},     # took back a follower's card
    {"trigger": "reopen_trick", "source": [LEAD, IDLE], "dest": FOLLOW},  # took back a trick's last card
    {"trigger": "undo_first", "source": FOLLOW, "dest": IDLE},      # took back the deal's only card
]

# mistake types
OUT_OF_TURN = "out_of_turn"
SAME_CARD = "same_card"
UNKNOWN_TAG = "unknown_tag"
TABLE_NOT_CLEAR = "table_not_clear"
REVOKE = "revoke"
MAX_ALERTS = 8


@dataclass(frozen=True)
class Signal:
    """Something the tracker decided; ``kind`` plus fields.  Becomes a derived log line."""

    kind: str
    t: float
    data: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        return {"t": self.t, "kind": self.kind, **self.data}


@dataclass
class DealRecord:
    """A deal that ended (complete or abandoned): its summary entry and what it wrote.

    ``deal`` (the plays) is kept for the most recent record only, which ``undo``
    may reopen; older records are plain data, as restored from a checkpoint.
    """

    number: int
    dealer: str
    price: int
    step: int
    complete: bool
    abandoned: bool
    plays: int
    entry: dict
    writes: Writes | None
    deal: Deal | None = None

    @classmethod
    def of(cls, deal: Deal, writes: Writes | None) -> "DealRecord":
        return cls(deal.number, deal.dealer, deal.price, deal.step, deal.complete, deal.abandoned,
                   len(deal.plays), deal_entry(deal), writes, deal)

    def to_dict(self) -> dict:
        return self.entry


def deal_entry(deal: Deal) -> dict:
    """A deal as FORMATS.md's summary lists it."""
    return {"number": deal.number, "dealer": deal.dealer, "price": deal.price,
            "tricks": [t.to_dict() for t in deal.tricks], "taken": deal.taken,
            "revoke": deal.charged_revoke, "complete": deal.complete}


def record_from_checkpoint(rec: dict) -> DealRecord:
    writes = writes_from_checkpoint(rec["writes"]) if rec["writes"] else None
    return DealRecord(rec["number"], rec["dealer"], rec["price"], rec["step"], rec["complete"],
                      rec["abandoned"], len(rec["plays"] or ()), rec["entry"], writes)


class Records:
    """The ended deals, oldest first.  Deals restored from a checkpoint journal stay raw
    journal lines until first used (a long session resumes without parsing them all)."""

    def __init__(self, raw_lines: Iterable[bytes] = ()):
        self._items: list = list(raw_lines)

    def __len__(self) -> int:
        return len(self._items)

    def __getitem__(self, index: int) -> DealRecord:
        item = self._items[index]
        if isinstance(item, bytes) or hasattr(type(item), "__bytes__"):  # a journal line, or one read on demand
            item = record_from_checkpoint(json.loads(bytes(item))["record"])
            self._items[index] = item
        return item

    def __iter__(self) -> Iterator[DealRecord]:
        for index in range(len(self._items)):
            yield self[index]

    def append(self, record: DealRecord) -> None:
        self._items.append(record)

    def pop(self) -> DealRecord:
        record = self[-1]
        self._items.pop()
        return record


def _fractions(mapping: dict) -> dict:
    return {k: str(v) for k, v in mapping.items()}


def writes_to_checkpoint(w: Writes) -> dict:
    return {"gora": _fractions(w.gora), "pulya": _fractions(w.pulya),
            "whists": [[a, b, str(v)] for (a, b), v in w.whists.items()]}


def writes_from_checkpoint(d: dict) -> Writes:
    return Writes({k: Fraction(v) for k, v in d["gora"].items()},
                  {k: Fraction(v) for k, v in d["pulya"].items()},
                  {(a, b): Fraction(v) for a, b, v in d["whists"]})


class DealTracker:
    """Consumes :class:`TableEvent` objects and follows raspasovka deals."""

    def __init__(self, config: GameConfig, deck: Deck | None = None):
        self.config = config
        self.rules = config.rules
        self.players = config.table.players
        self.deck = deck
        self.zones = zone_names(self.players)
        self.records = Records()
        self.deal: Deal | None = None
        self.pulka = Pulka(config.table.seats)
        self.present: set[tuple[str, Card]] = set()
        self.ignored: set[tuple[str, Card]] = set()
        self.leftover: set[tuple[str, Card]] = set()   # cards of the last deal still on the table
        self.alerts: list[dict] = []                    # mistakes awaiting `confirm`
        self.last_trick: Trick | None = None
        self.unknown_present: set[tuple[str, str]] = set()
        self.machine = Machine(model=self, states=STATES, transitions=TRANSITIONS, initial=IDLE,
                               auto_transitions=False, queued=True)

    # --- the series: who deals next, at what price -----------------------------------

    def next_deal_params(self) -> tuple[str, int]:
        """(dealer, progression step) of the next deal, derived from the records."""
        if not self.records:
            return self.config.table.first_dealer, 0
        last = self.records[-1]
        if last.abandoned:
            return last.dealer, last.step
        if self.rules.same_dealer and last.step + 1 < len(self.rules.progression):
            return last.dealer, last.step + 1
        return next_seat(last.dealer, self.players), 0

    def _new_deal(self) -> Deal:
        dealer, step = self.next_deal_params()
        return Deal(len(self.records) + 1, dealer, self.rules.progression[step], step,
                    self.players, self.rules)

    # --- events ----------------------------------------------------------------------

    def feed(self, event: TableEvent) -> list[Signal]:
        """Apply one table event; return the signals it caused (possibly none)."""
        if event.event == BUTTON:
            return self._button(event)
        card = event.card
        if card is None:
            card = self.deck.card_for(event.uid) if self.deck is not None else None
            if card is None:
                return self._unknown(event)
        if event.event == PLACED:
            return self._placed(event.t, event.zone, card)
        return self._removed(event.zone, card)

    def _unknown(self, event: TableEvent) -> list[Signal]:
        key = (event.zone, event.uid)
        if event.event != PLACED:
            self.unknown_present.discard(key)
            return []
        if key in self.unknown_present:
            return []
        self.unknown_present.add(key)
        alert = {"type": UNKNOWN_TAG, "zone": event.zone, "uid": event.uid}
        self._alert(alert)
        return [Signal("mistake", event.t, alert)]

    def feed_all(self, events: Iterable[TableEvent]) -> list[Signal]:
        out: list[Signal] = []
        for event in events:
            out.extend(self.feed(event))
        return out

    def _alert(self, alert: dict) -> None:
        """Keep a mistake until `confirm`; only the latest few are kept (what LEDs and display can show)."""
        self.alerts.append(alert)
        del self.alerts[:-MAX_ALERTS]

    def _mistake(self, t: float, kind: str, zone: str, card: Card, **extra) -> list[Signal]:
        key = (zone, card)
        self.ignored.add(key)
        if self.deal is None and self.leftover:
            self.leftover.add(key)
        alert = {"type": kind, "zone": zone, "card": str(card), **extra}
        self._alert(alert)
        return [Signal("mistake", t, alert)]

    def _placed(self, t: float, zone: str, card: Card) -> list[Signal]:
        key = (zone, card)
        if key in self.present:
            return []                       # reported twice without a removal: nothing changes
        self.present.add(key)
        deal = self.deal
        if deal is None:
            if self.leftover:
                return self._mistake(t, TABLE_NOT_CLEAR, zone, card)
            deal = self._new_deal()
            if zone != deal.expected:
                return self._mistake(t, OUT_OF_TURN, zone, card, expected=deal.expected)
            self.deal = deal
            self.last_trick = None
            self.start_deal()
            signals = [Signal("deal_start", t, {"deal": deal.number, "dealer": deal.dealer,
                                                 "price": deal.price})]
            return signals + self._accept(t, zone, card)
        if deal.in_current_trick(zone, card):
            return []                       # flicker: lifted and laid back while its trick is open
        if card in deal.played:
            return self._mistake(t, SAME_CARD, zone, card)
        if zone != deal.expected:
            return self._mistake(t, OUT_OF_TURN, zone, card, expected=deal.expected)
        return self._accept(t, zone, card)

    def _accept(self, t: float, zone: str, card: Card) -> list[Signal]:
        deal = self.deal
        leading = not deal.current
        trick, revoke = deal.play(zone, card)
        signals = [Signal("play", t, {"deal": deal.number, "zone": zone, "card": str(card)})]
        if revoke is not None:
            alert = {"type": REVOKE, "zone": zone, "card": str(card), "suit": revoke.suit}
            self._alert(alert)
            signals.append(Signal("mistake", t, alert))
        if trick is None:
            (self.lead_card if leading else self.follow_card)()
            return signals
        self.last_trick = trick
        signals.append(Signal("trick", t, {"deal": deal.number, "number": len(deal.tricks),
                                           **trick.to_dict()}))
        if not deal.finished:
            self.close_trick()
            return signals
        self.finish_deal()
        return signals + self._end_deal(t)

    def _end_deal(self, t: float) -> list[Signal]:
        deal = self.deal
        writes = None
        if deal.complete:
            writes = score_deal(self.rules, deal.seats, deal.active, deal.dealer, deal.price,
                                deal.step, deal.taken, deal.charged_revoke)
            self.pulka.add(writes)
        record = DealRecord.of(deal, writes)
        if self.records:
            self.records[-1].deal = None        # only the last deal can be reopened by undo
        self.records.append(record)
        self.deal = None
        self.leftover = set(self.present)
        data = dict(record.entry)
        data.pop("tricks")
        data["deal"] = data.pop("number")
        data["writes"] = writes.to_dict() if writes else None
        return [Signal("deal", t, data)]

    def _removed(self, zone: str, card: Card) -> list[Signal]:
        key = (zone, card)
        if key not in self.present:
            return []
        self.present.discard(key)
        self.ignored.discard(key)
        if key in self.leftover:
            self.leftover.discard(key)
        return []

    # --- buttons ---------------------------------------------------------------------

    def _button(self, event: TableEvent) -> list[Signal]:
        t = event.t
        if event.button == "confirm":
            self.alerts.clear()
            return [Signal("confirm", t)]
        if event.button == "new_deal":
            if self.deal is None:
                return []
            self.deal.abandoned = True
            self.abandon()
            return [Signal("abandon", t, {"deal": self.deal.number})] + self._end_deal(t)
        return self._undo(t)

    def _undo(self, t: float) -> list[Signal]:
        deal = self.deal
        if deal is None:
            # the deal just finished stays open to `undo` until the next deal's first card
            if not self.records or not self.records[-1].complete:
                return []               # nothing to take back
            record = self.records.pop()
            if record.writes is not None:
                self.pulka.add(record.writes, sign=-1)
            deal = record.deal
            self.leftover = set()
        zone, card = deal.plays[-1]
        self.deal = deal.without_last()
        was_finished = deal.finished
        if not self.deal.plays:
            self.deal = None
            self.undo_first()
        elif self.deal.current:
            (self.reopen_trick if (was_finished or not deal.current) else self.undo_follow)()
        else:
            self.undo_lead()
        self.last_trick = self.deal.tricks[-1] if self.deal and self.deal.tricks else None
        if (zone, card) in self.present:
            self.ignored.add((zone, card))
        return [Signal("undo", t, {"deal": deal.number, "zone": zone, "card": str(card)})]

    # --- results ---------------------------------------------------------------------

    def deal_dicts(self) -> list[dict]:
        out = [r.entry for r in self.records]
        if self.deal is not None:
            out.append(deal_entry(self.deal))
        return out

    def report_summary(self) -> dict:
        """The summary with each ended deal's exact ``writes`` (for the pulka picture's history)."""
        summary = self.summary()
        summary["deals"] = [dict(d) for d in summary["deals"]]
        for deal, record in zip(summary["deals"], self.records):
            deal["writes"] = record.writes.to_dict() if record.writes else {}
        return summary

    # --- checkpoints: the state between deals, to resume a long session quickly -----

    def checkpoint(self) -> dict:
        """The last ended deal and the table between deals (valid only while no deal is in progress)."""
        if self.deal is not None:
            raise ValueError("a checkpoint is taken between deals only")
        r = self.records[-1]
        cards = lambda keys: sorted([zone, str(card)] for zone, card in keys)  # noqa: E731
        return {"record": {"number": r.number, "dealer": r.dealer, "price": r.price, "step": r.step,
                           "complete": r.complete, "abandoned": r.abandoned, "entry": r.entry,
                           "writes": writes_to_checkpoint(r.writes) if r.writes else None,
                           "plays": [[z, str(c)] for z, c in r.deal.plays] if r.deal else None},
                "pulka": self.pulka.exact(),
                "present": cards(self.present), "ignored": cards(self.ignored),
                "leftover": cards(self.leftover), "alerts": list(self.alerts),
                "unknown": sorted([z, u] for z, u in self.unknown_present)}

    @classmethod
    def restore(cls, config: GameConfig, deck: Deck | None, earlier: list[bytes],
                last: dict | None) -> "DealTracker":
        """A tracker between deals as at checkpoint ``last``; ``earlier`` are the journal's
        lines before it (one per ended deal, parsed only when needed)."""
        tracker = cls(config, deck)
        if last is None:
            return tracker
        tracker.records = Records(earlier)
        rec = last["record"]
        tracker.records.append(record_from_checkpoint(rec))
        tracker.pulka = Pulka.from_exact(config.table.seats, last["pulka"])
        if rec["plays"] is not None:
            deal = Deal(rec["number"], rec["dealer"], rec["price"], rec["step"], tracker.players,
                        tracker.rules, abandoned=rec["abandoned"])
            for zone, card in rec["plays"]:
                deal.play(zone, parse_card(card))
            tracker.records[-1].deal = deal
            tracker.last_trick = deal.tricks[-1] if deal.tricks else None
        keys = lambda pairs: {(z, parse_card(c)) for z, c in pairs}  # noqa: E731
        tracker.present, tracker.ignored = keys(last["present"]), keys(last["ignored"])
        tracker.leftover = keys(last["leftover"])
        tracker.alerts = list(last["alerts"])
        tracker.unknown_present = {(z, u) for z, u in last["unknown"]}
        return tracker

    def summary(self) -> dict:
        """The summary JSON of FORMATS.md (deals, pulka, settlement)."""
        pulka = self.pulka.to_dict()
        convention = self.rules.convention
        return {"deals": self.deal_dicts(), "pulka": pulka,
                "settlement": {"convention": convention,
                               "balance": rounded(settle(pulka, convention))}}
