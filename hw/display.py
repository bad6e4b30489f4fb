"""Score display drivers: a serial character LCD and a terminal view.

Both render the four text rows of :attr:`controller.core.view.Indications.lines`
(at most 20 characters each, possibly holding the suit symbols ♠♣♦♥); what to
show is decided elsewhere, a driver only draws it.

Serial LCD command set
----------------------
:class:`SerialDisplay` speaks the Matrix Orbital-compatible command set used by
Adafruit's "USB + Serial character LCD backpack" (and the LCD117/Matrix Orbital
LK boards it copies).  Every command is the byte ``0xFE`` followed by:

=========================  ===============================================
``0x58``                   clear the screen, cursor to column 1 row 1
``0x47 col row``           set the cursor (1-based column and row)
``0x4E slot b0 … b7``      define custom character ``slot`` (0–7) as eight
                           5-bit rows, top first; the byte ``slot`` prints it
``0x52``                   autoscroll off (writing the last cell must not
                           scroll the screen)
``0x4B`` / ``0x54``        underline / block cursor off
=========================  ===============================================

Any other byte is a character of the LCD's ROM, printed at the cursor, which
then moves one column right.  At open the driver switches autoscroll and the
cursors off, defines the four suits in CGRAM slots 1–4 (♠ ♣ ♦ ♥; slot 0 is left
free so a NUL byte is never sent as text) and clears the screen.  The
backpack's size must be set to 20×4 once (Adafruit: ``0xFE 0xD1 20 4``), which
it remembers.

:class:`TerminalDisplay` draws the same rows in a box on a text stream, for
simulations.
"""

from __future__ import annotations

import errno
import logging
import sys
import unicodedata
from typing import Callable, Protocol, Sequence, TextIO

import serial

from controller.core.cards import SUIT_SYMBOLS, SYMBOL_TO_SUIT
from controller.core.errors import HardwareError

log = logging.getLogger(__name__)

ROWS = 4
COLS = 20

COMMAND = 0xFE
CLEAR = 0x58
SET_CURSOR = 0x47
DEFINE_CHAR = 0x4E
AUTOSCROLL_OFF = 0x52
UNDERLINE_CURSOR_OFF = 0x4B
BLOCK_CURSOR_OFF = 0x54

#: 5×8 bitmaps of the suits, top row first, and the CGRAM slot each one takes.
SUIT_GLYPHS: dict[str, tuple[int, tuple[int, ...]]] = {
    "\u2660": (1, (0x04, 0x0E, 0x1F, 0x1F, 0x15, 0x04, 0x0E, 0x00)),  # ♠
    "\u2663": (2, (0x0E, 0x0E, 0x15, 0x1F, 0x15, 0x04, 0x0E, 0x00)),  # ♣
    "\u2666": (3, (0x00, 0x04, 0x0E, 0x1F, 0x0E, 0x04, 0x00, 0x00)),  # ♦
    "\u2665": (4, (0x00, 0x0A, 0x1F, 0x1F, 0x0E, 0x04, 0x00, 0x00)),  # ♥
}
# The outlined suits ♤ ♧ ♢ ♡ are drawn with the same glyphs.
# white suit symbols drawn as the filled ones; the suits as letters where a stream has no symbols
_SUIT_ALIASES = {sym: SUIT_SYMBOLS[suit] for sym, suit in SYMBOL_TO_SUIT.items() if sym != SUIT_SYMBOLS[suit]}
_SUIT_LETTERS = {SUIT_SYMBOLS[suit]: suit for suit in SUIT_SYMBOLS}


class Display(Protocol):
    """What every score display offers."""

    def show(self, lines: Sequence[str]) -> None: ...

    def close(self) -> None: ...


def fit_rows(lines: Sequence[str], rows: int = ROWS, cols: int = COLS) -> list[str]:
    """The rows to draw: exactly ``rows`` strings of exactly ``cols`` characters.

    ``lines`` may also be a :class:`controller.core.view.Indications` (its ``lines`` are used).
    """
    lines = getattr(lines, "lines", lines)
    if isinstance(lines, str):
        raise TypeError("show() takes a sequence of rows, not one string")
    if len(lines) > rows:
        log.debug("display has %d rows; dropping %d extra line(s)", rows, len(lines) - rows)
    fitted = [str(line)[:cols].ljust(cols) for line in list(lines)[:rows]]
    fitted += [" " * cols] * (rows - len(fitted))
    return fitted


def encode_lcd(text: str) -> bytes:
    """One row as LCD bytes: printable ASCII as is, suits as their CGRAM slot, anything else ``?``."""
    out = bytearray()
    for ch in text:
        ch = _SUIT_ALIASES.get(ch, ch)
        if ch in SUIT_GLYPHS:
            out.append(SUIT_GLYPHS[ch][0])
        elif " " <= ch <= "~":
            out.append(ord(ch))
        else:
            out.append(ord("?"))
    return bytes(out)


def _open_error(url: str, exc: Exception) -> HardwareError:
    """Turn a failure to open the port into a message a user can act on."""
    code = getattr(exc, "errno", None)
    if code in (errno.EACCES, errno.EPERM):
        hint = ("permission denied - add the service user to the 'dialout' group "
                "(sudo usermod -aG dialout USER) and log in again")
    elif code in (errno.ENOENT, errno.ENODEV, errno.ENXIO):
        hint = "no such port - check the display's cable and the port name (ls /dev/serial/by-id)"
    elif code in (errno.EBUSY, errno.EAGAIN, errno.EWOULDBLOCK):
        hint = "the port is in use by another program - stop it or pick another port"
    else:
        hint = " ".join(str(exc).split()) or type(exc).__name__
    return HardwareError(f"cannot open serial display {url}: {hint}")


class SerialDisplay:
    """A character LCD behind a Matrix Orbital-compatible serial backpack.

    ``serial_factory`` opens the port (``serial.serial_for_url`` by default, so
    ``loop://`` and ``socket://`` URLs work as well as device paths).
    """

    def __init__(
        self,
        url: str,
        baudrate: int = 9600,
        rows: int = ROWS,
        cols: int = COLS,
        serial_factory: Callable[..., serial.SerialBase] = serial.serial_for_url,
        write_timeout: float = 1.0,
    ):
        self.url = url
        self.rows = rows
        self.cols = cols
        try:
            self._port = serial_factory(url, baudrate=baudrate, write_timeout=write_timeout,
                                        exclusive=True)
        except (serial.SerialException, OSError, ValueError) as exc:
            raise _open_error(url, exc) from exc
        self._shown: list[bytes] = [b" " * cols] * rows
        self._closed = False
        init = bytearray()
        for cmd in (AUTOSCROLL_OFF, UNDERLINE_CURSOR_OFF, BLOCK_CURSOR_OFF):
            init += bytes((COMMAND, cmd))
        for slot, bitmap in SUIT_GLYPHS.values():
            init += bytes((COMMAND, DEFINE_CHAR, slot, *bitmap))
        init += bytes((COMMAND, CLEAR))
        try:
            self._send(bytes(init))
        except HardwareError:
            self._port.close()
            raise
        log.info("serial display on %s (%dx%d) ready", url, cols, rows)

    def _send(self, data: bytes) -> None:
        try:
            self._port.write(data)
            self._port.flush()
        except (serial.SerialException, OSError) as exc:
            raise HardwareError(f"serial display {self.url} stopped answering: {exc} "
                                "- check its cable and power") from exc

    def show(self, lines: Sequence[str]) -> None:
        """Draw ``lines``; only rows that differ from what is on the screen are sent."""
        if self._closed:
            raise HardwareError(f"serial display {self.url} is closed")
        out = bytearray()
        wanted = [encode_lcd(row) for row in fit_rows(lines, self.rows, self.cols)]
        for index, row in enumerate(wanted):
            if row != self._shown[index]:
                out += bytes((COMMAND, SET_CURSOR, 1, index + 1)) + row
        if out:
            self._send(bytes(out))
            self._shown = wanted

    def close(self) -> None:
        """Release the port (the screen keeps its last content)."""
        if not self._closed:
            self._closed = True
            self._port.close()

    def __enter__(self) -> "SerialDisplay":
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


class TerminalDisplay:
    """The display drawn as a boxed 20×4 screen on a text stream.

    On a TTY each frame overwrites the previous one (ANSI cursor movement);
    on anything else (a pipe, a log file) changed frames are appended.
    """

    def __init__(self, stream: TextIO | None = None, rows: int = ROWS, cols: int = COLS):
        self.stream = stream if stream is not None else sys.stdout
        self.rows = rows
        self.cols = cols
        isatty = getattr(self.stream, "isatty", None)
        self.in_place = bool(isatty and isatty())
        self._drawn: list[str] | None = None

    def render(self, lines: Sequence[str]) -> list[str]:
        """The boxed frame for ``lines``, as text lines (without newlines)."""
        rows = [self._clean(row) for row in fit_rows(lines, self.rows, self.cols)]
        bar = "\u2500" * self.cols
        return ["\u250c" + bar + "\u2510", *("\u2502" + row + "\u2502" for row in rows),
                "\u2514" + bar + "\u2518"]

    @staticmethod
    def _clean(row: str) -> str:
        # One terminal cell per character, so the box stays square.
        return "".join(
            _SUIT_ALIASES.get(ch, ch)
            if ch.isprintable() and unicodedata.east_asian_width(ch) not in ("W", "F") else "?"
            for ch in row)

    def show(self, lines: Sequence[str]) -> None:
        """Draw the frame; nothing is written when the content has not changed."""
        frame = self.render(lines)
        if frame == self._drawn:
            return
        text = "\n".join(frame) + "\n"
        if self.in_place and self._drawn is not None:
            # Back to the top-left corner of the previous frame, then overwrite it.
            text = f"\x1b[{len(self._drawn)}A\r" + "".join(f"\x1b[2K{line}\n" for line in frame)
        self._write(text)
        self._drawn = frame

    def _write(self, text: str) -> None:
        try:
            self.stream.write(text)
        except UnicodeEncodeError:
            # A stream that cannot encode the box or the suits: plain ASCII instead.
            table = str.maketrans({**_SUIT_LETTERS, "\u2500": "-", "\u2502": "|", "\u250c": "+",
                                   "\u2510": "+", "\u2514": "+", "\u2518": "+"})
            self.stream.write(text.translate(table).encode("ascii", "replace").decode("ascii"))
        self.stream.flush()

    def close(self) -> None:
        """Flush the stream (it is not closed: it belongs to the caller)."""
        self.stream.flush()

    def __enter__(self) -> "TerminalDisplay":
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
