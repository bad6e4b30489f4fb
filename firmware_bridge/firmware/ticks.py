"""Millisecond ticks: MicroPython's ``time.ticks_*`` or a CPython stand-in.

Ticks wrap like the RP2040's (30 bits); always compare them with
:func:`ticks_diff`, never with ``<``.
"""

import time

try:
    ticks_ms = time.ticks_ms
    ticks_add = time.ticks_add
    ticks_diff = time.ticks_diff
    sleep_ms = time.sleep_ms
except AttributeError:  # CPython
    _PERIOD = 1 << 30
    _HALF = _PERIOD >> 1
    _T0 = time.monotonic_ns()

    def ticks_ms():
        """Milliseconds since import, wrapping at 2**30."""
        return ((time.monotonic_ns() - _T0) // 1000000) & (_PERIOD - 1)

    def ticks_add(ticks, delta):
        """``ticks + delta`` on the wrapping clock."""
        return (ticks + delta) & (_PERIOD - 1)

    def ticks_diff(end, start):
        """Signed ``end - start`` on the wrapping clock."""
        return ((end - start + _HALF) & (_PERIOD - 1)) - _HALF

    def sleep_ms(ms):
        time.sleep(ms / 1000)
