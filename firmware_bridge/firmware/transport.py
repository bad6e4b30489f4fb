"""The link to the host on a Pico: USB CDC, i.e. ``sys.stdin.buffer``/``sys.stdout.buffer``.

A transport has ``read() -> bytes`` (what has arrived, maybe b""), ``write(data)``
and ``wait(ms)`` (return early when input arrives).  Under CPython the tests use
``firmware_bridge.mpfake.pty_transport.PtyTransport`` instead.

Output never blocks the main loop: on a Pico a USB CDC write blocks (up to
500 ms) while the host has the port open but does not read, and a few frames
in one loop turn would pass the 3 s watchdog.  :meth:`UsbTransport.write`
queues the frame and sends only what the port takes now (``poll`` says
writable; small chunks); the queue holds at most ``max_queued`` frames, the
oldest are dropped and counted (``dropped``) -- the next STATE, every 500 ms,
tells the host what it missed (PROTOCOL.md: STATE repairs lost edges).
"""

import select
import sys

from .ticks import ticks_add, ticks_diff, ticks_ms

CHUNK = 64              # bytes read per poll
OUT_CHUNK = 32          # bytes written per write: far below the CDC FIFO, so a writable port takes it
MAX_QUEUED = 16         # frames waiting for the host; older ones are dropped
SEND_BUDGET_MS = 5      # longest a turn spends writing


class UsbTransport:
    """USB CDC through the REPL's stdin/stdout (call ``micropython.kbd_intr(-1)`` first)."""

    def __init__(self, stdin=None, stdout=None, max_queued=MAX_QUEUED):
        self._in = stdin or sys.stdin.buffer
        self._out = stdout or sys.stdout.buffer
        self._poll = select.poll()
        # MicroPython polls sys.stdin (the text object) reliably; the bytes come from .buffer
        self._poll.register(stdin or sys.stdin, select.POLLIN)
        self._out_poll = select.poll()
        self._out_poll.register(stdout or sys.stdout, select.POLLOUT)
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
        start = ticks_ms()
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
            if ticks_diff(ticks_ms(), start) >= SEND_BUDGET_MS:
                return

    def wait(self, ms):
        """Sleep up to ``ms``, waking for input; queued output goes out as the port takes it."""
        self.flush()
        if not self.queued:
            self._poll.poll(max(0, int(ms)))
            return
        deadline = ticks_add(ticks_ms(), max(0, int(ms)))
        while self.queued:
            left = ticks_diff(deadline, ticks_ms())
            if left <= 0 or self._poll.poll(0):
                return
            self._poll.poll(min(left, 2))     # short naps: the port may free up meanwhile
            self.flush()
