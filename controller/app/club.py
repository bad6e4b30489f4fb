"""The club board: ``preftable club --broker URL [--dir DIR]``.

It follows every table that publishes under ``<prefix>/`` (see
:mod:`controller.app.mqtt` for the topics and payloads): it subscribes to
``<prefix>/+/state``, ``+/log``, ``+/session`` and ``+/status``, shows every
table on the terminal (table, status, players, deal, contract, pulka, its
mirror) and keeps a mirror of every session:
``DIR/<table_id>/<session>/events.jsonl`` with its ``config.toml`` and
``deck.toml``, so that ``preftable replay DIR/t/s/events.jsonl --config
DIR/t/s/config.toml`` prints exactly the summary of the table's own log.

The mirror is written in line order only.  A line that arrives twice (the
table resends from its acknowledged point) is dropped by (session, line).  A
line that arrives after a gap is held in ``pending.jsonl`` beside the mirror
(at most :data:`MAX_HELD` of them) and not written: the board invents
nothing, it reports the gap and asks the table for the missing lines
(``<prefix>/<table>/fetch``, answered on the table's ``log`` topic from its
own log, see :mod:`controller.app.mqtt`); the held lines go into the mirror
once the gap is filled.  The table's retained ``state`` says how many lines
its log has, so a board started late, with any client id, or whose broker
lost its queue, asks for everything it lacks and ends with every mirror
byte-equal to the table's log.

With ``--web [HOST:]PORT`` the same board is also a web page, ``/club``
(:mod:`controller.app.web.board`), updated live.

The board connects with a persistent MQTT 5 session (a fixed client id, a
session that never expires) and acknowledges a message only once it is in
the mirror, so a board that was away or was killed gets everything the
broker queued meanwhile.  Bad or foreign messages (not JSON, a malformed or
wrong session, a table id the topics cannot carry, a payload naming another
table) are counted by reason and logged, and never stop the board.
"""

from __future__ import annotations

import argparse
import json
import logging
import signal
import sys
import threading
import time
import tomllib
from collections import Counter
from pathlib import Path
from typing import Callable

from ..core.errors import ConfigError
from . import stop_signals
from .mqtt_config import (DEFAULT_PREFIX, check_topic_level, check_topic_prefix, make_client, parse_broker_url,
                          read_password_file, topic)
# The mirror and the table views live beside the board; their names stay importable from here.
from .club_mirror import FETCH_RETRY_S, MAX_HELD, PENDING, BadMessage, Mirror, check_session
from .club_view import HEADERS, TableView, analysis_line, board_dict, board_text

log = logging.getLogger(__name__)

__all__ = ["Club", "Mirror", "TableView", "BadMessage", "HEADERS", "FETCH_RETRY_S", "MAX_HELD", "PENDING",
           "board_dict", "board_text", "check_session", "add_club", "cmd_club", "web_listen"]

KINDS = ("log", "state", "session", "status")
SYNC_EVERY_S = 1.0            # mirrors are fsync'd this often, off the message path (written at once)
LOG_FIRST_BAD = 20            # bad messages logged one by one, per reason; then every 1000th
SESSION_EXPIRY_S = 0xFFFFFFFF  # MQTT 5: the board's session (its queue) never expires
REDRAW_S = 1.0
MAX_PAYLOAD = 256 * 1024      # a message larger than this is not the table's (a state is ~1 kB)
FIRST_CONNECT_S = 10.0        # the command's first connection: TCP connect, then the broker's answer


# --- the board ---------------------------------------------------------------------------------

class Club:
    """The subscriber: topics -> table views and mirrors.  Callbacks run on paho's thread."""

    def __init__(self, broker_url: str, mirror_dir: Path, *, prefix: str = DEFAULT_PREFIX,
                 username: str | None = None, password: str | None = None, ca_file: Path | None = None,
                 client_id: str = "preftable-club"):
        self.broker = parse_broker_url(broker_url, "--broker")
        self.prefix = check_topic_prefix(prefix, "--prefix")
        self.mirror_dir = mirror_dir
        self.tables: dict[str, TableView] = {}
        self.bad: Counter = Counter()
        self.changes = 0                      # messages taken in (good or bad): the board's version
        self.fetches = 0                      # requests for missed lines sent to the tables
        self.clock = time.monotonic
        self.on_change: Callable[[], None] | None = None   # told (on paho's thread) after each one
        self.lock = threading.Lock()          # the board's view against the drawing thread
        self.connected = threading.Event()
        self.answered = threading.Event()       # the first CONNACK came (see refusal)
        self.refusal: str | None = None
        self.subscribed = threading.Event()     # the broker has taken the subscriptions (SUBACK)
        self._stopping = False
        self._stop_sync = threading.Event()
        self._syncer = threading.Thread(target=self._sync_loop, name="club mirror sync", daemon=True)
        self.client = make_client(client_id, self.broker, username=username, password=password,
                                  ca_file=ca_file, manual_ack=True)
        self.client.on_connect = self._on_connect
        self.client.on_disconnect = self._on_disconnect
        self.client.on_message = self._on_message
        self.client.on_subscribe = self._on_subscribe

    # --- connection
    def start(self, *, reachable: bool = False) -> None:
        """Connect (paho retries in the background).  With ``reachable`` (the command) the
        first connection is made here and an unreachable broker is a :class:`ConfigError`
        naming ``--broker``; then :meth:`wait_connected` waits for its answer."""
        from paho.mqtt.packettypes import PacketTypes
        from paho.mqtt.properties import Properties

        props = Properties(PacketTypes.CONNECT)
        props.SessionExpiryInterval = SESSION_EXPIRY_S
        if reachable:
            self.client.connect_timeout = FIRST_CONNECT_S
            try:
                self.client.connect(self.broker.host, self.broker.port, keepalive=15,
                                    clean_start=False, properties=props)
            except (OSError, ValueError) as exc:
                raise ConfigError(f"--broker: cannot reach {self.broker.url}: "
                                  f"{getattr(exc, 'strerror', None) or exc}", "--broker") from None
        else:
            self.client.connect_async(self.broker.host, self.broker.port, keepalive=15,
                                      clean_start=False, properties=props)
        self.client.loop_start()
        self._syncer.start()

    def wait_connected(self, timeout: float, stop: threading.Event) -> bool:
        """After ``start(reachable=True)``: True once the broker took the board, False if
        ``stop`` was set first; a refusal or no answer is a :class:`ConfigError` (``--broker``)."""
        deadline = time.monotonic() + timeout
        while not self.connected.is_set():
            if self.refusal is not None:
                raise ConfigError(f"--broker: {self.broker.url} refused the board: {self.refusal}", "--broker")
            if stop.is_set():
                return False
            left = deadline - time.monotonic()
            if left <= 0:
                raise ConfigError(f"--broker: {self.broker.url} did not answer within {timeout:g} s", "--broker")
            self.answered.wait(min(left, 0.2))
        return True

    def _sync_loop(self) -> None:
        """fsync the mirrors every second, so that a write never waits for the disk."""
        while not self._stop_sync.wait(SYNC_EVERY_S):
            with self.lock:
                mirrors = [m for view in self.tables.values() for m in view.mirrors.values()]
                self._ask_all()
            for mirror in mirrors:
                try:
                    mirror.sync()
                except OSError as exc:
                    log.error("%s: cannot sync the mirror: %s", mirror.folder, exc.strerror)

    def stop(self) -> None:
        self._stopping = True
        self.client.disconnect()
        self.client.loop_stop()
        self._stop_sync.set()
        if self._syncer.is_alive():
            self._syncer.join(timeout=10)
        with self.lock:
            for view in self.tables.values():
                for mirror in view.mirrors.values():
                    mirror.close()

    def _on_connect(self, client, userdata, flags, reason_code, properties) -> None:
        if reason_code.is_failure:
            log.error("broker %s refused the board: %s", self.broker.url, reason_code)
            self.refusal = str(reason_code)
            self.answered.set()
            return
        log.info("connected to %s (session %s)", self.broker.url,
                 "resumed" if flags.session_present else "new")
        client.subscribe([(f"{self.prefix}/+/{kind}", 1) for kind in KINDS])
        self.connected.set()
        self.answered.set()

    def _on_subscribe(self, client, userdata, mid, reason_codes, properties) -> None:
        refused = [str(r) for r in reason_codes if r.is_failure]
        if refused:
            log.error("broker %s refused the board's subscriptions: %s", self.broker.url, ", ".join(refused))
        else:
            self.subscribed.set()

    def _on_disconnect(self, client, userdata, flags, reason_code, properties) -> None:
        self.connected.clear()
        self.subscribed.clear()
        if not self._stopping:
            log.warning("lost the broker %s (%s); reconnecting", self.broker.url, reason_code)

    def _on_message(self, client, userdata, msg) -> None:
        ack = True
        try:
            with self.lock:
                self.handle(msg.topic, msg.payload)
        except BadMessage as exc:
            self._count_bad(exc.reason, msg.topic, str(exc))
        except OSError as exc:
            # not acknowledged: the broker sends it again after a reconnect
            ack = False
            log.error("cannot write the mirror (%s): message on %s not acknowledged", exc, msg.topic)
        except Exception:   # noqa: BLE001 - the board must outlive any message; logged with its traceback
            log.exception("message on %s could not be handled", msg.topic)
            self._count_bad("unexpected", msg.topic, "see the traceback above")
        finally:
            if ack and msg.qos:
                client.ack(msg.mid, msg.qos)
            self._changed()

    def _changed(self) -> None:
        with self.lock:
            self.changes += 1
        if self.on_change is not None:
            self.on_change()          # the web page's server: it only schedules a redraw, never blocks

    def _count_bad(self, reason: str, topic: str, detail: str) -> None:
        with self.lock:
            self.bad[reason] += 1
            n = self.bad[reason]
        if n <= LOG_FIRST_BAD or n % 1000 == 0:
            log.warning("bad message #%d on %r: %s", n, topic, detail)

    # --- messages
    def handle(self, topic: str, payload: bytes) -> None:
        """One message (the caller holds the lock).  Raises :class:`BadMessage`."""
        table, kind = self._parse_topic(topic)
        if len(payload) > MAX_PAYLOAD:
            raise BadMessage("too large", f"{len(payload):,} bytes (at most {MAX_PAYLOAD:,})")
        if kind == "status":
            status = payload.decode("utf-8", errors="replace")
            if status not in ("online", "offline"):
                raise BadMessage("bad status", f"{status[:40]!r}")
            self._view(table).status = status
            return
        doc = self._json(payload)
        if doc.get("table") != table:
            raise BadMessage("foreign", f"payload names table {doc.get('table')!r} on {table!r}'s topic")
        if kind == "log":
            self._log_line(table, doc)
        elif kind == "session":
            self._session(table, doc)
        else:
            self._state(table, doc)

    def _parse_topic(self, topic: str) -> tuple[str, str]:
        head = self.prefix + "/"
        rest = topic[len(head):].split("/") if topic.startswith(head) else []
        if len(rest) != 2 or rest[1] not in KINDS:
            raise BadMessage("foreign topic", topic)
        try:
            return check_topic_level(rest[0], "table id"), rest[1]
        except ConfigError as exc:
            raise BadMessage("bad table id", str(exc)) from None

    @staticmethod
    def _json(payload: bytes) -> dict:
        try:
            doc = json.loads(payload)
        except (ValueError, UnicodeDecodeError):
            raise BadMessage("not JSON", repr(payload[:60])) from None
        except RecursionError:
            raise BadMessage("not JSON", "nested too deeply") from None
        if not isinstance(doc, dict):
            raise BadMessage("not JSON", f"a JSON {type(doc).__name__}, not an object")
        return doc

    def _view(self, table: str) -> TableView:
        view = self.tables.get(table)
        if view is None:
            view = self.tables[table] = TableView(table)
            log.info("new table %s", table)
        return view

    def _mirror(self, table: str, session: str) -> Mirror:
        view = self._view(table)
        mirror = view.mirrors.get(session)
        if mirror is None:
            mirror = view.mirrors[session] = Mirror(self.mirror_dir / table / session)
        return mirror

    def _log_line(self, table: str, doc: dict) -> None:
        session = check_session(doc.get("session"))
        line, text = doc.get("line"), doc.get("text")
        if isinstance(line, bool) or not isinstance(line, int) or line < 1:
            raise BadMessage("bad line", f"line number {line!r}")
        if not isinstance(text, str) or "\n" in text or "\r" in text:
            raise BadMessage("bad line", f"text of line {line} is not one line of text")
        try:
            entry = json.loads(text)
        except (ValueError, RecursionError):
            entry = None
        if not isinstance(entry, dict):
            raise BadMessage("bad line", f"line {line} is not a JSON object")
        mirror = self._mirror(table, session)
        mirror.add(line, text)
        mirror.known = max(mirror.known, line)
        view = self._view(table)
        if not view.session:
            view.session = session
        self._ask(table, session, mirror)

    def _session(self, table: str, doc: dict) -> None:
        session = check_session(doc.get("session"))
        config, deck = doc.get("config"), doc.get("deck")
        for name, text in (("config", config), ("deck", deck)):
            if text is None and name == "deck":
                continue
            if not isinstance(text, str):
                raise BadMessage("bad session", f"{name} is not text")
            try:
                tomllib.loads(text)
            except tomllib.TOMLDecodeError as exc:
                raise BadMessage("bad session", f"{name} is not TOML: {exc}") from None
        self._mirror(table, session).copies(config, deck)

    def _state(self, table: str, doc: dict) -> None:
        session = doc.get("session")
        if session != "":
            check_session(session)
        snapshot, lines = doc.get("snapshot"), doc.get("lines")
        if not isinstance(snapshot, dict) or isinstance(lines, bool) or not isinstance(lines, int):
            raise BadMessage("bad state", "needs a snapshot object and a line count")
        view = self._view(table)
        view.session, view.lines, view.snapshot = session, lines, snapshot
        view.analysis = analysis_line(doc.get("analysis"))
        if session:
            mirror = self._mirror(table, session)
            mirror.known = max(mirror.known, lines)
            self._ask(table, session, mirror)

    def _ask(self, table: str, session: str, mirror: Mirror) -> None:
        """Ask the table for the lines the mirror lacks (``<prefix>/<table>/fetch``; the
        table answers on its ``log`` topic).  The caller holds the lock."""
        want = mirror.fetch_due(self.clock())
        if want is None or not self.connected.is_set():
            return
        request = json.dumps({"session": session, "from": want[0], "to": want[1]})
        self.client.publish(topic(self.prefix, table, "fetch"), request, qos=1)
        self.fetches += 1
        if self.fetches <= LOG_FIRST_BAD:
            log.info("%s: asked table %s for lines %d-%d", mirror.folder, table, want[0], want[1])

    def _ask_all(self) -> None:
        """Every mirror still lacking lines asks again (the sync loop: a table that went quiet)."""
        for table, view in self.tables.items():
            for session, mirror in view.mirrors.items():
                self._ask(table, session, mirror)

    # --- what tests and the board read
    def text(self) -> str:
        with self.lock:
            return board_text(self.tables, self.bad)

    def board(self) -> dict:
        """The board as JSON-ready data (:func:`board_dict`), taken under the lock."""
        with self.lock:
            return board_dict(self.tables, self.bad, seq=self.changes)

    def mirror_lines(self, table: str, session: str) -> int:
        with self.lock:
            view = self.tables.get(table)
            mirror = view.mirrors.get(session) if view else None
            return mirror.lines if mirror else 0


# --- the command ---------------------------------------------------------------------------------------

def _show(text: str, tty: bool) -> None:
    if tty:
        sys.stdout.write("\x1b[H\x1b[2J" + text)
    else:
        sys.stdout.write(text + "\n")
    sys.stdout.flush()


def cmd_club(args: argparse.Namespace) -> int:
    password = None
    if args.password_file:
        if not args.username:
            raise ConfigError("--password-file needs --username", "--username")
        password = read_password_file(Path(args.password_file), "--password-file")
    ca_file = Path(args.ca_file) if args.ca_file else None
    if ca_file is not None and not ca_file.is_file():
        raise ConfigError(f"--ca-file: {ca_file}: no such file", "--ca-file")
    mirror_dir = Path(args.dir)
    try:
        mirror_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigError(f"--dir: {mirror_dir}: cannot create: {exc.strerror}", "--dir") from None
    club = Club(args.broker, mirror_dir, prefix=args.prefix, username=args.username, password=password,
                ca_file=ca_file, client_id=args.client_id)
    page = None
    if args.web is not None:     # before the broker: a port in use is one line and exit 2
        from .web.board import start_board

        host, port = args.web
        page = start_board(club.board, host, port, prefix=club.prefix, broker=club.broker.url)
        club.on_change = page.changed
        sys.stderr.write(f"the club page: {page.page_url}\n")
        sys.stderr.flush()
    stop = threading.Event()
    signals: list[int] = []

    def on_term(signum, frame):
        signals.append(signum)
        stop.set()

    tty = sys.stdout.isatty()
    shown = None
    with stop_signals.handling(on_term):
        try:
            club.start(reachable=True)          # an unreachable broker: one line, exit 2
            if not club.wait_connected(FIRST_CONNECT_S, stop):
                sys.stderr.write(f"preftable: interrupted before {club.broker.url} answered\n")
                return 130
            while True:                          # at most one redraw a second, only when it changed
                text = club.text()
                if text != shown:
                    shown = text
                    _show(text, tty)
                if stop.is_set():
                    break                        # the board as it was at the end, drawn once more
                stop.wait(REDRAW_S)
        finally:
            club.stop()
            if page is not None:
                page.stop()
    how = "Ctrl-C" if signal.SIGINT in signals else "SIGTERM"
    sys.stderr.write(f"preftable: club board stopped ({how}); the mirrors are in {mirror_dir}\n")
    return 0


def web_listen(text: str) -> tuple[str, int]:
    """``--web``: ``PORT`` (on 127.0.0.1) or ``HOST:PORT`` (``0.0.0.0:8080`` for every screen of the club)."""
    from .web.config import parse_listen

    if text.isdigit():
        text = f"127.0.0.1:{text}"
    try:
        return parse_listen(text, "--web")
    except ConfigError as exc:
        raise argparse.ArgumentTypeError(str(exc).removeprefix("--web: ")) from None


def add_club(sub) -> None:
    p = sub.add_parser("club", help="the club board: follow every table on an MQTT broker, mirror their logs")
    p.add_argument("--broker", required=True, help="mqtt://host:1883 or mqtts://host:8883")
    p.add_argument("--dir", default="club", help="mirror folder: DIR/<table>/<session>/ (default ./club)")
    p.add_argument("--prefix", default=DEFAULT_PREFIX, help=f"topic prefix (default {DEFAULT_PREFIX})")
    p.add_argument("--username", help="the board's broker user (read-only in the shipped ACL)")
    p.add_argument("--password-file", help="a file whose first line is the password")
    p.add_argument("--ca-file", help="mqtts: the broker's CA certificate (default: the system's)")
    p.add_argument("--client-id", default="preftable-club",
                   help="the board's persistent session on the broker (one per board)")
    p.add_argument("--web", nargs="?", const="8080", type=web_listen, metavar="[HOST:]PORT",
                   help="also serve the board as a web page at /club (default 127.0.0.1:8080; "
                        "0.0.0.0:8080 for other machines); read-only")
    p.set_defaults(func=cmd_club)
