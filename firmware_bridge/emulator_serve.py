"""``preftable hub-emulator``'s server: a virtual hub (:mod:`firmware_bridge.emulator`) on a
pty or a TCP port until Ctrl-C, SIGTERM or ``quit``, a script of table events played on
its readers, and the fault commands read from stdin (PROTOCOL.md is the line it speaks;
the options are parsed by :mod:`controller.app.hub_emulator_cli`).
"""

from __future__ import annotations

import signal
import sys
import threading
import time
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


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


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
    emulator = HubEmulator(readers=readers, edge_ms=edge_ms)
    try:
        if tcp is not None:
            host, port = emulator.serve_tcp(host, tcp)
            print(f"socket://{host}:{port}", file=stdout, flush=True)
        else:
            print(emulator.open_pty(), file=stdout, flush=True)
            print(f"# stable path, follows unplug/replug: {emulator.link_path}", file=stderr, flush=True)
    except OSError as exc:
        emulator.close()                        # no pty folder left behind
        # one line in the CLI's own format (cli.main reports a PreftableError, exit 2)
        where = f"TCP port {tcp}" if tcp is not None else "a pty"
        raise LinkError(f"hub-emulator cannot serve on {where}: {exc.strerror or exc}") from None
    if events:
        try:
            # a host connecting late must not miss the first moves (and see them out of turn)
            emulator.play(events, zones, deck, speed=speed, after=emulator.host_hello)
        except ValueError as exc:                 # a uid no tag can have
            print(f"hub-emulator: cannot play {what}: {exc}", file=stderr)
            emulator.close()
            return 2
        print(f"# {len(events)} table events for readers {', '.join(zones)}: playing once the host "
              "says HELLO", file=stderr, flush=True)
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _interrupt)     # `kill`, systemd: clean up like Ctrl-C
    print(f"# {COMMANDS_HELP}", file=stderr, flush=True)
    try:
        for line in stdin:                              # faults on demand, one per line
            if line.strip() in ("quit", "exit"):
                break
            try:
                reply = run_command(emulator, line)
            except (ValueError, IndexError) as exc:
                reply = f"? {exc} -- {COMMANDS_HELP}"
            if reply:
                print(reply, file=stdout, flush=True)
        else:
            while True:                                 # stdin closed: serve until Ctrl-C
                time.sleep(3600)
    except KeyboardInterrupt:
        pass
    finally:
        emulator.close()
    return 0


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
