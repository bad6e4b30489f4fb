"""Children of the tests answer Ctrl-C whatever the test runner inherited, and none outlives the run.

A shell script that did ``trap '' INT`` (or ``nohup``) starts every command with SIGINT
ignored, and a Python started so never installs its KeyboardInterrupt handler: the
Ctrl-C tests' children then ignored the SIGINT they were sent, three tests failed and
one left its hub emulator running.  conftest's runners give every child the default
dispositions; this runs the Ctrl-C tests under a runner that inherited SIGINT ignored,
in a session of its own, and then looks for any process left in that session.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys

from conftest import end, spawn

CTRL_C_TESTS = [
    "tests/app/test_cli_behaviour.py::test_ctrl_c_on_demo_says_where_the_log_is",
    "tests/app/test_cli_behaviour.py::test_ctrl_c_on_run_and_run_new_closes_the_previous_pulka",
    "tests/firmware_bridge/test_emulator.py::test_cli_serves_a_script_over_tcp",
]


def started_from_a_shell_that_ignores_sigint() -> None:
    """In the runner's child, before exec: what ``trap '' INT`` leaves every command with."""
    os.setsid()                                    # a session of its own, to find what it leaves
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def session_members(sid: int) -> list[str]:
    """The processes of session ``sid`` (its leader's pid), as ``pid command``."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as fh:
                stat = fh.read()
            with open(f"/proc/{entry}/cmdline", "rb") as fh:
                command = fh.read().replace(b"\0", b" ").decode(errors="replace")
        except OSError:                            # gone meanwhile
            continue
        fields = stat.rsplit(")", 1)[1].split()    # after "pid (comm)": state ppid pgrp session ...
        if int(fields[3]) == sid and fields[0] != "Z":
            found.append(f"{entry} {command}")
    return found


def test_the_ctrl_c_tests_pass_and_leave_nothing_running_under_a_runner_ignoring_sigint(tmp_path):
    runner = spawn([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--timeout", "170",
                    "--basetemp", str(tmp_path / "inner"), *CTRL_C_TESTS],
                   preexec_fn=started_from_a_shell_that_ignores_sigint, stdout=subprocess.PIPE,
                   stderr=subprocess.STDOUT, text=True)
    try:
        out, _ = runner.communicate(timeout=180)
    finally:
        end(runner)
    assert runner.returncode == 0, out[-5000:]
    assert f"{len(CTRL_C_TESTS)} passed" in out
    # the runner has exited; its session must be empty (a child left behind keeps the session id)
    assert session_members(runner.pid) == []
