"""Game logs (FORMATS.md "Game log"): one folder per session, crash-safe.

``events.jsonl`` gets every table event, each followed by the derived lines
(``"kind"``) the tracker made of it; every line is flushed as it is written and
the file is fsync'd at every trick's and deal's end.  After a crash or power
cut, :meth:`SessionLog.open` drops a torn last line, and replaying the table
events gives the table exactly as it was after the last whole line.

A session is finished (and never resumed) once ``summary.json`` exists.
"""

from __future__ import annotations

import json
import logging
import os
from datetime import datetime, timezone
from pathlib import Path
from typing import Iterable

from .config import GameConfig, load_game_config
from .deck import Deck, load_deck
from .errors import LogError
from .events import TableEvent, read_events
from .replay import decoded_lines
from .tracker import DealTracker, Signal

log = logging.getLogger(__name__)

EVENTS = "events.jsonl"
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
        self._fh = None

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

    def drop_torn_line(self) -> int:
        """Truncate a last line that was cut short by a crash; return the bytes dropped."""
        try:
            with open(self.events_path, "rb+") as fh:
                data = fh.read()
                if not data or data.endswith(b"\n"):
                    return 0
                keep = data.rfind(b"\n") + 1
                fh.truncate(keep)
                fh.flush()
                os.fsync(fh.fileno())
                log.warning("%s: dropped a torn last line (%d bytes)", self.events_path, len(data) - keep)
                return len(data) - keep
        except OSError as exc:
            raise LogError(f"{self.events_path}: cannot repair: {exc.strerror}") from None

    def table_events(self, zones: Iterable[str]) -> list[TableEvent]:
        try:
            data = self.events_path.read_bytes()
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

    def resume(self, game: GameConfig, deck: Deck | None) -> tuple[DealTracker, list[TableEvent]]:
        """A tracker in the state after the log's last whole line (a torn line is dropped)."""
        self.drop_torn_line()
        return self.replay(game, deck)

    # --- writing -----------------------------------------------------------------------

    def _open(self):
        if self._fh is None:
            try:
                self._fh = open(self.events_path, "ab", buffering=0)
            except OSError as exc:
                raise LogError(f"{self.events_path}: cannot append: {exc.strerror}") from None
        return self._fh

    def append(self, event: TableEvent, signals: Iterable[Signal]) -> None:
        """Append a table event and its derived lines; fsync at a trick's or deal's end."""
        data = bytearray(_dumps(event.to_dict()))
        sync = False
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

    def sync(self) -> None:
        if self._fh is not None:
            os.fsync(self._fh.fileno())

    def finish(self, summary: dict) -> Path:
        """Mark the session finished by writing its ``summary.json``."""
        self.close()
        path = self.folder / SUMMARY
        write_atomic(path, (json.dumps(summary, ensure_ascii=False, indent=2) + "\n").encode("utf-8"))
        return path

    def close(self) -> None:
        if self._fh is not None:
            try:
                os.fsync(self._fh.fileno())
            finally:
                self._fh.close()
                self._fh = None
