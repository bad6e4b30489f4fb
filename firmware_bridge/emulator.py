"""The hub emulator: the shipping hub firmware on a pty or a TCP port, with faults.

There is one hub implementation, the MicroPython firmware in ``firmware/``
(PROTOCOL.md's hub side).  This module is a harness around its ``Hub``, run
under CPython: virtual readers (``mpfake.devices``) that tags are laid on,
lifted from or failed (a dead reader: the firmware's own ``FAULT NOREPLY``);
recording LEDs, display and buzzer; the firmware's clock, real or moved by
hand; and the line between hub and host, which injects the faults a real
table meets: dropped frames, corrupted CRCs, garbage, silence, a reboot (a
fresh ``Hub`` with a new boot_id), an unplug and a return of the pty or TCP
port.  Like OctoPrint's virtual printer it sits behind the same interface as
the real device: the host opens a path or a ``socket://`` URL.
``preftable hub-emulator`` is :func:`firmware_bridge.emulator_serve.serve` (its options and the simulated players
that ``--simulate`` plays by the table's rules are the app's:
:mod:`controller.app.hub_emulator_cli`).
"""

from __future__ import annotations

import logging
import os
import tempfile
import threading
import time
from collections import Counter
from typing import Callable, Iterable, Sequence

from controller.core.cards import DECK

from .codec import MAX_FRAME, MAX_READERS, PROTO_VERSION, Frame, FrameError, decode_line
from .firmware.hub import CFG_DEFAULTS, HB_MS, STATE_MS, Hub, make_boot_id
# The line to the host and its faults: the half of the emulator beside this one.
from .emulator_line import FirmwareLine, LineFaults, PtyPort, TcpPort
from .mpfake.devices import HubTicks, RecordingBuzzer, RecordingDisplay, RecordingLeds, VirtualReader

log = logging.getLogger(__name__)


class HubEmulator(LineFaults):
    """The shipping firmware's :class:`~firmware_bridge.firmware.hub.Hub` with
    ``readers`` virtual readers, served on a pty or a TCP port.

    One thread runs the firmware's loop (``Hub.step``) and feeds it what the host
    writes.  The test (or ``hub-emulator``'s stdin) lays tags on readers, lifts
    or fails them, and injects line faults; every call takes the emulator's lock,
    so it happens between two turns of the firmware's loop.  What the host set is
    kept in :attr:`leds`, :attr:`text_rows`, :attr:`beeps` and :attr:`cfg` (as
    the firmware did it); every host frame in :attr:`received`; the line faults
    done in :attr:`line_faults`.

    ``poll_ms``/``absent_ms`` (``None``: the firmware's defaults, 25 and 300)
    start the hub as a host's CFG would; ``hb_ms``, ``state_ms``, ``proto`` and
    ``edge_ms`` (``False``: a hub that sends no ``@edge_ms``) emulate another hub
    than PROTOCOL.md's.  ``realtime=False``: the hub's clock moves only by
    :meth:`advance`, for tests that need exact hub times.  ``clock`` (seconds, never
    decreasing; ``time.monotonic``) times the host's world around the firmware: how
    long a :meth:`go_silent` lasts, a script's pace on a real-time hub, and the
    stamps :meth:`flip` returns; a :class:`~controller.core.clock.VirtualClock` makes
    them the test's (its ``sleep`` paces a script).
    """

    def __init__(self, readers: int = 4, fw_version: str = "emu-1", boot_id: str | None = None,
                 absent_ms: int | None = None, poll_ms: int | None = None, *, proto: int = PROTO_VERSION,
                 hb_ms: int = HB_MS, state_ms: int = STATE_MS, leds: int = 8, edge_ms: bool = True,
                 realtime: bool = True, clock: Callable[[], float] = time.monotonic):
        if not 1 <= readers <= MAX_READERS:
            raise ValueError(f"readers must be 1-{MAX_READERS} (PROTOCOL.md), got {readers}")
        self.readers = readers
        self.fw_version = fw_version
        self.boot_id = boot_id or make_boot_id()
        self.proto = proto
        self.hb_ms = hb_ms
        self.state_ms = state_ms
        self.n_leds = leds
        self.edge_ms = edge_ms
        self._boot_config = {k: v for k, v in (("absent_ms", absent_ms), ("poll_ms", poll_ms)) if v is not None}
        self.clock = HubTicks(realtime)
        self._now = clock
        self._sleep = getattr(clock, "sleep", time.sleep)     # a virtual clock's waits pass at once

        self._cfg: dict[str, int] = {}
        self.received: list[Frame] = []
        self.line_faults: Counter[str] = Counter()   # frames dropped/corrupted, garbage sent (a test's proof)
        self.host_hello = threading.Event()        # the host has said HELLO (a script waits for it)
        self.link_path: str | None = None

        self._lock = threading.RLock()
        self._readers = [VirtualReader() for _ in range(readers)]
        self._hub: Hub | None = None
        self._leds = RecordingLeds(leds)
        self._display = RecordingDisplay()
        self._buzzer = RecordingBuzzer()
        self._line = FirmwareLine(self)
        self._inbox = bytearray()          # host bytes the firmware has not read yet
        self._partial = b""                # a host line still arriving
        self._cfg_sent: list[tuple[str, str]] = []
        self._drop: list[tuple[int, frozenset[str] | None]] = []
        self._corrupt: list[tuple[int, frozenset[str] | None]] = []
        self._ignore_commands = 0
        self._silent_until = 0.0
        self._capture: list[bytes] | None = None
        self._edge_written_at = 0.0
        self._transport: PtyPort | TcpPort | None = None
        self._kind: str | None = None
        self._tcp_address: tuple[str, int] | None = None
        self._tmpdir: str | None = None
        self._running = threading.Event()
        self._thread: threading.Thread | None = None

    # ------------------------------------------------------------------ what the host set

    @property
    def leds(self) -> dict[int, str]:
        """LED index -> ``RRGGBB`` as the firmware showed it since its boot."""
        return self._leds.colours

    @property
    def text_rows(self) -> dict[int, str]:
        """Display row -> text as the firmware wrote it since its boot."""
        return self._display.rows

    @property
    def cfg(self) -> dict[str, int]:
        """The CFG keys the host set and the firmware took (key -> value) since its boot.
        Read under the firmware's lock: the ACK goes out inside a firmware step and the key
        is noted at that step's end, so a host that has its ACK never sees the key missing."""
        with self._lock:
            return dict(self._cfg)

    @property
    def beeps(self) -> list[int]:
        """Every beep the firmware sounded (ms; 0 silenced one)."""
        return self._buzzer.beeps

    @property
    def poll_ms(self) -> int:
        return self._config("poll_ms")

    @property
    def absent_ms(self) -> int:
        return self._config("absent_ms")

    def _config(self, key: str) -> int:
        with self._lock:
            if self._hub is not None:
                return self._hub.config[key]
            return self._boot_config.get(key, CFG_DEFAULTS[key])

    @property
    def hub(self) -> Hub | None:
        """The firmware's running ``Hub`` (None while unplugged)."""
        return self._hub

    # ------------------------------------------------------------------ transports

    def open_pty(self) -> str:
        """Serve on a new pty; return its device path (``/dev/pts/N``).

        A pty cannot come back at the same path after :meth:`unplug`, so a host
        that must survive unplug/replug opens :attr:`link_path` (or :attr:`url`)
        instead: a symlink that :meth:`replug` re-points at the new pty."""
        with self._lock:
            self._tmpdir = tempfile.mkdtemp(prefix="preftable-hub-")
            self.link_path = os.path.join(self._tmpdir, "hub")
            self._kind = "pty"
            self._plug(PtyPort())
            path = self._transport.path
        self._start_thread()
        return path

    @property
    def device_path(self) -> str | None:
        """The current pty's own path (``/dev/pts/N``), if serving on a pty."""
        transport = self._transport
        return transport.path if isinstance(transport, PtyPort) else None

    def serve_tcp(self, host: str = "127.0.0.1", port: int = 0) -> tuple[str, int]:
        """Serve on a TCP port (0: any free one); the host opens ``socket://host:port``."""
        with self._lock:
            self._kind = "tcp"
            self._plug(TcpPort(host, port))
        self._start_thread()
        return self._tcp_address

    @property
    def url(self) -> str:
        """What a :class:`~firmware_bridge.link.HubLink` should open."""
        if self._kind == "tcp":
            return "socket://%s:%d" % self._tcp_address
        if self.link_path is None:
            raise RuntimeError("no transport open: call open_pty() or serve_tcp() first")
        return self.link_path

    def _plug(self, transport: PtyPort | TcpPort) -> None:
        self._transport = transport
        if isinstance(transport, PtyPort):
            tmp = self.link_path + ".new"
            if os.path.lexists(tmp):
                os.unlink(tmp)
            os.symlink(transport.path, tmp)
            os.replace(tmp, self.link_path)
            log.info("hub emulator on %s (%s)", transport.path, self.link_path)
        else:
            self._tcp_address = transport.address
            log.info("hub emulator on tcp %s:%d", *transport.address)
        self._boot()

    def _start_thread(self) -> None:
        if self._running.is_set():
            return
        self._running.set()
        self._thread = threading.Thread(target=self._loop, name="hub-emu firmware", daemon=True)
        self._thread.start()

    def close(self) -> None:
        """Stop the firmware's thread and close the transport (removes the symlink)."""
        self._running.clear()
        if self._thread is not None:
            self._thread.join(2.0)
            self._thread = None
        with self._lock:
            self._drop_transport()
            self._hub = None
            if self._tmpdir:
                try:
                    os.rmdir(self._tmpdir)
                except OSError:
                    pass

    def __enter__(self) -> "HubEmulator":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ the firmware

    def _boot(self) -> None:
        """Power-on: a fresh firmware ``Hub`` (seq 0, uptime 0, default config, blank
        LEDs and display) scans the readers and says HELLO.  The lock is held."""
        self._leds = RecordingLeds(self.n_leds)
        self._display = RecordingDisplay()
        self._cfg = {}
        self._inbox.clear()
        self._partial = b""
        self._hub = Hub(self._readers, self._line, leds=self._leds, display=self._display,
                        buzzer=self._buzzer, boot_id=self.boot_id, fw_version=self.fw_version,
                        clock=self.clock, config=self._boot_config, proto_version=self.proto,
                        state_ms=self.state_ms, hb_ms=self.hb_ms, edge_times=self.edge_ms)
        self._hub.start()

    def _step(self) -> int:
        """One turn of the firmware's loop (the lock is held); the ms it may sleep."""
        hub = self._hub
        try:
            wait = hub.step()
        except Exception:                      # as firmware/main.py does on a board: report, reboot
            log.exception("hub firmware raised; rebooting it")
            self._line.write(b"# fatal error; rebooting\n")
            self.boot_id = make_boot_id()
            self._boot()
            return 0
        if self._cfg_sent:
            for key, value in self._cfg_sent:
                if value.isdigit() and hub.config.get(key) == int(value):
                    self._cfg[key] = int(value)
            self._cfg_sent.clear()
        return wait

    def _loop(self) -> None:
        while self._running.is_set():
            wait_ms = 10
            with self._lock:
                transport = self._transport
                if self._hub is not None and transport is not None and not self.silent:
                    wait_ms = self._step()
            if transport is None:
                time.sleep(0.01)
                continue
            if not self.clock.realtime:
                wait_ms = 50                    # hub time stands still: only input wakes it
            data = transport.read(max(wait_ms, 0) / 1000)
            if data:
                with self._lock:
                    if transport is self._transport and not self.silent:   # a hung hub reads nothing
                        self._from_host(data)

    def _from_host(self, data: bytes) -> None:
        """Host bytes: recorded in :attr:`received`, then given to the firmware
        (except commands an :meth:`ignore_commands` fault swallows)."""
        lines = (self._partial + data).split(b"\n")
        self._partial = lines.pop()
        for raw in lines:
            line = raw + b"\n"
            frame = None
            try:
                frame = decode_line(line, source="host")
            except FrameError as exc:
                frame = exc.frame
            if frame is not None:
                self.received.append(frame)
                if frame.verb == "HELLO":
                    self.host_hello.set()
                if frame.verb in ("LED", "TEXT", "BEEP", "CFG") and self._ignore_commands:
                    self._ignore_commands -= 1
                    continue
                if frame.verb == "CFG" and len(frame.fields) == 2:
                    self._cfg_sent.append((frame.fields[0], frame.fields[1]))
            self._inbox += line
        if len(self._partial) > 4 * MAX_FRAME:  # no newline coming: the firmware drops it as over-long
            self._inbox += self._partial
            self._partial = b""

    def held(self) -> threading.RLock:
        """``with emu.held(): ...``: the calls inside reach the firmware as one turn
        of the host's world -- no host input gets in between (a SNAP the host
        sends meanwhile is read after the block)."""
        return self._lock

    def advance(self, ms: int) -> None:
        """Move the hub's clock ``ms`` on, running the firmware's loop at every
        moment it has something due (for ``realtime=False`` hubs)."""
        with self._lock:
            left = int(ms)
            while left > 0 and self._hub is not None:
                step = max(1, min(left, self._step()))
                self.clock.advance(step)
                left -= step
            if self._hub is not None:
                self._step()

    # ------------------------------------------------------------------ tags

    def place(self, reader: int, uid: str) -> None:
        """Lay tag ``uid`` on ``reader`` (it replaces whatever lay there)."""
        with self._lock:
            self._readers[self._reader(reader)].tag = _tag_uid(uid)

    def remove(self, reader: int, uid: str | None = None) -> None:
        """Lift the tag (``uid``, if given, must be the one there) off ``reader``."""
        with self._lock:
            r = self._reader(reader)
            if uid is None or self._readers[r].tag == uid.upper():
                self._readers[r].tag = None

    def tags(self) -> list[str | None]:
        """What physically lies on each reader."""
        with self._lock:
            return [r.tag for r in self._readers]

    def reported(self) -> list[str | None]:
        """What the firmware has reported (its STATE)."""
        with self._lock:
            if self._hub is None:
                return [None] * self.readers
            return [track.uid for track in self._hub.tracks]

    def flip(self, reader: int, uid: str | None) -> float:
        """Move a tag and have the firmware report it now: its poll rounds run at
        once, its clock moved on by a poll period each (and past ``absent_ms``
        for a GONE).  Return the emulator's ``clock()`` just before the SEEN/GONE frame
        was written (for latency figures)."""
        with self._lock:
            r = self._reader(reader)
            uid = None if uid is None else _tag_uid(uid)
            self._readers[r].tag = uid
            hub = self._hub
            if hub is None:
                raise RuntimeError("flip() while the hub is unplugged")
            rounds = 0
            while hub.tracks[r].uid != uid:
                if self._readers[r].failed or rounds > 2 + hub.config["absent_ms"] // hub.config["poll_ms"] + 2:
                    raise RuntimeError(f"reader {reader} does not report {uid}")
                self.clock.advance(hub.config["poll_ms"])
                self._step()
                rounds += 1
            return self._edge_written_at

    def burst(self, count: int, reader: int = 0, uid: str = "04A2B11C6F5E80",
              on_start: Callable[[], None] | None = None, readers: Sequence[int] | None = None) -> None:
        """Have the firmware send ``count`` alternating SEEN/GONE frames for ``uid``
        on ``reader`` (or on each of ``readers`` in step, their edges interleaved)
        as fast as the line takes them (waiting for room instead of dropping);
        an even count ends as it began.  The firmware's polls are run ahead of
        time on its own clock (1 ms polls, 1 ms absent time, as a host's CFG
        could set) and their frames -- a few HB/STATE among them -- written in
        one go; ``on_start()`` is called just before the first byte goes out."""
        with self._lock:
            hub = self._hub
            chosen = [self._reader(r) for r in (readers if readers is not None else (reader,))]
            if hub is None:
                raise RuntimeError("burst() while the hub is unplugged")
            if any(self._readers[r].failed for r in chosen):
                raise RuntimeError(f"burst() on a failed reader ({chosen})")
            tag = _tag_uid(uid)
            saved = dict(hub.config)
            hub.config.update(poll_ms=1, absent_ms=1)
            self._capture = []
            edges = 0
            try:
                while edges < count:
                    moving = chosen[:count - edges]
                    want = {r: tag if hub.tracks[r].uid is None else None for r in moving}
                    for r in moving:
                        self._readers[r].tag = want[r]
                    while any(hub.tracks[r].uid != want[r] for r in moving):
                        self.clock.advance(1)
                        self._step()
                    edges += len(moving)
            finally:
                hub.config.update(saved)
                frames, self._capture = self._capture, None
            if on_start is not None:
                on_start()
            chunk = 64
            for i in range(0, len(frames), chunk):
                if not self._write(b"".join(frames[i:i + chunk]), wait=5.0):
                    log.warning("burst stalled: the host stopped reading")
                    return

    def _reader(self, reader: int) -> int:
        if not 0 <= reader < self.readers:
            raise ValueError(f"reader must be 0-{self.readers - 1}, got {reader}")
        return reader

    # ------------------------------------------------------------------ faults

    def send_state(self) -> None:
        """Have the firmware send a STATE now (as its 500 ms timer would)."""
        with self._lock:
            if self._hub is not None:
                self._hub.state()

    def inject(self, verb: str, *fields: object) -> None:
        """Send a frame the firmware would not (a repeated edge, a stray GONE ...)
        with its framing and next sequence number: a misbehaving hub."""
        with self._lock:
            if self._hub is not None:
                self._hub.send(" ".join([verb] + [str(f) for f in fields]))

    def reboot(self) -> None:
        """Restart: a fresh firmware ``Hub`` with a new boot_id, seq from 0, HELLO;
        the tags lying there stay."""
        with self._lock:
            self.boot_id = make_boot_id()
            if self._transport is not None:
                self._boot()

    def fail_reader(self, reader: int) -> None:
        """Reader ``reader`` stops answering: the firmware's next poll reports FAULT NOREPLY."""
        with self._lock:
            self._readers[self._reader(reader)].failed = True

    def heal_reader(self, reader: int) -> None:
        """Reader ``reader`` answers again: the firmware's next retry (within 1 s) says FAULT OK."""
        with self._lock:
            self._readers[self._reader(reader)].failed = False

    # ------------------------------------------------------------------ scripts

    def play(self, events: Iterable, zones: Sequence[str], deck: dict[str, str] | None = None,
             speed: float = 1.0, after: threading.Event | None = None) -> threading.Thread:
        """Play table events (from :func:`controller.core.events.read_events`) in a thread:
        each ``placed``/``removed`` moves its tag on the reader of its zone at
        its ``t`` (divided by ``speed``) -- on the hub's clock when it is moved by
        hand (``realtime=False``: the script runs as fast as the firmware does).
        ``card`` events use ``deck`` (card -> uid), else a made-up uid per card.
        ``after``: the thread waits for it first (``host_hello``: a host
        connecting late misses no move)."""
        by_zone = {zone: i for i, zone in enumerate(zones)}
        uid_of = dict(deck or {})
        for i, card in enumerate(DECK):
            uid_of.setdefault(str(card), "C0DE%04X" % i)
        plan = []
        for event in events:
            if event.event not in ("placed", "removed") or event.zone not in by_zone:
                continue
            uid = _tag_uid(event.uid if event.uid is not None else uid_of[str(event.card)])
            plan.append((event.t / speed, event.event, by_zone[event.zone], uid))

        def run() -> None:
            if after is not None:
                while not after.wait(0.1):
                    if not self._running.is_set():
                        return
            start = self._now()
            hub_time = 0.0                          # for a hand-moved clock: script time played so far
            for t, kind, reader, uid in plan:
                if self.clock.realtime:
                    delay = start + t - self._now()
                    if delay > 0:
                        self._sleep(delay)
                elif t > hub_time:
                    self.advance(round((t - hub_time) * 1000))
                    hub_time = t
                if not self._running.is_set():
                    return
                if kind == "placed":
                    self.place(reader, uid)
                else:
                    self.remove(reader, uid)
            log.info("hub emulator: script done (%d moves)", len(plan))

        thread = threading.Thread(target=run, name="hub-emu script", daemon=True)
        thread.start()
        return thread


def _tag_uid(uid: str) -> str:
    """A tag's UID as the readers give it: 4, 7 or 10 bytes of hex (PROTOCOL.md)."""
    text = str(uid).upper()
    if len(text) not in (8, 14, 20) or any(c not in "0123456789ABCDEF" for c in text):
        raise ValueError(f"a tag's uid is 8, 14 or 20 hex digits (4, 7 or 10 bytes), got {uid!r}")
    return text
