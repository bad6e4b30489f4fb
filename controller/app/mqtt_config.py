"""The ``[mqtt]`` section of a table and of a club, its topics and the paho client both use.

The section and the topics are those of :mod:`controller.app.mqtt` (its docstring is the
contract): ``broker`` (``mqtt://`` or ``mqtts://``), ``table_id``, the credentials,
``ca_file`` and ``topic_prefix``; topics are ``<prefix>/<table_id>/<kind>``.  The tunables
of the publisher and of its outbox stand here too, so the table and the club
(:mod:`controller.app.club`) agree on them.
"""

from __future__ import annotations

import logging
import re
import socket
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping
from urllib.parse import urlsplit

from ..core.config import check_known_keys, check_str, check_table
from ..core.errors import ConfigError

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

