"""The hub emulator's line to the host (PROTOCOL.md's serial line): the pty or TCP port
the host opens, the firmware's transport, and the faults a real table's line meets --
dropped frames, corrupted CRCs, garbage, silence, an unplug and a return.

The emulator itself is :mod:`firmware_bridge.emulator`; :class:`LineFaults` is the half
of its :class:`~firmware_bridge.emulator.HubEmulator` that owns the line (its lock, its
firmware ``Hub`` and its clock are the emulator's).
"""

from __future__ import annotations

import logging
import os
import select
import socket
import time
import tty
from typing import Iterable

from .firmware.hub import make_boot_id

log = logging.getLogger(__name__)

WRITE_WAIT = 0.05          # s a frame may wait for a full pty/socket before it is dropped


class PtyPort:
    """Master end of a raw pty; the slave stays open so its path persists."""

    def __init__(self) -> None:
        self.master, self.slave = os.openpty()
        tty.setraw(self.slave)            # no echo, no CR/LF translation, before any host opens it
        os.set_blocking(self.master, False)
        self.path = os.ttyname(self.slave)

    def fileno(self) -> int:
        return self.master

    def write(self, data: bytes, wait: float) -> bool:
        view = memoryview(data)
        deadline = time.monotonic() + wait
        while view:
            if self.master < 0:
                return False
            try:
                view = view[os.write(self.master, view):]
            except BlockingIOError:
                left = deadline - time.monotonic()
                if left <= 0 or not select.select([], [self.master], [], left)[1]:
                    return False
            except OSError:
                return False
        return True

    def read(self, timeout: float) -> bytes:
        try:
            if self.master < 0 or not select.select([self.master], [], [], timeout)[0]:
                return b""
            return os.read(self.master, 4096)
        except (OSError, ValueError):          # closed under us by unplug()
            return b""

    def close(self) -> None:
        fds, self.master, self.slave = (self.master, self.slave), -1, -1
        for fd in fds:
            if fd >= 0:
                os.close(fd)


class TcpPort:
    """A listening socket; the latest client is the host."""

    def __init__(self, host: str, port: int) -> None:
        self.server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.server.bind((host, port))
        self.server.listen(1)
        self.address = self.server.getsockname()[:2]
        self.client: socket.socket | None = None

    def write(self, data: bytes, wait: float) -> bool:
        client = self.client
        if client is None:
            return False
        try:
            client.settimeout(wait)
            client.sendall(data)
            return True
        except OSError:
            return False

    def read(self, timeout: float) -> bytes:
        server, client = self.server, self.client      # unplug() may close them under us
        try:
            ready = select.select([server] + ([client] if client else []), [], [], timeout)[0]
            if server in ready:
                new, _ = server.accept()
                new.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                if client is not None:
                    client.close()
                self.client = new
                return b""
            if client is not None and client in ready:
                data = client.recv(4096)
                if not data:
                    client.close()
                    self.client = None
                return data
        except (OSError, ValueError):
            pass
        return b""

    def close(self) -> None:
        if self.client is not None:
            self.client.close()
            self.client = None
        self.server.close()

class FirmwareLine:
    """The firmware's transport (``read``/``write``/``wait``, as ``firmware.transport``):
    what the host wrote, and the emulator's faulty line for what the hub sends."""

    def __init__(self, emulator: "LineFaults"):
        self._emulator = emulator

    def read(self) -> bytes:
        inbox = self._emulator._inbox
        data = bytes(inbox)
        inbox.clear()
        return data

    def write(self, data: bytes) -> None:
        self._emulator._output(bytes(data))

    def wait(self, ms: int) -> None:
        """Unused: the emulator's own loop waits on the pty or socket."""



class LineFaults:
    """The line's half of :class:`~firmware_bridge.emulator.HubEmulator`: the faults a test
    (or ``hub-emulator``'s stdin) injects, the unplug and replug, and what the firmware
    writes going out on the line with those faults applied."""

    def drop_next(self, n: int = 1, verbs: Iterable[str] | None = None) -> None:
        """Lose the next ``n`` frames (of ``verbs`` only, if given) on the line."""
        with self._lock:
            self._drop.append((n, None if verbs is None else frozenset(verbs)))

    def corrupt_next(self, n: int = 1, verbs: Iterable[str] | None = None) -> None:
        """Send the next ``n`` frames (of ``verbs`` only) with a wrong CRC."""
        with self._lock:
            self._corrupt.append((n, None if verbs is None else frozenset(verbs)))

    def send_garbage(self, data: bytes) -> None:
        """Write raw bytes on the line (noise, a partial frame, ...)."""
        with self._lock:
            self._write(data)
            self.line_faults["garbage"] += 1

    def clear_faults(self) -> None:
        """Forget pending drop/corrupt/ignore faults and end a silence."""
        with self._lock:
            self._drop.clear()
            self._corrupt.clear()
            self._ignore_commands = 0
            self._silent_until = 0.0

    def ignore_commands(self, n: int = 1) -> None:
        """Lose the next ``n`` LED/TEXT/BEEP/CFG commands on their way to the hub."""
        with self._lock:
            self._ignore_commands += n

    def go_silent(self, seconds: float) -> None:
        """Hang for ``seconds``: no polls, no frames, host commands ignored."""
        with self._lock:
            self._silent_until = self._now() + seconds

    @property
    def silent(self) -> bool:
        return self._now() < self._silent_until

    def unplug(self) -> None:
        """Pull the cable: the pty (or TCP server) goes away, the hub loses power."""
        with self._lock:
            self._drop_transport()
            self._hub = None
            log.info("hub emulator unplugged")

    def _drop_transport(self) -> None:
        """The transport and its stable symlink go away (the lock is held)."""
        if self._transport is not None:
            self._transport.close()
            self._transport = None
        if self.link_path and os.path.lexists(self.link_path):
            os.unlink(self.link_path)

    def replug(self) -> None:
        """Plug back in: a new pty behind :attr:`link_path` (or the same TCP
        port), and a fresh boot (new boot_id, HELLO)."""
        with self._lock:
            if self._transport is not None:
                return
            self.boot_id = make_boot_id()
            if self._kind == "pty":
                self._plug(PtyPort())
            elif self._kind == "tcp":
                self._plug(TcpPort(*self._tcp_address))
            else:
                raise RuntimeError("replug() before open_pty() or serve_tcp()")
    @staticmethod
    def _take(rules: list[tuple[int, frozenset[str] | None]], verb: str) -> bool:
        for i, (n, verbs) in enumerate(rules):
            if verbs is None or verb in verbs:
                if n <= 1:
                    del rules[i]
                else:
                    rules[i] = (n - 1, verbs)
                return True
        return False

    def _output(self, data: bytes) -> None:
        """What the firmware wrote (one frame or one ``#`` line), faults applied.
        The lock is held: the firmware only runs under it."""
        if self.silent:
            return
        if data[:1] == b"$":
            head = data[1:40].split(b" ", 2)
            verb = head[1].decode("ascii", "replace") if len(head) > 1 else ""
            if self._take(self._drop, verb):
                log.debug("emulator drops %r", data)
                self.line_faults["dropped"] += 1
                return
            if self._take(self._corrupt, verb):
                self.line_faults["corrupted"] += 1
                crc = int(data[-5:-1], 16) ^ 0x0101
                data = data[:-5] + b"%04X\n" % crc
            if verb in ("SEEN", "GONE"):
                self._edge_written_at = self._now()
        if self._capture is not None:
            self._capture.append(data)
        elif not self._write(data) and self._hub is not None:
            self._hub.tx_dropped += 1           # the line was full: the hub could not send it

    def _write(self, data: bytes, wait: float = WRITE_WAIT) -> bool:
        transport = self._transport
        return transport is not None and transport.write(data, wait)
