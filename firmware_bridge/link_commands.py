"""What the host sends the hub on the serial link (PROTOCOL.md "Host to hub"): LED, TEXT,
BEEP and CFG commands, each a :class:`Command` on its way to an ACK/NAK, queued while the
link is down, superseded by a newer one for the same LED, row or setting, sent again
after a reconnect.

:class:`HostCommands` is the sending half of :class:`~firmware_bridge.link.HubLink`
(its lock, port, sequence number and counters are the link's).
"""

from __future__ import annotations

import logging
import threading

import serial

from controller.core.cards import ascii_text

from .codec import MAX_MS, SEQ_MODULO, TEXT_COLS, TEXT_ROWS, encode

log = logging.getLogger(__name__)


class Command:
    """A host command on its way to an ACK/NAK.

    ``state`` is ``queued`` (waiting for the link), ``sent``, ``acked``,
    ``nacked`` (``reason`` says why), ``failed`` (no answer after the retries)
    or ``superseded`` (a newer LED/TEXT for the same index replaced it before
    it was sent).  ``wait(timeout)`` blocks until it is settled.
    """

    def __init__(self, verb: str, fields: tuple[str, ...]):
        self.verb = verb
        self.fields = fields
        self.state = "queued"
        self.reason: str | None = None
        self.attempts = 0
        self.seqs: list[int] = []
        self.sent_at = 0.0
        self._done = threading.Event()

    @property
    def key(self) -> tuple[str, str] | None:
        """Commands with the same key overwrite each other's effect on the hub."""
        if self.verb in ("LED", "TEXT", "CFG"):
            return (self.verb, self.fields[0])
        return None

    @property
    def done(self) -> bool:
        return self._done.is_set()

    def wait(self, timeout: float | None = None) -> bool:
        return self._done.wait(timeout)

    def _settle(self, state: str, reason: str | None = None) -> None:
        self.state, self.reason = state, reason
        self._done.set()

    def __repr__(self) -> str:
        return f"<Command {self.verb} {' '.join(self.fields)} {self.state}>"



class HostCommands:
    """The host's commands to the hub: the sending half of :class:`~firmware_bridge.link.HubLink`."""

    def set_led(self, index: int, rgb: str) -> Command:
        """Set indicator ``index`` to ``RRGGBB`` (``000000`` is off)."""
        colour = rgb.lstrip("#").upper()
        if len(colour) != 6 or any(c not in "0123456789ABCDEF" for c in colour):
            raise ValueError(f"LED colour must be RRGGBB hex, got {rgb!r}")
        return self._command("LED", _nonneg(index, "LED index"), colour)

    def text(self, row: int, text: str) -> Command:
        """Show ``text`` on display row ``row`` (0-3, at most 20 characters: PROTOCOL.md's
        bounds; suit symbols become letters, other characters the line cannot
        carry become ``?``)."""
        line = _line_safe(text)
        if _nonneg(row, "display row") >= TEXT_ROWS or len(line) > TEXT_COLS:
            raise ValueError(f"a display row is 0-{TEXT_ROWS - 1} with at most {TEXT_COLS} characters, "
                             f"got row {row} with {len(line)}")
        return self._command("TEXT", row, line)

    def beep(self, ms: int) -> Command:
        """Sound the buzzer for ``ms`` milliseconds (0-60000; 0 silences it)."""
        if _nonneg(ms, "beep length") > MAX_MS:
            raise ValueError(f"beep length must be at most {MAX_MS} ms, got {ms}")
        return self._command("BEEP", ms)

    def configure(self, key: str, value: object) -> Command:
        """Set a hub setting (``absent_ms``, ``poll_ms``); a whole-number value above
        60000 is refused here (PROTOCOL.md's bound), anything else is the hub's to judge."""
        if isinstance(value, int) and not isinstance(value, bool) and value > MAX_MS:
            raise ValueError(f"a hub setting is at most {MAX_MS}, got {key} = {value}")
        return self._command("CFG", str(key), str(value))

    def _command(self, verb: str, *fields: object) -> Command:
        args = tuple(str(f) for f in fields)
        encode(0, verb, *args)                       # ProtocolError for the caller now
        cmd = Command(verb, args)
        with self._lock:
            if cmd.key is not None:
                self._shown[cmd.key] = args
                for old in [c for c in self._queue if c.key == cmd.key]:
                    self._queue.remove(old)
                    old._settle("superseded")
            if self._phase == "ready" and self._port is not None:
                self._transmit(cmd)
            else:
                self._queue.append(cmd)
        return cmd

    def _transmit(self, cmd: Command) -> None:
        seq = self._send(cmd.verb, *cmd.fields)
        cmd.seqs.append(seq)
        cmd.attempts += 1
        cmd.sent_at = self._now()
        cmd.state = "sent"
        self._pending[seq] = cmd
        self._counters["commands_sent"] += 1

    def _send(self, verb: str, *fields: object) -> int:
        """Write one frame with the next host sequence number; return that number."""
        seq = self._seq
        self._seq = (seq + 1) % SEQ_MODULO
        port = self._port
        if port is None:
            return seq
        try:
            port.write(encode(seq, verb, *fields))
        except (serial.SerialException, OSError) as exc:
            self._dead = f"write failed: {exc}"
            log.debug("write of %s to %s failed: %s", verb, self.url, exc)
        return seq

    def _settle(self, cmd: Command, state: str, reason: str | None = None) -> None:
        for seq in cmd.seqs:
            self._pending.pop(seq, None)
        cmd._settle(state, reason)

    def _flush_queue(self) -> None:
        queue, self._queue = self._queue, []
        for cmd in queue:
            self._transmit(cmd)

    # ------------------------------------------------------------------ reader thread
    def _requeue_pending(self) -> None:
        """Commands in flight when the link died go out again after the reconnect."""
        waiting = []
        for cmd in dict.fromkeys(self._pending.values()):
            cmd.state = "queued"
            waiting.append(cmd)
        self._pending.clear()
        self._queue[:0] = waiting


def _nonneg(value: object, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"{what} must be a whole number >= 0, got {value!r}")
    return value


def _line_safe(text: str) -> str:
    """``text`` in the characters a TEXT frame can carry."""
    return ascii_text(text)
