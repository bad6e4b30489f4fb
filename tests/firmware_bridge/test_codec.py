"""Codec of the hub protocol: CRC, encode/decode, the stream parser (with fuzzing)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

from controller.core.errors import ProtocolError
from firmware_bridge.codec import (
    LINE, MAX_FRAME, NEED_MORE, SKIP_GARBAGE, SKIP_TOO_LONG,
    BadCrcError, BadFieldsError, Frame, FrameParser, GarbageError, TooLongError,
    UnknownVerbError, crc16, decode_line, encode, scan,
)

UID = "04A2B11C6F5E80"


def raw(payload: str, crc: int | None = None) -> bytes:
    """A frame with a hand-made payload (and optionally a wrong CRC)."""
    data = payload.encode()
    return b"$" + data + b"*%04X\n" % (crc16(data) if crc is None else crc)


def test_crc_check_value():
    assert crc16(b"123456789") == 0x29B1
    assert crc16(b"") == 0xFFFF


def test_encode_exact_bytes():
    payload = b"5 SEEN 0 " + UID.encode()
    assert encode(5, "SEEN", 0, UID) == b"$" + payload + b"*%04X\n" % crc16(payload)
    assert encode(0, "SNAP") == b"$0 SNAP*" + b"%04X" % crc16(b"0 SNAP") + b"\n"
    # the CRC is four upper-case hex digits
    assert crc16(b"1 ACK 1") & 0xF0 and b"%04X" % crc16(b"1 ACK 1") == encode(1, "ACK", 1)[-5:-1]
    assert encode(1, "ACK", 1)[-5:-1] == encode(1, "ACK", 1)[-5:-1].upper()


@pytest.mark.parametrize("args", [
    (-1, "SNAP"), (65536, "SNAP"), (1, "LED", "0", "FF 00"), (1, "CFG", "", "3"),
    (1, "TEXT", 0, "caf\u00e9"), (1, "TEXT", 0, "a$b"), (1, "TEXT", 0, "a*b"), (1, "TEXT", 0, "x" * 200),
])
def test_encode_refuses(args):
    with pytest.raises(ProtocolError):
        encode(*args)


def test_roundtrip_hub_frames():
    cases = [
        Frame(0, "HELLO", ("1", "fw-1.2", "1A2B3C4D", "4")),
        Frame(1, "SEEN", ("3", UID)),
        Frame(2, "GONE", ("0", "DEADBEEF")),
        Frame(3, "STATE", ("-", UID, "-", "00112233445566778899")),
        Frame(4, "HB", ("12000", "80", "0")),
        Frame(4, "HB", ("4294967295", "37.5", "0")),           # the longest uptime (2**32-1), a fractional rate
        Frame(5, "FAULT", ("2", "NOREPLY")),
        Frame(6, "ACK", ("65535",)),
        Frame(7, "NAK", ("9", "BADARG")),
    ]
    for frame in cases:
        assert decode_line(frame.encode()) == frame


def test_roundtrip_host_frames_and_text_rest_of_payload():
    assert decode_line(encode(9, "TEXT", 2, "  7s  8s x"), source="host") == Frame(9, "TEXT", ("2", "  7s  8s x"))
    assert decode_line(encode(9, "TEXT", 2, ""), source="host").fields == ("2", "")
    assert decode_line(encode(1, "HELLO", 1), source="host") == Frame(1, "HELLO", ("1",))
    assert decode_line(encode(2, "SNAP"), source="host") == Frame(2, "SNAP", ())
    assert decode_line(encode(3, "LED", 1, "ff0000"), source="host").fields == ("1", "FF0000")
    assert decode_line(encode(4, "CFG", "absent_ms", 300), source="host").fields == ("absent_ms", "300")


def test_lower_case_uid_and_crlf_accepted_and_normalised():
    frame = decode_line(raw("4 SEEN 1 04a2b11c6f5e80").replace(b"\n", b"\r\n"))
    assert frame == Frame(4, "SEEN", ("1", UID))


@pytest.mark.parametrize("line,error", [
    (b"hello\n", GarbageError),
    (b"$1 HB 1 2 3\n", GarbageError),                      # no *CRC
    (b"$1 HB 1 2 3*12G4\n", GarbageError),
    (raw("1 HB 1 2\t3"), GarbageError),                    # control character
    (raw("1 HB 1 2 3", crc=0x0000), BadCrcError),
    (raw("1 JUMP 1"), UnknownVerbError),
    (raw("1 SNAP"), UnknownVerbError),                     # a host verb from the hub
    (raw("1 HELLO x emu 1A2B3C4D 4"), BadFieldsError),     # proto not an int
    (raw("1 HELLO 1 emu 1A2B3C4 4"), BadFieldsError),      # boot_id not 8 hex digits
    (raw("1 HELLO 1 emu 1A2B3C4D"), BadFieldsError),       # field missing
    (raw("1 SEEN 0 04A2ZZ1C6F5E80"), BadFieldsError),      # non-hex uid
    (raw("1 SEEN 0 04A2B1"), BadFieldsError),              # 3 bytes
    (raw("1 SEEN -1 " + UID), BadFieldsError),
    (raw("1 SEEN 0  " + UID), BadFieldsError),             # two spaces
    (raw("1 STATE"), BadFieldsError),
    (raw("1 STATE - x"), BadFieldsError),
    (raw("65536 HB 1 2 3"), BadFieldsError),
    (raw("x HB 1 2 3"), BadFieldsError),
    (raw("1 ACK"), BadFieldsError),
    (b"$" + b"1 STATE" + b" -" * 80 + b"*0000\n", TooLongError),
])
def test_decode_refuses(line, error):
    with pytest.raises(error) as info:
        decode_line(line)
    assert isinstance(info.value, ProtocolError)


def test_frame_length_limit_is_160_bytes():
    # TEXT carries at most 20 characters now (PROTOCOL.md's bounds), so the longest
    # frame is a HELLO with a long firmware version (a word PROTOCOL.md does not bound)
    body = "1 HELLO 1 "
    fw = "x" * (MAX_FRAME + 1 - len(encode(1, "HELLO", 1, "x", "1A2B3C4D", 4)))
    frame = encode(1, "HELLO", 1, fw, "1A2B3C4D", 4)
    assert len(frame) == MAX_FRAME
    assert decode_line(frame).fields[1] == fw
    assert decode_line(frame.replace(b"\n", b"\r\n")).fields[1] == fw
    with pytest.raises(ProtocolError):
        encode(1, "HELLO", 1, fw + "x", "1A2B3C4D", 4)
    too_long = raw(body + fw + "x 1A2B3C4D 4")
    assert len(too_long) == MAX_FRAME + 1
    with pytest.raises(TooLongError):
        decode_line(too_long)
    parser = FrameParser("hub")
    assert parser.feed(too_long + frame) == [decode_line(frame)]
    assert parser.stats.too_long == 1


def test_scan_is_pure_and_klipper_like():
    frame = encode(1, "HB", 1, 2, 3)
    assert scan(b"") == (NEED_MORE, 0)
    assert scan(frame[:-1]) == (NEED_MORE, 0)
    assert scan(frame) == (LINE, len(frame))
    assert scan(b"xx" + frame) == (SKIP_GARBAGE, 2)
    assert scan(b"xx" + frame, 2) == (LINE, len(frame))
    assert scan(b"abc\n" + frame) == (SKIP_GARBAGE, 4)
    assert scan(b"$" + b"a" * 200) == (SKIP_TOO_LONG, 201)
    assert scan(b"#boot\n") == (LINE, 6)
    assert scan(b"#boot\n", at_line_start=False) == (SKIP_GARBAGE, 6)
    assert scan(b"$12 SE$" + frame) == (SKIP_GARBAGE, 6)


def test_parser_counts_every_kind_and_keeps_good_frames():
    good = [encode(i, "SEEN", i % 4, UID) for i in range(5)]
    stream = b"".join([
        b"\x00\xffboot noise\r\n", good[0],
        b"#debug: reader 2 ok\n", good[1],
        raw("9 HB 1 2 3", crc=1), good[2],
        raw("9 WHAT 1"), good[3],
        b"$" + b"9" * 300 + b"\n",
        b"garbage before dollar" + good[4],
        raw("9 SEEN 0 nothex"),
    ])
    parser = FrameParser()
    assert parser.feed(stream) == [decode_line(g) for g in good]
    stats = parser.stats.as_dict()
    assert stats == {"frames": 5, "garbage": 2, "bad_crc": 1, "too_long": 1,
                     "unknown_verb": 1, "bad_fields": 1, "debug": 1}
    assert parser.stats["bad_crc"] == parser.stats.bad_crc == 1


def test_parser_logs_debug_lines(caplog):
    caplog.set_level("DEBUG", logger="firmware_bridge.codec")
    FrameParser().feed(b"#reader 3 NOREPLY\n")
    assert "reader 3 NOREPLY" in caplog.text


def test_parser_memory_is_bounded():
    parser = FrameParser()
    for _ in range(100):
        parser.feed(b"x" * 1000)
        parser.feed(b"$" + b"y" * 999)
    assert len(parser._buf) <= 2 * MAX_FRAME
    assert parser.feed(b"\n" + encode(1, "ACK", 1)) == [Frame(1, "ACK", ("1",))]


def test_parser_rejects_unknown_source():
    with pytest.raises(ValueError):
        FrameParser("both")


# --------------------------------------------------------------------------- fuzzing

hub_frames = st.one_of(
    st.builds(lambda s, r, u: Frame(s, "SEEN", (str(r), u)),
              st.integers(0, 65535), st.integers(0, 9),
              st.sampled_from([UID, "DEADBEEF", "00112233445566778899"])),
    st.builds(lambda s, a, b, c: Frame(s, "HB", (str(a), str(b), str(c))),
              st.integers(0, 65535), st.integers(0, 2**31), st.integers(0, 999), st.integers(0, 99)),
    st.builds(lambda s, xs: Frame(s, "STATE", tuple(xs)),
              st.integers(0, 65535), st.lists(st.sampled_from(["-", UID, "CAFEF00D"]), min_size=1, max_size=8)),
    st.builds(lambda s, h: Frame(s, "ACK", (str(h),)), st.integers(0, 65535), st.integers(0, 65535)),
)


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=2000), st.lists(st.integers(1, 64), max_size=50))
def test_fuzz_random_bytes_never_raise(data, cuts):
    parser = FrameParser()
    pos = 0
    for cut in cuts:
        for frame in parser.feed(data[pos:pos + cut]):
            assert frame.encode() and isinstance(frame, Frame)
        pos += cut
    parser.feed(data[pos:])
    assert len(parser._buf) <= 4 * MAX_FRAME


@settings(max_examples=200, deadline=None)
@given(st.lists(hub_frames, max_size=30), st.data())
def test_fuzz_random_splits_give_the_same_frames(frames, data):
    stream = b"".join(f.encode() for f in frames)
    cuts = sorted(data.draw(st.lists(st.integers(0, len(stream)), max_size=20)))
    parser = FrameParser()
    got: list[Frame] = []
    last = 0
    for cut in cuts + [len(stream)]:
        got += parser.feed(stream[last:cut])
        last = cut
    assert got == frames
    assert parser.stats.frames == len(frames)
    assert parser.stats.as_dict().keys() >= {"garbage", "bad_crc"}
    assert sum(v for k, v in parser.stats.as_dict().items() if k != "frames") == 0


@settings(max_examples=150, deadline=None)
@given(st.lists(hub_frames, min_size=1, max_size=20), st.lists(st.binary(max_size=40), max_size=20))
def test_fuzz_garbage_between_lines_loses_no_good_frame(frames, junk):
    """Garbage ending in a newline between frames never costs a good frame."""
    pieces = []
    for i, frame in enumerate(frames):
        if i < len(junk):
            pieces.append(junk[i].replace(b"$", b"") + b"\n")
        pieces.append(frame.encode())
    parser = FrameParser()
    assert parser.feed(b"".join(pieces)) == frames


# --------------------------------------------------------------------------- bounds (PROTOCOL.md)

@pytest.mark.parametrize("payload", [
    "1 HELLO 1 x DEADBEE0 100000000",            # readers at most 16: not 10**8 ...
    "1 HELLO 1 x DEADBEE0 1000000000000",        # ... nor 10**12
    "1 HELLO 1 x DEADBEE0 17",
    "1 HELLO 4294967296 x DEADBEE0 4",            # a number PROTOCOL.md does not name: below 2**32
    "1 SEEN 17 DEADBEEF", "1 GONE 1000000000000 DEADBEEF", "1 FAULT 17 NOREPLY",
    "1 SEEN 0 DEADBEEF00", "1 SEEN 0 DEADBE", "1 SEEN 0 " + "A" * 22,   # uids of 8, 14 or 20 hex digits
    "1 STATE DEADBEEF@4294967296", "1 STATE DEADBEEF@", "1 STATE -@x", "1 STATE DEADBEEF@-1",
    "1 STATE " + " ".join(["-"] * 17),
    "1 HB 4294967296 40 0", "1 HB 1000 4294967296 0", "1 HB 1000 40 4294967296",
    "1 HB " + "9" * 130 + " 40 0",               # a 130-digit number: refused before any conversion
    "1 ACK 65536", "1 NAK 65536 BADARG", "65536 HB 1 2 3",
])
def test_hub_frames_outside_the_bounds_are_dropped_and_counted(payload):
    with pytest.raises(BadFieldsError):
        decode_line(raw(payload))
    parser = FrameParser("hub")
    assert parser.feed(raw(payload) + raw("2 HB 1000 40 0")) == [Frame(2, "HB", ("1000", "40", "0"))]
    assert parser.stats.bad_fields == 1 and parser.stats.frames == 1


@pytest.mark.parametrize("payload, fields, edges", [
    ("1 HELLO 1 x DEADBEE0 16", ("1", "x", "DEADBEE0", "16"), ()),
    ("1 HELLO 4294967295 x DEADBEE0 0", ("4294967295", "x", "DEADBEE0", "0"), ()),
    ("1 SEEN 16 00112233445566778899", ("16", "00112233445566778899"), ()),
    ("1 FAULT 16 OK", ("16", "OK"), ()),
    ("1 HB 4294967295 4294967295 4294967295", ("4294967295",) * 3, ()),
    ("1 STATE deadbeef@4294967295 -@0 04A2B11C6F5E80", ("DEADBEEF", "-", "04A2B11C6F5E80"),
     (4294967295, 0, None)),
    ("1 STATE " + " ".join(["-"] * 16), ("-",) * 16, ()),
])
def test_hub_frames_at_the_bounds_pass(payload, fields, edges):
    frame = decode_line(raw(payload))
    assert frame.fields == fields and frame.edge_ms == edges
    assert decode_line(frame.encode()) == frame


def test_state_edge_ms_round_trip_and_old_states_have_none():
    frame = decode_line(raw("7 STATE 04A2B11C6F5E80@81234 -@90000 -"))
    assert frame == Frame(7, "STATE", ("04A2B11C6F5E80", "-", "-"), (81234, 90000, None))
    assert frame.encode() == raw("7 STATE 04A2B11C6F5E80@81234 -@90000 -")
    assert decode_line(raw("7 STATE 04A2B11C6F5E80 - -")).edge_ms == ()


@pytest.mark.parametrize("payload, ok", [
    ("1 BEEP 60000", True), ("1 BEEP 0", True), ("1 BEEP 60001", False), ("1 BEEP 1000000000000", False),
    ("1 CFG poll_ms 60000", True), ("1 CFG poll_ms 60001", False), ("1 CFG poll_ms x", False),
    ("1 TEXT 3 " + "x" * 20, True), ("1 TEXT 4 x", False), ("1 TEXT 0 " + "x" * 21, False),
    ("1 TEXT 1000000000000 x", False), ("1 LED 4294967296 FF0000", False), ("1 LED 7 FF0000", True),
])
def test_host_commands_outside_the_bounds_are_bad_fields_with_their_frame(payload, ok):
    if ok:
        assert decode_line(raw(payload), source="host").seq == 1
        return
    with pytest.raises(BadFieldsError) as info:
        decode_line(raw(payload), source="host")
    assert info.value.frame is not None and info.value.frame.seq == 1      # a hub can NAK it
