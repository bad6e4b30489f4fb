"""RC522 readers on the Pi's SPI buses, opened through the ``mfrc522`` package's ``MFRC522`` class.

A :class:`Reader` is one chip (``/dev/spidev<bus>.<device>``, its own reset
pin).  Where the chip comes from is a backend chosen at run time, as gpiozero
picks a pin factory (:mod:`hw.rc522_backend`, whose names are re-exported here):
:class:`RealBackend` imports ``spidev`` and ``RPi.GPIO`` only when a reader is
opened; :class:`FakeBackend` gives the emulated chips of :mod:`hw.rc522_chip` and a
:class:`hw.pins.MockFactory`.  Each reader loads a
private copy of the driver module whose ``GPIO`` and ``spidev`` globals are the
backend's (a pin-factory :class:`~hw.pins.ScopedGPIO` naming the reader), so
nothing is patched and ``sys.modules`` is never touched.

The defects of ``mfrc522`` 0.0.7 are worked around without forking it:

- it runs cascade level 1 only (a 7-byte UID reads as ``88`` + 3 bytes):
  :meth:`Reader.read_uid` runs the whole cascade (levels 1-3) itself;
- its wait loop ignores the timer, and the timer it programs is 15.5 ms: the
  reader programs a 1 ms timer (started by the end of the transmission and
  stopped by the tag's 5th bit) and its own wait loop ends on TimerIRq;
- ``Close_MFRC522()`` calls the global ``GPIO.cleanup()``: never called,
  :meth:`Reader.close` frees the reset pin only;
- in BCM numbering its default reset pin is GPIO15 (UART RX): a pin is required;
- every instance adds a ``StreamHandler`` to ``mfrc522Logger``: removed again.

Power-up follows the datasheet (:func:`open_readers`): every reader's NRSTPD
goes high first -- a chip still in reset loads the MISO line the bus shares --
then one wait for the crystals (``OSC_WAIT_S``), then per chip SoftReset, a poll
until PowerDown reads 0, the configuration written and read back; a reader
whose registers do not stick is logged and is not :meth:`Reader.alive`.  Any
VersionReg but 0x00/0xFF is a working chip (clones read 0x88, 0xB2, 0x12).

Why the polling is ours and not ``mfrc522``'s: the package's ``MFRC522_ToCard``
(its transceive) busy-waits 2000 CommIrqReg reads whatever its timer says,
reads ErrorReg, the FIFO level and the FIFO in separate transfers, runs
cascade level 1 only and has no way to leave a tag READY -- a poll built on it
costs tens of milliseconds.  So the driver is used for what it does right
(opening ``/dev/spidev``, the speed, the reset pin) and the frames are sent by
:meth:`Reader._transceive` on its ``spi``.  The package's code is loaded, unmodified,
into a private module per reader (:func:`load_driver`: its ``RPi.GPIO`` and
``spidev`` imports resolved to the backend's, ``sys.modules`` untouched).  That
loader stays because the package imports ``RPi.GPIO`` and ``spidev`` at module
level: it is the one way to hand each reader its own scoped pins and its own
(real or emulated) bus without patching ``sys.modules`` or forking the package.
The tests also run the package's own ``MFRC522_Request``/``MFRC522_Anticoll``
against the emulated chip.

A poll: WUPA, then per cascade level ANTICOLL (or, for a UID read last time,
SELECT straight away), SELECT while the UID is incomplete; the last level is
an ANTICOLL, so the tag stays READY there.  A tag read in two polls in a row is
left READY, and the next poll is one ANTICOLL frame at that level (its
presence check: only a tag that stayed powered in the field since it was read
answers it); a tag read for the first time, or one whose presence check failed
although it is there (a neighbour's WUPA sent it to IDLE), goes back to IDLE
with a one-byte frame, so a cross-talking neighbour's WUPA finds it.  Transfers
are kept few: multi-register reads in one ``xfer2`` (read addresses back to
back), the FIFO read with its level in one transfer, the FIFO flushed only when
something was left in it, the chip left in Transceive after an answer (the next
frame needs the FIFO and StartSend only), and an empty poll's own timer
interrupt standing for the VersionReg check.  A collision wins over the parity
error it brings (as in NXP's RC52x driver), with ValuesAfterColl cleared as the
datasheet asks; on ErrIRq (a collision is heard mid-frame) the reader waits for
the receive to end.  Whether a level's 4 bytes end the UID is decided by the
SAK when they start with 0x88.  :meth:`Reader.read_uids` adds, every few polls,
a full scan that walks both sides of every collision, so a card laid on an
occupied reader is seen (stacked cards).  The SPI backend
(``$PREFTABLE_SPI_BACKEND``) is chosen on its own, never from the pin factory.

The poll's frames and the transceive under them are :mod:`hw.rc522_reading`, the half of
:class:`Reader` that reads; this module opens, configures and resets the chips.
"""

from __future__ import annotations

import logging
import types
from typing import Any

from controller.core.errors import ConfigError, HardwareError

from . import rc522_regs as chip_regs
from .header import SPI_BUS_PINS
from .pins import PinFactory
# The reading half of a reader (the poll's frames); its names stay importable from here.
from .rc522_reading import ReaderFault, Steps, TagReading, read_address, write_address, run_steps
from .rc522_backend import (SPI_BACKEND_VAR, SPI_BACKENDS, FakeBackend, RealBackend, SpiBackend,  # noqa: F401
                            default_backend, load_driver)

log = logging.getLogger(__name__)

DRIVER_LOGGER = "mfrc522Logger"
VERSIONS_OK = tuple(chip_regs.KNOWN_VERSIONS)          # named versions; any but 0x00/0xFF answers
SPI_PINS = {bus: tuple(sorted(pins)) for bus, pins in SPI_BUS_PINS.items()}
DEFAULT_TIMEOUT_S = 0.001
TIMER_TICK_S = (2 * 0xA9 + 1) / chip_regs.FC          # TPrescaler 169: 25 us per tick
OSC_WAIT_S = 0.05              # after NRSTPD goes high: the crystal's start-up, as the Arduino library waits
POWER_DOWN_WAIT_S = 0.05       # after SoftReset: PowerDown must read 0 by then
SPI_HINT = ("enable SPI with `sudo raspi-config` (Interface Options > SPI), for spidev1.x add "
            "`dtoverlay=spi1-3cs` to /boot/firmware/config.txt and reboot")
SPI_ACCESS_HINT = "add the user to the spi group (`sudo usermod -aG spi $USER`, then log in again)"


def open_readers(wiring, spd: int = 1_000_000, backend: SpiBackend | None = None, *,
                 factory: PinFactory | None = None, timeout_s: float = DEFAULT_TIMEOUT_S) -> list["Reader"]:
    """Readers for ``wiring`` (``(bus, device, reset_pin)`` each), powered up in the datasheet's
    order: every NRSTPD high first (a chip still in reset loads the shared MISO line), one wait
    for the oscillators, then each chip soft-reset, configured and read back."""
    readers: list[Reader] = []
    try:
        for bus, device, pin_rst in wiring:
            readers.append(Reader(bus, device, pin_rst, spd, backend, factory=factory, timeout_s=timeout_s,
                                  start=False))
        for reader in readers:
            reader.start()
    except BaseException:
        for reader in readers:
            reader.close()
        raise
    return readers


class Reader(TagReading):
    """One RC522 on ``/dev/spidev<bus>.<device>`` with its reset (NRSTPD) on BCM ``pin_rst``.

    ``read_uid()`` polls once: the complete UID as upper-case hex, or None.
    ``backend``: where the chip is (default: :func:`default_backend` of ``factory``);
    ``factory``: the pin factory for the reset pin (default: the backend's);
    ``timeout_s``: the chip timer for a tag's answer (an empty poll costs about that).
    """

    def __init__(self, bus: int, device: int, pin_rst: int, spd: int = 1_000_000,
                 backend: SpiBackend | None = None, *, factory: PinFactory | None = None,
                 timeout_s: float = DEFAULT_TIMEOUT_S, start: bool = True):
        self.bus, self.device, self.pin_rst, self.spd = bus, device, pin_rst, spd
        self.name = f"spidev{bus}.{device}"
        if isinstance(pin_rst, bool) or not isinstance(pin_rst, int):
            raise ConfigError(f"reader {self.name}: reset pin must be a BCM GPIO number, got {pin_rst!r}",
                              key="pin_rst")
        if pin_rst in SPI_PINS.get(bus, ()):
            raise ConfigError(f"reader {self.name}: reset pin GPIO{pin_rst} is a pin of SPI bus {bus}",
                              key="pin_rst")
        reload = round(timeout_s / TIMER_TICK_S) - 1
        if not 0 <= reload <= 0xFFFF:
            raise ConfigError(f"reader {self.name}: timeout {timeout_s} s out of range", key="timeout")
        self.timeout_s = (reload + 1) * TIMER_TICK_S
        self._reload = reload
        self.backend: SpiBackend = backend if backend is not None else default_backend(factory)
        pins = factory if factory is not None else self.backend.pins()
        self._last: bytes | None = None            # UID of the last read, for the fast path
        self._ready = False                        # that tag was left READY at its last cascade level
        self._collided = False                     # this read walked a collision (several tags READY)
        self.interfered = False                    # the last poll was disturbed (see read_steps)
        self._heard = False                        # this poll's chip timer fired: the chip answers
        self._armed = self._answered = False
        self._fifo_dirty = True
        self._closed = False
        self._drv: Any = None
        self._spi: Any = None
        self.configured = False                    # the configuration read back as written
        self.stack: tuple[str, ...] = ()           # the UIDs of the last full scan, when several
        self._polls = 0
        self._stack_hold = 0                       # full scans still due after a stack was seen
        self._choices: list[int] | None = None     # a full scan's way through the collisions
        self._taken: list[int] | None = None
        self._gpio = pins.scoped_gpio(f"RC522 reader {self.name} (reset)")
        self.backend.wire(bus, device, pin_rst, pins)
        # Power-up, first half: NRSTPD high (every reader's, before any chip is spoken to: a chip
        # held in reset loads the shared MISO line); start() waits for the crystal.
        self._gpio.setup(pin_rst, self._gpio.OUT, initial=self._gpio.HIGH)
        self._powered_at = self.backend.now()
        if start:
            self.start()

    def start(self) -> None:
        """Power-up, second half: wait for the oscillator, open the driver, soft reset, configure
        and read the configuration back (a reader whose registers do not stick is logged and is
        not :meth:`alive`)."""
        wait = OSC_WAIT_S - (self.backend.now() - self._powered_at)
        if wait > 0:
            self.backend.sleep(wait)
        try:
            try:
                spidev = self.backend.spidev()
            except HardwareError as exc:
                raise HardwareError(f"cannot open /dev/spidev{self.bus}.{self.device}: {exc}") from exc
            module = load_driver(self._gpio, spidev, self.name.replace(".", "_"))
            self._drv = self._open_driver(module)
            self._spi = self._drv.spi
            self._init_chip()
            if not self.alive():
                log.warning("%s", self._fault_text(self._health_text()))
        except BaseException:
            self.close()
            raise
        log.debug("reader %s ready (reset GPIO%d, %d Hz, timeout %.2f ms, VersionReg %s)", self.name,
                  self.pin_rst, self.spd, self.timeout_s * 1e3, chip_regs.version_name(self.version()))

    def __repr__(self) -> str:
        return f"Reader({self.name}, reset=GPIO{self.pin_rst})"

    # ----- lifecycle ------------------------------------------------------------------------------
    def _open_driver(self, module: types.ModuleType) -> Any:
        logger = logging.getLogger(DRIVER_LOGGER)
        before = list(logger.handlers)
        level = logger.level
        drv = module.MFRC522.__new__(module.MFRC522)
        try:
            drv.__init__(bus=self.bus, device=self.device, spd=self.spd,
                         pin_mode=self._gpio.BCM, pin_rst=self.pin_rst)
        except OSError as exc:
            spi = getattr(drv, "spi", None)
            if spi is not None:
                spi.close()
            if isinstance(exc, HardwareError):             # PinInUse etc. from the pin factory
                raise
            path = f"/dev/spidev{self.bus}.{self.device}"
            if isinstance(exc, PermissionError):
                raise HardwareError(f"cannot open {path} (permission denied): {SPI_ACCESS_HINT}") from exc
            if isinstance(exc, FileNotFoundError):
                raise HardwareError(f"cannot open {path} (no such device): {SPI_HINT}") from exc
            raise HardwareError(f"cannot open {path} ({exc.strerror or exc}): {SPI_HINT}") from exc
        except BaseException:
            spi = getattr(drv, "spi", None)
            if spi is not None:
                spi.close()
            raise
        finally:
            for handler in logger.handlers[:]:
                if handler not in before:
                    logger.removeHandler(handler)
            logger.setLevel(level)
        return drv

    def _config(self) -> tuple[tuple[int, int], ...]:
        return ((chip_regs.T_MODE, 0x80),                   # TAuto, prescaler high nibble 0
                (chip_regs.T_PRESCALER, 0xA9),              # 25 us per tick
                (chip_regs.T_RELOAD_H, self._reload >> 8),
                (chip_regs.T_RELOAD_L, self._reload & 0xFF),
                (chip_regs.TX_ASK, 0x40),                   # 100 % ASK
                (chip_regs.MODE, 0x3D),                     # CRC preset 0x6363
                (chip_regs.TX_CONTROL, 0x83))               # antenna on (TX1, TX2)

    def _init_chip(self) -> None:
        """SoftReset, wait until PowerDown reads 0, configure, read the configuration back."""
        x = self._xfer
        self.configured = False
        x([write_address(chip_regs.COMMAND), chip_regs.CMD_SOFT_RESET])
        waited = 0.0
        while x([read_address(chip_regs.COMMAND), 0])[1] & chip_regs.POWER_DOWN:
            if waited >= POWER_DOWN_WAIT_S:
                log.warning("%s", self._fault_text("PowerDown still set %.0f ms after SoftReset"
                                                   % (POWER_DOWN_WAIT_S * 1e3)))
                break
            self.backend.sleep(0.001)
            waited += 0.001
        config = self._config()
        for reg, value in config:
            x([write_address(reg), value])
        # ValuesAfterColl = 0: the bits received after a collision read 0, as the datasheet asks for
        # the bit-wise anticollision (CollReg's other bits are read-only, so it is not read back).
        x([write_address(chip_regs.COLL), 0x00])
        back = x([read_address(reg) for reg, _ in config] + [0])[1:]
        self._stuck = [(reg, value, got) for (reg, value), got in zip(config, back) if got != value]
        self.configured = not self._stuck
        self._armed = self._answered = False
        self._fifo_dirty = True
        self._tx_last_bits = 0x07
        self._last = None
        self._ready = self._heard = False

    def close(self) -> None:
        """Close SPI and free the reset pin -- never the global ``GPIO.cleanup()``."""
        if self._closed:
            return
        self._closed = True
        try:
            if self._spi is not None:
                self._spi.close()
        finally:
            self._gpio.cleanup(self.pin_rst)

    def __enter__(self) -> "Reader":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ----- health -------------------------------------------------------------------------------
    def version(self) -> int:
        return self._xfer([read_address(chip_regs.VERSION), 0])[1]

    def alive(self) -> bool:
        """True when VersionReg answers (anything but 0x00/0xFF: clones read 0x88, 0xB2, 0x12)
        and the configuration written at the last init read back unchanged."""
        if self._heard:                            # the timer just fired as programmed: no need to ask
            self._heard = False
            return self.configured
        try:
            return self.configured and chip_regs.chip_answers(self.version())
        except OSError as exc:
            log.debug("reader %s: %s", self.name, exc)
            return False

    def _health_text(self) -> str:
        version = chip_regs.version_name(self.version())
        if not self.configured:
            regs = ", ".join(f"0x{reg:02X}=0x{got:02X} (wrote 0x{value:02X})" for reg, value, got in self._stuck)
            return f"VersionReg {version}; registers did not stick: {regs}"
        return f"VersionReg {version}"

    def reset(self) -> None:
        """Hard reset: pulse the reset pin LOW, wait for the oscillator, init again."""
        if self._closed:
            raise HardwareError(f"reader {self.name} is closed")
        self._gpio.output(self.pin_rst, 0)
        self.backend.sleep(0.0001)
        self._gpio.output(self.pin_rst, 1)
        for _ in range(round(OSC_WAIT_S / 0.001)):         # oscillator start-up: up to 50 ms
            self.backend.sleep(0.001)
            if chip_regs.chip_answers(self.version()):
                break
        self._init_chip()


__all__ = ["Reader", "open_readers", "ReaderFault", "RealBackend", "FakeBackend", "SpiBackend", "default_backend", "load_driver",
           "VERSIONS_OK", "DEFAULT_TIMEOUT_S", "Steps", "run_steps"]
