"""The hub's USB CDC under CPython: one end of a pty (or any fd), same interface as
``firmware.transport.UsbTransport`` (``read``, ``write``, ``wait``)."""

import errno
import logging
import os
import select

log = logging.getLogger(__name__)

MAX_PENDING = 8192       # bytes the host hasn't read yet before frames are dropped


class FdTransport:
    """Non-blocking I/O on ``fd``.  When the other side doesn't read, whole writes are
    dropped (counted in ``dropped``) rather than blocking the firmware, like a
    Pico's USB CDC with no host attached."""

    def __init__(self, fd):
        self.fd = fd
        os.set_blocking(fd, False)
        self._pending = b""
        self.dropped = 0

    def read(self):
        try:
            return os.read(self.fd, 512)
        except BlockingIOError:
            return b""
        except OSError as exc:
            if exc.errno == errno.EIO:  # pty: nobody holds the other end
                return b""
            raise

    def write(self, data):
        if len(self._pending) + len(data) > MAX_PENDING:
            self.dropped += 1
            log.debug("host not reading: dropped %r", data[:40])
            return
        self._pending += bytes(data)
        self._flush()

    def _flush(self):
        while self._pending:
            try:
                sent = os.write(self.fd, self._pending)
            except BlockingIOError:
                return
            except OSError as exc:
                if exc.errno == errno.EIO:
                    return
                raise
            self._pending = self._pending[sent:]

    def wait(self, ms):
        self._flush()
        try:
            select.select([self.fd], [], [], max(0, ms) / 1000)
        except (OSError, ValueError):   # fd closed while stopping
            pass
