"""The model's side of the phase machine: its guards (conditions) and effects (callbacks).

:mod:`controller.core.phases` declares the machine as data; :class:`PhaseModel`, the
base of :class:`~controller.core.tracker.DealTracker`, holds what its names call:
the guards that judge a control line by the rules (RULES-contracts.md: the auction,
the declarer's game, the whisting, whist_mode, claims; the second edition's result
line), the conditions that choose a move by what the line decided, and the effects
that record the line and write the derived lines (FORMATS-contracts.md: ``auction``,
``whisting``, ``claim``, ``deal``) -- collected in ``_out`` while a trigger runs.

A line the machine does not allow in the current state, or a guard refuses, becomes an
``invalid_control`` mistake with the reason.  What is the table's and not the phase's --
bidding off, a clear table for a deal's first line, cards waiting to be taken -- is
checked before the machine is asked.
"""

from __future__ import annotations

from .bidding import CONTRACT as CONTRACT_RESULT, MISERE_DEAL, PLAY as PLAYED, Auction, contract_refusal
from .deal import CARD, KIND_RASPASOVKA, Deal
from .events import BID, CLAIM, MISERE, RESULT, VALUE_FIELD, TableEvent
from .phases import ALLOWED, IDLE, IN_PHASE, NO_WHISTING, REFUSED
from .records import DealRecord, deal_entry, replayed_deal
from .scoring import pulya_order
from .signals import INVALID_CONTROL, TABLE_NOT_CLEAR, Signal


class PhaseModel:
    """Guards, conditions and effects of the phase machine, and the control lines fed to it.

    The tracker that derives from it provides the table: ``deal``, ``records``,
    ``pulka``, ``present``, ``parked``, ``alerts``, ``_signal_mistake`` ...; the
    machine (``phase_machine(self)``) gives it ``state`` and the triggers."""

    # --- control lines: bid, contract, whist, whist_mode, result, claim -------------

    def _refuse(self, t: float, kind: str, seat: str | None, value, message: str) -> list[Signal]:
        alert = {"type": INVALID_CONTROL, "zone": seat, "line_event": kind,
                 VALUE_FIELD[kind]: dict(value) if kind == CLAIM else value}
        return self._signal_mistake(t, alert, message)

    def _control(self, event: TableEvent) -> list[Signal]:
        """A control line: refused when not allowed now, else fed to the machine."""
        t, kind, seat, value = event.t, event.event, event.seat, event.call
        if self.bidding is False:
            return self._refuse(t, kind, seat, value, "bidding is off (rules.bidding = false)")
        state = self.state
        first = kind == BID or kind == RESULT
        if first and state == IDLE:
            return self._first_line(event)
        deal = self.deal
        if not first and deal is not None:
            if deal.bidding is None:
                return self._refuse(t, kind, seat, value, f"a raspasovka has no {kind} line")
            if kind == CLAIM and deal.kind_name == KIND_RASPASOVKA:
                return self._refuse(t, kind, seat, value, "no claim in a raspasovka")
        if state not in ALLOWED[kind]:
            message = REFUSED[kind, state]
            if message is NO_WHISTING and deal.bidding.game == MISERE:
                message = "a misere is not whisted"
            return self._refuse(t, kind, seat, value, message)
        if kind == CLAIM and self.parked:
            return self._refuse(t, kind, seat, value, "a claim only between tricks (a trick is open)")
        guard = IN_PHASE.get((kind, state))
        if guard is not None:
            return self._call(kind, seat, value, guard)
        return self._line(kind, seat, value)

    def _call(self, kind: str, seat: str, value, guard: str) -> list[Signal]:
        """A call inside the auction or the whisting: judged by ``guard`` (their own check),
        recorded; the machine moves when it decides its phase."""
        if not getattr(self, guard)(kind, seat, value):
            return self._refuse(self._t, kind, seat, value, self._why)
        self.record(kind, seat, value)
        if kind == BID:
            if not self.auction_open():
                self.auction_ends()
        elif not self.whisting_open():
            self.whisting_ends()
        out, self._out = self._out, []
        return out

    def _first_line(self, event: TableEvent) -> list[Signal]:
        """A bid or result line with no deal in progress: it begins a deal with an auction
        once the table is clear (the first hand's bid; a result from any active seat)."""
        t, kind, seat, value = event.t, event.event, event.seat, event.call
        if self.present:
            alert = {"type": TABLE_NOT_CLEAR, "zone": seat, "line_event": kind, VALUE_FIELD[kind]: value}
            return self._signal_mistake(t, alert, "a bid before the table is clear" if kind == BID
                                        else "a result line before the table is clear")
        self._opening = self._new_deal()
        try:
            return self._line(kind, seat, value)
        finally:
            self._opening = None

    def _line(self, kind: str, seat: str | None, value) -> list[Signal]:
        """Fire the line's trigger; return the signals its effects wrote."""
        getattr(self, kind)(kind, seat, value)
        out, self._out = self._out, []
        return out

    def _refeed(self, deal: Deal) -> None:
        """The lines of ``deal`` but its last, fed to the machine again from ``idle``: the
        phase it reaches is theirs.  Their derived lines were written when they came and are
        not written again; a card moves the machine only as a raspasovka's first."""
        rest = Deal(deal.number, deal.dealer, deal.price, deal.step, self.players, self.rules)
        for kind, who, value in deal.lines[:-1]:
            if kind != CARD:
                self._opening = rest
                guard = IN_PHASE.get((kind, self.state))
                if guard is not None:
                    self._call(kind, who, value, guard)
                else:
                    self._line(kind, who, value)
                continue
            if self.state == IDLE:
                self.deal = rest
                self.start_deal()
            rest.play(who, value)
        self._opening, self._out = None, []
        self.last_trick = rest.tricks[-1] if rest.tricks else None

    # --- guards: the line is valid by the rules (the reason kept for the mistake) ----

    def _valid(self, why: str | None) -> bool:
        self._why = why
        return why is None

    def first_bid_valid(self, kind: str, seat: str, value) -> bool:
        fresh = self._opening
        auction = fresh.bidding.auction if fresh.bidding is not None else Auction(fresh.active)
        return self._valid(auction.refusal(seat, value))

    def result_valid(self, kind: str, seat: str, value) -> bool:
        return self._valid(None if seat in self._opening.active else f"{seat} sits out this deal (the dealer)")

    def bid_valid(self, kind: str, seat: str, value) -> bool:
        return self._valid(self.deal.bidding.auction.refusal(seat, value))

    def contract_valid(self, kind: str, seat: str, value) -> bool:
        """The declarer's game: after a game auction not below the winning bid, once; after a
        misère auction only misère, until the first card."""
        deal = self.deal
        b = deal.bidding
        if seat != b.declarer:
            return self._valid("the contract line is the declarer's" if b.declarer
                               else "no contract after an all-pass auction")
        if b.result_line:
            return self._valid("the contract is already declared (by the result line)")
        if b.auction.result == MISERE_DEAL:
            return self._valid("a misere auction: the game is misere, until the first card"
                               if value != MISERE or deal.plays else None)
        if b.game is not None:
            return self._valid("the contract is already declared")
        return self._valid(contract_refusal(b.winning_bid, value))

    def whist_valid(self, kind: str, seat: str, value) -> bool:
        return self._valid(self.deal.whist_refusal(seat, value))

    def mode_valid(self, kind: str, seat: str | None, value) -> bool:
        return self._valid(self.deal.mode_refusal())

    def claim_valid(self, kind: str, seat: str | None, value) -> bool:
        """A claim (RULES-contracts.md "Claims"): between tricks, one number for every active
        seat, summing to the tricks left."""
        deal = self.deal
        if deal.current:
            return self._valid("a claim only between tricks (a trick is open)")
        tricks = dict(value)
        out = [seat for seat in tricks if seat not in deal.active]
        if out:
            return self._valid(f"{out[0]} sits out this deal")
        missing = [seat for seat in deal.active if seat not in tricks]
        if missing:
            return self._valid(f"the claim has no number for {', '.join(missing)}")
        left = deal.total_tricks - len(deal.tricks)
        if sum(tricks.values()) != left:
            return self._valid(f"the claim sums to {sum(tricks.values())}, {left} tricks are left")
        return self._valid(None)

    def can_take_back(self) -> bool:
        """A line to take back: the deal's last, or the last of the deal just finished (until
        the next deal's first line; RULES-contracts.md: `undo` may reach back)."""
        if self.deal is not None:
            return True
        if not self.records or not self.records[-1].complete:
            return False                # nothing to take back (after new_deal: nothing)
        record = self.records[-1]
        return record.deal is not None or bool(record.lines)

    # --- conditions of the moves: what the recorded line decided ---------------------

    def auction_open(self, *_) -> bool:
        return self.deal.bidding.auction.result is None

    def auction_won(self, *_) -> bool:
        return self.deal.bidding.auction.result == CONTRACT_RESULT

    def whisting_open(self, *_) -> bool:
        """A whisting that waits for calls (after a contract, or a result line, that has one)."""
        whisting = self.deal.bidding.whisting
        return whisting is not None and whisting.result is None

    def misere_declared(self, *_) -> bool:
        return self.deal.bidding.game == MISERE

    def whisting_played(self, *_) -> bool:
        return self.deal.bidding.whisting.result == PLAYED

    # --- effects: the line recorded, the derived lines written -----------------------

    def refuse(self, kind: str, seat: str | None, value) -> None:
        self._out += self._refuse(self._t, kind, seat, value, self._why)

    def open_deal(self, kind: str, seat: str | None, value) -> None:
        """The deal's first line: the deal begins (``deal_start``), then the line."""
        deal = self.deal = self._opening
        self.last_trick = None
        self.leftover = set()
        self._out.append(Signal("deal_start", self._t, {"deal": deal.number, "dealer": deal.dealer,
                                                         "price": deal.price}))
        self.record(kind, seat, value)

    def record(self, kind: str, seat: str | None, value) -> None:
        if kind == CLAIM:
            self.deal.call(CLAIM, None, value)      # the table's claim, not a seat's
            return                      # its line says its state (claim_waiting)
        self.deal.call(kind, seat, value)
        data = {"deal": self.deal.number}
        if seat is not None:
            data["seat"] = seat
        data[VALUE_FIELD[kind]] = value
        self._out.append(Signal(kind, self._t, data))

    def claim_line(self, state: str) -> Signal:
        deal = self.deal
        return Signal("claim", self._t, {"deal": deal.number, "tricks": dict(deal.claim), "state": state})

    def claim_waiting(self, *_) -> None:
        self._out.append(self.claim_line("waiting"))

    def auction_decided(self, *_) -> None:
        deal = self.deal
        b = deal.bidding
        self._out.append(Signal("auction", self._t, {"deal": deal.number, "result": b.auction.result,
                                                      "declarer": b.declarer, "bid": b.winning_bid}))

    def whisting_decided(self, *_) -> None:
        deal = self.deal
        self._out.append(Signal("whisting", self._t, {"deal": deal.number, "whisters": deal.whisters,
                                                       "result": deal.bidding.whisting.result}))

    def ten_unwhisted(self, *_) -> None:
        self._out.append(Signal("whisting", self._t, {"deal": self.deal.number, "whisters": [],
                                                       "result": "ten_unwhisted"}))

    def end_deal(self, *_) -> None:
        """The deal ended (complete or abandoned): written on the pulka, kept as a record."""
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

    def take_back(self) -> None:
        """`undo`: the deal taken apart (the one just finished reopened, its writes taken off
        the pulka); :meth:`_refeed` then gives the machine its remaining lines."""
        deal = self.deal
        if deal is None:
            record = self.records.pop()
            if record.deal is None:
                record.deal = replayed_deal(record, self.players, self.rules, record.lines)
            if record.writes is not None:
                self.pulka.add(record.writes, sign=-1)
            if self.finished_after == record.number:
                self.finished_after = None
            deal = record.deal
            self.leftover = set()
        self.deal = None
        self._taken_back = deal
