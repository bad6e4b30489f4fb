"""Reading JSON Lines files as a stream: bounded lines, byte offsets, flat memory.

``replay``, resume and the checkpoint journal read their files through
:func:`read_lines`: one line at a time (a 1 GB standard input never sits in
memory), each with the byte offset it starts at, and a line longer than
:data:`MAX_LINE` is skipped in pieces and reported as over-long rather than
read whole (FORMATS.md: an invalid line is reported and skipped).
"""

from __future__ import annotations

from typing import BinaryIO, Iterator

MAX_LINE = 1 << 20      # no line the table writes comes near this (a deal line is ~1 KB)


def read_lines(fh: BinaryIO, start: int = 0, limit: int = MAX_LINE
               ) -> Iterator[tuple[int, bytes | None, int]]:
    """``(offset, line, length)`` for each line of ``fh`` from its current position.

    ``line`` is the line without its newline (a last line may lack one), or None
    for a line longer than ``limit``; ``length`` counts every byte, newline included;
    ``offset`` counts from ``start``, the position ``fh`` is at.
    """
    pos = start
    while True:
        line = fh.readline(limit + 1)
        if not line:
            return
        n = len(line)
        if n > limit:                   # over-long: skip to its end without keeping it
            while not line.endswith(b"\n"):
                line = fh.readline(limit + 1)
                if not line:
                    break
                n += len(line)
            yield pos, None, n
        else:
            yield pos, line[:-1] if line.endswith(b"\n") else line, n
        pos += n
