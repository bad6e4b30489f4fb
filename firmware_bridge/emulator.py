"""A virtual table hub that speaks PROTOCOL.md on a pty or a TCP port.

Like OctoPrint's virtual printer it sits behind the same interface as the real
device (the host opens a path or a ``socket://`` URL), moves virtual tags
(:meth:`HubEmulator.place`, :meth:`~HubEmulator.remove`, a JSON Lines script)
and injects faults on demand: dropped frames, corrupted CRCs, garbage, a
reboot, silence, an unplug and a return.  ``preftable hub-emulator`` is
:func:`cli_main`.
"""

from __future__ import annotations

import argparse
import logging
import os
import random
import secrets
import select
import signal
import socket
import sys
import tempfile
import threading
import time
import tomllib
import tty
from typing import Iterable, Sequence

from controller.core.cards import DECK, Card, parse_card, seat_names, zone_names
from controller.core.errors import CardError, EventError
from controller.core.events import TableEvent, normalise_uid, placed, read_events, removed

from .codec import PROTO_VERSION, SEQ_MODULO, BadFieldsError, Frame, FrameError, FrameParser, encode

log = logging.getLogger(__name__)

WRITE_WAIT = 0.05          # s a frame may wait for a full pty/socket before it is dropped
DISPLAY_ROWS = 4


def new_boot_id() -> str:
    """Eight random upper-case hex digits."""
    return secrets.token_hex(4).upper()


class _Pty:
    """Master end of a raw pty; the slave stays open so its path persists."""

    def __init__(self) -> None:
        self.master, self.slave = os.openpty()
        tty.setraw(self.slave)            # no echo, no CR/LF translation, before any host opens it
        os.set_blocking(self.master, False)
        self.path = os.ttyname(self.slave)

    def fileno(self) -> int:
        return self.master

    def write(self, data: bytes, wait: float) -> bool:
        view = memoryview(data)
        deadline = time.monotonic() + wait
        while view:
            if self.master < 0:
                return False
            try:
                view = view[os.write(self.master, view):]
            except BlockingIOError:
                left = deadline - time.monotonic()
                if left <= 0 or not select.select([], [self.master], [], left)[1]:
                    return False
            except OSError:
                return False
        return True

    def read(self, timeout: float) -> bytes:
        try:
            if self.master < 0 or not select.select([self.master], [], [], timeout)[0]:
                return b""
            return os.read(self.master, 4096)
        except (OSError, ValueError):          # closed under us by unplug()
            return b""

    def close(self) -> None:
        fds, self.master, self.slave = (self.master, self.slave), -1, -1
        for fd in fds:
            if fd >= 0:
                os.close(fd)


class _Tcp:
    """A listening socket; the latest client is the host."""

    def __init__(self, host: str, port: int) -> None:
        self.server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.server.bind((host, port))
        self.server.listen(1)
        self.address = self.server.getsockname()[:2]
        self.client: socket.socket | None = None

    def write(self, data: bytes, wait: float) -> bool:
        client = self.client
        if client is None:
            return False
        try:
            client.settimeout(wait)
            client.sendall(data)
            return True
        except OSError:
            return False

    def read(self, timeout: float) -> bytes:
        server, client = self.server, self.client      # unplug() may close them under us
        try:
            ready = select.select([server] + ([client] if client else []), [], [], timeout)[0]
            if server in ready:
                new, _ = server.accept()
                new.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                if client is not None:
                    client.close()
                self.client = new
                return b""
            if client is not None and client in ready:
                data = client.recv(4096)
                if not data:
                    client.close()
                    self.client = None
                return data
        except (OSError, ValueError):
            pass
        return b""

    def close(self) -> None:
        if self.client is not None:
            self.client.close()
            self.client = None
        self.server.close()


class HubEmulator:
    """A virtual hub with ``readers`` RC522 readers.

    It runs its own threads once a transport is opened: a poll loop (SEEN after
    2 consecutive polls, GONE after ``absent_ms``, STATE every 500 ms, HB every
    1000 ms) and a reader of host commands (HELLO, SNAP, LED, TEXT, BEEP, CFG).
    What the host set is kept in :attr:`leds`, :attr:`text_rows`, :attr:`beeps`
    and :attr:`cfg`; every host frame in :attr:`received`.
    """

    def __init__(self, readers: int = 4, fw_version: str = "emu-1", boot_id: str | None = None,
                 absent_ms: int = 300, poll_ms: int = 20, *, proto: int = PROTO_VERSION,
                 hb_ms: int = 1000, state_ms: int = 500, leds: int = 8):
        if readers < 1:
            raise ValueError(f"readers must be at least 1, got {readers}")
        self.readers = readers
        self.fw_version = fw_version
        self.boot_id = boot_id or new_boot_id()
        self.absent_ms = absent_ms
        self.poll_ms = poll_ms
        self.proto = proto
        self.hb_ms = hb_ms
        self.state_ms = state_ms
        self.n_leds = leds

        self.leds: dict[int, str] = {}
        self.text_rows: dict[int, str] = {}
        self.beeps: list[int] = []
        self.cfg: dict[str, int] = {}
        self.received: list[Frame] = []
        self.host_hello = threading.Event()        # the host has said HELLO (a script waits for it)
        self.link_path: str | None = None

        self._lock = threading.RLock()
        self._tags: list[str | None] = [None] * readers          # physically on the reader
        self._reported: list[str | None] = [None] * readers      # what the hub has said
        self._candidate: list[str | None] = [None] * readers
        self._polls = [0] * readers
        self._last_seen = [0.0] * readers
        self._seq = 0
        self._boot_at = self._scans_since = time.monotonic()
        self._scans = 0
        self._tx_dropped = 0
        self._drop: list[tuple[int, frozenset[str] | None]] = []
        self._corrupt: list[tuple[int, frozenset[str] | None]] = []
        self._ignore_commands = 0
        self._silent_until = 0.0
        self._failed: set[int] = set()
        self._transport: _Pty | _Tcp | None = None
        self._kind: str | None = None
        self._tcp_address: tuple[str, int] | None = None
        self._tmpdir: str | None = None
        self._parser = FrameParser("host", on_reject=self._on_reject)
        self._running = threading.Event()
        self._threads: list[threading.Thread] = []

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
            self._plug(_Pty())
            path = self._transport.path
        self._start_threads()
        return path

    @property
    def device_path(self) -> str | None:
        """The current pty's own path (``/dev/pts/N``), if serving on a pty."""
        transport = self._transport
        return transport.path if isinstance(transport, _Pty) else None

    def serve_tcp(self, host: str = "127.0.0.1", port: int = 0) -> tuple[str, int]:
        """Serve on a TCP port (0: any free one); the host opens ``socket://host:port``."""
        with self._lock:
            self._kind = "tcp"
            self._plug(_Tcp(host, port))
        self._start_threads()
        return self._tcp_address

    @property
    def url(self) -> str:
        """What a :class:`~firmware_bridge.link.HubLink` should open."""
        if self._kind == "tcp":
            return "socket://%s:%d" % self._tcp_address
        if self.link_path is None:
            raise RuntimeError("no transport open: call open_pty() or serve_tcp() first")
        return self.link_path

    def _plug(self, transport: _Pty | _Tcp) -> None:
        self._transport = transport
        if isinstance(transport, _Pty):
            tmp = self.link_path + ".new"
            if os.path.lexists(tmp):
                os.unlink(tmp)
            os.symlink(transport.path, tmp)
            os.replace(tmp, self.link_path)
            log.info("hub emulator on %s (%s)", transport.path, self.link_path)
        else:
            self._tcp_address = transport.address
            log.info("hub emulator on tcp %s:%d", *transport.address)
        self._boot(announce=True)

    def _start_threads(self) -> None:
        if self._running.is_set():
            return
        self._running.set()
        for target, name in ((self._poll_loop, "hub-emu poll"), (self._io_loop, "hub-emu io")):
            thread = threading.Thread(target=target, name=name, daemon=True)
            thread.start()
            self._threads.append(thread)

    def close(self) -> None:
        """Stop the threads and close the transport (removes the symlink)."""
        self._running.clear()
        for thread in self._threads:
            thread.join(2.0)
        self._threads.clear()
        with self._lock:
            self._drop_transport()
            if self._tmpdir:
                try:
                    os.rmdir(self._tmpdir)
                except OSError:
                    pass

    def __enter__(self) -> "HubEmulator":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ tags

    def place(self, reader: int, uid: str) -> None:
        """Put tag ``uid`` on ``reader`` (it replaces whatever lay there)."""
        with self._lock:
            self._tags[self._reader(reader)] = uid.upper()

    def remove(self, reader: int, uid: str | None = None) -> None:
        """Take the tag (``uid``, if given, must be the one there) off ``reader``."""
        with self._lock:
            r = self._reader(reader)
            if uid is None or self._tags[r] == uid.upper():
                self._tags[r] = None

    def tags(self) -> list[str | None]:
        """What physically lies on each reader."""
        with self._lock:
            return list(self._tags)

    def reported(self) -> list[str | None]:
        """What the hub has reported (its STATE)."""
        with self._lock:
            return list(self._reported)

    def flip(self, reader: int, uid: str | None) -> float:
        """Move a tag and send its SEEN/GONE at once, skipping debounce; return
        ``time.monotonic()`` just before the frame was written (for latency)."""
        with self._lock:
            r = self._reader(reader)
            old = self._reported[r]
            self._tags[r] = self._candidate[r] = self._reported[r] = uid
            self._polls[r] = 2 if uid else 0
            self._last_seen[r] = time.monotonic()
            t = time.monotonic()
            if old is not None and old != uid:
                self._send("GONE", r, old)
            if uid is not None and uid != old:
                self._send("SEEN", r, uid)
            return t

    def burst(self, count: int, reader: int = 0, uid: str = "04A2B11C6F5E80") -> None:
        """Send ``count`` alternating SEEN/GONE frames for ``uid`` as fast as the
        line takes them (waits for room instead of dropping); ends as it began."""
        with self._lock:
            r = self._reader(reader)
            start = self._reported[r]
            frames = []
            for i in range(count):
                on = (i % 2 == 0) == (start is None)
                frames.append(encode(self._next_seq(), "SEEN" if on else "GONE", r, uid if start is None else start))
            if count % 2:
                self._reported[r] = self._tags[r] = self._candidate[r] = None if start else uid
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

    def drop_next(self, n: int = 1, verbs: Iterable[str] | None = None) -> None:
        """Lose the next ``n`` frames (of ``verbs`` only, if given) on the line."""
        with self._lock:
            self._drop.append((n, None if verbs is None else frozenset(verbs)))

    def corrupt_next(self, n: int = 1, verbs: Iterable[str] | None = None) -> None:
        """Send the next ``n`` frames (of ``verbs`` only) with a wrong CRC."""
        with self._lock:
            self._corrupt.append((n, None if verbs is None else frozenset(verbs)))

    def send_garbage(self, data: bytes) -> None:
        """Write raw bytes on the line (noise, a partial frame, …)."""
        with self._lock:
            self._write(data)

    def clear_faults(self) -> None:
        """Forget pending drop/corrupt/ignore faults and end a silence."""
        with self._lock:
            self._drop.clear()
            self._corrupt.clear()
            self._ignore_commands = 0
            self._silent_until = 0.0

    def send_state(self) -> None:
        """Send a STATE now (as the 500 ms timer would)."""
        with self._lock:
            self._send_state()

    def ignore_commands(self, n: int = 1) -> None:
        """Give no answer to the next ``n`` LED/TEXT/BEEP/CFG commands."""
        with self._lock:
            self._ignore_commands += n

    def reboot(self) -> None:
        """Restart: new boot_id, seq from 0, HELLO; the tags lying there stay."""
        with self._lock:
            self.boot_id = new_boot_id()
            self._boot(announce=True)

    def fail_reader(self, reader: int) -> None:
        """Reader ``reader`` stops answering: FAULT NOREPLY, its report frozen."""
        with self._lock:
            r = self._reader(reader)
            if r not in self._failed:
                self._failed.add(r)
                self._send("FAULT", r, "NOREPLY")

    def heal_reader(self, reader: int) -> None:
        """Reader ``reader`` answers again: FAULT OK, polling resumes."""
        with self._lock:
            r = self._reader(reader)
            if r in self._failed:
                self._failed.discard(r)
                self._send("FAULT", r, "OK")

    def go_silent(self, seconds: float) -> None:
        """Hang for ``seconds``: no polls, no frames, host commands ignored."""
        with self._lock:
            self._silent_until = time.monotonic() + seconds

    @property
    def silent(self) -> bool:
        return time.monotonic() < self._silent_until

    def unplug(self) -> None:
        """Pull the cable: the pty (or TCP server) goes away, the hub loses power."""
        with self._lock:
            self._drop_transport()
            log.info("hub emulator unplugged")

    def _drop_transport(self) -> None:
        """The transport and its stable symlink go away (the lock is held)."""
        if self._transport is not None:
            self._transport.close()
            self._transport = None
        if self.link_path and os.path.lexists(self.link_path):
            os.unlink(self.link_path)

    def replug(self) -> None:
        """Plug back in: a new pty behind :attr:`link_path` (or the same TCP
        port), and a fresh boot (new boot_id, HELLO)."""
        with self._lock:
            if self._transport is not None:
                return
            self.boot_id = new_boot_id()
            if self._kind == "pty":
                self._plug(_Pty())
            elif self._kind == "tcp":
                self._plug(_Tcp(*self._tcp_address))
            else:
                raise RuntimeError("replug() before open_pty() or serve_tcp()")

    # ------------------------------------------------------------------ sending

    def _boot(self, announce: bool) -> None:
        """Power-on: seq 0, uptime 0, a scan of the readers, then HELLO."""
        self._seq = 0
        self._boot_at = self._scans_since = time.monotonic()
        self._scans = 0
        self._tx_dropped = 0
        self.leds.clear()
        self.text_rows.clear()
        now = time.monotonic()
        for r, uid in enumerate(self._tags):      # the boot scan: what lies there is known at once
            self._reported[r] = self._candidate[r] = uid
            self._polls[r] = 2 if uid else 0
            self._last_seen[r] = now
        self._next_state = now + self.state_ms / 1000
        self._next_hb = now + self.hb_ms / 1000
        if announce:
            self._send_hello()

    def _send_hello(self) -> None:
        self._send("HELLO", self.proto, self.fw_version, self.boot_id, self.readers)

    def _send_state(self) -> None:
        self._send("STATE", *(uid or "-" for uid in self._reported))

    def _next_seq(self) -> int:
        seq = self._seq
        self._seq = (seq + 1) % SEQ_MODULO
        return seq

    @staticmethod
    def _take(rules: list[tuple[int, frozenset[str] | None]], verb: str) -> bool:
        for i, (n, verbs) in enumerate(rules):
            if verbs is None or verb in verbs:
                if n <= 1:
                    del rules[i]
                else:
                    rules[i] = (n - 1, verbs)
                return True
        return False

    def _send(self, verb: str, *fields: object) -> None:
        """Number and send one frame, applying the injected faults."""
        if self.silent:
            return
        frame = encode(self._next_seq(), verb, *fields)
        if self._take(self._drop, verb):
            log.debug("emulator drops %r", frame)
            return
        if self._take(self._corrupt, verb):
            crc = int(frame[-5:-1], 16) ^ 0x0101
            frame = frame[:-5] + b"%04X\n" % crc
        if not self._write(frame):
            self._tx_dropped += 1

    def _write(self, data: bytes, wait: float = WRITE_WAIT) -> bool:
        transport = self._transport
        return transport is not None and transport.write(data, wait)

    # ------------------------------------------------------------------ threads

    def _poll_loop(self) -> None:
        next_poll = time.monotonic()
        while self._running.is_set():
            next_poll += self.poll_ms / 1000
            delay = next_poll - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            else:
                next_poll = time.monotonic()
            with self._lock:
                if self._transport is None or self.silent:
                    continue
                now = time.monotonic()
                self._poll(now)
                if now >= self._next_state:
                    self._next_state = max(self._next_state + self.state_ms / 1000, now)
                    self._send_state()
                if now >= self._next_hb:
                    self._next_hb = max(self._next_hb + self.hb_ms / 1000, now)
                    uptime = int((now - self._boot_at) * 1000)
                    scans = round(self._scans / max(now - self._scans_since, 1e-3))
                    self._scans, self._scans_since = 0, now
                    self._send("HB", uptime, scans, self._tx_dropped)

    def _poll(self, now: float) -> None:
        self._scans += self.readers - len(self._failed)
        for r in range(self.readers):
            if r in self._failed:
                continue
            uid = self._tags[r]
            if uid is not None:
                self._polls[r] = self._polls[r] + 1 if uid == self._candidate[r] else 1
                self._candidate[r] = uid
                self._last_seen[r] = now
                if self._polls[r] >= 2 and self._reported[r] != uid:
                    if self._reported[r] is not None:
                        self._send("GONE", r, self._reported[r])
                    self._reported[r] = uid
                    self._send("SEEN", r, uid)
            else:
                self._candidate[r], self._polls[r] = None, 0
                old = self._reported[r]
                if old is not None and (now - self._last_seen[r]) * 1000 >= self.absent_ms:
                    self._reported[r] = None
                    self._send("GONE", r, old)

    def _io_loop(self) -> None:
        while self._running.is_set():
            transport = self._transport
            if transport is None:
                time.sleep(0.01)
                continue
            data = transport.read(0.05)
            if not data:
                continue
            with self._lock:
                if transport is not self._transport or self.silent:
                    continue                           # a hung hub reads nothing
                for frame in self._parser.feed(data):
                    self.received.append(frame)
                    self._answer(frame)

    def _on_reject(self, exc: FrameError) -> None:
        frame = exc.frame
        self.received.append(frame)
        if frame.verb in ("HELLO", "SNAP"):
            return
        self._send("NAK", frame.seq, "BADARG" if isinstance(exc, BadFieldsError) else "UNKNOWN")

    def _answer(self, frame: Frame) -> None:
        verb, fields = frame.verb, frame.fields
        if verb == "HELLO":
            self.host_hello.set()
            self._send_hello()
            return
        if verb == "SNAP":
            self._send_state()
            return
        if self._ignore_commands:
            self._ignore_commands -= 1
            return
        ok = True
        if verb == "LED":
            ok = int(fields[0]) < self.n_leds
            if ok:
                self.leds[int(fields[0])] = fields[1]
        elif verb == "TEXT":
            ok = int(fields[0]) < DISPLAY_ROWS and len(fields[1]) <= 20
            if ok:
                self.text_rows[int(fields[0])] = fields[1]
        elif verb == "BEEP":
            ok = 0 < int(fields[0]) <= 10_000
            if ok:
                self.beeps.append(int(fields[0]))
        elif verb == "CFG":
            key, value = fields
            ok = key in ("absent_ms", "poll_ms") and value.isdigit() and 1 <= int(value) <= 60_000
            if ok:
                self.cfg[key] = int(value)
                setattr(self, key, int(value))
        if ok:
            self._send("ACK", frame.seq)
        else:
            self._send("NAK", frame.seq, "BADARG")

    # ------------------------------------------------------------------ scripts

    def play(self, events: Iterable, zones: Sequence[str], deck: dict[str, str] | None = None,
             speed: float = 1.0) -> threading.Thread:
        """Play table events (from :func:`controller.core.events.read_events`) in a thread:
        each ``placed``/``removed`` moves its tag on the reader of its zone at
        its ``t`` (divided by ``speed``).  ``card`` events use ``deck`` (card ->
        uid), else a made-up uid per card."""
        by_zone = {zone: i for i, zone in enumerate(zones)}
        uid_of = dict(deck or {})
        for i, card in enumerate(DECK):
            uid_of.setdefault(str(card), "C0DE%04X" % i)
        plan = []
        for event in events:
            if event.event not in ("placed", "removed") or event.zone not in by_zone:
                continue
            uid = event.uid if event.uid is not None else uid_of[str(event.card)]
            plan.append((event.t / speed, event.event, by_zone[event.zone], uid))

        def run() -> None:
            start = time.monotonic()
            for t, kind, reader, uid in plan:
                delay = start + t - time.monotonic()
                if delay > 0:
                    time.sleep(delay)
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


def simulate_deals(players: int = 3, deals: int = 1, seed: int | None = None,
                   pace: float = 0.4, first_dealer: int = 1) -> list[TableEvent]:
    """Table events of simulated players playing raspasovka deals (prikup
    ``dealer_leads``): the dealer turns up the two prikup cards for tricks 1
    and 2, first hand leads trick 3, then the winner leads; everyone follows
    suit with their lowest card of it, else throws their highest card.  Each
    trick is cleared before the next; ``pace`` seconds between moves."""
    if players not in (3, 4):
        raise ValueError(f"players must be 3 or 4, got {players}")
    rng = random.Random(seed)
    seats = seat_names(players)
    out: list[TableEvent] = []
    t = 0.0
    dealer = first_dealer - 1
    for _ in range(deals):
        order = [seats[(dealer + k) % players] for k in range(1, players + 1)]   # first hand first
        active = order if players == 3 else order[:3]
        deck = list(DECK)
        rng.shuffle(deck)
        hands = {seat: sorted(deck[10 * i:10 * i + 10]) for i, seat in enumerate(active)}
        prikup = deck[30:32]
        leader: str | None = None
        for trick in range(10):
            plays: list[tuple[str, Card]] = []
            if trick < 2:
                plays.append(("prikup", prikup[trick]))
                turn = active
            else:
                if leader is None or leader == "prikup":
                    leader = active[0]
                start = active.index(leader)
                turn = active[start:] + active[:start]
            for seat in turn:
                hand = hands[seat]
                if plays:
                    suit = plays[0][1].suit
                    same = [c for c in hand if c.suit == suit]
                    card = min(same, key=lambda c: c.rank) if same else max(hand, key=lambda c: c.rank)
                else:
                    card = min(hand, key=lambda c: c.rank)
                hand.remove(card)
                plays.append((seat, card))
            led = plays[0][1].suit
            leader = max((p for p in plays if p[1].suit == led), key=lambda p: p[1].rank)[0]
            for zone, card in plays:
                t += pace
                out.append(placed(round(t, 3), zone, card=card))
            t += pace
            for zone, card in plays:
                t += pace / 4
                out.append(removed(round(t, 3), zone, card=card))
        dealer = (dealer + 1) % players
        t += 2 * pace
    return out


def load_deck_cards(path: str) -> dict[str, str]:
    """A deck file (FORMATS.md) as ``{card code: uid}``."""
    with open(path, "rb") as fh:
        cards = tomllib.load(fh).get("cards", {})
    out = {}
    for uid, code in cards.items():
        out[str(parse_card(code))] = uid.upper()
    return out


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def cli_main(argv: list[str]) -> int:
    """``preftable hub-emulator``: serve a virtual hub until Ctrl-C (or ``quit``).

    Prints the device path (``/dev/pts/N``) or ``socket://host:port`` on the
    first line of stdout; reads fault commands from stdin (:data:`COMMANDS_HELP`).
    """
    parser = argparse.ArgumentParser(prog="preftable hub-emulator",
                                     description="A virtual table hub on a pty or a TCP port.")
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--pty", action="store_true",
                       help="serve on a pty (the default); prints a stable path (a symlink to it)")
    where.add_argument("--tcp", type=int, metavar="PORT", help="serve on TCP PORT (socket://127.0.0.1:PORT)")
    parser.add_argument("--host", default="127.0.0.1", help="address for --tcp (default 127.0.0.1)")
    parser.add_argument("--readers", type=int, default=4, help="number of readers (default 4)")
    parser.add_argument("--script", metavar="EVENTS.jsonl", help="table events to play on the readers")
    parser.add_argument("--zones", default="seat1,seat2,seat3,prikup",
                        help="zone of each reader, reader 0 first (default seat1,seat2,seat3,prikup)")
    parser.add_argument("--deck", metavar="DECK", help="deck file mapping UIDs to cards (for 'card' events)")
    parser.add_argument("--speed", type=float, default=1.0, help="play the script this many times faster")
    parser.add_argument("--simulate", type=int, metavar="DEALS", default=0,
                        help="no script: simulated players play DEALS raspasovka deals")
    parser.add_argument("--players", type=int, choices=(3, 4), default=3,
                        help="players for --simulate (default 3; zones become seat1..seatN,prikup)")
    parser.add_argument("--seed", type=int, help="random seed for --simulate")
    if argv[:1] == ["--"]:                    # `preftable hub-emulator -- --pty …`
        argv = argv[1:]
    args = parser.parse_args(argv)
    if args.simulate and args.script:
        parser.error("--simulate and --script exclude each other")
    if args.simulate:
        args.zones = ",".join(zone_names(args.players))
    zones = [z.strip() for z in args.zones.split(",") if z.strip()]
    if args.readers < 1:
        parser.error("--readers must be at least 1")
    try:
        deck = load_deck_cards(args.deck) if args.deck else None
    except (OSError, tomllib.TOMLDecodeError, CardError, AttributeError) as exc:
        print(f"hub-emulator: cannot read deck {args.deck}: {exc}", file=sys.stderr)
        return 2
    events = []
    if args.script:
        try:
            with open(args.script, encoding="utf-8") as fh:
                events = list(read_events(fh, zones, on_error=lambda n, msg: print(
                    f"hub-emulator: {args.script}:{n}: {msg}", file=sys.stderr)))
        except (OSError, EventError) as exc:
            print(f"hub-emulator: cannot read script {args.script}: {exc}", file=sys.stderr)
            return 2
    if args.simulate:
        events = simulate_deals(args.players, args.simulate, args.seed)
    emulator = HubEmulator(readers=max(args.readers, len(zones)) if events else args.readers)
    try:
        if args.tcp is not None:
            host, port = emulator.serve_tcp(args.host, args.tcp)
            print(f"socket://{host}:{port}", flush=True)
        else:
            print(emulator.open_pty(), flush=True)
            print(f"# stable path, follows unplug/replug: {emulator.link_path}", file=sys.stderr, flush=True)
    except OSError as exc:
        print(f"hub-emulator: cannot serve: {exc}", file=sys.stderr)
        return 2
    if events:
        def play_once_greeted() -> None:
            # a host connecting late must not miss the first moves (and see them out of turn)
            emulator.host_hello.wait()
            print(f"# host said HELLO: playing {len(events)} table events", file=sys.stderr, flush=True)
            emulator.play(events, zones, deck, speed=args.speed)

        threading.Thread(target=play_once_greeted, name="hub-emu greeted", daemon=True).start()
        print(f"# {len(events)} table events for readers {', '.join(zones)}: playing once the host "
              "says HELLO", file=sys.stderr, flush=True)
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _interrupt)     # `kill`, systemd: clean up like Ctrl-C
    print(f"# {COMMANDS_HELP}", file=sys.stderr, flush=True)
    try:
        for line in sys.stdin:                          # faults on demand, one per line
            if line.strip() in ("quit", "exit"):
                break
            try:
                reply = run_command(emulator, line)
            except (ValueError, IndexError) as exc:
                reply = f"? {exc} -- {COMMANDS_HELP}"
            if reply:
                print(reply, flush=True)
        else:
            while True:                                 # stdin closed: serve until Ctrl-C
                time.sleep(3600)
    except KeyboardInterrupt:
        pass
    finally:
        emulator.close()
    return 0


COMMANDS_HELP = ("commands: place R UID | remove R | drop [N] | corrupt [N] | garbage [TEXT] | "
                 "reboot | silent SECONDS | fail R | heal R | unplug | replug | state | quit")


def run_command(emulator: HubEmulator, line: str) -> str | None:
    """One line of the emulator's stdin command language; returns what to print."""
    words = line.split()
    if not words:
        return None
    cmd, args = words[0].lower(), words[1:]
    if cmd == "place":
        emulator.place(int(args[0]), normalise_uid(args[1]))
    elif cmd == "remove":
        emulator.remove(int(args[0]))
    elif cmd == "drop":
        emulator.drop_next(int(args[0]) if args else 1)
    elif cmd == "corrupt":
        emulator.corrupt_next(int(args[0]) if args else 1)
    elif cmd == "garbage":
        emulator.send_garbage((" ".join(args) or "line noise").encode("ascii", "replace") + b"\r\n")
    elif cmd == "reboot":
        emulator.reboot()
        return f"# boot {emulator.boot_id}"
    elif cmd == "fail":
        emulator.fail_reader(int(args[0]))
    elif cmd == "heal":
        emulator.heal_reader(int(args[0]))
    elif cmd == "silent":
        emulator.go_silent(float(args[0]))
    elif cmd == "unplug":
        emulator.unplug()
    elif cmd == "replug":
        emulator.replug()
        return emulator.device_path or emulator.url
    elif cmd == "state":
        return "# " + " ".join(uid or "-" for uid in emulator.reported())
    else:
        raise ValueError(f"unknown command {cmd!r}")
    return None
