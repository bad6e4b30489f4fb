"""``preftable hub-emulator``: the emulated table hub's command line, checked before it starts.

The emulator (:mod:`firmware_bridge.emulator`) serves a virtual hub speaking
PROTOCOL.md.  This module owns the user-facing part: the option parser with
its help, and every check of the options, so that a bad value ends in one line
naming it and exit status 2 (the CLI's rule) *before* a pty, a temporary
folder or a socket exists.  It then hands the checked options to the
emulator's own entry point.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from ..core.cards import zone_names
from ..core.errors import ConfigError
from .options import count, port_number, speed_factor

#: zones a reader can be given (seat1..seat4, prikup), or "" for an unused reader
KNOWN_ZONES = zone_names(4)


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
    p.add_argument("--readers", type=count(1), default=4, help="number of readers (default 4)")
    p.add_argument("--script", metavar="EVENTS.jsonl",
                   help="table events to play on the readers, once the host has said HELLO")
    p.add_argument("--zones", type=zone_list, default=None,
                   help="zone of each reader, reader 0 first (default seat1,seat2,seat3,prikup)")
    p.add_argument("--deck", metavar="DECK", help="deck file (all 32 cards) giving the UIDs of 'card' events")
    p.add_argument("--speed", type=speed_factor, default=1.0,
                   help="play the script (or --simulate) this many times faster (default 1)")
    p.add_argument("--simulate", type=count(0), metavar="DEALS", default=0,
                   help="instead of a script, simulated players play DEALS raspasovka deals")
    p.add_argument("--players", type=int, choices=(3, 4), default=3,
                   help="players for --simulate (default 3; the zones become seat1..seatN,prikup)")
    p.add_argument("--seed", type=int, help="random seed for --simulate (default: a new game each time)")
    p.set_defaults(func=cmd_hub_emulator)


def emulator_argv(args: argparse.Namespace) -> list[str]:
    """The checked options as the emulator's own entry point takes them."""
    if args.simulate and args.script:
        raise ConfigError("--simulate and --script exclude each other", "simulate")
    if args.script is not None:
        script = Path(args.script)
        if not script.is_file():
            raise ConfigError(f"--script {script}: no such events file"
                              if not script.exists() else f"--script {script}: not a file", "script")
    if args.deck is not None:
        from ..core.deck import load_deck
        load_deck(args.deck)            # a DeckError names the file and what is wrong (e.g. 31 cards)
    argv = ["--readers", str(args.readers), "--speed", repr(args.speed), "--players", str(args.players)]
    if args.tcp is not None:
        argv += ["--tcp", str(args.tcp), "--host", args.host]
    if args.zones is not None:
        if args.simulate:
            raise ConfigError("--zones: with --simulate the zones are seat1..seatN,prikup (see --players)",
                              "zones")
        argv += ["--zones", ",".join(args.zones)]
    for option in ("script", "deck", "seed"):
        value = getattr(args, option)
        if value is not None:
            argv += [f"--{option}", str(value)]
    if args.simulate:
        argv += ["--simulate", str(args.simulate)]
    return argv


def cmd_hub_emulator(args: argparse.Namespace) -> int:
    argv = emulator_argv(args)
    from firmware_bridge.emulator import cli_main
    return cli_main(argv)


__all__ = ["add_hub_emulator", "cmd_hub_emulator", "emulator_argv"]
