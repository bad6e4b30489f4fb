"""Presence scanning: poll every reader in turn and turn raw reads into table events.

:class:`PresenceTracker` is the pure state machine (no SPI, no clock): it takes
``(reader_index, uid_or_None, now)`` observations and returns the
``placed``/``removed`` :class:`~controller.core.events.TableEvent` objects of
FORMATS.md:

- *placed* once a reader has read the same UID in two consecutive polls
  (``confirm``), the UID is not placed anywhere else, and no other reader has
  seen it within ``absent_ms`` -- a UID seen by two readers (neighbouring
  antennas cross-talk) is held back until it settles on one;
- *removed* once a placed UID has gone unseen by its reader for ``absent_ms``.

A reader may hold several cards (a card laid on one already there): an
observation is then every UID the reader's full scan found
(:meth:`hw.rc522.Reader.read_uids`), each debounced on its own.

:class:`Scanner` drives :class:`hw.rc522.Reader` objects with it, their polls side by
side: a reader's poll is a sequence of steps (:meth:`hw.rc522.Reader.read_steps`) that
says, whenever it waits for its chip, until when; while one chip has a frame on the air
(a SELECT takes over a millisecond at 106 kbit/s) the others' SPI work is done, and a
chip is asked again only once its answer is due.  A reader
that stops answering (VersionReg 0x00/0xFF, or registers that do not stick) is reported through logging
and ``on_fault(zone, False)``, hard-reset, and retried with back-off while the
others keep scanning; its placed cards are frozen meanwhile, and
``on_fault(zone, True)`` says when it is back.
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass
from typing import Callable, Protocol, Sequence

from controller.core.errors import ConfigError, HardwareError
from controller.core.events import TableEvent, normalise_uid, placed, removed

log = logging.getLogger(__name__)

DEFAULT_ABSENT_MS = 300
IDLE_WAIT_S = 0.01
FaultSink = Callable[[str, bool], None]


class PresenceTracker:
    """Debounce, cross-talk and absence logic over raw reads of ``zones`` (one per reader)."""

    def __init__(self, zones: Sequence[str], absent_ms: float = DEFAULT_ABSENT_MS, confirm: int = 2):
        if len(set(zones)) != len(zones):
            raise ConfigError(f"a zone is given to two readers: {', '.join(zones)}", key="zone")
        if absent_ms <= 0:
            raise ConfigError(f"absent_ms must be > 0, got {absent_ms}", key="absent_ms")
        if confirm < 1:
            raise ConfigError(f"confirm must be >= 1, got {confirm}", key="confirm")
        self.zones = tuple(zones)
        self.absent_s = absent_ms / 1000.0
        self.confirm = confirm
        self._streak: list[dict[str, int]] = [{} for _ in self.zones]   # uid -> consecutive polls
        self._seen: dict[str, dict[int, float]] = {}      # uid -> reader -> last time read
        self._where: dict[str, int] = {}                  # placed uid -> reader
        self._held: set[str] = set()                      # uids held back (logged once)

    def lying(self) -> list[str]:
        """The zones a tag lies on now; safe to call from another thread (a copy is read)."""
        where = dict(self._where)
        return sorted({self.zones[index] for index in where.values()})

    def present(self) -> dict[str, set[str]]:
        """The placed UIDs of each zone."""
        out: dict[str, set[str]] = {zone: set() for zone in self.zones}
        for uid, index in self._where.items():
            out[self.zones[index]].add(uid)
        return out

    def observe(self, index: int, uid: "str | Sequence[str] | None", now: float) -> list[TableEvent]:
        """Reader ``index`` read ``uid`` (None: nothing; a list: every card stacked on it) at ``now``
        seconds; the events it causes."""
        if uid is None:
            uids: list[str] = []
        elif isinstance(uid, str):
            uids = [normalise_uid(uid)]
        else:
            uids = list(dict.fromkeys(normalise_uid(u) for u in uid))
        events: list[TableEvent] = []
        last = self._streak[index]
        self._streak[index] = {u: last.get(u, 0) + 1 for u in uids}
        for u in uids:
            self._seen.setdefault(u, {})[index] = now
        for gone in [u for u, i in self._where.items() if i == index and u not in uids]:
            if now - self._seen.get(gone, {}).get(index, now) >= self.absent_s:
                del self._where[gone]
                events.append(removed(now, self.zones[index], uid=gone))
        self._forget_old(now)
        for u in uids:
            if u in self._where or self._streak[index][u] < self.confirm:
                continue
            others = [j for j, t in self._seen[u].items() if j != index and now - t < self.absent_s]
            if others:
                if u not in self._held:
                    self._held.add(u)
                    log.info("tag %s seen by %s and %s: held back until it settles on one", u,
                             self.zones[index], ", ".join(self.zones[j] for j in others))
            else:
                self._held.discard(u)
                self._where[u] = index
                events.append(placed(now, self.zones[index], uid=u))
        return events

    def resume(self, index: int, now: float) -> None:
        """Reader ``index`` is back after a fault: its placed cards count as seen ``now``."""
        self._streak[index] = {}
        for uid, i in self._where.items():
            if i == index:
                self._seen.setdefault(uid, {})[index] = now

    def _forget_old(self, now: float) -> None:
        for uid in list(self._seen):
            sightings = self._seen[uid]
            for j in [j for j, t in sightings.items() if now - t >= self.absent_s
                      and self._where.get(uid) != j]:
                del sightings[j]
            if not sightings:
                del self._seen[uid]
                self._held.discard(uid)


class UidReader(Protocol):
    """What the scanner needs of a reader (:class:`hw.rc522.Reader` has it).  A reader that also
    has ``read_steps()`` (its poll as steps, yielding "wait until" times on ``backend.now()``) and
    ``interfered`` is polled side by side with the others; one without, in turn."""

    name: str

    def read_uid(self) -> str | None: ...
    def alive(self) -> bool: ...
    def reset(self) -> None: ...


@dataclass
class _Health:
    ok: bool = True
    next_try: float = 0.0
    backoff: float = 0.0


class Scanner:
    """Polls ``readers`` (``(zone, reader)`` pairs) in turn; ``clock()`` is session seconds (event ``t``).

    Faults: ``on_fault(zone, False)`` when a reader stops answering, ``(zone, True)`` when it
    is back; a dead reader is reset and retried after ``retry_s``, doubling up to ``max_retry_s``.
    """

    def __init__(self, readers: Sequence[tuple[str, UidReader]], absent_ms: float = DEFAULT_ABSENT_MS,
                 clock: Callable[[], float] = time.monotonic, *, on_fault: FaultSink | None = None,
                 confirm: int = 2, retry_s: float = 0.1, max_retry_s: float = 5.0):
        self.readers = list(readers)
        self.tracker = PresenceTracker([zone for zone, _ in self.readers], absent_ms, confirm)
        self.clock = clock
        self.on_fault = on_fault
        self.retry_s, self.max_retry_s = retry_s, max_retry_s
        self._health = [_Health() for _ in self.readers]
        self.scans = 0
        self.polled_last = 0                                 # readers polled by the last scan

    @property
    def zones(self) -> tuple[str, ...]:
        return self.tracker.zones

    def faulty(self) -> list[str]:
        """Zones whose reader is out of order now."""
        return [zone for (zone, _), h in zip(self.readers, self._health) if not h.ok]

    def scan_once(self, stop: threading.Event | None = None) -> list[TableEvent]:
        """Poll each working reader once (and retry due dead ones); the events, in time order.
        ``stop``: checked before each reader's poll starts, so a shutdown does not wait for a
        whole scan (a poll once started is finished: it leaves its chip and tags in order)."""
        results: dict[int, object] = {}
        steps: dict[int, list] = {}                       # index -> [the poll's steps, due at]
        steps_started: list[int] = []
        for index, (zone, reader) in enumerate(self.readers):
            if stop is not None and stop.is_set():
                break
            health = self._health[index]
            if not health.ok and not self._retry(index):
                continue
            read_steps = getattr(reader, "read_steps", None)
            if read_steps is not None:
                steps[index] = [read_steps(), float("-inf")]
                steps_started.append(index)
                continue
            try:
                read_uids = getattr(reader, "read_uids", None)
                results[index] = read_uids() if read_uids is not None else reader.read_uid()
            except HardwareError as exc:
                results[index] = exc
        self._run_side_by_side(steps, results)
        self._again_alone(steps_of=set(steps_started), results=results)
        events: list[TableEvent] = []
        polled = 0
        for index in sorted(results):
            zone, reader = self.readers[index]
            uid = results[index]
            try:
                if isinstance(uid, HardwareError):
                    raise uid
                uid = uid or None                          # every card on it (stacked cards), or None
                if uid is None and not reader.alive():
                    raise HardwareError("VersionReg reads 0x00/0xFF or the registers did not stick")
            except HardwareError as exc:
                self._fault(index, exc)
                continue
            events.extend(self.tracker.observe(index, uid, self.clock()))
            polled += 1
        self.scans += 1
        self.polled_last = polled
        return events

    def _again_alone(self, steps_of: set[int], results: dict[int, object]) -> None:
        """A poll disturbed side by side (``interfered``: a neighbour shares its tag) is made
        again alone, and so is every reader that read nothing meanwhile: the neighbour the tag
        lies across must see it too, for the cross-talk to be held back as when polled in turn."""
        disturbed = [i for i in steps_of if getattr(self.readers[i][1], "interfered", False)]
        if not disturbed:
            return
        empty = [i for i in steps_of if results.get(i) == []]
        for index in sorted(set(disturbed) | set(empty)):
            try:
                again = self.readers[index][1].read_uids()
            except HardwareError as exc:
                results[index] = exc
                continue
            before = results.get(index)
            if isinstance(before, list):
                results[index] = list(dict.fromkeys(before + again))

    def _run_side_by_side(self, steps: dict[int, list], results: dict[int, object]) -> None:
        """Advance the readers' polls, each step of the one whose wait is over and has waited
        longest; when every one still waits, the one due first is asked (its step polls its
        chip).  A poll's result, or the HardwareError it raised, goes into ``results``."""
        while steps:
            ready = [i for i, (_, due) in steps.items() if due <= self.readers[i][1].backend.now()]
            index = min(ready or steps, key=lambda i: steps[i][1])
            try:
                steps[index][1] = next(steps[index][0])
            except StopIteration as done:
                results[index] = done.value
                del steps[index]
            except HardwareError as exc:
                results[index] = exc
                del steps[index]

    def run(self, sink: Callable[[TableEvent], None], stop: threading.Event, interval_s: float = 0.0) -> None:
        """Scan until ``stop`` is set, passing every event to ``sink``; ``interval_s`` between scans."""
        log.info("scanning %d readers: %s", len(self.readers), ", ".join(self.zones))
        while not stop.is_set():
            for event in self.scan_once(stop):
                sink(event)
            if interval_s > 0:
                stop.wait(interval_s)
            elif not self.polled_last:
                stop.wait(IDLE_WAIT_S)                       # every reader is out: do not spin

    # ----- faults -------------------------------------------------------------------------------
    def _fault(self, index: int, exc: BaseException) -> None:
        zone, reader = self.readers[index]
        health = self._health[index]
        health.ok = False
        health.backoff, health.next_try = self.retry_s, 0.0
        log.warning("reader %s (%s) stopped answering: %s; resetting it", zone,
                    getattr(reader, "name", "?"), exc)
        self._report(zone, False)
        self._retry(index)

    def _retry(self, index: int) -> bool:
        zone, reader = self.readers[index]
        health = self._health[index]
        now = self.clock()
        if now < health.next_try:
            return False
        try:
            reader.reset()
            back = reader.alive()
        except HardwareError as exc:
            log.debug("reader %s: reset failed: %s", zone, exc)
            back = False
        now = self.clock()
        if back:
            health.ok, health.next_try = True, 0.0
            self.tracker.resume(index, now)
            log.warning("reader %s (%s) answers again", zone, getattr(reader, "name", "?"))
            self._report(zone, True)
            return True
        health.next_try = now + health.backoff
        log.debug("reader %s still dead; next try in %.1f s", zone, health.backoff)
        health.backoff = min(health.backoff * 2, self.max_retry_s)
        return False

    def _report(self, zone: str, ok: bool) -> None:
        if self.on_fault is not None:
            self.on_fault(zone, ok)


__all__ = ["PresenceTracker", "Scanner", "UidReader", "DEFAULT_ABSENT_MS"]
