"""``preftable hub-emulator``'s server: a virtual hub (:mod:`firmware_bridge.emulator`) on a
pty or a TCP port until Ctrl-C, SIGTERM or ``quit``, a script of table events played on
its readers, and the fault commands read from stdin (PROTOCOL.md is the line it speaks;
the options are parsed by :mod:`controller.app.hub_emulator_cli`).
"""

from __future__ import annotations

import os
import select
import signal
import sys
import threading
from typing import Sequence

from controller.core.deck import load_deck
from controller.core.errors import LinkError
from controller.core.events import TableEvent, normalise_uid

from .emulator import HubEmulator

def load_deck_cards(path: str) -> dict[str, str]:
    """A deck file (FORMATS.md), validated like the table's own (``controller.core.deck``),
    as ``{card code: uid}``."""
    deck = load_deck(path)
    return {str(card): uid.upper() for uid, card in deck.cards.items()}


#: the signals that stop the server: ``kill``/systemd's stop, and Ctrl-C
STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)


class StopSignals:
    """SIGTERM and Ctrl-C as bytes on a pipe (:func:`signal.set_wakeup_fd`) that the main
    thread waits on beside stdin.

    A Python-level handler runs only when the main thread next executes bytecode, and the
    kernel may hand the signal to one of the emulator's threads: a handler raising
    KeyboardInterrupt was lost when the signal came as the main thread left a read of stdin's
    end for its long sleep (it slept on).  The C handler writes the byte at once, in whichever
    thread takes the signal, so a wait that includes the pipe cannot miss it.  Outside the main
    thread (where handlers cannot be set) the pipe only ever holds what :meth:`stop` writes.
    """

    def __init__(self) -> None:
        self.fd, self._w = os.pipe()
        for fd in (self.fd, self._w):
            os.set_blocking(fd, False)
        self._old: dict[int, object] = {}
        self._old_fd: int | None = None

    def __enter__(self) -> "StopSignals":
        if threading.current_thread() is threading.main_thread():
            self._old_fd = signal.set_wakeup_fd(self._w, warn_on_full_buffer=False)
            for sig in STOP_SIGNALS:     # a handler of our own: the byte, not a KeyboardInterrupt, stops us
                self._old[sig] = signal.signal(sig, _noted)
        return self

    def stop(self) -> None:
        """Stop the wait as a signal would (for a caller that is not the main thread)."""
        try:
            os.write(self._w, bytes([signal.SIGTERM]))
        except BlockingIOError:
            pass                                    # a full pipe is already a stop

    def __exit__(self, *exc: object) -> None:
        for sig, old in self._old.items():
            signal.signal(sig, old)
        if self._old_fd is not None:
            signal.set_wakeup_fd(self._old_fd)
        os.close(self.fd)
        os.close(self._w)

    def which(self) -> int | None:
        """The first stop signal on the pipe, if any (the pipe is drained)."""
        try:
            data = os.read(self.fd, 64)
        except BlockingIOError:
            return None
        return data[0] if data else None


def _noted(signum: int, frame: object) -> None:
    """The Python-level half of a stop signal: nothing (its byte on the wakeup pipe is the stop)."""


def _stdin_fd(stdin) -> int | None:
    try:
        return stdin.fileno()
    except (AttributeError, OSError, ValueError):      # no stdin (started with it closed), or not a file
        return None


def serve(events: Sequence[TableEvent] = (), zones: Sequence[str] = (), deck: dict[str, str] | None = None, *,
          readers: int = 4, speed: float = 1.0, tcp: int | None = None, host: str = "127.0.0.1",
          edge_ms: bool = True, what: str = "the script", stdin=None, stdout=None, stderr=None) -> int:
    """Serve a virtual hub until Ctrl-C, SIGTERM or ``quit`` (``preftable hub-emulator``,
    whose options :mod:`controller.app.hub_emulator_cli` parses and checks).

    Prints the device path (``/dev/pts/N``) or ``socket://host:port`` on the first
    line of stdout; plays ``events`` on the readers of ``zones`` once the host has
    said HELLO; reads fault commands from stdin (:data:`COMMANDS_HELP`).  Returns the
    exit status.
    """
    stdin = sys.stdin if stdin is None else stdin
    stdout = sys.stdout if stdout is None else stdout
    stderr = sys.stderr if stderr is None else stderr
    # the stop signals are ours before the pty exists: a SIGTERM right after the first line
    # still closes the emulator (its pty folder removed) and exits 0
    with StopSignals() as stops:
        emulator = HubEmulator(readers=readers, edge_ms=edge_ms)
        try:
            return _serve(emulator, stops, events, zones, deck, speed=speed, tcp=tcp, host=host,
                          what=what, stdin=stdin, stdout=stdout, stderr=stderr)
        finally:
            emulator.close()


def _serve(emulator: HubEmulator, stops: StopSignals, events, zones, deck, *, speed: float, tcp: int | None,
           host: str, what: str, stdin, stdout, stderr) -> int:
    try:
        if tcp is not None:
            host, port = emulator.serve_tcp(host, tcp)
            print(f"socket://{host}:{port}", file=stdout, flush=True)
        else:
            print(emulator.open_pty(), file=stdout, flush=True)
            print(f"# stable path, follows unplug/replug: {emulator.link_path}", file=stderr, flush=True)
    except OSError as exc:
        # one line in the CLI's own format (cli.main reports a PreftableError, exit 2)
        where = f"TCP port {tcp}" if tcp is not None else "a pty"
        raise LinkError(f"hub-emulator cannot serve on {where}: {exc.strerror or exc}") from None
    if events:
        try:
            # a host connecting late must not miss the first moves (and see them out of turn)
            emulator.play(events, zones, deck, speed=speed, after=emulator.host_hello)
        except ValueError as exc:                 # a uid no tag can have
            print(f"hub-emulator: cannot play {what}: {exc}", file=stderr)
            return 2
        print(f"# {len(events)} table events for readers {', '.join(zones)}: playing once the host "
              "says HELLO", file=stderr, flush=True)
    print(f"# {COMMANDS_HELP}", file=stderr, flush=True)
    serve_commands(emulator, stops, stdin, stdout)
    return 0


def serve_commands(emulator: HubEmulator, stops: StopSignals, stdin, stdout) -> int | None:
    """Run the fault commands of stdin, a line each, until ``quit`` or a stop signal; once
    stdin ends, wait for the signal alone.  Returns the signal that stopped it (None: ``quit``).
    A stdin with no file behind it (a test's ``StringIO``) is read to its end first."""
    fd = _stdin_fd(stdin)
    if fd is None and stdin is not None:
        if any(_command(emulator, line, stdout) for line in stdin):
            return None
    partial = b""
    while True:
        ready = select.select([stops.fd] + ([fd] if fd is not None else []), [], [])[0]
        if stops.fd in ready:
            which = stops.which()
            if which is not None:
                return which
            continue
        chunk = os.read(fd, 4096)
        if not chunk:
            fd = None                               # stdin closed: serve until a signal
            chunk = b"\n"                           # and its last line, if it had no newline
        lines = (partial + chunk).split(b"\n")
        partial = lines.pop()
        if any(_command(emulator, raw.decode("utf-8", "replace"), stdout) for raw in lines):
            return None


def _command(emulator: HubEmulator, line: str, stdout) -> bool:
    """One line of stdin run and answered; True if it was ``quit``."""
    if line.strip() in ("quit", "exit"):
        return True
    try:
        reply = run_command(emulator, line)
    except (ValueError, IndexError) as exc:
        reply = f"? {exc} -- {COMMANDS_HELP}"
    if reply:
        print(reply, file=stdout, flush=True)
    return False


COMMANDS_HELP = ("commands: place R UID | remove R | drop [N] | corrupt [N] | garbage [TEXT] | "
                 "reboot | silent SECONDS | fail R | heal R | unplug | replug | state | quit")


def run_command(emulator: HubEmulator, line: str) -> str | None:
    """One line of the emulator's stdin command language; returns what to print."""
    words = line.split()
    if not words:
        return None
    cmd, args = words[0].lower(), words[1:]
    if cmd == "place":
        emulator.place(int(args[0]), normalise_uid(args[1]))
    elif cmd == "remove":
        emulator.remove(int(args[0]))
    elif cmd == "drop":
        emulator.drop_next(int(args[0]) if args else 1)
    elif cmd == "corrupt":
        emulator.corrupt_next(int(args[0]) if args else 1)
    elif cmd == "garbage":
        emulator.send_garbage((" ".join(args) or "line noise").encode("ascii", "replace") + b"\r\n")
    elif cmd == "reboot":
        emulator.reboot()
        return f"# boot {emulator.boot_id}"
    elif cmd == "fail":
        emulator.fail_reader(int(args[0]))
    elif cmd == "heal":
        emulator.heal_reader(int(args[0]))
    elif cmd == "silent":
        emulator.go_silent(float(args[0]))
    elif cmd == "unplug":
        emulator.unplug()
    elif cmd == "replug":
        emulator.replug()
        return emulator.device_path or emulator.url
    elif cmd == "state":
        return "# " + " ".join(uid or "-" for uid in emulator.reported())
    else:
        raise ValueError(f"unknown command {cmd!r}")
    return None
