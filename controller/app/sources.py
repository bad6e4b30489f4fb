"""Where table events come from: the Pi's own readers, the table hub, or simulated players.

Every source calls ``sink(event)`` from its own thread with
:class:`~controller.events.TableEvent` objects; the service's single loop
thread feeds them to the tracker.  The tracker cannot tell the sources apart.
Hardware and hub code is imported only when such a source is started.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Callable, Protocol

from ..core.deck import Deck
from ..core.events import TableEvent
from .settings import Settings

log = logging.getLogger(__name__)

Sink = Callable[[TableEvent], None]


class SessionClock:
    """Seconds since the session started, continuing across restarts; never decreasing."""

    def __init__(self, offset: float = 0.0):
        self._start = time.monotonic()
        self._offset = offset
        self._last = offset
        self._lock = threading.Lock()

    def __call__(self) -> float:
        with self._lock:
            now = round(self._offset + time.monotonic() - self._start, 3)
            if now < self._last:
                now = self._last
            self._last = now
            return now


class EventSource(Protocol):
    def start(self, sink: Sink) -> None: ...
    def stop(self) -> None: ...


class SimSource:
    """Simulated players at a real-time pace; deterministic for a seed.

    ``skip`` events are left out at the start: on resume, those already in the
    log.  ``deals`` limits the game (None: play on until stopped).
    """

    def __init__(self, settings: Settings, deck: Deck | None, *, skip: int = 0,
                 deals: int | None = None, on_done: Callable[[], None] | None = None):
        from .sim import Noise, TableSimulator

        self.sim = TableSimulator(settings.game, seed=settings.sim_seed, deck=deck,
                                  noise=Noise.demo() if settings.sim_noise else Noise())
        self.speed = settings.sim_speed
        self.skip = skip
        self.deals = deals
        self.on_done = on_done
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def events(self):
        if self.deals is None:
            while True:
                yield from self.sim.deal()
        else:
            yield from self.sim.deals(self.deals)

    def start(self, sink: Sink) -> None:
        def run() -> None:
            started = time.monotonic()
            first_t = None
            for index, event in enumerate(self.events()):
                if self._stop.is_set():
                    return
                if index < self.skip:
                    continue
                if first_t is None:
                    first_t = event.t
                delay = started + (event.t - first_t) / self.speed - time.monotonic()
                if delay > 0 and self._stop.wait(delay):
                    return
                sink(event)
            if self.on_done:
                self.on_done()

        self._thread = threading.Thread(target=run, name="sim players", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=2)


class HubSource:
    """The table hub over its serial link (firmware_bridge).  The link exists from
    construction (so outputs can use it); the port is opened by :meth:`start`."""

    def __init__(self, settings: Settings, clock: Callable[[], float],
                 on_status: Callable[[str], None] | None = None, url: str | None = None):
        from firmware_bridge.link import HubLink

        self.absent_ms = settings.hub_absent_ms
        self.on_status = on_status
        self._sink: Sink | None = None
        zones = settings.hub_zones or settings.zones
        self.link = HubLink(url or settings.hub_port, zones, self._forward, clock=clock,
                            on_status=self._status, baudrate=settings.hub_baudrate)

    def _forward(self, event: TableEvent) -> None:
        if self._sink is not None:
            self._sink(event)

    def _status(self, message: str) -> None:
        log.info("hub: %s", message)
        if self.on_status:
            self.on_status(message)

    def start(self, sink: Sink) -> None:
        self._sink = sink
        self.link.start()
        if self.absent_ms != 300:
            self.link.configure("absent_ms", self.absent_ms)

    def stop(self) -> None:
        self.link.stop()


class SpiSource:
    """RC522 readers on the Pi's own SPI buses (hw)."""

    def __init__(self, settings: Settings, clock: Callable[[], float], factory=None, spi_backend=None):
        self.settings = settings
        self.clock = clock
        self.factory = factory
        self.spi_backend = spi_backend
        self.readers: list = []
        self.scanner = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self, sink: Sink) -> None:
        from hw.rc522 import open_readers
        from hw.scanner import Scanner

        s = self.settings
        readers = open_readers([(r.bus, r.device, r.reset_pin) for r in s.spi_readers], spd=s.spi_speed_hz,
                               backend=self.spi_backend, factory=self.factory)   # every reset pin up first
        self.readers.extend(zip((r.zone for r in s.spi_readers), readers))
        self.scanner = Scanner(self.readers, absent_ms=s.spi_absent_ms, clock=self.clock)
        self._thread = threading.Thread(target=self.scanner.run, args=(sink, self._stop),
                                        name="rc522 scanner", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=2)
        for _, reader in self.readers:
            reader.close()


def pin_factory(settings):
    if not settings.uses_gpio and settings.backend != "spi":
        return None
    from hw.pins import default_factory
    return default_factory(None if settings.gpio_factory == "auto" else settings.gpio_factory)
