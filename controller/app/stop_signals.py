"""A command's stop signals (SIGTERM: ``kill``, systemd's stop; SIGINT: Ctrl-C): its own
handler while it runs, the process's previous ones put back when it returns.

``preftable``'s commands are also called in-process (``controller.app.cli.main(argv)``:
the tests, another program embedding the table); a handler left behind by one command
would take the next one's Ctrl-C -- a ``run`` that had ended long ago swallowed an
``enroll``'s KeyboardInterrupt.  Handlers can only be set in the main thread; elsewhere
the command runs with the process's own.
"""

from __future__ import annotations

import signal
import threading
from contextlib import contextmanager
from typing import Callable, Iterator

STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)


@contextmanager
def handling(handler: Callable, signals: tuple[int, ...] = STOP_SIGNALS) -> Iterator[None]:
    """``handler`` for ``signals`` inside the block, the previous handlers after it."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    old = {sig: signal.signal(sig, handler) for sig in signals}
    try:
        yield
    finally:
        for sig, previous in old.items():
            signal.signal(sig, previous)


__all__ = ["STOP_SIGNALS", "handling"]
