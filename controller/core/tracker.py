"""The deal tracker: table events in, signals out.

A ``transitions`` state machine follows the phases of a deal: ``idle`` (between
deals), ``auction``, ``contract`` (the declarer's game), ``whisting`` and
``play`` (with ``held``: a trick waiting for ``confirm``).  States and
transitions are data (:data:`STATES`, :data:`TRANSITIONS`, and
:data:`PHASE_MOVES`: which move a call line makes when the deal
(:class:`~controller.core.deal.Deal`) it was added to changes phase); the
callbacks write the derived lines a phase change causes (``auction``,
``whisting``, the deal's result).  The machine moves only when the phase does:
a card inside play fires no trigger (the trick's lead and close are the deal's
own bookkeeping), and no move is tried that cannot apply -- a replay fires about
four triggers a deal (the replay's speed).  With ``rules.bidding = false``
a deal goes from ``idle`` straight to ``play`` (RULES.md); with ``true`` every deal
begins with its auction (RULES-contracts.md); with ``"auto"`` (the default) the deal's
first accepted line decides: a card, a bid, or a result line that is the auction and
the contract at once.  In play, a claim (``claim``) waits for ``confirm`` and then ends
the deal as if its tricks had been played so.  One thread feeds one tracker.

The mess of a real table -- out-of-turn cards, the same card twice, unknown
tags, flicker, a leader who lays before the last trick is cleared, revokes,
cards laid outside play, control lines not allowed now -- never raises: each
becomes a ``mistake`` :class:`Signal`.  Feeding the same events always gives
the same signals, so a game log replays exactly.

The tracker exposes its state between deals as plain data
(:meth:`DealTracker.checkpoint`, :meth:`DealTracker.restore`);
``controller.store.checkpoints`` encodes it for the journal.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Callable, Iterable, Iterator, NamedTuple

from transitions import Machine

from .cards import Card, zone_names
from .config import GameConfig
from .deal import (AUCTION, CARD, CLAIMING, CODES, CONFIRM, CONTRACT_PHASE, DONE, KIND_RASPASOVKA, PLAYING, PRIKUP,
                   WHISTING, Deal, Trick)
from .deck import Deck
from .events import BID, BUTTON, CLAIM, CONTRACT, MISERE, PLACED, RESULT, VALUE_FIELD, WHIST, TableEvent
from .bidding import MISERE_DEAL, contract_refusal
from .scoring import DealWritten, Pulka, Writes, pulya_order, settlement_object
from .series import next_deal
from .tokens import control_line_for, phase_of

logging.getLogger("transitions").setLevel(logging.WARNING)

IDLE = "idle"
# The play phase: the tricks are played; whose card comes next is the deal's (Deal.expected).
PLAY = "play"
# A trick holding a card whose order the hub link could only guess waits here for `confirm`
# before it is counted (PROTOCOL.md: "waits for confirm before it counts the trick").
HELD = "held"
# A claim waits here for `confirm` (RULES-contracts.md "Claims"): no card is in play meanwhile.
CLAIM_STATE = CLAIMING
STATES = [IDLE, AUCTION, CONTRACT_PHASE, WHISTING, PLAY, HELD, CLAIM_STATE]
_IN_DEAL = [AUCTION, CONTRACT_PHASE, WHISTING, PLAY, HELD, CLAIM_STATE]
TRANSITIONS = [
    {"trigger": "open_auction", "source": IDLE, "dest": AUCTION},           # the first hand's first bid
    {"trigger": "start_deal", "source": IDLE, "dest": PLAY},                # the first card (a raspasovka)
    # a result line: the auction and the contract at once (the deal's first line)
    {"trigger": "result_to_whisting", "source": IDLE, "dest": WHISTING, "after": "_auction_decided"},
    {"trigger": "result_to_play", "source": IDLE, "dest": PLAY, "after": "_auction_decided"},    # misère
    {"trigger": "result_ten_unwhisted", "source": IDLE, "dest": IDLE,
     "after": ["_auction_decided", "_ten_unwhisted", "_end_deal"]},         # a 10 not whisted
    # a call line that ends its phase moves the machine by the move named in PHASE_MOVES
    {"trigger": "auction_to_play", "source": AUCTION, "dest": PLAY,
     "after": "_auction_decided"},                                          # all passed, or misère
    {"trigger": "auction_won", "source": AUCTION, "dest": CONTRACT_PHASE,
     "after": "_auction_decided"},                                          # won with a game
    {"trigger": "ten_unwhisted", "source": CONTRACT_PHASE, "dest": IDLE,
     "after": ["_ten_unwhisted", "_end_deal"]},                             # a 10 not whisted
    {"trigger": "declared", "source": CONTRACT_PHASE, "dest": WHISTING},
    {"trigger": "whisted", "source": WHISTING, "dest": PLAY, "after": "_whisting_decided"},
    {"trigger": "whisting_ends_deal", "source": WHISTING, "dest": IDLE,
     "after": ["_whisting_decided", "_end_deal"]},                          # both pass, half-whist
    {"trigger": "hold_trick", "source": PLAY, "dest": HELD},                # a guessed order in it
    # a trick is counted when its last card comes, or on `confirm` if it was held
    {"trigger": "release_trick", "source": HELD, "dest": PLAY},
    {"trigger": "finish_deal", "source": [PLAY, HELD], "dest": IDLE, "after": "_end_deal"},  # the 10th
    {"trigger": "claim_tricks", "source": PLAY, "dest": CLAIM_STATE},       # between tricks
    {"trigger": "claim_confirmed", "source": CLAIM_STATE, "dest": IDLE, "after": "_end_deal"},
    {"trigger": "abandon", "source": _IN_DEAL, "dest": IDLE, "after": "_end_deal"},
] + [
    # undo: back to whatever phase the remaining lines leave (possibly the previous deal's)
    {"trigger": "rewind", "source": STATES, "dest": state, "conditions": f"rewound_to_{state}"}
    for state in STATES
]

# The move a call line makes when it changes the deal's phase, by (phase before, phase after):
# each is one transition above, so the machine never tries a transition that cannot apply.
PHASE_MOVES = {(AUCTION, PLAYING): "auction_to_play", (AUCTION, CONTRACT_PHASE): "auction_won",
               (CONTRACT_PHASE, DONE): "ten_unwhisted", (CONTRACT_PHASE, WHISTING): "declared",
               (WHISTING, PLAYING): "whisted", (WHISTING, DONE): "whisting_ends_deal"}
# The move a result line makes, by the phase it leaves its deal in.
RESULT_MOVES = {WHISTING: "result_to_whisting", PLAYING: "result_to_play", DONE: "result_ten_unwhisted"}

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
_CONTRACT_MISTAKES = (INVALID_CONTROL, NOT_IN_PLAY)     # kinds that always carry deal, line and message

_MESSAGES = {
    OUT_OF_TURN: "a card out of turn",
    SAME_CARD: "a card already played in this deal",
    UNKNOWN_TAG: "a tag not in the deck file",
    TABLE_NOT_CLEAR: "the table is not clear",
    REVOKE: "a revoke, proven",
    NOT_IN_PLAY: "a card outside play",
}


def _alert_key(alert: dict) -> tuple:
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
        return _new_signal(cls, (kind, t, {} if data is None else data))

    def to_dict(self) -> dict:
        return {"t": self.t, "kind": self.kind, **self.data}


_new_signal = tuple.__new__


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


class Records:
    """The ended deals, oldest first.  Deals restored from a checkpoint journal may stay
    undecoded until first used (``decode`` turns one into a :class:`DealRecord`), so a long
    session resumes without decoding them all."""

    def __init__(self, raw: Iterable = (), decode: Callable[[object], DealRecord] | None = None):
        self._items: list = list(raw)
        self._decode = decode

    def __len__(self) -> int:
        return len(self._items)

    def __getitem__(self, index):
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self._items)))]
        item = self._items[index]
        if not isinstance(item, DealRecord):
            item = self._decode(item)
            self._items[index] = item
        return item

    def __iter__(self) -> Iterator[DealRecord]:
        for index in range(len(self._items)):
            yield self[index]

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


class DealTracker:
    """Consumes :class:`TableEvent` objects and follows raspasovka, contract and misère deals."""

    def __init__(self, config: GameConfig, deck: Deck | None = None):
        self.config = config
        self.rules = config.rules
        self.bidding = config.rules.bidding           # True, False or "auto"
        self.players = config.table.players
        self.seats = config.table.seats
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
        # the hub link's guessed order (PROTOCOL.md): cards of this deal laid in a guessed order;
        # and cards that wait, in laying order (True: a guessed card before its seat's turn;
        # False: a card laid while a trick waited for `confirm`)
        self.guessed: set[tuple[str, Card]] = set()
        self.parked: dict[tuple[str, Card], bool] = {}
        self.held: dict | None = None                   # the trick line awaiting `confirm`
        self.events_seen = 0                            # table events fed: a mistake line's `line`
        self.finished_after: int | None = None          # the deal after which every pulya closed
        self._out: list[Signal] = []                    # signals written by the machine's callbacks
        self._t = 0.0
        self._ending: Deal | None = None                # the deal the machine is ending
        self.machine = Machine(model=self, states=STATES, transitions=TRANSITIONS, initial=IDLE,
                               auto_transitions=False, queued=True)

    # --- the series: who deals next, at what price -----------------------------------

    def next_deal_params(self) -> tuple[str, int]:
        """(dealer, progression step) of the next deal (:mod:`controller.core.series`)."""
        return next_deal(self.config, self.records[-1] if self.records else None)

    def _new_deal(self) -> Deal:
        dealer, step = self.next_deal_params()
        return Deal(len(self.records) + 1, dealer, self.rules.progression[step], step,
                    self.players, self.rules)

    # --- the machine's conditions for `undo` (they read the deal the remaining lines built)

    def _phase(self) -> str:
        return IDLE if self.deal is None else self.deal.phase

    def rewound_to_idle(self) -> bool:
        return self.deal is None

    def rewound_to_auction(self) -> bool:
        return self._phase() == AUCTION

    def rewound_to_contract(self) -> bool:
        return self._phase() == CONTRACT_PHASE

    def rewound_to_whisting(self) -> bool:
        return self._phase() == WHISTING

    def rewound_to_play(self) -> bool:
        return self._phase() == PLAYING and self.held is None

    def rewound_to_held(self) -> bool:
        return self._phase() == PLAYING and self.held is not None

    def rewound_to_claim(self) -> bool:
        return self._phase() == CLAIMING

    # --- the machine's callbacks: derived lines of phase changes ---------------------

    def _auction_decided(self) -> None:
        deal = self.deal
        b = deal.bidding
        result = b.auction.result
        self._out.append(Signal("auction", self._t, {"deal": deal.number, "result": result,
                                                      "declarer": b.declarer, "bid": b.winning_bid}))

    def _whisting_decided(self) -> None:
        deal = self.deal
        self._out.append(Signal("whisting", self._t, {"deal": deal.number, "whisters": deal.whisters,
                                                       "result": deal.bidding.whisting.result}))

    def _ten_unwhisted(self) -> None:
        self._out.append(Signal("whisting", self._t, {"deal": self.deal.number, "whisters": [],
                                                       "result": "ten_unwhisted"}))

    def _end_deal(self) -> None:
        deal = self.deal
        written, outcome = None, None
        if deal.complete:
            writes, outcome = deal.score()
            written = self.pulka.write_deal(self.rules, writes, pulya_order(self.seats, deal.dealer))
            if self.finished_after is None and self.pulka.finished(self.rules):
                self.finished_after = deal.number
        entry = deal_entry(deal, outcome, written)
        record = DealRecord(deal.number, deal.dealer, deal.price, deal.step, deal.complete, deal.abandoned,
                            deal.kind_name, entry, written.writes if written else None,
                            len(deal.plays), deal)
        if self.records:
            previous = self.records[-1]         # only the last deal is kept whole; older ones keep their lines
            if previous.deal is not None:
                previous.lines = tuple(previous.deal.lines) if previous.complete else None
                previous.deal = None
        self.records.append(record)
        self.deal = None
        self.leftover = set(self.present)
        self.alerts.clear()         # a deal's mistakes end with it: the next deal starts clean
        data = {"deal": deal.number}            # then the entry's fields, in order, but these two
        data.update(entry)
        del data["number"], data["tricks"]
        data["writes"] = written.writes.to_dict() if written else None
        self._out.append(Signal("deal", self._t, data))

    def _run(self, trigger: Callable[[], bool]) -> list[Signal]:
        """Fire a trigger; return the signals its callbacks wrote."""
        trigger()
        out, self._out = self._out, []
        return out

    # --- events ----------------------------------------------------------------------

    def feed(self, event: TableEvent) -> list[Signal]:
        """Apply one table event; return the signals it caused (possibly none)."""
        self.events_seen += 1
        t = self._t = event.t
        card = event.card
        if card is not None:                # a card laid or lifted (the common line) first
            if event.event != PLACED:
                return self._removed(event.zone, card)
            if event.guessed:
                return self._placed_guessed(t, event.zone, card)
            return self._placed(t, event.zone, card)
        kind = event.event
        if kind == BUTTON:
            return self._button(event)
        if kind in VALUE_FIELD:
            return self._control(event)
        card = self.deck.card_for(event.uid) if self.deck is not None else None
        if card is None:
            token = self.deck.token_for(event.uid) if self.deck is not None else None
            if token is not None:
                return self._token(event, token)
            return self._unknown(event)
        if kind == PLACED:
            if event.guessed:
                return self._placed_guessed(t, event.zone, card)
            return self._placed(t, event.zone, card)
        return self._removed(event.zone, card)

    def feed_all(self, events: Iterable[TableEvent]) -> list[Signal]:
        out: list[Signal] = []
        for event in events:
            out.extend(self.feed(event))
        return out

    def _alert(self, alert: dict) -> None:
        """Keep a mistake until `confirm` or its deal's end; one entry per distinct problem
        (the same card relaid eight times is one thing to fix, shown once, newest last), and
        only the latest few (what LEDs and display can show)."""
        key = _alert_key(alert)
        self.alerts[:] = [a for a in self.alerts if _alert_key(a) != key]
        self.alerts.append(alert)
        del self.alerts[:-MAX_ALERTS]

    def _signal_mistake(self, t: float, alert: dict, message: str | None = None) -> list[Signal]:
        """A mistake line.  With ``bidding = true``, in a deal with an auction, for a control
        line and for the kinds the contract game added, the line also says its deal, the
        table event's number in the session and a message (FORMATS-contracts.md); otherwise
        (``false``, and a raspasovka or a card between deals under ``"auto"``) the old kinds
        keep their exact old fields."""
        self._alert(alert)
        data = alert
        deal = self.deal
        if (self.bidding is True or alert["type"] in _CONTRACT_MISTAKES or "line_event" in alert
                or (deal is not None and deal.bidding is not None)):
            data = {**alert, "deal": self.deal.number if self.deal is not None else None,
                    "line": self.events_seen, "mistake": alert["type"],
                    "message": message or _MESSAGES.get(alert["type"], alert["type"])}
        return [Signal("mistake", t, data)]

    def _tag_newly_laid(self, event: TableEvent) -> bool:
        """A tag that is not a card (unknown, or a bidding token): True when this line lays it;
        a lift, or a second read while it lies, changes nothing but its presence."""
        key = (event.zone, event.uid)
        if event.event != PLACED:
            self.unknown_present.discard(key)
            return False
        if key in self.unknown_present:
            return False
        self.unknown_present.add(key)
        return True

    def _unknown(self, event: TableEvent) -> list[Signal]:
        if not self._tag_newly_laid(event):
            return []
        return self._signal_mistake(event.t, {"type": UNKNOWN_TAG, "zone": event.zone, "uid": event.uid})

    def _token(self, event: TableEvent, token: str) -> list[Signal]:
        """A bidding token (the deck's ``[bids]``) laid on a seat reader: the control line it
        makes in this phase (:mod:`controller.core.tokens`).  The table event stays the raw
        ``placed`` line, so a log replays exactly.  Lifting it, or a second read while it
        lies, does nothing; its presence is kept with the other non-card tags."""
        if not self._tag_newly_laid(event):
            return []
        line = control_line_for(token, event.zone, phase_of(self.deal), event.t)
        return [] if line is None else self._control(line)

    def _mistake(self, t: float, kind: str, zone: str, card: Card, **extra) -> list[Signal]:
        key = (zone, card)
        self.ignored.add(key)
        if self.deal is None and self.leftover:
            self.leftover.add(key)
        return self._signal_mistake(t, {"type": kind, "zone": zone, "card": str(card), **extra})

    def _lying_besides(self, key: tuple[str, Card]) -> bool:
        """Whether a card other than ``key`` lies anywhere (the clear-table check for a card
        that would begin a deal); guessed cards waiting for their turn are the deal's own."""
        return len(self.present - {key}) > len(self.parked)

    def _placed_guessed(self, t: float, zone: str, card: Card) -> list[Signal]:
        """A card the hub link lost and found again without knowing its order among the others
        it found (PROTOCOL.md): the table shows it (``order_guessed``, kept until `confirm`)
        and never guesses silently.  In play, such a card before its turn is not a card out of
        turn: it waits, and is taken when its seat's turn comes; the trick it is in is counted
        only on `confirm` (`undo` takes it back instead)."""
        key = (zone, card)
        if key in self.present:
            return []
        deal = self.deal
        if deal is None and self.bidding is not True and not self._lying_besides(key):
            deal = self._new_deal()         # the deal this card would start: whose lead it is
        in_play = deal is not None and deal.phase == PLAYING and card not in deal.played
        if in_play and (zone != deal.expected or self.held is not None) \
                and all(z != zone for z, _ in self.parked):
            self.present.add(key)
            self.parked[key] = True
            return self._signal_mistake(t, {"type": ORDER_GUESSED, "zone": zone, "card": str(card)})
        signals = self._placed(t, zone, card, guessed=True)
        if any(s.kind == "play" for s in signals):
            signals += self._signal_mistake(t, {"type": ORDER_GUESSED, "zone": zone, "card": str(card)})
        return signals

    def _placed(self, t: float, zone: str, card: Card, guessed: bool = False) -> list[Signal]:
        key = (zone, card)
        present = self.present
        if key in present:
            return []                       # reported twice without a removal: nothing changes
        present.add(key)
        deal = self.deal
        if self.held is None and deal is not None and zone == deal.expected and card not in deal.played:
            # the common card, due from this zone and new in the deal: none of the checks
            # below could refuse it (the zone due is never the prikup outside a raspasovka,
            # and holds no card of the open trick yet)
            return self._accept(t, zone, card, guessed)
        if self.held is not None:
            # the trick waits for `confirm` (its order was guessed): this card waits with it and
            # is taken after, as if laid then; a second card on a zone that has one is refused
            if any(z == zone for z, _ in self.parked):
                return self._mistake(t, ORDER_GUESSED, zone, card)
            self.parked[key] = guessed
            return []
        if deal is None:
            if self.bidding is True:
                return self._mistake(t, NOT_IN_PLAY, zone, card)
            # the card would begin a raspasovka (false, "auto"): no other card may lie anywhere,
            # its own zone included (RULES-contracts.md, second edition's readings)
            if self._lying_besides(key):
                return self._mistake(t, TABLE_NOT_CLEAR, zone, card)
            deal = self._new_deal()
            if zone != deal.expected:
                return self._mistake(t, OUT_OF_TURN, zone, card, expected=deal.expected)
            self.deal = deal
            self.last_trick = None
            self.start_deal()
            signals = [Signal("deal_start", t, {"deal": deal.number, "dealer": deal.dealer,
                                                 "price": deal.price})]
            return signals + self._accept(t, zone, card, guessed)
        if deal.bidding is not None:
            phase = deal.phase
            if zone == PRIKUP and deal.kind_name != KIND_RASPASOVKA and phase != AUCTION:
                return []                   # the talon and the discard: never a play, no signal
            if phase != PLAYING:
                return self._mistake(t, NOT_IN_PLAY, zone, card)
        if deal.in_current_trick(zone, card):
            return []                       # flicker: lifted and laid back while its trick is open
        if card in deal.played:
            return self._mistake(t, SAME_CARD, zone, card)
        if zone != deal.expected:
            return self._mistake(t, OUT_OF_TURN, zone, card, expected=deal.expected)
        return self._accept(t, zone, card, guessed)

    def _accept(self, t: float, zone: str, card: Card, guessed: bool = False) -> list[Signal]:
        deal = self.deal
        if guessed:
            self.guessed.add((zone, card))
        trick, revoke = deal.play(zone, card)
        # made by tuple.__new__ itself: the most frequent line of all (Signal's own __new__ is Python)
        signals = [_new_signal(Signal, ("play", t, {"deal": deal.number, "zone": zone, "card": CODES[card]}))]
        if revoke is not None:
            signals += self._signal_mistake(t, {"type": REVOKE, "zone": zone, "card": str(card),
                                                "suit": revoke.suit})
        if trick is None:
            if self.parked:
                signals += self._take_parked(t)
            return signals
        self.last_trick = trick
        fields = {"deal": deal.number, "number": len(deal.tricks), "leader": trick.leader,
                  "cards": trick.shown, "winner": trick.winner}
        if self.guessed and self.guessed.intersection(trick.cards):
            self.held = fields
            self.hold_trick()
            return signals
        return signals + self._count(t, fields)

    def _count(self, t: float, fields: dict, held: bool = False) -> list[Signal]:
        """The trick line, and the next trick's lead or the deal's end (``held``: the trick
        waited for `confirm`)."""
        signals = [_new_signal(Signal, ("trick", t, fields))]
        deal = self.deal
        if not deal.finished:
            if held:
                self.release_trick()
        else:
            self.guessed.clear()
            signals += self._run(self.finish_deal)
        if self.parked:                 # after the last trick: cards laid meanwhile meet the next deal's rules
            signals += self._take_parked(t)
        return signals

    def _take_parked(self, t: float) -> list[Signal]:
        """The cards that wait, in laying order: a guessed one that came before its seat's turn
        is played when the turn comes; one laid while a trick waited for `confirm` is taken
        now, by the usual rules (played, or a signalled mistake)."""
        out: list[Signal] = []
        for key in list(self.parked):
            if self.held is not None:
                break
            if key not in self.parked:
                continue                    # taken meanwhile (a card played takes the next)
            guessed, deal = self.parked[key], self.deal
            if guessed and deal is not None and key[0] != deal.expected:
                continue
            del self.parked[key]
            self.present.discard(key)
            out += self._placed_guessed(t, *key) if guessed else self._placed(t, *key)
        return out

    def _removed(self, zone: str, card: Card) -> list[Signal]:
        key = (zone, card)
        present = self.present
        if key not in present:
            return []
        present.remove(key)
        # the other sets are empty at almost every lift: asked only when they hold anything
        if self.ignored:
            self.ignored.discard(key)
        if self.parked:
            self.parked.pop(key, None)
        if self.leftover:
            self.leftover.discard(key)
        return []

    # --- control lines: bid, contract, whist, whist_mode, result, claim -------------

    def _refuse(self, t: float, event: TableEvent, message: str) -> list[Signal]:
        value = dict(event.call) if event.event == CLAIM else event.call
        alert = {"type": INVALID_CONTROL, "zone": event.seat, "line_event": event.event,
                 VALUE_FIELD[event.event]: value}
        return self._signal_mistake(t, alert, message)

    def _first_line(self, event: TableEvent) -> list[Signal]:
        """A bid or result line with no deal in progress: it begins a deal with an auction
        once the table is clear (the first hand's bid; a result from any active seat)."""
        t, kind, seat, value = event.t, event.event, event.seat, event.call
        if self.present:
            alert = {"type": TABLE_NOT_CLEAR, "zone": seat, "line_event": kind, VALUE_FIELD[kind]: value}
            return self._signal_mistake(t, alert, "a bid before the table is clear" if kind == BID
                                        else "a result line before the table is clear")
        fresh = self._new_deal()
        if fresh.bidding is None:
            fresh.begin_auction()               # "auto": this line decides the deal's course
        if kind == BID:
            refusal = fresh.bidding.auction.refusal(seat, value)
        else:
            refusal = None if seat in fresh.active else f"{seat} sits out this deal (the dealer)"
        if refusal:
            return self._refuse(t, event, refusal)
        self.deal = fresh
        self.last_trick = None
        self.leftover = set()
        start = [Signal("deal_start", t, {"deal": fresh.number, "dealer": fresh.dealer, "price": fresh.price})]
        if kind == BID:
            self.open_auction()
        return start + self._call(t, event)

    def _control(self, event: TableEvent) -> list[Signal]:
        t, kind, seat, value = event.t, event.event, event.seat, event.call
        if self.bidding is False:
            return self._refuse(t, event, "bidding is off (rules.bidding = false)")
        deal = self.deal
        if kind == BID or kind == RESULT:
            if deal is None:
                return self._first_line(event)
            if kind == RESULT:
                return self._refuse(t, event, "a result line only as a deal's first line")
            if deal.phase != AUCTION:
                return self._refuse(t, event, "no auction now")
            refusal = deal.bidding.auction.refusal(seat, value)
            if refusal:
                return self._refuse(t, event, refusal)
            return self._call(t, event)
        if deal is None:
            return self._refuse(t, event, "no deal awaits this line")
        b = deal.bidding
        if b is None:
            return self._refuse(t, event, f"a raspasovka has no {kind} line")
        if kind == CLAIM:
            return self._claim(event)
        if deal.phase == CLAIMING:
            return self._refuse(t, event, "a claim waits for confirm")
        if kind == CONTRACT:
            if deal.phase == AUCTION:
                return self._refuse(t, event, "the auction is not over")
            if seat != b.declarer:
                return self._refuse(t, event, "the contract line is the declarer's" if b.declarer
                                    else "no contract after an all-pass auction")
            if b.result_line:
                return self._refuse(t, event, "the contract is already declared (by the result line)")
            if b.auction.result == MISERE_DEAL:
                if value != MISERE or deal.plays:
                    return self._refuse(t, event, "a misere auction: the game is misere, until the first card")
                return self._call(t, event)
            if deal.phase != CONTRACT_PHASE:
                return self._refuse(t, event, "the contract is already declared")
            refusal = contract_refusal(b.winning_bid, value)
            if refusal:
                return self._refuse(t, event, refusal)
            return self._call(t, event)
        if kind == WHIST:
            if deal.phase != WHISTING:
                return self._refuse(t, event, "no whisting now" if b.game != MISERE else "a misere is not whisted")
            refusal = b.whisting.refusal(seat, value)
            if refusal:
                return self._refuse(t, event, refusal)
            return self._call(t, event)
        refusal = deal.mode_refusal()          # whist_mode
        if refusal:
            return self._refuse(t, event, refusal)
        return self._call(t, event)

    def _claim(self, event: TableEvent) -> list[Signal]:
        """A claim in a contract or misère deal (RULES-contracts.md "Claims"): valid between
        tricks, one number for every active seat, summing to the tricks left; it waits for
        `confirm`."""
        t, deal = event.t, self.deal
        if deal.kind_name == KIND_RASPASOVKA:
            return self._refuse(t, event, "no claim in a raspasovka")
        phase = deal.phase
        if phase == CLAIMING:
            return self._refuse(t, event, "a claim already waits for confirm")
        if phase != PLAYING:
            return self._refuse(t, event, "a claim only during the play")
        if deal.current or self.held is not None or self.parked:
            return self._refuse(t, event, "a claim only between tricks (a trick is open)")
        tricks = dict(event.call)
        out = [seat for seat in tricks if seat not in deal.active]
        if out:
            return self._refuse(t, event, f"{out[0]} sits out this deal")
        missing = [seat for seat in deal.active if seat not in tricks]
        if missing:
            return self._refuse(t, event, f"the claim has no number for {', '.join(missing)}")
        left = deal.total_tricks - len(deal.tricks)
        if sum(tricks.values()) != left:
            return self._refuse(t, event, f"the claim sums to {sum(tricks.values())}, {left} tricks are left")
        deal.call(CLAIM, None, event.call)
        self.claim_tricks()
        return [self._claim_line(t, "waiting")]

    def _claim_line(self, t: float, state: str) -> Signal:
        deal = self.deal
        return Signal("claim", t, {"deal": deal.number, "tricks": dict(deal.claim), "state": state})

    def _call(self, t: float, event: TableEvent) -> list[Signal]:
        """Record an accepted control line; move the machine when the line ends its phase
        (:data:`PHASE_MOVES`, :data:`RESULT_MOVES`; a call that leaves the auction or the
        whisting open moves nothing)."""
        deal = self.deal
        before = deal.phase
        deal.call(event.event, event.seat, event.call)
        after = deal.phase
        if event.event == RESULT:
            trigger = getattr(self, RESULT_MOVES[after])
        else:
            trigger = None if after == before else getattr(self, PHASE_MOVES[before, after])
        data = {"deal": deal.number}
        if event.seat is not None:
            data["seat"] = event.seat
        data[VALUE_FIELD[event.event]] = event.call
        signals = [Signal(event.event, t, data)]
        if trigger is not None:
            signals += self._run(trigger)
        return signals

    # --- buttons ---------------------------------------------------------------------

    def _button(self, event: TableEvent) -> list[Signal]:
        t = event.t
        if event.button == "confirm":
            self.alerts.clear()
            signals = [Signal("confirm", t)]
            if self.held is not None:
                fields, self.held = self.held, None
                signals += self._count(t, fields, held=True)
            elif self.deal is not None and self.deal.phase == CLAIMING:
                # the confirm of a waiting claim is a line of its deal (undo makes it wait again)
                self.deal.call(CONFIRM, None, None)
                signals.append(self._claim_line(t, "confirmed"))
                signals += self._run(self.claim_confirmed)
            return signals
        if event.button == "new_deal":
            if self.deal is None:
                return []
            self.held = None
            self.parked.clear()
            self.guessed.clear()
            self.deal.abandoned = True
            number = self.deal.number
            return [Signal("abandon", t, {"deal": number})] + self._run(self.abandon)
        return self._undo(t)

    def _undo(self, t: float) -> list[Signal]:
        deal = self.deal
        if deal is None:
            # the deal just finished stays open to `undo` until the next deal's first line
            if not self.records or not self.records[-1].complete:
                return []               # nothing to take back (after new_deal: nothing)
            record = self.records[-1]
            if record.deal is None:
                if not record.lines:
                    return []           # a record restored without its lines
                record.deal = replayed_deal(record, self.players, self.rules, record.lines)
            self.records.pop()
            if record.writes is not None:
                self.pulka.add(record.writes, sign=-1)
            if self.finished_after == record.number:
                self.finished_after = None
            deal = record.deal
            self.leftover = set()
        kind, who, value = deal.lines[-1]
        rest = deal.without_last()
        self.held = None                # a held trick's last card taken back reopens the trick
        self.deal = rest if rest.lines else None      # a deal whose only line is taken back is gone
        self.rewind()
        self.last_trick = rest.tricks[-1] if rest.tricks else None
        if kind == CARD:
            if (who, value) in self.present:
                self.ignored.add((who, value))
            return [Signal("undo", t, {"deal": deal.number, "zone": who, "card": str(value)})]
        data = {"deal": deal.number, "undone": kind}
        if who is not None:
            data["seat"] = who
        if kind == CONFIRM:         # the claim waits again
            return [Signal("undo", t, data), self._claim_line(t, "waiting")]
        if kind == CLAIM:
            data["tricks"] = dict(value)
            return [Signal("undo", t, data), Signal("claim", t, {"deal": deal.number, "tricks": dict(value),
                                                                  "state": "withdrawn"})]
        data[VALUE_FIELD[kind]] = value
        return [Signal("undo", t, data)]

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

    # --- checkpoints: the state between deals, as plain data -------------------------

    def checkpoint(self) -> BetweenDeals:
        """The last ended deal and the table between deals (only while no deal is in progress)."""
        if self.deal is not None or not self.records:
            raise ValueError("a checkpoint is taken between deals only")
        record = self.records[-1]
        lines = list(record.deal.lines) if record.deal is not None and record.complete else None
        return BetweenDeals(record, lines, self.pulka, set(self.present), set(self.ignored),
                            set(self.leftover), list(self.alerts), set(self.unknown_present),
                            self.events_seen, self.finished_after)

    @classmethod
    def restore(cls, config: GameConfig, deck: Deck | None, state: BetweenDeals | None,
                earlier: Records | None = None) -> "DealTracker":
        """A tracker between deals as in ``state``; ``earlier`` are the records before it."""
        tracker = cls(config, deck)
        if state is None:
            return tracker
        tracker.records = earlier if earlier is not None else Records()
        record = state.record
        if state.lines is not None:
            deal = replayed_deal(record, tracker.players, tracker.rules, state.lines)
            record.deal = deal
            tracker.last_trick = deal.tricks[-1] if deal.tricks else None
        tracker.records.append(record)
        tracker.pulka = state.pulka
        tracker.present, tracker.ignored = set(state.present), set(state.ignored)
        tracker.leftover = set(state.leftover)
        tracker.alerts = list(state.alerts)
        tracker.unknown_present = set(state.unknown)
        tracker.events_seen = state.events_seen
        tracker.finished_after = state.finished_after
        return tracker

    def summary(self) -> dict:
        """The summary JSON of FORMATS.md and FORMATS-contracts.md."""
        pulka = self.pulka.to_dict()
        # every field with every value of rules.bidding (FORMATS-contracts.md, second edition)
        summary = {"deals": self.deal_dicts(), "pulka": pulka, "pulya_target": self.rules.pulya_target,
                   "finished_after_deal": self.finished_after}
        # FORMATS.md: the summary "ends with the same settlement object" as `settle` prints
        summary["settlement"] = settlement_object(pulka, self.rules)
        return summary
