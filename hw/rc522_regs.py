"""The MFRC522 register map, its commands and bits, CRC_A, and the VersionReg values of working chips.

One table, read by the Pi driver (:mod:`hw.rc522`) and the chip emulation
(:mod:`hw.rc522_chip`).  The hub firmware (``firmware_bridge/firmware/rc522.py``,
MicroPython, which imports nothing outside ``firmware/``) keeps a copy of the
parts it uses; ``tests/hw/test_rc522_regs.py`` keeps that copy equal to this one.
Names and values follow the NXP MFRC522 datasheet (rev. 3.9), section 9.
"""

from __future__ import annotations

from typing import Iterable

FC = 13.56e6                      # carrier frequency, Hz
BIT_S = 128 / FC                  # one bit at 106 kbit/s (~9.44 us)
FDT_S = 1236 / FC                 # PICC frame delay time after REQA/ANTICOLL/SELECT (~91 us)
OSC_CLOCKS_S = 1024 / 27.12e6     # leaving soft power-down: 1024 clocks of the 27.12 MHz crystal

# Registers (datasheet names).
COMMAND, COMM_IEN, DIV_IEN, COMM_IRQ, DIV_IRQ, ERROR, STATUS1, STATUS2 = 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08
FIFO_DATA, FIFO_LEVEL, WATER_LEVEL, CONTROL, BIT_FRAMING, COLL = 0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x0E
MODE, TX_MODE, RX_MODE, TX_CONTROL, TX_ASK, TX_SEL, RX_SEL, RX_THRESHOLD = \
    0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18
DEMOD, MF_TX, MF_RX, SERIAL_SPEED = 0x19, 0x1C, 0x1D, 0x1F
CRC_RESULT_M, CRC_RESULT_L, MOD_WIDTH, RF_CFG, GS_N, CW_GS_P, MOD_GS_P = 0x21, 0x22, 0x24, 0x26, 0x27, 0x28, 0x29
T_MODE, T_PRESCALER, T_RELOAD_H, T_RELOAD_L, T_COUNTER_H, T_COUNTER_L = 0x2A, 0x2B, 0x2C, 0x2D, 0x2E, 0x2F
AUTO_TEST, VERSION = 0x36, 0x37

# CommandReg: the command nibble and two flags.
CMD_IDLE, CMD_MEM, CMD_RANDOM, CMD_CALC_CRC, CMD_TRANSMIT = 0x0, 0x1, 0x2, 0x3, 0x4
CMD_NO_CHANGE, CMD_RECEIVE, CMD_TRANSCEIVE, CMD_AUTHENT, CMD_SOFT_RESET = 0x7, 0x8, 0xC, 0xE, 0xF
RCV_OFF, POWER_DOWN = 0x20, 0x10

# CommIrqReg bits.
IRQ_TX, IRQ_RX, IRQ_IDLE, IRQ_HI_ALERT, IRQ_LO_ALERT, IRQ_ERR, IRQ_TIMER = 0x40, 0x20, 0x10, 0x08, 0x04, 0x02, 0x01
DIV_CRC = 0x04
# ErrorReg bits.
ERR_BUFFER_OVFL, ERR_COLL, ERR_CRC, ERR_PARITY, ERR_PROTOCOL = 0x10, 0x08, 0x04, 0x02, 0x01

# Register values after a reset (datasheet section 9.3); the rest read 0x00.
RESET_VALUES: dict[int, int] = {
    0x01: 0x20, 0x02: 0x80, 0x04: 0x14, 0x07: 0x21, 0x0B: 0x08, 0x0C: 0x10, 0x0E: 0xA0,
    0x11: 0x3F, 0x14: 0x80, 0x16: 0x10, 0x17: 0x84, 0x18: 0x84, 0x19: 0x4D, 0x1C: 0x62,
    0x1F: 0xEB, 0x21: 0xFF, 0x22: 0xFF, 0x24: 0x26, 0x26: 0x48, 0x27: 0x88, 0x28: 0x20,
    0x29: 0x20, 0x33: 0x80, 0x36: 0x40,
}
CRC_PRESETS = (0x0000, 0x6363, 0xA671, 0xFFFF)

# ISO 14443-3 type A.
REQA, WUPA = 0x26, 0x52
SEL_CODES = (0x93, 0x95, 0x97)
CASCADE_TAG = 0x88
SAK_UID_INCOMPLETE = 0x04

# VersionReg.  Every value but NO_CHIP is a chip that answers: the NXP MFRC522 versions and the
# clones seen on cheap boards (FM17522 0x88, others 0xB2, 0x12).  0x00 is MISO held low (no chip,
# no power, held in reset), 0xFF MISO floating high (unplugged).
KNOWN_VERSIONS: dict[int, str] = {
    0x90: "MFRC522 v0.0", 0x91: "MFRC522 v1.0", 0x92: "MFRC522 v2.0",
    0x88: "FM17522 clone", 0xB2: "clone (0xB2)", 0x12: "clone (0x12)",
}
NO_CHIP = (0x00, 0xFF)


def chip_answers(version: int) -> bool:
    """Does a VersionReg reading come from a working chip (anything but 0x00/0xFF)?"""
    return version not in NO_CHIP


def version_name(version: int) -> str:
    """What a VersionReg value says, for messages: ``0x92 (MFRC522 v2.0)``."""
    if version in NO_CHIP:
        return f"0x{version:02X} (no chip answering)"
    return f"0x{version:02X} ({KNOWN_VERSIONS.get(version, 'unknown chip, answering')})"


def crc_a(data: Iterable[int], preset: int = 0x6363) -> int:
    """CRC_A of ISO/IEC 14443-3 (reflected 0x1021, preset 0x6363); append low byte first."""
    crc = preset
    for byte in data:
        byte = (byte ^ crc) & 0xFF
        byte = (byte ^ (byte << 4)) & 0xFF
        crc = ((crc >> 8) ^ (byte << 8) ^ (byte << 3) ^ (byte >> 4)) & 0xFFFF
    return crc


def with_crc(data: bytes) -> bytes:
    """``data`` followed by its CRC_A, low byte first."""
    crc = crc_a(data)
    return bytes(data) + bytes((crc & 0xFF, crc >> 8))


def frame_bits(nbytes: int, last_bits: int = 0) -> int:
    """Bit periods of a Type A frame: start, data with a parity bit per whole byte, end."""
    if nbytes == 0:
        return 0
    whole = nbytes if last_bits == 0 else nbytes - 1
    return 1 + 9 * whole + last_bits + 1


__all__ = [name for name in dir() if name.isupper()] + ["chip_answers", "version_name", "crc_a", "with_crc",
                                                         "frame_bits"]
