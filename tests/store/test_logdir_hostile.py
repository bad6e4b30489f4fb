"""The log dir under hostile or careless use: a refused start writes nothing, no link is
followed, broken sessions neither hang nor crash-loop a start, a full disk loses no line."""

import os

from controller.store.files import LogDirLock
from controller.store.gamelog import SessionLog

from played import new_session, preftable


# --- a refused start writes nothing ------------------------------------------------------------

def test_run_new_refused_by_the_lock_does_not_close_the_running_tables_pulka(tmp_path):
    logs = tmp_path / "logs"
    session, _ = new_session(logs, 1)
    before = sorted(p.name for p in session.folder.iterdir())
    held = LogDirLock(logs).acquire()           # the table that is playing this session
    try:
        res = preftable("run", "--new", "--log-dir", logs)
    finally:
        held.release()
    assert res.returncode == 2 and res.stderr.count("\n") == 1 and "in use" in res.stderr
    assert sorted(p.name for p in session.folder.iterdir()) == before       # no summary.json
    assert SessionLog.sessions(logs) == [session.folder]
    assert SessionLog.newest_unfinished(logs).folder == session.folder
