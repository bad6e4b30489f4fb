"""Pin factories: who may drive which GPIO pin, chosen at run time (gpiozero style).

A device asks a :class:`PinFactory` for its pins (:meth:`PinFactory.output_pin`,
:meth:`PinFactory.input_pin`); the factory reserves each pin for its owner, so a
second device on the same pin gets :class:`controller.core.errors.PinInUse` naming the
pin and its holder.  :meth:`PinFactory.close` cleans up only the pins this
factory set up -- never the global ``GPIO.cleanup()``, which would also free the
pins of other programs and drivers.

:class:`RPiGPIOFactory` drives the real pins through ``RPi.GPIO`` (imported
when it is built); :class:`MockFactory` drives a :class:`hw.fake_gpio.FakeGPIO`.
:func:`default_factory` picks one: on a Raspberry Pi (its device tree's model,
or ``/dev/gpiomem``) always the real pins -- on a Pi 5 ``RPi.GPIO`` must be the
``rpi-lgpio`` drop-in -- and never silently mock pins there; off a Pi, mock
pins with a warning.  Pins are BCM GPIO numbers 0-27.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import importlib.util
import logging
import os
import re
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Mapping

from controller.core.errors import ConfigError, HardwareError, PinInUse, PreftableError

from .fake_gpio import FakeGPIO

log = logging.getLogger(__name__)

BCM_PINS = range(0, 28)
ENV_VAR = "PREFTABLE_PIN_FACTORY"
GPIOMEM = "/dev/gpiomem"
FACTORY_NAMES = ("rpigpio", "mock")

HINT_INSTALL = ("install it on the Pi with pip install 'preftable[pi]' (on a Raspberry Pi 5 'preftable[pi5]' "
                "and pip install --no-deps mfrc522==0.0.7, as systemd/install.sh does), "
                f"or set {ENV_VAR}=mock to simulate the pins")
HINT_ACCESS = ("no access to /dev/gpiomem: add the user to the gpio group "
               "(sudo usermod -aG gpio $USER, then log in again) or run as root")
HINT_ACCESS_IN_GROUP = ("no access to /dev/gpiomem although the user is in the gpio group: under systemd the "
                        "unit must allow the device by its /proc/devices name (DeviceAllow=char-*gpiomem* rw "
                        "covers rpi-gpiomem, bcm2835-gpiomem and rp1-gpiomem; see systemctl cat preftable), else check "
                        "that /dev/gpiomem exists")
HINT_NOT_PI = f"this is not a Raspberry Pi: set {ENV_VAR}=mock to simulate the pins"
LGPIO_MINIMUM = (0, 6)          # the rpi-lgpio pyproject.toml's [pi5] extra asks for
PI5_FIX = "pip uninstall -y RPi.GPIO; pip install --force-reinstall 'rpi-lgpio>=0.6'"
HINT_PI5 = f"RPi.GPIO cannot drive a Raspberry Pi 5's pins: install the lgpio drop-in instead ({PI5_FIX})"
MODEL_FILES = ("/proc/device-tree/model", "/sys/firmware/devicetree/base/model")
# Boards with the BCM2712 and its RP1 I/O chip, whose pins RPi.GPIO cannot reach.
PI5_MODELS = ("Raspberry Pi 5", "Raspberry Pi Compute Module 5")     # "Raspberry Pi 500" too


def is_pi5(model: str | None) -> bool:
    """Whether the device tree's model is a BCM2712 board (Pi 5, Pi 500, CM5)."""
    return model is not None and model.startswith(PI5_MODELS)


@dataclass(frozen=True)
class GpioLibrary:
    """Which package answers ``import RPi.GPIO`` -- found on disk, never imported (importing the
    original on a Pi 5 fails, and either one touches the pins).

    RPi.GPIO and rpi-lgpio both install ``RPi/GPIO``: the original's ``__init__`` loads its C part
    (``RPi._GPIO``), rpi-lgpio's imports ``lgpio``.  With both installed the one installed last
    owns the files and uninstalling either breaks the other."""

    name: str | None                # "RPi.GPIO" | "rpi-lgpio" | None: not installed
    version: str | None = None      # of the distribution that provides it
    path: str | None = None
    both: bool = False

    def problem(self, model: str | None) -> tuple[str, str] | None:
        """(what is wrong, the fix) on the board ``model``, or None when it drives its pins."""
        if self.name is None:
            return None
        if self.both:
            return ("RPi.GPIO and rpi-lgpio are both installed and write the same RPi/GPIO files "
                    f"(now: {self.name})", PI5_FIX if is_pi5(model) else
                    "pip uninstall -y rpi-lgpio; pip install --force-reinstall RPi.GPIO")
        if self.name == "RPi.GPIO" and is_pi5(model):
            return (f"RPi.GPIO {self.version or ''} cannot drive the pins of a {model} (RP1): it stops with "
                    "\"Cannot determine SOC peripheral base address\"", PI5_FIX)
        if self.name == "rpi-lgpio" and _version_tuple(self.version) < LGPIO_MINIMUM:
            return (f"rpi-lgpio {self.version} is older than the 0.6 preftable asks for",
                    "pip install --upgrade 'rpi-lgpio>=0.6'")
        return None


def _version_tuple(text: str | None) -> tuple[int, ...]:
    parts = []
    for part in (text or "0").split("."):
        digits = "".join(ch for ch in part if ch.isdigit())
        if not digits:
            break
        parts.append(int(digits))
    return tuple(parts)


def gpio_library(find_spec: Callable[[str], Any] = importlib.util.find_spec,
                 version: Callable[[str], str] = importlib.metadata.version) -> GpioLibrary:
    """The ``RPi.GPIO`` installed here, by the text of its ``RPi/GPIO`` module (not imported)."""
    def installed(dist: str) -> str | None:
        try:
            return version(dist)
        except importlib.metadata.PackageNotFoundError:
            return None

    spec = find_spec("RPi")
    found = None
    for folder in getattr(spec, "submodule_search_locations", None) or ():
        for candidate in (os.path.join(folder, "GPIO", "__init__.py"), os.path.join(folder, "GPIO.py")):
            if os.path.isfile(candidate):
                found = candidate
                break
        if found:
            break
    original, lgpio = installed("RPi.GPIO"), installed("rpi-lgpio")
    if found is None:
        return GpioLibrary(None)
    try:
        with open(found, encoding="utf-8", errors="replace") as fh:
            text = fh.read()
    except OSError:
        text = ""
    name = "rpi-lgpio" if re.search(r"^\s*import lgpio\b", text, re.M) else "RPi.GPIO"
    return GpioLibrary(name, lgpio if name == "rpi-lgpio" else original, found,
                       both=original is not None and lgpio is not None)


def board_model(paths: Iterable[str] = MODEL_FILES) -> str | None:
    """The device tree's model ("Raspberry Pi 5 Model B Rev 1.0"), or None (not a Pi, or unknown)."""
    for path in paths:
        try:
            with open(path, "rb") as fh:
                return fh.read().rstrip(b"\0\n").decode("ascii", "replace") or None
        except OSError:
            continue
    return None


def _in_group(name: str) -> bool:
    try:
        import grp
        return grp.getgrnam(name).gr_gid in set(os.getgroups()) | {os.getegid()}
    except (ImportError, KeyError):
        return False


class InvalidPin(ConfigError):
    """A pin number that is not a BCM GPIO 0-27; the message names it and its owner."""


def check_pin(pin: object, owner: str | None = None) -> int:
    """Return ``pin`` if it is a BCM GPIO number 0-27, else raise :class:`InvalidPin`."""
    if isinstance(pin, bool) or not isinstance(pin, int) or pin not in BCM_PINS:
        who = f" for {owner}" if owner else ""
        raise InvalidPin(f"GPIO pin {pin!r}{who} is not a BCM GPIO number 0-27", key=owner)
    return pin


def explain(exc: BaseException, pin: int | None = None, owner: str | None = None) -> HardwareError:
    """Turn an ImportError/OSError/RuntimeError of ``RPi.GPIO`` into a one-line HardwareError."""
    where = ""
    if pin is not None:
        where = f"GPIO{pin} ({owner}): " if owner else f"GPIO{pin}: "
    text = str(exc).strip() or type(exc).__name__
    low = text.lower()
    if isinstance(exc, ImportError):
        return HardwareError(f"{where}RPi.GPIO cannot be imported ({text}): {HINT_INSTALL}")
    if isinstance(exc, PermissionError) or "no access" in low or "/dev/mem" in low \
            or "/dev/gpiomem" in low or "permission" in low:
        hint = HINT_ACCESS_IN_GROUP if _in_group("gpio") else HINT_ACCESS
        return HardwareError(f"{where}{hint} ({text})")
    if "raspberry pi" in low or "not running on a rpi" in low or "soc peripheral" in low:
        model = board_model() or ""
        if model.startswith("Raspberry Pi"):                # a Pi 5 (or newer) that RPi.GPIO does not know
            return HardwareError(f"{where}{model}: {HINT_PI5} ({text})")
        return HardwareError(f"{where}{HINT_NOT_PI} ({text})")
    if isinstance(exc, OSError):
        return HardwareError(f"{where}{exc.strerror or text}: check the wiring and that no other program holds the pin")
    return HardwareError(f"{where}RPi.GPIO failed ({text}): check that no other program holds the pin")


class OutputPin:
    """One pin set up as an output.  :meth:`set` writes only when the level changes."""

    def __init__(self, factory: "PinFactory", pin: int, owner: str, initial: bool):
        self.factory, self.pin, self.owner = factory, pin, owner
        self._state = bool(initial)
        self._closed = False

    @property
    def state(self) -> bool:
        """The level last written (True: HIGH)."""
        return self._state

    def set(self, level: bool, *, force: bool = False) -> bool:
        """Drive the pin HIGH/LOW; returns whether it was written."""
        level = bool(level)
        if self._closed:
            raise HardwareError(f"GPIO{self.pin} ({self.owner}) is closed")
        if level == self._state and not force:
            return False
        self.factory._call(self.pin, self.owner, self.factory.gpio.output, self.pin,
                           self.factory.gpio.HIGH if level else self.factory.gpio.LOW)
        self._state = level
        return True

    def close(self) -> None:
        """Drive LOW, return the pin to an input and release it."""
        if self._closed:
            return
        try:
            self.set(False)
        finally:
            self._closed = True
            self.factory._free(self.pin)


class InputPin:
    """One pin set up as an input, optionally with the internal pull-up."""

    def __init__(self, factory: "PinFactory", pin: int, owner: str, pull_up: bool):
        self.factory, self.pin, self.owner, self.pull_up = factory, pin, owner, pull_up
        self._closed = False

    def read(self) -> bool:
        """The raw level (True: HIGH)."""
        if self._closed:
            raise HardwareError(f"GPIO{self.pin} ({self.owner}) is closed")
        return bool(self.factory._call(self.pin, self.owner, self.factory.gpio.input, self.pin))

    @property
    def is_active(self) -> bool:
        """True when the switch is closed: LOW with the pull-up (wired to ground), else HIGH."""
        return self.read() != self.pull_up

    def close(self) -> None:
        """Return the pin to a plain input and release it."""
        if not self._closed:
            self._closed = True
            self.factory._free(self.pin)


class PinFactory:
    """Hands out pins of a ``RPi.GPIO``-like module (``.gpio``) and remembers who holds each."""

    name = "base"

    def __init__(self, gpio: Any):
        self.gpio = gpio
        self._lock = threading.RLock()
        self._owners: dict[int, str] = {}
        self._set_up: set[int] = set()
        self._shared: dict[int, str] = {}          # pin -> the line's name, for pins several owners hold
        self._holders: dict[int, set[str]] = {}    # shared pin -> who holds it now
        mode = self._call(None, None, gpio.getmode)
        if mode is None:
            self._call(None, None, gpio.setmode, gpio.BCM)
        elif mode != gpio.BCM:
            raise HardwareError("RPi.GPIO is already in BOARD numbering; preftable needs BCM: "
                                "build the pin factory before any other GPIO user")

    # ----- reservations -----------------------------------------------------------------
    def share(self, pin: int, line: str) -> None:
        """Declare ``pin`` one line that several owners hold at once (readers on one reset line):
        each may reserve and set it up; it is cleaned up when the last lets go, and while more
        than one holds it, it is never driven LOW (that would reset the neighbours too)."""
        check_pin(pin, line)
        with self._lock:
            holder = self._owners.get(pin)
            if holder is not None and pin not in self._shared:
                raise PinInUse(f"GPIO{pin} is already in use by {holder} (asked to be shared as {line})")
            self._shared[pin] = line
            self._holders.setdefault(pin, set())

    def holders(self, pin: int) -> frozenset[str]:
        """Who holds a shared ``pin`` now (empty for a pin that is not shared)."""
        with self._lock:
            return frozenset(self._holders.get(pin, ()))

    def reserve(self, pin: int, owner: str) -> int:
        """Reserve ``pin`` for ``owner``; :class:`PinInUse` if someone holds it (a shared line:
        another of its holders joins)."""
        check_pin(pin, owner)
        with self._lock:
            if pin in self._shared:
                self._holders[pin].add(owner)
                self._owners[pin] = self._shared[pin]
                log.debug("GPIO%d (%s) held by %s too", pin, self._shared[pin], owner)
                return pin
            holder = self._owners.get(pin)
            if holder is not None:
                raise PinInUse(f"GPIO{pin} is already in use by {holder} (asked for by {owner})")
            self._owners[pin] = owner
        log.debug("GPIO%d reserved by %s", pin, owner)
        return pin

    def release(self, pin: int, owner: str | None = None) -> None:
        """Forget the reservation of ``pin`` (no-op if not reserved); of a shared line, ``owner``'s."""
        with self._lock:
            if pin in self._shared and owner is not None:
                self._holders[pin].discard(owner)
                if self._holders[pin]:
                    return
            self._owners.pop(pin, None)

    def owner(self, pin: int) -> str | None:
        """Who holds ``pin``, or None."""
        return self._owners.get(pin)

    @property
    def reserved(self) -> dict[int, str]:
        """A copy of pin -> owner."""
        with self._lock:
            return dict(self._owners)

    # ----- pins ---------------------------------------------------------------------------
    def output_pin(self, pin: int, owner: str, initial: bool = False) -> OutputPin:
        """Reserve ``pin`` and set it up as an output at ``initial``."""
        self.reserve(pin, owner)
        try:
            self._setup(pin, owner, self.gpio.OUT, initial=self.gpio.HIGH if initial else self.gpio.LOW)
        except BaseException:
            self.release(pin)
            raise
        return OutputPin(self, pin, owner, initial)

    def input_pin(self, pin: int, owner: str, pull_up: bool = True) -> InputPin:
        """Reserve ``pin`` and set it up as an input (with the internal pull-up by default)."""
        self.reserve(pin, owner)
        try:
            self._setup(pin, owner, self.gpio.IN,
                        pull_up_down=self.gpio.PUD_UP if pull_up else self.gpio.PUD_OFF)
        except BaseException:
            self.release(pin)
            raise
        return InputPin(self, pin, owner, pull_up)

    def scoped_gpio(self, owner: str) -> "ScopedGPIO":
        """A ``RPi.GPIO``-like view for a third-party driver (e.g. ``mfrc522``): pins it sets up are
        reserved for ``owner`` and its ``cleanup()`` frees only those."""
        return ScopedGPIO(self, owner)

    def close(self) -> None:
        """Clean up the pins this factory set up, and only those; forget all reservations."""
        with self._lock:
            pins = sorted(self._set_up)
            self._set_up.clear()
            self._owners.clear()
            self._shared.clear()
            self._holders.clear()
        if pins:
            self._call(None, None, self.gpio.cleanup, pins)
            log.debug("cleaned up GPIO %s", pins)

    def __enter__(self) -> "PinFactory":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ----- internals ------------------------------------------------------------------------
    def _setup(self, pin: int, owner: str, direction: int, *args: Any, **kwargs: Any) -> None:
        self._call(pin, owner, self.gpio.setup, pin, direction, *args, **kwargs)
        with self._lock:
            self._set_up.add(pin)

    def _free(self, pin: int, owner: str | None = None) -> None:
        with self._lock:
            if pin in self._shared and owner is not None:
                self._holders[pin].discard(owner)
                if self._holders[pin]:
                    return                      # the others still hold the line up
            was_set_up = pin in self._set_up
            self._set_up.discard(pin)
            self._owners.pop(pin, None)
        if was_set_up:
            self._call(pin, None, self.gpio.cleanup, pin)

    def _holds_up(self, pin: int, owner: str) -> bool:
        """Whether ``pin`` is a shared line someone besides ``owner`` holds."""
        with self._lock:
            return bool(self._holders.get(pin, set()) - {owner})

    def _call(self, pin: int | None, owner: str | None, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except PreftableError:
            raise
        except (RuntimeError, OSError) as exc:
            raise explain(exc, pin, owner) from exc


class ScopedGPIO:
    """``RPi.GPIO`` as seen by one owner: ``setup`` reserves, ``cleanup()`` frees only its own pins.

    Numbering is BCM (the factory's); ``setmode(GPIO.BOARD)`` raises ValueError as RPi.GPIO would.
    """

    def __init__(self, factory: PinFactory, owner: str):
        self._factory = factory
        self._owner = owner
        self._mine: set[int] = set()

    def __getattr__(self, name: str) -> Any:        # constants, input, output, gpio_function...
        return getattr(self._factory.gpio, name)

    def setmode(self, mode: int) -> None:
        self._factory.gpio.setmode(mode)

    def setup(self, channel: int | Iterable[int], direction: int, *args: Any, **kwargs: Any) -> None:
        channels = list(channel) if isinstance(channel, (list, tuple)) else [channel]
        new = [c for c in channels if c not in self._mine]
        for c in new:
            try:
                self._factory.reserve(c, self._owner)
            except BaseException:
                for done in new[:new.index(c)]:
                    self._mine.discard(done)
                    self._factory.release(done, self._owner)
                raise
            self._mine.add(c)
        try:
            for c in channels:
                self._factory._setup(c, self._owner, direction, *args, **kwargs)
        except BaseException:
            for c in new:
                self._mine.discard(c)
                self._factory.release(c, self._owner)
            raise

    def output(self, channel: int | Iterable[int], value: Any) -> None:
        channels = list(channel) if isinstance(channel, (list, tuple)) else [channel]
        for c in channels:
            if c not in self._mine and self._factory.owner(c) is not None:
                raise PinInUse(f"GPIO{c} is in use by {self._factory.owner(c)} "
                               f"(written to by {self._owner})")
        if not value and any(self._factory._holds_up(c, self._owner) for c in channels):
            # a reset pulse on a shared reset line would reset every reader on it mid-deal (their
            # cards would read as lifted): the line stays up; the reader's init soft-resets it
            log.debug("GPIO%s held HIGH: shared with %s", channels, sorted(
                set().union(*(self._factory.holders(c) for c in channels)) - {self._owner}))
            return
        self._factory.gpio.output(channel, value)

    def cleanup(self, channel: int | Iterable[int] | None = None) -> None:
        if channel is None:
            channels = sorted(self._mine)
        else:
            channels = list(channel) if isinstance(channel, (list, tuple)) else [channel]
        for c in channels:
            if c in self._mine:
                self._mine.discard(c)
                self._factory._free(c, self._owner)


class MockFactory(PinFactory):
    """Pins of a :class:`FakeGPIO` (``.fake``): records outputs, lets tests drive inputs."""

    name = "mock"

    def __init__(self, clock: Callable[[], float] = time.monotonic, *, fake: FakeGPIO | None = None,
                 spi_buses: tuple[int, ...] = ()):
        self.fake = fake if fake is not None else FakeGPIO(clock=clock, spi_buses=spi_buses)
        super().__init__(self.fake)


class RPiGPIOFactory(PinFactory):
    """The Pi's real pins through ``RPi.GPIO``, imported here; failures become :class:`HardwareError`."""

    name = "rpigpio"

    def __init__(self) -> None:
        try:
            gpio = importlib.import_module("RPi.GPIO")
        except (ImportError, RuntimeError, OSError) as exc:
            raise explain(exc) from exc
        super().__init__(gpio)


def default_factory(name: str | None = None, *, environ: Mapping[str, str] | None = None,
                    gpiomem: str = GPIOMEM, clock: Callable[[], float] = time.monotonic,
                    model_files: Iterable[str] = MODEL_FILES) -> PinFactory:
    """The pin factory to use: ``name`` ("rpigpio"/"mock"), else ``$PREFTABLE_PIN_FACTORY``,
    else rpigpio on a Raspberry Pi (the device tree says so, or ``/dev/gpiomem`` exists; on a
    Pi 5 ``RPi.GPIO`` must be the rpi-lgpio drop-in), else mock -- with a warning.  On a Pi it
    never falls back to mock pins: a failing RPi.GPIO is an error that says what to install."""
    env = os.environ if environ is None else environ
    model = board_model(model_files)
    if name is not None:
        chosen, why = name, "asked for"
    elif env.get(ENV_VAR):
        chosen, why = env[ENV_VAR], f"from ${ENV_VAR}"
    elif model is not None and model.startswith("Raspberry Pi"):
        chosen, why = "rpigpio", f"this is a {model}"
    elif os.path.exists(gpiomem):
        chosen, why = "rpigpio", f"{gpiomem} exists"
    else:
        chosen, why = "mock", f"no {gpiomem} and no Raspberry Pi model: simulating the pins"
        log.warning("pin factory: mock (%s); LEDs, buzzer, buttons and reset lines do nothing", why)
    key = chosen.strip().lower()
    if key not in FACTORY_NAMES:
        raise ConfigError(f"unknown pin factory {chosen!r} ({why}); expected one of "
                          f"{', '.join(FACTORY_NAMES)}", key=ENV_VAR if name is None else "pin_factory")
    log.info("pin factory: %s (%s)", key, why)
    return RPiGPIOFactory() if key == "rpigpio" else MockFactory(clock=clock)


__all__ = ["BCM_PINS", "ENV_VAR", "GpioLibrary", "gpio_library", "is_pi5", "InvalidPin", "check_pin", "explain", "OutputPin", "InputPin",
           "PinFactory", "ScopedGPIO", "MockFactory", "RPiGPIOFactory", "default_factory"]
