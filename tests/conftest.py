"""What every layer's tests share: waiting with a bound, and child processes that are
started with default signals and always ended.

The suite mirrors the code's layers: core/, store/, app/, hw/, firmware_bridge/,
systemd/.  This file sits at the top so that pytest puts ``tests/`` on ``sys.path``:
every layer's tests import the shared deal scripts of ``table_script``, and the
helpers here (``from conftest import wait_until, spawn, run``) where a fixture
does not reach (a module-level harness).

- :func:`wait_until` polls a predicate until it holds (:func:`eventually`: and gives
  back its last value instead of failing, for helpers that report the failure).  Its bound only matters when
  the code is broken (a hang must fail the test, not the run); it is never a
  measurement, and no test asserts on how long a wait took.
- :func:`spawn` / :func:`run` start a child with the dispositions a shell gives a
  command it starts in the foreground: SIGINT, SIGQUIT, SIGTERM, SIGHUP, SIGPIPE,
  SIGCHLD and the job-control signals back to their defaults and none blocked,
  whatever the test runner inherited (started under ``nohup``, or from a script
  that did ``trap '' INT``, a child would otherwise ignore Ctrl-C).  Every child
  :func:`spawn` starts is killed and reaped when the test ends (the ``children``
  fixture) or at the latest when the session does, even when the test fails.
- :func:`cli` calls ``preftable ARGS`` in the test's own process and gives back its
  exit status and output, for the many tests of what a command says; a command that
  must be a process of its own (signals, a real exit) is :func:`spawn`'s.
- :func:`fork_main` runs ``preftable ARGS`` (``controller.app.cli.main``) in a child
  forked from the test process: a real process with its own pid, files and
  signals (SIGKILL it, SIGTERM it), without the second or so a fresh interpreter
  spends importing the project.  Tests of the command line as a user runs it keep
  :func:`spawn` (``python -m controller``); tests that start a service fifty
  times use this.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import weakref
from pathlib import Path
from typing import Callable, TypeVar

import pytest

ROOT = Path(__file__).resolve().parents[1]
PREFTABLE = [sys.executable, "-m", "controller"]
BOUND = 60.0         # s: a wait this long is a hang (broken code), never a slow machine
T = TypeVar("T")

#: the dispositions a child gets back (SIGKILL/SIGSTOP cannot be changed, so are not named)
RESET_SIGNALS = tuple(getattr(signal, name) for name in (
    "SIGINT", "SIGQUIT", "SIGTERM", "SIGHUP", "SIGPIPE", "SIGCHLD", "SIGALRM", "SIGUSR1", "SIGUSR2",
    "SIGTSTP", "SIGTTIN", "SIGTTOU", "SIGXFSZ") if hasattr(signal, name))


def wait_until(predicate: Callable[[], T], what: str = "the condition", timeout: float = BOUND,
               interval: float = 0.005) -> T:
    """Poll ``predicate`` until it returns something true and return that; fail the test
    naming ``what`` if ``timeout`` seconds pass first (a hang, not a slow machine)."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"never happened within {timeout:g} s: {what}")
        time.sleep(interval)


def eventually(predicate: Callable[[], T], timeout: float = BOUND, interval: float = 0.005) -> T:
    """:func:`wait_until` for callers that say themselves what went wrong: the
    predicate's last value (false if it never held within ``timeout``)."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value or time.monotonic() > deadline:
            return value
        time.sleep(interval)


def default_signals() -> None:
    """In the child, before exec: default dispositions, nothing blocked."""
    for sig in RESET_SIGNALS:
        signal.signal(sig, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_SETMASK, set())


_LIVE: weakref.WeakSet = weakref.WeakSet()     # every child started here and not yet reaped


def spawn(args, **kwargs) -> subprocess.Popen:
    """``subprocess.Popen`` with default signals in the child (cwd: the repository).  The
    ``children`` fixture (or the end of the session) ends it if the test does not."""
    kwargs.setdefault("cwd", ROOT)
    kwargs.setdefault("preexec_fn", default_signals)
    proc = subprocess.Popen(list(args), **kwargs)
    _LIVE.add(proc)
    return proc


def end(proc, grace: float = 5.0) -> int:
    """Kill ``proc`` if it still runs and reap it (its pipes closed); its exit status."""
    if proc.poll() is None:
        proc.kill()
    try:
        proc.communicate(timeout=grace)
    except (ValueError, OSError, subprocess.TimeoutExpired):   # pipes already read and closed
        proc.wait(grace)
    return proc.returncode


def run(args, timeout: float = BOUND, **kwargs) -> subprocess.CompletedProcess:
    """``subprocess.run`` with default signals in the child (cwd: the repository); the
    child is killed and reaped if it outlives ``timeout``."""
    kwargs.setdefault("cwd", ROOT)
    kwargs.setdefault("preexec_fn", default_signals)
    return subprocess.run(list(args), timeout=timeout, **kwargs)


def preftable(*args: str, **kwargs) -> subprocess.CompletedProcess:
    """``python -m controller ARGS`` as a child process (for what needs one: signals,
    a real exit, a fresh interpreter); most CLI tests call ``controller.app.cli.main``."""
    kwargs.setdefault("capture_output", True)
    kwargs.setdefault("text", True)
    return run(PREFTABLE + [str(a) for a in args], **kwargs)


class Forked:
    """``preftable ARGS`` in a forked child, with :class:`subprocess.Popen`'s handles
    (``pid``, ``poll``, ``wait``, ``send_signal``, ``kill``, ``terminate``,
    ``communicate``, ``returncode``).  ``stdin``/``stdout``/``stderr``: a file
    descriptor, ``None`` (``/dev/null``) or ``subprocess.PIPE`` for stdout/stderr
    (then :attr:`stdout`/:attr:`stderr` are text streams to read)."""

    def __init__(self, argv, *, stdin: int | None = None, stdout: int | None = None,
                 stderr: int | None = None, env: dict | None = None, before: Callable[[], None] | None = None):
        argv = [str(a) for a in argv]
        self.args = argv
        self.returncode: int | None = None
        self.stdout = self.stderr = None
        pipes = {}
        for name, target in (("stdout", stdout), ("stderr", stderr)):
            if target == subprocess.PIPE:
                pipes[name] = os.pipe()
        if "stdout" in pipes:
            stdout = pipes["stdout"][1]
        if "stderr" in pipes:
            stderr = pipes["stderr"][1]
        pid = os.fork()
        if pid == 0:                              # the child: never returns into pytest
            code = 1
            try:
                code = self._child(argv, stdin, stdout, stderr, env, before)
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
            except BaseException:                 # a crash shows in the child's stderr, as a process's
                import traceback
                traceback.print_exc()
            finally:
                try:
                    sys.stdout.flush()
                    sys.stderr.flush()
                finally:
                    os._exit(code)
        self.pid = pid
        for name, (read_end, write_end) in pipes.items():
            os.close(write_end)
            setattr(self, name, open(read_end, encoding="utf-8", errors="replace"))
        _LIVE.add(self)

    @staticmethod
    def _child(argv, stdin, stdout, stderr, env, before) -> int:
        import logging
        default_signals()
        null = os.open(os.devnull, os.O_RDWR)
        for fd, target in ((0, stdin), (1, stdout), (2, stderr)):
            os.dup2(null if target is None else target, fd)
        # nothing of the test process's stays open here: a pty the test closes must hang up
        os.closerange(3, os.sysconf("SC_OPEN_MAX") if os.sysconf("SC_OPEN_MAX") < 65536 else 65536)
        sys.stdin = open(0, closefd=False)
        sys.stdout = open(1, "w", buffering=1, closefd=False)
        sys.stderr = open(2, "w", buffering=1, closefd=False)
        root = logging.getLogger()
        for handler in list(root.handlers):       # pytest's capture: the CLI sets up its own
            root.removeHandler(handler)
        root.setLevel(logging.WARNING)
        if env:
            os.environ.update(env)
        if before is not None:
            before()
        from controller.app.cli import main
        return main(argv)

    def poll(self) -> int | None:
        if self.returncode is None:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        if timeout is None:
            if self.returncode is None:
                self.returncode = os.waitstatus_to_exitcode(os.waitpid(self.pid, 0)[1])
            return self.returncode
        wait_until(lambda: self.poll() is not None, f"pid {self.pid} ({' '.join(self.args)}) to exit", timeout,
                   interval=0.002)
        return self.returncode

    def send_signal(self, sig: int) -> None:
        if self.poll() is None:
            os.kill(self.pid, sig)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def communicate(self, timeout: float | None = None):
        """Read what is left on the piped streams (to their end: the child's exit), then reap it."""
        out = self.stdout.read() if self.stdout is not None else None
        err = self.stderr.read() if self.stderr is not None else None
        self.wait(timeout)
        for stream in (self.stdout, self.stderr):
            if stream is not None:
                stream.close()
        return out, err


def fork_main(argv, **kwargs) -> Forked:
    """``preftable ARGV`` in a forked child (:class:`Forked`); ended by the end of the
    session at the latest (the ``children`` fixture ends it with the test)."""
    return Forked(argv, **kwargs)


def cli(args, *, env: dict | None = None, input: str | None = None) -> subprocess.CompletedProcess:
    """``preftable ARGS`` called in this process (``controller.app.cli.main``), as a child's
    result: exit status, stdout, stderr (its log lines included, formatted as the CLI
    does).  What the call changes process-wide is put back: the environment (``env``
    is added for the call; ``TMPDIR`` also moves :mod:`tempfile`'s folder), the standard
    streams, the root logger's handlers and level, the SIGINT/SIGTERM handlers."""
    import io
    import logging
    import tempfile

    from controller.app.cli import main

    args = [str(a) for a in args]
    saved_env = dict(os.environ)
    saved_streams = sys.stdin, sys.stdout, sys.stderr
    root = logging.getLogger()
    saved_log = list(root.handlers), root.level
    saved_signals = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    saved_tempdir = tempfile.tempdir
    def stream(data: bytes = b"") -> io.TextIOWrapper:    # with a .buffer, as the real ones have
        return io.TextIOWrapper(io.BytesIO(data), encoding="utf-8", write_through=True)

    out, err = stream(), stream()
    try:
        os.environ.update(env or {})
        if env and "TMPDIR" in env:
            tempfile.tempdir = env["TMPDIR"]
        sys.stdin, sys.stdout, sys.stderr = stream((input or "").encode()), out, err
        root.handlers = []                        # the CLI's basicConfig then writes to ``err``
        try:
            code = main(args)
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    finally:
        sys.stdin, sys.stdout, sys.stderr = saved_streams
        for handler in root.handlers:
            handler.close()
        root.handlers, level = saved_log
        root.setLevel(level)
        tempfile.tempdir = saved_tempdir
        os.environ.clear()
        os.environ.update(saved_env)
        for sig, handler in saved_signals.items():
            signal.signal(sig, handler)
    out.flush()
    err.flush()
    return subprocess.CompletedProcess(["preftable", *args], code, out.buffer.getvalue().decode(),
                                       err.buffer.getvalue().decode())


@pytest.fixture(name="wait_until")
def wait_until_fixture():
    return wait_until


@pytest.fixture
def children():
    """``children(args, **popen_kwargs)`` starts a child (:func:`spawn`; ``fork=True``:
    :func:`fork_main` of ``args``); each is ended when the test ends, passed or failed."""
    started: list = []

    def start(args, fork: bool = False, **kwargs):
        proc = fork_main(args, **kwargs) if fork else spawn(args, **kwargs)
        started.append(proc)
        return proc

    yield start
    for proc in started:
        end(proc)


@pytest.fixture(scope="session")
def chromium(tmp_path_factory):
    """Debian's Chromium driven by Playwright (``tests/app/web_table.py``), one for the whole
    run of a test process: its launch costs about two CPU seconds, a page a fraction of one.
    Tests take it through :func:`browser`."""
    from web_table import browser_context

    yield from browser_context(tmp_path_factory)


@pytest.fixture
def browser(chromium):
    """The shared browser as if fresh for the test: no cookies of an earlier one, and the
    pages the test opens closed after it, passed or failed."""
    chromium.clear_cookies()
    before = set(chromium.pages)
    yield chromium
    for page in chromium.pages:
        if page not in before:
            page.close()


def pytest_sessionfinish(session, exitstatus):
    """No child outlives the run, whatever a test or harness forgot."""
    for proc in list(_LIVE):
        end(proc)


__all__ = ["wait_until", "eventually", "spawn", "run", "end", "preftable", "cli", "fork_main", "Forked", "default_signals",
           "PREFTABLE", "ROOT", "BOUND"]
