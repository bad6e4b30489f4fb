"""The MQTT publisher: a table publishes its game to a broker.

An output on the table service's bus, configured by ``[mqtt]``; off unless
that section exists, and paho-mqtt (the ``club`` extra) is imported only then::

    [mqtt]
    broker = "mqtt://club.local:1883"   # or mqtts://host:8883 (TLS)
    table_id = "table-7"                # letters, digits, "-", "_", "." (a safe folder name)
    username = "table-7"                # optional
    password_file = "/etc/preftable/mqtt.password"   # or password = "..."
    ca_file = "/etc/preftable/club-ca.pem"           # mqtts: the broker's CA (default: the system's)
    topic_prefix = "preftable"          # default

Topics, under ``<prefix>/<table_id>/`` (MQTT 5, JSON payloads):

- ``log``: every line of the session's ``events.jsonl`` (table events and the
  derived lines), QoS 1, one message per line:
  ``{"table", "session", "line", "text"}`` with ``line`` counted from 1 and
  ``text`` the line exactly as the log holds it (without its newline).
- ``state``: the table now, retained, QoS 0, at most every 0.25 s (the
  latest wins): ``{"table", "session", "lines", "acked", "snapshot"}``;
  ``lines`` is how many lines of the session's log had been read when it was
  sent, ``acked`` the acknowledged mark then.  ``snapshot`` is the board's
  part of the :class:`~controller.core.snapshot.TableSnapshot`
  (:func:`board_state`): seq, session, players, seats, names, phase, the deal
  in progress without its closed tricks, the number of deals played, the
  pulka, the settlement, the next deal, the first alerts and the link.  Its size
  is bounded: it never carries the session's history (that is the ``log``
  topic, and the board's mirror).
- ``status``: ``online`` / ``offline``, retained; ``offline`` is also the will.
- ``session``: the session's ``config.toml`` and ``deck.toml`` (or null),
  retained, once per session (and again on every reconnect):
  ``{"table", "session", "config", "deck"}``.
- ``probe``: a nonce the table sends itself after connecting (see below).
- ``fetch`` (read by the table, written by boards): ``{"session", "from", "to"}``
  asks for lines ``from`` to ``to`` of a session of this table's log dir; the
  table publishes them again on ``log``, exactly as the first time (a board
  drops what it has).  A board that came late, or whose broker lost its queue,
  gets what it missed this way.  At most :data:`FETCH_LINES` lines per request
  and one request per :data:`FETCH_EVERY_S` are answered; the board asks again
  for what it still lacks.

The game log is the outbox.  The service appends to ``events.jsonl`` before it
publishes on the bus; this output reads the file itself, on its own thread, so
it never misses a line even when the bus drops an item.  It keeps, next to the
session, ``mqtt-acked.json``: the last line ``N`` such that the broker has
acknowledged (PUBACK, success) every line up to ``N``.  The mark is rewritten
in place as one fixed-width record (:class:`MarkFile`) and only ever lags the truth, so after a broker outage, a network
cut or a restart of the service (SIGKILL included) publishing resumes at
``N + 1``: no line is lost, and a subscriber drops the few lines it sees twice
by (session, line).  Within one run paho keeps the unacknowledged messages and
sends them again after a reconnect; only a window of lines is handed to paho
at a time, the rest waits in the file.  The table loop never waits for the
network: the file is read on the bus thread, the socket is paho's thread.

A broker that *crashes* restarts from its last saved database and forgets
what it acknowledged after that, including lines no board had received yet.
So after every connect the table reads back what the broker holds of it: it
subscribes to its own ``state``, then sends a nonce on ``probe``; the broker
hands it the retained state (if any) before the nonce's echo.  That state's
``acked`` is at most what the broker had saved, and the table resends from
there when it is below its own mark (from line 1 when the broker holds no
state of this session).  A broker that does not let a table read its own
topics (ACL) only loses this safety net; the table says so in its log.
"""

from __future__ import annotations

import errno
import json
import logging
import os
import queue
import re
import socket
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping
from urllib.parse import urlsplit

from ..core.config import check_known_keys, check_str, check_table
from ..core.errors import ConfigError, LogError
from ..store.files import clear_temporary, open_fd, open_read, read_bounded
from ..store.gamelog import CONFIG, DECK, EVENTS, SessionLog
from .findings import FAIL, OK, WARN

log = logging.getLogger(__name__)

SECTION = "mqtt"
KEYS = ("broker", "table_id", "username", "password", "password_file", "ca_file", "topic_prefix")
DEFAULT_PREFIX = "preftable"
DEFAULT_PORTS = {"mqtt": 1883, "mqtts": 8883}
MARK_FILE = "mqtt-acked.json"
WINDOW = 500                 # log lines handed to paho and not yet acknowledged, at most
READ_CHUNK = 1 << 18         # bytes of events.jsonl read at a time
MARK_EVERY_S = 0.25          # the acked mark is written at most this often (and at close)
RETRY_REFUSED_S = 10.0       # lines the broker refused are offered again after this long
PROBE_TIMEOUT_S = 10.0       # the read-back of the table's own state after a connect
CLOSE_FLUSH_S = 1.0          # at shutdown, wait this long at most for outstanding acks
KEEPALIVE_S = 15
RECONNECT_S = (0.5, 5)       # paho's reconnect back-off, first and longest
STATE_EVERY_S = 0.25         # the state is published at most this often (the latest one)
FORBIDDEN_IN_ID = "/#+"
SAFE_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
# a session folder's name as SessionLog.create makes it: a UTC time, maybe "-2", "-3"...
SESSION_NAME = re.compile(r"\d{4}-\d\d-\d\dT\d\d-\d\d-\d\dZ(-\d{1,4})?")
FETCH_LINES = 1000           # lines sent again for one fetch request, at most
FETCH_EVERY_S = 0.2          # fetch requests answered at most this often (the rest: asked again)
MARK_BYTES = 4096            # mqtt-acked.json is one short record
SESSION_FILE_BYTES = 1 << 20  # config.toml and deck.toml as published, at most


# --- configuration ----------------------------------------------------------------------

@dataclass(frozen=True)
class BrokerAddress:
    host: str
    port: int
    tls: bool

    @property
    def url(self) -> str:
        return f"{'mqtts' if self.tls else 'mqtt'}://{self.host}:{self.port}"


def parse_broker_url(url: object, key: str = "mqtt.broker") -> BrokerAddress:
    """``mqtt://host[:port]`` or ``mqtts://host[:port]`` (TLS)."""
    text = check_str(url, key)
    parts = urlsplit(text)
    if parts.scheme not in DEFAULT_PORTS:
        raise ConfigError(f"{key}: must be mqtt://host:port or mqtts://host:port, got {text!r}", key)
    try:
        port = parts.port or DEFAULT_PORTS[parts.scheme]
    except ValueError:
        raise ConfigError(f"{key}: bad port in {text!r}", key) from None
    if not parts.hostname:
        raise ConfigError(f"{key}: no host in {text!r}", key)
    if parts.username or parts.password or parts.path not in ("", "/") or parts.query or parts.fragment:
        raise ConfigError(f"{key}: only scheme, host and port belong in the URL "
                          f"(user and password have their own keys), got {text!r}", key)
    return BrokerAddress(parts.hostname, port, parts.scheme == "mqtts")


def check_topic_level(value: object, key: str) -> str:
    """A table id: one topic level, a folder name of the board's mirror and a broker user
    name at once, so a safe name: 1 to 64 of ASCII letters, digits, ``-``, ``_`` and ``.``,
    beginning with a letter or a digit (never ``..``, never a hidden folder, no ``/``,
    ``#``, ``+``, spaces or control characters)."""
    text = check_str(value, key)
    if not text or len(text) > 64:
        raise ConfigError(f"{key}: must be 1 to 64 characters, got {text!r}", key)
    bad = [ch for ch in text if ch in FORBIDDEN_IN_ID or ord(ch) < 32 or ord(ch) == 127]
    if bad:
        raise ConfigError(f"{key}: must not contain {bad[0]!r} (a topic level: no '/', '#' or '+'), "
                          f"got {text!r}", key)
    if not SAFE_ID.fullmatch(text):
        raise ConfigError(f"{key}: must be letters, digits, '-', '_' and '.', beginning with a letter "
                          f"or a digit (it names a folder of the club's mirror), got {text!r}", key)
    return text


def check_topic_prefix(value: object, key: str) -> str:
    """Topic levels joined by ``/``: none empty, no wildcards."""
    text = check_str(value, key)
    levels = text.split("/")
    for level in levels:
        if not level or "#" in level or "+" in level or any(ord(ch) < 32 for ch in level):
            raise ConfigError(f"{key}: must be topic levels joined by '/', none empty and no '#' or '+', "
                              f"got {text!r}", key)
    return text


def topic(prefix: str, table_id: str, kind: str) -> str:
    return f"{prefix}/{table_id}/{kind}"


# the deal in progress as the board shows it: its closed tricks (up to ten, with every card) are
# the log's business; the trick number, the cards of the trick being played and the counts stay
DEAL_DROPPED = ("tricks",)
ALERTS_SENT = 4              # mistakes awaiting confirm sent in full (the rest only counted)


def board_state(snapshot) -> dict:
    """What the ``state`` topic carries of a snapshot: the table now, in a size that does not grow
    with the session (the snapshot's field names, :mod:`controller.core.snapshot`; no ``deals`` history, no display, LEDs or cards lying
    around).  Built from the snapshot's fields, so the lazy deal history is never decoded."""
    deal = snapshot.deal
    return {
        "seq": snapshot.seq, "session": snapshot.session, "players": snapshot.players,
        "seats": list(snapshot.seats), "names": dict(snapshot.names), "phase": snapshot.phase,
        "deal": ({k: v for k, v in deal.items() if k not in DEAL_DROPPED} if deal is not None else None),
        "deals_played": len(snapshot.deals),
        "pulka": snapshot.pulka, "settlement": snapshot.settlement,
        "next_deal": dict(snapshot.next_deal),
        "alerts": [dict(a) for a in snapshot.alerts[:ALERTS_SENT]], "alerts_waiting": len(snapshot.alerts),
        "link": dict(snapshot.link),
    }


@dataclass(frozen=True)
class MqttConfig:
    """The ``[mqtt]`` section, validated (paths as written: resolved by :func:`build`)."""

    broker: BrokerAddress
    table_id: str
    username: str | None = None
    password: str | None = None
    password_file: str | None = None
    ca_file: str | None = None
    topic_prefix: str = DEFAULT_PREFIX

    def topic(self, kind: str) -> str:
        return topic(self.topic_prefix, self.table_id, kind)

    @classmethod
    def parse(cls, section: Mapping[str, Any]) -> "MqttConfig":
        check_table(section, SECTION)
        check_known_keys(section, SECTION, KEYS)
        for needed in ("broker", "table_id"):
            if needed not in section:
                raise ConfigError(f"{SECTION}.{needed}: missing (a table publishing to MQTT needs "
                                  "broker and table_id)", f"{SECTION}.{needed}")
        kw: dict[str, Any] = {"broker": parse_broker_url(section["broker"], f"{SECTION}.broker"),
                              "table_id": check_topic_level(section["table_id"], f"{SECTION}.table_id")}
        for name in ("username", "password", "password_file", "ca_file"):
            if name in section:
                kw[name] = check_str(section[name], f"{SECTION}.{name}")
                if not kw[name]:
                    raise ConfigError(f"{SECTION}.{name}: must not be empty", f"{SECTION}.{name}")
        if "password" in kw and "password_file" in kw:
            raise ConfigError(f"{SECTION}.password_file: give password or password_file, not both",
                              f"{SECTION}.password_file")
        if ("password" in kw or "password_file" in kw) and "username" not in kw:
            raise ConfigError(f"{SECTION}.username: a password needs a username", f"{SECTION}.username")
        if "ca_file" in kw and not kw["broker"].tls:
            raise ConfigError(f"{SECTION}.ca_file: only for an mqtts:// broker", f"{SECTION}.ca_file")
        if "topic_prefix" in section:
            kw["topic_prefix"] = check_topic_prefix(section["topic_prefix"], f"{SECTION}.topic_prefix")
        return cls(**kw)


def read_password_file(path: Path, key: str) -> str:
    """The first line of a password file (the file a systemd credential or an admin writes)."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"{key}: {path}: no such file", key) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{key}: {path}: cannot read: {getattr(exc, 'strerror', None) or exc}", key) from None
    password = text.splitlines()[0] if text else ""
    if not password:
        raise ConfigError(f"{key}: {path}: empty", key)
    return password


# --- the paho client ----------------------------------------------------------------------

def make_client(client_id: str, broker: BrokerAddress, *, username: str | None = None,
                password: str | None = None, ca_file: Path | None = None, manual_ack: bool = False):
    """A paho MQTT 5 client set up for ``broker`` (not connected yet).

    MQTT 5 because its PUBACK carries a reason code: a publish the broker's ACL
    refuses is *not* acknowledged, where MQTT 3.1.1 would acknowledge it silently.
    """
    try:
        import paho.mqtt.client as paho
    except ImportError:
        raise ConfigError("[mqtt] needs paho-mqtt: pip install 'preftable[club]'", SECTION) from None
    client = paho.Client(paho.CallbackAPIVersion.VERSION2, client_id=client_id,
                         protocol=paho.MQTTv5, manual_ack=manual_ack)
    if broker.tls:
        try:
            client.tls_set(ca_certs=str(ca_file) if ca_file else None)
        except (OSError, ValueError) as exc:
            raise ConfigError(f"{SECTION}.ca_file: {ca_file}: {exc}", f"{SECTION}.ca_file") from None
    if username is not None:
        client.username_pw_set(username, password)
    client.reconnect_delay_set(*RECONNECT_S)
    client.on_socket_open = _no_delay
    return client


def _no_delay(client, userdata, sock) -> None:
    """TCP_NODELAY on paho's socket: an event's lines go out back to back, and with Nagle's
    algorithm the second would wait for the broker's delayed ACK (40 ms on Linux)."""
    try:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    except (OSError, AttributeError) as exc:     # not a TCP socket (a proxy, a unix socket)
        log.debug("TCP_NODELAY not set: %s", exc)


def reason_failed(reason_code) -> bool:
    """True for an MQTT 5 reason code that says no (0x80 and above)."""
    return bool(getattr(reason_code, "is_failure", False))


# --- the outbox: one session's events.jsonl -------------------------------------------------

def mark_record(line: int) -> bytes:
    """The acked mark as a record of fixed width (JSON with the number padded)."""
    return b'{"line": %12d}\n' % line


class MarkFile:
    """``mqtt-acked.json``, rewritten in place: one ``pwrite`` of a fixed-width record.

    No rename, no fsync: the publisher's thread never waits for the disk (on
    ext4 a rename over a file flushes the new one's data first).  A SIGKILL
    leaves the old record or the new one; a power cut may leave an older one or
    a damaged one (read as 0).  Either only means lines published again, which
    subscribers drop.
    """

    def __init__(self, path: Path):
        self.path = path
        self._fd: int | None = None

    def write(self, line: int) -> None:
        if self._fd is None:
            flags = os.O_RDWR | os.O_CREAT
            try:
                self._fd = open_fd(self.path, flags, folder=True)
            except OSError as exc:
                if exc.errno not in (errno.ELOOP, errno.EINVAL) or not self.path.parent.is_dir():
                    raise
                # a link or a FIFO planted at the mark: replaced, never written through
                log.warning("%s: not a regular file (%s); replaced", self.path, exc.strerror)
                clear_temporary(self.path)
                self._fd = open_fd(self.path, flags, folder=True)
        os.pwrite(self._fd, mark_record(line), 0)

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def count_lines(path: Path) -> tuple[int, int]:
    """(whole lines, bytes they take) of a file; a torn last line is not counted."""
    lines = size = 0
    with open_read(path, folder=True) as fh:
        while chunk := fh.read(READ_CHUNK):
            lines += chunk.count(b"\n")
            size += len(chunk)
            last = chunk
        if size and not last.endswith(b"\n"):
            size -= len(last) - (last.rfind(b"\n") + 1)
    return lines, size


def _line_text(raw: bytes, path: Path, number: int) -> str:
    """A log line as published: its text, or (not UTF-8) with replacement characters."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        log.warning("%s:%d: not UTF-8; published with replacement characters", path, number)
        return raw.decode("utf-8", errors="replace")


def fetch_request(payload: bytes) -> tuple[str, int, int] | None:
    """``{"session", "from", "to"}`` of a board's fetch message, checked; None if it is not one."""
    if len(payload) > 512:
        return None
    try:
        doc = json.loads(payload)
    except (ValueError, RecursionError):
        return None
    if not isinstance(doc, dict):
        return None
    session, first, last = doc.get("session"), doc.get("from"), doc.get("to")
    if not isinstance(session, str) or not SESSION_NAME.fullmatch(session):
        return None
    if any(isinstance(v, bool) or not isinstance(v, int) for v in (first, last)) or not 1 <= first <= last:
        return None
    return session, first, last


def log_lines(path: Path, first: int, last: int) -> list[tuple[int, str]]:
    """Whole lines ``first`` to ``last`` (counted from 1) of a log, with their numbers."""
    out: list[tuple[int, str]] = []
    number, rest = 1, b""
    with open_read(path, folder=True) as fh:
        while number <= last and (chunk := fh.read(READ_CHUNK)):
            data = rest + chunk
            at = 0
            while number <= last:
                nl = data.find(b"\n", at)
                if nl < 0:
                    break
                if number >= first:
                    out.append((number, _line_text(data[at:nl], path, number)))
                number += 1
                at = nl + 1
            rest = data[at:] if number >= first else b""   # lines before ``first`` are only counted
    return out


class Outbox:
    """The lines of one session's log that the broker has not acknowledged yet."""

    def __init__(self, folder: Path):
        if os.path.islink(folder) or not folder.is_dir():
            raise LogError(f"{folder}: not a session folder (a symlink?); nothing of it is published")
        self.folder = folder
        self.session = folder.name
        self.events_path = folder / EVENTS
        self.mark_path = folder / MARK_FILE
        self.acked = self._load_mark()
        self.saved = self.acked if self.mark_path.exists() else -1
        self._mark_file = MarkFile(self.mark_path)
        self._acked_above: set[int] = set()
        self.refused: set[int] = set()
        self.handed = 0              # lines handed to paho and not answered yet
        self.announced = False       # the session message went out on this connection
        self._position_after(self.acked)

    def _load_mark(self) -> int:
        try:
            doc = json.loads(read_bounded(self.mark_path, MARK_BYTES, folder=True))
            line = doc["line"]
            if isinstance(line, int) and not isinstance(line, bool) and line >= 0:
                return line
            raise ValueError(f"bad line {line!r}")
        except FileNotFoundError:
            return 0
        except (OSError, ValueError, KeyError, TypeError) as exc:
            log.warning("%s: unreadable (%s): publishing the session from its first line", self.mark_path, exc)
            return 0

    def _position_after(self, line: int) -> None:
        """Read on from the line after ``line`` (the start of the file for 0)."""
        self.next_line, self.offset = 1, 0
        if line == 0 or not self.events_path.exists():
            return
        count = 0
        with open_read(self.events_path, folder=True) as fh:
            while count < line and (chunk := fh.read(READ_CHUNK)):
                at = 0
                while count < line:
                    nl = chunk.find(b"\n", at)
                    if nl < 0:
                        break
                    count += 1
                    at = nl + 1
                self.offset += at if count == line else len(chunk)
        if count < line:
            # the log lost lines after a power cut (fsync'd at each trick); the mark was ahead of it
            log.warning("%s: the acked mark says %d lines but the log has %d: publishing from line %d",
                        self.mark_path, line, count, count + 1)
            self.acked = count
        self.next_line = count + 1

    def take(self, limit: int) -> list[tuple[int, str]]:
        """Up to ``limit`` whole lines not handed out yet, with their numbers."""
        if limit <= 0:
            return []
        try:
            if os.stat(self.events_path).st_size <= self.offset:
                return []                # nothing new (most ticks): no open, no read
            with open_read(self.events_path, folder=True) as fh:
                fh.seek(self.offset)
                data = fh.read(READ_CHUNK)
        except FileNotFoundError:
            return []
        except OSError as exc:
            raise LogError(f"{self.events_path}: cannot read: {exc.strerror}") from None
        out = []
        at = 0
        while len(out) < limit:
            nl = data.find(b"\n", at)
            if nl < 0:
                break                # a line being written, or the end of what was read
            raw = data[at:nl]
            at = nl + 1
            out.append((self.next_line, _line_text(raw, self.events_path, self.next_line)))
            self.next_line += 1
        self.offset += at
        return out

    @property
    def lines_read(self) -> int:
        return self.next_line - 1

    def answer(self, line: int, ok: bool) -> None:
        self.handed -= 1
        if not ok:
            self.refused.add(line)
            return
        if line <= self.acked:
            return
        self._acked_above.add(line)
        while self.acked + 1 in self._acked_above:
            self.acked += 1
            self._acked_above.discard(self.acked)

    def rewind(self, to: int | None = None) -> None:
        """Offer again every line after the mark, lowered to ``to`` if given (the broker
        lost lines it had acknowledged); the lines the subscribers have come twice."""
        if to is not None and to < self.acked:
            self.acked = to
        self.refused.clear()
        self._acked_above.clear()
        self._position_after(self.acked)

    def save(self) -> None:
        if self.acked == self.saved:
            return
        try:
            self._mark_file.write(self.acked)
            self.saved = self.acked
        except OSError as exc:       # only costs lines sent twice after a restart
            log.warning("%s: cannot write (%s)", self.mark_path, exc.strerror)

    def close(self) -> None:
        self._mark_file.close()

    def drained(self) -> bool:
        """Every whole line of the file acknowledged (and nothing in flight)."""
        return (self.handed == 0 and not self.refused and self.acked == self.lines_read
                and not self._more_written())

    def _more_written(self) -> bool:
        try:
            with open_read(self.events_path, folder=True) as fh:
                fh.seek(self.offset)
                return b"\n" in fh.read(READ_CHUNK)
        except FileNotFoundError:
            return False
        except OSError as exc:
            raise LogError(f"{self.events_path}: cannot read: {exc.strerror}") from None

    def session_message(self, table_id: str) -> dict:
        def text(name: str) -> str | None:
            try:
                return read_bounded(self.folder / name, SESSION_FILE_BYTES, folder=True).decode("utf-8")
            except FileNotFoundError:
                return None
            except (OSError, UnicodeDecodeError) as exc:
                log.warning("%s: not published (%s)", self.folder / name, getattr(exc, "strerror", None) or exc)
                return None
        return {"table": table_id, "session": self.session, "config": text(CONFIG), "deck": text(DECK)}


def unfinished_outboxes(log_dir: Path) -> list[Path]:
    """Session folders this publisher has started on (a mark exists) but not finished, oldest first."""
    if not log_dir.is_dir():
        return []
    found = []
    # SessionLog.sessions: never a symlinked folder (its lines are not this table's to publish)
    for folder in (p for p in SessionLog.sessions(log_dir) if os.path.lexists(p / MARK_FILE)):
        box = Outbox(folder)
        if box.acked < count_lines(box.events_path)[0]:
            found.append(folder)
    return found


# --- the publisher ------------------------------------------------------------------------------

class MqttPublisher:
    """A bus subscriber: the outbox's lines, the latest snapshot and the status, to the broker."""

    name = "mqtt"

    def __init__(self, config: MqttConfig, *, password: str | None = None, ca_file: Path | None = None,
                 window: int = WINDOW):
        self.config = config
        self.window = window
        self._answers: queue.SimpleQueue = queue.SimpleQueue()      # from paho's thread
        self._inflight: dict[int, tuple[Outbox, int]] = {}
        self._outboxes: list[Outbox] = []
        self._snapshot = None
        self._state_due = False
        self._connected = False
        self._retry_at: float | None = None
        self._mark_at = 0.0
        self._state_at = float("-inf")
        self._refusals_logged: set[str] = set()
        self._unreachable_logged = False
        self._probe: str | None = None           # the read-back's nonce while it is awaited
        self._probe_deadline = 0.0
        self._probe_mid: int | None = None
        self._held_state: dict | None = None
        self._fetch_mids: set[int] = set()       # lines sent again for a board, not acknowledged yet
        self._fetch_sub_mid: int | None = None
        self._fetch_refused_logged = False
        self._fetch_next = 0.0                   # the next request is answered from this time on
        self.stats = {"published": 0, "acked": 0, "refused": 0, "connects": 0, "rewinds": 0,
                      "fetched": 0, "fetches_ignored": 0}
        c = config
        self.client = make_client(f"preftable-table-{c.table_id}", c.broker, username=c.username,
                                  password=password if password is not None else c.password, ca_file=ca_file)
        self.client.will_set(c.topic("status"), "offline", qos=1, retain=True)
        self.client.on_connect = self._on_connect
        self.client.on_disconnect = self._on_disconnect
        self.client.on_connect_fail = self._on_connect_fail
        self.client.on_publish = self._on_publish
        self.client.on_subscribe = self._on_subscribe
        self.client.on_message = self._on_message
        self.client.connect_async(c.broker.host, c.broker.port, keepalive=KEEPALIVE_S)
        self.client.loop_start()

    # paho's thread: only hand over; every decision is taken on the bus thread
    def _on_connect(self, client, userdata, flags, reason_code, properties) -> None:
        self._answers.put(("connect", reason_code))

    def _on_disconnect(self, client, userdata, flags, reason_code, properties) -> None:
        self._answers.put(("disconnect", reason_code))

    def _on_connect_fail(self, client, userdata) -> None:
        self._answers.put(("unreachable",))

    def _on_subscribe(self, client, userdata, mid, reason_codes, properties) -> None:
        self._answers.put(("suback", reason_codes, mid))

    def _on_message(self, client, userdata, msg) -> None:
        self._answers.put(("message", msg.topic, msg.payload))

    def _on_publish(self, client, userdata, mid, reason_code, properties) -> None:
        self._answers.put(("puback", mid, reason_code))

    # --- the bus's side
    def receive(self, item) -> None:
        if item.session_dir is not None:
            self._follow(Path(item.session_dir))
        self._snapshot = item.snapshot
        self._state_due = True
        self._pump(time.monotonic())

    def tick(self, now: float) -> None:
        self._pump(now)

    @property
    def current(self) -> Outbox | None:
        return self._outboxes[-1] if self._outboxes else None

    def _follow(self, folder: Path) -> None:
        if self.current is not None and self.current.folder == folder:
            return
        if not self._outboxes:
            # the first session seen: earlier sessions of this log dir whose lines the broker has not
            # all acknowledged (the service was stopped after a new pulka) go first
            for earlier in unfinished_outboxes(folder.parent):
                if earlier != folder:
                    box = Outbox(earlier)
                    log.info("%s: lines after %d not acknowledged yet: publishing them", earlier, box.acked)
                    self._outboxes.append(box)
        for box in self._outboxes:
            if box.folder == folder:       # adopted at start as unfinished, and it is the current one
                self._outboxes.remove(box)
                self._outboxes.append(box)
                return
        box = Outbox(folder)
        if box.saved < 0:
            box.save()          # the mark exists from the first line on: a restart finds the session
        self._outboxes.append(box)

    def _pump(self, now: float) -> None:
        self._handle_answers(now)
        if self._retry_at is not None and now >= self._retry_at:
            self._retry_refused()
        if self._probe is not None and now >= self._probe_deadline:
            log.warning("no answer to the read-back of table %s's state within %.0f s: resuming from "
                        "the acknowledged mark", self.config.table_id, PROBE_TIMEOUT_S)
            self._end_probe(readable=False)
        ready = self._connected and self._probe is None
        if ready:
            self._announce()
            self._feed()                 # while the broker is away, the lines wait in the file
        if ready and self._state_due and now - self._state_at >= STATE_EVERY_S:
            self._state_at = now
            self._publish_state()
        self._retire_drained()
        if now - self._mark_at >= MARK_EVERY_S:
            self._mark_at = now
            for box in self._outboxes:
                box.save()

    def _handle_answers(self, now: float, wait_s: float = 0.0) -> None:
        """Take in what paho's thread handed over (waiting up to ``wait_s`` for the first)."""
        while True:
            try:
                answer = self._answers.get(timeout=wait_s) if wait_s else self._answers.get_nowait()
            except queue.Empty:
                return
            wait_s = 0.0
            kind = answer[0]
            if kind == "puback":
                _, mid, reason = answer
                if mid in self._fetch_mids:
                    self._fetch_mids.discard(mid)       # a line sent again for a board that asked
                    continue
                if mid == self._probe_mid and self._probe is not None and reason_failed(reason):
                    self._log_refusal(f"{reason} (its probe)")
                    self._end_probe(readable=False)
                    continue
                entry = self._inflight.pop(mid, None)
                if entry is None:
                    continue            # state, status, session or probe message
                box, line = entry
                ok = not reason_failed(reason)
                box.answer(line, ok)
                if ok:
                    self.stats["acked"] += 1
                else:
                    self.stats["refused"] += 1
                    self._log_refusal(str(reason))
                    if self._retry_at is None:
                        self._retry_at = now + RETRY_REFUSED_S
            elif kind == "connect":
                reason = answer[1]
                if reason_failed(reason):
                    self._log_refusal(f"connection refused: {reason}")
                    continue
                self._connected = True
                self._unreachable_logged = False
                self.stats["connects"] += 1
                log.info("connected to %s as table %s", self.config.broker.url, self.config.table_id)
                for box in self._outboxes:
                    box.announced = False
                self.client.publish(self.config.topic("status"), "online", qos=1, retain=True)
                self._state_due = self._snapshot is not None
                self._fetch_mids.clear()        # paho resends them itself; their answers may not come
                self._fetch_sub_mid = self.client.subscribe(self.config.topic("fetch"), 1)[1]
                self._start_probe(now)
            elif kind == "suback":
                if answer[2] == self._fetch_sub_mid:
                    if any(reason_failed(r) for r in answer[1]) and not self._fetch_refused_logged:
                        self._fetch_refused_logged = True
                        log.warning("the broker does not let table %s read the boards' requests (%s): a "
                                    "board that comes late cannot get the lines it missed; give tables "
                                    "read on their fetch topic (systemd/mosquitto/acl)", self.config.table_id,
                                    ", ".join(str(r) for r in answer[1]))
                elif self._probe is not None and any(reason_failed(r) for r in answer[1]):
                    log.warning("the broker does not let table %s read back its own state (%s): after a "
                                "broker crash, lines it had acknowledged but not delivered stay lost; "
                                "give tables readwrite on their own topics", self.config.table_id,
                                ", ".join(str(r) for r in answer[1]))
                    self._end_probe(readable=False)
            elif kind == "message":
                if answer[1] == self.config.topic("fetch"):
                    self._answer_fetch(answer[2], now)
                else:
                    self._read_back(answer[1], answer[2])
            elif kind == "unreachable":
                if not self._unreachable_logged:
                    self._unreachable_logged = True
                    log.warning("cannot reach the broker %s; retrying (the game log keeps every line)",
                                self.config.broker.url)
            elif kind == "disconnect":
                if self._connected:
                    log.warning("lost the broker %s (%s): the game log keeps every line until it is back",
                                self.config.broker.url, answer[1])
                self._connected = False

    # --- the read-back: what does the broker still hold of this table?
    def _start_probe(self, now: float) -> None:
        """Subscribe to this table's own state, then publish a nonce on its probe topic.

        The broker hands a subscriber the retained state at once, so it arrives before
        the echo of the nonce published after the subscription: when the nonce comes
        back, whatever state the broker still holds (possibly none) has been seen.
        """
        self._probe = uuid.uuid4().hex
        self._probe_deadline = now + PROBE_TIMEOUT_S
        self._held_state = None
        c = self.config
        self.client.subscribe([(c.topic("state"), 1), (c.topic("probe"), 1)])
        self._probe_mid = self.client.publish(c.topic("probe"), self._probe, qos=1).mid

    def _read_back(self, topic_name: str, payload: bytes) -> None:
        if self._probe is None:
            return
        if topic_name == self.config.topic("state"):
            try:
                doc = json.loads(payload)
            except ValueError:
                doc = None
            self._held_state = doc if isinstance(doc, dict) else None
        elif topic_name == self.config.topic("probe") and payload == self._probe.encode():
            self._end_probe(readable=True)

    def _end_probe(self, readable: bool) -> None:
        """Resume: from the acknowledged mark, or from the mark the broker's state says it
        had, if lower.  A broker that crashed restarts from its last saved database, and
        with it the state retained then; every line acknowledged after that state was
        sent may be lost, so the table sends them again (subscribers drop what they have)."""
        self._probe = None
        c = self.config
        self.client.unsubscribe([c.topic("state"), c.topic("probe")])
        box = self.current
        if not readable or box is None:
            return
        held = self._held_state or {}
        seen = held.get("acked") if held.get("session") == box.session else 0
        if isinstance(seen, bool) or not isinstance(seen, int) or seen < 0:
            seen = 0
        if seen < box.acked:
            log.warning("the broker holds table %s's session %s only up to line %d (%d acknowledged): "
                        "publishing again from line %d", c.table_id, box.session, seen, box.acked, seen + 1)
            box.rewind(seen)
            self.stats["rewinds"] += 1

    # --- a board's request for lines it missed
    def _answer_fetch(self, payload: bytes, now: float) -> None:
        """``<prefix>/<table_id>/fetch`` ``{"session", "from", "to"}``: the lines ``from`` to
        ``to`` of that session's log (a folder of this log dir) published again on the ``log``
        topic, as they were the first time.  Bounded: at most :data:`FETCH_LINES` lines per
        request, one request per :data:`FETCH_EVERY_S`, and none while :data:`WINDOW` lines
        of answers are unacknowledged; a board asks again for what it still lacks."""
        box = self.current
        if box is None or now < self._fetch_next or len(self._fetch_mids) >= self.window:
            self.stats["fetches_ignored"] += 1
            return
        request = fetch_request(payload)
        if request is None:
            self.stats["fetches_ignored"] += 1
            log.debug("table %s: a fetch request that is not one: %r", self.config.table_id, payload[:80])
            return
        session, first, last = request
        folder = next((f for f in SessionLog.sessions(box.folder.parent) if f.name == session), None)
        if folder is None:
            self.stats["fetches_ignored"] += 1
            return
        self._fetch_next = now + FETCH_EVERY_S
        try:
            lines = log_lines(folder / EVENTS, first, min(last, first + FETCH_LINES - 1))
        except OSError as exc:
            log.warning("%s: cannot read for a board's request: %s", folder / EVENTS, exc.strerror)
            return
        for line, text in lines:
            payload_out = json.dumps({"table": self.config.table_id, "session": session,
                                      "line": line, "text": text}, ensure_ascii=False)
            self._fetch_mids.add(self.client.publish(self.config.topic("log"), payload_out, qos=1).mid)
        self.stats["fetched"] += len(lines)

    def _log_refusal(self, what: str) -> None:
        if what not in self._refusals_logged:
            self._refusals_logged.add(what)
            log.error("broker %s refused table %s: %s (check [mqtt] table_id, username and the broker's ACL)",
                      self.config.broker.url, self.config.table_id, what)

    def _retry_refused(self) -> None:
        if any(box.handed for box in self._outboxes):
            return                      # wait until every answer is in
        self._retry_at = None
        for box in self._outboxes:
            if box.refused:
                box.rewind()

    def _announce(self) -> None:
        box = self.current
        if box is None or box.announced:
            return
        payload = json.dumps(box.session_message(self.config.table_id), ensure_ascii=False)
        self.client.publish(self.config.topic("session"), payload, qos=1, retain=True)
        box.announced = True

    def _feed(self) -> None:
        room = self.window - len(self._inflight)
        for box in self._outboxes:
            if room <= 0:
                return
            if box.refused:
                continue                 # offered again by _retry_refused
            for line, text in box.take(room):
                payload = json.dumps({"table": self.config.table_id, "session": box.session,
                                      "line": line, "text": text}, ensure_ascii=False)
                info = self.client.publish(self.config.topic("log"), payload, qos=1)
                self._inflight[info.mid] = (box, line)
                box.handed += 1
                room -= 1
                self.stats["published"] += 1

    def _publish_state(self) -> None:
        box = self.current
        payload = json.dumps({"table": self.config.table_id, "session": box.session if box else "",
                              "lines": box.lines_read if box else 0, "acked": box.acked if box else 0,
                              "snapshot": board_state(self._snapshot)}, ensure_ascii=False)
        # QoS 0: paho never sends it again after a reconnect, so the state the broker holds
        # carries a mark no later than the broker's own history (see _end_probe)
        self.client.publish(self.config.topic("state"), payload, qos=0, retain=True)
        self._state_due = False

    def _retire_drained(self) -> None:
        """An earlier session whose every line is acknowledged is done with."""
        while len(self._outboxes) > 1 and self._outboxes[0].drained():
            done = self._outboxes.pop(0)
            done.save()
            done.close()
            log.info("%s: every line acknowledged by the broker", done.folder)

    def outstanding(self) -> int:
        """Lines read from the logs and not acknowledged yet (for tests and shutdown)."""
        return sum(box.lines_read - box.acked for box in self._outboxes)

    def close(self) -> None:
        """Flush for a moment (bounded), keep the mark, say offline, disconnect."""
        deadline = time.monotonic() + CLOSE_FLUSH_S
        while self._connected and self._inflight and time.monotonic() < deadline:
            self._handle_answers(time.monotonic(), wait_s=0.05)
        for box in self._outboxes:
            box.save()
            box.close()
        if self._connected:
            info = self.client.publish(self.config.topic("status"), "offline", qos=1, retain=True)
            try:
                info.wait_for_publish(timeout=CLOSE_FLUSH_S)
            except RuntimeError as exc:  # the connection went meanwhile: the will says offline
                log.info("offline status not sent (%s); the broker's will says it", exc)
        self.client.disconnect()
        self.client.loop_stop()


# --- the registry's module protocol (controller.app.backends) ----------------------------------

def parse(raw: Mapping[str, Any], game=None) -> MqttConfig | None:
    """``[mqtt]``, validated; no section (``{}``) means no publishing."""
    return MqttConfig.parse(raw) if raw else None


def _resolve(path: str | None, settings) -> Path | None:
    """A path of the config, relative to the config file's folder."""
    if path is None:
        return None
    base = Path(settings.source).parent if getattr(settings, "source", None) else Path.cwd()
    return Path(path) if Path(path).is_absolute() else base / path


def outputs(config: MqttConfig | None, ctx) -> list:
    if config is None:
        return []
    password = config.password
    if config.password_file is not None:
        password = read_password_file(_resolve(config.password_file, ctx.settings), f"{SECTION}.password_file")
    ca_file = _resolve(config.ca_file, ctx.settings)
    if ca_file is not None and not ca_file.is_file():
        raise ConfigError(f"{SECTION}.ca_file: {ca_file}: no such file", f"{SECTION}.ca_file")
    return [MqttPublisher(config, password=password, ca_file=ca_file)]


def doctor(config: MqttConfig | None, doc, settings) -> None:
    if config is None:
        return
    try:
        import paho.mqtt  # noqa: F401
    except ImportError:
        doc.add(FAIL, "[mqtt] is configured but paho-mqtt is not installed", "pip install 'preftable[club]'")
        return
    for key, path in (("password_file", config.password_file), ("ca_file", config.ca_file)):
        if path is None:
            continue
        resolved = _resolve(path, settings)
        if not os.access(resolved, os.R_OK):
            doc.add(FAIL, f"mqtt.{key}: {resolved} cannot be read", f"check the path and its owner ({key})")
    address = f"{config.broker.host}:{config.broker.port}"
    try:
        with socket.create_connection((config.broker.host, config.broker.port), timeout=3):
            doc.add(OK, f"MQTT broker {address} accepts connections (table {config.table_id})")
    except OSError as exc:
        doc.add(WARN, f"MQTT broker {address} unreachable ({exc.strerror or exc}); the table plays on and "
                      "publishes its log when the broker is back", "check mqtt.broker and the network")


__all__ = ["MqttConfig", "MqttPublisher", "BrokerAddress", "Outbox", "board_state", "parse", "outputs", "doctor", "make_client",
           "parse_broker_url", "check_topic_level", "topic", "MARK_FILE"]
