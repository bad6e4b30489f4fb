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
"""

from __future__ import annotations

import errno
import logging
import random
import threading
import types
from collections import deque
from dataclasses import dataclass, field
from typing import Callable, Iterable, Sequence

log = logging.getLogger(__name__)

# The crystal's start-up after NRSTPD goes HIGH (datasheet 8.8.2: "the start-up time of the
# crystal + 37.74 us"; crystals take a few ms).  The Arduino library waits 50 ms; so does hw.rc522.
OSC_STARTUP_S = 0.005
# What one ``spidev.xfer2`` call costs on a Pi besides the bits on the wire (the Python call, the
# SPI_IOC_MESSAGE ioctl, the kernel's message set-up and chip-select handling).  No public
# measurement of py-spidev's per-call cost on a Pi 4 or 5 was found; the kernel alone keeps CS
# high 10-19 us between back-to-back transfers on a Pi 4 (raspberrypi/linux issue 4567, scope
# traces), and Python adds its call on top, so 60 us is taken as the figure -- an assumption,
# stated as such.  ``preftable doctor --live`` measures the real one (hw.check.measure_transfer_cost);
# bench/bench_scan.py reports the scan at 60 and at 100 us.
PI_XFER_OVERHEAD_S = 60e-6

from .rc522_regs import *  # noqa: F401,F403  (the register table, shared with hw.rc522)
from .rc522_regs import (BIT_S, CASCADE_TAG, CRC_PRESETS, FC, FDT_S, NO_CHIP, OSC_CLOCKS_S, POWER_DOWN, RESET_VALUES,
                         SEL_CODES, crc_a, frame_bits, with_crc)
from .rc522_regs import (BIT_FRAMING, COLL, COMM_IEN, COMM_IRQ, COMMAND, CONTROL, CRC_RESULT_L, CRC_RESULT_M,
                         DIV_IEN, DIV_IRQ, ERROR, FIFO_DATA, FIFO_LEVEL, MODE, RX_MODE, STATUS1, STATUS2,
                         T_COUNTER_H, T_COUNTER_L, T_MODE, T_PRESCALER, T_RELOAD_H, T_RELOAD_L, TX_CONTROL,
                         VERSION, WATER_LEVEL)
from controller.core.clock import VirtualClock  # the project's one clock type (re-exported)
from .rc522_regs import (CMD_AUTHENT, CMD_CALC_CRC, CMD_IDLE, CMD_NO_CHANGE, CMD_RECEIVE, CMD_SOFT_RESET,
                         CMD_TRANSCEIVE, CMD_TRANSMIT, DIV_CRC, ERR_BUFFER_OVFL, ERR_COLL, ERR_CRC, ERR_PARITY, ERR_PROTOCOL,
                         IRQ_ERR, IRQ_HI_ALERT, IRQ_IDLE, IRQ_LO_ALERT, IRQ_RX, IRQ_TIMER, IRQ_TX)

# ------------------------------------------------------------------------------------------ tags
IDLE, READY, ACTIVE, HALT = "IDLE", "READY", "ACTIVE", "HALT"


class VirtualTag:
    """An ISO 14443A tag with a 4-, 7- or 10-byte UID (Type 2 / NTAG-like for READ).

    Answers REQA/WUPA with ATQA, runs the anticollision/SELECT cascade (cascade
    tag 0x88, BCC, bit-oriented anticollision frames whose first answer byte is
    aligned as RxAlign stores it, SAK with the "UID not complete" bit 0x04), goes to HALT on
    HLTA, and in ACTIVE state answers READ with 16 bytes of its memory.  Any
    other frame sends it back to IDLE (HALT if it was woken from HALT).
    """

    def __init__(self, uid: bytes | str, *, sak: int | None = None, fdt_s: float = FDT_S):
        uid = bytes.fromhex(uid) if isinstance(uid, str) else bytes(uid)
        if len(uid) not in (4, 7, 10):
            raise ValueError(f"a Type A UID has 4, 7 or 10 bytes, got {len(uid)}: {uid.hex().upper()}")
        if uid[0] == CASCADE_TAG:
            raise ValueError("a UID cannot start with the cascade tag 0x88")
        self.uid = uid
        self.sak = (0x08 if len(uid) == 4 else 0x00) if sak is None else sak
        self.fdt_s = fdt_s
        self.state = IDLE
        self.level = 0             # cascade level being resolved (0-based)
        self.woken_from_halt = False
        self.told_level = False    # answered ANTICOLLISION (NVB 0x20) at this level already
        self.memory = self._initial_memory()

    @property
    def uid_hex(self) -> str:
        return self.uid.hex().upper()

    def __repr__(self) -> str:
        return f"VirtualTag({self.uid_hex}, {self.state})"

    @property
    def atqa(self) -> bytes:
        size = {4: 0, 7: 1, 10: 2}[len(self.uid)]
        return bytes(((size << 6) | 0x04, 0x00))

    def cascade(self) -> list[bytes]:
        """The 4-byte UID part of each cascade level (CT + 3 bytes before the last)."""
        u = self.uid
        if len(u) == 4:
            return [u]
        if len(u) == 7:
            return [bytes([CASCADE_TAG]) + u[:3], u[3:]]
        return [bytes([CASCADE_TAG]) + u[:3], bytes([CASCADE_TAG]) + u[3:6], u[6:]]

    def power_off(self) -> None:
        """Out of every field: the tag forgets its state."""
        self.state, self.level, self.woken_from_halt, self.told_level = IDLE, 0, False, False

    def is_presence_check(self, frame: bytes) -> bool:
        """Is ``frame`` an ANTICOLLISION (NVB 0x20) at the level this tag already answered one at
        -- a reader asking again whether the tag it left READY there is still in the field (a
        poll that starts without WUPA)?"""
        return (self.state == READY and self.told_level and len(frame) == 2
                and frame[0] == SEL_CODES[self.level] and frame[1] == 0x20)

    def hear(self, frame: bytes, last_bits: int) -> tuple[bytes, int] | None:
        """React to one PCD frame; return ``(answer, valid bits of its last byte or 0)`` or None."""
        if len(frame) == 1 and last_bits == 7:
            return self._short(frame[0] & 0x7F)
        if self.state == READY and len(frame) >= 2 and frame[0] in SEL_CODES:
            return self._select(frame)                   # (bit-oriented anticollision: last byte partial)
        if last_bits:
            return self._other()
        if self.state == ACTIVE and len(frame) == 4 and frame[:2] == b"\x50\x00" and with_crc(frame[:2]) == frame:
            self.state, self.level = HALT, 0
            return None
        if self.state == ACTIVE and len(frame) == 4 and frame[0] == 0x30 and with_crc(frame[:2]) == frame:
            page = frame[1] * 4
            mem = self.memory + self.memory
            return with_crc(mem[page % len(self.memory):page % len(self.memory) + 16]), 0
        return self._other()

    # ----- internals -------------------------------------------------------------------------
    def _short(self, cmd: int) -> tuple[bytes, int] | None:
        if cmd == 0x26 and self.state == IDLE or cmd == 0x52 and self.state in (IDLE, HALT):
            self.woken_from_halt = self.state == HALT
            self.state, self.level, self.told_level = READY, 0, False
            return self.atqa, 0
        return self._other()

    def _other(self) -> None:
        if self.state in (READY, ACTIVE):
            self.state = HALT if self.woken_from_halt else IDLE
            self.level, self.told_level = 0, False
        return None

    def _select(self, frame: bytes) -> tuple[bytes, int] | None:
        levels = self.cascade()
        if frame[0] != SEL_CODES[self.level]:
            return self._other()
        part = levels[self.level]
        full = part + bytes([part[0] ^ part[1] ^ part[2] ^ part[3]])
        nvb = frame[1]
        if nvb == 0x70:                                  # SELECT
            if len(frame) != 9 or with_crc(frame[:7]) != frame:
                return self._other()
            if frame[2:7] != full:
                return None                              # not me: stay READY, keep quiet
            if self.level + 1 < len(levels):
                self.level += 1
                self.told_level = False
                return with_crc(bytes([0x04])), 0
            self.state = ACTIVE
            return with_crc(bytes([self.sak & ~0x04 & 0xFF])), 0
        known = ((nvb >> 4) - 2) * 8 + (nvb & 0x0F)         # UID bits the PCD sends
        if not 0 <= known < 40 or (nvb & 0x0F) > 7 or len(frame) != 2 + (known + 7) // 8:
            return self._other()
        for bit in range(known):
            if (frame[2 + (bit >> 3)] >> (bit & 7)) & 1 != (full[bit >> 3] >> (bit & 7)) & 1:
                return None                              # not me: keep quiet, stay READY
        # The rest of the bits; the first byte as RxAlign stores it (the known low bits zero).
        self.told_level = self.told_level or known == 0
        first = full[known >> 3] & (0xFF << (known & 7)) & 0xFF
        return bytes([first]) + full[(known >> 3) + 1:], 0

    def _initial_memory(self) -> bytearray:
        mem = bytearray(180)                             # NTAG213-sized: 45 pages
        u = self.uid.ljust(7, b"\x00")
        mem[0:3] = u[:3]
        mem[3] = CASCADE_TAG ^ u[0] ^ u[1] ^ u[2]
        mem[4:8] = u[3:7]
        mem[8] = u[3] ^ u[4] ^ u[5] ^ u[6]
        mem[12:16] = b"\xe1\x10\x12\x00"
        return mem


@dataclass
class _Placement:
    tag: VirtualTag
    flicker: float = 0.0                     # probability of missing a poll
    pattern: deque | None = None             # explicit visibility per poll, cycled
    rng: random.Random = field(default_factory=random.Random)
    visible: bool = True


class TagField:
    """The tags in one antenna's field.  Visibility is decided once per REQA/WUPA (a poll)."""

    def __init__(self, chip: "EmulatedMFRC522"):
        self._chip = chip
        self._entries: dict[int, _Placement] = {}

    def put(self, tag: VirtualTag, *, flicker: float = 0.0, pattern: Sequence[bool] | None = None,
            seed: int = 0) -> VirtualTag:
        """Bring ``tag`` into the field.  ``flicker``: chance it misses a poll; ``pattern``:
        its visibility poll by poll (True: seen), repeated."""
        if not 0.0 <= flicker <= 1.0:
            raise ValueError(f"flicker must be a probability, got {flicker}")
        with self._chip.lock:
            self._entries[id(tag)] = _Placement(tag, flicker, deque(pattern) if pattern else None,
                                                random.Random(seed))
        return tag

    def take(self, tag: VirtualTag) -> None:
        """Remove ``tag`` from the field; out of every field it loses power (back to IDLE)."""
        with self._chip.lock:
            self._entries.pop(id(tag), None)
            if not self._chip.bus_has_tag(tag):
                tag.power_off()

    def clear(self) -> None:
        for entry in list(self._entries.values()):
            self.take(entry.tag)

    def __contains__(self, tag: object) -> bool:
        return id(tag) in self._entries

    @property
    def tags(self) -> list[VirtualTag]:
        return [e.tag for e in self._entries.values()]

    def new_poll(self) -> None:
        """A reader's poll begins: each tag is seen or not for all of it.  A tag that misses it is
        at the field's edge and browns out: it forgets its state (unless another field powers it)."""
        for entry in self._entries.values():
            if entry.pattern:
                entry.visible = bool(entry.pattern[0])
                entry.pattern.rotate(-1)
            else:
                entry.visible = entry.rng.random() >= entry.flicker
            if not entry.visible and not self._chip.bus_has_tag(entry.tag, besides=self._chip):
                entry.tag.power_off()

    def visible(self) -> list[VirtualTag]:
        return [e.tag for e in self._entries.values() if e.visible]


# ------------------------------------------------------------------------------------------ chip
@dataclass
class _Tx:
    end: float
    frame: bytes
    last_bits: int
    receive: bool


@dataclass
class _Rx:
    start: float
    end: float
    data: bytes
    last_bits: int
    coll_pos: int | None
    parity_err: bool = False                 # a whole byte failed its odd parity
    fifth_done: bool = False
    stored: int = 0                          # bytes already in the FIFO (those before a collision)
    coll_done: bool = False


class EmulatedMFRC522:
    """One MFRC522 behind SPI.  ``clock`` is shared with the other chips of the bus."""

    def __init__(self, clock: VirtualClock | None = None, *, version: int = 0x92, name: str = "rc522",
                 neighbours: Callable[[], Iterable["EmulatedMFRC522"]] | None = None,
                 lock: threading.RLock | None = None, osc_startup_s: float = OSC_STARTUP_S,
                 loads_miso_in_reset: bool = True, error_rate: float = 0.0, error_seed: int = 0):
        if not 0.0 <= error_rate <= 1.0:
            raise ValueError(f"error_rate must be a probability, got {error_rate}")
        self.clock = clock if clock is not None else VirtualClock()
        self.lock = lock if lock is not None else threading.RLock()     # shared by the chips of a bus
        self.name = name
        self.field = TagField(self)
        self._neighbours = neighbours
        self.dead_value: int | None = None          # every MISO byte when dead
        self.dead_until_reset = False
        self.osc_startup_s = osc_startup_s
        self.loads_miso_in_reset = loads_miso_in_reset
        self.transactions = 0
        self.error_rate = error_rate                # share of received frames with one bit flipped
        self._error_rng = random.Random(error_seed)
        self.errors: dict[int, int] = {}            # ErrorReg bit -> how often it was raised
        self.hard_resets = 0
        self.soft_resets = 0
        self._check_unanswered = False             # a presence check found nobody: the WUPA after it
        self._reset_watch: tuple[object, int] | None = None
        self._reset_seen = 0
        self._held_in_reset = False
        self._osc_ready = self.clock.now            # before this, SPI reads 0x00 and writes are lost
        self._power_down_until: float | None = None     # PowerDown reads 1 until then (None: not set)
        self.version = version                      # (0x00/0xFF: a dead chip, see the setter)
        self._soft_reset()

    @property
    def version(self) -> int:
        """What VersionReg reads: 0x91/0x92 (NXP), 0x88/0xB2/0x12 (clones); 0x00 or 0xFF makes a dead chip."""
        return self._version

    @version.setter
    def version(self, value: int) -> None:
        self._version = value & 0xFF
        if self._version in NO_CHIP:
            self.kill(self._version)

    # ----- faults and wiring -------------------------------------------------------------------
    @property
    def dead(self) -> bool:
        return self.dead_value is not None

    def kill(self, miso: int = 0x00, *, until_reset: bool = False) -> None:
        """Stop answering: every byte read is ``miso`` (0x00: unplugged/unpowered, 0xFF: floating MISO).
        ``until_reset``: a pulse on the reset pin brings it back (a latched-up chip)."""
        self.dead_value, self.dead_until_reset = miso & 0xFF, until_reset

    def revive(self) -> None:
        """Answer again (wiring fixed); registers are as after a power-up."""
        self.dead_value, self.dead_until_reset = None, False
        self._soft_reset()

    def watch_reset_pin(self, gpio: object, pin: int) -> None:
        """Wire NRSTPD to BCM ``pin`` of a :class:`hw.fake_gpio.FakeGPIO`: LOW holds the chip in
        reset (MISO reads 0x00), a LOW pulse resets it."""
        self._reset_watch = (gpio, pin)
        self._reset_seen = len(getattr(gpio, "history"))
        self._held_in_reset = self.held_in_reset()

    def hard_reset(self, at: float | None = None) -> None:
        """What NRSTPD going HIGH at ``at`` does: power-on state once the crystal has started
        (``osc_startup_s`` later; SPI reads 0x00 and writes are lost until then); a fault marked
        ``until_reset`` clears."""
        self.hard_resets += 1
        if self.dead_until_reset:
            self.dead_value, self.dead_until_reset = None, False
        self._soft_reset()
        self._osc_ready = (self.clock.now if at is None else at) + self.osc_startup_s

    def held_in_reset(self) -> bool:
        """Is NRSTPD LOW now?  An input pin that was never set up reads as its power-on pull
        (GPIO0-8 pulled up, GPIO9-27 pulled down), as on a Pi."""
        if self._reset_watch is None:
            return False
        gpio, pin = self._reset_watch
        if gpio.direction(pin) is None:
            return pin > 8
        return gpio.level(pin) == 0

    def _poll_reset_pin(self) -> None:
        if self._reset_watch is None:
            return
        gpio, pin = self._reset_watch
        history = gpio.history
        new = history[self._reset_seen:]
        self._reset_seen = len(history)
        level = 0 if self._held_in_reset else 1
        rise_at = None
        for t, p, written in new:                        # edges, not writes: HIGH on HIGH is nothing
            if p == pin:
                if written and not level:
                    rise_at = t
                level = written
        low = self.held_in_reset()
        if rise_at is not None and not low:
            self.hard_reset(rise_at)
        self._held_in_reset = low

    def _update_bus(self) -> None:
        """Bring every chip of the bus up to now first: a tag in two fields hears both."""
        now = self.clock.now
        for chip in (self._neighbours() if self._neighbours else ()):
            if chip is not self and chip.dead_value is None:
                chip._update(now)
        self._update(now)

    def bus_has_tag(self, tag: VirtualTag, besides: "EmulatedMFRC522 | None" = None) -> bool:
        chips = list(self._neighbours()) if self._neighbours else [self]
        return any(tag in chip.field for chip in chips if chip is not besides)

    # ----- SPI ---------------------------------------------------------------------------------
    def transfer(self, data: bytes, hz: float | None = None) -> bytes:
        """One SPI transaction (chip select low for all of ``data``); returns the MISO bytes.

        ``hz``: the SPI clock, to advance the shared clock by the bytes' time first.
        Read: ``[0x80|addr<<1, 0x80|addr2<<1, ..., 0]`` returns ``[x, reg(addr), reg(addr2), ...]``;
        write: ``[addr<<1, v1, v2, ...]`` writes every value to ``addr`` (FIFO bursts).
        """
        data = bytes(data)
        with self.lock:
            return self._transfer(data, hz)

    def _transfer(self, data: bytes, hz: float | None) -> bytes:
        if hz:
            self.clock.advance(len(data) * 8 / hz)
        self.transactions += 1
        self._poll_reset_pin()
        if self._held_in_reset or self.clock.now < self._osc_ready:
            return bytes(len(data))                       # no clock yet: nothing is read or written
        if self.dead_value is not None:
            return bytes([self.dead_value]) * len(data)
        if not data:
            return b""
        self._update_bus()
        out = bytearray(len(data))
        if data[0] & 0x80:
            for i in range(1, len(data)):
                out[i] = self._read((data[i - 1] >> 1) & 0x3F)
        else:
            addr = (data[0] >> 1) & 0x3F
            for value in data[1:]:
                self._write(addr, value)
        return bytes(out)

    def peek(self, addr: int) -> int:
        """A register's stored value, without side effects (for tests)."""
        self._update(self.clock.now)
        return self._regs[addr]

    # ----- registers --------------------------------------------------------------------------
    def _soft_reset(self) -> None:
        self.soft_resets += 1
        self._regs = bytearray(64)
        for addr, value in RESET_VALUES.items():
            self._regs[addr] = value
        self._regs[VERSION] = self.version
        self._fifo: deque[int] = deque()
        self._cmd = CMD_IDLE
        self._tx: _Tx | None = None
        self._rx: _Rx | None = None
        self._timer_deadline: float | None = None
        self._timer_auto_started = False
        self._crc = 0
        self._power_down_until = None
        self._powered_tags_reset()

    def _powered_tags_reset(self) -> None:
        for tag in self.field.tags:                      # antenna off after reset: field tags lose power
            if not any(tag in chip.field and chip._antenna_on()
                       for chip in (self._neighbours() if self._neighbours else []) if chip is not self):
                tag.power_off()

    def _antenna_on(self) -> bool:
        return bool(self._regs[TX_CONTROL] & 0x03) and self._power_down_until is None

    def _timer_period(self) -> float:
        prescaler = ((self._regs[T_MODE] & 0x0F) << 8) | self._regs[T_PRESCALER]
        reload = (self._regs[T_RELOAD_H] << 8) | self._regs[T_RELOAD_L]
        return (2 * prescaler + 1) * (reload + 1) / FC

    def _read(self, addr: int) -> int:
        regs = self._regs
        if addr == FIFO_DATA:
            value = self._fifo.popleft() if self._fifo else 0
            self._fifo_changed()
            return value
        if addr == FIFO_LEVEL:
            return len(self._fifo) & 0x7F
        if addr == COMMAND:
            return (regs[COMMAND] & 0x20) | (POWER_DOWN if self._powered_down() else 0) | self._cmd
        if addr == STATUS1:
            status = 0
            status |= 0x01 if len(self._fifo) <= regs[WATER_LEVEL] else 0
            status |= 0x02 if len(self._fifo) >= 64 - regs[WATER_LEVEL] else 0
            status |= 0x08 if self._timer_deadline is not None else 0
            status |= 0x10 if (regs[COMM_IRQ] & regs[COMM_IEN] & 0x7F) or (regs[DIV_IRQ] & regs[DIV_IEN] & 0x14) else 0
            status |= 0x20 if self._cmd == CMD_CALC_CRC and not self._fifo else 0
            status |= 0x40 if self._cmd == CMD_CALC_CRC and not self._fifo else 0
            return status
        if addr == STATUS2:
            return (regs[STATUS2] & 0xC8) | self._modem_state()
        if addr in (T_COUNTER_H, T_COUNTER_L):
            ticks = 0
            if self._timer_deadline is not None:
                prescaler = ((regs[T_MODE] & 0x0F) << 8) | regs[T_PRESCALER]
                ticks = max(0, int((self._timer_deadline - self.clock.now) * FC / (2 * prescaler + 1)))
            return (ticks >> 8) & 0xFF if addr == T_COUNTER_H else ticks & 0xFF
        if addr == VERSION:
            return self.version
        return regs[addr]

    def _write(self, addr: int, value: int) -> None:
        regs = self._regs
        if self._powered_down() and addr != COMMAND:
            return                                         # soft power-down: no clock for the registers
        if addr == COMMAND:
            self._power_command(value)
        elif addr in (COMM_IRQ, DIV_IRQ):
            mask = value & 0x7F
            if value & 0x80:
                regs[addr] |= mask
            else:
                regs[addr] &= ~mask & 0xFF
        elif addr == FIFO_DATA:
            if len(self._fifo) >= 64:
                self._error(ERR_BUFFER_OVFL)
            else:
                self._fifo.append(value)
                if self._cmd == CMD_CALC_CRC:
                    self._calc_crc()
            self._fifo_changed()
        elif addr == FIFO_LEVEL:
            if value & 0x80:
                self._fifo.clear()
                regs[ERROR] &= ~ERR_BUFFER_OVFL & 0xFF
                self._fifo_changed()
        elif addr == CONTROL:
            regs[CONTROL] = (regs[CONTROL] & 0x07) | (value & 0x30) | 0x10
            if value & 0x80:
                self._timer_deadline = None
            if value & 0x40:
                self._start_timer(self.clock.now, auto=False)
        elif addr == BIT_FRAMING:
            regs[BIT_FRAMING] = value
            if value & 0x80 and self._cmd == CMD_TRANSCEIVE and self._tx is None:
                self._start_tx(receive=True)
        elif addr == TX_CONTROL:
            was_on = self._antenna_on()
            regs[TX_CONTROL] = value
            if was_on and not self._antenna_on():
                self._powered_tags_reset()
        elif addr in (ERROR, VERSION, STATUS1, T_COUNTER_H, T_COUNTER_L, CRC_RESULT_M, CRC_RESULT_L):
            pass                                                    # read-only
        elif addr == STATUS2:
            regs[STATUS2] = value & 0xC8
        else:
            regs[addr] = value

    def _fifo_changed(self) -> None:
        level, water = len(self._fifo), self._regs[WATER_LEVEL]
        if level <= water:
            self._regs[COMM_IRQ] |= IRQ_LO_ALERT
        if level >= 64 - water:
            self._regs[COMM_IRQ] |= IRQ_HI_ALERT

    def _error(self, bits: int) -> None:
        self.errors[bits] = self.errors.get(bits, 0) + 1
        self._regs[ERROR] |= bits
        self._regs[COMM_IRQ] |= IRQ_ERR

    def _modem_state(self) -> int:
        if self._cmd not in (CMD_TRANSCEIVE, CMD_TRANSMIT, CMD_RECEIVE):
            return 0
        if self._tx is not None:
            return 3
        if self._rx is not None:
            return 6 if self.clock.now >= self._rx.start else 5
        return 1 if self._cmd == CMD_TRANSCEIVE else 4

    # ----- commands ----------------------------------------------------------------------------
    def _powered_down(self) -> bool:
        """PowerDown reads 1: soft power-down, or leaving it (the crystal starting again)."""
        if self._power_down_until is None:
            return False
        if self._power_down_until != float("inf") and self.clock.now >= self._power_down_until:
            self._power_down_until = None
            return False
        return True

    def _power_command(self, value: int) -> None:
        """A CommandReg write: PowerDown=1 enters soft power-down (command stopped, antenna off);
        PowerDown=0 leaves it after the crystal's start-up (1024 clocks: ~37.7 us) -- it still reads
        1 until then, and a SoftReset written meanwhile is carried out once it reads 0."""
        if value & POWER_DOWN:
            if self._power_down_until is None:
                self._tx = self._rx = None
                self._cmd = CMD_IDLE
                self._timer_deadline = None
                self._power_down_until = float("inf")
                self._powered_tags_reset()
            self._regs[COMMAND] = value & 0x20
            return
        if self._power_down_until is not None:
            if self._power_down_until == float("inf"):
                self._power_down_until = self.clock.now + OSC_CLOCKS_S
            if value & 0x0F == CMD_SOFT_RESET:           # reset once awake: the registers go to defaults now
                until = self._power_down_until
                self._soft_reset()
                self._power_down_until = until
            return
        self._regs[COMMAND] = value & 0x20
        self._command(value & 0x0F)

    def _command(self, cmd: int) -> None:
        if cmd == CMD_NO_CHANGE:
            return
        self._tx = self._rx = None
        if cmd == CMD_IDLE:
            self._cmd = CMD_IDLE
        elif cmd == CMD_SOFT_RESET:
            self._soft_reset()
        elif cmd == CMD_CALC_CRC:
            self._cmd = CMD_CALC_CRC
            self._crc = CRC_PRESETS[self._regs[MODE] & 0x03]
            self._calc_crc()
        elif cmd == CMD_TRANSMIT:
            self._cmd = CMD_TRANSMIT
            self._start_tx(receive=False)
        elif cmd == CMD_TRANSCEIVE:
            self._cmd = CMD_TRANSCEIVE
            self._regs[ERROR] &= ERR_BUFFER_OVFL
            if self._regs[BIT_FRAMING] & 0x80:
                self._start_tx(receive=True)
        elif cmd == CMD_RECEIVE:
            self._cmd = CMD_RECEIVE                     # tags never speak first: waits for ever
        elif cmd == CMD_AUTHENT:
            # Crypto1 is not emulated: the authentication fails at once.
            self._cmd = CMD_IDLE
            self._error(ERR_PROTOCOL)
            self._regs[COMM_IRQ] |= IRQ_IDLE
        else:                                           # Mem, GenerateRandomID, unknown: done at once
            self._cmd = CMD_IDLE
            self._regs[COMM_IRQ] |= IRQ_IDLE

    def _calc_crc(self) -> None:
        while self._fifo:
            self._crc = crc_a([self._fifo.popleft()], self._crc)
        self._regs[CRC_RESULT_L] = self._crc & 0xFF
        self._regs[CRC_RESULT_M] = self._crc >> 8
        self._regs[DIV_IRQ] |= DIV_CRC
        self._fifo_changed()

    def _start_tx(self, receive: bool) -> None:
        frame = bytes(self._fifo)
        self._fifo.clear()
        self._fifo_changed()
        last_bits = self._regs[BIT_FRAMING] & 0x07
        self._regs[ERROR] &= ERR_BUFFER_OVFL
        self._regs[COLL] = (self._regs[COLL] & 0x80) | 0x20
        self._tx = _Tx(self.clock.now + frame_bits(len(frame), last_bits) * BIT_S, frame, last_bits, receive)

    def _start_timer(self, at: float, auto: bool) -> None:
        self._timer_deadline = at + self._timer_period()
        self._timer_auto_started = auto

    def _update(self, now: float) -> None:
        """Play every chip event due by ``now`` in time order."""
        while True:
            due: list[tuple[float, int]] = []
            if self._tx is not None:
                due.append((self._tx.end, 0))
            if self._rx is not None and not self._rx.fifth_done:
                due.append((self._rx.start + 5 * BIT_S, 1))
            if self._rx is not None and self._rx.coll_pos is not None and not self._rx.coll_done:
                due.append((self._rx.start + (1 + self._rx.coll_pos + (self._rx.coll_pos - 1) // 8) * BIT_S, 4))
            if self._rx is not None:
                due.append((self._rx.end, 2))
            if self._timer_deadline is not None:
                due.append((self._timer_deadline, 3))
            due = [d for d in due if d[0] <= now]
            if not due:
                return
            at, kind = min(due)
            if kind == 0:
                self._tx_done(at)
            elif kind == 1:
                if self._timer_auto_started and not self._regs[RX_MODE] & 0x04 \
                        and self._timer_deadline is not None and self._timer_deadline > at:
                    self._timer_deadline = None          # TAuto: the 5th received bit stops the timer
                self._rx.fifth_done = True
            elif kind == 2:
                self._rx_done(self._rx)
            elif kind == 4:
                self._rx_collision(self._rx)
            else:
                self._timer_expired(at)

    def _tx_done(self, at: float) -> None:
        tx, self._tx = self._tx, None
        self._regs[COMM_IRQ] |= IRQ_TX
        if self._regs[T_MODE] & 0x80:
            self._start_timer(at, auto=True)
        answers = []
        if self._antenna_on() and tx.frame:
            # A poll starts with WUPA/REQA -- or, for a tag left READY, with the presence check;
            # the WUPA that follows a check nobody answered is the same poll.
            if len(tx.frame) == 1 and tx.last_bits == 7:
                if not self._check_unanswered:
                    self.field.new_poll()
                self._check_unanswered = False
            elif any(tag.is_presence_check(tx.frame) for tag in self.field.tags):
                self.field.new_poll()
                self._check_unanswered = True
            for tag in self.field.visible():
                answer = tag.hear(tx.frame, tx.last_bits)
                if answer is not None:
                    answers.append((tag, answer))
        if self._regs[COMMAND] & 0x20:                  # RcvOff: the analog receiver is off
            answers = []
        if not tx.receive:
            self._cmd = CMD_IDLE
            self._regs[COMM_IRQ] |= IRQ_IDLE
            return
        if answers:
            self._check_unanswered = False
            data, last_bits, coll, parity_err = _combine([a for _, a in answers])
            data, flipped = self._noise(data, last_bits)
            start = at + max(tag.fdt_s for tag, _ in answers)
            end = start + frame_bits(len(data), last_bits) * BIT_S
            self._rx = _Rx(start, end, data, last_bits, coll, parity_err or flipped)

    def _noise(self, data: bytes, last_bits: int) -> tuple[bytes, bool]:
        """The injected error: with ``error_rate``, one bit of the frame's whole bytes -- a data
        bit or a parity bit -- flipped on the air; (the bytes as received, whether one was)."""
        whole = len(data) if last_bits == 0 else len(data) - 1
        if whole <= 0 or not self.error_rate or self._error_rng.random() >= self.error_rate:
            return data, False
        bit = self._error_rng.randrange(whole * 9)        # 8 data bits and a parity bit per byte
        index, pos = divmod(bit, 9)
        if pos == 8:
            return data, True                             # the parity bit: the data arrives intact
        out = bytearray(data)
        out[index] ^= 1 << pos
        return bytes(out), True

    def _store(self, rx: "_Rx", upto: int) -> None:
        clear_from = None                                 # ValuesAfterColl = 0: bits from the collision read 0
        if rx.coll_pos is not None and not self._regs[COLL] & 0x80:
            clear_from = rx.coll_pos - 1
        for index in range(rx.stored, min(upto, len(rx.data))):
            byte = rx.data[index]
            if clear_from is not None and index * 8 + 7 >= clear_from:
                byte &= (1 << max(0, clear_from - index * 8)) - 1
            if len(self._fifo) >= 64:
                self._error(ERR_BUFFER_OVFL)
                break
            self._fifo.append(byte)
        rx.stored = max(rx.stored, upto)
        self._fifo_changed()

    def _rx_collision(self, rx: "_Rx") -> None:
        """The receiver hears the colliding bit: CollErr and ErrIRq at once, mid-frame, with the
        whole bytes before it in the FIFO; the frame goes on (RxIRq at its end)."""
        rx.coll_done = True
        self._store(rx, (rx.coll_pos - 1) // 8)
        self._regs[COLL] = (self._regs[COLL] & 0x80) | (rx.coll_pos % 32 if rx.coll_pos <= 32 else 0x20)
        self._error(ERR_COLL)

    def _rx_done(self, rx: "_Rx") -> None:
        self._rx = None
        if rx.coll_pos is not None and not rx.coll_done:
            self._rx_collision(rx)
        self._store(rx, len(rx.data))
        if rx.parity_err:
            self._error(ERR_PARITY)
        if self._regs[RX_MODE] & 0x80 and len(rx.data) >= 3 and not rx.last_bits \
                and crc_a(rx.data[:-2]) != rx.data[-2] | rx.data[-1] << 8:
            self._error(ERR_CRC)                          # RxCRCEn: the chip checks CRC_A itself
        self._regs[CONTROL] = (self._regs[CONTROL] & 0xF8) | rx.last_bits
        self._regs[COMM_IRQ] |= IRQ_RX

    def _timer_expired(self, at: float) -> None:
        self._regs[COMM_IRQ] |= IRQ_TIMER
        if self._regs[T_MODE] & 0x10:
            period = self._timer_period()
            missed = int((self.clock.now - at) / period)
            self._timer_deadline = at + (missed + 1) * period
        else:
            self._timer_deadline = None


def _odd_parity_bit(byte: int) -> int:
    """The parity bit ISO 14443-3 sends after a byte: odd parity over the 9 bits."""
    return 0 if bin(byte).count("1") & 1 else 1


def _combine(answers: list[tuple[bytes, int]]) -> tuple[bytes, int, int | None, bool]:
    """What the receiver hears when several tags answer at once: a wired-OR of the bits, the
    parity bits included; ``coll_pos`` is the 1-based position of the first bit they disagree on
    (None: they agree); ``parity_err``: a whole byte heard whose parity bit does not match it."""
    data, last_bits = answers[0]
    if all(a == answers[0] for a in answers[1:]):
        return data, last_bits, None, False
    length = max(len(d) for d, _ in answers)
    last_bits = max(lb for _, lb in answers)
    merged = bytearray(length)
    coll = None
    parity_err = False
    for i in range(length):
        values = [d[i] if i < len(d) else None for d, _ in answers]
        present = [v for v in values if v is not None]
        parity = 0
        for v in present:
            merged[i] |= v
            parity |= _odd_parity_bit(v)
        if (i < length - 1 or not last_bits) and parity != _odd_parity_bit(merged[i]):
            parity_err = True
        if coll is None and (len(present) != len(values) or len(set(present)) > 1):
            diff = 0
            for v in present:
                diff |= v ^ present[0]
            diff = diff or 0x01
            coll = i * 8 + (diff & -diff).bit_length()
    return bytes(merged), last_bits, coll, parity_err


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
           "crc_a", "with_crc", "frame_bits", "BIT_S", "FDT_S", "FC"]
