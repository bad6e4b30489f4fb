"""The ``preftable`` command line.

Every bad input ends in one line on standard error and exit status 2, never a
traceback.  Subcommands that need the service, the hub or the hardware import
them only when called.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from pathlib import Path
from typing import Callable, Sequence

from .. import __version__
from ..core.config import CONVENTIONS, load_game_config
from ..core.errors import PreftableError

log = logging.getLogger("preftable")

EXIT_OK, EXIT_FAIL, EXIT_USAGE = 0, 1, 2


def _print_json(obj: object) -> None:
    sys.stdout.write(json.dumps(obj, ensure_ascii=False, indent=2) + "\n")


# --- replay -----------------------------------------------------------------------

def cmd_replay(args: argparse.Namespace) -> int:
    from ..core.deck import load_deck
    from ..store.replay import replay_file
    from .textview import summary_text

    config = load_game_config(args.config)
    deck = load_deck(args.deck)

    def bad_line(number: int, message: str) -> None:
        sys.stderr.write(f"{args.events}:{number}: skipped: {message}\n")

    progress = None
    if sys.stderr.isatty() and Path(args.events).is_file() and Path(args.events).stat().st_size > 1_000_000:
        def progress(events: int, deals: int) -> None:
            sys.stderr.write(f"\rreplaying: {events:,} events, {deals:,} deals")
            sys.stderr.flush()

    tracker = replay_file(args.events, config, deck, on_error=bad_line, progress=progress)
    if progress is not None:
        sys.stderr.write("\n")
    summary = tracker.summary()
    if args.json:
        _print_json(summary)
    else:
        sys.stdout.write(summary_text(summary, config.table.names))
    return EXIT_OK


# --- settle -----------------------------------------------------------------------

def cmd_settle(args: argparse.Namespace) -> int:
    from ..core.scoring import rounded, settle
    from .textview import settlement_text

    path = Path(args.file)
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise SystemExit(_fail(f"{path}: no such file"))
    except (OSError, UnicodeDecodeError) as exc:
        raise SystemExit(_fail(f"{path}: cannot read: {getattr(exc, 'strerror', None) or exc}"))
    except ValueError as exc:
        raise SystemExit(_fail(f"{path}: not valid JSON: {exc}"))
    if not isinstance(doc, dict):
        raise SystemExit(_fail(f"{path}: must hold a summary JSON object or a pulka object"))
    pulka = doc["pulka"] if isinstance(doc.get("pulka"), dict) else doc
    convention = args.convention
    if convention is None:
        settlement = doc.get("settlement")
        convention = settlement.get("convention") if isinstance(settlement, dict) else None
        if convention is None:
            convention = "sochi"
        elif convention not in CONVENTIONS:
            raise SystemExit(_fail(f"{path}: settlement.convention must be one of "
                                   f"{', '.join(CONVENTIONS)}, got {convention!r}"))
    if pulka is doc:
        pulka = {k: v for k, v in doc.items() if k != "settlement"}
    try:
        balance = rounded(settle(pulka, convention))
    except ValueError as exc:
        raise SystemExit(_fail(f"{path}: {exc}"))
    result = {"convention": convention, "balance": balance}
    if args.json:
        sys.stdout.write(json.dumps(result, ensure_ascii=False) + "\n")
    else:
        sys.stdout.write(settlement_text(result))
    return EXIT_OK


# --- diagram ----------------------------------------------------------------------

def cmd_diagram(args: argparse.Namespace) -> int:
    from .diagram import write_diagram

    path = write_diagram(Path(args.output) if args.output else None)
    if path is None:
        return EXIT_OK
    sys.stderr.write(f"wrote {path}\n")
    return EXIT_OK


# --- parser -----------------------------------------------------------------------

def _fail(message: str) -> int:
    sys.stderr.write(f"preftable: error: {message}\n")
    return EXIT_USAGE


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="preftable", description="Smart card table for Preferans: tracks raspasovka deals.")
    parser.add_argument("--version", action="version", version=f"preftable {__version__}")
    parser.add_argument("-v", "--verbose", action="count", default=0, help="more log output")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

    p = sub.add_parser("replay", help="replay table events and print the deals, pulka and settlement")
    p.add_argument("events", help="table events (JSON Lines), e.g. a session's events.jsonl")
    p.add_argument("--config", help="config file (TOML); default rules when omitted")
    p.add_argument("--deck", help="deck file (TOML) resolving tag UIDs to cards")
    p.add_argument("--json", action="store_true", help="print the summary JSON")
    p.set_defaults(func=cmd_replay)

    p = sub.add_parser("settle", help="settle a pulka into balances")
    p.add_argument("file", help="a summary JSON, or just its pulka object")
    p.add_argument("--convention", choices=CONVENTIONS)
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=cmd_settle)

    p = sub.add_parser("diagram", help="write the deal tracker's state diagram")
    p.add_argument("-o", "--output", help="output file (.png/.svg with graphviz, else Mermaid .mmd); "
                                          "standard output when omitted")
    p.set_defaults(func=cmd_diagram)

    for extra in _extra_commands():
        extra(sub)
    return parser


def _extra_commands() -> list[Callable[[argparse._SubParsersAction], None]]:
    """Subcommands living outside this module (service, hub emulator)."""
    from . import commands
    return commands.REGISTER


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["hub-emulator"]:
        # the emulator has its own option parser: hand it every argument as given
        logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
        from firmware_bridge.emulator import cli_main
        return cli_main(argv[1:])
    parser = build_parser()
    args = parser.parse_args(argv)
    level = logging.WARNING - 10 * min(args.verbose, 2)
    logging.basicConfig(level=level, format="%(levelname)s %(name)s: %(message)s")
    logging.getLogger("transitions").setLevel(logging.WARNING)
    try:
        return args.func(args)
    except PreftableError as exc:
        return _fail(str(exc))
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
