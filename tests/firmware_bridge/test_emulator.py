"""The hub emulator on its own: the protocol it speaks on a real pty / TCP port,
its timing (SEEN after 2 polls, GONE after absent_ms, STATE, HB), its faults,
scripts and the ``preftable hub-emulator`` command."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time

import pytest
import serial

from controller.app.cli import main
from controller.app.hub_emulator_cli import simulated_events
from controller.core.cards import DECK
from controller.core.clock import VirtualClock
from controller.core.config import GameConfig, Table
from controller.core.events import read_events
from controller.core.tracker import DealTracker
from firmware_bridge.codec import Frame, FrameParser, crc16, encode
from firmware_bridge.emulator import HubEmulator
from firmware_bridge.link import HubLink

from conftest import PREFTABLE, end, run as run_child, spawn, wait_until

UID = "04A2B11C6F5E80"
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class Host:
    """A bare host on a real serial port: writes frames, collects what comes back."""

    def __init__(self, url: str):
        self.port = serial.serial_for_url(url, baudrate=115200, timeout=0.02)
        self.parser = FrameParser("hub")
        self.frames: list[Frame] = []
        self.raw = b""
        self.seq = 100
        self.cursor = 0
        self.empty_reads = 0       # in a row (see read/pump)

    def send(self, verb: str, *fields) -> int:
        self.seq += 1
        self.port.write(encode(self.seq, verb, *fields))
        return self.seq

    def pump(self) -> None:
        try:
            try:
                waiting = self.port.in_waiting
            except OSError as exc:                               # the pty is gone (unplugged)
                raise serial.SerialException(f"read failed: {exc}") from exc
            data = self.port.read(waiting or 1)                  # all of it or nothing (see below)
            self.empty_reads = 0
        except serial.SerialException as exc:
            # a pty under load may say it is readable before its bytes reach us: no data
            # yet, once or twice (as HubLink, an unplugged one says so every time)
            self.empty_reads += 1
            if "returned no data" not in str(exc) or self.empty_reads > 5:
                raise
            time.sleep(0.01)
            data = b""
        self.raw += data
        self.frames += self.parser.feed(data)

    def wait(self, pred, timeout: float = 2.0):
        """The next frame (after the last one a wait returned) that matches."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self.pump()
            for i in range(self.cursor, len(self.frames)):
                if pred(self.frames[i]):
                    self.cursor = i + 1
                    return self.frames[i]
        return None

    def close(self) -> None:
        self.port.close()


@pytest.fixture
def hub():
    emu = HubEmulator(readers=4, poll_ms=10, absent_ms=60, hb_ms=200, state_ms=100, boot_id="12345678")
    emu.open_pty()
    path = emu.link_path
    host = Host(path)
    yield emu, host
    host.close()
    emu.close()


def test_pty_path_is_a_stable_symlink_to_a_pty(hub):
    emu, host = hub
    emu2 = HubEmulator(readers=1)
    try:
        device = emu2.open_pty()
        assert device.startswith("/dev/pts/") and device == emu2.device_path
        assert os.path.realpath(emu2.link_path) == device
    finally:
        emu2.close()
    assert os.path.islink(emu.link_path)
    assert os.path.realpath(emu.link_path) == emu.device_path
    assert emu.device_path.startswith("/dev/pts/")
    assert emu.url == emu.link_path


def test_hello_then_state_and_hb():
    """On the hub's own clock, moved by the test: STATE at 100 ms, HB at 200 ms of uptime."""
    emu = HubEmulator(readers=4, poll_ms=10, absent_ms=60, hb_ms=200, state_ms=100, boot_id="12345678",
                      realtime=False)
    emu.open_pty()
    host = Host(emu.link_path)
    try:
        host.send("HELLO", 1)                      # answered at once: input wakes the firmware
        hello = host.wait(lambda f: f.verb == "HELLO")
        assert hello.fields == ("1", "emu-1", "12345678", "4")
        emu.advance(100)
        state = host.wait(lambda f: f.verb == "STATE")
        assert state.fields == ("-", "-", "-", "-")
        emu.advance(100)
        hb = host.wait(lambda f: f.verb == "HB")
        # scans_per_s counts poll rounds (each reader read once), as the firmware always did: poll_ms 10
        # gives the 21 rounds at 0, 10, ... 200 ms of uptime, (21 * 1000 + 100) // 200 a second
        assert hb.fields == ("200", "105", "0")
        seqs = [f.seq for f in host.frames]
        assert seqs == list(range(seqs[0], seqs[0] + len(seqs)))      # +1 per frame
    finally:
        host.close()
        emu.close()


def test_seen_after_two_polls_gone_after_absent_ms():
    """On the hub's clock (moved by hand: no wall-time bounds, whatever the load):
    SEEN on the second poll that reads the tag, GONE absent_ms after the last read."""
    emu = HubEmulator(readers=4, poll_ms=10, absent_ms=60, hb_ms=10**6, state_ms=10**6, realtime=False)
    emu.open_pty()
    host = Host(emu.link_path)

    def state():
        host.send("SNAP")
        return host.wait(lambda f: f.verb == "STATE").fields

    try:
        host.send("HELLO", 1)
        assert host.wait(lambda f: f.verb == "HELLO")
        emu.advance(5)                                 # between two polls (they are at 0, 10, 20 ...)
        emu.place(2, UID.lower())
        emu.advance(5)                                 # one poll read it
        assert state()[2] == "-"
        emu.advance(10)                                # the second one: SEEN
        seen = host.wait(lambda f: f.verb == "SEEN")
        assert seen.fields == ("2", UID) and state()[2] == UID
        emu.remove(2, UID)                             # last read at 20
        emu.advance(59)
        assert state()[2] == UID and not [f for f in host.frames if f.verb == "GONE"]
        emu.advance(1)                                 # polled at 80: 60 ms unread
        gone = host.wait(lambda f: f.verb == "GONE")
        assert gone.fields == ("2", UID)
        assert emu.reported() == [None] * 4
    finally:
        host.close()
        emu.close()


def test_a_swapped_tag_is_gone_then_seen(hub):
    emu, host = hub
    emu.place(0, UID)
    host.wait(lambda f: f.verb == "SEEN")
    emu.place(0, "DEADBEEF")
    host.wait(lambda f: f.verb == "SEEN" and f.fields[1] == "DEADBEEF")
    edges = [(f.verb, f.fields) for f in host.frames if f.verb in ("SEEN", "GONE")]
    assert edges == [("SEEN", ("0", UID)), ("GONE", ("0", UID)), ("SEEN", ("0", "DEADBEEF"))]


def test_answers_host_commands(hub):
    emu, host = hub
    s_hello = host.send("HELLO", 1)
    assert host.wait(lambda f: f.verb == "HELLO" and f.seq > 0)
    emu.place(1, UID)
    assert host.wait(lambda f: f.verb == "SEEN")
    host.send("SNAP")
    assert host.wait(lambda f: f.verb == "STATE" and f.fields == ("-", UID, "-", "-"))
    # BEEP 0 is within PROTOCOL.md's bounds (ms 0-60000): it silences the buzzer
    ok = [host.send("LED", 3, "00FF00"), host.send("TEXT", 1, " a  b "), host.send("BEEP", 80),
          host.send("CFG", "poll_ms", 15), host.send("BEEP", 0)]
    bad = [host.send("LED", 8, "00FF00"), host.send("TEXT", 4, "x"), host.send("CFG", "speed", 1),
           host.send("BEEP", 60001), host.send("TEXT", 0, "x" * 21), host.send("CFG", "poll_ms", 60001)]
    for seq in ok:
        assert host.wait(lambda f: f.verb == "ACK" and f.fields == (str(seq),)), seq
    for seq in bad:
        assert host.wait(lambda f: f.verb == "NAK" and f.fields == (str(seq), "BADARG")), seq
    assert emu.leds == {3: "00FF00"} and emu.text_rows == {1: " a  b "} and emu.beeps == [80, 0]
    assert emu.cfg == {"poll_ms": 15} and emu.poll_ms == 15
    assert s_hello in [f.seq for f in emu.received]


def test_unknown_verb_and_bad_fields_are_nakked(hub):
    emu, host = hub
    payload = b"7 DANCE 1 2"
    host.port.write(b"$" + payload + b"*%04X\n" % crc16(payload))
    payload = b"8 LED x 00FF00"
    host.port.write(b"$" + payload + b"*%04X\n" % crc16(payload))
    host.port.write(b"$9 BEEP 5*0000\n")            # bad CRC: no answer at all
    assert host.wait(lambda f: f.verb == "NAK" and f.fields == ("7", "UNKNOWN"))
    assert host.wait(lambda f: f.verb == "NAK" and f.fields == ("8", "BADARG"))
    host.send("HELLO", 1)                          # read after 9: its answer comes after 9's would
    assert host.wait(lambda f: f.verb == "HELLO")
    assert not any(f.verb in ("ACK", "NAK") and f.fields[0] == "9" for f in host.frames)


def test_drop_and_corrupt(hub):
    emu, host = hub
    host.wait(lambda f: f.verb == "STATE")
    emu.drop_next(1, verbs=["SEEN"])
    emu.corrupt_next(1, verbs=["GONE"])
    emu.place(0, UID)
    assert host.wait(lambda f: f.verb == "STATE" and f.fields[0] == UID)
    assert not any(f.verb == "SEEN" for f in host.frames)
    seqs = [f.seq for f in host.frames]
    assert any(b - a == 2 for a, b in zip(seqs, seqs[1:]))        # the dropped SEEN's number
    emu.remove(0)
    assert host.wait(lambda f: f.verb == "STATE" and f.fields[0] == "-")
    assert host.parser.stats.bad_crc == 1
    assert not any(f.verb == "GONE" for f in host.frames)


def test_garbage_goes_on_the_line_as_is(hub):
    emu, host = hub
    emu.send_garbage(b"\x01\x02junk\r\n")
    assert host.wait(lambda f: f.verb == "STATE")
    wait_until(lambda: host.pump() or b"\x01\x02junk\r\n" in host.raw, "the garbage on the line", interval=0)
    assert host.parser.stats.garbage == 1


def test_reboot_new_boot_id_seq_zero_tags_kept(hub):
    emu, host = hub
    emu.place(3, UID)
    assert host.wait(lambda f: f.verb == "SEEN")
    emu.reboot()
    hello = host.wait(lambda f: f.verb == "HELLO" and f.fields[2] != "12345678")
    assert hello.seq == 0 and emu.boot_id == hello.fields[2]
    state = host.wait(lambda f: f.verb == "STATE")
    assert state.fields == ("-", "-", "-", UID)
    after = [f.seq for f in host.frames[host.frames.index(hello):]]
    assert after == list(range(len(after)))
    later = host.frames[host.frames.index(hello):]
    assert not any(f.verb in ("SEEN", "GONE") for f in later)      # nothing invented


def test_silence():
    """A hung hub sends nothing however long it hangs (its clock and the silence's are the
    test's), and speaks again once the hang ends."""
    emu = HubEmulator(readers=4, poll_ms=10, absent_ms=60, hb_ms=200, state_ms=100, realtime=False,
                      clock=VirtualClock())
    emu.open_pty()
    host = Host(emu.link_path)
    try:
        emu.advance(200)
        assert host.wait(lambda f: f.verb == "HB")
        emu.go_silent(60)                          # ended below: no race with its end
        assert emu.silent
        host.pump()
        n = len(host.frames)
        emu.advance(350)                           # STATE every 100 ms, HB every 200 ms, if it spoke
        emu.clear_faults()                         # the hang ends
        assert not emu.silent
        host.send("HELLO", 1)                      # answered before anything else it sends now
        assert host.wait(lambda f: f.verb == "HELLO")
        assert [f.verb for f in host.frames[n:]] == ["HELLO"]
        emu.advance(100)
        assert host.wait(lambda f: f.verb == "STATE", 1.0)
    finally:
        host.close()
        emu.close()


def test_unplug_and_replug(hub):
    emu, host = hub
    emu.unplug()
    assert not os.path.lexists(emu.link_path)
    with pytest.raises(serial.SerialException):
        for _ in range(20):
            host.pump()
    host.close()
    emu.place(0, UID)                               # moved while the hub was away
    emu.replug()
    assert os.path.realpath(emu.link_path) == emu.device_path
    assert emu.boot_id != "12345678"
    host.__init__(emu.link_path)
    host.send("HELLO", 1)
    hello = host.wait(lambda f: f.verb == "HELLO")
    assert hello.fields[2] == emu.boot_id
    assert host.wait(lambda f: f.verb == "STATE").fields[0] == UID


def test_tcp_transport():
    emu = HubEmulator(readers=2, poll_ms=10, state_ms=100)
    host_, port = emu.serve_tcp("127.0.0.1", 0)
    try:
        assert emu.url == f"socket://127.0.0.1:{port}"
        host = Host(emu.url)
        host.send("HELLO", 1)
        assert host.wait(lambda f: f.verb == "HELLO").fields[3] == "2"
        emu.place(1, UID)
        assert host.wait(lambda f: f.verb == "SEEN").fields == ("1", UID)
        host.close()
    finally:
        emu.close()


def test_play_a_script():
    """Each move at its ``t``, on the hub's clock (moved by hand: exact whatever the load)."""
    lines = [
        json.dumps({"t": 0.0, "zone": "seat2", "event": "placed", "uid": UID}),
        json.dumps({"t": 0.05, "zone": "prikup", "event": "placed", "card": "Qh"}),
        json.dumps({"t": 0.10, "zone": "seat2", "event": "removed", "uid": UID}),
    ]
    emu = HubEmulator(readers=4, poll_ms=10, realtime=False)
    emu.open_pty()
    try:
        thread = emu.play(read_events(lines, ["seat1", "seat2", "seat3", "prikup"]),
                          ["seat1", "seat2", "seat3", "prikup"], deck={"Qh": "0A0B0C0D"})
        thread.join(10)
        assert emu.tags() == [None, None, None, "0A0B0C0D"]
        assert emu.reported() == [None, UID, None, "0A0B0C0D"]       # GONE only after absent_ms
        emu.advance(300)
        assert emu.reported() == [None, None, None, "0A0B0C0D"]
        edges = emu.hub.edge_ms                   # hub uptime of each reader's last SEEN/GONE
        assert edges[0] is None and edges[2] is None
        assert 50 < edges[3] <= 70                # laid at 50 ms: SEEN two polls later
        assert edges[1] == 400                    # last read at 100 ms, absent_ms 300
    finally:
        emu.close()


def test_cli_serves_a_script_over_tcp(tmp_path):
    script = tmp_path / "events.jsonl"
    script.write_text("\n".join([
        json.dumps({"t": 0.2, "zone": "seat1", "event": "placed", "card": "7s"}),
        json.dumps({"t": 0.3, "zone": "seat3", "event": "placed", "uid": UID}),
        "not json",
    ]) + "\n")
    deck = tmp_path / "deck.toml"
    # a whole deck (a partial one is refused, as the table refuses it), 7s on tag 0A0B0C0D
    deck.write_text("[cards]\n" + "".join(
        f'"{"0A0B0C0D" if str(card) == "7s" else "0A0B%04X" % i}" = "{card}"\n' for i, card in enumerate(DECK)))
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        free = probe.getsockname()[1]
    proc = spawn(PREFTABLE + ["hub-emulator", "--tcp", str(free), "--readers", "4", "--script", str(script),
                              "--zones", "seat1,seat2,seat3,prikup", "--deck", str(deck)],
                 stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        url = proc.stdout.readline().strip()
        assert url == f"socket://127.0.0.1:{free}"
        events = []
        link = HubLink(url, ["seat1", "seat2", "seat3", "prikup"], events.append,
                       reply_timeout=0.1, reopen_backoff=(0.02, 0.2))
        link.start()
        try:
            assert link.wait_ready(30)
            wait_until(lambda: len(events) >= 2, "the script's two moves")
            assert [(e.event, e.zone, e.uid) for e in events] == [
                ("placed", "seat1", "0A0B0C0D"), ("placed", "seat3", UID)]
        finally:
            link.stop()
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            out, err = proc.communicate(timeout=30)
        finally:
            end(proc)
    assert proc.returncode == 0
    assert ":3:" in err                            # the bad line, named by number


def test_cli_pty_prints_the_path_and_takes_fault_commands():
    proc = spawn(PREFTABLE + ["hub-emulator", "--pty", "--readers", "2"],
                 stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        path = proc.stdout.readline().strip()
        assert path.startswith("/dev/pts/")
        host = Host(path)
        host.send("HELLO", 1)
        hello = host.wait(lambda f: f.verb == "HELLO" and f.fields[3] == "2")
        assert hello
        proc.stdin.write(f"place 1 {UID.lower()}\n")
        proc.stdin.flush()
        assert host.wait(lambda f: f.verb == "SEEN").fields == ("1", UID)
        proc.stdin.write("state\nreboot\nfly away\n")
        proc.stdin.flush()
        assert proc.stdout.readline().strip() == f"# - {UID}"
        boot = proc.stdout.readline().split()
        assert boot[:2] == ["#", "boot"]
        assert host.wait(lambda f: f.verb == "HELLO").fields[2] == boot[2]
        assert "unknown command 'fly'" in proc.stdout.readline()
        host.close()
        proc.stdin.write("quit\n")
        proc.stdin.flush()
        proc.wait(30)
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
        try:
            proc.communicate(timeout=30)
        finally:
            end(proc)
    assert proc.returncode == 0


#: a child serving on a pty whose own thread takes a SIGTERM once its main thread blocks in a
#: system call other than a futex (the GIL): where the kernel hands a process's signal to
#: another thread, only a wait that wakes on the signal itself can see it
SIGNAL_IN_ANOTHER_THREAD = r"""
import io, os, platform, signal, sys, threading, time
from firmware_bridge.emulator_serve import serve
FUTEX = {"x86_64": "202", "aarch64": "98"}.get(platform.machine(), "202")
main = threading.get_native_id()
said = threading.Event()

class Out(io.StringIO):
    def write(self, text):
        said.set()
        return super().write(text)

def blocked():
    with open(f"/proc/self/task/{main}/syscall") as f:
        call = f.read().split()[0]
    return call not in ("running", FUTEX)

def stopper():
    said.wait()
    while not blocked():
        time.sleep(0.001)
    signal.pthread_kill(threading.get_ident(), signal.SIGTERM)     # this thread, not the main one

r, w = os.pipe()             # a stdin that stays open and silent, or one at its end
stdin = os.fdopen(r) if sys.argv[1] == "open" else open(os.devnull)
threading.Thread(target=stopper, daemon=True).start()
sys.exit(serve(stdin=stdin, stdout=Out(), stderr=io.StringIO()))
"""


@pytest.mark.parametrize("stdin", ["open", "ended"])
def test_a_stop_signal_another_thread_takes_still_stops_the_server(stdin):
    """SIGTERM (or Ctrl-C) taken by one of the emulator's threads while the main thread waits on
    stdin, or has seen its end, still stops ``hub-emulator`` with status 0 (the signal's
    Python handler alone runs only when the main thread next runs: it slept on for an hour)."""
    done = run_child([sys.executable, "-c", SIGNAL_IN_ANOTHER_THREAD, stdin], timeout=30,
                     capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_sigterm_as_stdin_closes_stops_the_cli():
    """The end of stdin and SIGTERM at once (a test ending its emulator): it exits, every time."""
    procs = [spawn(PREFTABLE + ["hub-emulator", "--readers", "2"], stdin=subprocess.PIPE,
                   stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True) for _ in range(4)]
    try:
        for proc in procs:
            assert proc.stdout.readline().startswith("/dev/pts/")
        for proc in procs:
            proc.stdin.close()
            proc.terminate()
        assert [proc.wait(30) for proc in procs] == [0, 0, 0, 0]
    finally:
        for proc in procs:
            end(proc)


def test_cli_refuses_a_bad_deck(tmp_path, capsys):
    deck = tmp_path / "deck.toml"
    deck.write_text('[cards]\n"0A0B0C0D" = "1z"\n')
    assert main(["hub-emulator", "--deck", str(deck)]) == 2
    err = capsys.readouterr().err
    assert str(deck) in err and "1z" in err and err.count("\n") == 1


def test_bad_reader_numbers():
    emu = HubEmulator(readers=2)
    with pytest.raises(ValueError):
        emu.place(2, UID)
    with pytest.raises(ValueError):
        HubEmulator(readers=0)


def test_simulated_deals_are_whole_and_follow_suit():
    for players in (3, 4):
        events = simulated_events(GameConfig(table=Table(players=players)), 2, 7)
        assert [e.t for e in events] == sorted(e.t for e in events)
        for deal in (events[:len(events) // 2], events[len(events) // 2:]):
            laid = [e for e in deal if e.event == "placed"]
            assert sorted(e.card for e in laid) == sorted(DECK)
            assert len([e for e in laid if e.zone == "prikup"]) == 2
            seats = {e.zone for e in laid} - {"prikup"}
            assert len(seats) == 3
            assert len([e for e in deal if e.event == "removed"]) == 32
        # everyone follows suit when able: check the first deal trick by trick
        hands: dict = {}
        for e in events[:len(events) // 2]:
            if e.event == "placed" and e.zone != "prikup":
                hands.setdefault(e.zone, []).append(e.card)
        i = 0
        deal = [e for e in events[:len(events) // 2] if e.event == "placed"]
        held = {seat: list(cards) for seat, cards in hands.items()}
        while i < len(deal):
            size = 4 if deal[i].zone == "prikup" else 3
            trick = deal[i:i + size]
            led = trick[0].card.suit
            for e in trick[1:]:
                if e.card.suit != led:
                    assert all(c.suit != led for c in held[e.zone]), (e, held[e.zone])
            for e in trick:
                if e.zone != "prikup":
                    held[e.zone].remove(e.card)
            i += size


def test_simulated_players_reach_the_link_as_their_events():
    """Played on the hub's clock (moved by hand as the script goes), so the moves are
    as far apart for the firmware as the script says, however loaded the machine is."""
    zones = ["seat1", "seat2", "seat3", "prikup"]
    script = simulated_events(GameConfig(), 1, 3)[:24]          # three tricks
    emu = HubEmulator(readers=4, poll_ms=3, absent_ms=10, realtime=False)
    emu.open_pty()
    path = emu.link_path
    events = []
    link = HubLink(path, zones, events.append, hb_timeout=60)
    try:
        link.start()
        assert link.wait_ready(3)
        emu.play(script, zones).join(30)
        emu.advance(100)                                          # the last GONEs
        wait_until(lambda: len(events) >= len(script), "every move of the script")
        uid = {str(c): "C0DE%04X" % i for i, c in enumerate(DECK)}
        assert [(e.event, e.zone, e.uid) for e in events] == [
            (e.event, e.zone, uid[str(e.card)]) for e in script]
    finally:
        link.stop()
        emu.close()


# --------------------------------------------------------------------------- the harness around the firmware

def test_the_emulated_hub_is_the_firmware():
    from firmware_bridge.firmware.hub import Hub

    emu = HubEmulator(readers=2, realtime=False)
    emu.open_pty()
    try:
        first = emu.hub
        assert isinstance(first, Hub) and first.boot_id == emu.boot_id
        emu.reboot()
        assert isinstance(emu.hub, Hub) and emu.hub is not first and emu.hub.boot_id == emu.boot_id
        assert emu.hub.seq == 1                                        # its HELLO went out
    finally:
        emu.close()


def test_hand_moved_clock_polls_debounces_and_times_like_the_firmware():
    emu = HubEmulator(readers=2, realtime=False, state_ms=10**6, hb_ms=10**6)
    emu.open_pty()
    host = Host(emu.link_path)
    try:
        host.send("HELLO", 1)
        assert host.wait(lambda f: f.verb == "HELLO")
        emu.place(1, UID)
        host.send("HELLO", 1)                                         # the firmware's loop turns meanwhile,
        assert host.wait(lambda f: f.verb == "HELLO")                 # its clock still: no poll round
        host.pump()
        assert not [f for f in host.frames if f.verb == "SEEN"] and emu.reported() == [None, None]
        emu.advance(50)                                               # poll rounds at 25 and 50 ms
        assert host.wait(lambda f: f.verb == "SEEN").fields == ("1", UID)
        emu.remove(1)
        emu.advance(250)
        host.send("SNAP")
        state = host.wait(lambda f: f.verb == "STATE")
        assert state.fields == ("-", UID) and state.edge_ms == (None, 50)
        emu.advance(50)                                               # absent_ms 300 since the last read
        assert host.wait(lambda f: f.verb == "GONE").fields == ("1", UID)
        host.send("SNAP")
        assert host.wait(lambda f: f.verb == "STATE").edge_ms == (None, 350)
    finally:
        host.close()
        emu.close()


def test_a_failed_reader_is_the_firmwares_fault_noreply_and_its_tag_goes():
    emu = HubEmulator(readers=2, realtime=False, state_ms=10**6, hb_ms=10**6)
    emu.open_pty()
    host = Host(emu.link_path)
    try:
        emu.place(0, UID)
        emu.advance(50)
        assert host.wait(lambda f: f.verb == "SEEN")
        emu.fail_reader(0)
        emu.advance(25)
        assert host.wait(lambda f: f.verb == "FAULT").fields == ("0", "NOREPLY")
        emu.advance(300)
        assert host.wait(lambda f: f.verb == "GONE").fields == ("0", UID)
        emu.heal_reader(0)
        emu.advance(1000)                                             # the firmware retries once a second
        assert host.wait(lambda f: f.verb == "FAULT").fields == ("0", "OK")
        assert host.wait(lambda f: f.verb == "SEEN").fields == ("0", UID)
    finally:
        host.close()
        emu.close()


def test_burst_and_flip_drive_the_firmwares_own_polls():
    emu = HubEmulator(readers=4, poll_ms=50)
    emu.open_pty()
    host = Host(emu.link_path)
    try:
        host.send("HELLO", 1)
        assert host.wait(lambda f: f.verb == "HELLO")
        emu.flip(2, UID)
        assert emu.reported()[2] == UID
        assert host.wait(lambda f: f.verb == "SEEN").fields == ("2", UID)
        emu.flip(2, None)
        assert emu.reported()[2] is None
        started = []
        emu.burst(101, reader=1, on_start=lambda: started.append(True))
        assert started == [True]
        wait_until(lambda: host.pump() or len([f for f in host.frames if f.verb in ("SEEN", "GONE")
                                               and f.fields[0] == "1"]) >= 101, "the burst's 101 edges", interval=0)
        edges = [f.verb for f in host.frames if f.verb in ("SEEN", "GONE") and f.fields[0] == "1"]
        assert edges == ["SEEN", "GONE"] * 50 + ["SEEN"] and emu.reported()[1] == "04A2B11C6F5E80"
        seqs = [f.seq for f in host.frames]
        assert seqs == list(range(seqs[0], seqs[0] + len(seqs)))      # nothing lost on the way
        assert emu.poll_ms == 50 and emu.absent_ms == 300             # its settings put back
        emu.burst(5, readers=[0, 3])                                  # two readers in step
        wait_until(lambda: host.pump() or len([f for f in host.frames if f.verb in ("SEEN", "GONE")
                                               and f.fields[0] in "03"]) >= 5, "the two readers' 5 edges", interval=0)
        edges = [(f.verb, f.fields[0]) for f in host.frames if f.verb in ("SEEN", "GONE") and f.fields[0] in "03"]
        assert edges == [("SEEN", "0"), ("SEEN", "3"), ("GONE", "0"), ("GONE", "3"), ("SEEN", "0")]
    finally:
        host.close()
        emu.close()


def test_flip_returns_the_emulators_clock_when_the_edge_was_written():
    clock = VirtualClock(7.5)
    emu = HubEmulator(readers=4, realtime=False, clock=clock)
    emu.open_pty()
    try:
        assert emu.flip(2, UID) == 7.5 and emu.reported()[2] == UID
        clock.advance(0.25)
        assert emu.flip(2, None) == 7.75 and emu.reported()[2] is None
    finally:
        emu.close()


def test_no_edge_ms_hub_and_reader_bounds():
    emu = HubEmulator(readers=1, edge_ms=False, realtime=False)
    emu.open_pty()
    host = Host(emu.link_path)
    try:
        emu.place(0, UID)
        emu.advance(50)
        host.send("SNAP")
        state = host.wait(lambda f: f.verb == "STATE")
        assert state.fields == (UID,) and state.edge_ms == ()
    finally:
        host.close()
        emu.close()
    with pytest.raises(ValueError):
        HubEmulator(readers=17)
    HubEmulator(readers=16)


def test_cli_refuses_too_many_readers_and_names_a_bad_script_line(tmp_path, capsys, monkeypatch):
    import io

    assert main(["hub-emulator", "--readers", "17"]) == 2
    assert "at most 16 readers" in capsys.readouterr().err
    script = tmp_path / "events.jsonl"
    script.write_text('{"t": 1' + "0" * 400 + ', "zone": "seat1", "event": "placed", "uid": "DEADBEEF"}\n')
    monkeypatch.setattr(sys, "stdin", io.StringIO("quit\n"))
    code = main(["hub-emulator", "--script", str(script), "--tcp", "0"])
    err = capsys.readouterr().err
    assert code == 0 and "Traceback" not in err           # the 401-digit t: one line naming it, no crash
    assert f"{script}:1: field 't' must be a number" in err


# --------------------------------------------------------------------------- --simulate plays the table's rules

def simulated_by_the_cli(monkeypatch, capsys, *args):
    """What ``preftable hub-emulator --simulate ...`` gives its hub to play (its play()
    captured, its stdin closed at once): the events and the zones."""
    import io

    played = []
    monkeypatch.setattr(HubEmulator, "play", lambda self, events, zones, *a, **k: played.append(
        (list(events), list(zones))))
    monkeypatch.setattr(sys, "stdin", io.StringIO("quit\n"))
    assert main(["hub-emulator", "--tcp", "0", *args]) == 0, capsys.readouterr().err
    [(events, zones)] = played
    return events, zones


def test_simulated_players_keep_the_dealer_after_a_raspasovka_and_first_hand_leads_trick_3(monkeypatch, capsys):
    """The default rules (same_dealer = true, prikup dealer_leads; RULES.md): the emulator's
    own players passed the deal on after a raspasovka (deal 2 filled with "not your turn")
    and let trick 2's winner lead trick 3, where the first hand does."""
    events, zones = simulated_by_the_cli(monkeypatch, capsys, "--simulate", "3", "--seed", "5")
    tracker = DealTracker(GameConfig())
    signals = [s for e in events for s in tracker.feed(e)]
    assert [s.data for s in signals if s.kind == "mistake"] == []
    deals = tracker.summary()["deals"]
    assert len(deals) == 3 and all(d["complete"] for d in deals)
    assert zones == ["seat1", "seat2", "seat3", "prikup"]


def test_simulated_players_play_the_tables_config(monkeypatch, capsys, tmp_path):
    cfg = tmp_path / "table.toml"
    cfg.write_text('[table]\nplayers = 4\nfirst_dealer = "seat3"\n[rules]\nsame_dealer = false\n'
                   'prikup = "closed"\n')
    events, zones = simulated_by_the_cli(monkeypatch, capsys, "--simulate", "2", "--seed", "1", "--config", str(cfg))
    from controller.app.settings import load_settings
    game = load_settings(cfg).game
    tracker = DealTracker(game)
    signals = [s for e in events for s in tracker.feed(e)]
    assert [s.data for s in signals if s.kind == "mistake"] == []
    assert len(tracker.summary()["deals"]) == 2
    assert zones == ["seat1", "seat2", "seat3", "seat4", "prikup"]
    assert not [e for e in events if e.zone == "prikup" and e.event == "placed"]     # closed: never played
    assert main(["hub-emulator", "--simulate", "1", "--config", str(cfg), "--players", "3"]) == 2
    assert "table.players = 4" in capsys.readouterr().err
