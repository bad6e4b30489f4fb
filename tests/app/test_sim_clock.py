"""The ``sim`` backend's players keep the pace of the run's clock: on real time they wait
between moves; on a :class:`VirtualClock` they move it themselves, so a whole simulated deal
reaches the table at once with its time passed as the deal's own events say."""

from __future__ import annotations

import threading

import pytest

from controller.app.backends.sim import SimConfig, SimSource
from controller.core.clock import VirtualClock
from controller.core.config import GameConfig

from conftest import wait_until


def played(clock, speed: float = 1.0):
    events, done = [], threading.Event()
    source = SimSource(GameConfig(), SimConfig(seed=4, speed=speed, noise=False), None, deals=1,
                       on_done=done.set, clock=clock)
    source.start(lambda event: events.append((clock(), event)))
    try:
        wait_until(done.is_set, "the simulated deal played out")
    finally:
        source.stop()
    return events


def test_on_a_virtual_clock_the_deal_passes_at_once_with_its_own_time():
    clock = VirtualClock(50.0)
    events = played(clock, speed=2.0)
    assert len(events) > 30                                   # a whole deal's cards, laid and gathered
    first_t, last_t = events[0][1].t, events[-1][1].t
    assert last_t - first_t > 10                              # the players take their time ...
    assert clock() - 50.0 == pytest.approx((last_t - first_t) / 2.0)        # ... on the clock, at the speed asked
    laid = [at for at, _ in events]
    assert laid == sorted(laid)
    for (at, event) in events:                                 # each move at its own time on the clock
        assert at == pytest.approx(50.0 + (event.t - first_t) / 2.0)
