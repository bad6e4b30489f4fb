"""One emulated MFRC522 (RC522) behind SPI: registers, FIFO, IRQ bits, timer, commands.

What it emulates, and the faults of real boards it can show, are listed in
:mod:`hw.rc522_chip` (the register table is :mod:`hw.rc522_regs`, the datasheet's);
the tags in its antenna's field are :mod:`hw.rc522_tags`.  Time is a
:class:`~controller.core.clock.VirtualClock` shared by the chips of one bus.
"""

from __future__ import annotations

import logging
import random
import threading
from collections import deque
from dataclasses import dataclass
from typing import Callable, Iterable

from controller.core.clock import VirtualClock
from .rc522_regs import BIT_S, CRC_PRESETS, FC, NO_CHIP, OSC_CLOCKS_S, POWER_DOWN, RESET_VALUES, crc_a, frame_bits
from .rc522_regs import (BIT_FRAMING, COLL, COMM_IEN, COMM_IRQ, COMMAND, CONTROL, CRC_RESULT_L, CRC_RESULT_M,
                         DIV_IEN, DIV_IRQ, ERROR, FIFO_DATA, FIFO_LEVEL, MODE, RX_MODE, STATUS1, STATUS2,
                         T_COUNTER_H, T_COUNTER_L, T_MODE, T_PRESCALER, T_RELOAD_H, T_RELOAD_L, TX_CONTROL,
                         VERSION, WATER_LEVEL)
from .rc522_regs import (CMD_AUTHENT, CMD_CALC_CRC, CMD_IDLE, CMD_NO_CHANGE, CMD_RECEIVE, CMD_SOFT_RESET,
                         CMD_TRANSCEIVE, CMD_TRANSMIT, DIV_CRC, ERR_BUFFER_OVFL, ERR_COLL, ERR_CRC, ERR_PARITY, ERR_PROTOCOL,
                         IRQ_ERR, IRQ_HI_ALERT, IRQ_IDLE, IRQ_LO_ALERT, IRQ_RX, IRQ_TIMER, IRQ_TX)
from .rc522_tags import TagField, VirtualTag, combine

log = logging.getLogger(__name__)

# The crystal's start-up after NRSTPD goes HIGH (datasheet 8.8.2: "the start-up time of the
# crystal + 37.74 us"; crystals take a few ms).  The Arduino library waits 50 ms; so does hw.rc522.
OSC_STARTUP_S = 0.005


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
            data, last_bits, coll, parity_err = combine([a for _, a in answers])
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

