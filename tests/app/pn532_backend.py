"""A made-up reader backend for the tests: PN532-like NFC readers on an I2C bus (``[pn532]``).

    [pn532]
    bus = "/dev/i2c-1"           # the readers' bus; in the tests a JSON file: zone -> the UIDs in its field
    reset_pin = 22               # the readers' shared RSTPDN line: a GPIO from the run's pin factory
    absent_ms = 300
    zones = ["seat1", "seat2", "seat3", "prikup"]   # reader index -> zone (default: the table's zones)

It stands for the next real backend a table may get, and is written only against
the seam every backend uses (controller/app/backends): it owns and checks its own
section (unknown keys fatal), claims its reset line (``pins``) and keeps the
config's other GPIOs off the I2C bus's own pins (``check_claimed``), asks the
run's pin factory for that line (``ctx.pins``), says what lies on its readers as
it starts (``lying``), opens its readers for ``doctor --live``
(``live_readers``), says where its pins go for ``doctor --wiring`` (``wires``)
and checks its bus device in ``doctor``.  Registered by one
line: ``backends.READERS["pn532"] = "pn532_backend"``.

The "bus" is a file the tests write (:func:`lay`, :func:`lift`), read once per
poll; a poll costs :data:`POLL_S` on the readers' clock.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Mapping

from controller.app.backends import ReaderSource
from controller.core.cards import zone_names
from controller.core.config import check_int, check_known_keys, check_str
from controller.core.errors import ConfigError
from hw.check import FAIL, OK

log = logging.getLogger(__name__)

SECTION = "pn532"
POLL_S = 0.005                   # one I2C InListPassiveTarget round, on the readers' clock
I2C_PINS = {2: "I2C1 SDA", 3: "I2C1 SCL"}
RESET_OWNER = "pn532 reset line"


@dataclass(frozen=True)
class Pn532Config:
    bus: str = "/dev/i2c-1"
    reset_pin: int = 22
    absent_ms: int = 300
    zones: tuple[str, ...] = ()

    def reader_zones(self, game) -> tuple[str, ...]:
        return self.zones or zone_names(game.table.players)


def parse(raw: Mapping, game) -> Pn532Config:
    check_known_keys(raw, SECTION, ("bus", "reset_pin", "absent_ms", "zones"))
    kw: dict = {}
    if "bus" in raw:
        kw["bus"] = check_str(raw["bus"], "pn532.bus")
    if "reset_pin" in raw:
        kw["reset_pin"] = check_int(raw["reset_pin"], "pn532.reset_pin", 0, 27)
    if "absent_ms" in raw:
        kw["absent_ms"] = check_int(raw["absent_ms"], "pn532.absent_ms", 50, 5000)
    if "zones" in raw:
        zones = zone_names(game.table.players)
        given = raw["zones"]
        if not isinstance(given, list) or not all(isinstance(z, str) and z in zones for z in given):
            raise ConfigError(f"pn532.zones: must be a list of {', '.join(zones)}, got {given!r}", "pn532.zones")
        kw["zones"] = tuple(given)
    return Pn532Config(**kw)


def pins(config: Pn532Config) -> list[tuple[str, int]]:
    return [("pn532.reset_pin", config.reset_pin)]


def check_claimed(owners: list[tuple[str, int]], config: Pn532Config) -> None:
    """No GPIO of the config on the I2C bus's own pins."""
    for owner, pin in owners:
        if pin in I2C_PINS:
            raise ConfigError(f"{owner}: GPIO{pin} is {I2C_PINS[pin]}, the bus of the PN532 readers: "
                              "choose a pin off the I2C bus", owner)


# --- the emulated bus -------------------------------------------------------------------

#: a PN532 breakout's pins in I2C mode, as printed on it (``doctor --wiring``)
WIRE_PINS = ("VCC", "GND", "SDA", "SCL", "RSTPDN")


def wires(config: Pn532Config) -> list:
    """Every reader's five pins to the Pi's header: the I2C bus shared, the reset line shared."""
    from controller.app.wiring import Wire
    from hw.header import HEADER_PIN, POWER_PINS

    out = []
    for i, zone in enumerate(config.zones or ("seat1", "seat2", "seat3", "prikup")):
        part = f"{zone} reader (i2c, {config.bus})"
        out += [Wire(part, "VCC", POWER_PINS["3V3"][i % len(POWER_PINS["3V3"])], "3V3", "power"),
                Wire(part, "GND", POWER_PINS["GND"][i % len(POWER_PINS["GND"])], "GND", "ground"),
                *(Wire(part, name.split()[1], HEADER_PIN[gpio], f"GPIO{gpio} {name}", "i2c")
                  for gpio, name in I2C_PINS.items()),
                Wire(part, "RSTPDN", HEADER_PIN[config.reset_pin], f"GPIO{config.reset_pin}", "reset")]
    return out


def field(bus: str | Path) -> dict[str, list[str]]:
    """zone -> the UIDs in that reader's field now."""
    try:
        return json.loads(Path(bus).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}


def _write(bus: str | Path, tags: dict[str, list[str]]) -> None:
    path = Path(bus)
    spare = path.with_name(path.name + ".new")
    spare.write_text(json.dumps(tags), encoding="utf-8")
    os.replace(spare, path)                     # a poll reads the old field or the new, never half


def lay(bus: str | Path, zone: str, uid: str) -> None:
    tags = field(bus)
    tags.setdefault(zone, []).append(uid)
    _write(bus, tags)


def lift(bus: str | Path, zone: str | None = None) -> None:
    """Lift the cards of ``zone`` (None: of every reader)."""
    tags = {} if zone is None else {z: u for z, u in field(bus).items() if z != zone}
    _write(bus, tags)


class Pn532Reader:
    """One reader of the bus, as ``doctor --live`` drives it."""

    def __init__(self, path: str, zone: str, clock):
        self.path, self.zone, self.clock = path, zone, clock
        self.name = f"pn532 {zone}"

    def read_uids(self) -> list[str]:
        self.clock.sleep(POLL_S)
        return list(field(self.path).get(self.zone, []))

    def close(self) -> None:
        """Nothing of its own to let go: the reset line is the bus's."""


def identify(reader: Pn532Reader) -> tuple[str, str, str | None]:
    """A PN532's answer: its firmware version (GetFirmwareVersion), here the bus being there."""
    if not Path(reader.path).exists():
        return FAIL, "no answer to GetFirmwareVersion", "the reader has no power, or SDA/SCL are not wired"
    return OK, "firmware PN532 1.6", None


# --- the hooks of a reader backend ----------------------------------------------------------

class Pn532Source(ReaderSource):
    """Polls every reader of the bus; table events through the presence tracker the RC522s use."""

    def __init__(self, config: Pn532Config, zones, clock: Callable[[], float], pins):
        if pins is None:
            raise ConfigError("pn532: no pin factory for the reset line", "pn532.reset_pin")
        self.config, self.zones, self.clock, self.pins = config, tuple(zones), clock, pins
        self.reset = None
        self._known = threading.Event()      # set once the first cards lying there are placed
        self._lying: list[str] = []
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self, sink) -> None:
        from hw.scanner import PresenceTracker

        self.reset = self.pins.output_pin(self.config.reset_pin, RESET_OWNER)
        self.reset.set(True)                    # out of power-down
        log.info("pn532: %s GPIO%d up", RESET_OWNER, self.config.reset_pin)
        tracker = PresenceTracker(self.zones, self.config.absent_ms)

        def poll() -> None:
            polls = 0
            while not self._stop.is_set():
                tags = field(self.config.bus)
                for index, zone in enumerate(self.zones):
                    for event in tracker.observe(index, tags.get(zone) or None, time.monotonic()):
                        sink(event._replace(t=self.clock()))
                polls += 1
                if polls > tracker.confirm and not self._known.is_set():
                    # what lies there counts once it is placed, as its removal will be told
                    self._lying = tracker.lying()
                    self._known.set()
                self._stop.wait(POLL_S)

        self._thread = threading.Thread(target=poll, name="pn532 poll", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=2)
        if self.reset is not None:
            self.reset.close()

    def lying(self, timeout: float) -> list[str] | None:
        return list(self._lying) if self._known.wait(timeout) else None


def source(config: Pn532Config, ctx) -> Pn532Source:
    return Pn532Source(config, config.reader_zones(ctx.settings.game), ctx.clock, ctx.pins)


def enroll_source(config: Pn532Config, ctx, zone: str | None, known) -> Pn532Source:
    return source(config, ctx)


def live_readers(config: Pn532Config, settings, pins, driver=None):
    """The readers for ``doctor --live``; ``driver``: their clock (now, sleep), else real time."""
    from hw.check import LiveReaders, RealTime

    clock = driver if driver is not None else RealTime()
    zones = config.reader_zones(settings.game)
    return LiveReaders([(zone, Pn532Reader(config.bus, zone, clock)) for zone in zones], clock,
                       absent_ms=config.absent_ms, identify=identify, cost=None)


def doctor(config: Pn532Config, doc, settings) -> None:
    from controller.app.findings import OK

    if doc.check_device(Path(config.bus), "PN532 bus", "i2c",
                        "enable I2C: sudo raspi-config -> Interface Options -> I2C, then reboot"):
        doc.add(OK, f"PN532 reset line on GPIO{config.reset_pin}")
