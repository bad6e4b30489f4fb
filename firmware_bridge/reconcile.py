"""The host's picture of the hub's readers, kept true across lost frames (PROTOCOL.md
"Keeping the host's view true").

Pure, like Klipper's ``msgproto`` beside its serial I/O: :class:`Reconciler` takes the
hub's decoded ``SEEN``/``GONE``/``STATE`` frames and what the link noticed (a gap in
the sequence numbers, a reconnect, a reboot, the hub's uptime) and gives back the
:class:`~controller.core.events.TableEvent` objects a reader would have sent, stamped
by the ``clock`` it is given (read only when an event is made; never decreasing).  No
thread, no port, no timer: :class:`~firmware_bridge.link.HubLink` is the I/O around it.

Missed changes: when a STATE reveals two or more differences from the picture, they
are applied in the order of the readers' ``edge_ms`` (ties: reader order, the order
the hub polls and reports in; a reader with no edge since boot changed before all
that have one).  When that order cannot be known -- a hub that sends no ``edge_ms``,
two readers unchanged since boot, a difference on a reader whose later edges were
held -- an :class:`OrderGuessed` comes just before the events of those zones (in the
order they come); they are applied lifts first (a lift decides no trick), then the
tags laid by their ``edge_ms`` if each has one, else in reader order.  A tag replaced
by another is lifted before the other changes too: the STATE dates only its
successor's SEEN.  Frames held before a gap (since a connect or a reboot) come before
what the gap lost; a tag lifted and laid back unheard (a STATE with the same uid and a
newer ``edge_ms``) is lifted and laid back, at its edge's time.

Nothing is invented and nothing vanishes unsaid:

- a STATE with fewer tokens than the hub announced readers is a protocol error
  (:class:`ShortState`): nothing in the picture changes, the link drops it and asks
  for another (a frame outside PROTOCOL.md's bounds is dropped and counted);
- a card laid and lifted while both its frames were lost leaves the reader empty but
  dated by a newer ``edge_ms`` (PROTOCOL.md: ``-@81234`` is the GONE that left it
  empty) than the STATE the picture is from: its card cannot be known, so no table
  event is made, but a :class:`SeenInGap` says that a card lay there unheard.  (A
  reader whose picture is not dated -- an edge heard since the last STATE -- cannot
  tell such a card from the edge it heard: a later STATE dates it.)
"""

from __future__ import annotations

import logging
from collections import Counter
from dataclasses import dataclass
from typing import Callable, Sequence

from controller.core.errors import ProtocolError
from controller.core.events import TableEvent, placed, removed

from .codec import Frame

log = logging.getLogger(__name__)

UINT32 = 2**32
# when a missed difference happened, for ordering (PROTOCOL.md edge_ms)
BEFORE_BOOT = "before boot"       # the reader has had no edge since the hub booted
UNKNOWN = "unknown"               # no edge_ms, or its edge_ms is a later (held) edge
RECONCILE_COUNTERS = ("state_fixes", "orders_guessed", "seen_in_gap", "short_states")


@dataclass(frozen=True, slots=True)
class OrderGuessed:
    """Before the events whose relative order no edge_ms told."""

    zones: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class SeenInGap:
    """A card lay on ``zone`` and was lifted again while both its frames were lost."""

    zone: str
    edge_ms: int


Output = TableEvent | OrderGuessed | SeenInGap


class ShortState(ProtocolError):
    """A STATE with fewer tokens than the hub has readers: which reader a token is
    cannot be known, so it changes nothing."""


class Reconciler:
    """The picture of every reader and the frames held until a STATE explains a gap.

    ``zones[i]`` is the table zone of reader ``i`` (``None``: ignored, its changes make
    no event).  ``picture`` (a uid or ``None`` per reader) is what the host believes
    lies there before the first STATE, e.g. a resumed game's cards.  ``clock()`` stamps
    each event.  Feed it with :meth:`edge`, :meth:`state`, :meth:`gap`,
    :meth:`connected`, :meth:`announced` and :attr:`uptime`; collect with :meth:`take`.
    """

    def __init__(self, zones: Sequence[str | None], clock: Callable[[], float],
                 picture: Sequence[str | None] = ()):
        self.zones = tuple(zones)
        self._clock = clock
        self.picture: list[str | None] = (list(picture) + [None] * len(self.zones))[
            :max(len(self.zones), len(picture))]
        self.readers: int | None = None     # as the hub's HELLO announced
        self.uptime: int | None = None      # the hub's latest uptime_ms heard (edge_ms wrap reference)
        self.holding = True                 # edges wait for a STATE (after a connect, reboot or gap)
        self.counters: Counter[str] = Counter()
        self._held: list[Frame] = []
        self._gaps_at: list[int] = []        # where in _held frames were lost (the frame after the loss)
        self._edge_at: dict[int, int] = {}   # reader -> the edge_ms its picture is from (the last STATE's)
        self._outbox: list[Output] = []
        self._last_t = float("-inf")

    # ------------------------------------------------------------------ what the link saw

    def take(self) -> list[Output]:
        """The events (and order/gap notices) made since the last call, in order."""
        out, self._outbox = self._outbox, []
        return out

    def announced(self, readers: int, rebooted: bool) -> None:
        """A HELLO: ``readers`` readers; a ``rebooted`` hub's uptime (and edge_ms) began
        again, and its edges wait for its STATE."""
        self.readers = readers
        self.uptime = None
        if len(self.picture) < readers:
            self.picture += [None] * (readers - len(self.picture))
        if rebooted:
            self._edge_at.clear()
            self.holding = True

    def connected(self) -> None:
        """A (re)connect: edges wait for a STATE; what came while the link was down is lost."""
        self.holding = True
        if self._held:
            self._gaps_at.append(len(self._held))

    def gap(self) -> None:
        """Frames were lost just before the next one: hold edges until a STATE."""
        self.holding = True
        self._gaps_at.append(len(self._held))

    def drop_held(self) -> None:
        """Forget the held frames (a hub this host cannot talk to)."""
        self._held.clear()
        self._gaps_at.clear()

    def edge(self, frame: Frame) -> None:
        """A SEEN or GONE: applied now, or held while a gap waits for its STATE."""
        if self.holding:
            self._held.append(frame)
        else:
            self._apply_edge(frame)

    def state(self, frame: Frame) -> None:
        """A STATE: apply what the held frames and the gaps before it leave unexplained.
        Raise :class:`ShortState` (nothing changed) if it has fewer tokens than readers."""
        fields = frame.fields
        if self.readers is not None and len(fields) < self.readers:
            self.counters["short_states"] += 1
            raise ShortState(f"STATE with {len(fields)} tokens from a hub with {self.readers} readers")
        state = [None if f == "-" else f for f in fields]
        if frame.edge_ms:
            when: list = [BEFORE_BOOT if e is None else e for e in frame.edge_ms]
        else:
            when = [UNKNOWN] * len(state)
        if len(state) < len(self.picture):   # zones (or a resumed picture) beyond the hub's readers
            state += [None] * (len(self.picture) - len(state))
            when += [UNKNOWN] * (len(self.picture) - len(when))
        elif len(state) > len(self.picture):
            self.picture += [None] * (len(state) - len(self.picture))
        if self.holding:
            self._replay_held(state, when)
        else:
            self._apply_state(state, when)
        # the picture is now this STATE's: a later STATE with the same tag (or empty) but
        # another edge_ms means edges happened there unheard
        self._edge_at = {reader: at for reader, at in enumerate(when) if isinstance(at, int)}

    # ------------------------------------------------------------------ the reconciling

    def _replay_held(self, state: list[str | None], when: list) -> None:
        """PROTOCOL.md: what a gap lost happened before the frame that revealed the gap, so
        it is applied there, then the held frames from that one on.

        Frames held before the first gap (the holding began at a connect or a reboot) were
        not lost and come first.  A reader whose first held frame does not follow from the
        picture lost an edge before that frame (in the last gap before it, else before the
        holding began).  A reader whose STATE differs from what its own held frames leave
        it at lost its last edge after its last held frame; with edge_ms, those lost edges
        go in their time order, each at the earliest gap after its reader's held frames
        and after every held frame the STATE dates earlier (a reader's last held edge is
        the one the STATE's edge_ms is of, when nothing was lost after it)."""
        held, gaps = self._held, sorted(set(self._gaps_at))
        log.debug("STATE %s %s after held %s (gaps at %s), picture %s", state, when,
                  [f"{f.verb} {f.fields[0]} {f.fields[1]}" for f in held], gaps, self.picture)
        missed: dict[int, list[tuple[int, str | None, object]]] = {}   # held index -> lost there
        lost: list[tuple[int, str | None, object, int]] = []            # last edges: ..., earliest gap
        dated: dict[int, object] = {}                                   # held index -> its edge_ms
        unseen: list[int] = []
        for reader in range(len(self.picture)):
            frames = [(i, f) for i, f in enumerate(held) if int(f.fields[0]) == reader]
            if frames:
                i, frame = frames[0]
                if frame.verb == "GONE":            # the reader as it was just before that frame
                    before = frame.fields[1]
                else:                               # SEEN: empty -- unless it is a tag the host
                    uid = frame.fields[1]           # already shows, re-announced (a hub after a
                    before = uid if self.picture[reader] == uid else None    # boot): invent nothing
                if self.picture[reader] != before:
                    # its edge_ms is a held edge's, not this one's: its time is unknown
                    missed.setdefault(max((g for g in gaps if g <= i), default=0), []).append(
                        (reader, before, UNKNOWN))
                end = before
                for _, f in frames:                  # as _apply_edge leaves it
                    end = f.fields[1] if f.verb == "SEEN" else (None if end == f.fields[1] else end)
                last, unexplained = frames[-1][0], len(held)
            else:
                end, last, unexplained = self.picture[reader], -1, 0
            earliest = min((g for g in gaps if g > last), default=unexplained)
            if end != state[reader]:
                lost.append((reader, state[reader], when[reader], earliest))
            elif frames:
                dated[last] = when[reader]
            elif self._relaid(reader, when[reader]):
                if end is not None:
                    lost += [(reader, None, when[reader], earliest), (reader, end, when[reader], earliest)]
                else:
                    unseen.append(reader)
        self.counters["state_fixes"] += len(lost)
        if all(isinstance(item[2], int) for item in lost):
            lost.sort(key=lambda item: self._order_key(item[:3]))
            floor = 0
            for reader, uid, at, earliest in lost:
                after = [i + 1 for i, t in dated.items() if isinstance(t, int)
                         and self._order_key((0, None, t)) < self._order_key((0, None, at))]
                lo = max([earliest, floor] + after)
                floor = min((g for g in gaps if g >= lo), default=max(lo, earliest))
                missed.setdefault(floor, []).append((reader, uid, at))
        else:                                       # no edge_ms: each where its reader allows
            for reader, uid, at, earliest in lost:
                missed.setdefault(earliest, []).append((reader, uid, at))
        for i in range(len(held) + 1):
            self._apply_missed(missed.get(i, []))
            if i < len(held):
                self._apply_edge(held[i])
        self.drop_held()
        self.holding = False
        self._seen_in_gap(unseen, when)
        self._apply_state(state, when)              # anything still off

    def _apply_state(self, state: list[str | None], when: list) -> None:
        missed = []
        unseen = []
        for reader, uid in enumerate(state):
            if self.picture[reader] != uid:
                missed.append((reader, uid, when[reader]))
            elif self._relaid(reader, when[reader]):
                if uid is not None:
                    missed += [(reader, None, when[reader]), (reader, uid, when[reader])]
                else:
                    unseen.append(reader)
        self.counters["state_fixes"] += len(missed)
        self._apply_missed(missed)
        self._seen_in_gap(unseen, when)

    def _seen_in_gap(self, readers: list[int], when: list) -> None:
        for reader in readers:
            self._edge_at[reader] = when[reader]    # said once, not again at the next STATE
            zone = self._zone(reader)
            if zone is None:
                continue
            self.counters["seen_in_gap"] += 1
            log.warning("table hub: a card was laid on %s and lifted again while the hub's frames "
                        "saying so were lost (at hub time %d ms); which card it was is unknown",
                        zone, when[reader])
            self._outbox.append(SeenInGap(zone, when[reader]))

    def _relaid(self, reader: int, at: object) -> bool:
        """Edges happened on ``reader`` while the frames saying so were lost: the STATE
        shows what the picture shows, with a newer edge_ms than the STATE the picture is
        from (and no edge heard since)."""
        known = self._edge_at.get(reader)
        return isinstance(at, int) and known is not None and at != known

    def _apply_missed(self, missed: list[tuple[int, str | None, object]]) -> None:
        """Apply missed differences ``(reader, uid, when)`` in the order they happened
        if the STATE's edge_ms tell it, else with the guess signalled: the lifts first
        (a lift decides no trick, and a deal's last cards are lifted before the next
        deal's first is laid), then the laid tags by their edge_ms if each has one, else
        in reader order."""
        zoned = [m for m in missed if self._zone(m[0]) is not None]
        if len(zoned) >= 2:
            unknown = sum(1 for m in zoned if m[2] == UNKNOWN)
            before_boot = sum(1 for m in zoned if m[2] == BEFORE_BOOT)
            if unknown or before_boot >= 2:
                lifts = [m for m in missed if m[1] is None]
                lays = [m for m in missed if m[1] is not None]
                if all(isinstance(m[2], int) for m in lays):
                    lays.sort(key=self._order_key)
                else:
                    lays.sort(key=lambda m: m[0])
                missed = lifts + lays
                zones = tuple(z for z in (self._zone(m[0]) for m in missed) if z is not None)
                self.counters["orders_guessed"] += 1
                log.info("table hub: the order of missed changes on %s is unknown; applied lifts "
                         "first", ", ".join(zones))
                self._outbox.append(OrderGuessed(zones))
            else:
                missed = sorted(missed, key=self._order_key)
        # a tag replaced by another: the STATE dates only the new one's SEEN; the old one's
        # GONE came at some time before it, maybe before every other change here
        for reader, uid, _ in missed:
            if uid is not None and self.picture[reader] not in (None, uid):
                self._set(reader, None)
        for reader, uid, at in missed:
            self._set(reader, uid)
            if isinstance(at, int):
                self._edge_at[reader] = at          # the picture is from that edge now
            else:
                self._edge_at.pop(reader, None)

    def _order_key(self, item: tuple[int, str | None, object]) -> tuple[int, int, int]:
        reader, _, at = item
        if not isinstance(at, int):                 # before boot: before every edge since
            return (0, 0, reader)
        # edge_ms wraps at 2**32 (49.7 days): compare it relative to the latest uptime heard
        ref = self.uptime if self.uptime is not None else 0
        return (1, (at - ref + UINT32 // 2) % UINT32, reader)

    def _apply_edge(self, frame: Frame) -> None:
        reader, uid = int(frame.fields[0]), frame.fields[1]
        self._edge_at.pop(reader, None)             # a newer edge than the last STATE's
        if reader >= len(self.picture):
            log.warning("table hub reports reader %d, it announced %d readers", reader, len(self.picture))
            return
        if frame.verb == "SEEN":
            self._set(reader, uid)
        elif self.picture[reader] == uid:
            self._set(reader, None)
        else:
            log.debug("GONE %s on reader %d, which shows %s", uid, reader, self.picture[reader])

    def _zone(self, reader: int) -> str | None:
        return self.zones[reader] if reader < len(self.zones) else None

    def _set(self, reader: int, uid: str | None) -> None:
        old = self.picture[reader]
        if old == uid:
            return
        self.picture[reader] = uid
        zone = self._zone(reader)
        if zone is None:
            return
        if old is not None:
            self._outbox.append(removed(self._stamp(), zone, uid=old))
        if uid is not None:
            self._outbox.append(placed(self._stamp(), zone, uid=uid))

    def _stamp(self) -> float:
        t = self._clock()
        if t < self._last_t:
            t = self._last_t
        self._last_t = t
        return t


__all__ = ["Reconciler", "OrderGuessed", "SeenInGap", "ShortState", "BEFORE_BOOT", "UNKNOWN"]
