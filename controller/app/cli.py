"""The ``preftable`` command line.

Every bad input ends in one line on standard error and exit status 2, never a
traceback.  Subcommands that need the service, the hub or the hardware import
them only when called.
"""

from __future__ import annotations

import argparse
import json
import logging
import re
import sys
from pathlib import Path
from typing import Callable, Sequence

from .. import __version__
from ..core.config import CONVENTIONS, load_game_config
from ..core.errors import PreftableError
from .textview import plural

log = logging.getLogger("preftable")

EXIT_OK, EXIT_FAIL, EXIT_USAGE = 0, 1, 2


def _print_json(obj: object) -> None:
    sys.stdout.write(json.dumps(obj, ensure_ascii=False, indent=2) + "\n")


# --- replay -----------------------------------------------------------------------

#: a quoted value in a message is cut to this many characters (a 50 MB bad line is not echoed whole)
QUOTE_LIMIT = 80
_LONG_QUOTE = re.compile(r"(['\"])([^'\"\n]{%d})[^'\"\n]+\1" % QUOTE_LIMIT)
#: lines reported one by one; the rest only in the summary
BAD_LINES_SHOWN = 20
#: this many unknown tags without a deck: the events came with a deck that was not given
UNKNOWN_HINT = 10


def clip(message: str) -> str:
    """``message`` with every quoted value longer than :data:`QUOTE_LIMIT` cut short."""
    message = _LONG_QUOTE.sub(lambda m: f"{m[1]}{m[2]}...{m[1]}", message)
    return message if len(message) <= 4 * QUOTE_LIMIT else message[:4 * QUOTE_LIMIT] + "..."


def _kind_of(message: str) -> str:
    """What an ignored line's message is about, for counting ("field 'zone'", "not valid JSON")."""
    match = re.match(r"(field '[^']*')", message)
    return match[1] if match else message.split(":")[0].split(",")[0][:QUOTE_LIMIT]


class ReplayTally:
    """What a replay threw away or flagged, by kind, with the first line of each.

    The skipped lines are reported once the file proves to hold table events (the first
    signal), so a file with none at all -- empty, or not table events -- is one line."""

    def __init__(self, name: str):
        self.name = name
        self.ignored: dict[str, list[int]] = {}       # kind -> [count, first line]
        self.mistakes: dict[str, list[int]] = {}
        self.shown = 0
        self.held: list[str] | None = []              # reports waiting for the first table event

    def _say(self, text: str) -> None:
        if self.held is not None:
            self.held.append(text)
        else:
            sys.stderr.write(text)

    def release(self) -> None:
        """Write the reports held back (the file has table events)."""
        held, self.held = self.held, None
        if held:
            sys.stderr.write("".join(held))

    def bad_line(self, number: int, message: str) -> None:
        entry = self.ignored.setdefault(_kind_of(message), [0, number])
        entry[0] += 1
        if self.shown < BAD_LINES_SHOWN:
            self.shown += 1
            self._say(f"{self.name}:{number}: skipped: {clip(message)}\n")

    def nothing(self) -> str:
        """The one line for a file without a single table event."""
        skipped = sum(n for n, _ in self.ignored.values())
        if not skipped:
            return f"{self.name}: no table events in it (empty)"
        first = min(first for _, first in self.ignored.values())
        kind = next(k for k, (_, f) in self.ignored.items() if f == first)
        return (f"{self.name}: no table events in it: none of its {plural(skipped, 'line')} is one "
                f"(line {first}: {kind}); FORMATS.md 'Table events' says what a line holds")

    def signals(self, number: int, signals) -> None:
        if self.held is not None:
            self.release()
        for signal in signals:
            if signal.kind == "mistake":
                kind = str(signal.data.get("type", "mistake")).replace("_", " ")
                self.mistakes.setdefault(kind, [0, number])[0] += 1

    @staticmethod
    def _by_kind(tally: dict[str, list[int]]) -> str:
        return ", ".join(f"{kind} {n} (first line {first})" for kind, (n, first) in tally.items())

    def summary(self, deals: int) -> str | None:
        """One line for stderr, or None when every ignored line was already reported and nothing was flagged."""
        skipped = sum(n for n, _ in self.ignored.values())
        flagged = sum(n for n, _ in self.mistakes.values())
        if not flagged and skipped <= self.shown:
            return None
        parts = [f"{self.name}: replayed {plural(deals, 'deal')}"]
        if skipped:
            parts.append(f"{plural(skipped, 'line')} ignored: {self._by_kind(self.ignored)}")
        if flagged:
            parts.append(f"{plural(flagged, 'mistake')}: {self._by_kind(self.mistakes)}")
        return "; ".join(parts)


def session_files(events: str, config: str | None, deck: str | None) -> tuple[str | None, str | None, str | None]:
    """The config and deck to replay with, and a note saying where they came from.

    An events file inside a session folder (FORMATS.md "Game logs") brings the
    session's own ``config.toml`` and ``deck.toml``; an option given wins.
    """
    from ..store.gamelog import CONFIG, DECK, EVENTS

    if events == "-":
        return config, deck, None
    folder = Path(events).parent
    found = {name: folder / name for name in (CONFIG, DECK) if (folder / name).is_file()}
    if not found:
        return config, deck, None
    if Path(events).name != EVENTS:
        # only a session's events.jsonl takes its folder's files: a deck.toml that merely lies
        # beside another file is not taken silently, it is named with the option that takes it
        unused = [f"--{name.split('.')[0]} {found[name]}" for name in (CONFIG, DECK)
                  if name in found and (config if name == CONFIG else deck) is None]
        if not unused:
            return config, deck, None
        return config, deck, (f"not a session's {EVENTS}: the files beside it are not used "
                              f"(pass {' '.join(unused)} to use them)")
    own, given = [], []
    if CONFIG in found:
        if config is None:
            config = str(found[CONFIG])
            own.append(CONFIG)
        else:
            given.append(f"--config {config}")
    if DECK in found:
        if deck is None:
            deck = str(found[DECK])
            own.append(DECK)
        else:
            given.append(f"--deck {deck}")
    said = [f"the session's own {' and '.join(own)}"] if own else []
    said += [f"{option} (given, not the session's)" for option in given]
    return config, deck, "replaying with " + " and ".join(said)


def _replayed(events: str, config_path: str | None, deck_path: str | None, verbose: int):
    """(tracker, config) of a replay of ``events`` with the session's own config and deck
    unless given, reporting on stderr what was ignored or flagged."""
    from ..core.deck import load_deck
    from ..store.replay import replay_file

    from ..store.gamelog import CONFIG, EVENTS

    config_path, deck_path, note = session_files(events, config_path, deck_path)
    # the session's own config.toml (taken from its folder, or named with --config, as a club
    # mirror's are) reads as a session's: without bidding, the first edition's false
    own = events != "-" and Path(events).name == EVENTS and config_path is not None and \
        Path(config_path).resolve() == (Path(events).parent / CONFIG).resolve()
    config = load_game_config(config_path, session=own)
    deck = load_deck(deck_path)
    name = "<stdin>" if events == "-" else events
    if note:
        sys.stderr.write(f"{name}: {note}\n")
    tally = ReplayTally(name)

    progress = None
    if (sys.stderr.isatty() and events != "-" and Path(events).is_file()
            and Path(events).stat().st_size > 1_000_000):
        def progress(done: int, deals: int) -> None:
            sys.stderr.write(f"\rreplaying: {done:,} events, {deals:,} deals")
            sys.stderr.flush()

    tracker = replay_file(events, config, deck, on_error=tally.bad_line, progress=progress,
                          on_signals=tally.signals)
    if progress is not None:
        sys.stderr.write("\n")
    if not tracker.events_seen:         # nothing to replay: not an all-zero pulka with exit 0
        raise PreftableError(tally.nothing())
    tally.release()
    line = tally.summary(len(tracker.records) + (tracker.deal is not None))
    unknown = tally.mistakes.get("unknown tag", [0])[0]
    if deck is None and unknown >= UNKNOWN_HINT:
        line = (line or name) + (f"; {plural(unknown, 'tag')} not in any deck: replay with the deck the "
                                 "table used, --deck deck.toml (a session folder's own deck.toml is taken "
                                 "when its events.jsonl is replayed)")
    if line or verbose:
        sys.stderr.write((line or f"{name}: nothing ignored, no mistakes") + "\n")
    return tracker, config


def cmd_replay(args: argparse.Namespace) -> int:
    from .textview import summary_text

    tracker, config = _replayed(args.events, args.config, args.deck, args.verbose)
    summary = tracker.summary()
    results = None
    if args.analyse:
        from .analyse import add_replay_analyses, analyse_tracker, events_and_folder

        results = analyse_tracker(tracker, config, events_and_folder(args.events)[1])
        add_replay_analyses(summary, results)
    if args.json:
        _print_json(summary)
    else:
        sys.stdout.write(summary_text(summary, config.table.names))
        if results is not None:
            from .analyse import analysis_text
            sys.stdout.write(analysis_text(results, summary))
    return EXIT_OK


# --- analyse ----------------------------------------------------------------------

def cmd_analyse(args: argparse.Namespace) -> int:
    from .analyse import analyse_tracker, analysis_text, events_and_folder

    events, folder = events_and_folder(args.target)
    tracker, config = _replayed(events, args.config, args.deck, verbose=False)
    results = analyse_tracker(tracker, config, folder)
    if args.json:
        _print_json({"deals": [r.to_dict() for r in results]})
    else:
        sys.stdout.write(analysis_text(results, tracker.summary()))
    return EXIT_OK


# --- settle -----------------------------------------------------------------------

def cmd_settle(args: argparse.Namespace) -> int:
    from ..core.scoring import WHOLE, rounded, settle_whole
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
    # a session settled in whole whists says so in its settlement object (docs/RULES-variants.md)
    settlement = doc.get("settlement")
    whole = settlement.get("whole") if isinstance(settlement, dict) else None
    if whole is not None and whole not in WHOLE.values():
        raise SystemExit(_fail(f"{path}: settlement.whole must be one of {', '.join(WHOLE.values())}, "
                               f"got {whole!r}"))
    if pulka is doc:
        pulka = {k: v for k, v in doc.items() if k != "settlement"}
    if not pulka:
        raise SystemExit(_fail(f"{path}: the pulka names no player"))
    try:
        balance = rounded(settle_whole(pulka, convention, whole))
    except ValueError as exc:
        raise SystemExit(_fail(f"{path}: {clip(str(exc))}"))
    except OverflowError:
        raise SystemExit(_fail(f"{path}: the values are too large to settle (balances beyond 1e308)"))
    result = {"convention": convention, **({"whole": whole} if whole else {}), "balance": balance}
    if args.json:
        sys.stdout.write(json.dumps(result, ensure_ascii=False) + "\n")
    else:
        sys.stdout.write(settlement_text(result))
    return EXIT_OK


# --- diagram ----------------------------------------------------------------------

def cmd_diagram(args: argparse.Namespace) -> int:
    from .diagram import write_diagram

    output = Path(args.output) if args.output else None
    try:
        path = write_diagram(output)
    except OSError as exc:
        raise SystemExit(_fail(f"{output}: cannot write: {exc.strerror or exc}"))
    if path is None:
        return EXIT_OK
    sys.stderr.write(f"wrote {path}\n")
    return EXIT_OK


# --- parser -----------------------------------------------------------------------

def _fail(message: str) -> int:
    sys.stderr.write(f"preftable: error: {message}\n")
    return EXIT_USAGE


#: each subcommand's description, examples and exit statuses, shown by ``preftable COMMAND --help``
HELP: dict[str, tuple[str, list[str], list[str]]] = {
    "run": ("Run the table: readers -> deal tracker -> LEDs, display and game log. Resumes the newest "
            "unfinished session of the log folder unless --new is given. With a hub port that does not "
            "exist it stops at once, unless --wait is given.",
            ["preftable run --config /etc/preftable/config.toml --deck deck.toml",
             "preftable run --new            # a simulated 3-player table, a new pulka"],
            ["0  stopped by SIGTERM or Ctrl-C, the game log flushed",
             "2  a bad config, deck, log folder or serial port (one line on stderr)"]),
    "demo": ("The whole table simulated on any Linux machine: an emulated hub on a pty, simulated "
             "players, the real host link, tracker and game log, and a live view. Ends with the pulka, "
             "the settlement and the files written.",
             ["preftable demo", "preftable demo --deals 6 --speed 2 --seed 7 --players 4"],
             ["0  all deals played", "1  the emulated hub did not answer or the demo did not finish",
              "2  a bad option or config", "130  interrupted (Ctrl-C)"]),
    "replay": ("Replay table events (a session's events.jsonl, or - for standard input) through the deal "
               "tracker; print the deals, the pulka and the settlement. Inside a session folder the "
               "session's own config.toml and deck.toml are used unless --config/--deck is given. "
               "Lines that are not valid events are reported with their line numbers and skipped; "
               "a summary on stderr counts what was ignored and the mistakes, by kind.",
               ["preftable replay logs/2026-12-01T09-00-00Z/events.jsonl",
                "preftable replay game.jsonl --config config.toml --deck deck.toml --json"],
               ["0  replayed (even with skipped lines)",
                "2  no such events, config or deck file, an invalid config or deck, or a file without "
                "a single table event (empty, or not table events)"]),
    "analyse": ("Double-dummy analysis of every deal of a game log (docs/analysis.md): what best play "
                "would have made (a contract or misère: the declarer's tricks; a raspasovka: the tricks each "
                "seat can be sure of) and the tricks each card cost its side. A deal ended by a claim, "
                "stopped, abandoned, unplayed or with a revoke is not analysed, with the reason. Inside a "
                "session folder its own config.toml and deck.toml are used unless --config/--deck is given, "
                "and its analysis.jsonl for the deals it holds.",
                ["preftable analyse logs/2026-12-01T09-00-00Z",
                 "preftable analyse game.jsonl --config config.toml --json"],
                ["0  analysed (deals that cannot be analysed say why)",
                 "2  no such events file or session folder, or an invalid config or deck"]),
    "settle": ("Settle a pulka into balances in whists (RULES.md): a summary JSON as replay --json or a "
               "session's summary.json print it, or just its pulka object.",
               ["preftable settle logs/2026-12-01T09-00-00Z/summary.json",
                "preftable settle pulka.json --convention leningrad --json"],
               ["0  settled", "2  no such file, not JSON, or not a pulka"]),
    "report": ("Draw a session's pulka as players draw it on paper, as pulka.svg and pulka.html, and "
               "print the settlement.",
               ["preftable report logs/2026-12-01T09-00-00Z", "preftable report SESSION -o /tmp/out"],
               ["0  written", "2  not a session folder, or the output folder cannot be written"]),
    "enroll": ("Guided enrolment of a new deck of tagged cards: lay each card named on any reader, "
               "lift it, go on. An interrupted enrolment resumes with the first missing card. The "
               "readers must be clear when it starts.",
               ["preftable enroll --config /etc/preftable/config.toml",
                "preftable enroll --deck deck.toml --config /etc/preftable/config.toml"],
               ["0  the deck is complete (or stopped, the cards so far saved)",
                "2  a bad config, deck file or zone", "130  interrupted (Ctrl-C), the cards so far saved"]),
    "doctor": ("Check the config, the deck, the serial ports, SPI, GPIO and permissions, one line per "
               "finding (ok, WARN, FAIL), each problem with the command that fixes it.",
               ["preftable doctor --config /etc/preftable/config.toml",
                "preftable doctor --live --config /etc/preftable/config.toml",
                "preftable doctor --wiring --config /etc/preftable/config.toml --svg wiring.svg"],
               ["0  nothing failed (warnings allowed)", "1  at least one FAIL",
                "2  bad options, or --live/enroll while the service runs (sudo systemctl stop preftable)"]),
    "club": ("The club board: follows every table that publishes to the MQTT broker (their state and "
             "every game-log line), shows them on the terminal (and with --web on a page at /club) and "
             "keeps a mirror of every session under DIR/<table>/<session>/, which `preftable replay` "
             "turns into the table's own summary.",
             ["preftable club --broker mqtt://club-server:1883 --dir club",
              "preftable club --broker mqtt://localhost:1883 --dir club --web 0.0.0.0:8090",
              "preftable club --broker mqtts://club-server:8883 --ca-file ca.crt --username club "
              "--password-file club.pw"],
             ["0  stopped (Ctrl-C or SIGTERM), saying where the mirrors are",
              "2  a bad option, or the broker cannot be reached or refuses the board at start",
              "130  interrupted (Ctrl-C) before the broker answered"]),
    "hub-emulator": ("An emulated table hub speaking the serial protocol (PROTOCOL.md) on a pty or a TCP "
                     "port. Prints the path (or socket:// URL) on the first line of stdout; reads fault "
                     "commands (place, remove, drop, corrupt, garbage, reboot, silent, fail, heal, "
                     "unplug, replug, state, quit) on stdin. --script and --simulate start playing once "
                     "the host has said HELLO.",
                     ["preftable hub-emulator --simulate 2 --seed 1",
                      "preftable hub-emulator --tcp 7000 --script game.jsonl --deck deck.toml"],
                     ["0  stopped (quit, Ctrl-C or SIGTERM)", "2  a bad option, script or deck, "
                      "or the port cannot be served"]),
    "diagram": ("Write the deal tracker's state diagram (transitions' own graph support): with graphviz "
                "installed as .png/.svg/.pdf, otherwise as Mermaid text (.mmd or standard output).",
                ["preftable diagram > tracker.mmd", "preftable diagram -o tracker.svg"],
                ["0  written", "2  the file cannot be written, or a picture was asked without graphviz"]),
}


def _describe(parser: argparse.ArgumentParser, name: str) -> None:
    description, examples, exits = HELP[name]
    parser.description = description
    parser.epilog = ("examples:\n" + "".join(f"  {e}\n" for e in examples)
                     + "\nexit status:\n" + "".join(f"  {e}\n" for e in exits))
    parser.formatter_class = argparse.RawDescriptionHelpFormatter


class OneLineParser(argparse.ArgumentParser):
    """argparse, with a usage error in one line (the CLI's rule) that points to --help."""

    def error(self, message: str):
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The whole parser; with ``command`` (one of the service's subcommands), only that
    subcommand, so ``run`` does not import what enroll, doctor or club need to declare
    their options (a restart is timed from process start)."""
    parser = OneLineParser(
        prog="preftable", description="Smart card table for Preferans: tracks the whole game (auction, contracts, whisting, misère, raspasovka) and the pulka.",
        epilog="Every bad input gives one line on stderr and exit status 2. "
               "`preftable COMMAND --help` shows a command's options, examples and exit statuses.")
    parser.add_argument("--version", action="version", version=f"preftable {__version__}",
                        help="print the version and exit")
    parser.add_argument("-v", "--verbose", action="count", default=0,
                        help="more log output (-v: info, -vv: debug)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=OneLineParser,
                                help="what to do (each has --help)")
    sub.required = True

    if command is None:
        _add_own_commands(sub)
    extras = _extra_commands()
    for name, extra in extras.items():
        if command is None or command == name:
            extra(sub)
    for name, subparser in sub.choices.items():
        _describe(subparser, name)
    return parser


def _add_own_commands(sub) -> None:
    """replay, settle and diagram: the subcommands of this module."""
    p = sub.add_parser("replay", help="replay table events and print the deals, pulka and settlement")
    p.add_argument("events", help="table events (JSON Lines), e.g. a session's events.jsonl; - reads stdin")
    p.add_argument("--config", help="config file (TOML); default: the session's config.toml, else default rules")
    p.add_argument("--deck", help="deck file (TOML) resolving tag UIDs to cards; default: the session's deck.toml")
    p.add_argument("--json", action="store_true", help="print the summary JSON (FORMATS.md) instead of tables")
    p.add_argument("--analyse", action="store_true",
                   help='also the double-dummy analysis of each deal (docs/analysis.md), under "analysis"')
    p.set_defaults(func=cmd_replay)

    p = sub.add_parser("analyse", help="double-dummy analysis of every played deal: best play, each card's cost")
    p.add_argument("target", metavar="EVENTS|SESSION_DIR",
                   help="table events (JSON Lines; - reads stdin) or a session folder of the game log")
    p.add_argument("--config", help="config file (TOML); default: the session's config.toml, else default rules")
    p.add_argument("--deck", help="deck file (TOML) resolving tag UIDs to cards; default: the session's deck.toml")
    p.add_argument("--json", action="store_true",
                   help='print {"deals": [{"number", "kind", "analysed", "reason", "dd", "cards"}]}')
    p.set_defaults(func=cmd_analyse)

    p = sub.add_parser("settle", help="settle a pulka into balances")
    p.add_argument("file", help="a summary JSON, or just its pulka object")
    p.add_argument("--convention", choices=CONVENTIONS,
                   help="settlement convention (default: the summary's own, else sochi)")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=cmd_settle)

    p = sub.add_parser("diagram", help="write the deal tracker's state diagram")
    p.add_argument("-o", "--output", help="output file (.png/.svg/.pdf need graphviz; else Mermaid .mmd); "
                                          "standard output when omitted")
    p.set_defaults(func=cmd_diagram)


def _extra_commands() -> dict[str, Callable[[argparse._SubParsersAction], None]]:
    """Subcommands living outside this module (service, hub emulator), by name."""
    from . import commands
    return commands.REGISTER


def _command_of(argv: Sequence[str]) -> str | None:
    """The service subcommand ``argv`` names, if its first word after the global options
    is one (else None: help, a typo or a built-in command get the whole parser)."""
    for arg in argv:
        if arg.startswith("-"):
            if arg in ("-h", "--help", "--version"):
                return None
            continue            # -v, -vv, --verbose
        return arg if arg in _extra_commands() else None
    return None


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(_command_of(argv))
    args = parser.parse_args(argv)
    level = logging.WARNING - 10 * min(args.verbose, 2)
    logging.basicConfig(level=level, format="%(levelname)s %(name)s: %(message)s")
    logging.getLogger("transitions").setLevel(logging.WARNING)
    try:
        return args.func(args)
    except PreftableError as exc:
        return _fail(clip(str(exc)))
    except KeyboardInterrupt:
        sys.stderr.write("preftable: interrupted\n")
        return 130
    except BrokenPipeError:
        return EXIT_OK
    except OSError as exc:
        # a file or device the command was pointed at (the commands name their own files when they can)
        where = f"{exc.filename}: " if exc.filename else ""
        return _fail(f"{where}{exc.strerror or exc}")


if __name__ == "__main__":
    sys.exit(main())
