"""A fake of MicroPython's ``machine`` module (RP2040 flavour), bound to a :class:`Board`.

The board holds the emulated devices and records what the firmware did:

- SPI: a transfer goes to the device attached to the one chip-select pin that
  is low (``device.transfer(bytes) -> bytes``, full duplex; e.g.
  ``hw.rc522_chip``'s emulated MFRC522); none low: the bus reads 0xFF.
  A device whose ``transfer`` takes ``hz`` is given the bus's baud rate; one
  with a modelled ``clock`` (``advance(seconds)``) has it kept up with the wall
  clock when the board is ``realtime`` (the default), so chip timers expire
  as the firmware's ``ticks_ms`` sees time pass.
- I2C: ``writeto``/``readfrom`` go to the device at the address
  (``write(bytes)``, ``read(n)``); none there: ``OSError(ENODEV)`` as on a Pico.
- PWM: every duty/frequency change is logged with a timestamp.
- WDT: feeds are counted and the longest gap kept (``board.watchdog``).
- PIO (see ``rp2``): every ``put`` is logged per state machine.
- ``unique_id()`` is the board's; ``reset()`` raises :class:`FakeReset`.
"""

import errno
import inspect
import threading
import time
import types

from . import rp2 as _rp2


class FakeReset(SystemExit):
    """``machine.reset()`` was called: the firmware wanted a reboot."""


class PinState:
    """One GPIO's level and mode as the firmware set it."""

    def __init__(self, gpio):
        self.gpio = gpio
        self.mode = None
        self.level = 0
        self.history = []      # (t, level) of every output change


class Board:
    """The emulated world of one Pico. ``clock`` timestamps the records (seconds)."""

    def __init__(self, unique_id=b"\xe6\x61\x41\x04\x03\x52\x2a\x37", clock=time.monotonic,
                 realtime=True):
        self.unique_id = bytes(unique_id)
        self.clock = clock
        self.realtime = realtime
        self._synced = {}          # id(device clock) -> (clock, wall t0, modelled t0)
        self.lock = threading.RLock()
        self.pins = {}             # gpio -> PinState
        self.spi_devices = {}      # cs gpio -> device
        self.i2c_devices = {}      # (bus, addr) -> device
        self.pwm_log = []          # (t, gpio, freq, duty_u16)
        self.pio = {}              # state machine id -> rp2.StateMachine
        self.resets = 0
        self.watchdog = None       # the WDT, once the firmware started one
        self.spi_errors = []       # bus contention seen (several chip-selects low)
        self._takes_hz = {}

    # -- wiring ---------------------------------------------------------
    def attach_spi(self, cs, device):
        """Put ``device`` on the SPI bus behind chip-select GPIO ``cs``."""
        self.spi_devices[cs] = device
        try:
            takes_hz = "hz" in inspect.signature(device.transfer).parameters
        except (TypeError, ValueError):
            takes_hz = False
        self._takes_hz[cs] = takes_hz
        clock = getattr(device, "clock", None)
        if self.realtime and clock is not None and hasattr(clock, "advance") and id(clock) not in self._synced:
            self._synced[id(clock)] = (clock, self.clock(), clock())

    def _sync_clocks(self):
        wall = self.clock()
        for clock, wall0, model0 in self._synced.values():
            clock.advance(model0 + (wall - wall0) - clock())

    def detach_spi(self, cs):
        """Unplug the device behind ``cs`` (the bus then reads 0xFF there)."""
        self.spi_devices.pop(cs, None)

    def attach_i2c(self, addr, device, bus=0):
        self.i2c_devices[(bus, addr)] = device

    def pin(self, gpio):
        """The :class:`PinState` of ``gpio`` (created on first use)."""
        with self.lock:
            if gpio not in self.pins:
                self.pins[gpio] = PinState(gpio)
            return self.pins[gpio]

    # -- what the firmware did -----------------------------------------
    def pwm_on(self, gpio):
        """Is the PWM on ``gpio`` sounding (duty > 0) now?"""
        duty = 0
        for _, pin, _, d in self.pwm_log:
            if pin == gpio:
                duty = d
        return duty > 0

    def beeps(self, gpio):
        """[(start_t, seconds)] of every completed on-period of the PWM on ``gpio``."""
        out, start = [], None
        for t, pin, _, duty in list(self.pwm_log):
            if pin != gpio:
                continue
            if duty and start is None:
                start = t
            elif not duty and start is not None:
                out.append((start, t - start))
                start = None
        return out

    def ws2812(self, sm_id=0):
        """Colours (0xRRGGBB) of the last frame put into PIO state machine ``sm_id``, read
        as a WS2812 chain does: the first 24 bits shifted out (MSB first) are G, R, B."""
        sm = self.pio.get(sm_id)
        if sm is None or not sm.frames:
            return []
        out = []
        for word in sm.frames[-1]:
            g, r, b = (word >> 24) & 0xFF, (word >> 16) & 0xFF, (word >> 8) & 0xFF
            out.append((r << 16) | (g << 8) | b)
        return out

    # -- module look-alikes --------------------------------------------
    def modules(self):
        """``{"machine": ..., "rp2": ..., "micropython": ...}`` bound to this board."""
        return {"machine": make_machine(self), "rp2": _rp2.make_rp2(self),
                "micropython": make_micropython()}

    def _spi_transfer(self, data, hz=None):
        with self.lock:
            self._sync_clocks()
            low = [gpio for gpio, state in self.pins.items()
                   if gpio in self.spi_devices and state.mode == Pin.OUT and state.level == 0]
            if len(low) > 1:
                self.spi_errors.append(tuple(sorted(low)))
                raise OSError(errno.EIO, "SPI contention: chip-selects %s all low" % sorted(low))
            if not low:
                return b"\xff" * len(data)
            device = self.spi_devices[low[0]]
            if hz and self._takes_hz.get(low[0]):
                answer = bytes(device.transfer(bytes(data), hz=hz))
            else:
                answer = bytes(device.transfer(bytes(data)))
        if len(answer) != len(data):
            raise ValueError("device on CS %d answered %d bytes for %d" % (low[0], len(answer), len(data)))
        return answer


def _gpio(pin_id):
    if isinstance(pin_id, Pin):
        return pin_id.gpio
    if isinstance(pin_id, str) and pin_id.upper().startswith("GP"):
        return int(pin_id[2:])
    if isinstance(pin_id, int) and 0 <= pin_id <= 29:
        return pin_id
    if pin_id == "LED":
        return 25
    raise ValueError("invalid pin %r" % (pin_id,))


class Pin:
    """``machine.Pin``: levels are kept on the board."""

    IN = 0
    OUT = 1
    OPEN_DRAIN = 2
    ALT = 3
    PULL_UP = 1
    PULL_DOWN = 2
    IRQ_FALLING = 4
    IRQ_RISING = 8
    _board = None

    def __init__(self, pin_id, mode=-1, pull=-1, *, value=None, alt=-1):
        self.gpio = _gpio(pin_id)
        self._state = self._board.pin(self.gpio)
        self.init(mode, pull, value=value)

    def init(self, mode=-1, pull=-1, *, value=None, alt=-1):
        if mode != -1:
            self._state.mode = mode
        if value is not None:
            self.value(value)

    def value(self, level=None):
        if level is None:
            return self._state.level
        level = 1 if level else 0
        with self._board.lock:
            if level != self._state.level or not self._state.history:
                self._state.history.append((self._board.clock(), level))
            self._state.level = level
        return None

    __call__ = value

    def on(self):
        self.value(1)

    def off(self):
        self.value(0)

    def high(self):
        self.value(1)

    def low(self):
        self.value(0)

    def __repr__(self):
        return "Pin(GPIO%d)" % self.gpio


class SPI:
    """``machine.SPI``: full duplex to whichever attached device's chip-select is low."""

    MSB = 0
    LSB = 1
    _board = None

    def __init__(self, spi_id, baudrate=1000000, *, polarity=0, phase=0, bits=8, firstbit=0,
                 sck=None, mosi=None, miso=None):
        if spi_id not in (0, 1):
            raise ValueError("SPI(%r) doesn't exist" % (spi_id,))
        self.id = spi_id
        self.baudrate = baudrate

    def write_readinto(self, write_buf, read_buf):
        if len(write_buf) != len(read_buf):
            raise ValueError("buffers must be the same length")
        read_buf[:] = self._board._spi_transfer(bytes(write_buf), self.baudrate)

    def write(self, buf):
        self._board._spi_transfer(bytes(buf), self.baudrate)

    def read(self, nbytes, write=0):
        return self._board._spi_transfer(bytes([write]) * nbytes, self.baudrate)

    def readinto(self, buf, write=0):
        buf[:] = self.read(len(buf), write)

    def deinit(self):
        pass


class I2C:
    """``machine.I2C``: to the device attached at the address; ENODEV when there is none."""

    _board = None

    def __init__(self, i2c_id, *, scl=None, sda=None, freq=400000, timeout=50000):
        if i2c_id not in (0, 1):
            raise ValueError("I2C(%r) doesn't exist" % (i2c_id,))
        self.id = i2c_id

    def _device(self, addr):
        device = self._board.i2c_devices.get((self.id, addr))
        if device is None:
            raise OSError(errno.ENODEV, "ENODEV")
        return device

    def writeto(self, addr, buf, stop=True):
        data = bytes(buf)
        with self._board.lock:
            self._device(addr).write(data)
        return len(data)

    def readfrom(self, addr, nbytes, stop=True):
        with self._board.lock:
            return bytes(self._device(addr).read(nbytes))

    def scan(self):
        return sorted(addr for bus, addr in self._board.i2c_devices if bus == self.id)


class PWM:
    """``machine.PWM``: frequency and duty changes are logged on the board."""

    _board = None

    def __init__(self, pin, *, freq=None, duty_u16=None, duty_ns=None, invert=False):
        self.gpio = _gpio(pin)
        self._freq = 1000
        self._duty = 0
        if freq is not None:
            self.freq(freq)
        if duty_u16 is not None:
            self.duty_u16(duty_u16)

    def _log(self):
        with self._board.lock:
            self._board.pwm_log.append((self._board.clock(), self.gpio, self._freq, self._duty))

    def freq(self, value=None):
        if value is None:
            return self._freq
        if not 8 <= value <= 62500000:
            raise ValueError("freq out of range")
        self._freq = int(value)
        self._log()
        return None

    def duty_u16(self, value=None):
        if value is None:
            return self._duty
        self._duty = max(0, min(65535, int(value)))
        self._log()
        return None

    def deinit(self):
        self._duty = 0
        self._log()


class WDT:
    """``machine.WDT``: feeds are timestamped on the board (``board.watchdog``)."""

    _board = None

    def __init__(self, id=0, timeout=5000):
        if not 1 <= timeout <= 8388:
            raise ValueError("WDT timeout %r ms out of range (1-8388 on an RP2040)" % (timeout,))
        self.timeout_ms = timeout
        self._board.watchdog = self
        self.feeds = 0
        self.last_feed = self._board.clock()
        self.longest_gap = 0.0

    def feed(self):
        now = self._board.clock()
        self.longest_gap = max(self.longest_gap, now - self.last_feed)
        self.last_feed = now
        self.feeds += 1

    def expired(self):
        """Would the RP2040 have rebooted by now (a gap longer than the timeout)?"""
        gap = max(self.longest_gap, self._board.clock() - self.last_feed)
        return gap * 1000 > self.timeout_ms


def make_machine(board):
    """A ``machine`` module whose classes use ``board``."""
    mod = types.ModuleType("machine")
    mod.__doc__ = "Fake MicroPython machine module bound to %r" % board
    bound = {"_board": board}
    for cls in (Pin, SPI, I2C, PWM, WDT):
        setattr(mod, cls.__name__, type(cls.__name__, (cls,), dict(bound)))

    def unique_id():
        return board.unique_id

    def reset():
        board.resets += 1
        raise FakeReset("machine.reset()")

    mod.unique_id = unique_id
    mod.reset = reset
    mod.soft_reset = reset
    mod.freq = lambda hz=None: 125000000 if hz is None else None
    mod.idle = lambda: time.sleep(0)
    mod.FakeReset = FakeReset
    return mod


def make_micropython():
    """A ``micropython`` module: ``const``, ``kbd_intr`` (recorded), ``alloc_emergency_exception_buf``."""
    mod = types.ModuleType("micropython")
    mod.kbd_intr_calls = []
    mod.const = lambda value: value
    mod.kbd_intr = mod.kbd_intr_calls.append
    mod.alloc_emergency_exception_buf = lambda size: None
    mod.schedule = lambda func, arg: func(arg)
    return mod
