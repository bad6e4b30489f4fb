"""The deal tracker: table events in, signals out.

The phase of the deal in progress is the state of a ``transitions`` machine whose
model is the tracker (:mod:`controller.core.phases` declares it as data;
:class:`~controller.core.phase_model.PhaseModel` holds its guards and effects):
``idle`` between deals, ``auction``, ``contract`` (the declarer's game), ``whisting``,
``play``, ``held`` (a trick waiting for ``confirm``) and ``claim``.  A control line is
allowed or refused by the machine's data, and is a trigger judged by the machine's
conditions; a call inside the auction or the whisting, like a card inside the play, is
their own bookkeeping and fires a trigger only when it moves the phase -- the auction's
or the whisting's last call, a deal's first card, a held trick, the last trick (the
replay's speed: about one trigger a phase).  With
``rules.bidding = false`` a deal goes from ``idle`` straight to ``play`` (RULES.md);
with ``true`` every deal begins with its auction (RULES-contracts.md); with ``"auto"``
(the default) the deal's first accepted line decides: a card, a bid, or a result line
that is the auction and the contract at once.  In play, a claim waits for ``confirm``
and then ends the deal as if its tricks had been played so.  One thread feeds one
tracker.

The mess of a real table -- out-of-turn cards, the same card twice, unknown
tags, flicker, a leader who lays before the last trick is cleared, revokes,
cards laid outside play, control lines not allowed now -- never raises: each
becomes a ``mistake`` :class:`Signal`.  Feeding the same events always gives
the same signals, so a game log replays exactly.

The tracker exposes its state between deals as plain data
(:meth:`DealTracker.checkpoint`, :meth:`DealTracker.restore`; the records of
:mod:`controller.core.records`); ``controller.store.checkpoints`` encodes it for the
journal.
"""

from __future__ import annotations

import logging
from typing import Iterable

from .cards import Card, zone_names
from .config import GameConfig
from .deal import CARD, CODES, CONFIRM, KIND_RASPASOVKA, PRIKUP, Deal, Trick
from .deck import Deck
from .events import BUTTON, CLAIM, PLACED, VALUE_FIELD, TableEvent
from .phase_model import PhaseModel
from .phases import AUCTION, CLAIM_STATE, HELD, PLAY, SHOWN, phase_machine
from .records import (ENTRY_DEFAULTS, BetweenDeals, DealRecord, Records, completed_entry, deal_entry,
                      replayed_deal)
from .scoring import Pulka, settlement_object
from .series import next_deal
from .signals import (CONTRACT_MISTAKES, MAX_ALERTS, MESSAGES, NOT_IN_PLAY, ORDER_GUESSED,
                      OUT_OF_TURN, REVOKE, SAME_CARD, TABLE_NOT_CLEAR, UNKNOWN_TAG, Signal, alert_key,
                      new_signal)
from .tokens import control_line_for, phase_of

logging.getLogger("transitions").setLevel(logging.WARNING)

# what the rest of the controller takes from here: the tracker, its signals and its records
__all__ = ["DealTracker", "Signal", "TABLE_NOT_CLEAR", "BetweenDeals", "DealRecord", "Records", "ENTRY_DEFAULTS",
           "completed_entry", "deal_entry"]


class DealTracker(PhaseModel):
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
        # the hub link's guessed order (PROTOCOL.md): cards of this deal laid in a guessed order
        # that no `confirm` has accepted yet;
        # and cards that wait, in laying order (True: a guessed card before its seat's turn;
        # False: a card laid while a trick waited for `confirm`)
        self.guessed: set[tuple[str, Card]] = set()
        self.parked: dict[tuple[str, Card], bool] = {}
        self.events_seen = 0                            # table events fed: a mistake line's `line`
        self.finished_after: int | None = None          # the deal after which every pulya closed
        self._out: list[Signal] = []                    # signals written by the machine's effects
        self._t = 0.0
        self._opening: Deal | None = None               # the deal a first line would begin
        self._why: str | None = None                    # why the last guard refused its line
        self._taken_back: Deal | None = None            # the deal `undo` took apart
        self.machine = phase_machine(self)

    @property
    def phase(self) -> str:
        """The phase of the deal in progress as the table shows it: the machine's state (a held
        trick is in the play; ``idle`` between deals)."""
        return SHOWN[self.state]

    @property
    def held(self) -> Trick | None:
        """The trick that waits for `confirm` (the machine is ``held``), or None."""
        return self.deal.tricks[-1] if self.state == HELD else None

    # --- the series: who deals next, at what price -----------------------------------

    def next_deal_params(self) -> tuple[str, int]:
        """(dealer, progression step) of the next deal (:mod:`controller.core.series`)."""
        return next_deal(self.config, self.records[-1] if self.records else None)

    def _new_deal(self) -> Deal:
        dealer, step = self.next_deal_params()
        return Deal(len(self.records) + 1, dealer, self.rules.progression[step], step,
                    self.players, self.rules)

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
        key = alert_key(alert)
        alerts = self.alerts
        alerts[:] = [a for a in alerts if alert_key(a) != key]
        alerts.append(alert)
        while len(alerts) > MAX_ALERTS:
            # the oldest goes, but not the last prompt of a guessed order while cards are guessed:
            # their trick is counted only on `confirm`, and never waits for it unasked
            prompts = [i for i, a in enumerate(alerts) if a["type"] == ORDER_GUESSED]
            del alerts[1 if self.guessed and prompts == [0] else 0]

    def _signal_mistake(self, t: float, alert: dict, message: str | None = None) -> list[Signal]:
        """A mistake line.  With ``bidding = true``, in a deal with an auction, for a control
        line and for the kinds the contract game added, the line also says its deal, the
        table event's number in the session and a message (FORMATS-contracts.md); otherwise
        (``false``, and a raspasovka or a card between deals under ``"auto"``) the old kinds
        keep their exact old fields."""
        self._alert(alert)
        data = alert
        deal = self.deal
        if (self.bidding is True or alert["type"] in CONTRACT_MISTAKES or "line_event" in alert
                or (deal is not None and deal.bidding is not None)):
            data = {**alert, "deal": self.deal.number if self.deal is not None else None,
                    "line": self.events_seen, "mistake": alert["type"],
                    "message": message or MESSAGES.get(alert["type"], alert["type"])}
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
        line = control_line_for(token, event.zone, phase_of(self), event.t)
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
        only on `confirm` (`undo` takes it back instead).  A `confirm` pressed before that
        trick is whole accepts the order shown so far: the trick then counts when whole."""
        key = (zone, card)
        if key in self.present:
            return []
        deal = self.deal
        if deal is None and self.bidding is not True and not self._lying_besides(key):
            deal = self._new_deal()         # the deal this card would start: whose lead it is
        # a card of this deal is due (a held trick waits in the play)
        in_play = deal is not None and deal.expected is not None and card not in deal.played
        if in_play and (zone != deal.expected or self.state == HELD) \
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
        held = self.state == HELD
        if not held and deal is not None and zone == deal.expected and card not in deal.played:
            # the common card, due from this zone and new in the deal: none of the checks
            # below could refuse it (the zone due is never the prikup outside a raspasovka,
            # and holds no card of the open trick yet)
            return self._accept(t, zone, card, guessed)
        if held:
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
            phase = self.state
            if zone == PRIKUP and deal.kind_name != KIND_RASPASOVKA and phase != AUCTION:
                return []                   # the talon and the discard: never a play, no signal
            if phase != PLAY:
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
        signals = [new_signal(Signal, ("play", t, {"deal": deal.number, "zone": zone, "card": CODES[card]}))]
        if revoke is not None:
            signals += self._signal_mistake(t, {"type": REVOKE, "zone": zone, "card": str(card),
                                                "suit": revoke.suit})
        if trick is None:
            if self.parked:
                signals += self._take_parked(t)
            return signals
        self.last_trick = trick
        if self.guessed and self.guessed.intersection(trick.cards):
            self.hold_trick()               # counted on `confirm`
            return signals
        return signals + self._count(t)

    def _count(self, t: float) -> list[Signal]:
        """The last trick's line, and the next trick's lead or the deal's end (from ``held``:
        the trick waited for `confirm`)."""
        deal = self.deal
        trick = deal.tricks[-1]
        fields = {"deal": deal.number, "number": len(deal.tricks), "leader": trick.leader,
                  "cards": trick.shown, "winner": trick.winner}
        signals = [new_signal(Signal, ("trick", t, fields))]
        if not deal.finished:
            if self.state == HELD:
                self.release_trick()
        else:
            self.guessed.clear()
            self.finish_deal()
            signals += self._out
            self._out = []
        if self.parked:                 # after the last trick: cards laid meanwhile meet the next deal's rules
            signals += self._take_parked(t)
        return signals

    def _take_parked(self, t: float) -> list[Signal]:
        """The cards that wait, in laying order: a guessed one that came before its seat's turn
        is played when the turn comes; one laid while a trick waited for `confirm` is taken
        now, by the usual rules (played, or a signalled mistake)."""
        out: list[Signal] = []
        for key in list(self.parked):
            if self.state == HELD:
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

    # --- buttons ---------------------------------------------------------------------

    def _button(self, event: TableEvent) -> list[Signal]:
        t = event.t
        if event.button == "confirm":
            # the mistakes shown are acknowledged, and the order of the cards shown guessed is
            # accepted: a trick held for them counts now, an open one when it is whole (a card
            # found guessed after this asks again)
            self.alerts.clear()
            self.guessed.clear()
            signals = [Signal("confirm", t)]
            state = self.state
            if state == HELD:
                signals += self._count(t)
            elif state == CLAIM_STATE:
                # the confirm of a waiting claim is a line of its deal (undo makes it wait again)
                self.deal.call(CONFIRM, None, None)
                signals.append(self.claim_line("confirmed"))
                self.claim_confirmed()
                signals += self._out
                self._out = []
            return signals
        if event.button == "new_deal":
            if self.deal is None:
                return []
            self.parked.clear()
            self.guessed.clear()
            self.deal.abandoned = True
            signals = [Signal("abandon", t, {"deal": self.deal.number})]
            self.abandon()
            signals += self._out
            self._out = []
            return signals
        return self._undo(t)

    def _undo(self, t: float) -> list[Signal]:
        """`undo`: the machine's own transition takes the deal apart (:meth:`take_back`),
        then its lines but the last are fed to it again (a held trick's last card taken back
        reopens the trick; a deal whose only line is taken back is gone)."""
        self.undo()
        deal, self._taken_back = self._taken_back, None
        if deal is None:
            return []                   # nothing to take back
        kind, who, value = deal.lines[-1]
        self._refeed(deal)
        if kind == CARD:
            if (who, value) in self.present:
                self.ignored.add((who, value))
            return [Signal("undo", t, {"deal": deal.number, "zone": who, "card": str(value)})]
        data = {"deal": deal.number, "undone": kind}
        if who is not None:
            data["seat"] = who
        if kind == CONFIRM:         # the claim waits again
            return [Signal("undo", t, data), self.claim_line("waiting")]
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
