"""systemd's notify protocol (``Type=notify``, ``WatchdogSec=``) without a dependency.

Messages go to the datagram socket named by ``$NOTIFY_SOCKET``; outside
systemd there is none and every call does nothing.
"""

from __future__ import annotations

import logging
import os
import socket
import time

log = logging.getLogger(__name__)


class Notifier:
    """Sends READY/WATCHDOG/STATUS/STOPPING to systemd when run under it."""

    def __init__(self, environ: dict | None = None):
        env = os.environ if environ is None else environ
        address = env.get("NOTIFY_SOCKET", "")
        if address.startswith("@"):
            address = "\0" + address[1:]
        self.address = address or None
        usec = env.get("WATCHDOG_USEC", "")
        pid = env.get("WATCHDOG_PID", "")
        enabled = usec.isdigit() and int(usec) > 0 and (not pid or pid == str(os.getpid()))
        self.watchdog_interval = int(usec) / 2e6 if enabled else None
        self._last_ping = 0.0
        self._sock = None

    def send(self, message: str) -> None:
        if self.address is None:
            return
        try:
            if self._sock is None:
                self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC)
            self._sock.sendto(message.encode("utf-8"), self.address)
        except OSError as exc:
            log.warning("cannot notify systemd at %s: %s", self.address, exc.strerror)

    def ready(self, status: str = "") -> None:
        self.send("READY=1" + (f"\nSTATUS={status}" if status else ""))

    def status(self, status: str) -> None:
        self.send(f"STATUS={status}")

    def stopping(self) -> None:
        self.send("STOPPING=1")

    def ping(self, now: float | None = None) -> None:
        """Send WATCHDOG=1 at half the watchdog interval; call it from the service loop."""
        if self.watchdog_interval is None:
            return
        now = time.monotonic() if now is None else now
        if now - self._last_ping >= self.watchdog_interval:
            self._last_ping = now
            self.send("WATCHDOG=1")

    def close(self) -> None:
        if self._sock is not None:
            self._sock.close()
            self._sock = None
