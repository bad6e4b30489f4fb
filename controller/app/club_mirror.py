"""The club board's mirror of one table session: ``DIR/<table_id>/<session>/``.

:mod:`controller.app.club` describes the mirror (its docstring is the contract): the log's
lines written in line order only, a line seen twice dropped by (session, line), the lines
after a gap held in ``pending.jsonl`` (at most :data:`MAX_HELD`) until the fetch that
fills it, and copies of the session's ``config.toml`` and ``deck.toml``, so that
``preftable replay`` of the mirror prints the table's own summary (FORMATS.md).
"""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path

from ..core.errors import PreftableError
from ..store.files import open_append, open_read, read_bounded, write_all
from ..store.gamelog import CONFIG, DECK, EVENTS, SessionLog, write_atomic
from .mqtt_config import FETCH_LINES, SESSION_NAME
from .mqtt_outbox import count_lines

log = logging.getLogger(__name__)

PENDING = "pending.jsonl"
FETCH_RETRY_S = 2.0           # a fetch that brought nothing is asked again after this long
MAX_HELD = 20_000             # lines held after a gap per mirror (pending.jsonl), at most
SESSION_FILE_BYTES = 1 << 20


class BadMessage(PreftableError, ValueError):
    """A message on the club's topics that the board cannot take; ``reason`` names the kind."""

    def __init__(self, reason: str, detail: str):
        super().__init__(f"{reason}: {detail}")
        self.reason = reason


def check_session(value: object) -> str:
    if not isinstance(value, str) or not SESSION_NAME.fullmatch(value):
        raise BadMessage("wrong session", f"not a session name: {value!r}")
    return value


# --- a mirror of one session ------------------------------------------------------------------

class Mirror:
    """``DIR/<table>/<session>/``: the lines in order, the held ones, the copies."""

    def __init__(self, folder: Path):
        self.folder = folder
        folder.mkdir(parents=True, exist_ok=True)
        self.events_path = folder / EVENTS
        self.pending_path = folder / PENDING
        SessionLog(folder).drop_torn_line()           # the board was killed in the middle of a line
        self.lines = count_lines(self.events_path)[0] if self.events_path.exists() else 0
        self.dropped = 0                  # lines after a gap not held (the bound); fetched again later
        self.pending: dict[int, str] = self._load_pending()
        self.dirty = False
        self.duplicates = 0
        self._reported_gap: tuple[int, int] | None = None
        self.known = 0                    # lines the table's log has, as far as the board knows
        self._asked: tuple[int, int] | None = None      # the last fetch: its range, when, lines then
        self._asked_at = float("-inf")
        self._asked_lines = -1

    def _load_pending(self) -> dict[int, str]:
        held: dict[int, str] = {}
        damaged = 0
        try:
            with open_read(self.pending_path, folder=True) as fh:
                for raw in fh:
                    if len(held) >= MAX_HELD:
                        self.dropped += 1
                        continue
                    try:
                        doc = json.loads(raw)
                        held[int(doc["line"])] = str(doc["text"])
                    except (ValueError, KeyError, TypeError, RecursionError):
                        damaged += 1
        except FileNotFoundError:
            pass
        if damaged:
            log.warning("%s: skipped %d damaged lines", self.pending_path, damaged)
        return {n: t for n, t in held.items() if n > self.lines}

    def add(self, line: int, text: str) -> bool:
        """Take a line; False for one already here (a duplicate)."""
        if line <= self.lines or line in self.pending:
            self.duplicates += 1
            return False
        if line > self.lines + 1:
            self._hold(line, text)
            return True
        self._append(self.events_path, text.encode("utf-8") + b"\n")
        self.lines += 1
        self.dirty = True
        if self.pending:
            self._release()
        return True

    def _append(self, path: Path, data: bytes) -> None:
        """Open, append, close: a board following a thousand sessions holds no descriptor for
        them (the mirror's files are opened by the log dir's opener: no link followed)."""
        with open_append(path, folder=True) as fh:
            write_all(fh.fileno(), data)

    def sync(self) -> None:
        """On the board's sync thread: the lines written so far onto the disk."""
        if self.dirty:
            self.dirty = False
            with open_append(self.events_path, folder=True) as fh:
                os.fsync(fh.fileno())

    def _hold(self, line: int, text: str) -> None:
        if len(self.pending) >= MAX_HELD:
            # bounded: the line is not kept here; the board asks the table for it again
            self.dropped += 1
            if self.dropped == 1 or self.dropped % 10000 == 0:
                log.warning("%s: %d lines held after a gap already; later ones are fetched from the table "
                            "once the gap is filled (%d so far)", self.folder, MAX_HELD, self.dropped)
            return
        self.pending[line] = text
        self._append(self.pending_path, json.dumps({"line": line, "text": text}, ensure_ascii=False).encode()
                     + b"\n")
        gap = self.gap
        if gap != self._reported_gap and gap is not None and (self._reported_gap is None
                                                               or gap[0] != self._reported_gap[0]):
            log.warning("%s: lines %d-%d missing; holding %d later lines until the table resends them",
                        self.folder, gap[0], gap[1], len(self.pending))
        self._reported_gap = gap

    def _release(self) -> None:
        released = bytearray()
        while self.lines + 1 in self.pending:
            released += self.pending.pop(self.lines + 1).encode("utf-8") + b"\n"
            self.lines += 1
        if released:
            self._append(self.events_path, bytes(released))
            self.dirty = True
        self.pending = {n: t for n, t in self.pending.items() if n > self.lines}
        if self.pending:
            data = b"".join(json.dumps({"line": n, "text": t}, ensure_ascii=False).encode() + b"\n"
                            for n, t in sorted(self.pending.items()))
            write_atomic(self.pending_path, data)
        else:
            self.pending_path.unlink(missing_ok=True)
            log.info("%s: gap filled, mirror continuous at %d lines", self.folder, self.lines)
            self._reported_gap = None

    def missing(self) -> tuple[int, int] | None:
        """The first run of lines the mirror lacks: the gap, or what follows its last line
        up to the table's count (lines not held because of the bound included)."""
        gap = self.gap
        if gap is not None:
            return gap
        known = max(self.known, max(self.pending, default=0))
        return (self.lines + 1, known) if known > self.lines else None

    def fetch_due(self, now: float) -> tuple[int, int] | None:
        """The range to ask the table for now, or None (nothing missing, or an answer is on its
        way: the mirror is still growing towards the last range asked, or it was asked lately)."""
        want = self.missing()
        if want is None:
            self._asked = None
            return None
        if self._asked is not None and self.lines < self._asked[1]:
            if self.lines > self._asked_lines:          # the answer is coming in
                self._asked_at, self._asked_lines = now, self.lines
            if now - self._asked_at < FETCH_RETRY_S:
                return None
        asked = (want[0], min(want[1], want[0] + FETCH_LINES - 1))
        self._asked, self._asked_at, self._asked_lines = asked, now, self.lines
        return asked

    @property
    def gap(self) -> tuple[int, int] | None:
        """The first missing run of lines (first, last), or None."""
        if not self.pending:
            return None
        return self.lines + 1, min(self.pending) - 1

    def copies(self, config: str | None, deck: str | None) -> None:
        for name, text in ((CONFIG, config), (DECK, deck)):
            if text is None:
                continue
            path = self.folder / name
            data = text.encode("utf-8")
            try:
                same = read_bounded(path, SESSION_FILE_BYTES, folder=True) == data
            except OSError:             # missing, or not a file the board made: written anew
                same = False
            if not same:
                write_atomic(path, data)

    def close(self) -> None:
        try:
            self.sync()
        except OSError as exc:
            log.error("%s: cannot sync the mirror: %s", self.folder, exc.strerror)

