"""Replaying table events from a file through the deal tracker (FORMATS.md "Table events").

The file is read as a stream, one bounded line at a time
(:func:`controller.store.lines.read_lines`): memory stays flat however long the
log, and ``-`` reads standard input.  Invalid lines are reported with their
line number and skipped, as the format says; a line that is not UTF-8 or is
longer than :data:`~controller.store.lines.MAX_LINE` is one of them.
"""

from __future__ import annotations

import codecs
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO, Callable, Iterator

from ..core.config import GameConfig
from ..core.deck import Deck
from ..core.errors import EventError, LogError
from ..core.events import ErrorSink, TableEvent, numbered_events, read_events
from ..core.tracker import DealTracker, Signal
from .lines import MAX_LINE, read_lines

STDIN = "-"


def stream_lines(fh: BinaryIO, on_error: ErrorSink | None = None) -> Iterator[str]:
    """The lines of a binary stream as text, one at a time; a line that is not UTF-8 text
    or is over-long is reported and given as blank (so line numbers stay right).  A leading
    UTF-8 byte order mark (some editors write one) is not part of line 1."""
    for number, (_, raw, _) in enumerate(read_lines(fh), start=1):
        if number == 1 and raw is not None and raw.startswith(codecs.BOM_UTF8):
            raw = raw[len(codecs.BOM_UTF8):]
        if raw is None:
            if on_error:
                on_error(number, f"longer than {MAX_LINE} bytes")
            yield ""
            continue
        try:
            yield raw.decode("utf-8")
        except UnicodeDecodeError:
            if on_error:
                on_error(number, "not UTF-8 text")
            yield ""


def events_of_stream(fh: BinaryIO, zones: tuple[str, ...],
                     on_error: ErrorSink | None = None) -> Iterator[TableEvent]:
    """The valid table events of a binary stream of JSON Lines."""
    return read_events(stream_lines(fh, on_error), zones, on_error)


@contextmanager
def open_events(path: str | Path) -> Iterator[BinaryIO]:
    """The events file at ``path`` (``-``: standard input) as a binary stream; LogError if unreadable."""
    if str(path) == STDIN:
        yield sys.stdin.buffer
        return
    path = Path(path)
    try:
        fh = open(path, "rb")
    except FileNotFoundError:
        raise LogError(f"{path}: no such events file") from None
    except IsADirectoryError:
        raise LogError(f"{path}: is a directory, not an events file") from None
    except OSError as exc:
        raise LogError(f"{path}: cannot read: {exc.strerror}") from None
    with fh:
        yield fh


def read_event_file(path: str | Path) -> bytes:
    """A whole events file (small files only: replay streams instead)."""
    with open_events(path) as fh:
        try:
            return fh.read()
        except OSError as exc:
            raise LogError(f"{path}: cannot read: {exc.strerror}") from None


def replay_file(path: str | Path, config: GameConfig, deck: Deck | None = None,
                on_error: Callable[[int, str], None] | None = None,
                progress: Callable[[int, int], None] | None = None,
                on_signals: Callable[[int, list[Signal]], None] | None = None) -> DealTracker:
    """Feed every valid table event of ``path`` (``-``: standard input) to a new tracker.

    ``progress(events_done, deals_done)`` is called every 10,000 events when given;
    ``on_signals(line_number, signals)`` with what each event's line made the tracker say.
    """
    tracker = DealTracker(config, deck)
    feed = tracker.feed
    with open_events(path) as fh:
        try:
            lines = stream_lines(fh, on_error)
            events = numbered_events(lines, tuple(tracker.zones), on_error)
            for line_number, event in events:
                signals = feed(event)
                if signals and on_signals is not None:
                    on_signals(line_number, signals)
                # the tracker counts the events it was fed: the progress needs no counter of its own
                if progress is not None and tracker.events_seen % 10_000 == 0:
                    progress(tracker.events_seen, len(tracker.records))
        except OSError as exc:
            raise LogError(f"{path}: cannot read: {exc.strerror}") from None
    return tracker


__all__ = ["replay_file", "stream_lines", "events_of_stream", "open_events",
           "read_event_file", "EventError"]
