"""``preftable hub-emulator``: the emulated table hub's command line, checked before it starts.

The emulator (:mod:`firmware_bridge.emulator`) serves a virtual hub speaking
PROTOCOL.md.  This module owns the user-facing part: the one option parser with
its help, every check of the options (so that a bad value ends in one line naming
it and exit status 2, the CLI's rule, *before* a pty, a temporary folder or a
socket exists), and what the hub plays: a script of table events, or players
simulated by :class:`~controller.app.sim.TableSimulator` under the table's own
rules (``--config``: its ``[table]`` and ``[rules]``, RULES.md; the dealer
passes, or stays after a raspasovka with ``same_dealer = true``, as the table
expects).  It then hands the events to the emulator's :func:`serve`.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..core.cards import zone_names
from ..core.config import GameConfig, Table
from ..core.errors import ConfigError
from .options import count, port_number, speed_factor

#: zones a reader can be given (seat1..seat4, prikup), or "" for an unused reader
KNOWN_ZONES = zone_names(4)
MAX_READERS = 16          # PROTOCOL.md's bound on ``readers``


def zone_list(text: str) -> list[str]:
    """``seat1,seat2,seat3,prikup``: each reader's zone, reader 0 first ("" leaves a reader unused)."""
    zones = [z.strip() for z in text.split(",")]
    bad = [z for z in zones if z and z not in KNOWN_ZONES]
    if bad:
        raise argparse.ArgumentTypeError(f"unknown zone {bad[0]!r}: zones are {', '.join(KNOWN_ZONES)}")
    named = [z for z in zones if z]
    if not named:
        raise argparse.ArgumentTypeError("names no zone")
    if len(set(named)) != len(named):
        raise argparse.ArgumentTypeError(f"a zone given twice: {text!r}")
    return zones


def add_hub_emulator(sub) -> None:
    """Register ``preftable hub-emulator`` on the CLI's subparsers."""
    p = sub.add_parser("hub-emulator", help="an emulated table hub on a pty or a TCP port, for development")
    where = p.add_mutually_exclusive_group()
    where.add_argument("--pty", action="store_true",
                       help="serve on a pty (the default); prints its path, and a stable symlink on stderr")
    where.add_argument("--tcp", type=port_number, metavar="PORT",
                       help="serve on TCP PORT (0: any free port); the host opens socket://127.0.0.1:PORT")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on with --tcp (default 127.0.0.1)")
    p.add_argument("--readers", type=count(1), default=4,
                   help=f"number of readers (default 4, at most {MAX_READERS})")
    p.add_argument("--script", metavar="EVENTS.jsonl",
                   help="table events to play on the readers, once the host has said HELLO")
    p.add_argument("--zones", type=zone_list, default=None,
                   help="zone of each reader, reader 0 first (default seat1,seat2,seat3,prikup)")
    p.add_argument("--deck", metavar="DECK", help="deck file (all 32 cards) giving the UIDs of 'card' events")
    p.add_argument("--speed", type=speed_factor, default=1.0,
                   help="play the script (or --simulate) this many times faster (default 1)")
    p.add_argument("--simulate", type=count(0), metavar="DEALS", default=0,
                   help="instead of a script, simulated players play DEALS raspasovka deals by the "
                        "table's rules (--config)")
    p.add_argument("--config", metavar="TOML",
                   help="the table's config: --simulate plays its [table] and [rules] (default: the "
                        "default rules, --players players)")
    p.add_argument("--players", type=int, choices=(3, 4), default=None,
                   help="players for --simulate without --config (default 3; the zones become "
                        "seat1..seatN,prikup)")
    p.add_argument("--seed", type=int, help="random seed for --simulate (default: a new game each time)")
    p.add_argument("--no-edge-ms", action="store_true",
                   help="emulate a hub whose STATE carries no @edge_ms (the host must guess orders)")
    p.set_defaults(func=cmd_hub_emulator)


def simulated_game(args: argparse.Namespace) -> GameConfig:
    """The rules ``--simulate`` plays: the table's config, else the defaults for ``--players``."""
    if args.config is None:
        return GameConfig(table=Table(players=args.players or 3))
    from .settings import load_settings
    game = load_settings(args.config).game
    if args.players is not None and args.players != game.table.players:
        raise ConfigError(f"--players {args.players}: {args.config} has table.players = "
                          f"{game.table.players}", "players")
    return game


def simulated_events(game: GameConfig, deals: int, seed: int | None, deck=None) -> list:
    """The table events of ``deals`` raspasovka deals played by simulated players, by ``game``'s rules."""
    from .sim import TableSimulator
    return list(TableSimulator(game, seed=seed, deck=deck).deals(deals))


def cmd_hub_emulator(args: argparse.Namespace) -> int:
    from ..core.deck import load_deck
    from ..core.errors import EventError
    from ..core.events import read_events

    if args.simulate and args.script:
        raise ConfigError("--simulate and --script exclude each other", "simulate")
    if args.simulate and args.zones is not None:
        raise ConfigError("--zones: with --simulate the zones are seat1..seatN,prikup (see --players)", "zones")
    if not args.simulate and (args.config is not None or args.players is not None):
        raise ConfigError("--config and --players are for --simulate", "config" if args.config else "players")
    if args.readers > MAX_READERS:
        raise ConfigError(f"--readers {args.readers}: a hub has at most {MAX_READERS} readers", "readers")
    if args.script is not None:
        script = Path(args.script)
        if not script.is_file():
            raise ConfigError(f"--script {script}: no such events file"
                              if not script.exists() else f"--script {script}: not a file", "script")
    deck = load_deck(args.deck) if args.deck is not None else None   # a DeckError names the file
    zones = [z for z in (args.zones or ["seat1", "seat2", "seat3", "prikup"])]
    events: list = []
    what = "the simulation"
    if args.simulate:
        game = simulated_game(args)
        zones = list(zone_names(game.table.players))
        events = simulated_events(game, args.simulate, args.seed, deck)
    elif args.script is not None:
        what = args.script
        try:
            with open(args.script, encoding="utf-8") as fh:
                events = list(read_events(fh, [z for z in zones if z], on_error=lambda n, msg: print(
                    f"hub-emulator: {args.script}:{n}: {msg}", file=sys.stderr)))
        except (OSError, EventError, OverflowError) as exc:   # OverflowError: a 400-digit t
            raise ConfigError(f"cannot read script {args.script}: {exc}", "script") from None
    readers = max(args.readers, len(zones)) if events else args.readers
    if readers > MAX_READERS:
        raise ConfigError(f"{len(zones)} zones: a hub has at most {MAX_READERS} readers", "zones")
    cards = {str(card): uid.upper() for uid, card in deck.cards.items()} if deck is not None else None
    from firmware_bridge.emulator_serve import serve
    return serve(events, zones, cards, readers=readers, speed=args.speed, tcp=args.tcp, host=args.host,
                 edge_ms=not args.no_edge_ms, what=what)


__all__ = ["add_hub_emulator", "cmd_hub_emulator", "simulated_events", "simulated_game"]
