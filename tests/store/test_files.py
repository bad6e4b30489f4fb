"""A full disk, no lock, symlinks followed and whole files read."""

import json
import os
import signal
import stat
import subprocess
import sys
import threading

import pytest

from conftest import cli, spawn as spawn_child
from controller.core.tracker import DealTracker
from controller.app.service import TableService
from controller.app.backends.display import DisplayConfig
from controller.app.settings import Settings
from controller.store.gamelog import SessionLog

from played import GAME, ROOT, consistent, events, new_session, play

from test_resume import _run_until_ready, _stop, sim_cfg  # noqa: F401  (a fixture)


# --- 5: one service per log dir ------------------------------------------------------------

def test_a_second_service_on_the_log_dir_is_refused_naming_the_first(tmp_path):
    from controller.store.files import LogDirLock

    logs = tmp_path / "logs"
    held = LogDirLock(logs).acquire()
    try:
        res = cli(["run", "--log-dir", logs])       # (a flock: held against this process too)
    finally:
        held.release()
    assert res.returncode == 2
    assert res.stderr.count("\n") == 1 and f"pid {os.getpid()}" in res.stderr
    assert list(logs.iterdir()) == []                   # it wrote nothing


def test_two_runs_never_interleave(tmp_path, sim_cfg):
    logs = tmp_path / "logs"
    first = _run_until_ready(sim_cfg, logs)
    try:
        second = cli(["run", "--config", sim_cfg, "--log-dir", logs])
        assert second.returncode == 2 and f"pid {first.pid}" in second.stderr
    finally:
        _stop(first)
    (session,) = SessionLog.sessions(logs)
    resumed = SessionLog(session)
    tracker, _, _ = resumed.resume(GAME, None)
    consistent(resumed, tracker)


# --- 6: no symlink followed, fixed modes ---------------------------------------------------

def _outside(tmp_path, text="players' other file\n"):
    path = tmp_path / "outside.txt"
    path.write_text(text)
    return path


def _service(logs):
    return TableService(Settings(sections={"display": DisplayConfig("none")}), None, logs)


def test_a_symlinked_events_file_is_set_aside_not_cut(tmp_path):
    logs = tmp_path / "logs"
    session, _ = new_session(logs, 1)
    outside = _outside(tmp_path, session.events_path.read_text() + '{"t": 99, "zone": "se')
    before = outside.read_bytes()
    session.events_path.unlink()
    session.events_path.symlink_to(outside)
    service = _service(logs)
    opened = service.open_session()
    assert opened.folder != session.folder
    assert outside.read_bytes() == before
    assert (logs / (session.folder.name + ".unreadable")).is_dir()


def test_a_symlinked_journal_is_replaced_not_followed(tmp_path):
    logs = tmp_path / "logs"
    session, played = new_session(logs, 3)
    outside = _outside(tmp_path, session.checkpoints_path.read_text())
    before = outside.read_bytes()
    session.checkpoints_path.unlink()
    session.checkpoints_path.symlink_to(outside)
    tracker, _, _ = SessionLog(session.folder).resume(GAME, None)
    assert tracker.summary() == played.summary()
    assert outside.read_bytes() == before
    assert not session.checkpoints_path.is_symlink() and session.checkpoints_path.stat().st_size > 0


def test_a_symlinked_session_folder_is_ignored(tmp_path):
    logs = tmp_path / "logs"
    elsewhere, _ = new_session(tmp_path / "elsewhere", 1)
    before = elsewhere.events_path.read_bytes()
    logs.mkdir()
    (logs / "2099-01-01T00-00-00Z").symlink_to(elsewhere.folder)
    assert SessionLog.newest_unfinished(logs) is None
    opened = _service(logs).open_session()
    assert opened.folder.parent == logs and not opened.folder.is_symlink()
    assert elsewhere.events_path.read_bytes() == before


def test_a_planted_summary_tmp_symlink_is_not_written_through(tmp_path):
    session, played = new_session(tmp_path, 1)
    outside = _outside(tmp_path)
    (session.folder / "summary.json.tmp").symlink_to(outside)
    path = session.finish(played.summary())
    assert outside.read_text() == "players' other file\n"
    assert json.loads(path.read_text()) == json.loads(json.dumps(played.summary()))
    assert not path.is_symlink()


def test_log_files_are_0640_and_folders_0750_whatever_the_umask(tmp_path):
    old = os.umask(0)
    try:
        session, played = new_session(tmp_path / "logs", 2)
        session.finish(played.summary())
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "logs").stat().st_mode) == 0o750
    assert stat.S_IMODE(session.folder.stat().st_mode) == 0o750
    for name in ("events.jsonl", "checkpoints.jsonl", "config.toml", "summary.json"):
        assert stat.S_IMODE((session.folder / name).stat().st_mode) == 0o640, name


# --- 4: a full disk ------------------------------------------------------------------------

@pytest.fixture
def small_disk(tmp_path):
    """A 512 KiB tmpfs (needs root; the table's own Pi service runs as root)."""
    mnt = tmp_path / "disk"
    mnt.mkdir()
    res = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=512k", "tmpfs", str(mnt)],
                         capture_output=True, text=True)
    if res.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {res.stderr.strip()}")
    yield mnt
    subprocess.run(["umount", "-l", str(mnt)], check=True)


def _fill(mnt):
    """Fill the disk to the last byte; return the filler file."""
    filler = mnt / "filler"
    with open(filler, "wb", buffering=0) as fh:
        for size in (65536, 4096, 1):
            try:
                while True:
                    fh.write(b"x" * size)
            except OSError:
                pass
    return filler


def test_a_full_disk_keeps_the_game_in_memory_and_writes_it_later(small_disk, caplog):
    session = SessionLog.create(small_disk / "logs", GAME, None)
    tracker = DealTracker(GAME)
    stream = events(3)
    play(session, tracker, stream[:20])
    written = session.events_path.read_bytes()
    filler = _fill(small_disk)
    play(session, tracker, stream[20:60])                # no exception: the game goes on
    assert session.waiting > 0
    now = session.events_path.read_bytes()                # whole groups only (what the last
    assert now.startswith(written) and now.endswith(b"\n")  # page's slack took), nothing torn
    errors = [r for r in caplog.records if r.levelname == "ERROR"]
    assert len(errors) == 1 and "disk is full" in errors[0].getMessage()
    filler.unlink()
    play(session, tracker, stream[60:])
    assert session.waiting == 0
    session.close()
    resumed = SessionLog(session.folder)
    again, count, _ = resumed.resume(GAME, None)
    assert count == len(stream) and again.summary() == tracker.summary()
    consistent(resumed, again)


def _read_until(proc, needle: str) -> list[str]:
    said = []
    while not any(needle in line for line in said):
        line = proc.stderr.readline()
        assert line, "".join(said)          # the service ended instead of going on
        said.append(line)
    return said


@pytest.fixture
def quick_sim_cfg(tmp_path):
    """The simulated table at 100 times a table's pace: a filled disk still takes the
    lines of the events file's last page (a page's slack), some forty cards, before a
    write fails; at a table's pace that is ten seconds of waiting for nothing."""
    cfg = tmp_path / "quick.toml"
    cfg.write_text('[readers]\nbackend = "sim"\n[sim]\nseed = 3\nspeed = 100\n[display]\nkind = "none"\n')
    return cfg


def test_a_full_disk_at_start_is_no_crash_loop(small_disk, quick_sim_cfg):
    logs = small_disk / "logs"
    new_session(logs, 1)
    filler = _fill(small_disk)
    for restart in range(2):                # every restart starts, says why, and goes on
        proc = _run_until_ready(quick_sim_cfg, logs)
        said = _read_until(proc, "disk is full")            # the simulated table laid a card
        proc.send_signal(signal.SIGTERM)    # stopped while full: it waits for space, keeping the lines
        said += _read_until(proc, "wait for space")
        if restart == 0:
            proc.kill()                     # systemd's stop timeout ran out
            proc.communicate(timeout=30)
            continue
        filler.unlink()                     # space comes back: the kept lines are written, then it stops
        _, rest = proc.communicate(timeout=30)
        err = "".join(said) + rest
        assert proc.returncode == 0 and "Traceback" not in err and err.count("disk is full") == 1
        assert "could not be written" not in err
    (session,) = SessionLog.sessions(logs)
    assert (session / "events.jsonl").read_bytes().endswith(b"\n")
    resumed = SessionLog(session)
    tracker, _, _ = resumed.resume(GAME, None)
    consistent(resumed, tracker)


# --- 8: streaming reads ----------------------------------------------------------------------

def test_replay_reads_standard_input(tmp_path):
    path = tmp_path / "e.jsonl"
    path.write_text("".join(e.to_json() + "\n" for e in events(2)))
    from_file = cli(["replay", path, "--json"])
    from_stdin = cli(["replay", "-", "--json"], input=path.read_text())
    assert from_stdin.returncode == 0 and from_stdin.stdout == from_file.stdout


def test_replay_of_a_long_stdin_keeps_memory_flat():
    """60 MB on standard input (derived lines and one 30 MB line): memory stays far below it."""
    # The replay runs under a small wrapper that reports its child's peak memory: a child the
    # test process spawns directly is born sharing the test process's memory (vfork), and its
    # ru_maxrss then counts the whole pytest process (140 MB late in a full run).
    wrapper = ("import resource, subprocess, sys; code = subprocess.call(sys.argv[1:]); "
               "sys.stderr.write('maxrss %d\\n' % resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss); "
               "sys.exit(code)")
    proc = spawn_child([sys.executable, "-c", wrapper, sys.executable, "-m", "controller", "replay", "-",
                        "--json"], cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE)

    def feed():
        line = b'{"t": 1.0, "kind": "play", "deal": 1, "zone": "seat1", "card": "7s"}\n'
        block = line * 10_000
        for _ in range(30_000_000 // len(block)):
            proc.stdin.write(block)
        for _ in range(30):
            proc.stdin.write(b"x" * 1_000_000)
        proc.stdin.write(b"\n" + events(1)[0].to_json().encode() + b"\n")
        proc.stdin.close()

    writer = threading.Thread(target=feed)
    writer.start()
    out = proc.stdout.read()
    err = proc.stderr.read()
    writer.join()
    assert proc.wait() == 0, err
    *said, last = err.decode().splitlines()
    maxrss_kb = int(last.removeprefix("maxrss "))
    assert len(json.loads(out)["deals"]) == 1
    assert len(said) == 1 and "longer than" in said[0]
    assert maxrss_kb < 60 * 1024, f"{maxrss_kb / 1024:.0f} MB"
