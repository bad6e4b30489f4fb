"""Time as a value passed in: the project's one clock type.

Everything that measures time takes a *clock*, a callable returning seconds that
never go back (``time.monotonic`` in production, passed in by ``app/``).  The core
itself never reads one.  :class:`VirtualClock` is modelled time for the emulated
parts and the tests: the RC522 chips and their SPI bus, the hub link's timeouts,
the emulator's pacing, the simulated players and the demo all run on it, so a
test moves time by hand instead of waiting for it.
"""

from __future__ import annotations

from typing import Callable

#: seconds, never decreasing (``time.monotonic``, a :class:`VirtualClock`, a session's clock)
Clock = Callable[[], float]


class VirtualClock:
    """Modelled time in seconds; call it to read it, :meth:`advance` (or :meth:`sleep`,
    for code that paces itself on its clock) to move it."""

    def __init__(self, start: float = 0.0):
        self.now = float(start)

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> float:
        """Move time forward (never back) and return the new time."""
        if seconds > 0:
            self.now += seconds
        return self.now

    def sleep(self, seconds: float) -> None:
        """What ``time.sleep`` is on real time: the wait passes at once."""
        self.advance(seconds)


__all__ = ["Clock", "VirtualClock"]
