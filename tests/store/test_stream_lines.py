"""The replay's block reader (controller.store.replay.stream_lines) against the line-at-a-time
reader (controller.store.lines.read_lines): the same lines, the same reports, whatever the
block size, a pipe's short reads, a byte order mark, bytes that are not UTF-8 and lines
longer than the limit (FORMATS.md: an invalid line is reported with its number and skipped);
and the reports come in line order, though a block is decoded before its lines are parsed."""

from __future__ import annotations

import codecs
import io

import pytest
from hypothesis import given, settings, strategies as st

from controller.core.config import GameConfig
from controller.core.events import SkippedLine
from controller.store import replay
from controller.store.lines import read_lines


def line_by_line(data: bytes, limit: int) -> tuple[list[str], list[tuple[int, str]]]:
    """What the reader must give: each line read by itself, as the journal's reader does."""
    lines, said = [], []
    for number, (_, raw, _) in enumerate(read_lines(io.BytesIO(data), limit=limit), start=1):
        if number == 1 and raw is not None and raw.startswith(codecs.BOM_UTF8):
            raw = raw[len(codecs.BOM_UTF8):]
        if raw is None:
            said.append((number, f"longer than {limit} bytes"))
            lines.append("")
            continue
        try:
            lines.append(raw.decode("utf-8"))
        except UnicodeDecodeError:
            said.append((number, "not UTF-8 text"))
            lines.append("")
    return lines, said


class ShortReads(io.BytesIO):
    """A pipe: each read gives at most the next of ``sizes`` bytes."""

    def __init__(self, data: bytes, sizes: list[int]):
        super().__init__(data)
        self.sizes = sizes or [1]
        self.reads = 0

    def read1(self, n: int = -1) -> bytes:
        size = self.sizes[self.reads % len(self.sizes)]
        self.reads += 1
        return super().read1(min(n, size))


PIECES = st.sampled_from([b"", b"a", b"ab\xff", "\u00e9".encode(), b"\xc3", b"\r", b"x" * 9,
                          b"y" * 40, codecs.BOM_UTF8, b'{"t": 1, "kind": "play"}'])
ENDS = st.sampled_from([b"\n", b"", b"\n\n"])


def read(fh, limit: int) -> tuple[list[str], list[tuple[int, str]]]:
    """The lines, and the reasons the skipped ones carry (SkippedLine), by line number."""
    lines = list(replay.stream_lines(fh, limit=limit))
    said = [(n, line.reason) for n, line in enumerate(lines, start=1) if isinstance(line, SkippedLine)]
    return lines, said


@settings(max_examples=300, deadline=None)
@given(body=st.lists(st.tuples(PIECES, ENDS), max_size=12), bom=st.booleans(),
       limit=st.sampled_from([4, 8, 16, 30, 1 << 20]), block=st.sampled_from([1, 2, 3, 7, 64, 1 << 16]),
       sizes=st.lists(st.integers(1, 9), max_size=5))
def test_block_reader_gives_what_the_line_reader_gives(body, bom, limit, block, sizes):
    data = (codecs.BOM_UTF8 if bom else b"") + b"".join(p + e for p, e in body)
    want = line_by_line(data, limit)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(replay, "BLOCK", block)
        assert read(io.BytesIO(data), limit) == want
        assert read(ShortReads(data, sizes), limit) == want


@pytest.mark.parametrize("tail", [b"\n", b""])
def test_an_over_long_line_in_the_middle_of_a_long_file(tail):
    """A 3 MB line between two good ones, at the real limit and block size: reported once,
    line numbers kept, and its bytes never held whole."""
    data = b"first\n" + b"z" * (3 << 20) + b"\nlast" + tail
    lines, said = read(io.BytesIO(data), replay.MAX_LINE)
    assert lines == ["first", "", "last"] and said == [(2, f"longer than {replay.MAX_LINE} bytes")]


def test_reports_come_in_line_order(tmp_path):
    """A line that is not UTF-8 after one that is not JSON, in one block: reported second."""
    path = tmp_path / "events.jsonl"
    path.write_bytes(b'{"t": 1, oops\n\xff\xfe\n' + b"z" * (replay.MAX_LINE + 5) + b'\n{"t": 2}\n')
    said = []
    replay.replay_file(path, GameConfig(), on_error=lambda n, m: said.append((n, m)))
    assert [n for n, _ in said] == [1, 2, 3, 4]
    assert said[:3] == [(1, "not valid JSON"), (2, "not UTF-8 text"), (3, f"longer than {replay.MAX_LINE} bytes")]
    assert said[3][1].startswith("field 'event' must be")
