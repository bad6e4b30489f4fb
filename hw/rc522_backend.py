"""Where the RC522 readers' SPI comes from, and the ``mfrc522`` driver loaded for each reader.

:func:`default_backend` picks the SPI backend as gpiozero picks a pin factory:
:class:`RealBackend` imports ``spidev`` (and ``RPi.GPIO`` through the pin factory)
only when a reader is opened; :class:`FakeBackend` gives the emulated chips of
:mod:`hw.rc522_chip` and a :class:`hw.pins.MockFactory` on one virtual clock.
``$PREFTABLE_SPI_BACKEND`` chooses, never the pin factory (mock pins on a Pi still
drive real readers).

:func:`load_driver` gives each reader a private copy of ``mfrc522.MFRC522``
whose ``RPi.GPIO`` and ``spidev`` imports are the backend's: the package imports
both at module level, so this is the one way to hand each reader its own scoped
pins and bus without patching ``sys.modules`` or forking the package (why the
frames are then sent by :mod:`hw.rc522` itself is said there).
"""

from __future__ import annotations

import builtins
import functools
import importlib
import importlib.util
import os
import threading
import time
import types
from typing import Any, Protocol

from controller.core.errors import ConfigError, HardwareError

from .pins import PinFactory


# ------------------------------------------------------------------------------------------ driver
@functools.lru_cache(maxsize=1)
def _driver_code() -> tuple[types.CodeType, str]:
    spec = importlib.util.find_spec("mfrc522")                 # finds, does not import, the package
    if spec is None or not spec.submodule_search_locations:
        raise HardwareError("the mfrc522 package is not installed: pip install 'preftable[pi]' "
                            "(or pip install --no-deps mfrc522==0.0.7 to use the emulated readers)")
    path = os.path.join(list(spec.submodule_search_locations)[0], "MFRC522.py")
    try:
        with open(path, encoding="utf-8") as fh:
            source = fh.read()
    except OSError as exc:
        raise HardwareError(f"cannot read the mfrc522 driver {path}: {exc.strerror}") from exc
    return compile(source, path, "exec"), path


def load_driver(gpio: Any, spidev: Any, name: str = "reader") -> types.ModuleType:
    """A private copy of ``mfrc522.MFRC522`` whose ``GPIO`` and ``spidev`` are the ones given."""
    code, path = _driver_code()
    real_import = builtins.__import__

    def _import(mod_name: str, globals_: Any = None, locals_: Any = None, fromlist: Any = (), level: int = 0):
        if level == 0 and mod_name in ("RPi", "RPi.GPIO"):
            return types.SimpleNamespace(GPIO=gpio)
        if level == 0 and mod_name == "spidev":
            return spidev
        return real_import(mod_name, globals_, locals_, fromlist, level)

    module = types.ModuleType(f"hw._mfrc522_{name}")
    module.__file__ = path
    module.__dict__["__builtins__"] = dict(vars(builtins), __import__=_import)
    exec(code, module.__dict__)
    return module


# ------------------------------------------------------------------------------------------ backends
class SpiBackend(Protocol):
    """Where readers come from: a ``spidev``-like module, a pin factory and a way to wait."""

    name: str

    def spidev(self) -> Any: ...
    def pins(self) -> PinFactory: ...
    def now(self) -> float: ...
    def sleep(self, seconds: float) -> None: ...
    def wire(self, bus: int, device: int, pin_rst: int, pins: PinFactory) -> None: ...


class RealBackend:
    """The Pi's ``/dev/spidev*`` and pins; ``spidev`` and ``RPi.GPIO`` imported on first use."""

    name = "spidev"

    def __init__(self, pins: PinFactory | None = None):
        self._pins = pins
        self._spidev: Any = None
        self._lock = threading.Lock()

    def spidev(self) -> Any:
        with self._lock:
            if self._spidev is None:
                try:
                    self._spidev = importlib.import_module("spidev")
                except ImportError as exc:
                    raise HardwareError(f"the spidev module cannot be imported ({exc}): install it on the "
                                        "Pi with pip install 'preftable[pi]'") from exc
            return self._spidev

    def pins(self) -> PinFactory:
        with self._lock:
            if self._pins is None:
                from .pins import RPiGPIOFactory
                self._pins = RPiGPIOFactory()
            return self._pins

    def now(self) -> float:
        return time.monotonic()

    def sleep(self, seconds: float) -> None:
        time.sleep(seconds)

    def wire(self, bus: int, device: int, pin_rst: int, pins: PinFactory) -> None:
        """Nothing to do: the reset pin is a real wire."""


class FakeBackend:
    """Emulated chips (:class:`hw.rc522_chip.FakeSpidev`) and mock pins sharing its virtual clock."""

    name = "fake"

    def __init__(self, spi: Any = None, pins: Any = None):
        from . import rc522_chip
        from .pins import MockFactory

        self.spi = spi if spi is not None else rc522_chip.FakeSpidev()
        self.clock = self.spi.clock
        self._pins = pins if pins is not None else MockFactory(clock=self.clock, spi_buses=(0, 1))

    def add_chip(self, bus: int, device: int, **kwargs: Any) -> Any:
        """An emulated chip (:class:`hw.rc522_chip.EmulatedMFRC522`) behind ``/dev/spidev<bus>.<device>``."""
        return self.spi.add_chip(bus, device, **kwargs)

    def spidev(self) -> Any:
        return self.spi

    def pins(self) -> PinFactory:
        return self._pins

    def now(self) -> float:
        return self.clock()

    def sleep(self, seconds: float) -> None:
        self.clock.advance(seconds)

    def wire(self, bus: int, device: int, pin_rst: int, pins: PinFactory) -> None:
        """Connect the emulated chip's NRSTPD to the mock reset pin."""
        chip = self.spi.chips.get((bus, device))
        fake = getattr(pins, "fake", None)
        if chip is not None and fake is not None:
            chip.watch_reset_pin(fake, pin_rst)


SPI_BACKEND_VAR = "PREFTABLE_SPI_BACKEND"
SPI_BACKENDS = ("spidev", "fake")


def default_backend(pins: PinFactory | None = None, spi: Any = None, *, name: str | None = None,
                    environ: "os._Environ[str] | dict[str, str] | None" = None) -> SpiBackend:
    """Where the readers are, chosen on its own -- never from the pin factory (mock pins on a Pi
    still drive real readers): emulated chips when ``spi`` (a fake spidev) is given or ``name``
    / ``$PREFTABLE_SPI_BACKEND`` says "fake", else the Pi's ``/dev/spidev*``."""
    env = os.environ if environ is None else environ
    chosen = (name or env.get(SPI_BACKEND_VAR) or ("fake" if spi is not None else "spidev")).strip().lower()
    if chosen not in SPI_BACKENDS:
        raise ConfigError(f"unknown SPI backend {chosen!r} (asked for {'by name' if name else 'in $' + SPI_BACKEND_VAR}); "
                          f"expected one of {', '.join(SPI_BACKENDS)}",
                          key=SPI_BACKEND_VAR if name is None else "spi_backend")
    if chosen == "fake":
        from .pins import MockFactory
        return FakeBackend(spi, pins if isinstance(pins, MockFactory) else None)
    return RealBackend(pins)


__all__ = ["SpiBackend", "RealBackend", "FakeBackend", "default_backend", "load_driver",
           "SPI_BACKEND_VAR", "SPI_BACKENDS"]
