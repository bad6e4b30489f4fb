"""The service's settings: the whole config file, strictly validated.

``[table]`` and ``[rules]`` are FORMATS.md's (see :mod:`controller.config`);
the rest is the project's own design, documented in the README:

    [readers]
    backend = "sim"              # spi | hub | sim

    [hub]                        # backend = "hub"
    port = "/dev/preftable-hub"  # a device, a pty path, or a pyserial URL (socket://host:port, loop://)
    zones = ["seat1", "seat2", "seat3", "prikup"]   # reader index -> zone ("" ignores a reader)
    baudrate = 115200
    absent_ms = 300              # sent to the hub with CFG

    [spi]                        # backend = "spi": RC522 readers on the Pi's SPI buses
    speed_hz = 1000000
    absent_ms = 300
    readers = [ { zone = "seat1", bus = 0, device = 0, reset_pin = 25 }, ... ]

    [gpio]                       # seat LEDs, buzzer and buttons on the Pi (BCM numbers)
    factory = "auto"             # auto | rpigpio | mock
    leds = { seat1 = 5, seat2 = 6, seat3 = 13 }
    buzzer = 12                  # never a pin of a used SPI bus (bus 0: 7-11, bus 1: 16-21)
    buttons = { undo = 4, new_deal = 27, confirm = 26 }
    debounce_ms = 30

    [display]
    kind = "terminal"            # terminal | serial | hub | none
    port = "/dev/ttyUSB0"        # kind = "serial"
    baudrate = 9600

    [log]
    dir = "logs"

    [sim]                        # backend = "sim": simulated players
    seed = 1
    speed = 1.0                  # 1.0 = a card every ~0.5 s; higher is faster
    noise = true

Unknown sections and keys are fatal, with the key named.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from ..core.cards import zone_names
from ..core.config import (GameConfig, check_bool, check_choice, check_int, check_known_keys, check_str,
                     check_table, game_config_from_dict, read_toml)
from ..core.errors import ConfigError

BACKENDS = ("spi", "hub", "sim")
DISPLAYS = ("terminal", "serial", "hub", "none")
PIN_FACTORIES = ("auto", "rpigpio", "mock")
BUTTON_NAMES = ("undo", "new_deal", "confirm")
SECTIONS = ("table", "rules", "readers", "hub", "spi", "gpio", "display", "log", "sim")
SPI_DEVICES = {(0, 0), (0, 1), (1, 0), (1, 1), (1, 2)}


@dataclass(frozen=True)
class SpiReader:
    zone: str
    bus: int
    device: int
    reset_pin: int


@dataclass(frozen=True)
class Settings:
    """Everything a running table needs to know."""

    game: GameConfig = field(default_factory=GameConfig)
    backend: str = "sim"
    hub_port: str = "/dev/preftable-hub"
    hub_zones: tuple[str | None, ...] = ()
    hub_baudrate: int = 115200
    hub_absent_ms: int = 300
    spi_speed_hz: int = 1_000_000
    spi_absent_ms: int = 300
    spi_readers: tuple[SpiReader, ...] = ()
    gpio_factory: str = "auto"
    gpio_leds: Mapping[str, int] = field(default_factory=dict)
    gpio_buzzer: int | None = None
    gpio_buttons: Mapping[str, int] = field(default_factory=dict)
    gpio_debounce_ms: int = 30
    display: str = "terminal"
    display_port: str | None = None
    display_baudrate: int = 9600
    log_dir: str = "logs"
    sim_seed: int | None = None
    sim_speed: float = 1.0
    sim_noise: bool = True
    source: Path | None = None

    @property
    def zones(self) -> tuple[str, ...]:
        return zone_names(self.game.table.players)

    @property
    def uses_gpio(self) -> bool:
        return bool(self.gpio_leds or self.gpio_buttons or self.gpio_buzzer is not None)


def _pin(value: object, key: str) -> int:
    return check_int(value, key, 0, 27)


def _zone(value: object, key: str, zones: tuple[str, ...]) -> str:
    if not isinstance(value, str) or value not in zones:
        raise ConfigError(f"{key}: must be one of {', '.join(zones)}, got {value!r}", key)
    return value


def _check_spi_pins(owners: list[tuple[str, int]], spi_readers: list[SpiReader]) -> None:
    """No GPIO of the config on a pin of an SPI bus its readers use (bus 0: GPIO7-11, bus 1:
    GPIO16-21 with dtoverlay=spi1-3cs): the message names both users."""
    from hw.header import spi_pin_user

    for owner, pin in owners:
        for bus in sorted({r.bus for r in spi_readers}):
            user = spi_pin_user(pin, (bus,))
            if user is not None:
                readers = ", ".join(f"spi.readers[{i}] ({r.zone})" for i, r in enumerate(spi_readers) if r.bus == bus)
                raise ConfigError(f"{owner}: GPIO{pin} is {user}, the bus of {readers}: "
                                  "choose a pin off the SPI buses", owner)


def settings_from_dict(doc: Mapping[str, Any], source: Path | None = None) -> Settings:
    """Validate a decoded config file as a whole."""
    for name in doc:
        if name not in SECTIONS:
            raise ConfigError(f"{name}: unknown section (known: {', '.join(SECTIONS)})", name)
    game = game_config_from_dict(doc)
    zones = zone_names(game.table.players)
    kw: dict[str, Any] = {"game": game, "source": source}

    readers = check_table(doc.get("readers", {}), "readers")
    check_known_keys(readers, "readers", ("backend",))
    kw["backend"] = check_choice(readers.get("backend", "sim"), "readers.backend", BACKENDS)

    hub = check_table(doc.get("hub", {}), "hub")
    check_known_keys(hub, "hub", ("port", "zones", "baudrate", "absent_ms"))
    if "port" in hub:
        kw["hub_port"] = check_str(hub["port"], "hub.port")
    hub_zones = hub.get("zones", list(zones))
    if not isinstance(hub_zones, list) or not hub_zones:
        raise ConfigError(f"hub.zones: must be a list of zones, reader 0 first, got {hub_zones!r}", "hub.zones")
    seen: set[str] = set()
    mapped = []
    for i, z in enumerate(hub_zones):
        if z == "":
            mapped.append(None)
            continue
        zone = _zone(z, f"hub.zones[{i}]", zones)
        if zone in seen:
            raise ConfigError(f"hub.zones[{i}]: zone {zone} given twice", "hub.zones")
        seen.add(zone)
        mapped.append(zone)
    kw["hub_zones"] = tuple(mapped)
    if "baudrate" in hub:
        kw["hub_baudrate"] = check_int(hub["baudrate"], "hub.baudrate", 300, 4_000_000)
    if "absent_ms" in hub:
        kw["hub_absent_ms"] = check_int(hub["absent_ms"], "hub.absent_ms", 50, 5000)

    spi = check_table(doc.get("spi", {}), "spi")
    check_known_keys(spi, "spi", ("speed_hz", "absent_ms", "readers"))
    if "speed_hz" in spi:
        kw["spi_speed_hz"] = check_int(spi["speed_hz"], "spi.speed_hz", 100_000, 10_000_000)
    if "absent_ms" in spi:
        kw["spi_absent_ms"] = check_int(spi["absent_ms"], "spi.absent_ms", 50, 5000)
    raw_readers = spi.get("readers", [])
    if not isinstance(raw_readers, list):
        raise ConfigError("spi.readers: must be a list of { zone, bus, device, reset_pin } tables", "spi.readers")
    spi_readers, used_dev, used_zone = [], set(), set()
    for i, r in enumerate(raw_readers):
        key = f"spi.readers[{i}]"
        check_table(r, key)
        check_known_keys(r, key, ("zone", "bus", "device", "reset_pin"))
        for needed in ("zone", "bus", "device", "reset_pin"):
            if needed not in r:
                raise ConfigError(f"{key}.{needed}: missing (each reader needs zone, bus, device "
                                  "and an explicit reset_pin)", f"{key}.{needed}")
        reader = SpiReader(_zone(r["zone"], f"{key}.zone", zones), check_int(r["bus"], f"{key}.bus", 0, 1),
                           check_int(r["device"], f"{key}.device", 0, 2), _pin(r["reset_pin"], f"{key}.reset_pin"))
        if (reader.bus, reader.device) not in SPI_DEVICES:
            raise ConfigError(f"{key}: /dev/spidev{reader.bus}.{reader.device} is not one of the Pi's "
                              "chip selects (0.0, 0.1, 1.0-1.2)", key)
        if (reader.bus, reader.device) in used_dev:
            raise ConfigError(f"{key}: /dev/spidev{reader.bus}.{reader.device} given twice", key)
        if reader.zone in used_zone:
            raise ConfigError(f"{key}.zone: zone {reader.zone} given twice", f"{key}.zone")
        used_dev.add((reader.bus, reader.device))
        used_zone.add(reader.zone)
        spi_readers.append(reader)
    kw["spi_readers"] = tuple(spi_readers)
    if kw["backend"] == "spi" and not spi_readers:
        raise ConfigError('spi.readers: backend "spi" needs at least one reader', "spi.readers")

    gpio = check_table(doc.get("gpio", {}), "gpio")
    check_known_keys(gpio, "gpio", ("factory", "leds", "buzzer", "buttons", "debounce_ms"))
    if "factory" in gpio:
        kw["gpio_factory"] = check_choice(gpio["factory"], "gpio.factory", PIN_FACTORIES)
    leds = check_table(gpio.get("leds", {}), "gpio.leds")
    kw["gpio_leds"] = {_zone(z, f"gpio.leds.{z}", zones): _pin(p, f"gpio.leds.{z}") for z, p in leds.items()}
    if "buzzer" in gpio:
        kw["gpio_buzzer"] = _pin(gpio["buzzer"], "gpio.buzzer")
    buttons = check_table(gpio.get("buttons", {}), "gpio.buttons")
    check_known_keys(buttons, "gpio.buttons", BUTTON_NAMES)
    kw["gpio_buttons"] = {b: _pin(p, f"gpio.buttons.{b}") for b, p in buttons.items()}
    if "debounce_ms" in gpio:
        kw["gpio_debounce_ms"] = check_int(gpio["debounce_ms"], "gpio.debounce_ms", 1, 500)
    pins: dict[int, str] = {}
    owners = [(f"gpio.leds.{z}", p) for z, p in kw["gpio_leds"].items()]
    owners += [(f"gpio.buttons.{b}", p) for b, p in kw["gpio_buttons"].items()]
    if kw.get("gpio_buzzer") is not None:
        owners.append(("gpio.buzzer", kw["gpio_buzzer"]))
    owners += [(f"spi.readers[{i}].reset_pin", r.reset_pin) for i, r in enumerate(spi_readers)]
    for owner, pin in owners:
        if pin in pins:
            raise ConfigError(f"{owner}: GPIO{pin} is already used by {pins[pin]}", owner)
        pins[pin] = owner
    _check_spi_pins(owners, spi_readers)

    display = check_table(doc.get("display", {}), "display")
    check_known_keys(display, "display", ("kind", "port", "baudrate"))
    kw["display"] = check_choice(display.get("kind", "terminal"), "display.kind", DISPLAYS)
    if "port" in display:
        kw["display_port"] = check_str(display["port"], "display.port")
    if kw["display"] == "serial" and not kw.get("display_port"):
        raise ConfigError('display.port: kind "serial" needs a port', "display.port")
    if kw["display"] == "hub" and kw["backend"] != "hub":
        raise ConfigError('display.kind: "hub" needs readers.backend = "hub"', "display.kind")
    if "baudrate" in display:
        kw["display_baudrate"] = check_int(display["baudrate"], "display.baudrate", 300, 4_000_000)

    log = check_table(doc.get("log", {}), "log")
    check_known_keys(log, "log", ("dir",))
    if "dir" in log:
        kw["log_dir"] = check_str(log["dir"], "log.dir")

    sim = check_table(doc.get("sim", {}), "sim")
    check_known_keys(sim, "sim", ("seed", "speed", "noise"))
    if "seed" in sim:
        kw["sim_seed"] = check_int(sim["seed"], "sim.seed", 0)
    if "speed" in sim:
        speed = sim["speed"]
        if isinstance(speed, bool) or not isinstance(speed, (int, float)) or not 0 < speed <= 1000:
            raise ConfigError(f"sim.speed: must be a number above 0 and at most 1000, got {speed!r}", "sim.speed")
        kw["sim_speed"] = float(speed)
    if "noise" in sim:
        kw["sim_noise"] = check_bool(sim["noise"], "sim.noise")
    return Settings(**kw)


def load_settings(path: str | Path | None) -> Settings:
    """Load and validate a whole config file (defaults: a simulated 3-player table)."""
    if path is None:
        return Settings()
    doc = read_toml(path)
    try:
        return settings_from_dict(doc, Path(path))
    except ConfigError as exc:
        raise ConfigError(f"{path}: {exc}", exc.key) from None
