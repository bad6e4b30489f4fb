"""The demo's simulated players at the emulated hub, and the time they play on.

:class:`TableTime` is the demo's time: how long the players pause between two moves and how
long they wait for the table, on the clock ``run_demo`` is given -- real seconds for
``preftable demo``, a :class:`~controller.core.clock.VirtualClock` for the tests, on which the
whole demo runs as fast as the host's code does, in the same order of moves and reports.
:func:`play_in_order` (with :class:`TableFollower`) lays the raspasovka players' cards at
their times; :class:`PacedPlayers` makes the whole-game players' moves, each once the table
took the last (RULES.md "The table's buttons", RULES-contracts.md; the hub's reports as
PROTOCOL.md says a hub makes them).
"""

from __future__ import annotations

import math
import threading
import time
from typing import Callable

from ..core.cards import parse_card
from ..core.clock import Clock, VirtualClock
from ..core.errors import LinkError
from ..core.events import PLACED, REMOVED
from .sim import PageLine

#: the demo's hub polls its readers this often (its ``poll_ms``); forgets a tag after ABSENT_MS
POLL_MS = 20
ABSENT_MS = 300
LOOK_S = 0.01                   # how often a wait on something nobody signals looks again (real time)


class TableTime:
    """The players' time, on ``clock``: :meth:`pause` between moves, :meth:`wait` for the table.

    On real time (``time.monotonic``) a pause is a sleep and a wait waits, as players at a
    table do.  On a :class:`~controller.core.clock.VirtualClock` the emulated hub's firmware
    runs on that clock too (:meth:`emulated_hub` builds it ``realtime=False``), and only the
    players' thread moves it, so the moves and the hub's reports keep their order on a loaded
    machine.  A pause then passes at once, the hub's polls within it run as the firmware would
    have run them.  A wait moves time at once while the hub has something to report (what lies
    on a reader is not what it reported yet: a SEEN after two polls, a GONE after ``absent_ms``);
    while only the host is what is waited for (the link, the table loop), time goes on no
    faster than real time, so the hub's HBs keep coming as often as the link needs them and
    every limit means no less than it does on real time.
    """

    def __init__(self, clock: Clock = time.monotonic):
        self.clock = clock
        self.virtual = isinstance(clock, VirtualClock)
        self.emulator = None
        self._start = clock()
        self._hub_ms = 0                    # virtual time: the hub's clock, moved with ``clock``
        self._moving = threading.Lock()

    def __call__(self) -> float:
        return self.clock()

    def emulated_hub(self, readers: int):
        """The demo's hub (firmware_bridge.emulator.HubEmulator) on this time."""
        from firmware_bridge.emulator import HubEmulator
        self.emulator = HubEmulator(readers=readers, absent_ms=ABSENT_MS, poll_ms=POLL_MS,
                                    realtime=not self.virtual, clock=self.clock)
        return self.emulator

    def _pass(self, seconds: float) -> None:
        """Virtual time only: move the clock on, and the hub's firmware with it."""
        with self._moving:
            self.clock.advance(seconds)
            target = round((self.clock() - self._start) * 1000)
            if target > self._hub_ms and self.emulator is not None:
                self.emulator.advance(target - self._hub_ms)
            self._hub_ms = max(self._hub_ms, target)

    def _hub_has_news(self) -> bool:
        """What lies on the readers is not what the hub has reported yet (it will, as time passes)."""
        emulator = self.emulator
        return emulator is not None and emulator.hub is not None and emulator.tags() != emulator.reported()

    def pause(self, seconds: float, stop: threading.Event | None = None) -> bool:
        """Let ``seconds`` pass; whether ``stop`` was set (then a real pause ends at once)."""
        if not self.virtual:
            if stop is not None:
                return stop.wait(seconds)
            time.sleep(seconds)
            return False
        if seconds > 0:
            self._pass(seconds)
        return stop is not None and stop.is_set()

    def wait(self, ready: Callable[[], bool], limit: float = math.inf,
             changed: threading.Condition | None = None) -> bool:
        """Until ``ready()`` (True), or ``limit`` seconds passed (False).  ``changed``: the
        condition notified when what ``ready`` reads changes (held while ``ready`` reads it);
        without one, ``ready`` is looked at every :data:`LOOK_S`."""
        if not self.virtual:
            if changed is not None:
                with changed:
                    return changed.wait_for(ready, timeout=None if limit == math.inf else limit)
            deadline = self.clock() + limit
            while not ready():
                if self.clock() >= deadline:
                    return False
                time.sleep(LOOK_S)
            return True
        step = POLL_MS / 1000
        deadline = self.clock() + limit
        while True:
            if changed is not None:
                with changed:
                    if ready():
                        return True
                    if not self._hub_has_news():
                        woken = changed.wait(step)       # the host's turn: a real moment
                        if ready():
                            return True
                        if woken:
                            continue
            else:
                if ready():
                    return True
                if not self._hub_has_news():
                    time.sleep(step)
                    if ready():
                        return True
            if self.clock() >= deadline:
                return False
            self._pass(step)

    def idle(self, over: threading.Event) -> None:
        """Virtual time only: let time go on (the last GONEs reported, the table settling)
        until ``over`` is set; on real time it goes on by itself."""
        if self.virtual:
            self.wait(over.is_set)


class TableFollower:
    """What the simulated players notice of the table, as people at it would: a card taken
    back by ``undo`` (from the page, a button) is laid again -- lifted and laid once more,
    the seat plays again (RULES.md "The table's buttons") -- and a card of theirs the table
    refused meanwhile as out of turn is lifted and laid again after it.

    An inline bus subscriber: it sees every event and signal as the table loop handles it;
    the players wait for each card they lay to be handled before the next move, so they know
    at once whether the table took it."""

    name = "demo followers"
    inline = True
    WAIT_S = 30.0               # a card the table never hears of: the emulated hub is stuck

    def __init__(self, deck=None, pace: TableTime | None = None):
        self.deck = deck
        self.pace = pace or TableTime()
        self._changed = threading.Condition()
        self._undone: list[tuple[str, str]] = []     # (zone, card) taken back, to lay again
        self._handled: dict[tuple[str, str], int] = {}   # (zone, uid) -> times the loop handled it laid
        self._refused: set[tuple[str, str]] = set()  # (zone, card) refused as out of turn, newest
        self.stopped = False

    # --- the bus side (the table loop's thread) ---------------------------------------------

    def receive(self, item) -> None:
        with self._changed:
            event = item.event
            if event is not None and event.event == PLACED:
                key = (event.zone, event.uid if event.uid is not None else emulator_uid(event.card))
                self._handled[key] = self._handled.get(key, 0) + 1
            for signal in item.signals:
                data = signal.data
                if signal.kind == "undo" and data.get("card") is not None:
                    self._undone.append((data["zone"], data["card"]))
                elif signal.kind == "mistake" and data.get("type") == "out_of_turn":
                    self._refused.add((data.get("zone"), data.get("card")))
            self._changed.notify_all()

    def tick(self, now: float) -> None:
        pass

    def close(self) -> None:
        with self._changed:
            self.stopped = True
            self._changed.notify_all()

    # --- the players' side -------------------------------------------------------------------

    def handled(self, zone: str, uid: str) -> int:
        with self._changed:
            return self._handled.get((zone, uid), 0)

    def wait_handled(self, zone: str, uid: str, before: int) -> None:
        """Until the table loop has handled the card laid (its count went past ``before``)."""
        if not self.pace.wait(lambda: self.stopped or self._handled.get((zone, uid), 0) > before,
                              self.WAIT_S, self._changed):
            raise LinkError(f"the table never heard of the card laid on {zone}")

    def undone(self) -> list[tuple[str, str]]:
        """The cards taken back since last asked (and forget them), as (zone, uid)."""
        with self._changed:
            undone, self._undone = self._undone, []
        return [(zone, self.uid(card)) for zone, card in undone]

    def refused(self, zone: str, uid: str) -> bool:
        """Whether the table refused this card as out of turn (asked once: forgotten after)."""
        key = (zone, str(self.card(uid)))
        with self._changed:
            if key in self._refused:
                self._refused.discard(key)
                return True
        return False

    def uid(self, card: str) -> str:
        """The tag of ``card`` (the deck's, else the emulator's made-up one for a card by name)."""
        if self.deck is not None:
            for uid, known in self.deck.cards.items():
                if str(known) == card:
                    return uid
        return emulator_uid(parse_card(card))

    def card(self, uid: str):
        if self.deck is not None and self.deck.card_for(uid) is not None:
            return self.deck.card_for(uid)
        from ..core.cards import DECK as CARDS
        return next((c for c in CARDS if emulator_uid(c) == uid), None)


def play_in_order(emulator, events, zones, speed: float, stop: threading.Event,
                  follower: TableFollower | None = None, pace: TableTime | None = None) -> None:
    """Lay the simulated players' moves on the emulated hub's readers at their times (divided by
    ``speed``, on ``pace``: real time unless told).

    Each card laid waits until the hub has reported everything before it: the
    cards laid (SEEN) and the cards taken away from other readers (GONE); each
    card taken away waits for the SEEN of every card laid.  So the
    host sees the moves in the players' order however loaded the machine is
    (two threads' wall-clock gaps alone would not promise it); a flicker on one
    reader (away for less than ``absent_ms``) stays the flicker the hub hides.
    """
    by_zone = {zone: i for i, zone in enumerate(zones)}
    pace = pace or TableTime()
    laid: dict[int, str] = {}                # reader -> the uid that must be reported there
    start = pace()

    def caught_up(reader: int, uid: str, gone_too: bool) -> bool:
        reported = emulator.reported()
        for r, shown in enumerate(reported):
            want = laid.get(r)
            if want is not None and shown != want:
                return False
            if gone_too and want is None and shown is not None and not (r == reader and shown == uid):
                return False
        return True

    def move(kind: str, reader: int, uid: str) -> bool:
        # a card is laid once every earlier move has been reported; a card is taken away once
        # every card laid has been (else a tag lying for less than two polls would never be seen)
        pace.wait(lambda: stop.is_set() or caught_up(reader, uid, gone_too=kind == PLACED))
        if stop.is_set():
            return False
        # a card laid again while the hub still reports it (a flicker) is never reported anew
        fresh[0] = kind == PLACED and emulator.reported()[reader] != uid
        if kind == PLACED:
            emulator.place(reader, uid)
            laid[reader] = uid
        else:
            emulator.remove(reader, uid)
            laid.pop(reader, None)
        return True

    fresh = [False]             # the last card laid is new to the hub (it will report it)

    def lay(zone: str, uid: str) -> bool:
        """Lay a card and wait until the table has handled it (so its answer is known)."""
        before = follower.handled(zone, uid)
        if not move(PLACED, by_zone[zone], uid):
            return False
        if fresh[0]:
            follower.wait_handled(zone, uid, before)
        return True

    def lift(reader: int, uid: str) -> bool:
        """Take a card away for as long as the hub needs to report it gone (a card lifted to be
        laid again: the table must see it go, or it stays the card it ignores).  Laid back at
        once it would be a flicker the hub hides (``absent_ms``), as a probe's card is."""
        if not move(REMOVED, reader, uid):
            return False
        pace.wait(lambda: stop.is_set() or emulator.reported()[reader] != uid)
        return not stop.is_set()

    def follow() -> bool:
        """Lay again what the table took back (lift it, lay it: the hub must see it go)."""
        for zone, uid in follower.undone():
            reader = by_zone[zone]
            lying = laid.get(reader) == uid
            if lying and not lift(reader, uid):
                return False
            if not lay(zone, uid):
                return False
            if not lying and not move(REMOVED, reader, uid):
                return False        # it had been gathered already: laid again, then gathered again
        return True

    moves = [e for e in events if e.event in (PLACED, REMOVED) and e.zone in by_zone]
    for index, event in enumerate(moves):
        reader = by_zone[event.zone]
        uid = event.uid if event.uid is not None else emulator_uid(event.card)
        delay = start + event.t / speed - pace()
        if delay > 0 and pace.pause(delay, stop):
            return
        if follower is None:
            if not move(event.event, reader, uid):
                return
            continue
        if not follow():
            return
        if event.event == REMOVED:
            if not move(REMOVED, reader, uid):
                return
            continue
        if not lay(event.zone, uid):
            return
        following = moves[index + 1] if index + 1 < len(moves) else None
        probe = following is not None and following.event == REMOVED and following.zone == event.zone
        if not probe and follower.refused(event.zone, uid):
            # a play laid just after an undo from elsewhere: lift it, lay the card taken back,
            # then this one again (the table ignores a refused card until it is taken back)
            if not (lift(reader, uid) and follow() and lay(event.zone, uid)):
                return
    if follower is not None:
        follow()


def emulator_uid(card) -> str:
    """The uid the emulator gives a card laid by name (HubEmulator.play's made-up uids)."""
    from ..core.cards import DECK as CARDS
    return "C0DE%04X" % CARDS.index(card)



class PacedPlayers:
    """The ``--bidding`` players' hands on the emulated hub: each move is made on the hub's
    readers, and the next waits until the table loop has handled what the readers reported.

    A bid is a token laid and lifted in a moment, and a missed or late tag changes the whole
    deal, so these players do not play to the clock alone: a tag laid waits for its table
    event, a tag laid again waits until its lifting was reported (else the hub would take it
    for flicker), and a deal's first token waits until the last deal's cards are off the
    table.  An inline bus subscriber (on the table loop's thread) sees every event handled.
    """

    name = "demo players"
    inline = True
    MOVE_WAIT_S = 30.0          # a tag the hub never reports: the emulated hub is stuck

    def __init__(self, emulator, zones: list[str], deck, speed: float, enter=None,
                 pace: TableTime | None = None):
        self.emulator = emulator
        self.pace = pace or TableTime()
        self.enter = enter                              # a line entered on the page (PageLine) -> the table
        self.controls = 0                               # control lines the loop has handled
        self.reader = {zone: i for i, zone in enumerate(zones)}
        self.deck = deck
        self.speed = speed
        self.changed = threading.Condition()
        self.reported: set[tuple[str, str]] = set()    # (zone, uid) the table loop holds as lying
        self.idle = True                                # no deal in progress, as the loop last saw
        self.stopped = False

    # --- the bus side (the table loop's thread) ------------------------------------------

    def receive(self, item) -> None:
        event = item.event
        with self.changed:
            if event is not None and event.uid is None and event.card is None:
                self.controls += 1
            if event is not None and event.uid is not None:
                key = (event.zone, event.uid)
                if event.event == "placed":
                    self.reported.add(key)
                else:
                    self.reported.discard(key)
            self.idle = item.snapshot.deal is None
            self.changed.notify_all()

    def tick(self, now: float) -> None:
        pass

    def close(self) -> None:
        with self.changed:
            self.stopped = True
            self.changed.notify_all()

    # --- the players' side -----------------------------------------------------------------

    def _wait(self, ready, what: str) -> None:
        if not self.pace.wait(lambda: self.stopped or ready(), self.MOVE_WAIT_S, self.changed):
            raise LinkError(f"the emulated hub did not report {what}")

    def _cards_lying(self) -> bool:
        return any(self.deck.card_for(uid) is not None for _, uid in self.reported)

    def play(self, events) -> None:
        """Make every move of ``events`` in order, paced by their times (over ``speed``)."""
        last_t = None
        for event in events:
            if last_t is not None:
                self.pace.pause(max(0.0, event.t - last_t) / self.speed)
            last_t = event.t
            if self.stopped:
                return
            if isinstance(event, PageLine):             # entered on the phone, as the page posts it
                if event.event == "result":             # a deal's first line: on a clear table
                    self._wait(lambda: not self.idle or not self._cards_lying(), "the last deal's cards lifted")
                with self.changed:
                    before = self.controls
                self.enter(event.line)
                self._wait(lambda: self.controls > before, f"the table taking {event.line}")
                continue
            reader, key = self.reader[event.zone], (event.zone, event.uid)
            if event.event == "removed":
                self.emulator.remove(reader, event.uid)
                continue
            if self.emulator.tags()[reader] == event.uid:
                continue                                # read again while it lies: nothing new
            if self.idle or self.deck.token_for(event.uid) is not None:
                # a deal's first card or token waits for a clear table (RULES-contracts.md, second
                # edition: every card lying anywhere counts), as players let the last one be lifted
                self._wait(lambda: not self.idle or not self._cards_lying(), "the last deal's cards lifted")
            self._wait(lambda: key not in self.reported, f"{event.uid} lifted on {event.zone}")
            self.emulator.place(reader, event.uid)
            self._wait(lambda: key in self.reported or self.emulator.tags()[reader] != event.uid,
                       f"{event.uid} laid on {event.zone}")


__all__ = ["TableTime", "TableFollower", "PacedPlayers", "play_in_order", "emulator_uid", "POLL_MS"]
