"""Receive errors as a real MFRC522 reports them, and the reader riding through them.

The emulated chip raises ParityErr when the wired-OR of colliding tags breaks a byte's parity,
clears the bits after a collision when ValuesAfterColl is 0, and flips one bit of a set share of
the frames it receives (a seeded error rate), with CrcErr when RxCRCEn asks it to check.  The
reader (``hw.rc522``) must let a collision win over the parity error it brings: otherwise a card
laid on another one makes the first vanish.
"""

from __future__ import annotations

import pytest

from controller.core.events import PLACED, REMOVED
from hw import rc522_chip as rc
from hw.rc522 import FakeBackend, Reader
from hw.rc522_chip import EmulatedMFRC522, VirtualClock, VirtualTag
from hw.scanner import Scanner

FIRST, SECOND = "04A2B11C6F5E80", "3A5F1C7E"      # their level-1 bytes collide with a parity error


def regs(chip, *addrs):
    return list(chip.transfer(bytes([0x80 | (a << 1) for a in addrs] + [0]))[1:])


def write(chip, addr, *values):
    chip.transfer(bytes([(addr << 1) & 0x7E, *values]))


def transceive(chip, *frame, framing=0x00, wait=0.002):
    """Send ``frame`` by hand; (ErrorReg, CollReg, the FIFO's bytes) once the answer is in."""
    write(chip, rc.COMMAND, rc.CMD_IDLE)
    write(chip, rc.COMM_IRQ, 0x7F)
    write(chip, rc.FIFO_LEVEL, 0x80)
    write(chip, rc.FIFO_DATA, *frame)
    write(chip, rc.BIT_FRAMING, framing)                      # StartSend cleared before the command
    write(chip, rc.COMMAND, rc.CMD_TRANSCEIVE)
    write(chip, rc.BIT_FRAMING, 0x80 | framing)
    chip.clock.advance(wait)
    error, coll, level = regs(chip, rc.ERROR, rc.COLL, rc.FIFO_LEVEL)
    return error, coll, bytes(regs(chip, *[rc.FIFO_DATA] * level)) if level else b""


def two_tags_ready(values_after_coll: bool) -> EmulatedMFRC522:
    chip = EmulatedMFRC522(VirtualClock())
    write(chip, rc.TX_CONTROL, 0x83)
    write(chip, rc.COLL, 0x80 if values_after_coll else 0x00)
    chip.field.put(VirtualTag(FIRST))
    chip.field.put(VirtualTag(SECOND))
    transceive(chip, rc.WUPA, framing=0x07)
    return chip


@pytest.mark.parametrize("values_after_coll", [False, True])
def test_a_collision_comes_with_a_parity_error_collpos_and_values_after_coll(values_after_coll):
    chip = two_tags_ready(values_after_coll)
    error, coll, fifo = transceive(chip, 0x93, 0x20)          # ANTICOLLISION, cascade level 1
    # 0x88 (the cascade tag) against 0x3A: they first differ in bit 2 (1-based) of byte 0, and the
    # wired-OR 0xBA has the wrong parity for the ORed parity bits
    assert error & rc.ERR_COLL and error & rc.ERR_PARITY
    assert coll & 0x1F == 2 and not coll & 0x20
    assert coll & 0x80 == (0x80 if values_after_coll else 0)
    if values_after_coll:
        assert fifo[0] == 0x88 | 0x3A                         # the wired-OR as heard
    else:
        assert fifo[0] == 0x88 & 0x3A & 0x01 and not any(fifo[1:])   # from the colliding bit on: 0


def test_collpos_not_valid_beyond_32_bits():
    chip = EmulatedMFRC522(VirtualClock())
    write(chip, rc.TX_CONTROL, 0x83)
    tag = chip.field.put(VirtualTag("11223344"))
    transceive(chip, rc.WUPA, framing=0x07)
    error, coll, _ = transceive(chip, 0x93, 0x20)
    assert not error and coll & 0x20                          # no collision: CollPosNotValid
    assert tag.state == rc.READY


def test_injected_errors_at_a_seeded_rate_with_crc_checked_by_rxcrcen():
    def run(seed):
        chip = EmulatedMFRC522(VirtualClock(), error_rate=0.3, error_seed=seed)
        write(chip, rc.TX_CONTROL, 0x83)
        chip.field.put(VirtualTag("11223344"))
        seen = []
        for _ in range(200):
            write(chip, rc.RX_MODE, 0x00)
            transceive(chip, rc.WUPA, framing=0x07)
            transceive(chip, 0x93, 0x20)
            write(chip, rc.RX_MODE, 0x80)                      # RxCRCEn: the chip checks the SAK's CRC_A
            error, _, _ = transceive(chip, *rc.with_crc(bytes.fromhex("93701122334444")))  # SELECT
            seen.append(error & (rc.ERR_PARITY | rc.ERR_CRC))
        return seen, chip.errors

    seen, errors = run(7)
    assert run(7)[0] == seen                                   # seeded: the same frames every run
    assert 0 < errors.get(rc.ERR_PARITY, 0) < 200              # about 30 % of 600 frames
    assert 50 <= errors[rc.ERR_PARITY] <= 150                  # ~30 % of the ~300 frames answered
    assert errors.get(rc.ERR_CRC, 0) > 0                       # a flipped data bit of a SAK breaks its CRC
    assert all(e & rc.ERR_PARITY for e in seen if e & rc.ERR_CRC)   # one bit flipped: always a parity error


def test_error_rate_must_be_a_probability():
    with pytest.raises(ValueError, match="probability"):
        EmulatedMFRC522(VirtualClock(), error_rate=1.5)


# ------------------------------------------------------------------------------------------ the reader
def test_a_card_stacked_on_another_leaves_both_read_and_the_first_never_removed():
    """The second card's collisions come with parity errors; the first must stay placed and the
    second be found (fails when a collision with a parity error is dropped as a bad frame)."""
    backend = FakeBackend()
    chip = backend.add_chip(0, 0)
    with Reader(0, 0, 25, backend=backend) as reader:
        scanner = Scanner([("seat1", reader)], absent_ms=300, clock=backend.clock)
        chip.field.put(VirtualTag(FIRST))
        events = []
        for _ in range(20):
            events += scanner.scan_once()
        assert [(e.event, e.uid) for e in events] == [(PLACED, FIRST)]
        chip.field.put(VirtualTag(SECOND))                    # laid on top of the first
        laid_at, events = backend.clock(), []
        while backend.clock() - laid_at < 1.5:
            events += scanner.scan_once()
        assert chip.errors.get(rc.ERR_COLL) and chip.errors.get(rc.ERR_PARITY)   # the hard case happened
        assert [(e.event, e.uid) for e in events] == [(PLACED, SECOND)]
        assert not [e for e in events if e.event == REMOVED]
        assert scanner.tracker.present()["seat1"] == {FIRST, SECOND}
        assert set(reader.read_uids()) <= {FIRST, SECOND}


def test_noisy_readers_keep_every_card_placed():
    """5 % of the frames each reader receives are damaged (seeded): no card is ever removed."""
    backend = FakeBackend()
    wiring = [(0, 0, 25), (0, 1, 24), (1, 0, 23)]
    chips = [backend.add_chip(bus, dev, error_rate=0.05, error_seed=i) for i, (bus, dev, _) in enumerate(wiring)]
    readers = [Reader(bus, dev, pin, backend=backend) for bus, dev, pin in wiring]
    try:
        scanner = Scanner(list(zip(("seat1", "seat2", "seat3"), readers)), absent_ms=300, clock=backend.clock)
        uids = ["04A2B11C6F5E80", "3A5F1C7E", "04112233445566778899"]
        for chip, uid in zip(chips, uids):
            chip.field.put(VirtualTag(uid))
        chips[0].field.put(VirtualTag(SECOND.replace("3A", "3B")))     # and a stacked pair on seat1
        events = []
        start = backend.clock()
        while backend.clock() - start < 2.0:
            events += scanner.scan_once()
        assert sum(chip.errors.get(rc.ERR_PARITY, 0) for chip in chips) > 10
        assert not [e for e in events if e.event == REMOVED]
        assert sorted(e.uid for e in events if e.event == PLACED) == sorted(uids + ["3B5F1C7E"])
    finally:
        for reader in readers:
            reader.close()
