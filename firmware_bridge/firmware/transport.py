"""The link to the host on a Pico: USB CDC, i.e. ``sys.stdin.buffer``/``sys.stdout.buffer``.

A transport has ``read() -> bytes`` (what has arrived, maybe b""), ``write(data)``
and ``wait(ms)`` (return early when input arrives).  Under CPython the tests use
``firmware_bridge.mpfake.pty_transport.PtyTransport`` instead.
"""

import select
import sys

CHUNK = 64


class UsbTransport:
    """USB CDC through the REPL's stdin/stdout (call ``micropython.kbd_intr(-1)`` first)."""

    def __init__(self, stdin=None, stdout=None):
        self._in = stdin or sys.stdin.buffer
        self._out = stdout or sys.stdout.buffer
        self._poll = select.poll()
        # MicroPython polls sys.stdin (the text object) reliably; the bytes come from .buffer
        self._poll.register(stdin or sys.stdin, select.POLLIN)

    def read(self):
        data = bytearray()
        while len(data) < CHUNK and self._poll.poll(0):
            data.extend(self._in.read(1))
        return bytes(data)

    def write(self, data):
        self._out.write(data)

    def wait(self, ms):
        self._poll.poll(max(0, int(ms)))
