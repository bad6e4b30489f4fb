"""A command called in-process (``controller.app.cli.main``) leaves the process's SIGTERM
and SIGINT handlers as it found them: ``run`` and ``club`` handle both while they run,
``enroll`` SIGTERM.  A ``run`` that had left its handler behind took a later ``enroll``'s
Ctrl-C: the enrolment never heard it and enrolled the whole deck."""

from __future__ import annotations

import signal

import pytest

from controller.app.cli import main
from controller.app.stop_signals import handling


def handlers():
    return signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGINT)


def test_a_run_refused_after_its_handlers_were_set_puts_them_back(tmp_path):
    cfg = tmp_path / "c.toml"
    blocked = tmp_path / "not-a-dir"
    blocked.write_text("a file where the log folder should be")
    cfg.write_text(f'[readers]\nbackend = "sim"\n[display]\nkind = "none"\n[log]\ndir = "{blocked}"\n')
    before = handlers()
    assert main(["run", "--config", str(cfg)]) == 2
    assert handlers() == before


def test_an_enrolment_puts_its_sigterm_handler_back(tmp_path):
    cfg = tmp_path / "sim.toml"
    cfg.write_text('[sim]\nseed = 2\nspeed = 1000\n[display]\nkind = "none"\n')
    before = handlers()
    assert main(["enroll", "--deck", str(tmp_path / "d.toml"), "--config", str(cfg)]) == 0
    assert handlers() == before


def test_handling_outside_the_main_thread_leaves_the_handlers_alone():
    import threading

    seen = []

    def inside():
        with handling(lambda *_: None):
            seen.append(handlers())

    before = handlers()
    thread = threading.Thread(target=inside)
    thread.start()
    thread.join()
    assert seen == [before] and handlers() == before


def test_handling_puts_the_handlers_back_when_the_block_raises():
    before = handlers()
    with pytest.raises(RuntimeError):
        with handling(lambda *_: None):
            assert handlers() != before
            raise RuntimeError("the command failed")
    assert handlers() == before
