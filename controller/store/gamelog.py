"""Game logs (FORMATS.md "Game log"): one folder per session, crash-safe.

``events.jsonl`` gets every table event, each followed by the derived lines
(``"kind"``) the tracker made of it; every line is flushed as it is written and
the file is fsync'd at every trick's and deal's end.  After a crash or power
cut, :meth:`SessionLog.resume` drops a torn last line, and the table is exactly
as it was after the last whole line.

``checkpoints.jsonl`` is an append-only journal, one line per ended deal: that
deal's record and the table between deals, with the byte offset in
``events.jsonl`` it stands for.  Resuming reads the journal and replays only
the events after its last line, so a 1,000-deal session resumes in
milliseconds; the journal is derived data, and without it (or with a line that
does not fit the events file) the events are replayed from the start.

A session is finished (and never resumed) once ``summary.json`` exists.
"""

from __future__ import annotations

import json
import logging
import os
from datetime import datetime, timezone
from pathlib import Path
from typing import Iterable

from ..core.config import GameConfig, load_game_config
from ..core.deck import Deck, load_deck
from ..core.errors import LogError
from ..core.events import TableEvent, read_events
from .replay import decoded_lines
from ..core.tracker import BetweenDeals, DealTracker, Signal
from . import checkpoints

log = logging.getLogger(__name__)

EVENTS = "events.jsonl"
CHECKPOINTS = "checkpoints.jsonl"
CONFIG = "config.toml"
DECK = "deck.toml"
SUMMARY = "summary.json"
_SYNC_KINDS = frozenset({"trick", "deal", "abandon", "undo"})


def _dumps(obj: dict) -> bytes:
    return (json.dumps(obj, ensure_ascii=False, separators=(", ", ": ")) + "\n").encode("utf-8")


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_atomic(path: Path, data: bytes) -> None:
    """Write a whole file so that a crash leaves either the old or the new one."""
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "wb") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)
    _fsync_dir(path.parent)


class SessionLog:
    """An open session folder, appending to its ``events.jsonl``."""

    def __init__(self, folder: Path):
        self.folder = folder
        self.events_path = folder / EVENTS
        self.checkpoints_path = folder / CHECKPOINTS
        self._fh = None
        self._journal = None
        self.size = 0           # bytes of events.jsonl written so far (known after resume/create)
        self.count = 0          # table events in it

    # --- finding and creating sessions -------------------------------------------------

    @staticmethod
    def sessions(log_dir: Path) -> list[Path]:
        """Session folders under ``log_dir``, oldest first (names are UTC start times)."""
        if not log_dir.is_dir():
            return []
        return sorted(p for p in log_dir.iterdir() if p.is_dir() and (p / EVENTS).exists())

    @classmethod
    def newest_unfinished(cls, log_dir: Path) -> "SessionLog | None":
        for folder in reversed(cls.sessions(log_dir)):
            if not (folder / SUMMARY).exists():
                return cls(folder)
        return None

    @classmethod
    def create(cls, log_dir: Path, game: GameConfig, deck: Deck | None,
               now: datetime | None = None) -> "SessionLog":
        now = now or datetime.now(timezone.utc)
        stamp = now.strftime("%Y-%m-%dT%H-%M-%SZ")
        try:
            log_dir.mkdir(parents=True, exist_ok=True)
            folder = log_dir / stamp
            n = 1
            while True:
                try:
                    folder.mkdir()
                    break
                except FileExistsError:
                    n += 1
                    folder = log_dir / f"{stamp}-{n}"
            write_atomic(folder / CONFIG, game.to_toml().encode("utf-8"))
            if deck is not None:
                write_atomic(folder / DECK, deck.to_toml().encode("utf-8"))
            (folder / EVENTS).touch()
            _fsync_dir(folder)
        except OSError as exc:
            raise LogError(f"{log_dir}: cannot create a session folder: {exc.strerror}") from None
        log.info("new session %s", folder)
        return cls(folder)

    # --- reading -----------------------------------------------------------------------

    def game_config(self) -> GameConfig:
        return load_game_config(self.folder / CONFIG)

    def deck(self) -> Deck | None:
        path = self.folder / DECK
        return load_deck(path) if path.exists() else None

    def drop_torn_line(self, path: Path | None = None) -> int:
        """Truncate a last line that was cut short by a crash; return the bytes dropped."""
        path = path or self.events_path
        if not path.exists():
            return 0
        try:
            with open(path, "rb+") as fh:
                data = fh.read()
                if not data or data.endswith(b"\n"):
                    return 0
                keep = data.rfind(b"\n") + 1
                fh.truncate(keep)
                fh.flush()
                os.fsync(fh.fileno())
                log.warning("%s: dropped a torn last line (%d bytes)", path, len(data) - keep)
                return len(data) - keep
        except OSError as exc:
            raise LogError(f"{path}: cannot repair: {exc.strerror}") from None

    def table_events(self, zones: Iterable[str], offset: int = 0) -> list[TableEvent]:
        try:
            with open(self.events_path, "rb") as fh:
                fh.seek(offset)
                data = fh.read()
        except OSError as exc:
            raise LogError(f"{self.events_path}: cannot read: {exc.strerror}") from None

        def bad(number: int, message: str) -> None:
            log.warning("%s:%d: skipped: %s", self.events_path, number, message)

        return list(read_events(decoded_lines(data, bad), tuple(zones), bad))

    def replay(self, game: GameConfig | None = None, deck: Deck | None = None
               ) -> tuple[DealTracker, list[TableEvent]]:
        """A tracker fed every table event of the log (read only), and those events."""
        tracker = DealTracker(game or self.game_config(), deck if deck is not None else self.deck())
        events = self.table_events(tracker.zones)
        for event in events:
            tracker.feed(event)
        return tracker, events

    def _checkpoints(self, size: int) -> tuple[list[bytes], dict | None]:
        """The journal lines before the last usable one (raw), and that one parsed.

        Only the last line is parsed here: it must fit an events file of ``size``
        bytes and be the journal's n-th deal.  A damaged last line is dropped and the
        one before it tried.
        """
        self.drop_torn_line(self.checkpoints_path)
        try:
            lines = self.checkpoints_path.read_bytes().splitlines()
        except FileNotFoundError:
            return [], None
        except OSError as exc:
            log.warning("%s: cannot read (%s): replaying all events", self.checkpoints_path, exc.strerror)
            return [], None
        if not all(line.startswith(b'{"offset":') and line.endswith(b"}") for line in lines):
            log.warning("%s: damaged: replaying all events", self.checkpoints_path)
            return [], None
        while lines:
            try:
                last = json.loads(lines[-1])
                if (isinstance(last["offset"], int) and 0 < last["offset"] <= size
                        and last["record"]["number"] == len(lines)):
                    return lines[:-1], last
            except (ValueError, KeyError, TypeError):
                pass
            log.warning("%s:%d: does not fit the events; using the line before it",
                        self.checkpoints_path, len(lines))
            lines.pop()
        return [], None

    def resume(self, game: GameConfig, deck: Deck | None) -> tuple[DealTracker, int, float]:
        """The tracker as after the log's last whole line (a torn line is dropped).

        Returns the tracker, the number of table events in the log and the last ``t``.
        """
        self.drop_torn_line()
        size = self.events_path.stat().st_size
        earlier, last = self._checkpoints(size)
        try:
            tracker = checkpoints.restore(game, deck, earlier, last)
        except (KeyError, TypeError, ValueError) as exc:
            log.warning("%s: unusable (%s): replaying all events", self.checkpoints_path, exc)
            last, tracker = None, DealTracker(game, deck)
        offset = last["offset"] if last else 0
        tail = self.table_events(tracker.zones, offset)
        for event in tail:
            tracker.feed(event)
        self.size = size
        self.count = (last["events"] if last else 0) + len(tail)
        last_t = tail[-1].t if tail else (last["t"] if last else 0.0)
        return tracker, self.count, last_t

    # --- writing -----------------------------------------------------------------------

    def _open(self):
        if self._fh is None:
            try:
                self._fh = open(self.events_path, "ab", buffering=0)
            except OSError as exc:
                raise LogError(f"{self.events_path}: cannot append: {exc.strerror}") from None
        return self._fh

    def append(self, event: TableEvent, signals: Iterable[Signal],
               checkpoint: BetweenDeals | None = None) -> None:
        """Append a table event and its derived lines; fsync at a trick's or deal's end.

        ``checkpoint`` (the tracker's, when a deal ended) goes to the journal once the
        events it stands for are on disk.
        """
        data = bytearray(_dumps(event.to_dict()))
        sync = checkpoint is not None
        for signal in signals:
            data += _dumps(signal.to_dict())
            sync = sync or signal.kind in _SYNC_KINDS
        fh = self._open()
        try:
            fh.write(bytes(data))       # unbuffered: one write per event, in the kernel at once
            if sync:
                os.fsync(fh.fileno())
        except OSError as exc:
            raise LogError(f"{self.events_path}: cannot write: {exc.strerror}") from None
        self.size += len(data)
        self.count += 1
        if checkpoint is not None:
            self._write_checkpoint({"offset": self.size, "events": self.count, "t": event.t,
                                    **checkpoints.encode(checkpoint)})

    def _write_checkpoint(self, cp: dict) -> None:
        try:
            if self._journal is None:
                self._journal = open(self.checkpoints_path, "ab", buffering=0)
            self._journal.write(json.dumps(cp, ensure_ascii=False, separators=(",", ":")).encode() + b"\n")
            os.fsync(self._journal.fileno())
        except OSError as exc:      # derived data: the events alone are enough to resume
            log.warning("%s: cannot write (%s); a resume will replay more events",
                        self.checkpoints_path, exc.strerror)

    def finish(self, summary: dict) -> Path:
        """Mark the session finished by writing its ``summary.json``."""
        self.close()
        path = self.folder / SUMMARY
        write_atomic(path, (json.dumps(summary, ensure_ascii=False, indent=2) + "\n").encode("utf-8"))
        return path

    def close(self) -> None:
        if self._journal is not None:
            self._journal.close()
            self._journal = None
        if self._fh is not None:
            try:
                os.fsync(self._fh.fileno())
            finally:
                self._fh.close()
                self._fh = None
