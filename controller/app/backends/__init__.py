"""The registry of reader backends and outputs: each owns a config section.

Klipper's pattern: every module here reads and checks its own section of the
config file (unknown keys fatal, the key named), builds its event source or
its outputs, and runs its own ``doctor`` checks.  The registry is the two
tables below, module names only: nothing is imported until a config names
it, so the base install runs anywhere.  Adding a PN532 reader, a web page or
an MQTT publisher is one module plus one line here.

A module provides:

- ``SECTION``: the config section it owns (``[hub]``);
- ``parse(raw, game) -> config``: its section, validated (``parse({}, game)``
  gives the defaults); optional ``check(settings)`` for rules across sections
  and ``pins(config) -> [(owner, pin)]`` for the GPIO pins it claims;
- a reader: ``source(config, ctx)`` and ``enroll_source(config, ctx, zone, known)``;
- an output: ``outputs(config, ctx) -> [subscriber]`` (an empty list when the
  config does not ask for it);
- ``doctor(config, doctor, settings)``: findings on the doctor's report.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any, Callable

# reader backend name ([readers] backend = NAME) -> module; the module owns the section of that name
READERS: dict[str, str] = {
    "sim": "controller.app.backends.sim",
    "hub": "controller.app.backends.hub",
    "spi": "controller.app.backends.spi",
}

# output section -> module (each is built when its config asks for it)
OUTPUTS: dict[str, str] = {
    "gpio": "controller.app.backends.gpio",
    "display": "controller.app.backends.display",
    "web": "controller.app.web",
    "mqtt": "controller.app.mqtt",
}


def module(dotted: str) -> ModuleType:
    return importlib.import_module(dotted)


def reader(name: str) -> ModuleType:
    return module(READERS[name])


def section_modules() -> dict[str, ModuleType]:
    """Every registered section's module, readers first (the order checks and doctor run in)."""
    out = {}
    for table in (READERS, OUTPUTS):
        for dotted in table.values():
            mod = module(dotted)
            out[mod.SECTION] = mod
    return out


def build_outputs(ctx: "RunContext") -> list:
    """Every output the settings ask for: the reader backend's own (the hub's LEDs),
    then each registered output section's."""
    settings = ctx.settings
    mods = [reader(settings.backend)] + [module(dotted) for dotted in OUTPUTS.values()]
    outs: list = []
    for mod in mods:
        make = getattr(mod, "outputs", None)
        if make is not None:
            outs += make(settings.section(mod.SECTION), ctx)
    return outs


def run_doctor(settings, doc) -> None:
    """Each section's own doctor checks, the reader backend's first."""
    mods = [reader(settings.backend)] + [module(dotted) for dotted in OUTPUTS.values()]
    for mod in mods:
        mod.doctor(settings.section(mod.SECTION), doc, settings)


@dataclass
class RunContext:
    """What a backend or output may use when it is built for a run (or an enrolment)."""

    settings: Any
    clock: Callable[[], float]
    deck: Any = None
    stream: Any = None                 # the terminal (standard output unless a test passes one)
    skip: int = 0                      # table events already in the resumed log (the simulator skips them)
    session: str = ""                  # the session folder's name
    link: Any = None                   # the hub link, once the hub backend made it
    service: Any = None                # the table service (the web page enters control lines with it)
    _factory: Any = field(default=None, repr=False)
    _factory_made: bool = False

    @property
    def pins(self):
        """The GPIO pin factory, made at first use (None when nothing needs GPIO)."""
        if not self._factory_made:
            from . import gpio
            self._factory = gpio.pin_factory(self.settings)
            self._factory_made = True
        return self._factory

    def close_pins(self) -> None:
        if self._factory is not None:
            self._factory.close()
