"""The terminal the live views draw on: a block of lines redrawn in place.

Rules it keeps, whatever the width of the terminal:

- every line is cut to the terminal's width (less one column, so the cursor
  never wraps), so moving back up over the block always lands on its first
  line and a redraw never leaves copies behind;
- log records meant for the same terminal are written *above* the block
  (the block is erased, the record written, the block drawn again), so a
  WARNING never lands inside the board;
- colour only on a terminal, never when ``NO_COLOR`` is set
  (https://no-color.org) or ``TERM=dumb``;
- on a pipe or a file nothing is redrawn: the views write plain lines instead.

"""

from __future__ import annotations

import logging
import os
import sys
import textwrap
import threading
import time
from typing import Iterable, Sequence, TextIO

from ..core.view import ERROR as ERROR_LED, TURN as TURN_LED
from .linkstate import link_state

#: line styles a view may ask for
TURN, MISTAKE, DIM, PLAIN = "turn", "mistake", "dim", None
_SGR = {TURN: "\x1b[1;32m", MISTAKE: "\x1b[1;31m", DIM: "\x1b[2m"}
_RESET = "\x1b[0m"

Line = tuple[str, "str | None"]


def is_terminal(stream: TextIO) -> bool:
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty and isatty())
    except ValueError:            # a closed stream
        return False


def colour_wanted(stream: TextIO, environ=os.environ) -> bool:
    """Colour on this stream? Only a terminal, and neither NO_COLOR (any value but empty) nor TERM=dumb."""
    return is_terminal(stream) and not environ.get("NO_COLOR") and environ.get("TERM", "") != "dumb"


def terminal_width(stream: TextIO, default: int = 80) -> int:
    try:
        return os.get_terminal_size(stream.fileno()).columns or default
    except (OSError, AttributeError, ValueError):
        try:
            return int(os.environ.get("COLUMNS", default))
        except ValueError:
            return default


def fit(text: str, width: int) -> str:
    """``text`` cut to ``width`` characters, an ellipsis marking the cut."""
    if len(text) <= width:
        return text
    return text[:max(width - 1, 0)] + "\u2026" if width > 0 else ""


def _same_terminal(a: TextIO, b: TextIO) -> bool:
    try:
        sa, sb = os.fstat(a.fileno()), os.fstat(b.fileno())
    except (OSError, AttributeError, ValueError):
        return a is b
    return (sa.st_dev, sa.st_ino, sa.st_rdev) == (sb.st_dev, sb.st_ino, sb.st_rdev)


class _Above(logging.Handler):
    """Writes log records above the screen's block (the handler it stands in for keeps its format)."""

    def __init__(self, screen: "Screen", original: logging.Handler):
        super().__init__(original.level)
        self.screen = screen
        self.setFormatter(original.formatter)

    def emit(self, record: logging.LogRecord) -> None:
        try:
            self.screen.note(self.format(record))
        except Exception:         # logging must never take the table down (logging's own rule)
            self.handleError(record)


class Screen:
    """A block of lines redrawn in place on a terminal stream."""

    def __init__(self, stream: TextIO, *, colour: bool | None = None):
        self.stream = stream
        self.tty = is_terminal(stream)
        self.colour = colour_wanted(stream) if colour is None else colour
        self._lock = threading.RLock()
        self._height = 0            # terminal rows of the block on the screen now
        self._drawn = 0
        self._lines: list[Line] = []
        self._swapped: list[tuple[logging.Logger, logging.Handler, logging.Handler]] = []

    # --- drawing ------------------------------------------------------------------

    def _paint(self, text: str, style: str | None) -> str:
        if not self.colour or style not in _SGR:
            return text
        return _SGR[style] + text + _RESET

    def _rows(self) -> list[tuple[str, str | None]]:
        """The block's terminal rows: every line cut to the width, but a mistake wrapped whole
        (what to do about it must be read to its end, at 60 columns too)."""
        width = max(terminal_width(self.stream) - 1, 10)
        rows: list[tuple[str, str | None]] = []
        for text, style in self._lines:
            if style == MISTAKE and len(text) > width:
                rows += [(part, style) for part in textwrap.wrap(text, width, subsequent_indent="  ")]
            else:
                rows.append((fit(text, width), style))
        return rows

    def _block(self) -> str:
        rows = self._rows()
        self._drawn = len(rows)
        return "".join(f"\x1b[2K{self._paint(text, style)}\n" for text, style in rows)

    def _up(self) -> str:
        return f"\r\x1b[{self._height}A" if self._height else ""

    def draw(self, lines: Iterable[Line | str]) -> None:
        """Replace the block by ``lines`` (strings, or ``(text, style)`` pairs)."""
        lines = [(line, None) if isinstance(line, str) else tuple(line) for line in lines]
        with self._lock:
            if lines == self._lines and self._height:
                return
            up = self._up()
            self._lines = lines
            self._write(up + self._block() + "\x1b[J")
            self._height = self._drawn

    def note(self, text: str) -> None:
        """Write ``text`` above the block, which is then drawn again below it."""
        with self._lock:
            out = self._up() + "\x1b[J" if self._height else ""
            self._write(out + text.rstrip("\n") + "\n" + self._block())
            self._height = self._drawn

    def _write(self, text: str) -> None:
        self.stream.write(text)
        self.stream.flush()

    # --- log records ----------------------------------------------------------------

    def capture_logging(self, logger: logging.Logger | None = None) -> None:
        """Route the logger's handlers that write to this terminal through :meth:`note`."""
        if not self.tty:
            return
        logger = logger or logging.getLogger()
        for handler in list(logger.handlers):
            stream = getattr(handler, "stream", None)
            if isinstance(handler, logging.StreamHandler) and stream is not None \
                    and is_terminal(stream) and _same_terminal(stream, self.stream):
                above = _Above(self, handler)
                logger.removeHandler(handler)
                logger.addHandler(above)
                self._swapped.append((logger, handler, above))

    def release_logging(self) -> None:
        """Give the log handlers back (the block stays on the screen, the cursor below it)."""
        while self._swapped:
            logger, handler, above = self._swapped.pop()
            logger.removeHandler(above)
            logger.addHandler(handler)


class TerminalBoard:
    """The 20x4 board of ``preftable run`` on a terminal, with the hub link's state under it.

    Draws through a :class:`Screen` (log records go above it); on a pipe or a
    file, each changed board is appended instead.  A bus subscriber on a thread
    of its own (:mod:`controller.app.bus`).
    """

    name = "terminal board"
    inline = False

    def __init__(self, stream: TextIO | None = None, link=None, port: str | None = None, names=None):
        from hw.display import TerminalDisplay

        self.stream = stream if stream is not None else sys.stdout
        self.frame = TerminalDisplay(self.stream)         # renders the box; drawn here
        self.screen = Screen(self.stream)
        self.link = link
        self.port = port
        self.names = dict(names or {})
        self._rows: Sequence[str] = ("",) * 4
        self._turn: list[str] = []
        self._mistake: list[str] = []
        self._advice = ""               # the newest mistake in words (from the snapshot)
        self._state = None
        #: how a mistake is cleared at this table (``run`` sets it from the buttons it has)
        self.confirm_hint = "fix it, then press confirm"
        #: the page's address and PIN for the phones (``run`` sets it with a [web] section)
        self.join_line = ""
        self.screen.capture_logging()

    def _lines(self) -> list[Line]:
        lines: list[Line] = [(row, None) for row in self.frame.render(self._rows)]
        if self.link is not None:
            state = self._state = link_state(self.link, self.port)
            lines.append((state, TURN if state.startswith("hub connected") else MISTAKE))
        # under the box, in full: whose turn it is (a mistake on the box's last row hides it there)
        if self._turn:
            lines.append((f"to play: \u25b6 {', '.join(self._turn)}", TURN))
        if self.join_line and not self._advice:
            lines.append((self.join_line, DIM))      # where the phones open the page, always in view
        if self._advice:
            lines.append((f"! {self._advice} - {self.confirm_hint}", MISTAKE))
        elif self._mistake:
            lines.append((f"! a mistake by {', '.join(self._mistake)}: {self.confirm_hint}", MISTAKE))
        return lines

    def receive(self, item) -> None:
        """A bus item: draw its snapshot's board (the names it carries: renamed players too)."""
        snap = item.snapshot
        if snap.names:
            self.names = dict(snap.names)
        self._advice = ""
        if snap.alerts:
            from .textview import mistake_advice
            deal = snap.deal or {}
            more = f" (+{len(snap.alerts) - 1} more)" if len(snap.alerts) > 1 else ""
            self._advice = mistake_advice(snap.alerts[-1], self.names, deal.get("turn") or deal.get("expected")) + more
        self.show(snap.indications, time.monotonic())

    def show(self, ind, now: float) -> None:
        self._rows = tuple(ind.lines)
        self._turn = [self.names.get(z, z) for z, mode in ind.leds.items() if mode == TURN_LED]
        self._mistake = [self.names.get(z, z) for z, mode in ind.leds.items() if mode == ERROR_LED]
        self._draw()

    def _draw(self) -> None:
        if self.screen.tty:
            self.screen.draw(self._lines())
        else:
            self.frame.show(self._rows)
            if self.link is not None and link_state(self.link, self.port) != self._state:
                self.stream.write(self._lines()[-1][0] + "\n")
                self.stream.flush()

    def tick(self, now: float) -> None:
        if self.link is not None and link_state(self.link, self.port) != self._state:
            self._draw()

    def close(self) -> None:
        self.screen.release_logging()
        self.stream.flush()


class EnterConfirms:
    """The Enter key of a terminal as the table's ``confirm`` button.

    For a table without a wired confirm button (a hub and no GPIO, the demo):
    each line read from ``stream`` calls ``confirm()``.  The reading thread is
    a daemon: it ends with the process, or when the stream closes.
    """

    def __init__(self, stream: TextIO, confirm):
        self.stream = stream
        self.confirm = confirm

    def start(self) -> "EnterConfirms":
        threading.Thread(target=self._read, name="confirm key", daemon=True).start()
        return self

    def _read(self) -> None:
        try:
            for _ in self.stream:
                self.confirm()
        except (OSError, ValueError):          # the terminal went away
            return


__all__ = ["Screen", "EnterConfirms", "TerminalBoard", "colour_wanted", "fit", "TURN", "MISTAKE", "DIM"]
