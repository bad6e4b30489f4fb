"""The MQTT publisher's outbox: one session's ``events.jsonl`` and its acknowledged mark.

The log is the outbox (:mod:`controller.app.mqtt` says how, FORMATS.md says what a line
is): lines are read from the file itself, and ``mqtt-acked.json`` next to it keeps, as
one fixed-width record, the last line ``N`` such that the broker acknowledged every line
up to ``N``.  Also here: the board's fetch requests and the lines they ask for.
"""

from __future__ import annotations

import errno
import json
import logging
import os
from pathlib import Path

from ..core.errors import LogError
from ..store.files import clear_temporary, open_fd, open_read, read_bounded
from ..store.gamelog import CONFIG, DECK, EVENTS, SessionLog
from .mqtt_config import MARK_BYTES, MARK_FILE, READ_CHUNK, SESSION_FILE_BYTES, SESSION_NAME

log = logging.getLogger(__name__)

def mark_record(line: int) -> bytes:
    """The acked mark as a record of fixed width (JSON with the number padded)."""
    return b'{"line": %12d}\n' % line


class MarkFile:
    """``mqtt-acked.json``, rewritten in place: one ``pwrite`` of a fixed-width record.

    No rename, no fsync: the publisher's thread never waits for the disk (on
    ext4 a rename over a file flushes the new one's data first).  A SIGKILL
    leaves the old record or the new one; a power cut may leave an older one or
    a damaged one (read as 0).  Either only means lines published again, which
    subscribers drop.
    """

    def __init__(self, path: Path):
        self.path = path
        self._fd: int | None = None

    def write(self, line: int) -> None:
        if self._fd is None:
            flags = os.O_RDWR | os.O_CREAT
            try:
                self._fd = open_fd(self.path, flags, folder=True)
            except OSError as exc:
                if exc.errno not in (errno.ELOOP, errno.EINVAL) or not self.path.parent.is_dir():
                    raise
                # a link or a FIFO planted at the mark: replaced, never written through
                log.warning("%s: not a regular file (%s); replaced", self.path, exc.strerror)
                clear_temporary(self.path)
                self._fd = open_fd(self.path, flags, folder=True)
        os.pwrite(self._fd, mark_record(line), 0)

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def count_lines(path: Path) -> tuple[int, int]:
    """(whole lines, bytes they take) of a file; a torn last line is not counted."""
    lines = size = 0
    with open_read(path, folder=True) as fh:
        while chunk := fh.read(READ_CHUNK):
            lines += chunk.count(b"\n")
            size += len(chunk)
            last = chunk
        if size and not last.endswith(b"\n"):
            size -= len(last) - (last.rfind(b"\n") + 1)
    return lines, size


def _line_text(raw: bytes, path: Path, number: int) -> str:
    """A log line as published: its text, or (not UTF-8) with replacement characters."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        log.warning("%s:%d: not UTF-8; published with replacement characters", path, number)
        return raw.decode("utf-8", errors="replace")


def fetch_request(payload: bytes) -> tuple[str, int, int] | None:
    """``{"session", "from", "to"}`` of a board's fetch message, checked; None if it is not one."""
    if len(payload) > 512:
        return None
    try:
        doc = json.loads(payload)
    except (ValueError, RecursionError):
        return None
    if not isinstance(doc, dict):
        return None
    session, first, last = doc.get("session"), doc.get("from"), doc.get("to")
    if not isinstance(session, str) or not SESSION_NAME.fullmatch(session):
        return None
    if any(isinstance(v, bool) or not isinstance(v, int) for v in (first, last)) or not 1 <= first <= last:
        return None
    return session, first, last


def log_lines(path: Path, first: int, last: int) -> list[tuple[int, str]]:
    """Whole lines ``first`` to ``last`` (counted from 1) of a log, with their numbers."""
    out: list[tuple[int, str]] = []
    number, rest = 1, b""
    with open_read(path, folder=True) as fh:
        while number <= last and (chunk := fh.read(READ_CHUNK)):
            data = rest + chunk
            at = 0
            while number <= last:
                nl = data.find(b"\n", at)
                if nl < 0:
                    break
                if number >= first:
                    out.append((number, _line_text(data[at:nl], path, number)))
                number += 1
                at = nl + 1
            rest = data[at:] if number >= first else b""   # lines before ``first`` are only counted
    return out


class Outbox:
    """The lines of one session's log that the broker has not acknowledged yet."""

    def __init__(self, folder: Path):
        if os.path.islink(folder) or not folder.is_dir():
            raise LogError(f"{folder}: not a session folder (a symlink?); nothing of it is published")
        self.folder = folder
        self.session = folder.name
        self.events_path = folder / EVENTS
        self.mark_path = folder / MARK_FILE
        self.acked = self._load_mark()
        self.saved = self.acked if self.mark_path.exists() else -1
        self._mark_file = MarkFile(self.mark_path)
        self._acked_above: set[int] = set()
        self.refused: set[int] = set()
        self.handed = 0              # lines handed to paho and not answered yet
        self.announced = False       # the session message went out on this connection
        self._position_after(self.acked)

    def _load_mark(self) -> int:
        try:
            doc = json.loads(read_bounded(self.mark_path, MARK_BYTES, folder=True))
            line = doc["line"]
            if isinstance(line, int) and not isinstance(line, bool) and line >= 0:
                return line
            raise ValueError(f"bad line {line!r}")
        except FileNotFoundError:
            return 0
        except (OSError, ValueError, KeyError, TypeError) as exc:
            log.warning("%s: unreadable (%s): publishing the session from its first line", self.mark_path, exc)
            return 0

    def _position_after(self, line: int) -> None:
        """Read on from the line after ``line`` (the start of the file for 0)."""
        self.next_line, self.offset = 1, 0
        if line == 0 or not self.events_path.exists():
            return
        count = 0
        with open_read(self.events_path, folder=True) as fh:
            while count < line and (chunk := fh.read(READ_CHUNK)):
                at = 0
                while count < line:
                    nl = chunk.find(b"\n", at)
                    if nl < 0:
                        break
                    count += 1
                    at = nl + 1
                self.offset += at if count == line else len(chunk)
        if count < line:
            # the log lost lines after a power cut (fsync'd at each trick); the mark was ahead of it
            log.warning("%s: the acked mark says %d lines but the log has %d: publishing from line %d",
                        self.mark_path, line, count, count + 1)
            self.acked = count
        self.next_line = count + 1

    def take(self, limit: int) -> list[tuple[int, str]]:
        """Up to ``limit`` whole lines not handed out yet, with their numbers."""
        if limit <= 0:
            return []
        try:
            if os.stat(self.events_path).st_size <= self.offset:
                return []                # nothing new (most ticks): no open, no read
            with open_read(self.events_path, folder=True) as fh:
                fh.seek(self.offset)
                data = fh.read(READ_CHUNK)
        except FileNotFoundError:
            return []
        except OSError as exc:
            raise LogError(f"{self.events_path}: cannot read: {exc.strerror}") from None
        out = []
        at = 0
        while len(out) < limit:
            nl = data.find(b"\n", at)
            if nl < 0:
                break                # a line being written, or the end of what was read
            raw = data[at:nl]
            at = nl + 1
            out.append((self.next_line, _line_text(raw, self.events_path, self.next_line)))
            self.next_line += 1
        self.offset += at
        return out

    @property
    def lines_read(self) -> int:
        return self.next_line - 1

    def answer(self, line: int, ok: bool) -> None:
        self.handed -= 1
        if not ok:
            self.refused.add(line)
            return
        if line <= self.acked:
            return
        self._acked_above.add(line)
        while self.acked + 1 in self._acked_above:
            self.acked += 1
            self._acked_above.discard(self.acked)

    def rewind(self, to: int | None = None) -> None:
        """Offer again every line after the mark, lowered to ``to`` if given (the broker
        lost lines it had acknowledged); the lines the subscribers have come twice."""
        if to is not None and to < self.acked:
            self.acked = to
        self.refused.clear()
        self._acked_above.clear()
        self._position_after(self.acked)

    def save(self) -> None:
        if self.acked == self.saved:
            return
        try:
            self._mark_file.write(self.acked)
            self.saved = self.acked
        except OSError as exc:       # only costs lines sent twice after a restart
            log.warning("%s: cannot write (%s)", self.mark_path, exc.strerror)

    def close(self) -> None:
        self._mark_file.close()

    def drained(self) -> bool:
        """Every whole line of the file acknowledged (and nothing in flight)."""
        return (self.handed == 0 and not self.refused and self.acked == self.lines_read
                and not self._more_written())

    def _more_written(self) -> bool:
        try:
            with open_read(self.events_path, folder=True) as fh:
                fh.seek(self.offset)
                return b"\n" in fh.read(READ_CHUNK)
        except FileNotFoundError:
            return False
        except OSError as exc:
            raise LogError(f"{self.events_path}: cannot read: {exc.strerror}") from None

    def session_message(self, table_id: str) -> dict:
        def text(name: str) -> str | None:
            try:
                return read_bounded(self.folder / name, SESSION_FILE_BYTES, folder=True).decode("utf-8")
            except FileNotFoundError:
                return None
            except (OSError, UnicodeDecodeError) as exc:
                log.warning("%s: not published (%s)", self.folder / name, getattr(exc, "strerror", None) or exc)
                return None
        return {"table": table_id, "session": self.session, "config": text(CONFIG), "deck": text(DECK)}


def unfinished_outboxes(log_dir: Path) -> list[Path]:
    """Session folders this publisher has started on (a mark exists) but not finished, oldest first."""
    if not log_dir.is_dir():
        return []
    found = []
    # SessionLog.sessions: never a symlinked folder (its lines are not this table's to publish)
    for folder in (p for p in SessionLog.sessions(log_dir) if os.path.lexists(p / MARK_FILE)):
        box = Outbox(folder)
        if box.acked < count_lines(box.events_path)[0]:
            found.append(folder)
    return found

