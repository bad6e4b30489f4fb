"""``preftable demo``: the whole table, simulated, on any Linux machine.

Simulated players lay legal cards (now and then a revoke, an out-of-turn card,
a flickering tag) on the readers of an emulated table hub, which speaks the
serial protocol on a pty.  The real host link reads it, the real tracker follows
the deals, a live terminal view shows the table, and a real game log is written.
At the end: the pulka, the settlement, and the paths of the files written.
"""

from __future__ import annotations

import argparse
import logging
import sys
import threading
import time
from pathlib import Path
from typing import TextIO

from ..core.config import GameConfig, Table, load_game_config
from ..core.errors import LinkError
from ..store.gamelog import CONFIG, DECK, EVENTS
from .outputs import HubOutputs
from .service import TableService
from .settings import Settings
from .sim import Noise, TableSimulator, make_deck
from .backends.display import DisplayConfig
from .backends.hub import HubConfig, HubSource
from .textview import summary_text
from ..core.cards import parse_card
from ..core.snapshot import TableSnapshot
from ..core.view import ERROR, TURN, WINNER

log = logging.getLogger(__name__)

_MARK = {TURN: "\u25b6", WINNER: "\u2605", ERROR: "!"}


class LiveView:
    """A live terminal panel: whose turn, the cards on the table, trick counts, pulka, progress.

    A bus subscriber: it renders each published snapshot on its own thread.
    Redrawn in place on a terminal; on a pipe or file, one line per finished deal.
    """

    name = "live view"
    inline = False

    def __init__(self, deals: int, stream: TextIO, names=None):
        self.deals = deals
        self.stream = stream
        self.names = names or {}
        self.tty = stream.isatty()
        self._height = 0
        self._reported = 0
        self._counted = 0            # ended deals whose cards are in _played
        self._played = 0
        self.last_mistake = ""

    def _label(self, zone: str) -> str:
        return self.names.get(zone, zone)

    def _cards_played(self, snap: TableSnapshot) -> int:
        """Cards laid in the session: counted once per ended deal, plus the deal in progress."""
        for d in snap.deals[self._counted:]:
            self._played += sum(len(t["cards"]) for t in d["tricks"])
        self._counted = len(snap.deals)
        deal = snap.deal
        current = sum(len(t["cards"]) for t in deal["tricks"]) + len(deal["current"]) if deal else 0
        return self._played + current

    def panel(self, snap: TableSnapshot) -> list[str]:
        done = len(snap.deals)
        deal = snap.deal
        number = deal["number"] if deal else done
        tricks = len(deal["tricks"]) if deal else 0
        frac = min(1.0, (done + (tricks / 10 if deal else 0)) / max(self.deals, 1))
        bar = "#" * int(frac * 30) + "." * (30 - int(frac * 30))
        lines = [f"preftable demo  [{bar}] {frac:4.0%}  deal {max(number, 1)}/{self.deals}  "
                 f"{self._cards_played(snap)} cards played"]
        seats = snap.seats
        if deal is not None:
            lines.append(f"dealer {self._label(deal['dealer'])}  price {deal['price']}  trick {tricks + 1}/10")
            on_table = "  ".join(f"{z}:{parse_card(c).pretty}" for z, c in deal["current"]) or "-"
            lines.append(f"on the table: {on_table}")
            last = snap.last_trick
            if last is not None:
                cards = "  ".join(f"{z}:{parse_card(c).pretty}" for z, c in last["cards"].items())
                lines.append(f"last trick:   {cards}  -> {last['winner'] or 'nobody'}")
            else:
                lines.append("last trick:   -")
            taken = deal["taken"]
            lines.append("tricks:       " + "  ".join(
                f"{_MARK.get(snap.leds.get(s, ''), ' ')}{self._label(s)} {taken[s]}" for s in seats))
        else:
            lines += ["between deals" + (": clear the table" if snap.leftover else ""), "", "", ""]
        p = snap.pulka
        lines.append("pulka:        " + "  ".join(
            f"{self._label(s)} P{float(p[s]['pulya']):g}/G{float(p[s]['gora']):g}" for s in seats))
        if snap.alerts:
            a = snap.alerts[-1]
            self.last_mistake = f"{a['type'].replace('_', ' ')} at {a.get('zone')}"
        lines.append(f"last mistake: {self.last_mistake or '-'}")
        return lines

    def receive(self, item) -> None:
        snap = item.snapshot
        if self.tty:
            lines = self.panel(snap)
            out = []
            if self._height:
                out.append(f"\x1b[{self._height}F")
            out += [f"\x1b[2K{line}\n" for line in lines]
            self.stream.write("".join(out))
            self.stream.flush()
            self._height = len(lines)
        elif len(snap.deals) > self._reported:
            for d in snap.deals[self._reported:]:
                taken = " ".join(f"{s}:{n}" for s, n in d["taken"].items())
                note = (" revoke " + d["revoke"]) if d["revoke"] else ""
                note += "" if d["complete"] else " (abandoned)"
                self.stream.write(f"deal {d['number']}/{self.deals}: dealer {d['dealer']} price {d['price']} "
                                  f"tricks {taken}{note}\n")
            self._reported = len(snap.deals)
            self.stream.flush()

    def tick(self, now: float) -> None:
        pass

    def close(self) -> None:
        pass


# Real readers need time: the hub reports a tag after two 20 ms polls, and tags laid within one
# poll cycle on different readers come out in reader order.  Players are never that fast; the
# simulated ones keep at least MIN_GAP_S (real time) between moves and gather the cards for longer
# than the hub's absent_ms, whatever --speed asks for.
MIN_GAP_S = 0.08


def demo_simulator(game: GameConfig, seed: int, deck, speed: float) -> TableSimulator:
    """The simulated players of the demo (sim times are divided by ``speed`` when played)."""
    return TableSimulator(game, seed=seed, deck=deck, noise=Noise.demo(), step_s=0.2,
                          gather_s=max(1.0, 0.6 * speed), min_gap_s=MIN_GAP_S * speed)


def run_demo(*, deals: int, speed: float, seed: int, log_dir: Path, game: GameConfig,
             stream: TextIO, timeout: float | None = None, web_port: int | None = None) -> dict:
    """Play ``deals`` simulated deals through the emulated hub; return paths and the summary.

    With ``web_port`` the live table page is served on 127.0.0.1 at that port while it plays.
    """
    from firmware_bridge.emulator import HubEmulator

    zones = list(game.table.seats) + ["prikup"]
    deck = make_deck(seed)
    sim = demo_simulator(game, seed, deck, speed)
    events = list(sim.deals(deals))
    emulator = HubEmulator(readers=len(zones), absent_ms=300, poll_ms=20)
    path = emulator.open_pty()
    settings = Settings(game=game, backend="hub",
                        sections={"hub": HubConfig(port=path, zones=tuple(zones)), "display": DisplayConfig("hub")})
    service = TableService(settings, deck, log_dir)
    session = service.open_session(new=True)
    source = HubSource(game, settings.section("hub"), service.clock)
    view = LiveView(deals, stream, game.table.names)
    service.outputs = [view, HubOutputs(source.link, game.table.seats, display=True)]
    if web_port is not None:
        from .web import WebConfig, for_service
        web = for_service(service, WebConfig(port=web_port))
        service.outputs.append(web)
        stream.write(f"the live table page: {web.server.url}  (PIN {web.server.gate.pin})\n")
        stream.flush()
    script_done = threading.Event()
    failure: list[str] = []

    def play() -> None:
        if not source.link.wait_ready(10):
            failure.append(f"the emulated hub at {path} did not answer")
            service.stop()
            return
        emulator.play(events, zones, {}, speed=speed).join()
        script_done.set()

    expected_s = events[-1].t / speed
    deadline = time.monotonic() + (timeout or expected_s + 20)
    settle_at: list[float] = []

    def finished() -> bool:
        tr = service.tracker
        if time.monotonic() > deadline:
            failure.append("the demo did not finish in time")
            return True
        if not script_done.is_set():
            return False
        if len(tr.records) >= deals and not tr.leftover:
            return True
        settle_at.append(time.monotonic())
        return time.monotonic() - settle_at[0] > 3.0      # the last GONEs have had time to arrive

    player = threading.Thread(target=play, name="demo players", daemon=True)
    player.start()
    try:
        service.run(source, until=finished)
    finally:
        emulator.close()
    if failure:
        raise LinkError(failure[0])
    summary = service.tracker.summary()
    summary_path = session.finish(summary)
    report_input = service.tracker.report_summary()
    paths = {"events": session.folder / EVENTS, "config": session.folder / CONFIG,
             "deck": session.folder / DECK, "summary": summary_path}
    try:
        from .report import write_report
    except ImportError:          # the report module is optional for the demo
        log.warning("no report module: skipping the pulka picture")
    else:
        paths.update(write_report(report_input, session.folder, names=dict(game.table.names)))
    return {"summary": summary, "paths": paths, "session": session.folder}


def cmd_demo(args: argparse.Namespace) -> int:
    game = load_game_config(args.config) if args.config else GameConfig(Table(players=args.players))
    if args.deals < 1:
        raise SystemExit("preftable: error: --deals must be at least 1")
    if not 0 < args.speed <= 100:
        raise SystemExit("preftable: error: --speed must be above 0 and at most 100")
    if getattr(args, "web", None) is not None and not 0 <= args.web < 65536:
        raise SystemExit("preftable: error: --web PORT must be 0-65535")
    out = sys.stdout
    started = time.monotonic()
    result = run_demo(deals=args.deals, speed=args.speed, seed=args.seed, log_dir=Path(args.log_dir),
                      game=game, stream=out, web_port=getattr(args, "web", None))
    out.write("\n" + summary_text(result["summary"], game.table.names))
    out.write(f"\nplayed {args.deals} deals in {time.monotonic() - started:.1f} s; files written:\n")
    for kind, path in result["paths"].items():
        out.write(f"  {kind:<8} {path}\n")
    out.write(f"replay it with: preftable replay {result['paths']['events']} "
              f"--config {result['paths']['config']} --deck {result['paths']['deck']}\n")
    return 0


__all__ = ["run_demo", "cmd_demo", "LiveView"]
