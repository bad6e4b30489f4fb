"""The hub link's state in words, and the check that its port exists at all.

The views (``run``'s board, ``demo``'s live panel) say what the link is doing:
"waiting for hub on /dev/…" until the hub's HELLO, then "hub connected
(firmware …, N readers)" (PROTOCOL.md: HELLO carries the firmware version and
the number of readers).  A hub port given as a device path that does not
exist stops ``run`` and ``enroll`` at once with exit status 2 (``--wait``
waits for it instead, as the link retries an absent device with back-off); one
that exists but is no serial device (``/dev/null``, a file) stops them too.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from ..core.errors import LinkError
from .textview import plural


def link_state(link, port: str | None = None) -> str:
    """The hub link in words: connected (with what the hub said), or what it is waiting for."""
    if link is None:
        return ""
    info = getattr(link, "hub_info", None)
    if getattr(link, "ready", False) and info is not None:
        return f"hub connected (firmware {info.fw_version}, {plural(info.readers, 'reader')})"
    where = port or getattr(link, "url", "?")
    error = getattr(link, "error", None)
    if error is not None:
        return f"hub on {where} is incompatible: {error}"
    return f"waiting for hub on {where}"


def check_hub_port(port: str) -> None:
    """A hub port that is a device path must exist now (``run --wait`` waits for it instead)."""
    if "://" not in port and not Path(port).exists():
        raise LinkError(f"hub port {port}: no such device - check the hub's USB cable and hub.port "
                        "(ls /dev/serial/by-id/), or pass --wait to wait for it")
    check_serial_device(port)                # /dev/null or a file would be retried for ever


def serial_device_problem(port: str) -> str | None:
    """Why an existing hub port path can never be the hub (a regular file, a folder, ``/dev/null``),
    or None when it is a terminal device (or cannot be examined here: the link then reports it).

    A port that is no tty would be reopened by the link for ever, the table "waiting for the
    hub"; it is a wrong ``hub.port``, said at once.  Opened without becoming the controlling
    terminal and without waiting for carrier, and closed at once."""
    path = Path(port)
    try:
        st = path.stat()
    except OSError:
        return None                              # absent: the caller says so (or --wait waits)
    if stat.S_ISDIR(st.st_mode):
        return "is a folder, not a serial device"
    if stat.S_ISREG(st.st_mode):
        return "is a regular file, not a serial device"
    if not stat.S_ISCHR(st.st_mode):
        return "is not a serial device"
    try:
        fd = os.open(path, os.O_RDWR | os.O_NOCTTY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None                              # busy or not permitted: the link says which
    try:
        if not os.isatty(fd):
            return "is a character device but not a terminal (serial) device"
    finally:
        os.close(fd)
    return None


def check_serial_device(port: str) -> None:
    """Refuse, in one line, a hub port path that exists but is not a serial device."""
    if "://" in port:
        return
    problem = serial_device_problem(port)
    if problem is not None:
        raise LinkError(f"hub port {port} {problem}: set hub.port to the hub's serial device "
                        "(/dev/preftable-hub, or one of ls /dev/serial/by-id/)")


__all__ = ["link_state", "check_hub_port", "check_serial_device", "serial_device_problem"]
