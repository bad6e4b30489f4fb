"""An emulated MFRC522 (RC522) reader chip, virtual ISO 14443A tags and a fake ``spidev``.

The emulation is detailed enough that the unmodified ``mfrc522`` driver runs
against it: registers (the table of :mod:`hw.rc522_regs`), the 64-byte FIFO,
CommIrq/DivIrq/Error bits, the timer (TMode/TPrescaler/TReload, TAuto start at
the end of a transmission and its stop after the 5th received bit), the Idle,
Transmit, Transceive (BitFraming StartSend/TxLastBits), CalcCRC (CRC_A) and
SoftReset commands, and a *dead* fault mode in which every byte on MISO is
0x00 (or 0xFF).  What real boards do that a table has met:

- VersionReg is selectable: 0x91/0x92 (NXP), 0x88 (FM17522), 0xB2, 0x12
  (clones); 0x00 or 0xFF makes a dead chip;
- NRSTPD: held LOW (or never set up: a Pi's pull-down) the chip is in reset
  and loads the shared MISO line, so every chip of the bus reads 0x00; going
  HIGH starts the crystal, and for ``osc_startup_s`` SPI reads 0x00 and
  writes are lost;
- PowerDown (CommandReg bit 4) sets soft power-down (antenna off, registers
  frozen) and clears 1024 clocks after it is written 0;
- a collision raises ErrIRq at the colliding bit, mid-frame, with only the
  bytes before it in the FIFO; RxIRq follows at the frame's end.  CollReg
  holds CollPos (0 for the 32nd bit) or CollPosNotValid (beyond it); with
  ValuesAfterColl (CollReg bit 7, set after a reset) cleared every received
  bit from the colliding one on reads 0, set they read as the wired-OR of the
  tags' bits.  Each whole byte carries the odd parity bit of ISO 14443-3, and
  the wired-OR of several tags' bytes and parity bits usually breaks it: a
  collision then comes with ParityErr as well, as on a real chip;
- ``error_rate`` (seeded by ``error_seed``): that share of the received frames
  has one bit flipped on the air -- a data bit or its parity bit -- so
  ParityErr is raised and, when RxModeReg's RxCRCEn is set, CrcErr for a frame
  whose CRC_A no longer matches (a noisy field, a card at the antenna's edge);
- every ``spidev`` transfer costs ``PI_XFER_OVERHEAD_S`` besides its bits.

Time is modelled, not measured: a :class:`VirtualClock` shared by the chips on
one bus advances by the SPI byte time at the device's clock, and the chip
derives its RF frame times (106 kbit/s, 128/fc per bit), frame delay times and
timer expiries from it.  Polling CommIrqReg therefore "waits" exactly as long
as it would on the wire.

Each chip has a :class:`TagField`: ``put(tag)`` / ``take(tag)`` place a
:class:`VirtualTag` in or out of its antenna's field, optionally flickering
(missing some polls); a second ``put`` while the first tag lies there is a
card stacked on it.  Cross-talk is the same tag put into a neighbouring
reader's field too.  Several tags answering at once collide bit-wise (CollErr).

:meth:`EmulatedMFRC522.transfer` is one full-duplex SPI transaction (chip
select low for the whole of ``data``); :class:`FakeSpidev` wraps chips behind
the ``spidev`` module API (``SpiDev().open(bus, device)``, ``xfer2`` ...).

The chip is :mod:`hw.rc522_emulated`, the tags and their field :mod:`hw.rc522_tags`; this
module is the fake ``spidev`` over them, and every name of the emulation is importable
from here.
"""

from __future__ import annotations

import errno
import threading
import types
from typing import Sequence

from controller.core.clock import VirtualClock  # the project's one clock type (re-exported)
from .rc522_regs import *  # noqa: F401,F403  (the register table, shared with hw.rc522)
from .rc522_regs import BIT_S, FC, FDT_S, SEL_CODES, crc_a, frame_bits, with_crc
from .rc522_emulated import OSC_STARTUP_S, EmulatedMFRC522
from .rc522_tags import ACTIVE, HALT, IDLE, READY, TagField, VirtualTag

# What one ``spidev.xfer2`` call costs on a Pi besides the bits on the wire (the Python call, the
# SPI_IOC_MESSAGE ioctl, the kernel's message set-up and chip-select handling).  No public
# measurement of py-spidev's per-call cost on a Pi 4 or 5 was found; the kernel alone keeps CS
# high 10-19 us between back-to-back transfers on a Pi 4 (raspberrypi/linux issue 4567, scope
# traces), and Python adds its call on top, so 60 us is taken as the figure -- an assumption,
# stated as such.  ``preftable doctor --live`` measures the real one (hw.check.measure_transfer_cost);
# bench/bench_scan.py reports the scan at 60 and at 100 us.
PI_XFER_OVERHEAD_S = 60e-6

# ------------------------------------------------------------------------------------------ spidev
class FakeSpidev:
    """Stands in for the ``spidev`` module: ``FakeSpidev(...).SpiDev()`` opens emulated chips.

    ``add_chip(bus, device)`` puts an :class:`EmulatedMFRC522` (sharing this bus's
    :class:`VirtualClock`) behind ``/dev/spidev<bus>.<device>``; opening a device
    with no chip raises ``FileNotFoundError`` as the real module does, and
    ``deny(bus, device)`` makes it raise ``PermissionError``.  ``xfer_overhead_s``
    adds a fixed modelled cost per transfer (the syscall of a real Pi).
    """

    def __init__(self, clock: VirtualClock | None = None, *, xfer_overhead_s: float = PI_XFER_OVERHEAD_S):
        self.clock = clock if clock is not None else VirtualClock()
        self.xfer_overhead_s = xfer_overhead_s
        self.lock = threading.RLock()
        self.chips: dict[tuple[int, int], EmulatedMFRC522] = {}
        self.denied: set[tuple[int, int]] = set()
        self.open_devices: set[tuple[int, int]] = set()
        self.transfers = 0
        self.bytes = 0
        self.SpiDev = type("SpiDev", (_FakeSpiDev,), {"_module": self})

    def add_chip(self, bus: int, device: int, *, version: int = 0x92, **kwargs) -> EmulatedMFRC522:
        """An emulated chip behind ``/dev/spidev<bus>.<device>`` (``kwargs``: :class:`EmulatedMFRC522`'s)."""
        chip = EmulatedMFRC522(self.clock, version=version, name=f"spidev{bus}.{device}",
                               neighbours=lambda: list(self.chips.values()), lock=self.lock, **kwargs)
        self.chips[(bus, device)] = chip
        return chip

    def chip(self, bus: int, device: int) -> EmulatedMFRC522:
        return self.chips[(bus, device)]

    def deny(self, bus: int, device: int) -> None:
        """Opening ``/dev/spidev<bus>.<device>`` fails with EACCES (user not in the spi group)."""
        self.denied.add((bus, device))

    def as_module(self) -> types.ModuleType:
        """A module object named ``spidev`` bound to this fake."""
        mod = types.ModuleType("spidev", "Fake spidev (preftable hw.rc522_chip)")
        mod.SpiDev = self.SpiDev
        mod.fake = self
        return mod


class _FakeSpiDev:
    """``spidev.SpiDev`` over an emulated chip (attributes as in py-spidev 3.x)."""

    _module: FakeSpidev

    def __init__(self, bus: int | None = None, device: int | None = None):
        self.max_speed_hz = 125_000_000
        self.mode = 0
        self.bits_per_word = 8
        self.lsbfirst = False
        self.cshigh = False
        self.threewire = False
        self.loop = False
        self.no_cs = False
        self._key: tuple[int, int] | None = None
        if bus is not None:
            self.open(bus, device if device is not None else 0)

    def open(self, bus: int, device: int) -> None:
        key = (int(bus), int(device))
        path = f"/dev/spidev{key[0]}.{key[1]}"
        if key in self._module.denied:
            raise PermissionError(errno.EACCES, "Permission denied", path)
        if key not in self._module.chips:
            raise FileNotFoundError(errno.ENOENT, "No such file or directory", path)
        self._key = key
        self._module.open_devices.add(key)

    def close(self) -> None:
        if self._key is not None:
            self._module.open_devices.discard(self._key)
        self._key = None

    def xfer2(self, values: Sequence[int], speed_hz: int = 0, delay_usec: int = 0,
              bits_per_word: int = 0) -> list[int]:
        if self._key is None:
            raise OSError(errno.EBADF, "Bad file descriptor")
        module = self._module
        module.transfers += 1
        module.bytes += len(values)
        module.clock.advance(module.xfer_overhead_s + delay_usec * 1e-6)
        chip = module.chips.get(self._key)
        hz = speed_hz or self.max_speed_hz
        if chip is None:                                 # unplugged while open: MISO floats high
            module.clock.advance(len(values) * 8 / hz)
            return [0xFF] * len(values)
        data = bytes(values) if self.mode == 0 else bytes(len(values))
        answer = chip.transfer(data, hz=hz)
        with module.lock:
            if any(other.loads_miso_in_reset and other.held_in_reset()
                   for (bus, _), other in module.chips.items() if bus == self._key[0] and other is not chip):
                answer = bytes(len(answer))       # a chip held in reset pulls the shared MISO line low
        return list(answer)

    xfer = xfer2

    def writebytes(self, values: Sequence[int]) -> None:
        self.xfer2(values)

    def readbytes(self, n: int) -> list[int]:
        return self.xfer2([0] * n)

    def __enter__(self) -> "_FakeSpiDev":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


__all__ = ["VirtualClock", "VirtualTag", "TagField", "EmulatedMFRC522", "FakeSpidev",
           "crc_a", "with_crc", "frame_bits", "BIT_S", "FDT_S", "FC", "SEL_CODES", "OSC_STARTUP_S",
           "PI_XFER_OVERHEAD_S", "IDLE", "READY", "ACTIVE", "HALT"]
