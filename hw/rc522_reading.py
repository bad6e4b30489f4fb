"""Reading tags through one RC522: the ISO 14443-3 dialogue of :class:`hw.rc522.Reader`'s
poll (WUPA, the anticollision cascade, SELECT, the presence check of a tag left READY,
the full scan of stacked cards) and the transceive on the chip's registers that carries
it (the register table is :mod:`hw.rc522_regs`, after the MFRC522 datasheet).

:mod:`hw.rc522` says what a poll is and why the polling is ours and not ``mfrc522``'s;
here are its steps.  A poll is a generator of steps (:data:`Steps`): it yields the time
it waits until, so a scan can interleave the readers of a bus, and :func:`run_steps`
runs one on its own.
"""

from __future__ import annotations

import logging
from typing import Any, Generator

from controller.core.errors import HardwareError

from . import rc522_regs as chip_regs

log = logging.getLogger(__name__)

FULL_SCAN_EVERY = 8            # a full anticollision every so many polls of a reader holding a tag (~160 ms)
MAX_STACK = 4                  # tags read from one reader in one full scan
write_address = lambda reg: (reg << 1) & 0x7E                      # noqa: E731  (SPI address bytes)
read_address = lambda reg: ((reg << 1) & 0x7E) | 0x80             # noqa: E731


class ReaderFault(HardwareError):
    """A reader stopped answering (VersionReg 0x00/0xFF, registers that do not stick, no IRQ)."""


# ------------------------------------------------------------------------------------------ reader
Steps = Generator[float, None, Any]      # a reader's poll as steps: yields "wait until", returns the result
POLL_STEP_S = 40e-6                      # between polls of a chip once its answer is due


def run_steps(steps: Steps) -> Any:
    """Run one reader's steps on their own: each wait is spent polling the chip (a resumed
    step reads CommIrqReg), as a driver without anything else to do would."""
    try:
        while True:
            next(steps)
    except StopIteration as done:
        return done.value



class TagReading:
    """The reading half of :class:`hw.rc522.Reader` (its ``spi``, ``timeout_s``, name and
    reset pin; the chip's state between polls)."""

    # ----- reading --------------------------------------------------------------------------------
    def read_uid(self) -> str | None:
        """Poll once: the complete UID (4, 7 or 10 bytes) as upper-case hex, or None.

        Raises :class:`ReaderFault` if the chip stopped answering.
        """
        return run_steps(self._read_uid_steps())

    def _read_uid_steps(self) -> Steps:
        uid = yield from self._read_released()
        self._last = uid
        return None if uid is None else uid.hex().upper()

    def _read_released(self) -> bytes | None:
        """One read; the tag that answered is put back to IDLE (HALT if WUPA woke it from there)
        unless it was left READY at its last cascade level for the next poll's presence check
        (a read that walked a collision always puts them back: several tags are READY)."""
        self._answered = self._collided = False
        self._heard = False
        try:
            uid = yield from self._read()
        except BaseException:
            self._ready = False
            raise
        finally:
            if self._answered and not self._ready:
                self._ready = False
                yield from self._release()
        return uid

    def _read(self) -> bytes | None:
        if self._ready and self._last is not None:
            present = yield from self._still_there()
            if present:
                return self._last
            self._ready = False
            if present is None:                              # an answer, but not ours: put it back first
                yield from self._release()
            self._fifo_dirty = True
            disturbed = True                                 # our READY tag was disturbed (a neighbour's WUPA,
        else:                                                # or it left): released after this read
            disturbed = False
        self._ready = False
        atqa = yield from self._transceive(b"\x52", last_bits=7, expect=2, collisions=True)   # WUPA: wakes halted tags
        if atqa is None:
            return None                                      # (ATQAs of different tags may collide: fine)
        self._answered = True
        uid = yield from self._read_levels()
        if uid is None or (disturbed and uid == self._last):
            # a tag answered and was lost again, or the one left READY had been sent to IDLE by
            # someone else: a neighbour sharing the tag polls at the same time (see read_steps)
            self.interfered = True
        if disturbed or (uid != self._last and self._taken is None):   # (a full scan knows the tag)
            # A tag read for the first time goes back to IDLE, so that a neighbour whose antenna
            # sees it too finds it with its next WUPA (a READY tag ignores WUPA and drops to IDLE
            # unheard) and the cross-talk shows; only a tag read twice in a row stays READY.
            self._ready = False
        return uid

    def _still_there(self) -> bool | None:
        """The presence check of the tag left READY at its last cascade level by the last poll:
        one ANTICOLLISION frame (NVB 0x20) at that level, answered only by a tag still READY there
        -- one that stayed powered in the field since it was read, the earlier levels already
        selected -- with the UID part we expect.  True: it is; False: no answer; None: another
        answer (several tags, or not ours)."""
        parts = self._known_parts()
        sel, part = chip_regs.SEL_CODES[len(parts) - 1], parts[-1]
        answer = yield from self._transceive(bytes((sel, 0x20)), expect=5, collisions=True)
        if answer is None:
            return False
        data, coll = answer
        return True if coll is None and data == part + bytes((part[0] ^ part[1] ^ part[2] ^ part[3],)) else None

    def _read_levels(self) -> bytes | None:
        """The cascade after WUPA.  The tag read last time is SELECTed at once on every level but
        its last; every last level is an ANTICOLLISION, so the tag is left READY there (a cascade
        tag, or a 4-byte UID starting 0x88, still needs the SELECT whose SAK decides)."""
        known = self._known_parts()
        uid = b""
        for sel in chip_regs.SEL_CODES:
            part = None
            if known is not None and len(known) > 1:
                sak = yield from self._select(sel, known[0])            # the tag read last time: SELECT at once
                if sak is not None and sak & 0x04:
                    part = known.pop(0)
                else:
                    known = None
            if part is None:
                part = yield from self._anticoll(sel)
                if part is None:
                    return None
                if part[0] == chip_regs.CASCADE_TAG:         # a cascade tag, or a 4-byte UID that starts 0x88:
                    sak = yield from self._select(sel, part)            # the SAK decides
                    if sak is None:
                        return None
                    if not sak & chip_regs.SAK_UID_INCOMPLETE:
                        return uid + part                    # (ACTIVE now: released after the read)
            if part[0] != chip_regs.CASCADE_TAG:            # no cascade tag: the UID is complete; the tag is
                self._ready = not self._collided             # READY there (released if another one is too)
                return uid + part
            uid += part[1:]
        return None

    def read_uids(self) -> list[str]:
        """:meth:`read_steps` on its own: the reader waits for its chip by polling it."""
        return run_steps(self.read_steps())

    def read_steps(self) -> Steps:
        """Poll once for every tag on the reader, as steps: a generator that yields, whenever it
        waits for its chip, the time (``backend.now()``) before which asking again is pointless,
        and returns the UIDs -- so :class:`hw.scanner.Scanner` runs the readers' polls side by
        side, one reader's SPI work filling another's air time.  Side by side, two readers whose
        antennas share a tag (cross-talk) disturb each other's frames; a poll that saw it happen
        -- a tag answered and was lost, or the tag left READY had gone to IDLE and was there
        after WUPA -- sets ``interfered``, and the scanner polls again, alone.  The poll: usually the one read last time (its fast path);
        every :data:`FULL_SCAN_EVERY`-th poll of a reader holding a tag, and every poll while it
        holds several, a full scan: WUPA and anticollision from the start and, where tags collided,
        again down the other branch of each collision (ISO 14443-3's bit tree), up to
        :data:`MAX_STACK` tags.  So a card laid on an occupied reader is seen; ``stack`` holds the
        UIDs while there are several."""
        self._polls += 1
        self.interfered = False
        if self._stack_hold > 0:
            self._stack_hold -= 1
        if not self.stack and not self._stack_hold and (
                self._last is None or (self._polls + 3 * self.bus + self.device) % FULL_SCAN_EVERY):
            uid = yield from self._read_uid_steps()
            return [] if uid is None else [uid]
        found: list[bytes] = []
        todo: list[list[int]] = [[]]                  # collision choices to follow (default: 1)
        if self._ready:                               # the WUPA would send a READY tag to IDLE unheard
            yield from self._release()
            self._ready = False
        self._last = None                             # no fast path: anticollision from the start
        while todo and len(found) < MAX_STACK:
            self._choices, self._taken = todo.pop(0), []
            uid = yield from self._read_released()
            taken = self._taken
            self._choices = self._taken = None
            if uid is None:
                continue
            if uid not in found:
                found.append(uid)
            for i in range(len(taken) - 1, -1, -1):   # the other side of every collision passed
                if taken[i] == 1 and len(found) + len(todo) < MAX_STACK:
                    todo.append(taken[:i] + [0])
        self._last = found[0] if len(found) == 1 else None
        uids = [u.hex().upper() for u in found]
        if len(uids) > 1:
            self._stack_hold = FULL_SCAN_EVERY         # a damaged frame may hide one of them next time:
        self.stack = tuple(uids) if len(uids) > 1 else ()   # keep walking the tree for a while
        return uids

    def _known_parts(self) -> list[bytes] | None:
        u = self._last
        if u is None:
            return None
        if len(u) == 7:
            return [b"\x88" + u[:3], u[3:]]
        if len(u) == 10:
            return [b"\x88" + u[:3], b"\x88" + u[3:6], u[6:]]
        return [u]

    def _anticoll(self, sel: int) -> bytes | None:
        """ANTICOLLISION at one cascade level: the 4 UID bytes of the tag it singles out.

        On a bit collision the ISO 14443-3 loop goes on with the bits known so far and a 1 at the
        colliding position, so of several tags the same one wins every time."""
        buf = bytearray(5)
        known = 0                                            # UID bits of this level known so far
        for _ in range(33):
            whole, bits = divmod(known, 8)
            frame = bytes((sel, ((2 + whole) << 4) | bits)) + bytes(buf[:whole + (1 if bits else 0)])
            answer = yield from self._transceive(frame, last_bits=bits, expect=5 - whole, rx_align=bits,
                                      collisions=True)
            if answer is None:
                return None
            data, coll = answer
            keep = (1 << bits) - 1                           # the known low bits of the first byte
            for i, byte in enumerate(data[:5 - whole]):
                buf[whole + i] = (buf[whole + i] & keep) | (byte & ~keep & 0xFF) if i == 0 else byte
            if coll is None:
                if buf[0] ^ buf[1] ^ buf[2] ^ buf[3] != buf[4]:
                    log.debug("reader %s: BCC mismatch in %s", self.name, buf.hex())
                    return None
                return bytes(buf[:4])
            new_known = whole * 8 + coll                     # bits up to the collision, counted from 1
            if new_known <= known or new_known > 32:
                log.debug("reader %s: unusable collision position %d", self.name, coll)
                return None
            index, bit = divmod(new_known - 1, 8)
            self._collided = True
            choice = 1                                       # take the tags with a 1 there ...
            if self._taken is not None:                      # ... unless a full scan walks the other way
                i = len(self._taken)
                choice = self._choices[i] if i < len(self._choices) else 1
                self._taken.append(choice)
            if choice:
                buf[index] |= 1 << bit
            else:
                buf[index] &= ~(1 << bit) & 0xFF
            for clear in range(index + 1, 5):
                buf[clear] = 0
            buf[index] &= (1 << (bit + 1)) - 1
            known = new_known
            log.debug("reader %s: several tags, collision at bit %d of level 0x%02X", self.name, known, sel)
        return None

    def _select(self, sel: int, part: bytes) -> int | None:
        bcc = part[0] ^ part[1] ^ part[2] ^ part[3]
        sak = yield from self._transceive(chip_regs.with_crc(bytes((sel, 0x70)) + part + bytes((bcc,))), expect=3)
        if sak is None or chip_regs.with_crc(sak[:1]) != sak:
            return None
        return sak[0]

    def _release(self) -> None:
        """Send one byte that is no command (0x00) with the Transmit command and wait for its end:
        the half-read tag goes back to IDLE (HALT if WUPA woke it from there), so the next WUPA
        -- ours, or a neighbour's when its antenna sees the tag too -- finds it again.  The timer
        the transmission started (TAuto) is stopped."""
        if self._closed:
            return
        try:
            yield from self._transmit(b"\x00")
            self._xfer([write_address(chip_regs.CONTROL), 0x80])        # TStopNow
        except OSError as exc:
            log.debug("reader %s: release frame not sent: %s", self.name, exc)

    def _transmit(self, frame: bytes) -> None:
        """Send ``frame`` with the Transmit command (no answer expected) and wait for its end."""
        x = self._xfer
        x([write_address(chip_regs.COMMAND), chip_regs.CMD_IDLE])      # IdleIRq is clear: only a command ending sets it
        if self._fifo_dirty:
            x([write_address(chip_regs.FIFO_LEVEL), 0x80])
        if self._tx_last_bits:
            x([write_address(chip_regs.BIT_FRAMING), 0x00])
            self._tx_last_bits = 0
        x([write_address(chip_regs.FIFO_DATA), *frame])
        x([write_address(chip_regs.COMMAND), chip_regs.CMD_TRANSMIT])
        self._fifo_dirty = self._armed = False
        start = self.backend.now()
        ends = start + chip_regs.frame_bits(len(frame), 0) * chip_regs.BIT_S
        limit = start + self._budget(len(frame), 0)
        yield ends
        polls = 0
        while not x([read_address(chip_regs.COMM_IRQ), 0])[1] & chip_regs.IRQ_IDLE:
            polls += 1
            if polls >= 3 and self.backend.now() > limit:
                raise ReaderFault(self._fault_text("its transmission never ended"))
            yield self.backend.now() + POLL_STEP_S

    def _budget(self, nbytes: int, rx_bytes: int = 18) -> float:
        """The longest a frame and its answer may take before a chip that raised no IRQ is dead."""
        return (chip_regs.frame_bits(nbytes, 0) + chip_regs.frame_bits(rx_bytes)) * chip_regs.BIT_S \
            + self.timeout_s + 2 * chip_regs.FDT_S + 0.002

    def _transceive(self, data: bytes, last_bits: int = 0, expect: int = 0, rx_align: int = 0,
                    collisions: bool = False):
        """Send one frame; the ``expect``-byte answer, or None (no answer in time, error, other length).

        ``collisions=True``: return ``(bytes, None)``, or ``(bytes, CollPos)`` when several tags
        answered.  After an answer the chip stays in Transceive ("armed"): the next frame needs
        only the FIFO and StartSend.  The FIFO is flushed only when something was left in it.
        """
        x = self._xfer
        framing = (rx_align << 4) | last_bits
        if not self._armed:
            x([write_address(chip_regs.COMMAND), chip_regs.CMD_IDLE])
        x([write_address(chip_regs.COMM_IRQ), 0x7F])                   # clear every IRQ bit
        if self._fifo_dirty:
            x([write_address(chip_regs.FIFO_LEVEL), 0x80])             # flush
        x([write_address(chip_regs.FIFO_DATA), *data])
        x([write_address(chip_regs.BIT_FRAMING), framing])             # StartSend still set from the last frame
        if not self._armed:
            x([write_address(chip_regs.COMMAND), chip_regs.CMD_TRANSCEIVE])
        x([write_address(chip_regs.BIT_FRAMING), 0x80 | framing])      # StartSend
        self._tx_last_bits = last_bits
        self._armed = self._fifo_dirty = False
        # Wait: first until the answer, if any, would be over (its frame delay time and length are
        # fixed by ISO 14443-3), then until the chip timer would have expired, then in short steps.
        # ErrIRq comes mid-frame (a collision is heard at its bit): the frame goes on until RxIRq,
        # so wait for the receive to end, as the Arduino library and the hub firmware do.
        start = self.backend.now()
        tx_end = start + chip_regs.frame_bits(len(data), last_bits) * chip_regs.BIT_S
        answered = tx_end + chip_regs.FDT_S + chip_regs.frame_bits(max(expect, 1)) * chip_regs.BIT_S
        limit = start + self._budget(len(data), expect)
        yield answered
        polls = 0
        while True:
            irq = x([read_address(chip_regs.COMM_IRQ), 0])[1]
            if irq & (chip_regs.IRQ_RX | chip_regs.IRQ_IDLE):
                break
            if irq & chip_regs.IRQ_TIMER:
                if irq & chip_regs.IRQ_ERR:
                    self._fifo_dirty = True
                self._heard = irq != 0xFF                    # the timer ran as programmed: a working chip
                return None                                  # nobody answered in time
            polls += 1
            now = self.backend.now()
            if polls >= 3 and now > limit:
                raise ReaderFault(self._fault_text("no IRQ from the chip"))
            timer_out = tx_end + self.timeout_s
            yield timer_out if now < timer_out - POLL_STEP_S else now + POLL_STEP_S
        if irq & chip_regs.IRQ_ERR:
            # ErrorReg, CollReg, the FIFO level and the FIFO itself in one transfer (read addresses
            # back to back, datasheet 8.1.2.1); bytes read past the level are dropped, and the FIFO
            # is flushed before the next frame in any case.
            out = x([read_address(chip_regs.ERROR), read_address(chip_regs.COLL), read_address(chip_regs.FIFO_LEVEL)]
                    + [read_address(chip_regs.FIFO_DATA)] * max(expect, 1) + [0])
            error, coll, level = out[1:4]
            self._fifo_dirty = True                          # flushed before the next frame, whatever is read
            # A collision wins over the parity and CRC errors it brings (the wired-OR of two tags'
            # bits rarely keeps a byte's parity), as in NXP's own RC52x driver; a buffer overflow or
            # a protocol error still spoils the frame.
            if error & chip_regs.ERR_COLL and not error & (chip_regs.ERR_BUFFER_OVFL | chip_regs.ERR_PROTOCOL):
                if not collisions:
                    return None
                if coll & 0x20 or not 0 < (level & 0x7F) <= min(max(expect, 1), 5):
                    return None                              # CollPosNotValid
                return bytes(out[4:4 + (level & 0x7F)]), (coll & 0x1F) or 32
            log.debug("reader %s: receive error 0x%02X", self.name, error)
            return None
        out = x([read_address(chip_regs.FIFO_LEVEL)] + [read_address(chip_regs.FIFO_DATA)] * expect + [0])
        level = out[1] & 0x7F
        if level != expect:
            self._fifo_dirty = True
            return None
        self._armed = bool(irq & chip_regs.IRQ_RX)
        answer = bytes(out[2:2 + expect])
        return (answer, None) if collisions else answer

    def _xfer(self, data: list[int]) -> list[int]:
        if self._closed:
            raise HardwareError(f"reader {self.name} is closed")
        return self._spi.xfer2(data)

    def _fault_text(self, what: str) -> str:
        return (f"RC522 reader {self.name} (reset GPIO{self.pin_rst}) does not answer ({what}): "
                "check its wiring and 3.3 V supply")

