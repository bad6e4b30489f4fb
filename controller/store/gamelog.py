"""Game logs (FORMATS.md "Game log"): one folder per session, crash-safe, repaired on resume.

``events.jsonl`` gets every table event, each followed by the derived lines
(``"kind"``) the tracker made of it; each group is one checked write, and the
file is fsync'd at every trick's and deal's end.  ``checkpoints.jsonl`` is the
checkpoint journal (:mod:`controller.store.journal`): one verified line per
ended deal, so a long session resumes without replaying it all.  A session is
finished (and never resumed) once ``summary.json`` exists.

After a crash, a power cut or a full disk, :meth:`SessionLog.resume` leaves the
table exactly as after the log's last whole line, and the log as a replay of
its table-event lines would write it (FORMATS.md):

- a torn last line is dropped (found by seeking to the file's end);
- journal lines that do not fit the events (a file that shrank and grew again,
  an edited line) are cut, and the journal is rebuilt from the events, also
  when it is lost;
- the missing derived lines of a torn group are written;
- anything else that is not what the table writes (a zeroed block, a line cut
  in the middle, an invalid line) is repaired: the file is rewritten from that
  point with the readable table events after it and their derived lines, and
  the bytes replaced are kept in ``events.jsonl.damaged``;
- all of it is said in one WARNING line.

The resume and its repairs are :mod:`controller.store.repair`, the half of
:class:`SessionLog` this module's writer stands on.

A session that cannot be read at all (``config.toml`` missing or invalid,
``events.jsonl`` not a regular file) raises :class:`SessionUnreadable`; the
service moves it aside (:meth:`SessionLog.set_aside`, ``<name>.unreadable``)
and starts a new one, instead of failing at every start.

A write that fails (a full disk) loses nothing and tears nothing: the partial
write is cut off again, the lines wait in memory, and every later append tries
again; one ERROR line says so, one WARNING line when they are written.
"""

from __future__ import annotations

import errno
import json
import logging
import os
import stat
import time
import tomllib
from datetime import datetime, timezone
from pathlib import Path
from typing import Iterable

from ..core.config import GameConfig, session_config_from_dict
from ..core.deck import Deck, load_deck
from ..core.errors import LogError, PreftableError
from ..core.events import TableEvent
from ..core.tracker import DealTracker, Signal
from . import checkpoints
from . import journal as jr
from .files import DIR_MODE, fsync_dir, make_dir, open_append, open_fd, open_read, read_bounded, write_all, write_atomic
from .replay import events_of_stream
# The resume half of the session log; its names stay importable from here.
from .repair import DAMAGED, LogRepair, SessionUnreadable, event_lines

log = logging.getLogger(__name__)

EVENTS = "events.jsonl"
CHECKPOINTS = "checkpoints.jsonl"
CONFIG = "config.toml"
DECK = "deck.toml"
SUMMARY = "summary.json"
UNREADABLE = ".unreadable"
_SYNC_KINDS = frozenset({"trick", "deal", "abandon", "undo"})
_FULL = (errno.ENOSPC, errno.EDQUOT, errno.EFBIG)
MAX_SESSION_FILE = 1 << 20      # a session's config.toml or deck.toml is read only up to this size

__all__ = ["SessionLog", "SessionUnreadable", "write_atomic", "EVENTS", "CHECKPOINTS", "CONFIG",
           "DECK", "SUMMARY", "DAMAGED", "event_lines"]



class SessionLog(LogRepair):
    """An open session folder, appending to its ``events.jsonl``."""

    def __init__(self, folder: Path):
        self.folder = folder
        self.events_path = folder / EVENTS
        self.checkpoints_path = folder / CHECKPOINTS
        self.journal = jr.Journal(self.checkpoints_path)
        self._fh = None
        self.size = 0           # bytes of events.jsonl written so far (known after resume/create)
        self.count = 0          # table events in it
        self.repairs: list[str] = []    # what the last resume repaired
        self._resuming = False
        self._sums = jr.Checksums()     # of the events file's bytes (for the journal)
        self._pending = bytearray()     # lines not yet written (a full disk)
        self._pending_cps: list[tuple[int, int, float, dict]] = []
        self._sync_due = False
        self._failing: str | None = None
        self._unborn: tuple[GameConfig, Deck | None] | None = None  # folder still to be made
        self._no_journal = False        # the file holds damage not yet repaired: no checkpoints

    # --- finding and creating sessions -------------------------------------------------

    @staticmethod
    def sessions(log_dir: Path) -> list[Path]:
        """Session folders under ``log_dir``, oldest first (names are UTC start times).

        Symlinked folders, folders set aside as unreadable, and folders whose
        ``events.jsonl`` is not a regular file are not sessions.
        """
        try:
            children = list(log_dir.iterdir())
        except OSError:
            return []
        return sorted(p for p in children
                      if not p.name.endswith(UNREADABLE) and stat.S_ISDIR(os.lstat(p).st_mode)
                      and (p / EVENTS).exists())

    @classmethod
    def newest_unfinished(cls, log_dir: Path) -> "SessionLog | None":
        for folder in reversed(cls.sessions(log_dir)):
            if not os.path.lexists(folder / SUMMARY):
                return cls(folder)
        return None

    @classmethod
    def create(cls, log_dir: Path, game: GameConfig, deck: Deck | None,
               now: datetime | None = None) -> "SessionLog":
        """A new session folder.  On a full disk the folder is made later, at the first
        write that finds room; the game goes on meanwhile."""
        now = now or datetime.now(timezone.utc)
        stamp = now.strftime("%Y-%m-%dT%H-%M-%SZ")
        try:
            if not log_dir.is_dir():
                log_dir.mkdir(parents=True, mode=DIR_MODE)
                os.chmod(log_dir, DIR_MODE)
            folder = log_dir / stamp
            n = 1
            while os.path.lexists(folder) or os.path.lexists(folder.with_name(folder.name + UNREADABLE)):
                n += 1
                folder = log_dir / f"{stamp}-{n}"
        except OSError as exc:
            raise LogError(f"{log_dir}: cannot create a session folder: {exc.strerror}") from None
        session = cls(folder)
        session._unborn = (game, deck)
        try:
            session._materialize()
        except OSError as exc:
            if exc.errno not in _FULL:
                raise LogError(f"{log_dir}: cannot create a session folder: {exc.strerror}") from None
            session._fail(exc)
        log.info("new session %s", folder)
        return session

    def _materialize(self) -> None:
        """Make the folder of a new session with its config, deck and empty events file."""
        if self._unborn is None:
            return
        game, deck = self._unborn
        try:
            make_dir(self.folder)
        except FileExistsError:
            pass                # a retry after a full disk: the folder was made before
        write_atomic(self.folder / CONFIG, game.to_toml().encode("utf-8"))
        if deck is not None:
            write_atomic(self.folder / DECK, deck.to_toml().encode("utf-8"))
        os.close(open_fd(self.events_path, os.O_WRONLY | os.O_CREAT))
        fsync_dir(self.folder)
        fsync_dir(self.folder.parent)
        self._unborn = None

    def set_aside(self, reason: str) -> Path:
        """Move an unreadable session out of the way (``<name>.unreadable``), with one WARNING."""
        target = self.folder.with_name(self.folder.name + UNREADABLE)
        n = 1
        while os.path.lexists(target):
            n += 1
            target = self.folder.with_name(f"{self.folder.name}{UNREADABLE}-{n}")
        try:
            os.rename(self.folder, target)
        except OSError as exc:
            raise LogError(f"{self.folder}: unreadable ({reason}) and cannot be moved aside: "
                           f"{exc.strerror}") from None
        log.warning("%s: cannot be resumed (%s); moved to %s, starting a new session",
                    self.folder, reason, target.name)
        return target

    # --- reading -----------------------------------------------------------------------

    def game_config(self) -> GameConfig:
        """The session's rules, from its ``config.toml`` (without ``bidding``: the first edition
        wrote it, ``false``) read through the opener: a link, a
        FIFO or a file over :data:`MAX_SESSION_FILE` bytes is :class:`SessionUnreadable`
        (never followed, waited on or read whole)."""
        path = self.folder / CONFIG
        if os.path.islink(path):
            raise SessionUnreadable(f"{path}: is a symlink")
        try:
            doc = tomllib.loads(read_bounded(path, MAX_SESSION_FILE, folder=True).decode("utf-8"))
            return session_config_from_dict(doc)
        except FileNotFoundError:
            raise SessionUnreadable(f"{path}: no such config file") from None
        except OSError as exc:
            raise SessionUnreadable(f"{path}: cannot read: {exc.strerror}") from None
        except UnicodeDecodeError:
            raise SessionUnreadable(f"{path}: not valid TOML: not UTF-8 text") from None
        except tomllib.TOMLDecodeError as exc:
            raise SessionUnreadable(f"{path}: not valid TOML: {exc}") from None
        except PreftableError as exc:
            raise SessionUnreadable(f"{path}: {exc}") from None

    def deck(self) -> Deck | None:
        path = self.folder / DECK
        if not os.path.lexists(path):
            return None
        if os.path.islink(path):
            raise SessionUnreadable(f"{path}: is a symlink")
        try:        # a regular file of a bounded size (a FIFO would hang the start), then parsed
            with open_read(path, folder=True) as fh:
                size = os.fstat(fh.fileno()).st_size
            if size > MAX_SESSION_FILE:
                raise SessionUnreadable(f"{path}: larger than {MAX_SESSION_FILE:,} bytes ({size:,})")
            return load_deck(path)
        except OSError as exc:
            raise SessionUnreadable(f"{path}: cannot read: {exc.strerror}") from None
        except PreftableError as exc:
            raise SessionUnreadable(str(exc)) from None

    def table_events(self, zones: Iterable[str], offset: int = 0) -> list[TableEvent]:
        """The valid table events of the log from byte ``offset`` (invalid lines logged)."""
        def bad(number: int, message: str) -> None:
            log.warning("%s:%d: skipped: %s", self.events_path, number, message)

        try:
            with open_read(self.events_path) as fh:
                fh.seek(offset)
                return list(events_of_stream(fh, tuple(zones), bad))
        except OSError as exc:
            raise LogError(f"{self.events_path}: cannot read: {exc.strerror}") from None

    def replay(self, game: GameConfig | None = None, deck: Deck | None = None
               ) -> tuple[DealTracker, list[TableEvent]]:
        """A tracker fed every table event of the log (read only), and those events."""
        tracker = DealTracker(game or self.game_config(), deck if deck is not None else self.deck())
        events = self.table_events(tracker.zones)
        for event in events:
            tracker.feed(event)
        return tracker, events

    # --- writing -----------------------------------------------------------------------

    def _open(self):
        if self._fh is None:
            self._materialize()
            self._fh = open_append(self.events_path)
        return self._fh

    def _queue(self, data: bytes, sync: bool) -> None:
        self._pending += data
        self._sync_due = self._sync_due or sync

    def _fail(self, exc: OSError) -> None:
        if self._failing is None:
            full = "the disk is full" if exc.errno in _FULL else exc.strerror
            log.error("%s: cannot write (%s): the game goes on in memory and is written "
                      "as soon as it can be", self.events_path, full)
        self._failing = exc.strerror or str(exc)

    def _flush(self) -> bool:
        """Write the waiting lines (then their checkpoints); False if they must wait more."""
        if not self._pending:
            return True
        try:
            fh = self._open()
        except OSError as exc:
            self._fail(exc)
            return False
        try:
            write_all(fh.fileno(), self._pending)
            if self._sync_due:
                os.fsync(fh.fileno())
        except OSError as exc:
            try:                # cut a partial write off again: never leave a torn line
                os.ftruncate(fh.fileno(), self.size)
            except OSError:
                pass
            self._fail(exc)
            return False
        data, cps = bytes(self._pending), self._pending_cps
        self._pending, self._pending_cps, self._sync_due = bytearray(), [], False
        lines, done = bytearray(), 0
        for end, events, t, payload in cps:
            self._sums.add(data[done:end])
            done = end
            if not self._no_journal:        # derived data: the events alone are enough
                lines += self.journal.line(self.size + end, events, t, self._sums, payload)
        self._sums.add(data[done:])
        self.size += len(data)
        if self._failing is not None:
            log.warning("%s: written again after '%s'", self.events_path, self._failing)
            self._failing = None
        if lines:
            self._write_journal(lines, sync=True)
        return True

    def append(self, event: TableEvent, signals: Iterable[Signal], checkpoint=None) -> None:
        """Append a table event and its derived lines; fsync at a trick's or deal's end.

        ``checkpoint`` (the tracker's, when a deal ended) goes to the journal once the
        events it stands for are on disk.  A write that fails is kept and retried.
        """
        signals = list(signals)
        if checkpoint is not None and not isinstance(checkpoint, dict):
            checkpoint = checkpoints.encode(checkpoint)     # the tracker's BetweenDeals
        self._queue(event_lines(event, signals),
                    sync=checkpoint is not None or any(s.kind in _SYNC_KINDS for s in signals))
        self.count += 1
        if checkpoint is not None:
            self._pending_cps.append((len(self._pending), self.count, event.t, checkpoint))
        self._flush()

    @property
    def waiting(self) -> int:
        """Bytes of lines kept in memory, not yet written."""
        return len(self._pending)

    @property
    def failing(self) -> str | None:
        """Why the last write failed ("No space left on device"), None while writes succeed."""
        return self._failing

    def retry(self) -> bool:
        """Try the lines kept in memory again (space may have come back); True once written."""
        return self._flush()

    def finish(self, summary: dict) -> Path:
        """Mark the session finished by writing its ``summary.json``."""
        self.close()
        if self._pending:
            raise LogError(f"{self.events_path}: cannot write ({self._failing}); "
                           "the session stays open")
        path = self.folder / SUMMARY
        try:
            write_atomic(path, (json.dumps(summary, ensure_ascii=False, indent=2) + "\n").encode("utf-8"))
        except OSError as exc:
            raise LogError(f"{path}: cannot write: {exc.strerror}") from None
        return path

    def close(self, wait_s: float = 0.0, *, sleep=time.sleep, clock=time.monotonic,
              every_s: float = 1.0) -> None:
        """Write what is kept in memory and close.  While writes fail (a full disk) they are
        tried again every ``every_s`` for up to ``wait_s`` (a service being stopped waits for
        space rather than lose the lines); what still cannot be written then is logged."""
        deadline = clock() + wait_s
        if not self._flush() and wait_s > 0:
            log.error("%s: %d bytes of lines wait for space (%s); trying for %.0f s before stopping",
                      self.events_path, len(self._pending), self._failing, wait_s)
            while not self._flush() and clock() < deadline:
                sleep(every_s)
        if self._pending:
            log.error("%s: %d bytes of lines could not be written (%s)", self.events_path,
                      len(self._pending), self._failing)
        self.journal.close()
        if self._fh is not None:
            try:
                os.fsync(self._fh.fileno())
            except OSError:
                pass
            finally:
                self._fh.close()
                self._fh = None
