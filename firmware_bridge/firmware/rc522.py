"""A compact MFRC522 driver: one reader on a shared SPI bus with its own chip-select.

The register names and values, the VersionReg list and CRC_A are a copy of
``hw/rc522_regs.py`` (MicroPython imports nothing outside ``firmware/``);
``tests/hw/test_rc522_regs.py`` keeps the two equal.

Finds one ISO 14443A tag and reads its complete UID (cascade levels 1-3, so
4, 7 and 10-byte UIDs; bit-wise anticollision when several tags answer).
A poll is WUPA -> ANTICOLLISION (and SELECT while the UID is incomplete) per
level; the last level is an ANTICOLLISION, so the tag is left READY there.  A
tag read in two polls in a row stays READY, and the next poll is a single
ANTICOLLISION frame at that level (only a tag still powered in the field since
it was read answers it); a tag read for the first time, or one that did not
answer that check but was there after WUPA, is sent back to IDLE/HALT (the
HLTA frame) so the next WUPA -- this reader's or a cross-talking neighbour's --
finds it.  After an answer the chip stays in Transceive: the next frame needs
only the FIFO and StartSend.  The chip's timer stops an unanswered command
after ~1 ms, so an empty reader costs about that much.  Every SPI transaction
is one chip-select assertion; several registers are read in one (read
addresses back to back, datasheet 8.1.2.1).
"""

from .ticks import sleep_ms, ticks_add, ticks_diff, ticks_ms

# Registers (datasheet section 9).
COMMAND = 0x01
COMM_IRQ = 0x04
ERROR = 0x06
FIFO_DATA = 0x09
FIFO_LEVEL = 0x0A
CONTROL = 0x0C
BIT_FRAMING = 0x0D
COLL = 0x0E
MODE = 0x11
TX_MODE = 0x12
RX_MODE = 0x13
TX_CONTROL = 0x14
TX_ASK = 0x15
MOD_WIDTH = 0x24
T_MODE = 0x2A
T_PRESCALER = 0x2B
T_RELOAD_H = 0x2C
T_RELOAD_L = 0x2D
VERSION = 0x37

# Commands.
IDLE = 0x00
TRANSMIT = 0x04
TRANSCEIVE = 0x0C
SOFT_RESET = 0x0F

# PICC commands.
WUPA = 0x52
CASCADE = (0x93, 0x95, 0x97)
CASCADE_TAG = 0x88
HLTA_FRAME = b"\x50\x00\x57\xCD"   # HLTA with its CRC_A

# VersionReg: the named versions (MFRC522 v0.0/1.0/2.0, clones FM17522 0x88, 0xB2, 0x12); any value
# but NO_CHIP answers (0x00: MISO low, no chip or no power; 0xFF: MISO floating, unplugged).
VERSIONS = (0x90, 0x91, 0x92, 0x88, 0xB2, 0x12)
NO_CHIP = (0x00, 0xFF)
POWER_DOWN = 0x10

# Transceive outcomes.
OK = 0
TIMEOUT = 1      # nobody answered before the chip's timer ran out
FAILED = 2       # parity, protocol, CRC, buffer or framing error
COLLISION = 3    # several tags answered different bits

TIMER_TICKS = 40         # x 25 us (prescaler 0xA9 -> 40 kHz) = 1 ms
STUCK_MS = 10            # no IRQ at all within this ...
STUCK_READS = 400        # ... and this many IRQ reads (>1 ms of SPI at 4 MHz): the chip is not working
RESET_MS = 50            # longest wait for the oscillator after a soft reset
OSC_WAIT_MS = 50         # NRSTPD went high when the reader was built: the crystal's start-up


class ChipError(OSError):
    """The chip does not answer or does not work (dead, unplugged, wrong wiring)."""


def crc_a(data):
    """ISO 14443-3 CRC_A (init 0x6363, reflected 0x1021) as two bytes, LSB first."""
    crc = 0x6363
    for byte in data:
        byte ^= crc & 0xFF
        byte = (byte ^ (byte << 4)) & 0xFF
        crc = ((crc >> 8) ^ (byte << 8) ^ (byte << 3) ^ (byte >> 4)) & 0xFFFF
    return bytes((crc & 0xFF, crc >> 8))


class Rc522:
    """One MFRC522 on ``spi`` (a ``machine.SPI``) selected by ``cs`` (an output ``machine.Pin``)."""

    def __init__(self, spi, cs):
        self._spi = spi
        self._cs = cs
        self._out = bytearray(2)
        self._in = bytearray(2)
        self.version = 0
        self._last = None             # UID read by the last poll
        self._ready = False           # ... and left READY at its last cascade level
        self._collided = False        # the last cascade walked a collision
        self._armed = False           # the chip is in Transceive after an answer
        self._powered = ticks_ms()    # main.build raises NRSTPD just before the readers are built
        self._waited = False
        cs.value(1)

    # -- register access ------------------------------------------------
    def _xfer(self, out, into):
        self._cs.value(0)
        try:
            self._spi.write_readinto(out, into)
        finally:
            self._cs.value(1)

    def read_many(self, regs):
        """Several registers' values in one transaction."""
        out = bytearray(len(regs) + 1)
        for i, reg in enumerate(regs):
            out[i] = 0x80 | (reg << 1)
        into = bytearray(len(out))
        self._xfer(out, into)
        return into[1:]

    def read(self, reg):
        """One register's value."""
        self._out[0] = 0x80 | (reg << 1)
        self._out[1] = 0
        self._xfer(self._out, self._in)
        return self._in[1]

    def write(self, reg, value):
        """Set one register."""
        self._out[0] = (reg << 1) & 0x7E
        self._out[1] = value
        self._xfer(self._out, self._in)

    def _set_bits(self, reg, mask):
        self.write(reg, self.read(reg) | mask)

    def _read_fifo(self, n):
        if not n:
            return b""
        out = bytearray([0x80 | (FIFO_DATA << 1)] * n + [0])
        into = bytearray(n + 1)
        self._xfer(out, into)
        return bytes(into[1:])

    def _write_fifo(self, data):
        out = bytearray(len(data) + 1)
        out[0] = FIFO_DATA << 1
        out[1:] = data
        self._xfer(out, bytearray(len(out)))

    # -- chip state -----------------------------------------------------
    def alive(self):
        """Does VersionReg answer (anything but 0x00/0xFF: clones read 0x88, 0xB2, 0x12)?"""
        self.version = self.read(VERSION)
        return self.version not in NO_CHIP

    def init(self):
        """Soft reset and configure (1 ms timer, 100% ASK, antenna on) and read it back; False if
        the chip is absent or its registers do not stick."""
        if not self._waited:              # the first time only: the crystal may still be starting,
            self._waited = True           # and a chip without a clock reads 0x00
            while not self.alive() and ticks_diff(ticks_ms(), self._powered) < OSC_WAIT_MS:
                sleep_ms(1)
        if not self.alive():
            return False
        self._last, self._ready, self._armed = None, False, False
        self.write(COMMAND, SOFT_RESET)
        deadline = ticks_add(ticks_ms(), RESET_MS)
        while self.read(COMMAND) & POWER_DOWN:  # PowerDown: oscillator still starting
            if ticks_diff(ticks_ms(), deadline) > 0:
                return False
            sleep_ms(1)
        self.write(TX_MODE, 0x00)
        self.write(RX_MODE, 0x00)
        self.write(MOD_WIDTH, 0x26)
        self.write(T_MODE, 0x80)            # TAuto: timer starts when a frame is sent
        self.write(T_PRESCALER, 0xA9)
        self.write(T_RELOAD_H, TIMER_TICKS >> 8)
        self.write(T_RELOAD_L, TIMER_TICKS & 0xFF)
        self.write(TX_ASK, 0x40)            # force 100% ASK
        self.write(MODE, 0x3D)              # CRC preset 0x6363
        self.write(COLL, self.read(COLL) & 0x7F)  # bits after a collision read as 0
        control = self.read(TX_CONTROL)
        if control & 0x03 != 0x03:
            self.write(TX_CONTROL, control | 0x03)  # antenna on
        for reg, value in ((T_MODE, 0x80), (T_PRESCALER, 0xA9), (T_RELOAD_L, TIMER_TICKS & 0xFF),
                           (TX_ASK, 0x40), (MODE, 0x3D)):
            if self.read(reg) != value:     # a register that does not stick: bad wiring or clone
                return False
        return self.read(TX_CONTROL) & 0x03 == 0x03 and self.alive()

    # -- ISO 14443A -----------------------------------------------------
    def _start(self, command, data, framing):
        if command == TRANSCEIVE and self._armed:   # still in Transceive after an answer
            self._armed = False
            self.write(COMM_IRQ, 0x7F)
            self._write_fifo(data)
            self.write(BIT_FRAMING, 0x80 | framing)  # StartSend
            return
        self._armed = False
        self.write(COMMAND, IDLE)
        self.write(COMM_IRQ, 0x7F)
        self.write(FIFO_LEVEL, 0x80)       # flush
        self._write_fifo(data)
        self.write(BIT_FRAMING, framing)
        self.write(COMMAND, command)
        if command == TRANSCEIVE:
            self.write(BIT_FRAMING, 0x80 | framing)  # StartSend

    @staticmethod
    def _check_stuck(deadline, reads):
        if reads > STUCK_READS and ticks_diff(ticks_ms(), deadline) > 0:
            raise ChipError("no interrupt from the chip within %d ms" % STUCK_MS)

    def transmit(self, data):
        """Send ``data`` and expect no answer (HLTA): returns once it is on the air."""
        self._start(TRANSMIT, data, 0)
        deadline = ticks_add(ticks_ms(), STUCK_MS)
        reads = 0
        while not self.read(COMM_IRQ) & 0x50:  # TxIRq | IdleIRq
            reads += 1
            self._check_stuck(deadline, reads)

    def transceive(self, data, tx_last_bits=0, rx_align=0):
        """Send ``data`` and receive the answer: (status, bytes, valid bits of the last byte)."""
        self._start(TRANSCEIVE, data, (rx_align << 4) | tx_last_bits)
        deadline = ticks_add(ticks_ms(), STUCK_MS)
        reads = 0
        while True:
            irq = self.read(COMM_IRQ)
            if irq & 0x30:                 # RxIRq | IdleIRq
                break
            if irq & 0x01:                 # TimerIRq
                return TIMEOUT, b"", 0
            reads += 1
            self._check_stuck(deadline, reads)
        error, level, control = self.read_many((ERROR, FIFO_LEVEL, CONTROL))
        # CollErr wins over the ParityErr the wired-OR of two tags' bits brings (as NXP's own
        # driver does); BufferOvfl and ProtocolErr spoil the frame, a parity error alone too.
        if error & 0x11 or error & 0x02 and not error & 0x08:
            return FAILED, b"", 0
        back = self._read_fifo(level & 0x7F)
        last_bits = control & 0x07
        if error & 0x08:                   # CollErr
            return COLLISION, back, last_bits
        self._armed = not error            # an answer: the chip waits for the next StartSend
        return OK, back, last_bits

    def _level(self, command):
        """One cascade level: anticollision, then SELECT unless the 4 bytes end the UID (no
        cascade tag); (4 bytes, SAK or None when not selected, whether tags collided) or None."""
        buf = bytearray(9)
        buf[0] = command
        known = 0                          # UID bits of this level known so far
        collided = False
        while known < 32:
            tx_last = known & 7
            index = 2 + (known >> 3)
            buf[1] = (index << 4) | tx_last  # NVB
            status, back, _ = self.transceive(buf[:index + (1 if tx_last else 0)], tx_last, tx_last)
            if status not in (OK, COLLISION) or not back or len(back) > 9 - index:
                return None
            mask = (0xFF << tx_last) & 0xFF
            buf[index] = (buf[index] & ~mask & 0xFF) | (back[0] & mask)
            buf[index + 1:index + len(back)] = back[1:]
            if status == OK:
                known = 32
                continue
            collided = True
            coll = self.read(COLL)
            if coll & 0x20:                # CollPosNotValid
                return None
            # CollPos counts from bit 0 of the first FIFO byte (RxAlign bits included)
            position = (known & ~7) + ((coll & 0x1F) or 32)
            if position <= known or position > 32:
                return None
            known = position
            bit = known - 1                # take the branch where the colliding bit is 1
            buf[2 + (bit >> 3)] |= 1 << (bit & 7)
        if buf[2] ^ buf[3] ^ buf[4] ^ buf[5] != buf[6]:
            return None
        if buf[2] != CASCADE_TAG:
            return bytes(buf[2:6]), None, collided
        buf[1] = 0x70
        buf[7:9] = crc_a(buf[:7])
        status, back, _ = self.transceive(buf)
        if status != OK or len(back) != 3 or crc_a(back[:1]) != bytes(back[1:3]):
            return None
        return bytes(buf[2:6]), back[0], collided

    def read_uid(self):
        """The complete UID (bytes) of one tag in the field, or None; ChipError if the chip is stuck."""
        if self._ready:
            if self._still_there():
                return self._last
            self._ready = False
            disturbed = True               # it was there before: released after this read
        else:
            disturbed = False
        uid = self._read_cascade()
        if self._ready and (disturbed or uid != self._last or self._collided):
            self._ready = False
            self.transmit(HLTA_FRAME)      # back to IDLE/HALT: the next WUPA (anyone's) wakes it
        self._last = uid
        return uid

    def _parts(self, uid):
        if len(uid) == 4:
            return [uid]
        if len(uid) == 7:
            return [bytes((CASCADE_TAG,)) + uid[:3], uid[3:]]
        return [bytes((CASCADE_TAG,)) + uid[:3], bytes((CASCADE_TAG,)) + uid[3:6], uid[6:]]

    def _still_there(self):
        """The tag left READY by the last poll: one ANTICOLLISION at its last level answers with
        the UID part (and BCC) we expect."""
        parts = self._parts(self._last)
        part = parts[-1]
        status, back, _ = self.transceive(bytes((CASCADE[len(parts) - 1], 0x20)))
        return status == OK and back == part + bytes((part[0] ^ part[1] ^ part[2] ^ part[3],))

    def _read_cascade(self):
        self._ready = self._collided = False
        status, back, _ = self.transceive(bytes((WUPA,)), 7)
        if status == TIMEOUT or status == FAILED:
            return None
        uid = bytearray()
        for command in CASCADE:
            level = self._level(command)
            if level is None:
                self.transmit(HLTA_FRAME)  # whoever answered goes back to IDLE/HALT
                return None
            part, sak, collided = level
            self._collided = self._collided or collided
            if sak is None:                # no cascade tag: UID complete, the tag READY here
                uid.extend(part)
                self._ready = True
                return bytes(uid)
            if not sak & 0x04:             # UID complete (4 bytes starting 0x88): ACTIVE now
                uid.extend(part)
                self.transmit(HLTA_FRAME)  # halt it: the next poll's WUPA wakes it
                return bytes(uid)
            if part[0] != CASCADE_TAG:
                return None
            uid.extend(part[1:])
        return None
