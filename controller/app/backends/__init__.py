"""The registry of reader backends and outputs: each owns a config section.

Klipper's pattern: every module here reads and checks its own section of the
config file (unknown keys fatal, the key named), builds its event source or
its outputs, and runs its own ``doctor`` checks.  The registry is the two
tables below, module names only: nothing is imported until a config names
it, so the base install runs anywhere.  Adding a PN532 reader, a web page or
an MQTT publisher is one module plus one line here: ``run``, ``enroll``,
``doctor``, ``doctor --live`` and ``doctor --wiring`` ask the chosen module and never name
a backend.

gpiozero's pattern for the pins: every pin a section claims (``pins``) is handed
out by one pin factory chosen at run time (``[gpio] factory``), made before any
device and closed after the last; a device asks ``ctx.pins`` for its pins, and a
pin asked for twice is :class:`~controller.core.errors.PinInUse` naming the pin
and who holds it (every error is a :class:`~controller.core.errors.PreftableError`).

A module provides:

- ``SECTION``: the config section it owns (``[hub]``);
- ``parse(raw, game) -> config``: its section, validated (``parse({}, game)``
  gives the defaults); optional ``check(settings)`` for rules across sections,
  ``pins(config) -> [(owner, pin)]`` for the GPIO pins it claims and
  ``check_claimed(claimed, config)`` for a rule on every pin claimed (the SPI
  buses' pins);
- a reader: ``source(config, ctx)`` and ``enroll_source(config, ctx, zone, known)``,
  each a :class:`ReaderSource`; optional ``preflight(config, wait)`` (what must
  hold before ``run`` or ``enroll`` opens anything: the hub's port exists),
  ``live_readers(config, settings, pins, driver)`` (its readers opened for
  ``doctor --live`` on the pin factory ``pins``: a :class:`hw.check.LiveReaders`;
  ``driver``: their hardware, the tests' emulation), ``WIRE_PINS`` and ``wires(config)``
  (its reader boards' pins, and a :class:`~controller.app.wiring.Wire` from each pin of each
  reader to the Pi's header, for ``doctor --wiring``: none for readers not on the header) and
  ``SIMULATED = True`` (no real tags: no deck needed, no service in the way);
- an output: ``outputs(config, ctx) -> [subscriber]`` (an empty list when the
  config does not ask for it); the reader backend's own module may have one too
  (the hub's LEDs), built on its source (``ctx.source``);
- ``doctor(config, doctor, settings)``: findings on the doctor's report.
"""

from __future__ import annotations

import importlib
from contextlib import contextmanager
from dataclasses import dataclass, replace
from types import ModuleType
from typing import Any, Callable, Iterable, Iterator

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


def run_modules(settings) -> list[ModuleType]:
    """The modules a run is built from: the chosen reader backend's, then each output
    section's (those of :data:`ONLY_WHEN_CONFIGURED` only when the config has their section)."""
    return [reader(settings.backend)] + [module(dotted) for name, dotted in OUTPUTS.items()
                                         if name not in ONLY_WHEN_CONFIGURED or name in settings.present]


def claimed_pins(settings) -> list[tuple[str, int]]:
    """The GPIO pins this run drives: the chosen reader's and every output's (another
    reader's section in the file claims nothing that is driven)."""
    found: list[tuple[str, int]] = []
    for mod in run_modules(settings):
        pins = getattr(mod, "pins", None)
        if pins is not None:
            found += pins(settings.section(mod.SECTION))
    return found


@contextmanager
def open_pins(settings) -> Iterator[Any]:
    """The pin factory ``[gpio] factory`` chooses, made only when a pin is claimed (None:
    nothing of this run drives a GPIO), before any device asks it for a pin; closed (the
    pins it set up, and only those) after the last device let go."""
    factory = None
    if claimed_pins(settings):
        gpio = section_module("gpio")
        factory = gpio.factory(settings.section(gpio.SECTION))
    try:
        yield factory
    finally:
        if factory is not None:
            factory.close()


def simulated(settings) -> bool:
    """Whether the chosen reader reads no real tags (no deck needed, no service in the way)."""
    return getattr(reader(settings.backend), "SIMULATED", False)


def preflight(settings, *, wait: bool = False) -> None:
    """The chosen reader's checks before anything opens (``wait``: ``--wait`` was given)."""
    check = getattr(reader(settings.backend), "preflight", None)
    if check is not None:
        check(settings.readers, wait)


class ReaderSource:
    """What ``run``, ``enroll`` and the outputs ask of a reader backend's event source.

    ``start(sink)`` begins sending table events to ``sink`` (from its own thread), ``stop()``
    ends that.  ``link`` is the link to readers elsewhere whose state the board shows under
    it (``ready``, ``hub_info``, ``error``, ``url``; None: the readers need no link), and
    :meth:`lying` what lies on the readers as the source starts, which an enrolment must see
    lifted before it takes a tag."""

    link: Any = None

    def start(self, sink) -> None:
        raise NotImplementedError

    def stop(self) -> None:
        raise NotImplementedError

    def lying(self, timeout: float) -> list[str] | None:
        """The zones a tag lies on, once the source knows (within ``timeout`` seconds); None
        when it cannot tell."""
        return None


@dataclass(frozen=True)
class RunContext:
    """What a backend or output may use when it is built for a run (or an enrolment).

    Frozen: everything is known before the first thing is built, and the reader's source,
    once built, comes in a new context (:func:`with_reader`), so an output cannot be built
    before the source it draws on."""

    settings: Any
    clock: Callable[[], float]
    pins: Any = None                   # the pin factory (None when nothing of the run drives a GPIO)
    deck: Any = None
    stream: Any = None                 # the terminal (standard output unless a test passes one)
    skip: int = 0                      # table events already in the resumed log (the simulator skips them)
    session: str = ""                  # the session folder's name
    service: Any = None                # the table service (the web page enters control lines with it)
    source: ReaderSource | None = None  # the reader backend's source, once built

    @property
    def link(self):
        """The reader source's link (the hub's), or None."""
        return None if self.source is None else self.source.link


def with_reader(ctx: RunContext, enrolling: tuple[str | None, Iterable[str]] | None = None) -> RunContext:
    """``ctx`` with the chosen reader backend's source built: for a run, or with
    ``enrolling`` = (zone, the UIDs known) for an enrolment."""
    settings = ctx.settings
    mod = reader(settings.backend)
    if enrolling is None:
        source = mod.source(settings.readers, ctx)
    else:
        source = mod.enroll_source(settings.readers, ctx, *enrolling)
    return replace(ctx, source=source)


def build_outputs(ctx: RunContext) -> list:
    """Every output the settings ask for: the reader backend's own (the hub's LEDs), then
    each registered output section's (those of :data:`ONLY_WHEN_CONFIGURED` only when the
    config has their section).  ``ctx`` carries the reader's source (:func:`with_reader`)."""
    if ctx.source is None:
        raise ValueError("build the reader's source first (with_reader): the outputs may draw on it")
    settings = ctx.settings
    outs: list = []
    for mod in run_modules(settings):
        make = getattr(mod, "outputs", None)
        if make is not None:
            outs += make(settings.section(mod.SECTION), ctx)
    return outs


def run_doctor(settings, doc) -> None:
    """Each section's own doctor checks, the reader backend's first."""
    mods = [reader(settings.backend)] + [module(dotted) for dotted in OUTPUTS.values()]
    for mod in mods:
        mod.doctor(settings.section(mod.SECTION), doc, settings)
