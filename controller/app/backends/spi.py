"""Reader backend ``spi``: RC522 readers on the Pi's own SPI buses (``[spi]``; hw/).

    [spi]
    speed_hz = 1000000
    absent_ms = 300
    readers = [ { zone = "seat1", bus = 0, device = 0, reset_pin = 25 }, ... ]

Each reader's reset pin is a GPIO pin claimed like any other (``pins``).  Readers may
share one reset line (five readers, LEDs, a buzzer and buttons do not fit the Pi's clean
GPIOs otherwise): the line is raised once for all of them, they wait for their crystals
once (``hw.rc522.open_readers``), and it is never pulsed low while a neighbour holds it
(:meth:`hw.pins.PinFactory.share`).  Any other pin may still have one user only.
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass
from typing import Callable, Mapping

from ...core.cards import zone_names
from ...core.config import check_int, check_known_keys, check_table
from ...core.errors import ConfigError
from ..sources import Sink
from . import ReaderSource

log = logging.getLogger(__name__)

SECTION = "spi"
# The Pi's SPI chip selects: /dev/spidev0.0-0.1, and 1.0-1.2 with dtoverlay=spi1-3cs.
SPI_DEVICES = {(0, 0), (0, 1), (1, 0), (1, 1), (1, 2)}


@dataclass(frozen=True)
class SpiReader:
    zone: str
    bus: int
    device: int
    reset_pin: int


@dataclass(frozen=True)
class SpiConfig:
    speed_hz: int = 1_000_000
    absent_ms: int = 300
    readers: tuple[SpiReader, ...] = ()


def gpio_pin(value: object, key: str) -> int:
    """A BCM GPIO number of the Pi's header."""
    return check_int(value, key, 0, 27)


def parse(raw: Mapping, game) -> SpiConfig:
    check_known_keys(raw, SECTION, ("speed_hz", "absent_ms", "readers"))
    zones = zone_names(game.table.players)
    kw = {}
    if "speed_hz" in raw:
        kw["speed_hz"] = check_int(raw["speed_hz"], "spi.speed_hz", 100_000, 10_000_000)
    if "absent_ms" in raw:
        kw["absent_ms"] = check_int(raw["absent_ms"], "spi.absent_ms", 50, 5000)
    raw_readers = raw.get("readers", [])
    if not isinstance(raw_readers, list):
        raise ConfigError("spi.readers: must be a list of { zone, bus, device, reset_pin } tables", "spi.readers")
    readers, used_dev, used_zone = [], set(), set()
    for i, r in enumerate(raw_readers):
        key = f"spi.readers[{i}]"
        check_table(r, key)
        check_known_keys(r, key, ("zone", "bus", "device", "reset_pin"))
        for needed in ("zone", "bus", "device", "reset_pin"):
            if needed not in r:
                raise ConfigError(f"{key}.{needed}: missing (each reader needs zone, bus, device "
                                  "and an explicit reset_pin)", f"{key}.{needed}")
        zone = r["zone"]
        if not isinstance(zone, str) or zone not in zones:
            raise ConfigError(f"{key}.zone: must be one of {', '.join(zones)}, got {zone!r}", f"{key}.zone")
        reader = SpiReader(zone, check_int(r["bus"], f"{key}.bus", 0, 1),
                           check_int(r["device"], f"{key}.device", 0, 2), gpio_pin(r["reset_pin"], f"{key}.reset_pin"))
        if (reader.bus, reader.device) not in SPI_DEVICES:
            raise ConfigError(f"{key}: /dev/spidev{reader.bus}.{reader.device} is not one of the Pi's "
                              "chip selects (0.0, 0.1, 1.0-1.2)", key)
        if (reader.bus, reader.device) in used_dev:
            raise ConfigError(f"{key}: /dev/spidev{reader.bus}.{reader.device} given twice", key)
        if reader.zone in used_zone:
            raise ConfigError(f"{key}.zone: zone {reader.zone} given twice", f"{key}.zone")
        used_dev.add((reader.bus, reader.device))
        used_zone.add(reader.zone)
        readers.append(reader)
    kw["readers"] = tuple(readers)
    return SpiConfig(**kw)


def check(settings) -> None:
    if settings.backend == "spi" and not settings.section(SECTION).readers:
        raise ConfigError('spi.readers: backend "spi" needs at least one reader', "spi.readers")


def pins(config: SpiConfig) -> list[tuple[str, int]]:
    """Each reset line once, owned by the first reader on it (readers may share a line)."""
    owners: dict[int, str] = {}
    for i, r in enumerate(config.readers):
        owners.setdefault(r.reset_pin, f"spi.readers[{i}].reset_pin")
    return [(owner, pin) for pin, owner in owners.items()]


def shared_reset_lines(config: SpiConfig) -> dict[int, tuple[str, ...]]:
    """Reset pins that several readers share -> the zones on each."""
    zones: dict[int, list[str]] = {}
    for r in config.readers:
        zones.setdefault(r.reset_pin, []).append(r.zone)
    return {pin: tuple(z) for pin, z in zones.items() if len(z) > 1}


def share_reset_lines(config: SpiConfig, factory) -> None:
    """Tell the pin factory which reset pins several readers hold (before the readers open)."""
    if factory is None:
        return
    for pin, zones in shared_reset_lines(config).items():
        factory.share(pin, f"RC522 reset line of {', '.join(zones)}")


def check_claimed(owners: list[tuple[str, int]], config: SpiConfig) -> None:
    """No GPIO of the config on a pin of an SPI bus its readers use (bus 0: GPIO7-11, bus 1:
    GPIO16-21 with dtoverlay=spi1-3cs): the message names both users."""
    from hw.header import spi_pin_user

    buses = sorted({r.bus for r in config.readers})
    for owner, pin in owners:
        for bus in buses:
            user = spi_pin_user(pin, (bus,))
            if user is not None:
                readers = ", ".join(f"spi.readers[{i}] ({r.zone})" for i, r in enumerate(config.readers)
                                    if r.bus == bus)
                raise ConfigError(f"{owner}: GPIO{pin} is {user}, the bus of {readers}: "
                                  "choose a pin off the SPI buses", owner)


def open_spi_readers(config: SpiConfig, factory=None, spi_backend=None) -> tuple[list, object]:
    """``([(zone, reader)], backend)``: the readers opened on ``spi_backend`` (else the Pi's
    ``/dev/spidev*``), their reset lines from the pin factory ``factory`` (else the
    backend's own), the shared ones declared first and every reset line up before the
    first reader starts."""
    from hw.rc522 import default_backend, open_readers

    backend = spi_backend if spi_backend is not None else default_backend(factory)
    pins = factory if factory is not None else backend.pins()
    share_reset_lines(config, pins)                 # before the first reader takes its reset line
    readers = open_readers([(r.bus, r.device, r.reset_pin) for r in config.readers], spd=config.speed_hz,
                           backend=backend, factory=pins)
    return list(zip((r.zone for r in config.readers), readers)), backend


class SpiSource(ReaderSource):
    """RC522 readers on the Pi's own SPI buses (hw).  Their reset lines come from the run's
    pin factory (``factory``), else from the SPI backend's own."""

    def __init__(self, config: SpiConfig, clock: Callable[[], float], factory=None, spi_backend=None):
        self.config = config
        self.clock = clock
        self.factory = factory
        self.spi_backend = spi_backend
        self.readers: list = []
        self.scanner = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self, sink: Sink) -> None:
        from hw.scanner import Scanner

        self.readers.extend(open_spi_readers(self.config, self.factory, self.spi_backend)[0])
        self.scanner = Scanner(self.readers, absent_ms=self.config.absent_ms, clock=self.clock)
        self._thread = threading.Thread(target=self.scanner.run, args=(sink, self._stop),
                                        name="rc522 scanner", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=2)
        for _, reader in self.readers:
            reader.close()

    def lying(self, timeout: float) -> list[str] | None:
        """The zones a tag lies on once the scanner has scanned often enough to know (a tag is
        placed after ``confirm`` polls); None if it has not within ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and not self._stop.is_set():
            scanner = self.scanner
            if scanner is not None and scanner.scans > scanner.tracker.confirm:
                return scanner.tracker.lying()
            self._stop.wait(0.005)
        return None


#: the common blue RC522 board's pins, left to right as printed on it (``doctor --wiring``)
WIRE_PINS = ("SDA", "SCK", "MOSI", "MISO", "IRQ", "GND", "RST", "3.3V")
_BUS_ROLE = {"SCK": "SCLK", "MOSI": "MOSI", "MISO": "MISO"}


def wires(config: SpiConfig) -> list:
    """The eight pins of every reader to the Pi's header (``doctor --wiring``): SDA to its
    device's chip select, the bus's clock and data lines, RST to its reset line, IRQ left
    unconnected (the readers are polled), ground and 3.3 V (never 5 V) spread over the
    header's pins of each."""
    from hw.header import HEADER_PIN, POWER_PINS, SPI_BUS_PINS

    from ..wiring import Wire

    def bus_gpio(bus: int, role: str) -> int:
        return next(pin for pin, r in SPI_BUS_PINS[bus].items() if r == role)

    out = []
    grounds, supplies = POWER_PINS["GND"], POWER_PINS["3V3"]
    for i, r in enumerate(config.readers):
        part, kind = f"{r.zone} reader (spidev{r.bus}.{r.device})", f"spi{r.bus}"
        for pin in WIRE_PINS:
            if pin == "SDA":                        # the chip select of its device
                gpio = bus_gpio(r.bus, f"CE{r.device}")
                out.append(Wire(part, pin, HEADER_PIN[gpio], f"GPIO{gpio} CE{r.device}", kind))
            elif pin in _BUS_ROLE:
                gpio = bus_gpio(r.bus, _BUS_ROLE[pin])
                out.append(Wire(part, pin, HEADER_PIN[gpio], f"GPIO{gpio} {_BUS_ROLE[pin]}", kind))
            elif pin == "IRQ":
                out.append(Wire(part, pin, None, "not connected", "none"))
            elif pin == "GND":
                out.append(Wire(part, pin, grounds[i % len(grounds)], "GND", "ground"))
            elif pin == "RST":
                out.append(Wire(part, pin, HEADER_PIN[r.reset_pin], f"GPIO{r.reset_pin}", "reset"))
            else:
                out.append(Wire(part, pin, supplies[i % len(supplies)], "3V3", "power"))
    return out


def source(config: SpiConfig, ctx) -> SpiSource:
    return SpiSource(config, ctx.clock, factory=ctx.pins)


def enroll_source(config: SpiConfig, ctx, zone: str | None, known) -> SpiSource:
    return source(config, ctx)


def live_readers(config: SpiConfig, settings, pins, driver=None):
    """The readers opened for ``doctor --live`` (every reset line up first), on the pin
    factory ``pins``; ``driver``: the SPI backend (the tests' emulated chips), else the Pi's."""
    from hw.check import LiveReaders

    readers, backend = open_spi_readers(config, pins, driver)
    return LiveReaders(readers, backend, absent_ms=config.absent_ms)


def doctor(config: SpiConfig, doc, settings) -> None:
    from ..findings import SPI_GROUP

    for r in config.readers:
        name = f"spidev{r.bus}.{r.device}"
        if r.bus == 0:
            missing = "enable SPI: sudo raspi-config -> Interface Options -> SPI (dtparam=spi=on), then reboot"
        else:
            missing = "add dtoverlay=spi1-3cs to /boot/firmware/config.txt (spi1 with 3 chip selects), then reboot"
        doc.check_device(doc.host.dev / name, f"SPI reader {r.zone}", SPI_GROUP, missing)
    for module in ("spidev", "mfrc522"):
        doc.check_module(module, "the SPI readers")
