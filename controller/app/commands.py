"""The service's subcommands: run, demo, report, enroll, doctor, hub-emulator.

Each registers a subparser; the handler imports the service, hub or hardware
code only when the command runs, so ``preftable replay`` stays light.
"""

from __future__ import annotations

import argparse
import json
import logging
import signal
import sys
from pathlib import Path

from ..core.errors import PreftableError
from . import stop_signals

log = logging.getLogger("preftable")


# --- run ------------------------------------------------------------------------------

def cmd_run(args: argparse.Namespace) -> int:
    from ..core.deck import load_deck
    from . import backends
    from .service import TableService
    from .settings import load_settings, no_deck

    settings = load_settings(args.config)
    backends.preflight(settings, wait=args.wait)
    deck_file = settings.deck_file(args.deck)
    if deck_file is None and not backends.simulated(settings):      # every card would be an unknown tag
        raise no_deck(settings)
    deck = load_deck(deck_file)
    log_dir = Path(args.log_dir or settings.log_dir)

    def print_summary(summary: dict, path: Path) -> None:
        print_closed(summary, path, sys.stdout, settings.game.table.names)

    interrupted: list[int] = []
    service: TableService | None = None

    def on_term(signum, frame):
        # installed before the session opens: a SIGTERM while starting (systemd's stop, a test)
        # still flushes and exits 0 instead of killing the process half-way
        log.info("signal %d: flushing the game log and stopping", signum)
        interrupted.append(signum)
        if service is not None:
            service.stop()

    with stop_signals.handling(on_term), backends.open_pins(settings) as pins:
        gpio = backends.section_module("gpio")
        buttons = gpio.buttons(settings.section("gpio"), pins)
        service = TableService(settings, deck, log_dir, buttons=buttons, on_finished=print_summary)
        if interrupted:
            return 0
        service.take_lock()             # before --new closes anything: a refused start writes nothing
        if args.new:
            close_unfinished(log_dir, print_summary)
        session = service.open_session(new=args.new)
        ctx = backends.with_reader(backends.RunContext(
            settings, clock=service.clock, pins=pins, deck=service.tracker.deck, skip=service.replayed,
            session=session.folder.name, service=service))
        service.outputs = backends.build_outputs(ctx)
        from .analyst import Analyst        # each ended deal analysed in a child process
        service.outputs.append(Analyst(service.tracker.rules, service.tracker.players))
        if not (buttons is not None and "confirm" in settings.section("gpio").buttons):
            hint = keyboard_confirm(service)
            for out in service.outputs:
                if hasattr(out, "confirm_hint"):
                    out.confirm_hint = hint
        if interrupted:
            service.stop()                  # run() then flushes, closes and returns at once
        log.info("session %s (%s readers)", session.folder, settings.backend)
        if "web" in settings.present:
            announce_page(settings, log_dir, service)
        service.run(ctx.source)
    if signal.SIGINT in interrupted:
        sys.stderr.write(f"preftable: stopped (Ctrl-C); the game log is in {session.folder}, "
                         "`preftable run` resumes it\n")
    return 0


def print_closed(summary: dict, path: Path, out, names=None) -> None:
    """A closed pulka: FORMATS.md's summary JSON to a pipe or a file (scripts read it); on a
    terminal, the deals, the pulka and the settlement as a person reads them, and where the
    JSON is (``path``: the session's summary.json)."""
    if out.isatty():
        from ..store.gamelog import SessionLog
        from .textview import summary_text
        try:
            names = SessionLog(path.parent).game_config().table.names     # the names it was played with
        except PreftableError:
            pass
        out.write(f"the pulka of {path.parent.name} is closed:\n\n" + summary_text(summary, names or {})
                  + f"\nits summary JSON: {path}\n")
    else:
        out.write(json.dumps(summary, ensure_ascii=False) + "\n")
    out.flush()


def announce_page(settings, log_dir: Path, service) -> None:
    """``run`` with a ``[web]`` section: the page's address and PIN on standard output at start
    (no ``-v`` needed), a QR code of it on a terminal, and both on the table's display until
    the page itself says where it really listens."""
    from .web.join import display_rows, join_info, pin_for, qr_terminal

    config = settings.section("web")
    info = join_info(config, pin_for(config, log_dir))
    out = sys.stdout
    out.write("\n".join(info.lines()) + "\n")
    if out.isatty() and not info.local_only:
        out.write(qr_terminal(info.url))
    out.flush()
    service.set_notice("\n".join(display_rows(info)))
    for output in service.outputs:          # the run board keeps it under the box, between deals too
        if hasattr(output, "join_line"):
            output.join_line = f"phones: {info.url}  PIN {info.pin}"


def keyboard_confirm(service) -> str:
    """No confirm button wired: the Enter key of the terminal is one; return how to clear a mistake."""
    from ..core.events import button
    from .screen import EnterConfirms

    if sys.stdin is not None and sys.stdin.isatty():
        EnterConfirms(sys.stdin, lambda: service.sink(button(service.clock(), "confirm"))).start()
        return "fix it, then press Enter here to confirm (no confirm button wired)"
    return "fix it; no confirm button wired: set [gpio] buttons.confirm, or run on a terminal and press Enter"


def close_unfinished(log_dir: Path, on_finished) -> Path | None:
    """``run --new``: the newest unfinished session gets its summary.json (README "Game logs")."""
    from ..store.gamelog import SessionLog

    previous = SessionLog.newest_unfinished(log_dir)
    if previous is None:
        return None
    tracker, _ = previous.replay(previous.game_config(), previous.deck())
    summary = tracker.summary()
    path = previous.finish(summary)
    log.info("pulka closed: %s", path)
    on_finished(summary, path)
    return path


def add_run(sub) -> None:
    p = sub.add_parser("run", help="run the table (readers, tracker, LEDs, display, game log)")
    p.add_argument("--config", help="config file (TOML); a simulated 3-player table when omitted")
    p.add_argument("--deck", help="deck file (TOML) resolving tag UIDs to cards (default: [table] deck of the "
                                  "config); needed unless readers.backend is \"sim\"")
    p.add_argument("--log-dir", help="game log folder (default: [log] dir of the config, else ./logs)")
    p.add_argument("--new", action="store_true",
                   help="close the newest unfinished pulka (its summary.json) and start a new one")
    p.add_argument("--wait", action="store_true",
                   help="with a hub port that does not exist (yet), wait for it instead of stopping")
    p.set_defaults(func=cmd_run)


# --- report -----------------------------------------------------------------------------

def cmd_report(args: argparse.Namespace) -> int:
    from ..core.errors import LogError
    from ..store.analyses import AnalysisFile
    from ..store.gamelog import SessionLog
    from .report import write_report
    from .textview import analysis_lines_text, settlement_text

    folder = Path(args.session_dir)
    if not (folder / "events.jsonl").is_file():
        raise LogError(f"{folder}: not a session folder (no events.jsonl)")
    session = SessionLog(folder)
    game = session.game_config()
    tracker, _ = session.replay(game)
    summary = tracker.report_summary()
    out_dir = Path(args.output) if args.output else folder
    analysis = AnalysisFile(folder).lines()       # each deal's line, when the table analysed them
    paths = write_report(summary, out_dir, names=dict(game.table.names), rules=game.rules, analysis=analysis)
    sys.stdout.write(settlement_text(summary["settlement"], game.table.names))
    sys.stdout.write(analysis_lines_text(analysis))
    for kind, path in paths.items():
        sys.stdout.write(f"{kind}: {path}\n")
    return 0


def add_report(sub) -> None:
    p = sub.add_parser("report", help="draw a session's pulka as SVG and HTML, with the settlement")
    p.add_argument("session_dir", help="a session folder of the game log")
    p.add_argument("-o", "--output", help="folder for pulka.svg and pulka.html (default: the session folder)")
    p.set_defaults(func=cmd_report)


# --- hub-emulator ------------------------------------------------------------------------

def add_hub_emulator(sub) -> None:
    from .hub_emulator_cli import add_hub_emulator as add
    add(sub)


def cmd_demo(args: argparse.Namespace) -> int:
    from .demo import cmd_demo as run
    return run(args)


def add_demo(sub) -> None:
    from .options import DEFAULT_SPEED, MAX_SPEED, deal_count, demo_speed, web_address
    p = sub.add_parser("demo", help="the whole table simulated: emulated hub, simulated players, live view")
    p.add_argument("--deals", type=deal_count, default=3, help="deals to play, at least 1 (default 3)")
    p.add_argument("--speed", type=demo_speed, default=DEFAULT_SPEED,
                   help=f"times the pace of real players (a card every ~0.5 s), above 0 and at most "
                        f"{MAX_SPEED:g}: real readers need 80 ms between cards (default {DEFAULT_SPEED:g})")
    p.add_argument("--seed", type=int, default=2026, help="random seed of the simulated players (default 2026)")
    p.add_argument("--players", type=int, choices=(3, 4), default=3, help="players at the table (default 3)")
    p.add_argument("--config", help="take [table] and [rules] from this config file")
    p.add_argument("--bidding", action="store_true",
                   help="whole games: the players bid with their tokens, play contracts, misères and raspasovkas")
    p.add_argument("--entry", choices=("tokens", "page"), default=None,
                   help="how the players enter their calls: as a group with a phone does (the default "
                        "without --bidding) -- the auction's result in one line, whists and claims from "
                        "the page; or bidding tokens on their readers (the default with --bidding)")
    p.add_argument("--log-dir", default="logs", help="game log folder (default ./logs)")
    p.add_argument("--web", nargs="?", type=web_address, const="127.0.0.1:8080", metavar="[HOST:]PORT",
                   help="serve the live table page while it plays: PORT on 127.0.0.1, or HOST:PORT "
                        "(0.0.0.0:8080 for the phones on the LAN); default 127.0.0.1:8080")
    p.set_defaults(func=cmd_demo)


def add_enroll(sub) -> None:
    from .enroll import add_enroll as add
    add(sub)


def add_doctor(sub) -> None:
    from .doctor import add_doctor as add
    add(sub)


def add_club(sub) -> None:
    from .club import add_club as add
    add(sub)


# subcommand -> the function adding its parser (in the order ``preftable --help`` lists them)
REGISTER: dict = {"run": add_run, "demo": add_demo, "enroll": add_enroll, "report": add_report,
                  "doctor": add_doctor, "hub-emulator": add_hub_emulator, "club": add_club}
