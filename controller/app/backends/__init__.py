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
from typing import Any, Callable, Iterable

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


# output sections that build nothing unless the config file has them: their modules (and what
# those import: the web page's PIN and server, the MQTT client) are not loaded otherwise, so a
# table without [web]/[mqtt] restarts without them (start to ready)
ONLY_WHEN_CONFIGURED = frozenset({"web", "mqtt"})


def section_names() -> tuple[str, ...]:
    """Every registered section, readers first, without importing a module (each module's
    ``SECTION`` is the name it is registered under)."""
    return tuple(READERS) + tuple(OUTPUTS)


def module(dotted: str) -> ModuleType:
    return importlib.import_module(dotted)


def reader(name: str) -> ModuleType:
    return module(READERS[name])


def section_modules(present: Iterable[str] | None = None, backend: str | None = None
                    ) -> dict[str, ModuleType]:
    """Every registered section's module, readers first (the order checks and doctor run in).

    With ``present`` (the sections a config file has) and ``backend`` (the reader it
    chose), the sections that cannot matter are left out and not imported: another
    reader's that the file lacks (its defaults claim nothing), and the
    :data:`ONLY_WHEN_CONFIGURED` ones it lacks.
    """
    present = None if present is None else frozenset(present)
    out = {}
    for table in (READERS, OUTPUTS):
        for name, dotted in table.items():
            if present is not None and name not in present and (
                    name in ONLY_WHEN_CONFIGURED or (table is READERS and name != backend)):
                continue
            mod = module(dotted)
            out[mod.SECTION] = mod
    return out


def section_module(name: str) -> ModuleType:
    """The module owning section ``name`` (KeyError when none does)."""
    return module(READERS[name] if name in READERS else OUTPUTS[name])


def build_outputs(ctx: "RunContext") -> list:
    """Every output the settings ask for: the reader backend's own (the hub's LEDs),
    then each registered output section's (those of :data:`ONLY_WHEN_CONFIGURED` only
    when the config has their section)."""
    settings = ctx.settings
    mods = [reader(settings.backend)] + [module(dotted) for name, dotted in OUTPUTS.items()
                                         if name not in ONLY_WHEN_CONFIGURED or name in settings.present]
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
