"""One MFRC522 register table (hw/rc522_regs.py) for the Pi driver and the chip emulation, and the
hub firmware's copy (MicroPython imports nothing outside firmware/) kept equal to it."""

from __future__ import annotations

import random

import pytest

from firmware_bridge.firmware import rc522 as firmware
from hw import rc522, rc522_chip, rc522_regs as regs

# The firmware's names for what the table calls CMD_*.
FIRMWARE_COMMANDS = {"IDLE": "CMD_IDLE", "TRANSMIT": "CMD_TRANSMIT", "TRANSCEIVE": "CMD_TRANSCEIVE",
                     "SOFT_RESET": "CMD_SOFT_RESET"}
NOT_REGISTERS = {"OK", "TIMEOUT", "FAILED", "COLLISION", "TIMER_TICKS", "STUCK_MS", "STUCK_READS", "RESET_MS",
                 "OSC_WAIT_MS", "CASCADE", "HLTA_FRAME", "VERSIONS", "NO_CHIP"}


def firmware_constants():
    return {name: value for name, value in vars(firmware).items()
            if name.isupper() and isinstance(value, int) and name not in NOT_REGISTERS}


def test_every_register_and_command_of_the_firmware_is_the_tables():
    consts = firmware_constants()
    assert len(consts) > 20
    for name, value in consts.items():
        table_name = FIRMWARE_COMMANDS.get(name, name)
        assert getattr(regs, table_name) == value, f"firmware {name} = 0x{value:02X}"


def test_picc_constants_agree():
    assert firmware.WUPA == regs.WUPA and firmware.CASCADE_TAG == regs.CASCADE_TAG
    assert firmware.CASCADE == regs.SEL_CODES
    assert firmware.HLTA_FRAME == regs.with_crc(b"\x50\x00")


def test_one_list_of_versionreg_values():
    assert set(firmware.VERSIONS) == set(regs.KNOWN_VERSIONS)
    assert firmware.NO_CHIP == regs.NO_CHIP == (0x00, 0xFF)
    assert set(rc522.VERSIONS_OK) == set(regs.KNOWN_VERSIONS)
    for value in range(256):
        assert regs.chip_answers(value) == (value not in (0x00, 0xFF))


def test_crc_a_is_one_function_everywhere():
    rng = random.Random(9)
    assert rc522_chip.crc_a is regs.crc_a and rc522_chip.with_crc is regs.with_crc
    for _ in range(200):
        data = bytes(rng.randrange(256) for _ in range(rng.randrange(0, 20)))
        crc = regs.crc_a(data)
        assert firmware.crc_a(data) == bytes((crc & 0xFF, crc >> 8))
    assert regs.crc_a(b"123456789") == 0xBF05


@pytest.mark.parametrize("module", [rc522_chip, rc522])
def test_the_driver_and_the_emulation_use_the_table(module):
    source = open(module.__file__).read()
    assert "rc522_regs" in source
    assert "0x37" not in source.replace("0x37 (", ""), "a register number written twice"
