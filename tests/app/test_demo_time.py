"""The demo's time (controller.app.demo_players.TableTime): on a virtual clock a pause passes
at once with the emulated hub's firmware moved through it, and a wait moves time only as far
as the hub needs to report what lies on its readers; on real time a wait ends when told."""

from __future__ import annotations

import threading

import pytest

from controller.app.demo_players import ABSENT_MS, POLL_MS, TableTime
from controller.core.clock import VirtualClock

UID = "04A2B11C"


@pytest.fixture
def hub_time():
    """A TableTime on a virtual clock, with its emulated hub open on a pty."""
    pace = TableTime(VirtualClock(100.0))
    emulator = pace.emulated_hub(readers=2)
    emulator.open_pty()
    try:
        yield pace, emulator
    finally:
        emulator.close()


def test_a_pause_on_virtual_time_moves_the_hub_with_the_clock(hub_time):
    pace, emulator = hub_time
    hub_before = emulator.clock()
    assert pace.pause(2.5) is False
    assert pace() == pytest.approx(102.5)
    assert emulator.clock() - hub_before == 2500            # its firmware's ticks_ms went along
    stop = threading.Event()
    stop.set()
    assert pace.pause(1.0, stop) is True and pace() == pytest.approx(103.5)


def test_a_wait_moves_time_as_far_as_the_hub_needs_to_report(hub_time):
    pace, emulator = hub_time
    emulator.place(0, UID)
    start = pace()
    assert pace.wait(lambda: emulator.reported()[0] == UID, limit=30)
    laid = pace() - start
    assert 0 < laid <= 3 * POLL_MS / 1000                    # a SEEN after two polls, not a pause's worth
    emulator.remove(0, UID)
    start = pace()
    assert pace.wait(lambda: emulator.reported()[0] is None, limit=30)
    gone = round(pace() - start, 6)
    assert ABSENT_MS / 1000 <= gone <= (ABSENT_MS + 3 * POLL_MS) / 1000     # a GONE after absent_ms


def test_a_wait_on_virtual_time_that_nothing_ends_ends_at_its_limit(hub_time):
    pace, _ = hub_time
    changed = threading.Condition()
    start = pace()
    assert pace.wait(lambda: False, limit=0.2, changed=changed) is False
    assert pace() - start >= 0.2


def test_a_wait_on_real_time_ends_when_what_it_waits_for_is_notified():
    pace = TableTime()
    changed = threading.Condition()
    done: list[bool] = []

    def tell() -> None:
        with changed:
            done.append(True)
            changed.notify_all()

    threading.Timer(0.05, tell).start()
    assert pace.wait(lambda: bool(done), limit=60, changed=changed) is True
    assert pace.wait(lambda: bool(done), limit=60) is True     # without a condition: looked at
    assert pace.wait(lambda: False, limit=0.05) is False
    stop = threading.Event()
    stop.set()
    assert pace.pause(60, stop) is True                        # a stopped demo's players pause no more
