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
  latest wins): ``{"table", "session", "lines", "acked", "snapshot", "analysis"}``;
  ``lines`` is how many lines of the session's log had been read when it was
  sent, ``acked`` the acknowledged mark then.  ``snapshot`` is the board's
  part of the :class:`~controller.core.snapshot.TableSnapshot`
  (:func:`board_state`): seq, session, players, seats, names, phase, the deal
  in progress without its closed tricks, the number of deals played, the
  pulka, the settlement, the next deal, the first alerts and the link.  Its size
  is bounded: it never carries the session's history (that is the ``log``
  topic, and the board's mirror).  ``analysis`` is the line for people of the
  session's last analysed deal, ``{"deal", "line"}`` (docs/analysis.md, from the
  session's ``analysis.jsonl``), or null; a new line sends the state again.
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

import json
import logging
import os
import queue
import socket
import time
import uuid
from pathlib import Path
from typing import Any, Mapping

from ..core.errors import ConfigError
from ..store.analyses import AnalysisLines
from ..store.gamelog import EVENTS, SessionLog
from .findings import FAIL, OK, WARN
# The section, the client and the outbox live beside the publisher; their names stay importable from here.
# The section, the client and the outbox live beside the publisher; their names stay importable from here.
from .mqtt_config import (CLOSE_FLUSH_S, DEFAULT_PREFIX, FETCH_EVERY_S, FETCH_LINES, KEEPALIVE_S, MARK_EVERY_S,
                          MARK_FILE, PROBE_TIMEOUT_S, RETRY_REFUSED_S, SECTION, STATE_EVERY_S, WINDOW, BrokerAddress,
                          MqttConfig, check_topic_level, check_topic_prefix, make_client, parse_broker_url,
                          read_password_file, reason_failed, topic)
from .mqtt_outbox import MarkFile, Outbox, count_lines, fetch_request, log_lines, mark_record, unfinished_outboxes

log = logging.getLogger(__name__)

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
        self._analysis = AnalysisLines()    # the session's analysis.jsonl, read when it grew
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
        box = self.current
        if box is not None and self._snapshot is not None and self._analysis.changed(box.folder):
            self._state_due = True          # a deal's analysis came in, off the table loop
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
                              "snapshot": board_state(self._snapshot),
                              "analysis": self._analysis.last(box.folder) if box else None}, ensure_ascii=False)
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
           "parse_broker_url", "check_topic_level", "check_topic_prefix", "topic", "MARK_FILE", "DEFAULT_PREFIX",
           "MarkFile", "count_lines", "fetch_request", "log_lines", "mark_record", "unfinished_outboxes",
           "read_password_file", "reason_failed"]
