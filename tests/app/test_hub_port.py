"""A hub port that exists but is not a serial device (``/dev/null``, a regular file, a folder)
stops ``run`` and ``enroll`` with one line and exit status 2 -- with or without ``--wait`` --
instead of the link reopening it for ever; a pty (what the emulator gives) passes."""

from __future__ import annotations

import os
import pty
import signal
from pathlib import Path

import pytest

from controller.app import cli
from controller.app.doctor import FAIL, Host, diagnose

DECK = Path(__file__).resolve().parents[2] / "controller" / "examples" / "deck.toml"


def config(tmp_path: Path, port: str) -> str:
    cfg = tmp_path / "config.toml"
    cfg.write_text(f'[readers]\nbackend = "hub"\n[hub]\nport = "{port}"\n[display]\nkind = "none"\n'
                   f'[log]\ndir = "{tmp_path / "logs"}"\n')
    return str(cfg)


@pytest.fixture(autouse=True)
def keep_signal_handlers():
    """``run`` in this process installs its SIGTERM/SIGINT handlers before the link starts."""
    saved = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    yield
    for sig, handler in saved.items():
        signal.signal(sig, handler)


@pytest.fixture(params=["devnull", "file", "folder"])
def not_serial(request, tmp_path):
    if request.param == "devnull":
        return "/dev/null", "not a terminal"
    if request.param == "file":
        (tmp_path / "ttyACM0").write_text("")
        return str(tmp_path / "ttyACM0"), "regular file"
    (tmp_path / "dir").mkdir()
    return str(tmp_path / "dir"), "folder"


@pytest.mark.parametrize("extra", [[], ["--wait"]])
def test_run_refuses_a_port_that_is_not_a_serial_device(tmp_path, capsys, not_serial, extra):
    port, needle = not_serial
    assert cli.main(["run", "--config", config(tmp_path, port), "--deck", str(DECK), *extra]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and needle in err[0] and "hub.port" in err[0], err


def test_enroll_refuses_it_too(tmp_path, capsys):
    assert cli.main(["enroll", "--config", config(tmp_path, "/dev/null"), "--deck", str(tmp_path / "d.toml")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "/dev/null is a character device but not a terminal" in err[0]


def test_a_pty_is_a_serial_device_and_doctor_names_the_wrong_one(tmp_path):
    from controller.app.linkstate import serial_device_problem

    master, slave = pty.openpty()
    try:
        assert serial_device_problem(os.ttyname(slave)) is None
    finally:
        os.close(master)
        os.close(slave)
    assert serial_device_problem(str(tmp_path / "absent")) is None     # absence is said elsewhere
    findings = diagnose(config(tmp_path, "/dev/null"), str(DECK),
                        Host(dev=tmp_path, user="table", module_available=lambda name: True))
    [bad] = [f for f in findings if f.level == FAIL]
    assert "hub port /dev/null" in bad.text and "not a terminal" in bad.text and "hub.port" in bad.fix
    assert not [f for f in findings if "HELLO" in f.text], "no wait for a HELLO from /dev/null"
