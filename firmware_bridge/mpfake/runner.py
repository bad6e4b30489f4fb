"""Run the hub firmware's real ``main()`` under CPython: fakes from a :class:`Board`,
the host link on a pty, in a thread with a stop flag.

    board = Board()
    board.attach_spi(17, chip)
    with FirmwareRunner(board, config={"reader_cs": (17,)}) as fw:
        link = HubLink(fw.port, ...)

Nothing global is touched: the fake modules are passed to ``main`` and the pty
is closed on :meth:`FirmwareRunner.stop`.
"""

import logging
import os
import threading
import tty

from .machine import Board
from .pty_transport import FdTransport

log = logging.getLogger(__name__)


class FirmwareError(RuntimeError):
    """The firmware thread died; ``__cause__`` is what it raised."""


class FirmwareRunner:
    """The firmware on ``board`` (a new :class:`Board` if None) with ``config`` overriding
    ``main.PINS``; ``clock`` (milliseconds, a ``ticks_ms``) is the firmware's own clock, the
    real one unless a test moves its own."""

    def __init__(self, board=None, config=None, clock=None):
        self.board = board if board is not None else Board()
        self.config = config
        self.clock = clock
        self.modules = self.board.modules()
        self.port = None          # path of the pty end the host opens
        self.error = None
        self._stop = threading.Event()
        self._thread = None
        self._fds = ()

    def start(self):
        """Open the pty and start the firmware; return the port path for the host."""
        from ..firmware import main as firmware_main  # noqa: PLC0415 - keep mpfake importable alone

        master, slave = os.openpty()
        tty.setraw(slave)          # no echo, no line discipline: a plain byte pipe
        self._fds = (master, slave)
        self.port = os.ttyname(slave)
        self.transport = FdTransport(master)
        self._stop.clear()

        def target():
            try:
                firmware_main.main(machine=self.modules["machine"], rp2=self.modules["rp2"],
                                   transport=self.transport, stop=self._stopping,
                                   config=self.config, clock=self.clock)
            except BaseException as exc:  # recorded and re-raised by stop()
                log.exception("firmware died")
                self.error = exc

        self._thread = threading.Thread(target=target, name="hub-firmware", daemon=True)
        self._thread.start()
        return self.port

    def _stopping(self):
        return self._stop.is_set()

    def stop(self, timeout=5.0):
        """Stop the loop, join the thread, close the pty; raise FirmwareError if the firmware died."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)
            if self._thread.is_alive():
                raise FirmwareError("firmware loop did not stop within %.1f s" % timeout)
            self._thread = None
        for fd in self._fds:
            os.close(fd)
        self._fds = ()
        if self.error is not None:
            error, self.error = self.error, None
            raise FirmwareError("the firmware raised %r" % (error,)) from error

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc_info):
        self.stop()
