"""The command line's smaller promises, each run as a user would: hints that work, Ctrl-C that says
what happened, ``run --new`` closing the previous pulka, ``enroll`` waiting for clear readers,
``doctor`` not contradicting itself.

Long-running commands are watched through what they write (files, lines of output), never
through sleeps; a watchdog only bounds how long a broken command may hang the test.  Each
runs as a process of its own with default signals (conftest: a Ctrl-C reaches it even when
the test runner was started with SIGINT ignored), ended when its test ends.
"""

from __future__ import annotations

import json
import shlex
import signal
import subprocess
import threading
from pathlib import Path

import pytest

from conftest import PREFTABLE, cli, preftable, run, wait_until

LIVENESS_S = 120


@pytest.fixture
def start(children):
    """``start(args, **popen_kwargs)``: ``preftable ARGS`` as a child with text pipes."""
    def start(args, **kw) -> subprocess.Popen:
        proc = children(PREFTABLE + list(args), text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE, **kw)
        watchdog = threading.Timer(LIVENESS_S, proc.kill)     # a hung command fails the test, not the run
        watchdog.daemon = True
        watchdog.start()
        return proc
    return start


def until(predicate, what: str):
    return wait_until(predicate, what, LIVENESS_S, interval=0.05)


def line_with(stream, text: str) -> str:
    for line in stream:
        if text in line:
            return line
    raise AssertionError(f"the output ended without {text!r}")


def session_events(log_dir: Path, lines: int = 1) -> Path | None:
    for events in sorted(log_dir.glob("*/events.jsonl")):
        if events.read_text().count("\n") >= lines:
            return events
    return None


def test_demo_says_how_many_and_its_replay_hint_works(tmp_path):
    res = preftable("demo", "--deals", "1", "--speed", "5", "--seed", "5", "--log-dir", tmp_path, timeout=LIVENESS_S)
    assert res.returncode == 0, res.stderr
    assert "played 1 deal in " in res.stdout and "1 deals" not in res.stdout
    [hint] = [l for l in res.stdout.splitlines() if l.startswith("replay it with: ")]
    command = shlex.split(hint.removeprefix("replay it with: "))
    assert command[0].endswith("preftable")
    again = run(command, timeout=LIVENESS_S, capture_output=True, text=True)
    assert again.returncode == 0 and "settlement (sochi)" in again.stdout
    assert "the session's own config.toml and deck.toml" in again.stderr


def test_ctrl_c_on_demo_says_where_the_log_is(tmp_path, start):
    proc = start(["demo", "--deals", "3", "--speed", "1", "--log-dir", str(tmp_path)])
    events = until(lambda: session_events(tmp_path, 3), "the demo's first table events")
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=LIVENESS_S)
    assert proc.returncode == 130
    assert "Traceback" not in err and "interrupted" in err and str(events.parent) in err


def sim_config(tmp_path: Path) -> Path:
    cfg = tmp_path / "sim.toml"
    cfg.write_text(f'[sim]\nseed = 3\nspeed = 50\n[display]\nkind = "none"\n[log]\ndir = "{tmp_path / "logs"}"\n')
    return cfg


def test_ctrl_c_on_run_and_run_new_closes_the_previous_pulka(tmp_path, start):
    cfg = sim_config(tmp_path)
    logs = tmp_path / "logs"
    proc = start(["run", "--config", str(cfg)])
    first = until(lambda: session_events(logs, 5), "the first session's events")
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=LIVENESS_S)
    assert proc.returncode == 0 and "stopped (Ctrl-C)" in err and str(first.parent) in err
    assert not (first.parent / "summary.json").exists()

    proc = start(["run", "--config", str(cfg), "--new"])
    until(lambda: len(list(logs.glob("*/events.jsonl"))) == 2, "a second session")
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=LIVENESS_S)
    assert proc.returncode == 0, err
    summary = json.loads((first.parent / "summary.json").read_text())
    assert json.loads(out.splitlines()[0]) == summary           # printed as the session ended
    # every field with every value of rules.bidding (FORMATS-contracts.md, second edition)
    assert list(summary) == ["deals", "pulka", "pulya_target", "finished_after_deal", "settlement"]


def test_enroll_waits_for_clear_readers_and_its_resume_hint_keeps_the_config(tmp_path, start):
    emulator = start(["hub-emulator", "--readers", "4"], stdin=subprocess.PIPE)
    try:
        port = emulator.stdout.readline().strip()
        emulator.stdin.write("place 1 04AABBCCDD1122\n")

        def reported() -> bool:               # the hub reports a tag after two polls
            emulator.stdin.write("state\n")
            emulator.stdin.flush()
            return emulator.stdout.readline().split() == ["#", "-", "04AABBCCDD1122", "-", "-"]

        until(reported, "the tag on reader 1 reported by the hub")
        cfg = tmp_path / "hub.toml"
        cfg.write_text(f'[readers]\nbackend = "hub"\n[hub]\nport = "{port}"\n[display]\nkind = "none"\n')
        deck = tmp_path / "deck.toml"
        enroll = start(["enroll", "--deck", str(deck), "--config", str(cfg)])
        assert "0/32 a tag lies on seat2: take it off first" in line_with(enroll.stdout, "a tag lies")
        emulator.stdin.write("remove 1\n")
        emulator.stdin.flush()
        assert "readers clear, place 7" in line_with(enroll.stdout, "readers clear")
        assert "04AABBCCDD1122" not in deck.read_text()            # the tag lying there was not enrolled
        enroll.send_signal(signal.SIGTERM)
        out, err = enroll.communicate(timeout=LIVENESS_S)
        assert enroll.returncode == 0
        assert f"preftable enroll --deck {deck} --config {cfg}" in err
    finally:
        emulator.terminate()
        emulator.communicate(timeout=LIVENESS_S)


def test_doctor_never_says_ok_about_a_device_it_failed(tmp_path):
    cfg = tmp_path / "hub.toml"
    cfg.write_text(f'[readers]\nbackend = "hub"\n[hub]\nport = "/dev/ttyACM77"\n[log]\ndir = "{tmp_path}"\n')
    res = cli(["doctor", "--config", str(cfg)])
    assert res.returncode == 1
    about = [l for l in res.stdout.splitlines() if "/dev/ttyACM77" in l and not l.startswith("      ")]
    assert about and about[0].startswith("FAIL")
    assert not [l for l in about if l.startswith("ok")], about


def test_hub_emulator_plays_only_after_the_hosts_hello(tmp_path, start):
    """A host that connects late still sees every move: the script starts at its HELLO."""
    from firmware_bridge.link import HubLink

    proc = start(["hub-emulator", "--simulate", "1", "--seed", "2", "--speed", "5"], stdin=subprocess.PIPE)
    try:
        port = proc.stdout.readline().strip()
        assert "playing once the host says HELLO" in line_with(proc.stderr, "HELLO")
        events = []
        link = HubLink(port, ["seat1", "seat2", "seat3", "prikup"], events.append)
        link.start()
        try:
            until(lambda: len(events) >= 2, "the first two moves")
        finally:
            link.stop()
        assert events[0].event == "placed" and events[0].zone == "prikup"    # the deal from its first card
    finally:
        proc.terminate()
        proc.communicate(timeout=LIVENESS_S)
