"""The terminal views as a user sees them: drawn in a real terminal (tmux) at 60, 80 and 120 columns.

Each test runs the command in a detached tmux pane of a given width and reads
the screen back with ``capture-pane`` (the whole scrollback), waiting for
what the screen shows, never for a time.  Then the screen is compared line by
line: no line of the live panel appears twice (an in-place redraw that went
wrong leaves copies), no line is wider than the terminal, the legend and the
link state are there, colour only when wanted.

The demo in these panes is ``preftable demo`` as the command line runs it (its own
parser, ``cmd_demo``, the logging set up as ``main`` does) on a virtual clock: the same
screens, as fast as the code draws them.  For the look while the panel is live, that clock
stops once in mid-deal until the test has looked.  ``preftable demo`` on real time has its
own test (test_cli_behaviour).
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import uuid
from pathlib import Path

import pytest

from conftest import eventually, spawn as spawn_child, wait_until

ROOT = Path(__file__).resolve().parents[2]
PREFTABLE = [sys.executable, "-m", "controller"]

#: ``virtual_demo.py HOLD demo ARGS``: ``preftable demo ARGS`` on a virtual clock.  HOLD (``-``:
#: none) is a folder where, once the demo's time reaches HOLD_S (mid-deal), the demo writes
#: ``held`` and waits until the test has opened and closed the FIFO ``go``
VIRTUAL_DEMO = """
import logging, os, sys
sys.path.insert(0, {root!r})
from controller.app.cli import build_parser
from controller.app.demo import cmd_demo
from controller.core.clock import VirtualClock

HOLD_S = 3.0


class HeldClock(VirtualClock):
    def __init__(self, hold):
        super().__init__()
        self.hold = hold

    def advance(self, seconds):
        if self.hold is not None and self.now + seconds >= HOLD_S:
            hold, self.hold = self.hold, None
            open(os.path.join(hold, "held"), "w").close()
            with open(os.path.join(hold, "go")) as go:
                go.read()
        return super().advance(seconds)


hold = None if sys.argv[1] == "-" else sys.argv[1]
args = build_parser("demo").parse_args(sys.argv[2:])
logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
sys.exit(cmd_demo(args, clock=HeldClock(hold)))
"""


def virtual_demo(tmp_path: Path, *args: str, hold: Path | None = None) -> str:
    """The shell command of ``preftable demo ARGS`` on a virtual clock (held once, with ``hold``)."""
    script = tmp_path / "virtual_demo.py"
    script.write_text(VIRTUAL_DEMO.format(root=str(ROOT)))
    if hold is not None:
        hold.mkdir()
        os.mkfifo(hold / "go")
    return shlex.join([sys.executable, str(script), str(hold) if hold is not None else "-", "demo", *args])


def let_go(hold: Path) -> None:
    """Open and close the held demo's FIFO (once it is reading it): its time goes on."""
    def opened():
        try:
            return os.open(hold / "go", os.O_WRONLY | os.O_NONBLOCK) + 1
        except OSError:             # ENXIO: the demo is not reading it yet
            return 0
    os.close(wait_until(opened, "the held demo reading its FIFO") - 1)


pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux (Debian: tmux)")

#: a bound on how long a whole command may take on a loaded machine; the tests wait for screen content
LIVENESS_S = 180


class Pane:
    """One detached tmux session on its own server socket, running ``command``."""

    def __init__(self, command: str, width: int, height: int = 50, env: dict | None = None):
        self.server = f"preftable-test-{uuid.uuid4().hex[:8]}"
        self.width = width
        environment = {"TERM": "xterm-256color", **(env or {})}
        exports = " ".join(f"{k}={shlex.quote(v)}" for k, v in environment.items())
        unset = "" if "NO_COLOR" in environment else "unset NO_COLOR; "
        # "[start]": a first line before the command (tmux mishandles cursor-up over a detached
        # pane's very first rows); the shell stays after the command so the screen can be read,
        # "[exit N]" marking the end
        # (the shell traps Ctrl-C so that only the command stops)
        script = (f"trap : INT; {unset}export {exports}; cd {shlex.quote(str(ROOT))}; echo '[start]'; {command}; "
                  "echo \"[exit $?]\"; exec sleep 600")
        self._tmux("new-session", "-d", "-x", str(width), "-y", str(height), "sh", "-c", script)
        self._tmux("set-option", "-g", "history-limit", "10000")

    def _tmux(self, *args: str) -> str:
        return subprocess.run(["tmux", "-L", self.server, *args], check=True, capture_output=True,
                              text=True, timeout=30).stdout

    def screen(self, escapes: bool = False) -> list[str]:
        """The whole pane, scrollback included, one string per terminal row (trailing blanks dropped)."""
        args = ["capture-pane", "-p", "-S", "-", "-t", "0"] + (["-e"] if escapes else [])
        lines = self._tmux(*args).split("\n")
        while lines and not lines[-1].strip():
            lines.pop()
        return lines

    def wait_for(self, text: str) -> list[str]:
        seen: list[list[str]] = [[]]

        def shown() -> bool:
            seen[0] = self.screen()
            return any(text in line for line in seen[0])

        if not eventually(shown, LIVENESS_S, interval=0.1):
            raise AssertionError(f"{text!r} never appeared on the screen:\n" + "\n".join(seen[0]))
        return seen[0]

    def send(self, *keys: str) -> None:
        self._tmux("send-keys", "-t", "0", *keys)

    def close(self) -> None:
        subprocess.run(["tmux", "-L", self.server, "kill-server"], capture_output=True, timeout=30)


@pytest.fixture
def pane():
    panes: list[Pane] = []

    def make(command: str, width: int, **kw) -> Pane:
        p = Pane(command, width, **kw)
        panes.append(p)
        return p

    yield make
    for p in panes:
        p.close()


#: the live panel's rows, by how each begins (each must be on the screen exactly once)
PANEL = ("demo deal ", "hub connected", "waiting for hub", "to play:", "on the table:", "last trick:", "tricks taken:",
         "pulya (points):", "gora (penalty):", "\u25b6 to play")


#: a hub protocol frame (PROTOCOL.md): on a shared machine another program's host link, reopening a
#: /dev/pts number its emulator gave up, can write into a pane that got the number since
FOREIGN_FRAME = re.compile(r"\$[0-9A-F]{4} [A-Z]+\b.*\*[0-9A-F]{4}")


def interfered(lines: list[str]) -> bool:
    """Did another program write into the pane, or put it in raw mode (a host link opening its
    /dev/pts path does: newlines then stop returning the cursor, rows step to the right)?
    Neither can come from the view, which never writes a frame nor touches the terminal's modes."""
    staircase = re.compile(r"^ {8,}(%s)" % "|".join(re.escape(h) for h in PANEL))
    return any(FOREIGN_FRAME.search(line) or staircase.match(line) for line in lines)


def clean_run(pane, tmp_path: Path, width: int, *args: str) -> tuple[list[str], list[str]]:
    """The screens (held in mid-deal, at the end) of a virtual-clock demo no other program
    interfered with (three tries)."""
    for attempt in range(3):
        hold = tmp_path / f"hold{attempt}"
        p = pane(virtual_demo(tmp_path, *args, "--log-dir", str(tmp_path / f"logs{attempt}"), hold=hold), width)
        wait_until(lambda: (hold / "held").exists(), "the demo held in mid-deal", LIVENESS_S)
        during = p.wait_for("tricks taken:")
        let_go(hold)
        final = p.wait_for("[exit ")
        if not interfered(during + final):
            return during, final
        p.close()
    raise AssertionError("another program kept writing into the test's terminal")


def panel_copies(lines: list[str]) -> dict[str, int]:
    return {head: sum(1 for line in lines if line.startswith(head)) for head in PANEL}


@pytest.mark.parametrize("width", [60, 80, 120])
def test_demo_live_view_fits_and_never_duplicates(pane, tmp_path, width):
    during, final = clean_run(pane, tmp_path, width, "--deals", "1", "--speed", "5", "--seed", "3")
    # one look while the panel is live, one at the end
    for lines in (during, final):
        assert all(len(line) <= width for line in lines), [l for l in lines if len(l) > width]
    during_panel = [line for line in during if line.startswith(PANEL)]
    assert len(during_panel) == len(set(during_panel))
    counts = panel_copies(final)
    # "on the table:"/"last trick:" are not drawn between deals; every row that is there is there once
    assert counts["demo deal "] == 1 and counts["hub connected"] + counts["waiting for hub"] == 1, final
    assert all(n <= 1 for n in counts.values()), counts
    assert counts["\u25b6 to play"] == 1                         # the legend
    assert "[exit 0]" in final
    assert any(line.startswith("replay it with: ") for line in final)
    if width >= 80:                                             # nothing needed cutting
        assert not any("\u2026" in line for line in final if line.startswith(PANEL))


def test_colour_on_a_terminal_and_none_with_no_color(pane, tmp_path):
    def demo(logs: str) -> str:
        return virtual_demo(tmp_path, "--deals", "1", "--speed", "5", "--seed", "4", "--log-dir", str(tmp_path / logs))

    coloured = pane(demo("coloured"), 100)
    plain = pane(demo("plain"), 100, env={"NO_COLOR": "1"})
    assert "[exit 0]" in coloured.wait_for("[exit ")[-1]
    assert "[exit 0]" in plain.wait_for("[exit ")[-1]
    legend = [l for l in coloured.screen(escapes=True) if "\u25b6 to play" in l]
    assert legend and "\x1b[" in legend[0]                    # the legend is dimmed
    assert any(line.startswith(PANEL) for line in plain.screen())          # the panel was drawn,
    assert plain.screen(escapes=True) == plain.screen()                     # and nothing in colour


def test_log_lines_go_above_the_block(pane, tmp_path):
    """A WARNING while a block is drawn lands above it; the block stays whole, once."""
    script = tmp_path / "draw.py"
    script.write_text(
        "import logging, sys\n"
        "from controller.app.screen import Screen\n"
        "logging.basicConfig(level=logging.WARNING, format='%(levelname)s %(message)s')\n"
        "s = Screen(sys.stdout)\n"
        "s.capture_logging()\n"
        "for i in range(5):\n"
        "    s.draw([f'block row one {i}', 'block row two'])\n"
        "    logging.warning('warning number %d', i)\n"
        "s.draw(['block row one done', 'block row two'])\n"
        "s.release_logging()\n"
        "print('ALL DONE')\n")
    p = pane(shlex.join([sys.executable, str(script)]), 60)
    lines = p.wait_for("ALL DONE")
    warnings = [i for i, line in enumerate(lines) if line.startswith("WARNING warning number")]
    assert len(warnings) == 5
    rows = [i for i, line in enumerate(lines) if line.startswith("block row")]
    assert [lines[i] for i in rows] == ["block row one done", "block row two"]
    assert max(warnings) < min(rows)                        # every warning above the block


def test_run_board_shows_waiting_for_the_hub_then_connected(pane, tmp_path):
    """`run --wait` with no hub yet says so under the board; once a hub answers, it says who."""
    short = Path(tempfile.mkdtemp(prefix="pt", dir="/tmp"))    # a path that fits 60 columns
    link = short / "hub"                                      # does not exist yet
    cfg = tmp_path / "c.toml"
    cfg.write_text(f'[readers]\nbackend = "hub"\n[hub]\nport = "{link}"\n[display]\nkind = "terminal"\n'
                   f'[log]\ndir = "{tmp_path / "logs"}"\n')
    p = pane(shlex.join(PREFTABLE + ["run", "--config", str(cfg), "--wait",
                                            "--deck", str(ROOT / "controller" / "examples" / "deck.toml")]), 60)
    lines = p.wait_for(f"waiting for hub on {link}")
    assert all(len(line) <= 60 for line in lines)
    emulator = spawn_child(PREFTABLE + ["hub-emulator", "--readers", "4"], cwd=ROOT, text=True,
                           stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    try:
        pty = emulator.stdout.readline().strip()
        os.symlink(pty, link)
        lines = p.wait_for("hub connected (firmware")
        assert sum("hub connected" in line for line in lines) == 1
        assert sum(line.startswith("\u250c") for line in lines) == 1     # one board, redrawn in place
        p.send("C-c")
        lines = p.wait_for("[exit ")
        assert "[exit 0]" in lines[-1] or any("[exit 0]" in line for line in lines)
        assert any("stopped (Ctrl-C)" in line for line in lines)
    finally:
        emulator.stdin.close()
        emulator.terminate()
        emulator.wait(30)
        shutil.rmtree(short)


LIVE_VIEW_SCRIPT = '''
import sys, types
from dataclasses import replace
from controller.app.bus import Published
from controller.app.demo import LiveView
from controller.core.config import GameConfig, Rules, Table
from controller.core.events import control, placed
from controller.core.snapshot import SnapshotBuilder
from controller.core.tracker import DealTracker

game = GameConfig(Table(players=3, names={"seat1": "Anna", "seat2": "Boris", "seat3": "Vera"}),
                  Rules(bidding=True))
tracker = DealTracker(game)
link = types.SimpleNamespace(ready=False, hub_info=None, error=None, url="/tmp/hub")
view = LiveView(3, sys.stdout, game.table.names, link=link,
                confirm_hint="fix it, then press Enter here to confirm (no confirm button wired)")
builder = SnapshotBuilder("s")

def show(event=None):
    if event is not None:
        tracker.feed(event)
    view.receive(Published(event, (), builder.build(tracker, seq=0)))

show()
link.ready, link.hub_info = True, types.SimpleNamespace(fw_version="emu-1", readers=4)
show(control(1.0, "bid", "6s", "seat2"))
show(control(2.0, "bid", "pass", "seat3"))
show(placed(3.0, "seat3", card="7h"))         # a card during the auction: not in play
view.close()
print("ALL DONE")
'''


@pytest.mark.parametrize("width", [60, 80])
def test_live_view_in_an_auction_says_who_is_to_play_and_the_whole_mistake(pane, tmp_path, width):
    """At 60 and 80 columns: one link state (the connected one), the `to play` line in the
    auction (not the 20x4 board's rows), the mistake said to its end (wrapped, never cut)."""
    script = tmp_path / "view.py"
    script.write_text(LIVE_VIEW_SCRIPT)
    p = pane(shlex.join([sys.executable, str(script)]), width)
    lines = p.wait_for("ALL DONE")
    assert all(len(line) <= width for line in lines)
    assert sum("waiting for hub" in line for line in lines) == 0, lines
    assert sum(line.startswith("hub connected") for line in lines) == 1, lines
    assert any(line.startswith("to play: \u25b6 Anna (to bid)") for line in lines), lines
    assert not any("AUCTION" in line for line in lines), lines          # no raw display row
    start = next(i for i, line in enumerate(lines) if line.startswith("! "))
    said = " ".join(line.strip() for line in lines[start:start + 4])
    assert "Vera: lift the 7\u2665: no card is played until the calls are over" in said, said
    assert "(no confirm button wired)" in said, said
    assert not any("\u2026" in line for line in lines[start:start + 4])
