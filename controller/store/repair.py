"""Resuming a game log after a crash, a power cut or a full disk: the half of
:class:`~controller.store.gamelog.SessionLog` that rebuilds the table from the checkpoint
journal and the events, and repairs the log (FORMATS.md "Game log"; what is repaired,
and how, is listed in :mod:`controller.store.gamelog`).

The table comes back from the journal's last line that fits the events
(:mod:`controller.store.journal`), the events after it are fed again, each group of lines
checked against what the tracker derives; from the first line that is not what the table
writes, the file is rewritten with the readable events and their derived lines, the old
bytes kept in ``events.jsonl.damaged``.
"""

from __future__ import annotations

import gc
import json
import logging
import os
import stat
from collections import deque
from pathlib import Path
from typing import Iterable

from ..core.config import GameConfig
from ..core.deck import Deck
from ..core.errors import EventError, LogError
from ..core.events import TableEvent, event_from_dict
from ..core.tracker import DealTracker, Signal
from . import checkpoints
from . import journal as jr
from .files import clear_temporary, fsync_dir, open_append, open_fd, open_read, open_update, write_all
from .lines import read_lines

log = logging.getLogger(__name__)

DAMAGED = "events.jsonl.damaged"
JOURNAL_BATCH = 1 << 20     # rebuilt journal lines written in batches of about this many bytes
# A rebuild (a lost or unusable journal) replays the whole log; every this many deals the
# tracker is restored from the journal line just written, so the ended deals stay on disk
# (read when needed) and the rebuild's memory stays flat in the log's length.
LIGHTEN_EVERY = 200


class SessionUnreadable(LogError):
    """A session folder that cannot be resumed at all (its config, its events file)."""


def json_line(obj: dict) -> bytes:
    return (json.dumps(obj, ensure_ascii=False, separators=(", ", ": ")) + "\n").encode("utf-8")


def event_lines(event: TableEvent, signals: Iterable[Signal]) -> bytes:
    """The lines one table event writes: the event, then its derived lines."""
    return json_line(event.to_dict()) + b"".join(json_line(s.to_dict()) for s in signals)


def _take_checkpoint(tracker: DealTracker) -> dict:
    """The checkpoint payload of the table between deals (its content: :mod:`.checkpoints`)."""
    return checkpoints.encode(tracker.checkpoint())


class _JournalLines:
    """The journal lines of the deals before the last checkpoint, by deal index: a line is
    read from the journal only when the tracker needs that deal (a 10,000-deal session
    resumes without holding, or decoding, its journal)."""

    __slots__ = ("path", "starts", "ends")

    def __init__(self, path: Path, starts: list[int], ends: list[int]):
        self.path, self.starts, self.ends = path, starts, ends

    @classmethod
    def of(cls, path: Path, entries: list[jr.Entry]) -> "_JournalLines":
        return cls(path, [e.start for e in entries], [e.start + e.length for e in entries])

    @classmethod
    def before(cls, path: Path, tail: jr.Tail) -> "_JournalLines":
        """Every line before the tail's last one (one per deal, in order)."""
        starts = tail.starts
        return cls(path, starts, [end - 1 for end in starts[1:]] + [tail.last.start - 1] if starts else [])

    def __len__(self) -> int:
        return len(self.starts)

    def read(self, index: int) -> bytes:
        with open_read(self.path) as fh:
            fh.seek(self.starts[index])
            return fh.read(self.ends[index] - self.starts[index])


def _restore(game: GameConfig, deck: Deck | None, earlier: _JournalLines, last: dict) -> DealTracker:
    return checkpoints.restore(game, deck, range(len(earlier)), last, read=earlier.read)


def _is_regular(path: Path) -> bool:
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False



class LogRepair:
    """What :class:`~controller.store.gamelog.SessionLog` does on resume (its attributes:
    ``folder``, ``events_path``, ``checkpoints_path``, ``journal``, the writer's queue)."""

    def drop_torn_line(self, path: Path | None = None) -> int:
        """Truncate a last line that was cut short by a crash; return the bytes dropped.

        Only the file's end is read: backwards from it, to the last newline.
        """
        path = path or self.events_path
        try:
            fh = open_update(path)
        except FileNotFoundError:
            return 0
        except OSError as exc:
            raise SessionUnreadable(f"{path}: cannot open: {exc.strerror}") from None
        with fh:
            size = os.fstat(fh.fileno()).st_size
            end = size
            while end > 0:
                start = max(0, end - 65536)
                block = os.pread(fh.fileno(), end - start, start)
                if end == size and block.endswith(b"\n"):
                    return 0
                cut = block.rfind(b"\n")
                if cut >= 0:
                    end = start + cut + 1
                    break
                end = start
            os.ftruncate(fh.fileno(), end)
            os.fsync(fh.fileno())
        if self._resuming:
            self.repairs.append(f"dropped a torn last line ({size - end} bytes)")
        else:
            log.warning("%s: dropped a torn last line (%d bytes)", path, size - end)
        return size - end

    # --- resume ------------------------------------------------------------------------

    def resume(self, game: GameConfig, deck: Deck | None) -> tuple[DealTracker, int, float]:
        """The tracker as after the log's last whole line, the log repaired (see the module).

        Returns the tracker, the number of table events in the log and the last ``t``.
        """
        self.repairs = []
        if not _is_regular(self.events_path):
            raise SessionUnreadable(f"{self.events_path}: not a regular file")
        self._resuming = True       # what is repaired is said once, at the end
        try:
            self.drop_torn_line()
        finally:
            self._resuming = False
        try:
            fh = open_read(self.events_path)
        except OSError as exc:
            raise SessionUnreadable(f"{self.events_path}: cannot read: {exc.strerror}") from None
        with fh:
            size = os.fstat(fh.fileno()).st_size
            tracker, offset, count, last_t, sums = self._from_journal(game, deck, fh, size)
            tracker = self._replay_tail(fh, size, tracker, offset, count, last_t, sums)
        if self.repairs:
            log.warning("%s: repaired on resume: %s", self.folder, "; ".join(self.repairs))
        return tracker, self.count, self._last_t

    def _from_journal(self, game, deck, fh, size):
        """The tracker at the journal's last line that fits the events, and where it stands."""
        quick = self._from_tail(game, deck, fh, size)
        if quick is not None:
            return quick
        entries, length, rest, fit, sums = jr.verify_while_reading(self.journal, fh, size)
        used = entries[:fit]
        if used and not self._segment_fits(fh, used):
            used, fit = used[:-1], fit - 1
            sums = jr.checksums_of(fh, used[-1].offset) if used else jr.Checksums()
        tracker = None
        if used:
            lines = jr.chain(used)
            last = lines[-1]
            try:
                if last.deal is not None and last.deal != len(lines):
                    raise ValueError(f"deal {last.deal} after {len(lines) - 1} deals")
                earlier = _JournalLines.of(self.checkpoints_path, lines[:-1])
                tracker = _restore(game, deck, earlier, self.journal.payload(last))
            except (KeyError, TypeError, ValueError, AttributeError, IndexError) as exc:
                self.repairs.append(f"checkpoint journal unusable ({exc}): rebuilt from the events")
                used, fit, sums = [], 0, jr.Checksums()
        if len(used) < len(entries) or rest:
            dropped = len(entries) - len(used) + rest
            if tracker is not None:
                self.repairs.append(f"checkpoint journal: cut {dropped} lines that do not fit the events")
            elif not self.repairs:      # (an unusable line has said so already)
                self.repairs.append("checkpoint journal does not fit the events: rebuilt from them")
            try:
                self.journal.truncate(used[-1].end if used else 0)
            except OSError as exc:
                self.repairs.append(f"cannot cut the checkpoint journal ({exc.strerror})")
                self._no_journal = True
        if tracker is None:
            return DealTracker(game, deck), 0, 0, 0.0, jr.Checksums()
        last = used[-1]
        return tracker, last.offset, last.events, last.t, sums

    def _from_tail(self, game, deck, fh, size):
        """The quick way (:func:`~controller.store.journal.verify_last`): the tracker at the
        journal's last line when it and every line before it fit, else None."""
        tail = jr.verify_last(self.journal, fh, size)
        if tail is None or not self._segment_fits(fh, [e for e in (tail.before, tail.last) if e]):
            return None
        try:
            tracker = _restore(game, deck, _JournalLines.before(self.checkpoints_path, tail),
                               self.journal.payload(tail.last))
        except (KeyError, TypeError, ValueError, AttributeError, IndexError):
            return None         # the slower way says what is wrong and rebuilds
        self.journal.known(tail.journal)
        last = tail.last
        return tracker, last.offset, last.events, last.t, tail.sums

    @staticmethod
    def _segment_fits(fh, used: list[jr.Entry]) -> bool:
        """The event count of the last checkpoint's own deal agrees with the events file."""
        last = used[-1]
        start, before = (used[-2].offset, used[-2].events) if len(used) > 1 else (0, 0)
        segment = os.pread(fh.fileno(), last.offset - start, start)
        return before + jr.count_events(segment) == last.events

    def _replay_tail(self, fh, size: int, tracker: DealTracker, offset: int, count: int,
                     last_t: float, sums: jr.Checksums) -> DealTracker:
        """Feed the events after ``offset``, checking that each group of lines is what the
        tracker derives, and repair what is not (see the module)."""
        zones = tuple(tracker.zones)
        owed: deque[bytes] = deque()     # derived lines the last event still owes, in order
        pending_cp: dict | None = None
        journal = bytearray()
        salvage = None                   # the rewritten rest of the file, from the damage on
        damaged_at, lost, nul = None, 0, 0
        pos = offset
        lightened = len(tracker.records)

        def checkpoint_at(end: int) -> None:
            nonlocal pending_cp
            if not self._no_journal:
                journal.extend(self.journal.line(end, count, last_t, sums, pending_cp))
            pending_cp = None

        fh.seek(offset)
        for start, raw, n in read_lines(fh, offset):
            if salvage is None:
                if owed and raw == owed[0]:
                    owed.popleft()
                    sums.add(raw + b"\n")
                    pos = start + n
                    if not owed and pending_cp is not None:
                        checkpoint_at(pos)
                        if len(tracker.records) - lightened >= LIGHTEN_EVERY:
                            tracker, lightened = self._lightened(tracker, journal, count), len(tracker.records)
                    continue
                event = None if owed or raw is None else self._event(raw, zones, last_t)
                if event is not None:
                    signals = tracker.feed(event)
                    count, last_t = count + 1, event.t
                    sums.add(raw + b"\n")
                    pos = start + n
                    owed = deque(json_line(s.to_dict())[:-1] for s in signals)
                    if any(s.kind == "deal" for s in signals) and tracker.deal is None:
                        pending_cp = _take_checkpoint(tracker)
                    if len(journal) > JOURNAL_BATCH and not self._no_journal:
                        self._write_journal(journal, sync=False)    # rebuilding: memory stays flat
                    continue
                # not what the table writes here: rewrite the file from this line on
                damaged_at = start
                salvage = self._begin_salvage(damaged_at)
                missing = b"".join(line + b"\n" for line in owed)
                if missing:
                    salvage.write(missing)
                    sums.add(missing)
                    pos += len(missing)
                    self.repairs.append(f"wrote {len(owed)} missing derived lines")
                    owed.clear()
                if pending_cp is not None:
                    checkpoint_at(pos)
            if raw is None:
                lost += 1
                continue
            if raw.startswith(b'{"t": ') and b'"kind": ' in raw[:40] and b"\0" not in raw:
                continue                 # derived lines are written anew from the events
            event = self._event(raw, zones, last_t) if raw.strip() else None
            if event is None:
                lost += 1 if raw.strip() else 0
                nul += raw.count(b"\0")
                continue
            signals = tracker.feed(event)
            count, last_t = count + 1, event.t
            data = event_lines(event, signals)
            salvage.write(data)
            sums.add(data)
            pos += len(data)
            if any(s.kind == "deal" for s in signals) and tracker.deal is None:
                pending_cp = _take_checkpoint(tracker)
                checkpoint_at(pos)

        self.count, self._last_t = count, last_t
        if salvage is not None:
            ok = self._end_salvage(salvage, damaged_at, size)
            what = f"{lost} unreadable lines" + (f" ({nul} NUL bytes)" if nul else "")
            self.repairs.append(f"from byte {damaged_at} on, {what} dropped and the log rewritten "
                                f"from its readable events" + (f", the old bytes kept in {DAMAGED}"
                                                               if ok else " (not possible now)"))
            self.size, self._sums = (pos, sums) if ok else (size, jr.Checksums())
            if not ok:
                self._no_journal = True
        else:
            self.size, self._sums = pos, sums
            if owed:                    # a torn group: its derived lines were never written
                self.repairs.append(f"wrote {len(owed)} missing derived lines of the last event")
                self._queue(b"".join(line + b"\n" for line in owed), sync=True)
                if pending_cp is not None:
                    self._pending_cps.append((len(self._pending), count, last_t, pending_cp))
                self._flush()
        if journal:
            self._write_journal(journal, sync=True)
        return tracker

    def _lightened(self, tracker: DealTracker, journal: bytearray, count: int) -> DealTracker:
        """Mid-rebuild, just after a checkpoint line: the same table restored from that line
        the quick way (:func:`~controller.store.journal.verify_last`, as a restart would),
        its ended deals left in the journal file; ``tracker`` itself when that cannot be
        (no journal, a write failed, a deal ended twice after ``undo``)."""
        self._write_journal(journal, sync=False)
        if self._no_journal:
            return tracker
        try:
            with open_read(self.events_path) as fh:
                tail = jr.verify_last(self.journal, fh, os.fstat(fh.fileno()).st_size)
            if tail is None or tail.last.events != count:
                return tracker
            lighter = _restore(tracker.config, tracker.deck, _JournalLines.before(self.checkpoints_path, tail),
                               self.journal.payload(tail.last))
        except (OSError, KeyError, TypeError, ValueError, AttributeError, IndexError) as exc:
            log.debug("%s: rebuild goes on with the tracker in memory (%s)", self.folder, exc)
            return tracker
        # the state machine and its model refer to each other: the tracker let go is freed by
        # the cycle collector, which would otherwise let several of them pile up
        del tracker
        gc.collect()
        return lighter

    def _write_journal(self, lines: bytearray, sync: bool) -> None:
        """Append journal lines (and forget them); a failure only costs a longer resume."""
        if self._no_journal:
            self.journal.forget()
            lines.clear()
            return
        try:
            self.journal.append(bytes(lines), sync=sync)
        except OSError as exc:
            log.warning("%s: cannot write (%s); a resume will replay more events",
                        self.checkpoints_path, exc.strerror)
            self._no_journal = True     # no line after a gap: the journal stays a prefix
        lines.clear()

    @staticmethod
    def _event(raw: bytes, zones: tuple[str, ...], last_t: float) -> TableEvent | None:
        """The table event of a line, or None for anything else (derived, invalid, t going back)."""
        try:
            obj = json.loads(raw)
        except (ValueError, RecursionError):
            return None
        if not isinstance(obj, dict) or "kind" in obj:
            return None
        try:
            event = event_from_dict(obj, zones)
        except EventError:
            return None
        return event if event.t >= last_t else None

    def _begin_salvage(self, damaged_at: int):
        """A temporary file holding the events file's bytes before ``damaged_at``."""
        tmp = self.events_path.with_name(self.events_path.name + ".tmp")
        try:
            clear_temporary(tmp)        # a folder planted there is moved aside, once
            out = os.fdopen(open_fd(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL), "wb", buffering=0)
            with open_read(self.events_path) as src:
                left = damaged_at
                while left:
                    chunk = src.read(min(left, 1 << 20))
                    if not chunk:
                        break
                    write_all(out.fileno(), chunk)
                    left -= len(chunk)
        except OSError as exc:
            return _Unwritable(exc)
        return _Salvage(out, tmp)

    def _end_salvage(self, salvage, damaged_at: int, size: int) -> bool:
        """Keep the replaced bytes in ``events.jsonl.damaged`` and put the rewritten file in place."""
        if not salvage.close():
            log.error("%s: cannot rewrite the damaged lines now (%s); the game goes on",
                      self.events_path, salvage.error)
            return False
        try:
            with open_read(self.events_path) as src, open_append(self.folder / DAMAGED) as keep:
                src.seek(damaged_at)
                while chunk := src.read(1 << 20):
                    write_all(keep.fileno(), chunk)
                os.fsync(keep.fileno())
            os.replace(salvage.path, self.events_path)
            fsync_dir(self.folder)
        except OSError as exc:
            log.error("%s: cannot rewrite the damaged lines now (%s); the game goes on",
                      self.events_path, exc.strerror)
            salvage.discard()
            return False
        return True



class _Salvage:
    """The rewritten events file being written (a temporary beside it)."""

    def __init__(self, fh, path: Path):
        self.fh, self.path, self.error = fh, path, None

    def write(self, data: bytes) -> None:
        if self.error is None:
            try:
                write_all(self.fh.fileno(), data)
            except OSError as exc:
                self.error = exc.strerror

    def close(self) -> bool:
        try:
            if self.error is None:
                os.fsync(self.fh.fileno())
        except OSError as exc:
            self.error = exc.strerror
        self.fh.close()
        if self.error is not None:
            self.discard()
        return self.error is None

    def discard(self) -> None:
        try:
            os.unlink(self.path)
        except OSError:
            pass


class _Unwritable(_Salvage):
    """A rewrite that could not even begin (a full disk): the repair waits for a later start."""

    def __init__(self, exc: OSError):
        self.fh, self.path, self.error = None, None, exc.strerror

    def write(self, data: bytes) -> None:
        pass

    def close(self) -> bool:
        return False

    def discard(self) -> None:
        pass


