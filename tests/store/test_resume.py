"""Resume repairs the log instead of trusting it or failing for ever."""

import json
import logging
import os
import signal
import subprocess

import pytest

from conftest import cli, fork_main
from controller.store.gamelog import SessionLog

from played import GAME, consistent, events, new_session, store_warnings, table_lines

BIG_T = "1" + "0" * 400


def _through_last_deal(session) -> list[bytes]:
    """The log's lines up to its last deal-result line (a power cut right after it)."""
    lines = session.events_path.read_bytes().splitlines(keepends=True)
    end = max(i for i, line in enumerate(lines) if b'"complete": ' in line and b'"writes": ' in line)
    return lines[:end + 1]


def test_a_torn_group_gets_its_missing_derived_lines(tmp_path, caplog):
    session, _ = new_session(tmp_path, 3)
    lines = _through_last_deal(session)
    whole = b"".join(lines)
    # the deal's last card: its line, then its play, trick and deal lines; cut after the play
    last_event = max(i for i, line in enumerate(lines) if b'"kind"' not in line)
    assert len(lines) - last_event >= 3
    session.events_path.write_bytes(b"".join(lines[:last_event + 2]))
    caplog.set_level(logging.WARNING)
    resumed = SessionLog(session.folder)
    tracker, count, _ = resumed.resume(GAME, None)
    assert session.events_path.read_bytes() == whole
    assert count == table_lines(session.events_path)
    consistent(resumed, tracker)
    assert len(store_warnings(caplog)) == 1
    caplog.clear()
    SessionLog(session.folder).resume(GAME, None)
    assert store_warnings(caplog) == []


def test_a_torn_group_cut_inside_a_line(tmp_path):
    session, _ = new_session(tmp_path, 2)
    whole = b"".join(_through_last_deal(session))
    session.events_path.write_bytes(whole[:-7])         # inside the deal line
    resumed = SessionLog(session.folder)
    tracker, _, _ = resumed.resume(GAME, None)
    assert session.events_path.read_bytes() == whole
    consistent(resumed, tracker)


def test_a_zeroed_block_mid_file_is_repaired_and_said(tmp_path, caplog):
    session, _ = new_session(tmp_path, 6)
    data = bytearray(session.events_path.read_bytes())
    at = len(data) // 2
    data[at:at + 4096] = bytes(4096)
    session.events_path.write_bytes(bytes(data))
    caplog.set_level(logging.WARNING)
    resumed = SessionLog(session.folder)
    tracker, count, _ = resumed.resume(GAME, None)
    consistent(resumed, tracker)
    (warning,) = store_warnings(caplog)
    assert "NUL" in warning and "unreadable" in warning
    kept = (session.folder / "events.jsonl.damaged").read_bytes()
    assert bytes(4096) in kept                           # the replaced bytes are kept, not lost silently
    assert count == table_lines(session.events_path)
    caplog.clear()
    tracker2, _, _ = SessionLog(session.folder).resume(GAME, None)
    assert tracker2.summary() == tracker.summary() and store_warnings(caplog) == []


def test_a_line_with_a_401_digit_t_in_the_log_is_repaired(tmp_path):
    session, _ = new_session(tmp_path, 2)
    with open(session.events_path, "ab") as fh:
        fh.write(('{"t": %s, "zone": "seat1", "event": "placed", "card": "7s"}\n' % BIG_T).encode())
    resumed = SessionLog(session.folder)
    tracker, _, _ = resumed.resume(GAME, None)
    consistent(resumed, tracker)


def test_replay_skips_a_401_digit_t_with_one_line(tmp_path):
    path = tmp_path / "e.jsonl"
    path.write_text('{"t": %s, "zone": "prikup", "event": "placed", "card": "7s"}\n'
                    '{"t": 1.0, "zone": "prikup", "event": "placed", "card": "8s"}\n' % BIG_T)
    res = cli(["replay", path, "--json"])
    assert res.returncode == 0, res.stderr
    assert res.stderr.count("\n") == 1 and ":1: skipped" in res.stderr and "Traceback" not in res.stderr
    (deal,) = json.loads(res.stdout)["deals"]          # the valid second line still counts
    assert deal["complete"] is False


def test_hub_emulator_script_skips_a_401_digit_t(tmp_path):
    path = tmp_path / "e.jsonl"
    path.write_text('{"t": %s, "zone": "prikup", "event": "placed", "card": "7s"}\n' % BIG_T)
    res = cli(["hub-emulator", "--script", path], input="quit\n")
    assert res.returncode == 0, res.stderr
    assert "Traceback" not in res.stderr and "e.jsonl:1:" in res.stderr


def test_settle_refuses_a_4000_digit_number_with_one_line(tmp_path):
    path = tmp_path / "pulka.json"
    path.write_text(json.dumps({"seat1": {"gora": int("9" * 4000)}, "seat2": {}, "seat3": {}}))
    res = cli(["settle", path, "--json"])
    assert res.returncode == 2
    assert res.stderr.count("\n") == 1 and "seat1.gora" in res.stderr and "Traceback" not in res.stderr


def test_a_4000_digit_price_is_refused_at_start_up(tmp_path):
    cfg = tmp_path / "c.toml"
    cfg.write_text("[rules]\nprogression = [%s]\n" % ("9" * 4000))
    ev = tmp_path / "e.jsonl"
    ev.write_text("".join(e.to_json() + "\n" for e in events(1)))
    res = cli(["replay", ev, "--config", cfg])
    assert res.returncode == 2
    assert res.stderr.count("\n") == 1 and "rules.progression" in res.stderr


def _run_until_ready(cfg, logs, env_extra=None):
    """Start ``preftable run``, wait for READY=1 on a notify socket; return the process."""
    import socket
    import tempfile

    # a short folder of its own (a socket's path has room for 107 bytes), gone once READY came
    with tempfile.TemporaryDirectory(prefix="notify-") as sock_dir:
        sock_path = os.path.join(sock_dir, "notify")
        server = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        server.bind(sock_path)
        server.settimeout(60)
        env = dict(NOTIFY_SOCKET=sock_path, WATCHDOG_USEC="", **(env_extra or {}))
        # forked from the test process: a real service process without an interpreter start
        proc = fork_main(["run", "--config", cfg, "--log-dir", logs], env=env, stderr=subprocess.PIPE)
        try:
            while "READY=1" not in server.recv(4096).decode():
                pass
        except TimeoutError:
            proc.kill()
            raise AssertionError(proc.communicate()[1])
        finally:
            server.close()
    return proc


def _stop(proc) -> str:
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    return err


@pytest.fixture
def sim_cfg(tmp_path):
    cfg = tmp_path / "table.toml"
    cfg.write_text('[readers]\nbackend = "sim"\n[sim]\nseed = 3\nspeed = 1\n[display]\nkind = "none"\n')
    return cfg


@pytest.mark.parametrize("damage", ["missing", "not toml", "bad rules"])
def test_a_session_whose_config_cannot_be_read_is_set_aside(tmp_path, sim_cfg, damage):
    logs = tmp_path / "logs"
    session, _ = new_session(logs, 1)
    config = session.folder / "config.toml"
    if damage == "missing":
        config.unlink()
    elif damage == "not toml":
        config.write_text("[rules\nprikup = ")
    else:
        config.write_text('[rules]\nprikup = "sometimes"\n')
    proc = _run_until_ready(sim_cfg, logs)
    err = _stop(proc)
    assert (logs / (session.folder.name + ".unreadable") / "events.jsonl").is_file()
    assert err.count("cannot be resumed") == 1 and "WARNING" in err
    sessions = SessionLog.sessions(logs)
    assert len(sessions) == 1 and sessions[0] != session.folder
    # the next start resumes the new session: no loop
    proc = _run_until_ready(sim_cfg, logs)
    err = _stop(proc)
    assert "cannot be resumed" not in err and "resumed" in err


def test_run_resumes_a_log_with_a_401_digit_t_and_says_so_once(tmp_path, sim_cfg):
    logs = tmp_path / "logs"
    session, _ = new_session(logs, 1)
    with open(session.events_path, "ab") as fh:
        fh.write(('{"t": %s, "zone": "seat1", "event": "placed", "card": "7s"}\n' % BIG_T).encode())
    err = _stop(_run_until_ready(sim_cfg, logs))
    assert err.count("repaired on resume") == 1 and "Traceback" not in err
    err = _stop(_run_until_ready(sim_cfg, logs))
    assert "repaired" not in err
    assert "WARNING controller.app.service: resumed" in err      # shows without -v
