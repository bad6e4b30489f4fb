"""The log dir under hostile or careless use: a refused start writes nothing, no link is
followed, broken sessions neither hang nor crash-loop a start, a full disk loses no line."""

import os

from controller.store.files import LogDirLock
from controller.store.gamelog import SessionLog

from conftest import cli
from played import new_session


# --- a refused start writes nothing ------------------------------------------------------------

def test_run_new_refused_by_the_lock_does_not_close_the_running_tables_pulka(tmp_path):
    logs = tmp_path / "logs"
    session, _ = new_session(logs, 1)
    before = sorted(p.name for p in session.folder.iterdir())
    held = LogDirLock(logs).acquire()           # the table that is playing this session
    try:
        res = cli(["run", "--new", "--log-dir", logs])   # (a flock: held against this process too)
    finally:
        held.release()
    assert res.returncode == 2 and res.stderr.count("\n") == 1 and "in use" in res.stderr
    assert sorted(p.name for p in session.folder.iterdir()) == before       # no summary.json
    assert SessionLog.sessions(logs) == [session.folder]
    assert SessionLog.newest_unfinished(logs).folder == session.folder


# --- broken sessions: no hang, no crash loop, no whole read -----------------------------------

import logging  # noqa: E402
import threading  # noqa: E402

import pytest  # noqa: E402

from controller.app.backends.display import DisplayConfig  # noqa: E402
from controller.app.service import TableService  # noqa: E402
from controller.app.settings import Settings  # noqa: E402

from played import GAME, consistent  # noqa: E402

BOUND_S = 20.0          # only matters when the code is broken (it would hang)


def _service(logs):
    return TableService(Settings(sections={"display": DisplayConfig("none")}), None, logs)


def _open_bounded(logs, fifo=None):
    """``open_session`` on a thread, given a bound; a FIFO it hangs on is opened for writing
    afterwards so a broken start never outlives its test."""
    result, error = [], []
    service = _service(logs)

    def run():
        try:
            result.append(service.open_session())
        except Exception as exc:  # noqa: BLE001 - handed to the test
            error.append(exc)
    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(BOUND_S)
    hung = thread.is_alive()
    if hung and fifo is not None:
        fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)     # releases a reader blocked in open()
        os.close(fd)
        thread.join(BOUND_S)
    if service._lock is not None:
        service._lock.release()
    assert not hung, "the start hung"
    assert not error, error
    return result[0]


def _set_aside_lines(caplog):
    return [r.getMessage() for r in caplog.records if "cannot be resumed" in r.getMessage()]


@pytest.mark.parametrize("name", ["config.toml", "deck.toml"])
def test_a_fifo_in_place_of_a_sessions_file_does_not_hang_a_start(tmp_path, caplog, name):
    logs = tmp_path / "logs"
    session, _ = new_session(logs, 1)
    path = session.folder / name
    path.unlink(missing_ok=True)
    os.mkfifo(path)
    opened = _open_bounded(logs, fifo=path)
    assert opened.folder != session.folder
    assert (logs / (session.folder.name + ".unreadable")).is_dir()
    (line,) = _set_aside_lines(caplog)
    assert "not a regular file" in line
    caplog.clear()
    again = _open_bounded(logs)                     # the next start: no second warning, no hang
    assert again.folder == opened.folder and not _set_aside_lines(caplog)


def test_a_fifo_in_place_of_the_journal_does_not_hang_a_start(tmp_path):
    logs = tmp_path / "logs"
    session, played = new_session(logs, 3)
    session.checkpoints_path.unlink()
    os.mkfifo(session.checkpoints_path)
    opened = _open_bounded(logs, fifo=session.checkpoints_path)
    assert opened.folder == session.folder                       # resumed, from the events
    opened.close()
    resumed = SessionLog(session.folder)
    tracker, _, _ = resumed.resume(GAME, None)
    assert tracker.summary() == played.summary()


def test_a_folder_at_the_repairs_temporary_with_a_damaged_log_is_no_crash_loop(tmp_path, caplog):
    caplog.set_level(logging.WARNING)
    logs = tmp_path / "logs"
    session, played = new_session(logs, 2)
    data = session.events_path.read_bytes()
    cut = data.index(b"\n", len(data) // 2) + 1
    session.events_path.write_bytes(data[:cut] + b"\0" * 40 + b"\n" + data[cut:])     # damaged
    (session.folder / "events.jsonl.tmp").mkdir()
    for _ in range(2):                                       # two starts in a row: no exit, no loop
        opened = _open_bounded(logs)
        assert opened.folder == session.folder
        opened.close()
    assert (session.folder / "events.jsonl.tmp.aside").is_dir()
    assert sum("events.jsonl.tmp" in r.getMessage() and "moved to" in r.getMessage()
               for r in caplog.records) == 1
    resumed = SessionLog(session.folder)
    tracker, _, _ = resumed.resume(GAME, None)
    consistent(resumed, tracker)
    assert tracker.summary() == played.summary()


def test_a_huge_sparse_config_is_refused_from_its_size_not_read(tmp_path, caplog):
    logs = tmp_path / "logs"
    session, _ = new_session(logs, 1)
    with open(session.folder / "config.toml", "r+b") as fh:
        fh.truncate(1 << 26)                                  # 64 MiB, sparse: no disk used
    opened = _open_bounded(logs)
    assert opened.folder != session.folder
    (line,) = _set_aside_lines(caplog)
    assert "larger than" in line
