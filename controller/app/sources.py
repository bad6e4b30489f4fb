"""What every table-event source shares: the protocol and the session clock.

Every source (the reader backends of :mod:`controller.app.backends`: the
Pi's own readers, the table hub, simulated players) calls ``sink(event)``
from its own thread with :class:`~controller.core.events.TableEvent` objects;
the service's single loop thread feeds them to the tracker.  The tracker
cannot tell the sources apart.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Callable, Protocol

from ..core.events import TableEvent

log = logging.getLogger(__name__)

Sink = Callable[[TableEvent], None]


class SessionClock:
    """Seconds since the session started, continuing across restarts; never decreasing.
    ``monotonic`` is the clock it counts on (``time.monotonic``; a test's
    :class:`~controller.core.clock.VirtualClock`)."""

    def __init__(self, offset: float = 0.0, monotonic: Callable[[], float] = time.monotonic):
        self._monotonic = monotonic
        self._start = monotonic()
        self._offset = offset
        self._last = offset
        self._lock = threading.Lock()

    def __call__(self) -> float:
        with self._lock:
            now = round(self._offset + self._monotonic() - self._start, 3)
            if now < self._last:
                now = self._last
            self._last = now
            return now


class EventSource(Protocol):
    def start(self, sink: Sink) -> None: ...
    def stop(self) -> None: ...
