"""The hub link's state in words, and the check that its port exists at all.

The views (``run``'s board, ``demo``'s live panel) say what the link is doing:
"waiting for hub on /dev/…" until the hub's HELLO, then "hub connected
(firmware …, N readers)" (PROTOCOL.md: HELLO carries the firmware version and
the number of readers).  A hub port given as a device path that does not
exist stops ``run`` and ``enroll`` at once with exit status 2 (``--wait``
waits for it instead, as the link retries an absent device with back-off).
"""

from __future__ import annotations

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


__all__ = ["link_state", "check_hub_port"]
