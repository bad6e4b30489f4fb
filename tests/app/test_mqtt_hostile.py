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

def _club(*args, **kw):
    import subprocess
    import sys

    from mqtt_broker import ROOT
    return subprocess.run([sys.executable, "-m", "controller", "club", *map(str, args)], cwd=ROOT,
                          capture_output=True, text=True, timeout=60, **kw)


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

    from mqtt_broker import ROOT

    board = subprocess.Popen([sys.executable, "-m", "controller", "club", "--broker", broker.url, "--dir",
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
        if board.poll() is None:
            board.kill()
            board.communicate()
    assert board.returncode == 0, err
    assert "stopped (Ctrl-C)" in err and str(tmp_path / "club") in err and "Traceback" not in err


from mqtt_broker import broker  # noqa: E402,F401  (a fixture)
