"""Reader backend ``sim``: simulated players at a real-time pace (``[sim]``).

    [sim]
    seed = 1          # default: derived from the session, so a restart continues the same game
    speed = 1.0       # 1.0 = a card every ~0.5 s; higher is faster
    noise = true      # flicker, out-of-turn cards, now and then a revoke

Deterministic for a seed: a resumed session skips the events already logged.
No real tags (``SIMULATED``): a run needs no deck file, and enrolling needs no
stopped service.
"""

from __future__ import annotations

import logging
import threading
import time
import zlib
from dataclasses import dataclass
from typing import Callable, Mapping

from ...core.clock import Clock, VirtualClock
from ...core.config import check_bool, check_int, check_known_keys
from ...core.errors import ConfigError
from ..sources import Sink
from . import ReaderSource

log = logging.getLogger(__name__)

SECTION = "sim"
SIMULATED = True
MAX_SPEED = 1000


@dataclass(frozen=True)
class SimConfig:
    seed: int | None = None
    speed: float = 1.0
    noise: bool = True


def parse(raw: Mapping, game) -> SimConfig:
    check_known_keys(raw, SECTION, ("seed", "speed", "noise"))
    kw = {}
    if "seed" in raw:
        kw["seed"] = check_int(raw["seed"], "sim.seed", 0)
    if "speed" in raw:
        speed = raw["speed"]
        if isinstance(speed, bool) or not isinstance(speed, (int, float)) or not 0 < speed <= MAX_SPEED:
            raise ConfigError(f"sim.speed: must be a number above 0 and at most {MAX_SPEED}, got {speed!r}",
                              "sim.speed")
        kw["speed"] = float(speed)
    if "noise" in raw:
        kw["noise"] = check_bool(raw["noise"], "sim.noise")
    return SimConfig(**kw)


class SimSource(ReaderSource):
    """Simulated players at the pace of ``clock`` (the run's: real time, or a
    :class:`~controller.core.clock.VirtualClock` that the players then move themselves, each
    wait passing at once); deterministic for a seed.

    ``skip`` events are left out at the start: on resume, those already in the
    log.  ``deals`` limits the game (None: play on until stopped).
    """

    def __init__(self, game, config: SimConfig, deck, *, skip: int = 0,
                 deals: int | None = None, on_done: Callable[[], None] | None = None,
                 clock: Clock = time.monotonic):
        from ..sim import Noise, TableSimulator

        self.sim = TableSimulator(game, seed=config.seed, deck=deck,
                                  noise=Noise.demo() if config.noise else Noise())
        self.speed = config.speed
        self.skip = skip
        self.deals = deals
        self.on_done = on_done
        self.clock = clock
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def events(self):
        if self.deals is None:
            while True:
                yield from self.sim.deal()
        else:
            yield from self.sim.deals(self.deals)

    def start(self, sink: Sink) -> None:
        clock = self.clock
        virtual = isinstance(clock, VirtualClock)

        def run() -> None:
            started = clock()
            first_t = None
            for index, event in enumerate(self.events()):
                if self._stop.is_set():
                    return
                if index < self.skip:
                    continue
                if first_t is None:
                    first_t = event.t
                delay = started + (event.t - first_t) / self.speed - clock()
                if delay > 0:
                    if virtual:
                        clock.advance(delay)        # nobody else moves the players' time
                    elif self._stop.wait(delay):
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


def source(config: SimConfig, ctx) -> SimSource:
    # a simulated game must continue identically after a restart: seed it from the session
    if config.seed is None:
        config = SimConfig(seed=zlib.crc32(ctx.session.encode()), speed=config.speed, noise=config.noise)
    return SimSource(ctx.settings.game, config, ctx.deck, skip=ctx.skip, clock=ctx.clock)


def enroll_source(config: SimConfig, ctx, zone: str | None, known):
    from ..enroll import EnrolSimSource

    zones = (zone,) if zone else ctx.settings.game.table.seats
    return EnrolSimSource(zones, seed=config.seed, speed=config.speed, known=known, clock=ctx.clock)


def doctor(config: SimConfig, doc, settings) -> None:
    """Simulated players need nothing from the machine."""
