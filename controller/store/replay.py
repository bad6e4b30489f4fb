"""Replaying table events from a file through the deal tracker."""

from __future__ import annotations

import codecs
import sys
from pathlib import Path
from typing import Callable, Iterator

from ..core.config import GameConfig
from ..core.deck import Deck
from ..core.errors import EventError, LogError
from ..core.events import ErrorSink, read_events
from ..core.tracker import DealTracker, Signal


def decoded_lines(data: bytes, on_error: ErrorSink | None = None) -> Iterator[str]:
    """The lines of ``data`` as text; a line that is not UTF-8 is reported and given as blank.

    A leading UTF-8 byte order mark (some editors write one) is not part of line 1.
    """
    if data.startswith(codecs.BOM_UTF8):
        data = data[len(codecs.BOM_UTF8):]
    for number, raw in enumerate(data.split(b"\n"), start=1):
        try:
            yield raw.decode("utf-8")
        except UnicodeDecodeError:
            if on_error:
                on_error(number, "not UTF-8 text")
            yield ""


def read_event_file(path: str | Path) -> bytes:
    """The bytes of an events file; ``-`` is standard input."""
    if str(path) == "-":
        return sys.stdin.buffer.read()
    path = Path(path)
    try:
        return path.read_bytes()
    except FileNotFoundError:
        raise LogError(f"{path}: no such events file") from None
    except IsADirectoryError:
        raise LogError(f"{path}: is a directory, not an events file") from None
    except OSError as exc:
        raise LogError(f"{path}: cannot read: {exc.strerror}") from None


def replay_file(path: str | Path, config: GameConfig, deck: Deck | None = None,
                on_error: Callable[[int, str], None] | None = None,
                progress: Callable[[int, int], None] | None = None,
                on_signals: Callable[[int, list[Signal]], None] | None = None) -> DealTracker:
    """Feed every valid table event of ``path`` (``-``: standard input) to a new tracker and return it.

    ``progress(events_done, deals_done)`` is called every 10,000 events when given;
    ``on_signals(line_number, signals)`` with what each event's line made the tracker say.
    """
    tracker = DealTracker(config, deck)
    line_number = [0]

    def numbered(lines: Iterator[str]) -> Iterator[str]:
        # read_events takes one line at a time, so when it yields an event the
        # last line taken is that event's own
        for line_number[0], line in enumerate(lines, start=1):
            yield line

    lines = numbered(decoded_lines(read_event_file(path), on_error))
    for n, event in enumerate(read_events(lines, tracker.zones, on_error), start=1):
        signals = tracker.feed(event)
        if on_signals is not None and signals:
            on_signals(line_number[0], signals)
        if progress is not None and n % 10_000 == 0:
            progress(n, len(tracker.records))
    return tracker


__all__ = ["replay_file", "decoded_lines", "read_event_file", "EventError"]
