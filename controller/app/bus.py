"""The bus: after each table event the service publishes what happened to every output.

One :class:`Published` item per table event (and one when a session opens or
the link changes) carries the event, the tracker's signals and a frozen
:class:`~controller.core.snapshot.TableSnapshot`.  Outputs never see the live
tracker.

A subscriber is either *inline* -- called on the table loop's thread, for the
few outputs that must be as fast as the loop (the hub's and the Pi's LEDs)
-- or, by default, *threaded*: it gets a thread of its own and a bounded
mailbox, so a slow or stuck subscriber (a 9600-baud LCD, a web server, a
network feed) can never delay an event, an LED or a log line.  A full
mailbox drops its oldest item and counts it; every item carries the whole
table state, so the next one repairs what a dropped one would have shown.
An exception in any subscriber is logged once per kind and counted; it
never reaches the loop.  The game log is not a subscriber: the service
writes it *before* publishing, so a subscriber that needs every log line
(the club feed) reads ``events.jsonl`` itself as its outbox.
"""

from __future__ import annotations

import collections
import logging
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from ..core.events import TableEvent
from ..core.snapshot import TableSnapshot
from ..core.tracker import Signal

log = logging.getLogger(__name__)

TICK_S = 0.02


@dataclass(frozen=True)
class Published:
    """What one step of the table loop tells its outputs."""

    event: TableEvent | None          # None: not an event (a session opened, the link changed)
    signals: tuple[Signal, ...]
    snapshot: TableSnapshot
    session_dir: Path | None = None   # the session's folder (its events.jsonl is already written)


class Subscriber(Protocol):
    name: str

    def receive(self, item: Published) -> None: ...
    def tick(self, now: float) -> None: ...
    def close(self) -> None: ...


class _Guard:
    """Calls into one subscriber, logging each kind of failure once and counting all."""

    def __init__(self, sub: Subscriber):
        self.sub = sub
        self.name = getattr(sub, "name", type(sub).__name__)
        self.errors = 0
        self._seen: set[str] = set()

    def call(self, method: str, *args) -> None:
        try:
            getattr(self.sub, method)(*args)
        except Exception as exc:    # noqa: BLE001 - an output's failure must never stop the table
            self.errors += 1
            kind = f"{method}:{type(exc).__name__}"
            if kind not in self._seen:
                self._seen.add(kind)
                log.error("output %s failed in %s (%s: %s); the table goes on", self.name, method,
                          type(exc).__name__, exc)


class _Worker(_Guard):
    """A threaded subscriber: its own thread, a bounded mailbox, ticks every TICK_S."""

    def __init__(self, sub: Subscriber, maxlen: int):
        super().__init__(sub)
        self.mailbox: collections.deque[Published] = collections.deque()
        self.maxlen = maxlen
        self.dropped = 0
        self._wake = threading.Condition()
        self._closing = False
        self.thread = threading.Thread(target=self._run, name=f"output {self.name}", daemon=True)
        self.thread.start()

    def put(self, item: Published) -> None:
        with self._wake:
            if len(self.mailbox) >= self.maxlen:
                self.mailbox.popleft()
                self.dropped += 1
            self.mailbox.append(item)
            self._wake.notify()

    def _run(self) -> None:
        next_tick = time.monotonic()
        while True:
            with self._wake:
                if not self.mailbox and not self._closing:
                    self._wake.wait(max(0.0, next_tick - time.monotonic()))
                items = list(self.mailbox)
                self.mailbox.clear()
                closing = self._closing
            for item in items:
                self.call("receive", item)
            now = time.monotonic()
            if now >= next_tick:
                self.call("tick", now)
                next_tick = now + TICK_S
            if closing:
                return

    def stop(self, timeout: float) -> None:
        with self._wake:
            self._closing = True
            self._wake.notify()
        self.thread.join(timeout)
        if self.thread.is_alive():
            log.warning("output %s did not stop within %.0f s; leaving it", self.name, timeout)
            return
        self.call("close")


class Bus:
    """Fans each :class:`Published` item out to the subscribers (see the module docstring)."""

    def __init__(self):
        self._inline: list[_Guard] = []
        self._workers: list[_Worker] = []

    def subscribe(self, sub: Subscriber, *, inline: bool = False, maxlen: int = 64) -> None:
        if inline:
            self._inline.append(_Guard(sub))
        else:
            self._workers.append(_Worker(sub, maxlen))

    @property
    def subscribers(self) -> list[Subscriber]:
        return [g.sub for g in self._inline] + [w.sub for w in self._workers]

    def publish(self, item: Published) -> None:
        """On the loop thread: never blocks on a threaded subscriber, never raises."""
        for guard in self._inline:
            guard.call("receive", item)
        for worker in self._workers:
            worker.put(item)

    def tick(self, now: float) -> None:
        """On the loop thread: the inline subscribers' tick (LED blink patterns)."""
        for guard in self._inline:
            guard.call("tick", now)

    def stats(self) -> dict[str, dict[str, int]]:
        out = {g.name: {"errors": g.errors, "dropped": 0} for g in self._inline}
        out.update({w.name: {"errors": w.errors, "dropped": w.dropped} for w in self._workers})
        return out

    def close(self, timeout: float = 5.0) -> None:
        for worker in self._workers:
            worker.stop(timeout)
        for guard in self._inline:
            guard.call("close")
        self._inline, self._workers = [], []
