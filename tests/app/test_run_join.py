"""``run`` with a ``[web]`` section prints the page's address and PIN at start, without ``-v``;
``run --new`` on a pipe still prints the closed session's summary JSON (FORMATS.md), and on
a terminal the settlement a person reads."""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _config(tmp_path: Path) -> Path:
    cfg = tmp_path / "c.toml"
    cfg.write_text('[readers]\nbackend = "sim"\n[sim]\nspeed = 1.0\n[display]\nkind = "none"\n'
                   f'[web]\nlisten = "127.0.0.1:0"\npin = "86420"\n[log]\ndir = "{tmp_path / "logs"}"\n',
                   encoding="utf-8")
    return cfg


def test_run_prints_the_page_and_its_pin_at_start(tmp_path):
    proc = subprocess.Popen([sys.executable, "-m", "controller", "run", "--config", str(_config(tmp_path))],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})
    first: list[str] = []
    got = threading.Event()

    def read():
        first.append(proc.stdout.readline())
        got.set()

    threading.Thread(target=read, daemon=True).start()
    try:
        assert got.wait(60), "run printed nothing"
    finally:
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
    assert first[0].startswith("the live table page: http://127.0.0.1:") and "(PIN 86420)" in first[0], (first, err)
    assert proc.returncode == 0, err


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def _closed(tmp_path: Path):
    from controller.app.commands import close_unfinished
    from controller.core.config import GameConfig, Table
    from controller.store.gamelog import SessionLog

    game = GameConfig(Table(names={"seat1": "Anna", "seat2": "Boris", "seat3": "Vera"}))
    SessionLog.create(tmp_path, game, None).close()
    printed = []
    close_unfinished(tmp_path, lambda summary, path: printed.append((summary, path)))
    return printed[0]


def test_run_new_prints_the_settlement_on_a_terminal_and_the_json_on_a_pipe(tmp_path):
    from controller.app.commands import print_closed

    summary, path = _closed(tmp_path)
    terminal, pipe = Terminal(), io.StringIO()
    print_closed(summary, path, terminal)
    print_closed(summary, path, pipe)
    text = terminal.getvalue()
    assert "settlement (sochi), in whists:" in text and "Anna" in text and f"its summary JSON: {path}" in text
    assert not text.lstrip().startswith("{")
    assert json.loads(pipe.getvalue()) == summary                  # FORMATS.md: scripts read the JSON


def test_the_run_board_keeps_the_page_and_pin_in_view_between_deals(tmp_path):

    from controller.app.bus import Published
    from controller.app.screen import TerminalBoard
    from controller.core.config import GameConfig
    from controller.core.snapshot import SnapshotBuilder
    from controller.core.tracker import DealTracker

    board = TerminalBoard(io.StringIO())
    board.join_line = "phones: http://preftable.local:8080/  PIN 482913"
    board.receive(Published(None, (), SnapshotBuilder("s").build(DealTracker(GameConfig()), seq=0)))
    assert ("phones: http://preftable.local:8080/  PIN 482913", "dim") in board._lines()


def test_demo_web_takes_a_port_or_host_and_port():
    import argparse

    import pytest

    from controller.app.options import web_address

    assert web_address("8080") == "127.0.0.1:8080"
    assert web_address("0.0.0.0:8080") == "0.0.0.0:8080"
    assert web_address("[::]:8090") == "[::]:8090"
    for bad in ("nowhere:port", "0.0.0.0:70000", "70000"):
        with pytest.raises(argparse.ArgumentTypeError):
            web_address(bad)
    from conftest import cli

    run = cli(["demo", "--web", "0.0.0.0:99999"])         # refused before anything starts
    assert run.returncode == 2 and run.stderr.count("\n") == 1 and "--web" in run.stderr


def test_the_display_shows_the_page_and_pin_at_boot():
    from controller.app.web.join import display_rows, join_info
    from controller.app.web.config import WebConfig
    from controller.core.config import GameConfig
    from controller.core.tracker import DealTracker
    from controller.core.view import indications

    info = join_info(WebConfig(host="0.0.0.0", port=8080), "482913", addresses=["192.168.1.23"])
    rows = indications(DealTracker(GameConfig()), notice="\n".join(display_rows(info))).lines
    assert rows[:2] == ("preftable.local:8080", "PIN 482913") and rows[3].startswith("next: ")
    assert all(len(row) <= 20 for row in rows)


def test_the_display_keeps_the_pin_beside_the_next_dealer_between_deals():
    from controller.core.config import GameConfig, Table
    from controller.app.sim import Noise, TableSimulator
    from controller.core.tracker import DealTracker
    from controller.core.view import indications

    for names, expected in (({}, "P1 x2 PIN 482913"), ({"seat1": "Boris"}, "Boris x2 PIN 482913")):
        game = GameConfig(Table(names=names))
        tracker = DealTracker(game)
        for event in TableSimulator(game, seed=1, noise=Noise()).deals(1):
            tracker.feed(event)
        rows = indications(tracker, names, notice="preftable.local:8080\nPIN 482913").lines
        assert rows[-1] == expected and all(len(row) <= 20 for row in rows)


def test_unreadable_interfaces_give_no_lan_address_and_one_warning(caplog):
    """Where the interfaces cannot be read (a unit whose address families leave out netlink,
    a sandbox), the table still starts: no LAN address, one warning line, no exception."""
    from controller.app.web.join import lan_addresses

    def refused():
        raise OSError(97, "Address family not supported by protocol")

    with caplog.at_level("WARNING", logger="controller.app.web.join"):
        assert lan_addresses(refused) == []
    assert len(caplog.records) == 1
    assert "network addresses" in caplog.records[0].getMessage()
