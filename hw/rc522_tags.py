"""Virtual ISO 14443A tags, the field of a reader's antenna, and what the air carries when
several tags answer at once -- the other side of the emulated MFRC522 (:mod:`hw.rc522_chip`).

A :class:`VirtualTag` follows ISO 14443-3's state machine (IDLE, READY, ACTIVE, HALT:
REQA/WUPA, the cascade levels of anticollision and SELECT, HLTA, READ).  Each chip has a
:class:`TagField`: ``put(tag)`` / ``take(tag)`` place a :class:`VirtualTag` in or out of
its antenna's field, optionally flickering (missing some polls); a second ``put`` while
the first tag lies there is a card stacked on it.  Cross-talk is the same tag put into a
neighbouring reader's field too.  Several tags answering at once collide bit-wise
(:func:`combine`: a wired-OR of the bits, the parity bits included).
"""

from __future__ import annotations

import random
from collections import deque
from dataclasses import dataclass, field
from typing import Sequence

from .rc522_regs import CASCADE_TAG, FDT_S, SEL_CODES, with_crc

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

    def __init__(self, chip):
        # chip: the emulated MFRC522 (hw.rc522_emulated) whose antenna this is
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



def odd_parity_bit(byte: int) -> int:
    """The parity bit ISO 14443-3 sends after a byte: odd parity over the 9 bits."""
    return 0 if bin(byte).count("1") & 1 else 1


def combine(answers: list[tuple[bytes, int]]) -> tuple[bytes, int, int | None, bool]:
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
            parity |= odd_parity_bit(v)
        if (i < length - 1 or not last_bits) and parity != odd_parity_bit(merged[i]):
            parity_err = True
        if coll is None and (len(present) != len(values) or len(set(present)) > 1):
            diff = 0
            for v in present:
                diff |= v ^ present[0]
            diff = diff or 0x01
            coll = i * 8 + (diff & -diff).bit_length()
    return bytes(merged), last_bits, coll, parity_err

