"""The link to the host on a Pico: USB CDC, i.e. ``sys.stdin.buffer``/``sys.stdout.buffer``.

A transport has ``read() -> bytes`` (what has arrived, maybe b""), ``write(data)``
and ``wait(ms)`` (return early when input arrives).  Under CPython the tests use
``firmware_bridge.mpfake.pty_transport.PtyTransport`` instead.

Output never blocks the main loop.  MicroPython's USB CDC (``shared/tinyusb/
mp_usbd_cdc.c``) reports the port writable as soon as one byte of its 256-byte
transmit FIFO is free, while a write waits until its whole 64-byte piece fits,
for up to 500 ms; a frame written when the host drains slowly would stall the
loop, and a few in one turn would pass the 3 s watchdog.  So
:meth:`UsbTransport.write` queues the frame and :meth:`UsbTransport.flush`
writes one byte per "writable" -- the only room ``poll`` promises -- for at most
``SEND_BUDGET_MS`` per turn, keeping the rest queued.  The queue holds at most
``max_queued`` frames; the oldest are dropped and counted (``dropped``) -- the
next STATE, every 500 ms, tells the host what it missed (PROTOCOL.md: STATE
repairs lost edges).  ``firmware_bridge.mpfake.usb_cdc`` models that port on a
virtual clock.
"""

import select
import sys

from .ticks import ticks_add, ticks_diff, ticks_ms

CHUNK = 64              # bytes read per poll
OUT_CHUNK = 1           # bytes written per "writable": poll promises one free byte, no more
MAX_QUEUED = 16         # frames waiting for the host; older ones are dropped
SEND_BUDGET_MS = 5      # longest a turn spends writing


class UsbTransport:
    """USB CDC through the REPL's stdin/stdout (call ``micropython.kbd_intr(-1)`` first)."""

    def __init__(self, stdin=None, stdout=None, max_queued=MAX_QUEUED, clock=ticks_ms, poller=select):
        """``clock`` (a ``ticks_ms``) and ``poller`` (the ``select`` module) are the board's
        unless a fake port is given (``firmware_bridge.mpfake.usb_cdc``)."""
        self._in = stdin or sys.stdin.buffer
        self._out = stdout or sys.stdout.buffer
        self._clock = clock
        self._poll = poller.poll()
        # MicroPython polls sys.stdin (the text object) reliably; the bytes come from .buffer
        self._poll.register(stdin or sys.stdin, poller.POLLIN)
        self._out_poll = poller.poll()
        self._out_poll.register(stdout or sys.stdout, poller.POLLOUT)
        self.max_queued = max_queued
        self._queue = []         # frames not yet started
        self._pending = b""      # the unsent rest of the frame being written
        self.dropped = 0         # frames dropped because the host did not read
        self.sent = 0            # frames written completely

    def read(self):
        data = bytearray()
        while len(data) < CHUNK and self._poll.poll(0):
            data.extend(self._in.read(1))
        return bytes(data)

    def write(self, data):
        """Queue one frame and send what the port takes now; never blocks."""
        if len(self._queue) >= self.max_queued:
            self._queue.pop(0)
            self.dropped += 1
        self._queue.append(bytes(data))
        self.flush()

    @property
    def queued(self):
        """Frames (whole or partly unsent) still waiting for the host."""
        return len(self._queue) + (1 if self._pending else 0)

    def flush(self):
        """Send queued output while the port is writable, for at most ``SEND_BUDGET_MS``."""
        start = self._clock()
        while self._pending or self._queue:
            if not self._out_poll.poll(0):
                return
            if not self._pending:
                self._pending = self._queue.pop(0)
            chunk = self._pending[:OUT_CHUNK]
            written = self._out.write(chunk)
            if written is None:          # (MicroPython streams may return None for "all")
                written = len(chunk)
            self._pending = self._pending[written:]
            if not self._pending:
                self.sent += 1
            if ticks_diff(self._clock(), start) >= SEND_BUDGET_MS:
                return

    def wait(self, ms):
        """Sleep up to ``ms``, waking for input; queued output goes out as the port takes it."""
        self.flush()
        if not self.queued:
            self._poll.poll(max(0, int(ms)))
            return
        deadline = ticks_add(self._clock(), max(0, int(ms)))
        while self.queued:
            left = ticks_diff(deadline, self._clock())
            if left <= 0 or self._poll.poll(0):
                return
            self._poll.poll(min(left, 2))     # short naps: the port may free up meanwhile
            self.flush()
