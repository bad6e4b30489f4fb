"""Frames of the table hub protocol, version 1 (PROTOCOL.md "Frames").

``$<payload>*<CRC>\\n`` where the payload is ``<seq> <VERB> <fields…>`` in
printable ASCII without ``$``/``*`` and the CRC is CRC-16/CCITT-FALSE as four
upper-case hex digits.  Everything here is pure: :func:`encode` builds a frame,
:func:`decode_line` checks one line, :func:`scan` (Klipper style) says whether
a buffer starts with a whole line, garbage to skip, or needs more bytes, and
:class:`FrameParser` strings them together over a byte stream, counting every
dropped piece instead of failing.

Every number is checked against PROTOCOL.md's bounds (``reader``/``readers``
at most 16, uids of 8, 14 or 20 hex digits, ``edge_ms``, ``uptime_ms`` and the
HB counters below 2**32, ``ms`` and CFG values at most 60000, a TEXT row 0-3
of at most 20 characters; numbers PROTOCOL.md does not name -- ``proto``, an
LED index -- below 2**32) before it is converted: a frame outside them is a
:class:`BadFieldsError`, dropped and counted (``bad_fields``) like a bad CRC,
so its sequence number is missing and the next frame reveals the gap.
"""

from __future__ import annotations

import binascii
import logging
from dataclasses import dataclass
from typing import Callable

from controller.core.errors import ProtocolError

log = logging.getLogger(__name__)

PROTO_VERSION = 1
MAX_FRAME = 160          # bytes, including "$" and "\n" ("\r" before "\n" is extra)
SEQ_MODULO = 65536

HUB_VERBS = frozenset({"HELLO", "SEEN", "GONE", "STATE", "HB", "FAULT", "ACK", "NAK"})
HOST_VERBS = frozenset({"HELLO", "SNAP", "LED", "TEXT", "BEEP", "CFG"})

_HEX = frozenset(b"0123456789abcdefABCDEF")
_DIGITS = frozenset(b"0123456789")
_UID_DIGITS = (8, 14, 20)      # 4, 7 or 10 bytes


def crc16(data: bytes) -> int:
    """CRC-16/CCITT-FALSE (poly 0x1021, init 0xFFFF): ``crc16(b"123456789") == 0x29B1``."""
    return binascii.crc_hqx(data, 0xFFFF)


# --------------------------------------------------------------------------- errors

class FrameError(ProtocolError):
    """A line that is not a valid frame.  ``reason`` is the :class:`ParserStats` counter;
    ``frame`` is what could be read of it (seq, verb, raw fields) when its CRC
    was right, so a hub can NAK it, else ``None``."""

    reason = "garbage"

    def __init__(self, message: str, frame: "Frame | None" = None):
        super().__init__(message)
        self.frame = frame


class GarbageError(FrameError):
    """Not a frame at all (no ``$``, bad characters, broken ``*CRC`` trailer)."""

    reason = "garbage"


class TooLongError(FrameError):
    """A frame over :data:`MAX_FRAME` bytes."""

    reason = "too_long"


class BadCrcError(FrameError):
    """The CRC does not match the payload."""

    reason = "bad_crc"


class UnknownVerbError(FrameError):
    """A verb this side does not know."""

    reason = "unknown_verb"


class BadFieldsError(FrameError):
    """Bad sequence number, wrong field count, or a field of the wrong type."""

    reason = "bad_fields"


# --------------------------------------------------------------------------- frames

@dataclass(frozen=True, slots=True)
class Frame:
    """One decoded frame.  ``fields`` are strings; UIDs and boot_id upper-cased.
    For ``TEXT`` the second field is the rest of the payload, spaces included.
    For ``STATE`` the fields are the uid-or-dash of each reader and ``edge_ms``
    their ``@edge_ms`` parts (``None`` for a reader with no edge since boot), or
    ``()`` when the hub sent none at all."""

    seq: int
    verb: str
    fields: tuple[str, ...] = ()
    edge_ms: tuple[int | None, ...] = ()

    def encode(self) -> bytes:
        if self.edge_ms:
            tokens = [f if e is None else f"{f}@{e}" for f, e in zip(self.fields, self.edge_ms)]
            return encode(self.seq, self.verb, *tokens)
        return encode(self.seq, self.verb, *self.fields)


_ALLOWED = bytes(b for b in range(0x20, 0x7F) if b not in b"$*")


def _payload_ok(payload: bytes) -> bool:
    return not payload.translate(None, _ALLOWED)


def encode(seq: int, verb: str, *fields: object) -> bytes:
    """``$<seq> <verb> <fields…>*<CRC>\\n``.  Raise :class:`ProtocolError` for a
    sequence number out of range, a field with a space (except TEXT's last), a
    character outside printable ASCII, ``$`` or ``*``, or a frame too long."""
    if not isinstance(seq, int) or not 0 <= seq < SEQ_MODULO:
        raise ProtocolError(f"sequence number must be 0-65535, got {seq!r}")
    tokens = [str(seq), verb] + [str(f) for f in fields]
    for i, tok in enumerate(tokens):
        last_text = verb == "TEXT" and i == len(tokens) - 1 and i >= 3
        if not last_text and (not tok or " " in tok):
            raise ProtocolError(f"{verb} field {tok!r} must be one non-empty token")
    text = " ".join(tokens)
    try:
        payload = text.encode("ascii")
    except UnicodeEncodeError:
        raise ProtocolError(f"{verb} frame has a non-ASCII character: {text!r}") from None
    if not _payload_ok(payload):
        raise ProtocolError(f"{verb} frame has a character outside printable ASCII or '$'/'*': {text!r}")
    frame = b"$" + payload + b"*%04X\n" % crc16(payload)
    if len(frame) > MAX_FRAME:
        raise ProtocolError(f"{verb} frame is {len(frame)} bytes, the limit is {MAX_FRAME}")
    return frame


# --- field checks (PROTOCOL.md: "Every number a frame carries is bounded") -------------

MAX_READERS = 16           # `reader` and `readers` at most 16
UINT32_MAX = 2**32 - 1     # edge_ms, uptime_ms and the HB counters below 2**32
MAX_MS = 60000             # `ms` (BEEP) and CFG values at most 60000
TEXT_ROWS = 4              # a TEXT row is 0-3 ...
TEXT_COLS = 20             # ... and carries at most 20 characters


def _uint(tok: str, highest: int) -> bool:
    """Decimal digits only, 0..``highest``.  The length is checked before any
    conversion, so a 10**12 (or a 400-digit token) is refused at no cost."""
    return (0 < len(tok) <= len(str(highest)) and set(tok.encode()) <= _DIGITS
            and int(tok) <= highest)


def _is_u32(tok: str) -> bool:
    return _uint(tok, UINT32_MAX)


def _is_reader(tok: str) -> bool:
    return _uint(tok, MAX_READERS)


def _is_ms(tok: str) -> bool:
    return _uint(tok, MAX_MS)


def _is_rate(tok: str) -> bool:
    """``scans_per_s``: a counter below 2**32, a few decimals tolerated."""
    whole, dot, frac = tok.partition(".")
    return _is_u32(whole) and (not dot or (0 < len(frac) <= 6 and set(frac.encode()) <= _DIGITS))


def _is_hex(tok: str, digits: int | tuple[int, ...]) -> bool:
    sizes = (digits,) if isinstance(digits, int) else digits
    return len(tok) in sizes and set(tok.encode()) <= _HEX


def _is_uid(tok: str) -> bool:
    return _is_hex(tok, _UID_DIGITS)


def _is_word(tok: str) -> bool:
    return bool(tok)


def _is_seq(tok: str) -> bool:
    return _uint(tok, SEQ_MODULO - 1)


def split_state_token(tok: str) -> tuple[str, int | None] | None:
    """``uid-or-dash[@edge_ms]`` as ``(uid or "-", edge_ms or None)``, upper-cased;
    ``None`` if the token breaks PROTOCOL.md's STATE syntax or bounds."""
    uid, at, edge = tok.partition("@")
    if not (uid == "-" or _is_uid(uid)):
        return None
    if not at:
        return uid.upper(), None
    if not _is_u32(edge):
        return None
    return uid.upper(), int(edge)


Check = Callable[[str], bool]
# verb -> (field checks, index of the fields to upper-case)
_HUB_SPECS: dict[str, tuple[tuple[Check, ...], tuple[int, ...]]] = {
    "HELLO": ((_is_u32, _is_word, lambda t: _is_hex(t, 8), _is_reader), (2,)),
    "SEEN": ((_is_reader, _is_uid), (1,)),
    "GONE": ((_is_reader, _is_uid), (1,)),
    "HB": ((_is_u32, _is_rate, _is_u32), ()),
    "FAULT": ((_is_reader, _is_word), ()),
    "ACK": ((_is_seq,), ()),
    "NAK": ((_is_seq, _is_word), ()),
}
_HOST_SPECS: dict[str, tuple[tuple[Check, ...], tuple[int, ...]]] = {
    "HELLO": ((_is_u32,), ()),
    "SNAP": ((), ()),
    "LED": ((_is_u32, lambda t: _is_hex(t, 6)), (1,)),
    "BEEP": ((_is_ms,), ()),
    "CFG": ((_is_word, _is_ms), ()),
}


def _check_state(fields: list[str]) -> tuple[tuple[str, ...], tuple[int | None, ...]]:
    if not 0 < len(fields) <= MAX_READERS:
        raise BadFieldsError(f"STATE needs one token per reader (1-{MAX_READERS}), got {len(fields)}")
    tokens = [split_state_token(f) for f in fields]
    if None in tokens:
        raise BadFieldsError(f"STATE needs one uid or '-' (with an optional @edge_ms below 2**32) "
                             f"per reader, got {fields!r}")
    uids = tuple(uid for uid, _ in tokens)
    edges = tuple(edge for _, edge in tokens)
    return uids, (edges if any("@" in f for f in fields) else ())


def _check_fields(verb: str, fields: list[str], source: str) -> tuple[str, ...]:
    specs = _HUB_SPECS if source == "hub" else _HOST_SPECS
    checks, upper = specs[verb]
    if len(fields) != len(checks):
        raise BadFieldsError(f"{verb} takes {len(checks)} fields, got {len(fields)}: {fields!r}")
    for i, (tok, check) in enumerate(zip(fields, checks)):
        if not check(tok):
            raise BadFieldsError(f"{verb} field {i + 1} is not valid or out of bounds: {tok[:40]!r}")
    return tuple(f.upper() if i in upper else f for i, f in enumerate(fields))


def decode_line(line: bytes, *, source: str = "hub") -> Frame:
    """Decode one line (``$…*CRC`` with or without ``\\r\\n``) sent by ``source``
    (``"hub"``: what the host receives; ``"host"``: what the hub receives).

    Raise a :class:`FrameError` subclass whose ``reason`` names the counter.
    """
    if line.endswith(b"\n"):
        line = line[:-1]
    if line.endswith(b"\r"):
        line = line[:-1]
    if len(line) + 1 > MAX_FRAME:
        raise TooLongError(f"frame of {len(line) + 1} bytes, the limit is {MAX_FRAME}")
    if not line.startswith(b"$"):
        raise GarbageError(f"line does not start with '$': {line[:40]!r}")
    star = line.rfind(b"*")
    if star < 0 or len(line) - star != 5:
        raise GarbageError(f"no '*CRC' at the end: {line[:40]!r}")
    payload, crc_text = line[1:star], line[star + 1:]
    if not _payload_ok(payload) or not set(crc_text) <= _HEX:
        raise GarbageError(f"bad character in frame: {line[:40]!r}")
    if int(crc_text, 16) != crc16(payload):
        raise BadCrcError(f"CRC {crc_text.decode()} does not match {crc16(payload):04X}: {line[:40]!r}")
    text = payload.decode("ascii")
    head = text.split(" ", 2)
    if len(head) < 2 or not _is_seq(head[0]):
        raise BadFieldsError(f"frame needs '<seq 0-65535> <verb>': {text[:40]!r}")
    seq, verb = int(head[0]), head[1]
    rest = head[2] if len(head) == 3 else None
    fields = [] if rest is None else rest.split(" ")
    known = HUB_VERBS if source == "hub" else HOST_VERBS
    if verb not in known:
        raise UnknownVerbError(f"unknown verb {verb!r} from the {source}", Frame(seq, verb, tuple(fields)))
    if source == "host" and verb == "TEXT":
        row, _sep, body = (rest or "").partition(" ")
        if not _uint(row, TEXT_ROWS - 1) or len(body) > TEXT_COLS:
            raise BadFieldsError(f"TEXT needs '<row 0-3> <text of at most {TEXT_COLS} characters>', "
                                 f"got {(rest or '')[:40]!r}", Frame(seq, verb, tuple(fields)))
        return Frame(seq, verb, (row, body))
    try:
        if source == "hub" and verb == "STATE":
            uids, edges = _check_state(fields)
            return Frame(seq, verb, uids, edges)
        return Frame(seq, verb, _check_fields(verb, fields, source))
    except BadFieldsError as exc:
        exc.frame = Frame(seq, verb, tuple(fields))
        raise


# --------------------------------------------------------------------------- stream

NEED_MORE = "need_more"
LINE = "line"
SKIP_GARBAGE = "garbage"
SKIP_TOO_LONG = "too_long"


def scan(buf: bytes | bytearray, start: int = 0, at_line_start: bool = True) -> tuple[str, int]:
    """Klipper-style framing of ``buf[start:]``; pure.

    Returns ``(NEED_MORE, 0)``, ``(LINE, n)`` -- ``buf[start:start+n]`` is a
    whole line starting with ``$`` (or ``#`` at a line start) and ending in
    ``\\n`` --, or ``(SKIP_GARBAGE, n)`` / ``(SKIP_TOO_LONG, n)``: drop those
    ``n`` bytes and scan again.  Text before a ``$`` is garbage; the frame
    after it is kept.
    """
    size = len(buf) - start
    if size <= 0:
        return NEED_MORE, 0
    first = buf[start]
    if first == 0x24:                                   # "$"
        limit = start + MAX_FRAME + 1                   # +1: a "\r" is tolerated
        nl = buf.find(b"\n", start, limit)
        dollar = buf.find(b"$", start + 1, nl if nl >= 0 else limit)
        if dollar > 0:                                  # a broken frame, then another "$"
            return SKIP_GARBAGE, dollar - start
        if nl >= 0:
            return LINE, nl + 1 - start
        if size <= MAX_FRAME:
            return NEED_MORE, 0
        return SKIP_TOO_LONG, _skip_to(buf, start + 1) - start
    if first == 0x23 and at_line_start:                 # "#": debug line
        nl = buf.find(b"\n", start)
        if nl >= 0:
            return LINE, nl + 1 - start
        return (NEED_MORE, 0) if size <= 4 * MAX_FRAME else (SKIP_GARBAGE, size)
    end = _skip_to(buf, start)
    if end < len(buf) or buf[-1] == 0x0A or size > MAX_FRAME:
        return SKIP_GARBAGE, end - start
    return NEED_MORE, 0


def _skip_to(buf: bytes | bytearray, start: int) -> int:
    """Where a piece to drop ends: at the next ``$`` or past the next ``\\n``
    (the end of ``buf`` if neither)."""
    nl = buf.find(b"\n", start)
    dollar = buf.find(b"$", start)
    if dollar >= 0 and (nl < 0 or dollar < nl):
        return dollar
    return nl + 1 if nl >= 0 else len(buf)


@dataclass
class ParserStats:
    """What a :class:`FrameParser` kept and dropped (counts, never reset)."""

    frames: int = 0
    garbage: int = 0
    bad_crc: int = 0
    too_long: int = 0
    unknown_verb: int = 0
    bad_fields: int = 0
    debug: int = 0

    def as_dict(self) -> dict[str, int]:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}

    def __getitem__(self, name: str) -> int:
        if name not in self.__dataclass_fields__:
            raise KeyError(name)
        return getattr(self, name)


class FrameParser:
    """Incremental parser: ``feed(bytes) -> [Frame, …]``; never raises on bad input.

    ``source`` is who sends the stream (``"hub"`` or ``"host"``).  Dropped
    pieces are counted in :attr:`stats`; ``#`` debug lines are logged.
    ``on_reject`` (optional) is told of every dropped line that was a frame
    with a right CRC (a hub uses it to NAK unknown verbs and bad fields).
    """

    def __init__(self, source: str = "hub", on_reject: Callable[[FrameError], None] | None = None):
        if source not in ("hub", "host"):
            raise ValueError(f"source must be 'hub' or 'host', got {source!r}")
        self.source = source
        self.on_reject = on_reject
        self.stats = ParserStats()
        self._buf = bytearray()
        self._line_start = True
        self._skipping = False

    def reset(self) -> None:
        """Forget a partial line (after a reconnect)."""
        self._buf.clear()
        self._line_start = True
        self._skipping = False

    def feed(self, data: bytes) -> list[Frame]:
        buf = self._buf
        buf += data
        frames: list[Frame] = []
        stats = self.stats
        pos = 0
        while True:
            kind, n = scan(buf, pos, self._line_start)
            if kind == NEED_MORE:
                break
            end = pos + n
            line_end = buf[end - 1] == 0x0A
            if kind == LINE:
                self._skipping = False
                if buf[pos] == 0x23:
                    stats.debug += 1
                    log.debug("hub: %s", bytes(buf[pos:end]).rstrip(b"\r\n").decode("ascii", "replace"))
                else:
                    try:
                        frames.append(decode_line(bytes(buf[pos:end]), source=self.source))
                        stats.frames += 1
                    except FrameError as exc:
                        setattr(stats, exc.reason, getattr(stats, exc.reason) + 1)
                        log.debug("dropped frame (%s): %s", exc.reason, exc)
                        if self.on_reject is not None and exc.frame is not None:
                            self.on_reject(exc)
            else:
                if not self._skipping:
                    setattr(stats, kind, getattr(stats, kind) + 1)
                    log.debug("dropped %d bytes (%s): %r", n, kind, bytes(buf[pos:pos + 40]))
                self._skipping = not line_end
            self._line_start = line_end
            pos = end
        del buf[:pos]
        return frames
