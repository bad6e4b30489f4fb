"""A stand-in for the ``RPi.GPIO`` module, for tests and the simulated table.

:class:`FakeGPIO` has the module's attribute API and raises the same kinds of
errors with the same messages, so unmodified code (the ``mfrc522`` driver
included) runs against it.  It records every output level with a timestamp
from an injectable clock, records ``cleanup`` calls, and lets tests drive the
inputs (``set_input``, ``press``/``release``).

Introspection (``history``, ``level``, ``set_input``, ``press`` ...) always uses
BCM GPIO numbers, whichever numbering mode the code under test chose; in BCM
mode those are the channels it passed.  ``BOARD_TO_BCM`` maps header pins.

To put it where ``import RPi.GPIO as GPIO`` finds it::

    fake = FakeGPIO()
    for name, module in fake.as_modules().items():
        monkeypatch.setitem(sys.modules, name, module)
"""

from __future__ import annotations

import threading
import time
import types
import warnings
from typing import Callable

from .header import SPI_BUS_PINS, spi_pin_user

# Constants, with the values of RPi.GPIO 0.7.
BOARD = 10
BCM = 11
OUT = 0
IN = 1
LOW = 0
HIGH = 1
PUD_OFF = 20
PUD_DOWN = 21
PUD_UP = 22
RISING = 31
FALLING = 32
BOTH = 33
HARD_PWM = 43
SERIAL = 40
I2C = 42
SPI = 41
UNKNOWN = -1
VERSION = "0.7.1"
RPI_INFO = {"P1_REVISION": 3, "REVISION": "a02082", "TYPE": "Pi 3 Model B",
            "MANUFACTURER": "Sony", "PROCESSOR": "BCM2837", "RAM": "1G"}
RPI_REVISION = 3

# 40-pin header: physical pin -> BCM GPIO (power and ground pins absent).
BOARD_TO_BCM: dict[int, int] = {
    3: 2, 5: 3, 7: 4, 8: 14, 10: 15, 11: 17, 12: 18, 13: 27, 15: 22, 16: 23, 18: 24,
    19: 10, 21: 9, 22: 25, 23: 11, 24: 8, 26: 7, 27: 0, 28: 1, 29: 5, 31: 6, 32: 12,
    33: 13, 35: 19, 36: 16, 37: 26, 38: 20, 40: 21,
}
# What a freshly booted Pi with SPI, I2C and the serial port enabled has on its pins.
DEFAULT_ALT_FUNCTIONS: dict[int, int] = {
    2: I2C, 3: I2C, **{pin: SPI for pin in SPI_BUS_PINS[0]}, 14: SERIAL, 15: SERIAL,
}

# RPi.GPIO's own messages.
MSG_NO_MODE = ("Please set pin numbering mode using GPIO.setmode(GPIO.BOARD) "
               "or GPIO.setmode(GPIO.BCM)")
MSG_BAD_CHANNEL = "The channel sent is invalid on a Raspberry Pi"
MSG_NOT_OUTPUT = "The GPIO channel has not been set up as an OUTPUT"
MSG_NOT_SETUP = "You must setup() the GPIO channel first"
MSG_IN_USE = ("This channel is already in use, continuing anyway.  "
              "Use GPIO.setwarnings(False) to disable warnings.")
MSG_NOTHING_TO_CLEAN = ("No channels have been set up yet - nothing to clean up!  "
                        "Try cleaning up at the end of your program instead!")
MSG_NO_ACCESS = "No access to /dev/mem.  Try running as root!"

_CONSTANTS = ("BOARD", "BCM", "OUT", "IN", "LOW", "HIGH", "PUD_OFF", "PUD_DOWN", "PUD_UP",
              "RISING", "FALLING", "BOTH", "HARD_PWM", "SERIAL", "I2C", "SPI", "UNKNOWN",
              "VERSION", "RPI_REVISION")
_FUNCTIONS = ("setmode", "getmode", "setwarnings", "setup", "output", "input", "cleanup",
              "gpio_function")

Clock = Callable[[], float]


def _channels(channel_or_list: object) -> list[int]:
    if isinstance(channel_or_list, (list, tuple)):
        items = list(channel_or_list)
    else:
        items = [channel_or_list]
    for item in items:
        if isinstance(item, bool) or not isinstance(item, int):
            raise ValueError("Channel must be an integer or list/tuple of integers")
    return items


def _level(value: object) -> int:
    if not isinstance(value, int):   # bool is an int, as in RPi.GPIO
        raise ValueError("Value must be an integer/boolean or a list/tuple of integers/booleans")
    return HIGH if value else LOW


class FakeGPIO:
    """Behaves like the ``RPi.GPIO`` module; one instance is one Pi's pins.

    ``clock`` stamps the records; ``alt_functions`` gives pins that start in an
    alternate function (``gpio_function`` reports it and ``setup`` warns, as on a
    real Pi); ``no_access=True`` makes ``setup`` fail like RPi.GPIO without
    ``/dev/gpiomem`` rights.
    """

    BOARD, BCM, OUT, IN, LOW, HIGH = BOARD, BCM, OUT, IN, LOW, HIGH
    PUD_OFF, PUD_DOWN, PUD_UP = PUD_OFF, PUD_DOWN, PUD_UP
    RISING, FALLING, BOTH = RISING, FALLING, BOTH
    HARD_PWM, SERIAL, I2C, SPI, UNKNOWN = HARD_PWM, SERIAL, I2C, SPI, UNKNOWN
    VERSION, RPI_REVISION = VERSION, RPI_REVISION

    def __init__(self, clock: Clock = time.monotonic, *,
                 alt_functions: dict[int, int] | None = None, no_access: bool = False,
                 spi_buses: tuple[int, ...] = ()):
        self.clock = clock
        # SPI buses enabled in config.txt (0: dtparam=spi=on, 1: dtoverlay=spi1-3cs): their pins
        # belong to the SPI controller and setup() refuses them (a real Pi would silently break the bus).
        self.spi_buses = tuple(spi_buses)
        self.RPI_INFO = dict(RPI_INFO)
        self.no_access = no_access
        self.history: list[tuple[float, int, int]] = []          # (t, bcm pin, level) per output
        self.cleanups: list[tuple[float, tuple[int, ...] | None]] = []   # None: the global cleanup
        self._lock = threading.RLock()
        self._mode: int | None = None
        self._warnings = True
        self._direction: dict[int, int] = {}      # bcm -> IN/OUT, pins set up by "this program"
        self._pull: dict[int, int] = {}           # bcm -> PUD_*
        self._out: dict[int, int] = {}           # bcm -> output latch
        self._driven: dict[int, int] = {}        # bcm -> level forced from outside
        self._alt = dict(DEFAULT_ALT_FUNCTIONS if alt_functions is None else alt_functions)

    # ----- the RPi.GPIO API -------------------------------------------------------------
    def setmode(self, mode: int) -> None:
        """Choose BOARD or BCM numbering (once; the same mode again is fine)."""
        with self._lock:
            if mode not in (BOARD, BCM):
                raise ValueError("An invalid mode was passed to setmode()")
            if self._mode is not None and mode != self._mode:
                raise ValueError("A different mode has already been set!")
            self._mode = mode

    def getmode(self) -> int | None:
        return self._mode

    def setwarnings(self, flag: object) -> None:
        self._warnings = bool(flag)

    def setup(self, channel: object, direction: int, pull_up_down: int = PUD_OFF,
              initial: int = -1) -> None:
        """Set up one channel or a list of channels as IN or OUT."""
        with self._lock:
            if direction not in (IN, OUT):
                raise ValueError("An invalid direction was passed to setup()")
            if direction == OUT and pull_up_down != PUD_OFF:
                raise ValueError("pull_up_down parameter is not valid for outputs")
            if direction == IN and initial != -1:
                raise ValueError("initial parameter is not valid for inputs")
            if pull_up_down not in (PUD_OFF, PUD_UP, PUD_DOWN):
                raise ValueError("Invalid value for pull_up_down - should be either "
                                 "PUD_OFF, PUD_UP or PUD_DOWN")
            if initial not in (-1, LOW, HIGH, True, False):
                raise ValueError("Invalid value for initial")
            pins = [self._to_bcm(c) for c in _channels(channel)]
            if self.no_access:
                raise RuntimeError(MSG_NO_ACCESS)
            for pin in pins:
                user = spi_pin_user(pin, self.spi_buses)
                if user is not None:
                    raise RuntimeError(f"GPIO{pin} is {user}, enabled: it cannot be a GPIO too")
            for pin in pins:
                if self._warnings and pin in self._alt and pin not in self._direction:
                    warnings.warn(MSG_IN_USE, RuntimeWarning, stacklevel=2)
                self._alt.pop(pin, None)
                self._direction[pin] = direction
                if direction == IN:
                    self._pull[pin] = pull_up_down
                else:
                    self._pull.pop(pin, None)
                    if initial != -1:
                        self._write(pin, _level(initial))
                    else:
                        self._out.setdefault(pin, LOW)

    def output(self, channel: object, value: object) -> None:
        """Set one output, or a list of outputs to one value or a list of values."""
        with self._lock:
            pins = [self._to_bcm(c) for c in _channels(channel)]
            if isinstance(value, (list, tuple)):
                if len(value) != len(pins):
                    raise RuntimeError("Number of channels != number of values")
                levels = [_level(v) for v in value]
            else:
                levels = [_level(value)] * len(pins)
            for pin in pins:
                if self._direction.get(pin) != OUT:
                    raise RuntimeError(MSG_NOT_OUTPUT)
            for pin, level in zip(pins, levels):
                self._write(pin, level)

    def input(self, channel: object) -> int:
        """Read a channel set up as IN (or OUT: its latch, as on a real Pi)."""
        with self._lock:
            pin = self._to_bcm(channel)
            if pin not in self._direction:
                raise RuntimeError(MSG_NOT_SETUP)
            return self._read(pin)

    def cleanup(self, channel: object = None) -> None:
        """Return channels (all set up ones if none given) to inputs; the global form also forgets the mode."""
        with self._lock:
            if channel is None:
                pins = sorted(self._direction)
                self.cleanups.append((self.clock(), None))
                self._mode = None
            else:
                if self._mode is None:
                    raise RuntimeError(MSG_NO_MODE)
                pins = [self._to_bcm(c) for c in _channels(channel)]
                self.cleanups.append((self.clock(), tuple(pins)))
            found = False
            for pin in pins:
                if pin in self._direction:
                    found = True
                    del self._direction[pin]
                    self._pull.pop(pin, None)
            if not found and self._warnings:
                warnings.warn(MSG_NOTHING_TO_CLEAN, RuntimeWarning, stacklevel=2)

    def gpio_function(self, channel: object) -> int:
        """IN, OUT, or the alternate function (SPI, I2C, SERIAL, HARD_PWM) of a channel."""
        with self._lock:
            pin = self._to_bcm(channel)
            if pin in self._direction:
                return self._direction[pin]
            return self._alt.get(pin, IN)

    # ----- for tests ----------------------------------------------------------------------
    def set_input(self, pin: int, level: int | None) -> None:
        """Drive BCM ``pin`` from outside to ``level`` (None: let it float to its pull)."""
        with self._lock:
            if level is None:
                self._driven.pop(pin, None)
            else:
                self._driven[pin] = HIGH if level else LOW

    def press(self, pin: int) -> None:
        """Close a button wired from BCM ``pin`` to ground: the pin reads LOW."""
        self.set_input(pin, LOW)

    def release(self, pin: int) -> None:
        """Open that button again: the pin reads what its pull gives (HIGH with PUD_UP)."""
        self.set_input(pin, None)

    def level(self, pin: int) -> int:
        """What BCM ``pin`` reads now (output latch, outside drive, or pull)."""
        with self._lock:
            return self._read(pin)

    def direction(self, pin: int) -> int | None:
        """IN/OUT for a BCM pin set up (and not cleaned up), else None."""
        return self._direction.get(pin)

    def pull(self, pin: int) -> int | None:
        """The PUD_* a BCM input pin was set up with, else None."""
        return self._pull.get(pin)

    @property
    def configured(self) -> frozenset[int]:
        """BCM pins currently set up."""
        return frozenset(self._direction)

    @property
    def global_cleanup_called(self) -> bool:
        """Whether anyone called ``cleanup()`` with no channel (which frees every pin)."""
        return any(pins is None for _, pins in self.cleanups)

    def outputs(self, pin: int) -> list[tuple[float, int]]:
        """The ``(t, level)`` records of one BCM pin, in order."""
        return [(t, lv) for t, p, lv in self.history if p == pin]

    def as_module(self) -> types.ModuleType:
        """A real module object named ``RPi.GPIO`` whose functions act on this instance."""
        mod = types.ModuleType("RPi.GPIO", "Fake RPi.GPIO (preftable hw.fake_gpio)")
        for name in _CONSTANTS:
            setattr(mod, name, getattr(self, name))
        mod.RPI_INFO = self.RPI_INFO
        for name in _FUNCTIONS:
            setattr(mod, name, getattr(self, name))
        mod.fake = self
        return mod

    def as_modules(self) -> dict[str, types.ModuleType]:
        """``{"RPi": package, "RPi.GPIO": module}`` to merge into ``sys.modules``."""
        gpio = self.as_module()
        pkg = types.ModuleType("RPi", "Fake RPi package (preftable hw.fake_gpio)")
        pkg.__path__ = []
        pkg.GPIO = gpio
        return {"RPi": pkg, "RPi.GPIO": gpio}

    # ----- internals ------------------------------------------------------------------------
    def _to_bcm(self, channel: object) -> int:
        if isinstance(channel, bool) or not isinstance(channel, int):
            raise ValueError("Channel must be an integer or list/tuple of integers")
        if self._mode is None:
            raise RuntimeError(MSG_NO_MODE)
        if self._mode == BCM:
            if not 0 <= channel <= 53:
                raise ValueError(MSG_BAD_CHANNEL)
            return channel
        pin = BOARD_TO_BCM.get(channel)
        if pin is None:
            raise ValueError(MSG_BAD_CHANNEL)
        return pin

    def _write(self, pin: int, level: int) -> None:
        self._out[pin] = level
        self.history.append((self.clock(), pin, level))

    def _read(self, pin: int) -> int:
        if self._direction.get(pin) == OUT:
            return self._out.get(pin, LOW)
        if pin in self._driven:
            return self._driven[pin]
        return HIGH if self._pull.get(pin) == PUD_UP else LOW


__all__ = ["FakeGPIO", "BOARD_TO_BCM", "DEFAULT_ALT_FUNCTIONS"]
