"""``doctor`` finds the web PIN wherever the table keeps its log dir: ``--log-dir``, or the
systemd unit's ``$STATE_DIRECTORY``, not only the config's ``[log] dir``."""

from __future__ import annotations

from pathlib import Path

from controller.app.doctor import Host, diagnose
from controller.app.web.pin import PIN_FILE


def _config(tmp_path: Path) -> str:
    path = tmp_path / "c.toml"
    path.write_text(f'[web]\nlisten = "0.0.0.0:8080"\n[log]\ndir = "{tmp_path / "elsewhere"}"\n', encoding="utf-8")
    return str(path)


def _pin_lines(findings) -> list[str]:
    return [f.text for f in findings if f.text.startswith("web PIN")]


def test_the_pin_in_the_log_dir_given_with_log_dir(tmp_path):
    state = tmp_path / "state"
    state.mkdir()
    (state / PIN_FILE).write_text("482913\n", encoding="utf-8")
    lines = _pin_lines(diagnose(_config(tmp_path), None, Host(dev=tmp_path), log_dir=str(state)))
    assert lines == [f"web PIN 482913 (generated, {state / PIN_FILE})"]


def test_the_pin_in_the_units_state_directory(tmp_path, monkeypatch):
    state = tmp_path / "var-lib-preftable"
    state.mkdir()
    (state / PIN_FILE).write_text("135790\n", encoding="utf-8")
    monkeypatch.setenv("STATE_DIRECTORY", str(state))
    lines = _pin_lines(diagnose(_config(tmp_path), None, Host(dev=tmp_path)))
    assert lines == [f"web PIN 135790 (generated, {state / PIN_FILE})"]


def test_the_doctor_command_takes_log_dir(tmp_path):
    from controller.app.cli import build_parser
    args = build_parser("doctor").parse_args(["doctor", "--log-dir", str(tmp_path)])
    assert args.log_dir == str(tmp_path)
