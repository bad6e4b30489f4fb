"""Score display drivers against a real pty, pyserial's loop://, and text streams.

The bytes the driver sends are decoded by an independent model of a Matrix
Orbital-compatible 20x4 LCD (written from the command table, not from the
driver's constants) so that a wrong command or a misplaced row fails.
"""

from __future__ import annotations

import io
import os
import select
import time
import tty

import pytest
import serial

from controller.core.errors import HardwareError
from controller.core.view import Indications
from hw.display import SerialDisplay, TerminalDisplay

SPADE_BITMAP = (0x04, 0x0E, 0x1F, 0x1F, 0x15, 0x04, 0x0E, 0x00)


class LcdModel:
    """A 20x4 character LCD with a Matrix Orbital command decoder."""

    ONE_BYTE = {0x52: "autoscroll_off", 0x4B: "underline_off", 0x54: "block_off"}

    def __init__(self, rows: int = 4, cols: int = 20):
        self.rows, self.cols = rows, cols
        self.cells = [[" "] * cols for _ in range(rows)]
        self.cgram: dict[int, tuple[int, ...]] = {}
        self.flags: set[str] = set()
        self.row = self.col = 0
        self.cleared = 0
        self.cursor_moves: list[tuple[int, int]] = []
        self._buf = bytearray()

    def feed(self, data: bytes) -> None:
        self._buf += data
        while self._step():
            pass

    def _step(self) -> bool:
        buf = self._buf
        if not buf:
            return False
        if buf[0] != 0xFE:
            byte = buf.pop(0)
            assert self.col < self.cols, f"text written past column {self.cols} of row {self.row + 1}"
            if byte < 8:
                assert byte in self.cgram, f"custom char {byte} printed before it was defined"
                ch = f"<{byte}>"
            else:
                assert 0x20 <= byte <= 0x7E, f"byte {byte:#x} is not printable ASCII"
                ch = chr(byte)
            self.cells[self.row][self.col] = ch
            self.col += 1
            return True
        if len(buf) < 2:
            return False
        cmd = buf[1]
        if cmd in self.ONE_BYTE:
            self.flags.add(self.ONE_BYTE[cmd])
            del buf[:2]
        elif cmd == 0x58:
            self.cells = [[" "] * self.cols for _ in range(self.rows)]
            self.row = self.col = 0
            self.cleared += 1
            del buf[:2]
        elif cmd == 0x47:
            if len(buf) < 4:
                return False
            col, row = buf[2], buf[3]
            assert 1 <= col <= self.cols and 1 <= row <= self.rows, (col, row)
            self.row, self.col = row - 1, col - 1
            self.cursor_moves.append((col, row))
            del buf[:4]
        elif cmd == 0x4E:
            if len(buf) < 11:
                return False
            slot = buf[2]
            assert 0 <= slot <= 7
            bitmap = tuple(buf[3:11])
            assert all(b < 0x20 for b in bitmap), "CGRAM rows are 5 bits wide"
            self.cgram[slot] = bitmap
            del buf[:11]
        else:
            raise AssertionError(f"unknown command 0xFE {cmd:#x}")
        return True

    def text(self) -> list[str]:
        return ["".join(row) for row in self.cells]

    def glyph_of(self, row: int, col: int) -> tuple[int, ...]:
        cell = self.cells[row][col]
        assert cell.startswith("<"), f"cell {row},{col} holds {cell!r}, not a custom char"
        return self.cgram[int(cell[1:-1])]


@pytest.fixture
def pty_pair():
    master, slave = os.openpty()
    tty.setraw(slave)
    path = os.ttyname(slave)
    yield master, path
    os.close(master)
    os.close(slave)


def drain(fd: int, quiet: float = 0.15, limit: float = 3.0) -> bytes:
    """Everything the master side receives until the line is quiet."""
    data = bytearray()
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], quiet)
        if not ready:
            break
        data += os.read(fd, 4096)
    return bytes(data)


def test_pty_open_defines_suits_and_clears(pty_pair):
    master, path = pty_pair
    lcd = LcdModel()
    with SerialDisplay(path, baudrate=9600) as display:
        lcd.feed(drain(master))
        assert {1, 2, 3, 4} <= set(lcd.cgram)
        assert 0 not in lcd.cgram, "slot 0 would make the driver send NUL bytes"
        assert lcd.cgram[1] == SPADE_BITMAP
        assert len({lcd.cgram[s] for s in (1, 2, 3, 4)}) == 4, "the four suits must differ"
        assert lcd.cleared == 1
        assert "autoscroll_off" in lcd.flags
        assert lcd.text() == [" " * 20] * 4

        display.show(["Deal 3  price 2", "A\u2660 K\u2663 Q\u2666 J\u2665", "seat1 2 seat2 5", "seat3 3"])
        lcd.feed(drain(master))
    screen = lcd.text()
    assert screen[0] == "Deal 3  price 2".ljust(20)
    assert screen[2] == "seat1 2 seat2 5".ljust(20)
    assert screen[3] == "seat3 3".ljust(20)
    # Row 2: the suits are printed through their custom characters.
    row = lcd.cells[1]
    assert [row[0], row[3], row[6], row[9]] == ["A", "K", "Q", "J"]
    glyphs = [lcd.glyph_of(1, c) for c in (1, 4, 7, 10)]
    assert glyphs[0] == SPADE_BITMAP
    assert len(set(glyphs)) == 4


def test_pty_only_changed_rows_are_rewritten(pty_pair):
    master, path = pty_pair
    lcd = LcdModel()
    display = SerialDisplay(path)
    try:
        lcd.feed(drain(master))
        display.show(["one", "two", "three", "four"])
        lcd.feed(drain(master))
        assert lcd.cursor_moves == [(1, 1), (1, 2), (1, 3), (1, 4)]

        lcd.cursor_moves.clear()
        display.show(["one", "TWO", "three", "four"])
        sent = drain(master)
        lcd.feed(sent)
        assert lcd.cursor_moves == [(1, 2)]
        assert len(sent) == 4 + 20, "one cursor command and one padded row"
        assert lcd.text() == [r.ljust(20) for r in ("one", "TWO", "three", "four")]

        display.show(["one", "TWO", "three", "four"])
        assert drain(master, quiet=0.1) == b"", "an unchanged screen sends nothing"
    finally:
        display.close()


def test_loop_url_pads_truncates_and_replaces_unknown():
    opened = []

    def factory(url, **kwargs):
        opened.append(serial.serial_for_url(url, **kwargs))
        return opened[-1]

    display = SerialDisplay("loop://", baudrate=115200, serial_factory=factory)
    (port,) = opened
    lcd = LcdModel()
    lcd.feed(port.read(port.in_waiting))
    display.show(["x" * 25, "Привет \u2661", "tab\there"])
    lcd.feed(port.read(port.in_waiting))
    screen = lcd.text()
    assert screen[0] == "x" * 20
    assert screen[1].startswith("?????? <")          # Cyrillic -> '?', outlined heart -> a glyph
    assert lcd.glyph_of(1, 7) == lcd.cgram[4]          # drawn like the filled heart
    assert screen[2] == "tab?here".ljust(20)
    assert screen[3] == " " * 20                       # a missing row is blank
    display.show(Indications(lines=("Deal 2", "", "", "whists ♥")))   # what the lead hands over
    lcd.feed(port.read(port.in_waiting))
    assert lcd.text()[0] == "Deal 2".ljust(20) and lcd.text()[3].startswith("whists <")
    display.close()
    assert not port.is_open
    with pytest.raises(HardwareError):
        display.show(["after close"])


def test_missing_port_names_it_and_says_what_to_do(tmp_path):
    missing = str(tmp_path / "ttyUSB9")
    with pytest.raises(HardwareError) as info:
        SerialDisplay(missing)
    message = str(info.value)
    assert missing in message
    assert "cable" in message and "port name" in message
    assert "\n" not in message
    assert isinstance(info.value, OSError)


def test_permission_denied_points_at_dialout():
    def refuse(url, **kwargs):
        raise serial.SerialException(13, f"could not open port {url}: [Errno 13] Permission denied")

    with pytest.raises(HardwareError, match=r"/dev/ttyAMA0: .*dialout"):
        SerialDisplay("/dev/ttyAMA0", serial_factory=refuse)


def test_port_in_use_is_reported(pty_pair):
    _, path = pty_pair
    first = SerialDisplay(path)
    try:
        with pytest.raises(HardwareError, match="in use"):
            SerialDisplay(path)
    finally:
        first.close()


def test_terminal_plain_stream_appends_changed_frames():
    out = io.StringIO()
    display = TerminalDisplay(out)
    display.show(["Deal 1  price 1", "7\u2660 8\u2663", "", ""])
    display.show(["Deal 1  price 1", "7\u2660 8\u2663", "", ""])    # unchanged: not drawn again
    display.show(["Deal 2  price 2", "pulka", "x" * 30, "\x07bell"])
    display.close()
    lines = out.getvalue().splitlines()
    assert len(lines) == 12, "two frames of six lines"
    assert "\x1b" not in out.getvalue()
    assert lines[0] == "\u250c" + "\u2500" * 20 + "\u2510"
    assert lines[2] == "\u2502" + "7\u2660 8\u2663".ljust(20) + "\u2502"
    assert lines[7] == "\u2502" + "Deal 2  price 2".ljust(20) + "\u2502"
    assert lines[9] == "\u2502" + "x" * 20 + "\u2502"
    assert lines[10] == "\u2502" + "?bell".ljust(20) + "\u2502"
    assert all(len(line) == 22 for line in lines)


class FakeTty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_terminal_tty_redraws_in_place():
    out = FakeTty()
    display = TerminalDisplay(out)
    display.show(["a", "b", "c", "d"])
    first = out.getvalue()
    display.show(["a", "B", "c", "d"])
    second = out.getvalue()[len(first):]
    assert "\x1b" not in first
    assert second.startswith("\x1b[6A\r"), "cursor back up over the six lines of the frame"
    assert second.count("\x1b[2K") == 6
    assert "\u2502B" + " " * 19 + "\u2502" in second


def test_terminal_ascii_only_stream_falls_back():
    raw = io.BytesIO()
    out = io.TextIOWrapper(raw, encoding="ascii")
    display = TerminalDisplay(out)
    display.show(["10\u2665 J\u2660", "", "", ""])
    display.close()
    text = raw.getvalue().decode("ascii")
    assert "|10h Js" in text and "+--------------------+" in text


def test_lost_port_while_showing():
    master, slave = os.openpty()
    tty.setraw(slave)
    display = SerialDisplay(os.ttyname(slave))
    try:
        drain(master)
        os.close(master)            # the cable is pulled: the other end is gone
        with pytest.raises(HardwareError, match="stopped answering.*cable"):
            display.show(["x"])
    finally:
        display.close()
        os.close(slave)
