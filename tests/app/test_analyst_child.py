"""The analyst's child process lives and dies with the table (controller.app.analyst)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT, wait_until

HERE = Path(__file__).parent


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:       # a zombie is dead for this purpose
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the child's parent-death signal is Linux's prctl")
@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGINT], ids=["sigkill", "ctrl-c"])
def test_a_killed_table_leaves_no_analysis_child_and_no_traceback(children, sig):
    table = children([sys.executable, str(HERE / "analyst_table.py")], stdin=subprocess.PIPE,
                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                     env={**os.environ, "PYTHONPATH": str(ROOT)})
    pids = [int(pid) for pid in table.stdout.readline().split()]
    assert pids and all(_alive(pid) for pid in pids)
    if sig == signal.SIGINT:        # Ctrl-C at a terminal reaches the whole process group
        for pid in (table.pid, *pids):
            os.kill(pid, sig)
    else:
        table.send_signal(sig)
    table.wait(30)
    try:
        wait_until(lambda: not any(_alive(pid) for pid in pids), "the analysis child to end with its table")
    finally:
        for pid in pids:
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)
    err = table.stderr.read()
    assert "Traceback" not in err, err
