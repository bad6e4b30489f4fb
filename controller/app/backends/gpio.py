"""Output ``gpio``: the seat LEDs, the buzzer and the buttons on the Pi's pins (``[gpio]``).

    [gpio]                       # BCM numbers
    factory = "auto"             # auto | rpigpio | mock
    leds = { seat1 = 5, seat2 = 6, seat3 = 13 }
    buzzer = 12                  # never a pin of a used SPI bus (bus 0: 7-11, bus 1: 16-21)
    buttons = { undo = 4, new_deal = 27, confirm = 26 }
    debounce_ms = 30

``factory`` chooses the one pin factory of a run (gpiozero's pattern, ``hw.pins``): every
device asks it for its pins, these and the reader backend's (the SPI readers' reset
lines); it is made only when some section claims a pin (:func:`controller.app.backends.open_pins`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

from ...core.cards import zone_names
from ...core.config import check_choice, check_int, check_known_keys, check_table
from ...core.errors import ConfigError

SECTION = "gpio"
PIN_FACTORIES = ("auto", "rpigpio", "mock")
BUTTON_NAMES = ("undo", "new_deal", "confirm")


@dataclass(frozen=True)
class GpioConfig:
    factory: str = "auto"
    leds: Mapping[str, int] = field(default_factory=dict)
    buzzer: int | None = None
    buttons: Mapping[str, int] = field(default_factory=dict)
    debounce_ms: int = 30


def _pin(value: object, key: str) -> int:
    return check_int(value, key, 0, 27)


def parse(raw: Mapping, game) -> GpioConfig:
    check_known_keys(raw, SECTION, ("factory", "leds", "buzzer", "buttons", "debounce_ms"))
    zones = zone_names(game.table.players)
    kw = {}
    if "factory" in raw:
        kw["factory"] = check_choice(raw["factory"], "gpio.factory", PIN_FACTORIES)
    leds = check_table(raw.get("leds", {}), "gpio.leds")
    for zone in leds:
        if zone not in zones:
            raise ConfigError(f"gpio.leds.{zone}: must be one of {', '.join(zones)}, got {zone!r}",
                              f"gpio.leds.{zone}")
    kw["leds"] = {z: _pin(p, f"gpio.leds.{z}") for z, p in leds.items()}
    if "buzzer" in raw:
        kw["buzzer"] = _pin(raw["buzzer"], "gpio.buzzer")
    buttons = check_table(raw.get("buttons", {}), "gpio.buttons")
    check_known_keys(buttons, "gpio.buttons", BUTTON_NAMES)
    kw["buttons"] = {b: _pin(p, f"gpio.buttons.{b}") for b, p in buttons.items()}
    if "debounce_ms" in raw:
        kw["debounce_ms"] = check_int(raw["debounce_ms"], "gpio.debounce_ms", 1, 500)
    return GpioConfig(**kw)


def pins(config: GpioConfig) -> list[tuple[str, int]]:
    owners = [(f"gpio.leds.{z}", p) for z, p in config.leds.items()]
    owners += [(f"gpio.buttons.{b}", p) for b, p in config.buttons.items()]
    if config.buzzer is not None:
        owners.append(("gpio.buzzer", config.buzzer))
    return owners


def factory(config: GpioConfig):
    """The pin factory ``factory`` asks for (``auto``: the real pins on a Pi, else mock ones)."""
    from hw.pins import default_factory
    return default_factory(None if config.factory == "auto" else config.factory)


def outputs(config: GpioConfig, ctx) -> list:
    if not (config.leds or config.buzzer is not None) or ctx.pins is None:
        return []
    from ..outputs import GpioOutputs
    return [GpioOutputs(ctx.pins, dict(config.leds), config.buzzer)]


def buttons(config: GpioConfig, pins):
    """The debounced buttons on the pin factory ``pins``, or None."""
    if not config.buttons or pins is None:
        return None
    from hw.indicators import Buttons
    return Buttons(pins, dict(config.buttons), debounce_ms=config.debounce_ms)


def doctor(config: GpioConfig, doc, settings) -> None:
    from ..findings import GPIO_GROUP, OK, WARN
    from . import claimed_pins

    if not claimed_pins(settings):          # no pin driven: no factory is made
        return
    if config.factory == "mock":
        doc.add(OK, 'gpio.factory = "mock": the pins are simulated')
        return
    path = doc.host.dev / "gpiomem"
    if not path.exists() and config.factory == "auto":
        model = doc.host.board_model()
        if model and model.startswith("Raspberry Pi"):       # a Pi 5 has /dev/gpiomem0-4 and gpiochips
            doc.add(OK, f"GPIO on a {model}: through /dev/gpiochip* (RPi.GPIO must be the rpi-lgpio "
                        "drop-in on a Pi 5); the pins are never simulated on a Pi")
            doc.check_module("RPi.GPIO", "the GPIO pins (pip install rpi-lgpio on a Pi 5)")
            return
        doc.add(WARN, f"GPIO {path}: no such device: the pins will be simulated (not a Raspberry Pi?)",
                "run on the Pi, or set gpio.factory = \"mock\" to silence this")
        return
    doc.check_device(path, "GPIO", GPIO_GROUP,
                     "run on a Raspberry Pi (gpio.factory = \"rpigpio\" needs /dev/gpiomem)")
    doc.check_module("RPi.GPIO", "the GPIO pins")
