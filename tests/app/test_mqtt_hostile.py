"""The MQTT publisher and the club board under hostile use: links in the log dir, table ids
that are not names, descriptors, unbounded files, escape sequences, deep JSON."""

import json
import os

import pytest

from controller.app.mqtt import MARK_FILE, Outbox, unfinished_outboxes
from controller.core.errors import LogError

SESSION = "2026-12-01T08-00-00Z"


def _session(folder, lines=5):
    folder.mkdir(parents=True)
    (folder / "events.jsonl").write_text("".join(json.dumps({"t": float(i)}) + "\n" for i in range(lines)))
    return folder


# --- links ---------------------------------------------------------------------------------------

def test_the_acked_mark_is_never_written_through_a_link(tmp_path):
    folder = _session(tmp_path / "logs" / SESSION)
    outside = tmp_path / "outside.txt"
    outside.write_text("someone else's file\n")
    (folder / MARK_FILE).symlink_to(outside)
    box = Outbox(folder)
    box.take(3)
    for line in (1, 2, 3):
        box.answer(line, True)
    box.save()
    box.close()
    assert outside.read_text() == "someone else's file\n"
    assert not (folder / MARK_FILE).is_symlink()
    assert json.loads((folder / MARK_FILE).read_text()) == {"line": 3}


def test_a_symlinked_session_folder_is_not_published(tmp_path):
    elsewhere = _session(tmp_path / "elsewhere" / SESSION)
    (elsewhere / MARK_FILE).write_text('{"line": 0}\n')
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / SESSION).symlink_to(elsewhere)
    assert unfinished_outboxes(logs) == []
    with pytest.raises(LogError):
        Outbox(logs / SESSION)


# --- the board's command: an unreachable broker, Ctrl-C ------------------------------------------

def _club(*args):
    """``preftable club ARGS`` called in this process: its status, stdout and stderr."""
    from conftest import cli
    return cli(["club", *args])


def test_club_with_an_unreachable_broker_at_start_is_one_line_and_exit_2(tmp_path):
    from mqtt_broker import free_port

    out = _club("--broker", f"mqtt://127.0.0.1:{free_port()}", "--dir", tmp_path / "club")
    assert out.returncode == 2, out
    assert out.stderr.count("\n") == 1 and "--broker" in out.stderr and "Traceback" not in out.stderr


def test_club_ctrl_c_says_it_stopped_and_where_the_mirrors_are(tmp_path, broker):
    import signal
    import subprocess
    import sys
    import threading

    from conftest import end, spawn
    from mqtt_broker import ROOT

    # default signals in the board whatever this runner inherited (a runner started with SIGINT
    # ignored would otherwise start a board that ignores the Ctrl-C below)
    board = spawn([sys.executable, "-m", "controller", "club", "--broker", broker.url, "--dir",
                   str(tmp_path / "club")], cwd=ROOT, stdout=subprocess.PIPE,
                  stderr=subprocess.PIPE, text=True)
    try:
        # the board draws itself once the broker has taken it: its first line on stdout
        first = []
        reader = threading.Thread(target=lambda: first.append(board.stdout.readline()), daemon=True)
        reader.start()
        reader.join(30)
        assert first and first[0].startswith("preftable club:"), first
        board.send_signal(signal.SIGINT)
        out, err = board.communicate(timeout=30)
    finally:
        end(board)
    assert board.returncode == 0, err
    assert "stopped (Ctrl-C)" in err and str(tmp_path / "club") in err and "Traceback" not in err


from mqtt_broker import broker  # noqa: E402,F401  (a fixture)


# --- the club board: ids, descriptors, bounds, terminals, deep JSON -------------------------------

def _board(tmp_path):
    from controller.app.club import Club

    return Club("mqtt://127.0.0.1:1", tmp_path / "club")      # never connected: handle() only


@pytest.mark.parametrize("table_id", ["..", ".", ".hidden", "a b", "t\u202e1", "é"])
def test_a_table_id_that_is_not_a_safe_name_is_refused_by_the_table_and_the_board(tmp_path, table_id):
    from controller.app.club import BadMessage
    from controller.app.mqtt import MqttConfig
    from controller.core.errors import ConfigError

    with pytest.raises(ConfigError) as info:
        MqttConfig.parse({"broker": "mqtt://h", "table_id": table_id})
    assert info.value.key == "mqtt.table_id"
    club = _board(tmp_path)
    line = {"table": table_id, "session": SESSION, "line": 1, "text": '{"t": 0.0}'}
    with pytest.raises(BadMessage) as bad:
        club.handle(f"preftable/{table_id}/log", json.dumps(line).encode())
    assert bad.value.reason == "bad table id"
    assert not (tmp_path / SESSION).exists() and not (tmp_path / "club").exists()


def test_the_shipped_acl_keeps_dot_dot_and_slashed_users_off_other_topics(tmp_path):
    from mqtt_broker import ROOT, Broker, RawClient

    acl = (ROOT / "systemd" / "mosquitto" / "acl").read_text()
    users = {"..": "pw", ".": "pw", "t1/log": "pw", "t1": "pw", "club": "pw"}
    b = Broker(tmp_path / "broker", users=users, acl=acl).start()
    try:
        results = {}
        for user, where in (("..", "preftable/../log"), (".", "preftable/./log"),
                            ("t1/log", "preftable/t1/log"), ("t1", "preftable/t1/log"),
                            ("club", "preftable/t1/fetch"), ("club", "preftable/t1/log")):
            client = RawClient(b.url, f"c{len(results)}", username=user, password="pw")
            try:
                results[(user, where)] = client.publish(where, b"{}").is_failure
            finally:
                client.close()
    finally:
        b.stop()
    assert results == {("..", "preftable/../log"): True, (".", "preftable/./log"): True,
                       ("t1/log", "preftable/t1/log"): True, ("t1", "preftable/t1/log"): False,
                       ("club", "preftable/t1/fetch"): False, ("club", "preftable/t1/log"): True}


def _open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def test_mirrored_sessions_keep_no_file_open(tmp_path):
    club = _board(tmp_path)
    before = _open_fds()
    for n in range(60):
        session = f"2026-12-01T08-{n // 60:02d}-{n % 60:02d}Z"
        for line in (1, 2, 4):       # a gap too: pending.jsonl
            doc = {"table": "t1", "session": session, "line": line, "text": json.dumps({"t": float(line)})}
            club.handle("preftable/t1/log", json.dumps(doc).encode())
    assert _open_fds() - before < 5
    assert len(club.tables["t1"].mirrors) == 60


def test_the_lines_held_after_a_gap_are_bounded(tmp_path, monkeypatch):
    from controller.app import club_mirror as board

    monkeypatch.setattr(board, "MAX_HELD", 50)
    mirror = board.Mirror(tmp_path / "t1" / SESSION)
    for line in range(2, 302):
        mirror.add(line, json.dumps({"t": float(line)}))
    assert len(mirror.pending) == 50 and mirror.dropped == 250
    assert len((mirror.folder / "pending.jsonl").read_text().splitlines()) == 50
    mirror.add(1, json.dumps({"t": 1.0}))
    assert mirror.lines == 51 and mirror.gap is None
    mirror.close()


def test_player_names_cannot_drive_the_boards_terminal(tmp_path):
    club = _board(tmp_path)
    names = {"seat1": "\x1b[2J\x1b]0;owned\x07Anna", "seat2": "Bo\rris\x9b31m", "seat3": "\u202eVera"}
    state = {"table": "t1", "session": SESSION, "lines": 0, "acked": 0,
             "snapshot": {"seats": ["seat1", "seat2", "seat3"], "names": names, "phase": "idle"}}
    club.handle("preftable/t1/state", json.dumps(state).encode())
    text = club.text()
    assert not any(ord(ch) < 32 and ch != "\n" or 0x7f <= ord(ch) <= 0x9f or ch == "\u202e" for ch in text)
    assert "Anna" in text and "Vera" in text


def test_a_100k_deep_json_message_is_one_log_line_without_a_traceback(tmp_path, caplog):
    club = _board(tmp_path)

    class Message:
        topic, payload, qos, mid = "preftable/t1/state", b"[" * 100_000 + b"]" * 100_000, 0, 1

    club._on_message(club.client, None, Message())
    records = [r for r in caplog.records if r.name == "controller.app.club"]
    assert len(records) == 1 and records[0].exc_info is None and "nested too deeply" in records[0].getMessage()
    assert club.bad == {"not JSON": 1}


# --- the fetch topic, on its own -------------------------------------------------------------------

def test_a_fetch_request_is_checked_and_answered_from_the_log_by_line_number(tmp_path):
    from controller.app.mqtt import fetch_request, log_lines

    folder = _session(tmp_path / SESSION, lines=2000)
    assert fetch_request(json.dumps({"session": SESSION, "from": 3, "to": 5}).encode()) == (SESSION, 3, 5)
    for bad in (b"[" * 100_000, b"{}", json.dumps({"session": "../x", "from": 1, "to": 2}).encode(),
                json.dumps({"session": SESSION, "from": 0, "to": 2}).encode(),
                json.dumps({"session": SESSION, "from": 5, "to": 2}).encode(),
                json.dumps({"session": SESSION, "from": True, "to": 2}).encode()):
        assert fetch_request(bad) is None
    lines = (folder / "events.jsonl").read_text().splitlines()
    assert log_lines(folder / "events.jsonl", 1999, 2500) == [(1999, lines[1998]), (2000, lines[1999])]
    assert log_lines(folder / "events.jsonl", 2, 3) == [(2, lines[1]), (3, lines[2])]


def test_a_mirror_asks_for_what_it_lacks_once_until_the_answer_stalls(tmp_path):
    from controller.app.club import FETCH_RETRY_S, Mirror

    mirror = Mirror(tmp_path / "t1" / SESSION)
    mirror.known = 1500                                   # the table's state: 1,500 lines
    assert mirror.fetch_due(0.0) == (1, 1000)
    assert mirror.fetch_due(0.5) is None                  # asked; the answer is on its way
    mirror.add(1, json.dumps({"t": 1.0}))
    assert mirror.fetch_due(FETCH_RETRY_S + 0.4) is None  # coming in: no new request
    assert mirror.fetch_due(2 * FETCH_RETRY_S + 1) == (2, 1001)     # stalled: asked again
    mirror.close()
