"""A real Mosquitto broker for the tests and the benchmark.

Debian's ``/usr/sbin/mosquitto`` runs with a config written for the test, on
a free port of 127.0.0.1 only, with its persistence file in the test's own
folder.  :meth:`Broker.kill` (SIGKILL, a crash) and :meth:`Broker.stop`
(SIGTERM, which saves the persistence file) can be followed by
:meth:`Broker.start` on the same port: the clubs' persistent sessions and the
messages queued for them survive as Mosquitto keeps them.

Readiness is a condition, never a sleep: the broker is up once a TCP connect
to its port succeeds.  Every wait is bounded and fails with the broker's log.

Use the ``broker`` fixture (anonymous access) or ``Broker(...)`` directly
with ``users`` (name -> password) and an ``acl`` text for the ACL tests.
:class:`SimTable` runs one simulated table in-process: a real
:class:`~controller.app.service.TableService` with the MQTT publisher on its
bus, playing ``deals`` deals and then closing the pulka (a whole session).
"""

from __future__ import annotations

import json
import os
import pwd
import shutil
import signal
import socket
import subprocess
import threading
import time
from pathlib import Path

import pytest

from conftest import cli, eventually

ROOT = Path(__file__).resolve().parents[2]
MOSQUITTO = "/usr/sbin/mosquitto"
MOSQUITTO_PASSWD = shutil.which("mosquitto_passwd") or "/usr/bin/mosquitto_passwd"
START_TIMEOUT_S = 15.0


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def accepts(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return True
    except OSError:
        return False


class Broker:
    """One mosquitto process; restartable on the same port with the same persistence."""

    def __init__(self, folder: Path, *, users: dict[str, str] | None = None, acl: str | None = None,
                 extra: str = "", template: str | None = None, scheme: str = "mqtt"):
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        self.port = free_port()
        self.users = users
        self.acl = acl
        self.extra = extra
        self.template = template        # a whole config, "{port}" and "{folder}" filled in
        self.scheme = scheme
        self.proc: subprocess.Popen | None = None
        self.log_path = self.folder / "mosquitto.log"
        self.conf_path = self.folder / "mosquitto.conf"
        self.starts = 0

    @property
    def url(self) -> str:
        return f"{self.scheme}://127.0.0.1:{self.port}"

    def _write_config(self) -> None:
        if self.template is not None:
            self.conf_path.write_text(self.template.replace("{port}", str(self.port))
                                      .replace("{folder}", str(self.folder)))
            return
        lines = [
            f"listener {self.port} 127.0.0.1",
            # as whoever runs the tests (mosquitto started as root would switch to user "mosquitto"
            # and could not write its persistence file into the test's folder)
            f"user {pwd.getpwuid(os.geteuid()).pw_name}",
            "persistence true",
            f"persistence_location {self.folder}/",
            "persistence_file mosquitto.db",
            # a club that is away must find every line queued for it (the default keeps 1000)
            "max_queued_messages 1000000",
            "max_inflight_messages 0",
            "set_tcp_nodelay true",
            f"log_dest file {self.log_path}",
            "log_type error",
            "log_type warning",
            "log_type notice",
            "log_type information",
            "connection_messages true",
        ]
        if self.users is None:
            lines.append("allow_anonymous true")
        else:
            pw = self.folder / "passwd"
            pw.write_text("")
            pw.chmod(0o600)
            for name, password in self.users.items():
                subprocess.run([MOSQUITTO_PASSWD, "-b", str(pw), name, password], check=True,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            lines += ["allow_anonymous false", f"password_file {pw}"]
        if self.acl is not None:
            acl = self.folder / "acl"
            acl.write_text(self.acl)
            acl.chmod(0o600)
            lines.append(f"acl_file {acl}")
        if self.extra:
            lines.append(self.extra)
        self.conf_path.write_text("\n".join(lines) + "\n")

    def log_text(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-4000:]
        except FileNotFoundError:
            return "(no broker log)"

    def start(self) -> "Broker":
        assert self.proc is None or self.proc.poll() is not None, "broker already running"
        self._write_config()
        self.proc = subprocess.Popen([MOSQUITTO, "-c", str(self.conf_path)], stdin=subprocess.DEVNULL,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        self.starts += 1
        deadline = time.monotonic() + START_TIMEOUT_S
        while not accepts(self.port):       # a TCP accept: TLS or not, the listener is up
            try:
                code = self.proc.wait(timeout=0.02)     # a pause between connect attempts
            except subprocess.TimeoutExpired:
                code = None
            if code is not None:
                err = self.proc.stderr.read().decode(errors="replace")
                raise RuntimeError(f"mosquitto exited with {code} on port {self.port}: {err}\n{self.log_text()}")
            if time.monotonic() > deadline:
                self.kill()
                raise RuntimeError(f"mosquitto did not accept connections on port {self.port} "
                                   f"within {START_TIMEOUT_S} s\n{self.log_text()}")
        return self

    def _end(self, sig: int) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.send_signal(sig)
        try:
            self.proc.wait(timeout=START_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=START_TIMEOUT_S)
        if self.proc.stderr is not None:
            self.proc.stderr.close()

    def kill(self) -> None:
        """A crash: SIGKILL, nothing saved beyond what mosquitto had already written."""
        self._end(signal.SIGKILL)

    def stop(self) -> None:
        """A clean stop: SIGTERM, mosquitto writes its persistence file."""
        self._end(signal.SIGTERM)

    def restart(self, *, crash: bool) -> None:
        self.kill() if crash else self.stop()
        self.start()


def mosquitto_missing() -> bool:
    return not os.access(MOSQUITTO, os.X_OK)


@pytest.fixture
def broker(tmp_path):
    if mosquitto_missing():
        pytest.fail(f"{MOSQUITTO} is not installed (apt-get install mosquitto)")
    b = Broker(tmp_path / "broker").start()
    yield b
    b.stop()


def wait_until(condition, timeout: float, what) -> None:
    """Poll ``condition`` until true; fail after ``timeout`` s saying what was awaited
    (``what`` may be a callable giving the state at the time of failure)."""
    if not eventually(condition, timeout, interval=0.02):     # a polling interval, never a synchronisation
        detail = what() if callable(what) else what
        raise AssertionError(f"gave up after {timeout:.0f} s waiting for {detail}")


class SimTable:
    """One simulated table in this process, publishing to ``broker_url`` as ``table_id``."""

    def __init__(self, log_dir: Path, broker_url: str, table_id: str, *, seed: int = 1, speed: float = 100.0,
                 deals: int = 2, mqtt: dict | None = None, names: dict | None = None, close: bool = True):
        from controller.app.backends.sim import SimSource
        from controller.app.mqtt import MqttConfig, MqttPublisher
        from controller.app.service import NEW_PULKA, TableService
        from controller.app.settings import settings_from_dict

        self.table_id = table_id
        self.log_dir = Path(log_dir)
        settings = settings_from_dict({"readers": {"backend": "sim"}, "display": {"kind": "none"},
                                       "sim": {"seed": seed, "speed": speed, "noise": True},
                                       **({"table": {"names": names}} if names else {})})
        section = {"broker": broker_url, "table_id": table_id, **(mqtt or {})}
        password = section.pop("password", None)
        config = MqttConfig.parse(section)
        self.publisher = MqttPublisher(config, password=password,
                                       ca_file=Path(config.ca_file) if config.ca_file else None)
        self.service = TableService(settings, None, self.log_dir, outputs=[self.publisher])
        self.session = self.service.open_session(new=True)
        self.played = threading.Event()

        def done() -> None:
            if close:               # else the session stays open (and current) after the deals
                self.service.queue.put(NEW_PULKA)
            self.played.set()

        self.source = SimSource(settings.game, settings.section("sim"), self.service.tracker.deck,
                                deals=deals, on_done=done)
        self.thread = threading.Thread(target=self.service.run, args=(self.source,), name=f"table {table_id}")

    @property
    def events_path(self) -> Path:
        return self.session.folder / "events.jsonl"

    @property
    def finished(self) -> bool:
        """The whole session is played and its summary.json written."""
        return (self.session.folder / "summary.json").exists()

    def start(self) -> "SimTable":
        self.thread.start()
        return self

    def stop(self) -> None:
        self.service.stop()
        self.thread.join(timeout=30)
        assert not self.thread.is_alive(), f"table {self.table_id} did not stop"


class RawClient:
    """A bare MQTT client for publishing what a table would not (garbage, foreign ids, gaps)."""

    def __init__(self, url: str, client_id: str, username=None, password=None):
        from controller.app.mqtt import make_client, parse_broker_url

        address = parse_broker_url(url)
        self.client = make_client(client_id, address, username=username, password=password)
        self.acks = {}
        self.client.on_publish = lambda c, u, mid, rc, props: self.acks.__setitem__(mid, rc)
        self.client.connect(address.host, address.port)
        self.client.loop_start()

    def publish(self, topic: str, payload, qos: int = 1, retain: bool = False):
        """Publish and wait for the broker's answer; returns its reason code."""
        info = self.client.publish(topic, payload, qos=qos, retain=retain)
        wait_until(lambda: info.mid in self.acks, 20, f"the broker's PUBACK for {topic}")
        return self.acks[info.mid]

    def close(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()


# --- mirrors ------------------------------------------------------------------------------------

def mirror_of(club_dir: Path, table: str, session_dir: Path) -> Path:
    return club_dir / table / session_dir.name


def mirror_complete(mirror: Path, original: Path) -> bool:
    try:
        return mirror.joinpath("events.jsonl").read_bytes() == original.joinpath("events.jsonl").read_bytes()
    except FileNotFoundError:
        return False


def describe(mirror: Path, original: Path):
    def text() -> str:
        have = len(mirror.joinpath("events.jsonl").read_bytes().splitlines()) if mirror.joinpath(
            "events.jsonl").exists() else 0
        want = len(original.joinpath("events.jsonl").read_bytes().splitlines())
        return f"the mirror {mirror} to equal the table's log ({have} of {want} lines)"
    return text


def replay_summary(folder: Path) -> dict:
    """What ``preftable replay`` prints for a session folder (the CLI, as a user runs it)."""
    args = ["replay", folder / "events.jsonl", "--config", folder / "config.toml", "--json"]
    if (folder / "deck.toml").exists():
        args += ["--deck", folder / "deck.toml"]
    out = cli(args)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


@pytest.fixture
def club_factory(tmp_path):
    clubs = []

    def make(url: str, **kw):
        from controller.app.club import Club

        club = Club(url, tmp_path / "club", **kw)
        club.start()
        wait_until(club.subscribed.is_set, 20, "the club board to subscribe")
        clubs.append(club)
        return club
    yield make
    for club in clubs:
        club.stop()
