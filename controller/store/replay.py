"""Replaying table events from a file through the deal tracker (FORMATS.md "Table events").

The file is read as a stream, in blocks of whole bounded lines
(:func:`stream_lines`): memory stays flat however long the log, and ``-`` reads
standard input.  Invalid lines are reported with their
line number and skipped, as the format says; a line that is not UTF-8 or is
longer than :data:`~controller.store.lines.MAX_LINE` is one of them.
"""

from __future__ import annotations

import sys
from itertools import chain
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO, Callable, Iterator

from ..core.config import GameConfig
from ..core.deck import Deck
from ..core.errors import EventError, LogError
from ..core.events import ErrorSink, SkippedLine, TableEvent, numbered_events, read_events
from ..core.tracker import DealTracker, Signal
from .lines import MAX_LINE

STDIN = "-"


BLOCK = 1 << 16         # bytes read at a time: a few hundred lines, decoded and split at once


def _text_blocks(fh: BinaryIO, limit: int) -> Iterator[list[str]]:
    """The lines of ``fh`` as lists of text lines, a block at a time (see :func:`stream_lines`).

    A block's whole lines are decoded and split at once: a replay reads one line per table
    event, and reading, decoding and handing on each line by itself took a third of its
    time.  A block that is not all UTF-8 (or could hold an over-long line) is done line by
    line, to say which line is at fault; splitting text at "\n" is splitting its bytes there
    (no UTF-8 sequence holds that byte).  ``read1`` gives what a pipe has, so a live
    standard input is not held back."""
    read = getattr(fh, "read1", fh.read)
    data = read(BLOCK)
    carry = b""             # the start of a line whose end has not been read yet
    skipping = False        # inside an over-long line: its bytes are dropped up to its end
    number = 0
    while data:
        end = data.rfind(b"\n")
        if end < 0:                                     # no line ends in this block
            if not skipping:
                carry += data
                skipping = len(carry) > limit
                if skipping:
                    carry = b""
            data = read(BLOCK)
            continue
        head, tail = data[:end], data[end + 1:]
        out: list[str] = []
        if skipping:                                    # the over-long line ends here
            number += 1
            out.append(_over_long(limit))
            cut = head.find(b"\n")
            head = None if cut < 0 else head[cut + 1:]
            skipping = False
        elif carry:
            head = carry + head
        if head is not None:
            lines = None
            if len(head) < limit:                       # no line in it can be over-long
                try:
                    lines = head.decode("utf-8").split("\n")
                except UnicodeDecodeError:
                    pass
            if lines is None:
                lines = [_one_line(raw, limit) for raw in head.split(b"\n")]
            number += len(lines)
            out += lines
        carry = tail
        skipping = len(carry) > limit
        if skipping:
            carry = b""
        yield _without_bom(out) if number == len(out) else out
        data = read(BLOCK)
    if skipping:
        yield [_over_long(limit)]
    elif carry:                     # a last line without its newline
        out = [_one_line(carry, limit, ended=False)]
        yield _without_bom(out) if number == 0 else out


def _without_bom(lines: list[str]) -> list[str]:
    """Lines whose first is line 1: a leading byte order mark is not part of it."""
    if lines and lines[0].startswith("\ufeff"):
        lines[0] = lines[0][1:]
    return lines


def _over_long(limit: int) -> SkippedLine:
    return SkippedLine(f"longer than {limit} bytes")


def _one_line(raw: bytes, limit: int, ended: bool = True) -> str:
    """One line's text (``raw`` without its newline), or a blank :class:`SkippedLine` if it
    is not UTF-8 or with its newline (when it ``ended`` with one) is longer than ``limit``."""
    if len(raw) + ended > limit:
        return _over_long(limit)
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return SkippedLine("not UTF-8 text")


def stream_lines(fh: BinaryIO, limit: int = MAX_LINE) -> Iterator[str]:
    """The lines of a binary stream as text, one at a time, in bounded memory; a line that
    is not UTF-8 text or is longer than ``limit`` bytes (its newline counted) is given as a
    blank :class:`~controller.core.events.SkippedLine` holding the reason, which the event
    reader reports in its place (line numbers and the order of reports stay right).  A
    leading UTF-8 byte order mark (some editors write one) is not part of line 1."""
    return chain.from_iterable(_text_blocks(fh, limit))


def events_of_stream(fh: BinaryIO, zones: tuple[str, ...],
                     on_error: ErrorSink | None = None) -> Iterator[TableEvent]:
    """The valid table events of a binary stream of JSON Lines."""
    return read_events(stream_lines(fh), zones, on_error)


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
            lines = stream_lines(fh)
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
