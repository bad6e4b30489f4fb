"""Many tables over MQTT against Debian's real mosquitto on loopback.

A table's game log reaches the club board's mirror complete and in order, the
mirror replays to the table's own summary, the ACL keeps a table to its own
table id, and garbage on the topics is counted without stopping the board.
Every wait is on a condition (mirror contents, acks), bounded, and says what
it waited for.
"""

import json
import os
import pwd
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from conftest import cli, spawn as spawn_child
from controller.app.club import Club, Mirror, board_text
from controller.app.mqtt import MARK_FILE, MqttConfig, Outbox, make_client, parse_broker_url
from controller.core.errors import ConfigError
from controller.store.replay import replay_file
from controller.core.config import load_game_config

from mqtt_broker import (ROOT, Broker, RawClient, SimTable, broker, club_factory, describe, free_port,  # noqa: F401
                         mirror_complete, mirror_of, mosquitto_missing, replay_summary, wait_until)

WAIT_S = 60


# --- configuration ----------------------------------------------------------------------------

def test_mqtt_section_parses_and_defaults():
    config = MqttConfig.parse({"broker": "mqtt://club.local", "table_id": "table-7"})
    assert (config.broker.host, config.broker.port, config.broker.tls) == ("club.local", 1883, False)
    assert config.topic("log") == "preftable/table-7/log"
    tls = MqttConfig.parse({"broker": "mqtts://club.local", "table_id": "t", "ca_file": "ca.pem",
                            "username": "t", "password_file": "pw", "topic_prefix": "venue/a"})
    assert (tls.broker.port, tls.broker.tls, tls.topic("state")) == (8883, True, "venue/a/t/state")


@pytest.mark.parametrize("section, key", [
    ({"broker": "mqtt://h", "table_id": "t", "colour": "red"}, "mqtt.colour"),
    ({"broker": "mqtt://h", "table_id": "a/b"}, "mqtt.table_id"),
    ({"broker": "mqtt://h", "table_id": "a#"}, "mqtt.table_id"),
    ({"broker": "mqtt://h", "table_id": "a+"}, "mqtt.table_id"),
    ({"broker": "mqtt://h", "table_id": ""}, "mqtt.table_id"),
    ({"broker": "mqtt://h"}, "mqtt.table_id"),
    ({"broker": "http://h", "table_id": "t"}, "mqtt.broker"),
    ({"broker": "mqtt://u:p@h", "table_id": "t"}, "mqtt.broker"),
    ({"broker": "mqtt://h:99999", "table_id": "t"}, "mqtt.broker"),
    ({"broker": "mqtt://h", "table_id": "t", "username": "u", "password": "p", "password_file": "f"},
     "mqtt.password_file"),
    ({"broker": "mqtt://h", "table_id": "t", "password": "p"}, "mqtt.username"),
    ({"broker": "mqtt://h", "table_id": "t", "ca_file": "ca.pem"}, "mqtt.ca_file"),
    ({"broker": "mqtt://h", "table_id": "t", "topic_prefix": "a/#"}, "mqtt.topic_prefix"),
    ({"broker": "mqtt://h", "table_id": "t", "topic_prefix": "a//b"}, "mqtt.topic_prefix"),
])
def test_mqtt_section_errors_name_the_key(section, key):
    with pytest.raises(ConfigError) as info:
        MqttConfig.parse(section)
    assert info.value.key == key and str(info.value).startswith(key)


# --- the outbox on its own ------------------------------------------------------------------------

def test_the_outbox_resumes_after_the_contiguous_acknowledged_mark(tmp_path, caplog):
    folder = tmp_path / "2026-12-01T08-00-00Z"
    folder.mkdir()
    lines = [json.dumps({"t": float(i)}) for i in range(1, 6)]
    (folder / "events.jsonl").write_text("\n".join(lines) + "\n" + '{"t": 6.0, "zo')   # a line being written
    box = Outbox(folder)
    assert box.take(3) == [(1, lines[0]), (2, lines[1]), (3, lines[2])]
    box.answer(2, True)
    assert box.acked == 0                               # line 1 not acknowledged yet
    box.answer(1, True)
    box.answer(3, False)                                # refused by the broker
    assert box.acked == 2 and box.refused == {3}
    box.save()
    assert json.loads((folder / MARK_FILE).read_text()) == {"line": 2}
    assert box.take(10) == [(4, lines[3]), (5, lines[4])]            # never the torn line
    box.close()
    again = Outbox(folder)                               # a restart (SIGKILL included) resumes after line 2
    assert again.acked == 2 and again.take(10) == [(3, lines[2]), (4, lines[3]), (5, lines[4])]
    again.close()
    (folder / MARK_FILE).write_text("garbage")
    assert Outbox(folder).acked == 0 and "unreadable" in caplog.text
    (folder / MARK_FILE).write_text('{"line": 40}')       # the log lost lines in a power cut
    behind = Outbox(folder)
    assert behind.acked == 5 and behind.take(10) == [] and "publishing from line 6" in caplog.text


# --- the mirror on its own -----------------------------------------------------------------------

def test_mirror_holds_lines_after_a_gap_until_it_is_filled(tmp_path, caplog):
    folder = tmp_path / "t1" / "2026-12-01T08-00-00Z"
    mirror = Mirror(folder)
    lines = [json.dumps({"t": float(i), "n": i}) for i in range(1, 7)]
    assert mirror.add(1, lines[0]) and mirror.add(2, lines[1])
    assert mirror.add(5, lines[4]) and mirror.add(4, lines[3])
    assert mirror.gap == (3, 3) and "lines 3-4 missing" in caplog.text    # reported as it opened
    assert (folder / "events.jsonl").read_text().splitlines() == lines[:2]      # nothing invented
    assert not mirror.add(2, lines[1]) and not mirror.add(5, lines[4])           # duplicates dropped
    mirror.close()
    reopened = Mirror(folder)                                                    # the held lines survive
    assert reopened.gap == (3, 3) and reopened.lines == 2
    assert reopened.add(3, lines[2]) and reopened.gap is None
    assert reopened.add(6, lines[5])
    assert (folder / "events.jsonl").read_text().splitlines() == lines
    assert not (folder / "pending.jsonl").exists()
    reopened.close()


# --- through the broker ---------------------------------------------------------------------------------

def test_one_table_whole_session_mirror_replays_to_the_tables_summary(tmp_path, broker, club_factory):
    club = club_factory(broker.url)
    table = SimTable(tmp_path / "logs", broker.url, "t1", seed=7, speed=200, deals=3).start()
    try:
        wait_until(lambda: table.finished, WAIT_S, "the simulated table to play its 3 deals")
        mirror = mirror_of(tmp_path / "club", "t1", table.session.folder)
        wait_until(lambda: mirror_complete(mirror, table.session.folder), WAIT_S,
                   describe(mirror, table.session.folder))
        wait_until(lambda: (mirror / "config.toml").exists(), WAIT_S, "the session's config copy")
        # the board also follows the next session the table opened after the pulka closed
        wait_until(lambda: club.tables["t1"].session == table.service.session.folder.name, WAIT_S,
                   "the board to show the table's new session")
    finally:
        table.stop()
    own = json.loads((table.session.folder / "summary.json").read_text())
    assert len(own["deals"]) == 3
    assert replay_summary(mirror) == own == replay_summary(table.session.folder)
    assert (mirror / "config.toml").read_bytes() == (table.session.folder / "config.toml").read_bytes()
    lines = (table.session.folder / "events.jsonl").read_bytes().count(b"\n")
    assert json.loads((table.session.folder / MARK_FILE).read_text()) == {"line": lines}
    board = club.text()
    assert "t1" in board and "seat1" in board and "bad messages" not in board


def test_a_gap_is_reported_and_nothing_invented_until_the_table_resends(tmp_path, broker, club_factory):
    club = club_factory(broker.url)
    raw = RawClient(broker.url, "fake-table")
    session = "2026-12-01T08-00-00Z"
    lines = [json.dumps({"t": float(i), "event": "placed"}) for i in range(1, 5)]

    def send(n: int) -> None:
        raw.publish("preftable/t9/log", json.dumps({"table": "t9", "session": session, "line": n,
                                                    "text": lines[n - 1]}))
    try:
        send(1)
        send(3)
        send(4)
        wait_until(lambda: "gap 2-2" in club.text(), WAIT_S, lambda: f"the board to report the gap:\n{club.text()}")
        events = tmp_path / "club" / "t9" / session / "events.jsonl"
        assert events.read_text().splitlines() == lines[:1]
        send(2)                                   # the table resends from its acknowledged point
        send(3)
        wait_until(lambda: club.mirror_lines("t9", session) == 4, WAIT_S, "the gap to be filled")
        assert events.read_text().splitlines() == lines and "gap" not in club.text()
    finally:
        raw.close()


GARBAGE = [
    ("preftable/t1/log", b"not json at all"),
    ("preftable/t1/log", b"\xff\xfe\x00"),
    ("preftable/t1/log", b"[1, 2, 3]"),
    ("preftable/t1/log", json.dumps({"table": "t1", "session": "../../etc", "line": 1, "text": "{}"})),
    ("preftable/t1/log", json.dumps({"table": "t1", "session": "yesterday", "line": 1, "text": "{}"})),
    ("preftable/t1/log", json.dumps({"table": "t1/x", "session": "2026-12-01T08-00-00Z", "line": 1,
                                     "text": "{}"})),
    ("preftable/t1/log", json.dumps({"table": "t#", "session": "2026-12-01T08-00-00Z", "line": 1, "text": "{}"})),
    ("preftable/t1/log", json.dumps({"table": "t1", "session": "2026-12-01T08-00-00Z", "line": -3,
                                     "text": "{}"})),
    ("preftable/t1/log", json.dumps({"table": "t1", "session": "2026-12-01T08-00-00Z", "line": 1,
                                     "text": "no json"})),
    ("preftable/t1/log", json.dumps({"table": "t1", "session": "2026-12-01T08-00-00Z", "line": 1,
                                     "text": "{}\n{}"})),
    ("preftable/t1/state", json.dumps({"table": "t1", "session": "2026-12-01T08-00-00Z", "snapshot": 3})),
    ("preftable/t1/session", json.dumps({"table": "t1", "session": "2026-12-01T08-00-00Z", "config": "= ="})),
    ("preftable/t1/status", b"maybe"),
]


def test_garbage_on_the_topics_is_counted_and_does_not_stop_the_board(tmp_path, broker, club_factory):
    club = club_factory(broker.url)
    raw = RawClient(broker.url, "vandal")
    try:
        for topic, payload in GARBAGE:
            raw.publish(topic, payload)
        wait_until(lambda: sum(club.bad.values()) == len(GARBAGE), WAIT_S,
                   lambda: f"every bad message counted: {dict(club.bad)}")
    finally:
        raw.close()
    assert {"not JSON", "wrong session", "foreign", "bad line", "bad state", "bad session",
            "bad status"} <= set(club.bad)
    assert "t1" not in club.tables and not (tmp_path / "club" / "t1").exists()     # nothing mirrored
    assert not (tmp_path / "etc").exists()
    # the board goes on: a real table afterwards is mirrored completely
    table = SimTable(tmp_path / "logs", broker.url, "t2", seed=3, speed=300, deals=1).start()
    try:
        wait_until(lambda: table.finished, WAIT_S, "the table to play its deal")
        mirror = mirror_of(tmp_path / "club", "t2", table.session.folder)
        wait_until(lambda: mirror_complete(mirror, table.session.folder), WAIT_S,
                   describe(mirror, table.session.folder))
    finally:
        table.stop()
    assert "bad messages: 13" in club.text()


# the ACL as shipped: a table writes (and reads back) only its own table id; the board only reads
ACL = (ROOT / "systemd" / "mosquitto" / "acl").read_text()


def test_the_acl_refuses_a_table_publishing_under_another_id(tmp_path):
    if mosquitto_missing():
        pytest.fail("mosquitto is not installed (apt-get install mosquitto)")
    users = {"t1": "pw-t1", "t2": "pw-t2", "club": "pw-club"}
    broker = Broker(tmp_path / "broker", users=users, acl=ACL).start()
    club = Club(broker.url, tmp_path / "club", username="club", password="pw-club")
    club.start()
    raw = None
    honest = impostor = None
    try:
        wait_until(club.subscribed.is_set, 20, "the board to subscribe with its password")
        raw = RawClient(broker.url, "t1-raw", username="t1", password="pw-t1")
        assert not raw.publish("preftable/t1/status", "online").is_failure
        refused = raw.publish("preftable/t2/log", json.dumps({"table": "t2", "session": "2026-12-01T08-00-00Z",
                                                               "line": 1, "text": "{}"}))
        assert refused.is_failure and refused.value == 0x87        # Not authorized

        # a table configured as t2 but logged in as t1: nothing acknowledged, nothing mirrored
        impostor = SimTable(tmp_path / "logs-impostor", broker.url, "t2", seed=2, speed=300, deals=1,
                            mqtt={"username": "t1", "password": "pw-t1"}).start()
        honest = SimTable(tmp_path / "logs-honest", broker.url, "t1", seed=2, speed=300, deals=1,
                          mqtt={"username": "t1", "password": "pw-t1"}).start()
        wait_until(lambda: honest.finished and impostor.finished, WAIT_S, "both tables to play their deal")
        mirror = mirror_of(tmp_path / "club", "t1", honest.session.folder)
        wait_until(lambda: mirror_complete(mirror, honest.session.folder), WAIT_S,
                   describe(mirror, honest.session.folder))
        wait_until(lambda: impostor.publisher.stats["refused"] > 0, WAIT_S, "the broker to refuse the impostor")
        assert impostor.publisher.stats["acked"] == 0
        assert json.loads((impostor.session.folder / MARK_FILE).read_text()) == {"line": 0}
        assert not (tmp_path / "club" / "t2").exists()
        # the board's user reads only
        reader = RawClient(broker.url, "club-raw", username="club", password="pw-club")
        try:
            assert reader.publish("preftable/t1/log", "{}").is_failure
        finally:
            reader.close()
    finally:
        for table in (honest, impostor):
            if table is not None:
                table.stop()
        if raw is not None:
            raw.close()
        club.stop()
        broker.stop()


@pytest.mark.slow
def test_twenty_tables_against_one_broker_give_twenty_complete_equal_mirrors(tmp_path, broker, club_factory):
    club = club_factory(broker.url)
    tables = [SimTable(tmp_path / f"logs-{i:02}", broker.url, f"table-{i:02}", seed=100 + i, speed=400, deals=1)
              for i in range(20)]
    try:
        for table in tables:
            table.start()
        for table in tables:
            wait_until(lambda: table.finished, 180, f"{table.table_id} to finish its session")
        for table in tables:
            mirror = mirror_of(tmp_path / "club", table.table_id, table.session.folder)
            wait_until(lambda: mirror_complete(mirror, table.session.folder), WAIT_S,
                       describe(mirror, table.session.folder))
    finally:
        for table in tables:
            table.stop()
    for table in tables:
        mirror = mirror_of(tmp_path / "club", table.table_id, table.session.folder)
        own = json.loads((table.session.folder / "summary.json").read_text())
        config = load_game_config(mirror / "config.toml")
        assert replay_file(mirror / "events.jsonl", config).summary() == own
    assert len(club.tables) == 20 and not club.bad
    assert all(t.table_id in board_text(club.tables, club.bad) for t in tables)


def make_certificates(folder: Path) -> tuple[Path, Path, Path]:
    """A CA and a server certificate for 127.0.0.1 signed by it (openssl, as the README says)."""
    folder.mkdir(parents=True, exist_ok=True)
    ca_key, ca, key, csr, crt = (folder / n for n in ("ca.key", "ca.crt", "club.key", "club.csr", "club.crt"))
    ext = folder / "san.ext"
    ext.write_text("subjectAltName = IP:127.0.0.1\n")

    def openssl(*args) -> None:
        subprocess.run(["openssl", *map(str, args)], check=True, capture_output=True, timeout=60)
    openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=preftable test CA",
            "-keyout", ca_key, "-out", ca)
    openssl("req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=127.0.0.1", "-keyout", key, "-out", csr)
    openssl("x509", "-req", "-in", csr, "-CA", ca, "-CAkey", ca_key, "-CAcreateserial", "-days", "2",
            "-extfile", ext, "-out", crt)
    for path in (key, crt):
        path.chmod(0o600)
    return ca, crt, key


def test_the_shipped_broker_config_and_acl_over_tls(tmp_path):
    """systemd/mosquitto/preftable.conf and acl as shipped, paths moved into the test's folder."""
    if mosquitto_missing():
        pytest.fail("mosquitto is not installed (apt-get install mosquitto)")
    shipped = ROOT / "systemd" / "mosquitto"
    folder = tmp_path / "broker"
    ca, crt, key = make_certificates(folder)
    acl = folder / "preftable.acl"
    acl.write_text((shipped / "acl").read_text())
    acl.chmod(0o600)
    passwd = folder / "preftable.passwd"
    passwd.write_text("")
    passwd.chmod(0o600)
    for user, password in (("club", "pw-club"), ("t1", "pw-t1")):
        subprocess.run(["mosquitto_passwd", "-b", str(passwd), user, password], check=True, timeout=30)
    conf = (shipped / "preftable.conf").read_text()
    for old, new in (("listener 8883", "listener {port} 127.0.0.1"), ("listener 1883 127.0.0.1", ""),
                     ("/etc/mosquitto/certs/club.crt", str(crt)), ("/etc/mosquitto/certs/club.key", str(key)),
                     ("/etc/mosquitto/preftable.passwd", str(passwd)), ("/etc/mosquitto/preftable.acl", str(acl))):
        assert old in conf, old
        conf = conf.replace(old, new)
    conf += (f"\nuser {pwd.getpwuid(os.geteuid()).pw_name}"
             "\npersistence true\npersistence_location {folder}/\nlog_dest file {folder}/mosquitto.log\n")
    broker = Broker(folder, template=conf, scheme="mqtts").start()
    club = Club(broker.url, tmp_path / "club", username="club", password="pw-club", ca_file=ca)
    club.start()
    table = None
    try:
        wait_until(club.subscribed.is_set, 30, lambda: f"the board to subscribe over TLS\n{broker.log_text()}")
        table = SimTable(tmp_path / "logs", broker.url, "t1", seed=4, speed=300, deals=1,
                         mqtt={"username": "t1", "password": "pw-t1", "ca_file": str(ca)})
        table.start()
        wait_until(lambda: table.finished, WAIT_S, "the table to play its deal")
        mirror = mirror_of(tmp_path / "club", "t1", table.session.folder)
        wait_until(lambda: mirror_complete(mirror, table.session.folder), WAIT_S,
                   describe(mirror, table.session.folder))
        assert table.publisher.stats["refused"] == 0
    finally:
        if table is not None:
            table.stop()
        club.stop()
        broker.stop()


# --- the command line ------------------------------------------------------------------------------------

def test_preftable_club_as_a_process_mirrors_and_stops_cleanly(tmp_path, broker):
    club_dir = tmp_path / "club"
    board = spawn_child([sys.executable, "-m", "controller", "club", "--broker", broker.url, "--dir",
                         str(club_dir)], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    table = None
    try:
        # the board has subscribed once it copies a retained session message published before
        raw = RawClient(broker.url, "announcer")
        try:
            raw.publish("preftable/t0/session", json.dumps({"table": "t0", "session": "2026-12-01T08-00-00Z",
                                                            "config": "", "deck": None}), retain=True)
        finally:
            raw.close()
        wait_until(lambda: (club_dir / "t0" / "2026-12-01T08-00-00Z" / "config.toml").exists(), WAIT_S,
                   "the board to subscribe")
        table = SimTable(tmp_path / "logs", broker.url, "t7", seed=5, speed=300, deals=1).start()
        wait_until(lambda: table.finished, WAIT_S, "the table to play its deal")
        mirror = mirror_of(club_dir, "t7", table.session.folder)
        wait_until(lambda: mirror_complete(mirror, table.session.folder), WAIT_S,
                   describe(mirror, table.session.folder))
    finally:
        if table is not None:
            table.stop()
        board.send_signal(signal.SIGTERM)
        out, err = board.communicate(timeout=30)
    assert board.returncode == 0, err
    assert "t7" in out and "table" in out and "Traceback" not in err


@pytest.mark.parametrize("args, key", [
    (["--broker", "http://127.0.0.1:1"], "--broker"),
    (["--broker", "mqtt://127.0.0.1:1", "--prefix", "a/#"], "--prefix"),
    (["--broker", "mqtt://127.0.0.1:1", "--password-file", "pw"], "--username"),
])
def test_preftable_club_bad_arguments_are_one_line_and_exit_2(tmp_path, args, key):
    out = cli(["club", "--dir", tmp_path / "club", *args])
    assert out.returncode == 2
    assert out.stderr.count("\n") == 1 and key in out.stderr and "Traceback" not in out.stderr


def test_run_with_a_bad_mqtt_section_is_one_line_naming_the_key(tmp_path):
    cfg = tmp_path / "table.toml"
    cfg.write_text('[mqtt]\nbroker = "mqtt://127.0.0.1:1"\ntable_id = "a/b"\n')
    out = cli(["run", "--config", cfg, "--log-dir", tmp_path / "logs"])
    assert out.returncode == 2
    assert out.stderr.count("\n") == 1 and "mqtt.table_id" in out.stderr


def test_doctor_reports_an_unreachable_broker(tmp_path):
    cfg = tmp_path / "table.toml"
    cfg.write_text(f'[mqtt]\nbroker = "mqtt://127.0.0.1:{free_port()}"\ntable_id = "t1"\n')
    out = cli(["doctor", "--config", cfg])
    assert "MQTT broker 127.0.0.1" in out.stdout and "unreachable" in out.stdout, out.stdout + out.stderr


# --- the state message stays lean ------------------------------------------------------------------

@pytest.mark.parametrize("bidding", [False, True], ids=["raspasovka", "contracts"])
def test_the_state_message_does_not_grow_with_the_deals_played(bidding):
    """The retained state carries the table now, never the session's history: its size at the same
    moment of deal 1 and of deal 12 differs by a few digits (seq, pulka numbers), while the whole
    snapshot (what /api/state serves) grows by a deal's entry every deal."""
    from controller.app.mqtt import board_state
    from controller.app.sim import BiddingSimulator, TableSimulator, make_deck
    from controller.core.config import GameConfig, Rules, Table
    from controller.core.snapshot import SnapshotBuilder
    from controller.core.tracker import DealTracker

    game = GameConfig(Table(players=3, names={"seat1": "Anna", "seat2": "Boris", "seat3": "Vera"}),
                      Rules(bidding=bidding))
    deck = make_deck(5, token_sets=3 if bidding else 0)
    sim = (BiddingSimulator if bidding else TableSimulator)(game, seed=11, deck=deck)
    tracker, builder = DealTracker(game, deck), SnapshotBuilder("2026-12-01T08-00-00Z")
    lean, whole, seq = [], [], 0
    for _ in range(12):
        events = list(sim.deal())
        for n, event in enumerate(events, start=1):
            tracker.feed(event)
            seq += 1
            if n == len(events) // 2:              # mid-deal: the same moment of every deal
                snap = builder.build(tracker, seq=seq)
                lean.append(len(json.dumps(board_state(snap), ensure_ascii=False)))
                whole.append(len(json.dumps(snap.to_dict(), ensure_ascii=False)))
    assert len(tracker.records) == 12
    assert whole[-1] - whole[0] > 11 * 500            # the history grows (so this test can tell)
    assert max(lean) - min(lean) <= 200, lean          # digits and a trick's cards, never a deal's entry
    assert max(lean) < 2500, lean
    snap = builder.build(tracker, seq=seq)
    state = board_state(snap)
    assert "deals" not in state and state["deals_played"] == 12
    assert state["pulka"] == snap.pulka and state["settlement"] == snap.settlement


def test_the_board_shows_a_table_from_its_lean_retained_state(tmp_path, broker, club_factory):
    """Six deals into a pulka, every state the broker carried has stayed small, and the board
    reads the players, the deals played and the pulka from it."""
    seen: list[bytes] = []
    subscribed = threading.Event()
    address = parse_broker_url(broker.url)
    watcher = make_client("state-watcher", address)
    watcher.on_message = lambda c, u, msg: seen.append(msg.payload)
    watcher.on_subscribe = lambda *a: subscribed.set()
    watcher.connect(address.host, address.port)
    watcher.subscribe("preftable/t5/state", 1)
    watcher.loop_start()
    club = club_factory(broker.url)

    def played() -> int:
        with club.lock:
            view = club.tables.get("t5")
            return view.snapshot.get("deals_played", 0) if view else 0
    try:
        wait_until(subscribed.is_set, 20, "the watcher's subscription")
        table = SimTable(tmp_path / "logs", broker.url, "t5", seed=3, speed=200, deals=1000).start()
        try:
            wait_until(lambda: played() >= 6, WAIT_S, lambda: f"the board to see 6 deals played ({played()})")
        finally:
            table.stop()
    finally:
        watcher.disconnect()
        watcher.loop_stop()
    docs = [json.loads(p) for p in list(seen)]
    assert docs and all("deals" not in d["snapshot"] for d in docs)
    # six deals of history would be some 10 kB; the moments caught differ (cards on the table,
    # mistakes waiting), the deals played never show
    sizes = {d["snapshot"]["deals_played"]: len(p) for p, d in zip(seen, docs)}
    assert max(len(p) for p in seen) < 2000, sizes
    board = club.board()["tables"][0]
    with club.lock:
        pulka = club.tables["t5"].snapshot["pulka"]
    assert board["table"] == "t5" and board["deals_played"] >= 6
    assert [p["seat"] for p in board["players"]] == ["seat1", "seat2", "seat3"]
    assert {p["seat"]: (p["gora"], p["pulya"]) for p in board["pulka"]} == {
        s: (v["gora"], v["pulya"]) for s, v in pulka.items()}
