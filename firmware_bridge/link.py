"""Host end of the table hub link (PROTOCOL.md), over anything pyserial opens.

:class:`HubLink` opens ``url`` with :func:`serial.serial_for_url` (a device,
``/dev/serial/by-id/…``, a pty, ``socket://``, ``loop://``), runs one reader
thread that does the handshake, keeps a picture of every reader true across
lost frames, reboots, silences and unplugs, and emits the same
:class:`~controller.core.events.TableEvent` objects as the ``hw/`` readers.  Host
commands (LED/TEXT/BEEP/CFG) are non-blocking and tracked to ACK/NAK.

Missed changes (PROTOCOL.md "Keeping the host's view true") are worked out by the
pure :class:`~firmware_bridge.reconcile.Reconciler`; this module is the I/O around
it.  When the order of missed changes cannot be known the link says so:
``on_order_guessed(zones)`` is called, on the reader thread, just before the
events of those zones reach ``on_event``.  A card laid and lifted while both its
frames were lost is logged (WARNING), counted (``seen_in_gap``) and given to
``on_seen_in_gap(zone)``.  A STATE with fewer tokens than readers changes nothing:
it is counted (``short_states``) and another is asked for.

Time: ``clock()`` stamps the table events; ``monotonic()`` (default
``time.monotonic``) runs the timeouts (HB, replies, a restarted hub's settling),
so a test can move it by hand (:class:`controller.core.clock.VirtualClock`).

The commands' side (LED/TEXT/BEEP/CFG to ACK/NAK) is :mod:`firmware_bridge.link_commands`.
"""

from __future__ import annotations

import errno
import logging
import threading
import time
from collections import Counter
from dataclasses import dataclass
from typing import Callable, Sequence

import serial

from controller.core.errors import LinkError, ProtocolError
from controller.core.events import TableEvent

from .codec import PROTO_VERSION, SEQ_MODULO, Frame, FrameParser
# What the host sends, the half of the link beside this one; its names stay importable from here.
from .link_commands import Command, HostCommands
from .reconcile import RECONCILE_COUNTERS, OrderGuessed, Reconciler, SeenInGap, ShortState

log = logging.getLogger(__name__)

BAUDRATE = 115200
READ_TIMEOUT = 0.05       # s; the reader thread's tick
WRITE_TIMEOUT = 0.5       # s; a hub that stops reading must not block the host forever
EMPTY_READ = "returned no data"   # pyserial: the port was ready to read but gave nothing
EMPTY_READ_RETRIES = 5    # in a row, EMPTY_READ_WAIT apart, before the device counts as gone
EMPTY_READ_WAIT = 0.01    # s
HB_TIMEOUT = 3.0          # s without an HB: the link is dead (PROTOCOL.md)
BOOT_SETTLE_MS = 500      # a restarted hub's STATE counts once its uptime is past this (first scans done)
LINK_COUNTERS = ("events", "gaps", "snaps", *RECONCILE_COUNTERS, "reboots", "reconnects",
                 "hb_timeouts", "open_failures", "commands_sent", "command_retries", "commands_acked",
                 "commands_nacked", "commands_failed")


@dataclass(frozen=True, slots=True)
class HubInfo:
    """What the hub announced in its HELLO."""

    proto: int
    fw_version: str
    boot_id: str
    readers: int


def describe_open_error(url: str, exc: BaseException) -> str:
    """A one-line message a user can act on for a port that would not open."""
    code = getattr(exc, "errno", None)
    if code is None and isinstance(exc.__context__, OSError):
        code = exc.__context__.errno
    text = str(exc)
    if code == errno.EACCES or "Permission denied" in text:
        return (f"cannot open the table hub port {url}: permission denied -- add this user to the "
                f"'dialout' group (sudo usermod -aG dialout $USER) and log in again")
    if code in (errno.ENOENT, errno.ENODEV, errno.ENXIO) or "No such file" in text:
        return (f"cannot open the table hub port {url}: no such device -- check the hub's USB cable "
                f"and the port name (ls /dev/serial/by-id/, udev rule)")
    if code in (errno.EAGAIN, errno.EWOULDBLOCK) or "exclusively lock" in text:
        return (f"cannot open the table hub port {url}: another host holds it -- is a second preftable "
                f"running? (preftable doctor says who holds the table)")
    if code == errno.EBUSY or "busy" in text.lower():
        return f"cannot open the table hub port {url}: it is busy -- another program holds it (close it)"
    if url.startswith("socket://"):
        return f"cannot connect to the table hub at {url}: {text} -- is the hub emulator running on that port?"
    return f"cannot open the table hub port {url}: {text}"


def open_port(url: str, baudrate: int = BAUDRATE, timeout: float = READ_TIMEOUT) -> serial.SerialBase:
    """Open ``url`` with :func:`serial.serial_for_url`, for this host alone (pyserial's
    ``exclusive``: a lock another host link cannot take while this one holds the port -- two
    hosts on one line would each read half its frames); raise :class:`LinkError` with advice."""
    try:
        return serial.serial_for_url(url, baudrate=baudrate, timeout=timeout, write_timeout=WRITE_TIMEOUT,
                                     exclusive=True)
    except (serial.SerialException, OSError, ValueError) as exc:
        raise LinkError(describe_open_error(url, exc)) from exc


class HubLink(HostCommands):
    """The host end of one table hub link.

    ``zones[i]`` is the table zone of reader ``i`` (``None``: ignored).
    ``on_event`` receives every table event from the reader thread, stamped
    with ``clock()`` (never decreasing); timeouts use ``monotonic()``.
    ``on_status`` receives one-line human messages (connected, lost, errors).
    ``on_order_guessed`` receives the zones of missed changes applied in a
    guessed order, just before their events (see the module's docstring);
    ``on_seen_in_gap`` the zone where a card lay unheard.
    ``picture`` (a uid or ``None`` per reader) is what the host believes lies
    there before the first STATE, e.g. a resumed game's cards: that STATE then
    reports only what changed meanwhile.
    """

    def __init__(self, url: str, zones: Sequence[str | None], on_event: Callable[[TableEvent], None],
                 clock: Callable[[], float] = time.monotonic, hb_timeout: float = HB_TIMEOUT,
                 reply_timeout: float = 0.5, retries: int = 3,
                 reopen_backoff: tuple[float, float] = (0.1, 2.0),
                 on_status: Callable[[str], None] | None = None, *, baudrate: int = BAUDRATE,
                 on_order_guessed: Callable[[tuple[str, ...]], None] | None = None,
                 picture: Sequence[str | None] = (),
                 on_seen_in_gap: Callable[[str], None] | None = None,
                 monotonic: Callable[[], float] = time.monotonic):
        self.url = url
        self.zones = tuple(zones)
        self._on_event = on_event
        self._clock = clock
        self.hb_timeout = hb_timeout
        self.reply_timeout = reply_timeout
        self.retries = retries
        self.backoff_min, self.backoff_max = reopen_backoff
        self._on_status = on_status
        self._on_order_guessed = on_order_guessed
        self._on_seen_in_gap = on_seen_in_gap
        self._now = monotonic
        self.baudrate = baudrate

        self._lock = threading.RLock()
        self._stop = threading.Event()
        self._ready = threading.Event()
        self._thread: threading.Thread | None = None
        self._port: serial.SerialBase | None = None
        self._parser = FrameParser("hub")
        self._counters: Counter[str] = Counter()

        # what the host believes lies on each reader (``picture``: a resumed game's), until a STATE says
        self._reconcile = Reconciler(self.zones, clock, picture)
        self._hub_info: HubInfo | None = None
        self._boot_id: str | None = None
        self.error: ProtocolError | None = None       # protocol version mismatch, None once ready
        self.open_error: LinkError | None = None      # why the port would not open, None once open
        self.last_hb: tuple[int, float, int] | None = None
        self._phase = "closed"            # closed, hello, snap, ready, incompatible
        self._dead: str | None = None     # why the current session must end
        self._hub_seq: int | None = None
        self._boot_settle: float | None = None    # when a restart was seen, until its scans are done

        self._seq = 0
        self._hello_at: float | None = None
        self._hello_tries = 0
        self._hello_wait = reply_timeout
        self._snap_at: float | None = None
        self._snap_tries = 0
        self._last_hb_at = 0.0
        self._queue: list[Command] = []
        self._pending: dict[int, Command] = {}
        self._shown: dict[tuple[str, str], tuple[str, ...]] = {}
        self._last_open_error: str | None = None

    # ------------------------------------------------------------------ public API

    def start(self) -> "HubLink":
        """Start the reader thread (it opens the port and keeps it open)."""
        if self._thread is not None:
            raise RuntimeError("HubLink already started")
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, name=f"HubLink {self.url}", daemon=True)
        self._thread.start()
        return self

    def stop(self, timeout: float = 2.0) -> None:
        """Stop the reader thread and close the port."""
        self._stop.set()
        with self._lock:
            port = self._port
        if port is not None and hasattr(port, "cancel_read"):
            try:
                port.cancel_read()
            except (OSError, serial.SerialException, AttributeError):
                log.debug("cancel_read failed on %s", self.url)
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():   # not from on_event
            thread.join(timeout)
        self._thread = None

    def __enter__(self) -> "HubLink":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def wait_ready(self, timeout: float | None = None) -> bool:
        """True once the handshake is done and a STATE has set the picture."""
        return self._ready.wait(timeout)

    @property
    def ready(self) -> bool:
        return self._ready.is_set()

    @property
    def state(self) -> str:
        """``closed``, ``hello`` (waiting for the hub's HELLO), ``snap`` (for its
        STATE), ``ready`` or ``incompatible`` (wrong protocol version)."""
        return self._phase

    @property
    def hub_info(self) -> HubInfo | None:
        return self._hub_info

    @property
    def last_hb_at(self) -> float:
        """``monotonic()`` when the last HB arrived (or the session began)."""
        return self._last_hb_at

    @property
    def counters(self) -> dict[str, int]:
        """Link counters (gaps, snaps, reconnects, reboots, …) and the parser's drops."""
        with self._lock:
            out = dict(self._parser.stats.as_dict())
            counted = self._counters + self._reconcile.counters
            out.update((name, counted[name]) for name in LINK_COUNTERS)
            return out

    def picture(self) -> list[str | None]:
        """The UID on each reader (reader 0 first), ``None`` where empty."""
        with self._lock:
            return list(self._reconcile.picture)


    def _run(self) -> None:
        backoff = self.backoff_min
        while not self._stop.is_set():
            try:
                port = open_port(self.url, self.baudrate)
            except LinkError as exc:
                self.open_error = exc
                self._counters["open_failures"] += 1
                message = str(exc)
                if message != self._last_open_error:
                    self._status(message, logging.WARNING)
                    self._last_open_error = message
                else:
                    log.debug("%s (retrying in %.1f s)", message, backoff)
                self._stop.wait(backoff)
                backoff = min(backoff * 2, self.backoff_max)
                continue
            self._last_open_error = None
            self.open_error = None
            try:
                reached_ready = self._session(port)
            except Exception:                       # never let the thread die
                log.exception("table hub link %s: unexpected error; reconnecting", self.url)
                reached_ready = False
            finally:
                with self._lock:
                    self._port = None
                    self._ready.clear()
                    if self._phase != "incompatible":
                        self._phase = "closed"
                    self._requeue_pending()
                try:
                    port.close()
                except (serial.SerialException, OSError) as exc:
                    log.debug("closing %s: %s", self.url, exc)
            if self._stop.is_set():
                break
            self._counters["reconnects"] += 1
            if reached_ready:
                backoff = self.backoff_min
            else:
                self._stop.wait(backoff)
                backoff = min(backoff * 2, self.backoff_max)
        with self._lock:
            self._phase = "closed"

    def _session(self, port: serial.SerialBase) -> bool:
        """Run one connection until it dies or stop(); True if it got ready."""
        reached_ready = False
        with self._lock:
            try:
                port.reset_input_buffer()
            except (serial.SerialException, OSError) as exc:
                log.debug("reset_input_buffer on %s: %s", self.url, exc)
            self._port = port
            self._parser.reset()
            self._dead = None
            self._hub_seq = None
            self._reconcile.connected()             # a reconnect: hold until a STATE
            self._phase = "hello"
            self._snap_at = None
            self._last_hb_at = self._now()
            self._hello_tries = 0
            self._hello_wait = self.reply_timeout
            self._send_hello()
        empty_reads = 0
        while not self._stop.is_set():
            try:
                data = port.read(port.in_waiting or 1)
                empty_reads = 0
            except (serial.SerialException, OSError) as exc:
                # A pty under load may report input before its bytes reach the reader
                # (pyserial: "returned no data"); an unplugged device says so every time.
                if EMPTY_READ in str(exc) and empty_reads < EMPTY_READ_RETRIES:
                    empty_reads += 1
                    self._stop.wait(EMPTY_READ_WAIT)
                    continue
                self._lost(f"table hub link {self.url} lost: {exc}")
                return reached_ready
            if data:
                frames = self._parser.feed(data)
                if frames:
                    with self._lock:
                        for frame in frames:
                            self._on_frame(frame)
                        events = self._reconcile.take()
                    self._emit(events)
            with self._lock:
                self._tick(self._now())
                reached_ready = reached_ready or self._phase == "ready"
                dead = self._dead
            if dead:
                self._lost(dead)
                return reached_ready
        return reached_ready

    def _lost(self, why: str) -> None:
        self._ready.clear()
        self._status(why, logging.WARNING)

    def _tick(self, now: float) -> None:
        if now - self._last_hb_at > self.hb_timeout:
            self._counters["hb_timeouts"] += 1
            self._dead = f"table hub link {self.url}: no HB for {self.hb_timeout:g} s, reconnecting"
            return
        if self._hello_at is not None and now - self._hello_at > self._hello_wait:
            if self._hello_tries > self.retries and self._hello_wait == self.reply_timeout:
                # reported once; it is alive while its HBs come, so keep asking, slower
                self._status(f"table hub at {self.url} does not answer HELLO ({self._hello_tries} tries); "
                             f"still trying", logging.WARNING)
                self._hello_wait = self.hb_timeout
            self._send_hello()
        if self._snap_at is not None and now - self._snap_at > self.reply_timeout:
            if self._snap_tries > self.retries:
                self._snap_at = None
                self._status(f"table hub at {self.url} does not answer SNAP ({self._snap_tries} tries)",
                             logging.WARNING)
            else:
                self._send_snap(retry=True)
        for cmd in list(dict.fromkeys(self._pending.values())):
            if now - cmd.sent_at <= self.reply_timeout:
                continue
            if cmd.attempts > self.retries:
                self._counters["commands_failed"] += 1
                self._status(f"table hub did not answer {cmd.verb} {' '.join(cmd.fields)} "
                             f"({cmd.attempts} tries)", logging.WARNING)
                self._settle(cmd, "failed")
            else:
                self._counters["command_retries"] += 1
                self._transmit(cmd)

    def _send_hello(self) -> None:
        self._hello_tries += 1
        self._hello_at = self._now()
        self._send("HELLO", PROTO_VERSION)

    def _send_snap(self, retry: bool = False) -> None:
        if not retry:
            self._snap_tries = 0
        self._snap_tries += 1
        self._snap_at = self._now()
        self._counters["snaps"] += 1
        self._send("SNAP")

    # ------------------------------------------------------------------ frames

    def _on_frame(self, frame: Frame) -> None:
        verb = frame.verb
        expected = None if self._hub_seq is None else (self._hub_seq + 1) % SEQ_MODULO
        self._hub_seq = frame.seq
        if verb == "HELLO":
            if (expected is not None and frame.seq != expected and self._phase == "ready"
                    and frame.fields[2] == self._boot_id):
                self._gap(expected, frame.seq)
            self._on_hello(frame)
            return
        if verb == "HB":
            self._on_hb(frame)
        if self._phase == "incompatible":
            return
        if expected is not None and frame.seq != expected:
            self._gap(expected, frame.seq)
        if verb in ("SEEN", "GONE"):
            self._reconcile.edge(frame)
        elif verb == "STATE":
            self._on_state(frame)
        elif verb == "ACK":
            cmd = self._pending.get(int(frame.fields[0]))
            if cmd is None:
                log.debug("ACK for unknown host seq %s", frame.fields[0])
            else:
                self._counters["commands_acked"] += 1
                self._settle(cmd, "acked")
        elif verb == "NAK":
            cmd = self._pending.get(int(frame.fields[0]))
            if cmd is None:
                log.debug("NAK for unknown host seq %s", frame.fields[0])
            else:
                self._counters["commands_nacked"] += 1
                self._status(f"table hub refused {cmd.verb} {' '.join(cmd.fields)}: {frame.fields[1]}",
                             logging.WARNING)
                self._settle(cmd, "nacked", frame.fields[1])
        elif verb == "FAULT":
            reader, code = int(frame.fields[0]), frame.fields[1]
            where = f"reader {reader}" + (f" ({self._zone(reader)})" if self._zone(reader) else "")
            if code == "OK":
                self._status(f"table hub: {where} answers again")
            else:
                self._status(f"table hub: {where} fault {code} -- check its cable", logging.WARNING)

    def _gap(self, expected: int, got: int) -> None:
        self._counters["gaps"] += 1
        log.info("table hub frames lost: expected seq %d, got %d; asking for its STATE", expected, got)
        self._reconcile.gap()
        if self._snap_at is None:
            self._send_snap()

    def _on_hb(self, frame: Frame) -> None:
        self._last_hb_at = self._now()
        uptime, scans, dropped = int(frame.fields[0]), float(frame.fields[1]), int(frame.fields[2])
        if self.last_hb is not None and uptime < self.last_hb[0] and self._phase == "ready":
            log.info("table hub uptime went back (%d -> %d ms): asking who it is", self.last_hb[0], uptime)
            self._send("HELLO", PROTO_VERSION)
        self.last_hb = (uptime, scans, dropped)
        self._reconcile.uptime = uptime
        if self._boot_settle is not None and (uptime >= BOOT_SETTLE_MS
                                              or self._now() - self._boot_settle >= 1.0):
            self._boot_settle = None
            if self._phase in ("snap", "ready"):
                self._send_snap()

    def _on_hello(self, frame: Frame) -> None:
        proto, fw_version, boot_id, readers = frame.fields
        if int(proto) != PROTO_VERSION:
            self.error = ProtocolError(f"hub speaks protocol {int(proto)}, this host speaks {PROTO_VERSION}")
            self._hello_at = None
            self._snap_at = None
            self._reconcile.drop_held()
            self._ready.clear()
            if self._phase != "incompatible":
                self._phase = "incompatible"
                self._status(f"table hub at {self.url}: {self.error} -- update the hub firmware "
                             f"or preftable; no table events until then", logging.ERROR)
            return
        info = HubInfo(int(proto), fw_version, boot_id, int(readers))
        rebooted = self._boot_id is not None and boot_id != self._boot_id
        self._hub_info, self._boot_id = info, boot_id
        self.last_hb = None
        self._reconcile.announced(info.readers, rebooted)   # a reboot: its edge times start anew
        if rebooted:
            self._counters["reboots"] += 1
            self._boot_settle = self._now()
            self._status(f"table hub restarted (boot {boot_id}); asking for its STATE", logging.WARNING)
            self._restore_display()
        if self._phase in ("hello", "incompatible"):
            self._hello_at = None
            self._phase = "snap"
            # a link state change: WARNING, so that it shows under systemd without -v
            self._status(f"table hub {fw_version} (boot {boot_id}, {info.readers} readers) "
                         f"connected at {self.url}", logging.WARNING)
            self._reconcile.holding = True
            self._send_snap()
        elif rebooted:
            self._send_snap()

    def _restore_display(self) -> None:
        """A restarted hub forgot its LEDs, text rows and settings: send them again."""
        busy = {c.key for c in self._queue} | {c.key for c in self._pending.values()}
        for key, fields in self._shown.items():
            if key not in busy:
                self._queue.append(Command(key[0], fields))
        if self._phase == "ready":
            self._flush_queue()

    def _on_state(self, frame: Frame) -> None:
        if self._phase not in ("snap", "ready"):
            return                                  # before the HELLO answer: a later STATE will do
        if self._boot_settle is not None:
            # A hub fresh from a restart may answer before it has scanned its readers:
            # its "-" would remove every card lying there.  Wait for its first HB.
            self._snap_at = None
            self._reconcile.holding = True
            return
        try:
            self._reconcile.state(frame)
        except ShortState as exc:
            # which reader each token is cannot be known: nothing changes, and the SNAP
            # (re)sent once the reply time is up asks for a whole one
            log.warning("table hub: %s; dropped, asking for another", exc)
            if self._snap_at is None:
                self._send_snap()
            return
        self._snap_at = None
        if self._phase == "snap":
            self._phase = "ready"
            self.error = None
            self._ready.set()
            # said after the flag is set: a listener asking ``ready`` now hears True (the
            # views' and the page's "connected" come from this message; the HELLO's came
            # while the link still waited for this STATE)
            self._status(f"table hub at {self.url} ready: reading the table")
            self._flush_queue()

    def _zone(self, reader: int) -> str | None:
        return self.zones[reader] if reader < len(self.zones) else None

    def _emit(self, events: list) -> None:
        for event in events:
            if isinstance(event, SeenInGap):
                _notify(self._on_seen_in_gap, event.zone, "on_seen_in_gap")
            elif isinstance(event, OrderGuessed):
                _notify(self._on_order_guessed, event.zones, "on_order_guessed")
            else:
                self._counters["events"] += 1
                _notify(self._on_event, event, "on_event")

    def _status(self, message: str, level: int = logging.INFO) -> None:
        log.log(level, "%s", message)
        if self._on_status is not None:
            try:
                self._on_status(message)
            except Exception:
                log.exception("on_status failed for %r", message)


def _notify(callback: Callable | None, value: object, name: str) -> None:
    """Hand ``value`` to one of the game's callbacks (none: nothing to do)."""
    if callback is None:
        return
    try:
        callback(value)
    except Exception:                       # the game's bug must not kill the link
        log.exception("%s failed for %s", name, value)


__all__ = ["HubLink", "HubInfo", "Command", "open_port", "describe_open_error", "LINK_COUNTERS", "HB_TIMEOUT"]
