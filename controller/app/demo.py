"""``preftable demo``: the whole table, simulated, on any Linux machine.

Simulated players lay legal cards (now and then a revoke, an out-of-turn card,
a flickering tag) on the readers of an emulated table hub, which speaks the
serial protocol on a pty.  The real host link reads it, the real tracker follows
the deals, a live terminal view shows the table, and a real game log is written.
At the end: the pulka, the settlement, and the paths of the files written.

``demo --bidding`` plays whole Preferans games (``rules.bidding = true``): the
simulated players of :class:`~controller.app.sim.BiddingSimulator` bid, declare and
whist by laying their bidding tokens (the demo deck's ``[bids]`` table, one set per
seat) on their own readers, and play contracts, misères and raspasovkas.
"""

from __future__ import annotations

import argparse
import logging
import math
import sys
import threading
import time
from dataclasses import replace
from pathlib import Path
from typing import Mapping, TextIO

from ..core.config import GameConfig, Table, load_game_config
from ..core.errors import LinkError
from ..store.gamelog import CONFIG, DECK, EVENTS
from .outputs import HubOutputs
from .service import TableService
from .settings import Settings
from .sim import BiddingSimulator, Noise, TableSimulator, make_deck
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
        self.last_mistake = ""

    def _label(self, zone: str) -> str:
        return self.names.get(zone, zone)

    def panel(self, snap: TableSnapshot) -> list[str]:
        done = len(snap.deals)
        deal = snap.deal
        number = deal["number"] if deal else done
        tricks = len(deal["tricks"]) if deal else 0
        frac = min(1.0, (done + (tricks / 10 if deal else 0)) / max(self.deals, 1))
        bar = "#" * int(frac * 30) + "." * (30 - int(frac * 30))
        lines = [f"preftable demo  [{bar}] {frac:4.0%}  deal {max(number, 1)}/{self.deals}  "
                 f"{snap.plays} cards played"]
        seats = snap.seats
        if deal is not None and snap.phase in _CALLING:
            lines += list(snap.display[:4]) + [""] * (4 - len(snap.display[:4]))   # whose call, the bid to beat
        elif deal is not None:
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
                if d.get("kind") is not None:           # --bidding: what the deal was
                    note = _kind_note(d) + note
                note += "" if d["complete"] else " (abandoned)"
                self.stream.write(f"deal {d['number']}/{self.deals}: dealer {d['dealer']} price {d['price']} "
                                  f"tricks {taken}{note}\n")
            self._reported = len(snap.deals)
            self.stream.flush()

    def tick(self, now: float) -> None:
        pass

    def close(self) -> None:
        pass


_CALLING = ("auction", "contract", "whisting")


def _kind_note(d: Mapping) -> str:
    """`` 7h by seat2 made``, `` misere by seat3 failed``, `` raspasovka``."""
    if d.get("declarer") is None:
        return f" {d['kind']}"
    return f" {d['kind']} {d.get('game') or '?'} by {d['declarer']} {d.get('outcome') or ''}".rstrip()


# Real readers need time: the hub reports a tag after two 20 ms polls, and tags laid within one
# poll cycle on different readers come out in reader order.  Players are never that fast; the
# simulated ones keep at least MIN_GAP_S (real time) between moves and gather the cards for longer
# than the hub's absent_ms, whatever --speed asks for.
MIN_GAP_S = 0.08


def demo_simulator(game: GameConfig, seed: int, deck, speed: float) -> TableSimulator:
    """The simulated players of the demo (sim times are divided by ``speed`` when played);
    with ``rules.bidding`` they play whole games (:class:`BiddingSimulator`)."""
    if game.rules.bidding:          # paced by the table's own events (PacedPlayers): no minimum gap
        return BiddingSimulator(game, seed=seed, deck=deck, noise=Noise.demo(), step_s=0.2,
                                gather_s=max(1.0, 0.6 * speed))
    return TableSimulator(game, seed=seed, deck=deck, noise=Noise.demo(), step_s=0.2,
                          gather_s=max(1.0, 0.6 * speed), min_gap_s=MIN_GAP_S * speed)


def demo_deck(game: GameConfig, seed: int):
    """The demo's deck: with ``rules.bidding``, one set of bidding tokens per seat too."""
    return make_deck(seed, token_sets=game.table.players if game.rules.bidding else 0)


def demo_tracker(game: GameConfig, deck):
    """The tracker that reads the demo's table (bidding tokens with ``rules.bidding``)."""
    from ..core.token_tracker import TokenTracker
    from ..core.tracker import DealTracker
    return (TokenTracker if game.rules.bidding else DealTracker)(game, deck)


class PacedPlayers:
    """The ``--bidding`` players' hands on the emulated hub: each move is made on the hub's
    readers, and the next waits until the table loop has handled what the readers reported.

    A bid is a token laid and lifted in a moment, and a missed or late tag changes the whole
    deal, so these players do not play to the clock alone: a tag laid waits for its table
    event, a tag laid again waits until its lifting was reported (else the hub would take it
    for flicker), and a deal's first token waits until the last deal's cards are off the
    table.  An inline bus subscriber (on the table loop's thread) sees every event handled.
    """

    name = "demo players"
    inline = True
    MOVE_WAIT_S = 30.0          # a tag the hub never reports: the emulated hub is stuck

    def __init__(self, emulator, zones: list[str], deck, speed: float):
        self.emulator = emulator
        self.reader = {zone: i for i, zone in enumerate(zones)}
        self.deck = deck
        self.speed = speed
        self.changed = threading.Condition()
        self.reported: set[tuple[str, str]] = set()    # (zone, uid) the table loop holds as lying
        self.idle = True                                # no deal in progress, as the loop last saw
        self.stopped = False

    # --- the bus side (the table loop's thread) ------------------------------------------

    def receive(self, item) -> None:
        event = item.event
        with self.changed:
            if event is not None and event.uid is not None:
                key = (event.zone, event.uid)
                if event.event == "placed":
                    self.reported.add(key)
                else:
                    self.reported.discard(key)
            self.idle = item.snapshot.deal is None
            self.changed.notify_all()

    def tick(self, now: float) -> None:
        pass

    def close(self) -> None:
        with self.changed:
            self.stopped = True
            self.changed.notify_all()

    # --- the players' side -----------------------------------------------------------------

    def _wait(self, ready, what: str) -> None:
        with self.changed:
            if not self.changed.wait_for(lambda: self.stopped or ready(), timeout=self.MOVE_WAIT_S):
                raise LinkError(f"the emulated hub did not report {what}")

    def _cards_lying(self) -> bool:
        return any(self.deck.card_for(uid) is not None for _, uid in self.reported)

    def play(self, events) -> None:
        """Make every move of ``events`` in order, paced by their times (over ``speed``)."""
        last_t = None
        for event in events:
            if last_t is not None:
                time.sleep(max(0.0, event.t - last_t) / self.speed)
            last_t = event.t
            if self.stopped:
                return
            reader, key = self.reader[event.zone], (event.zone, event.uid)
            if event.event == "removed":
                self.emulator.remove(reader, event.uid)
                continue
            if self.emulator.tags()[reader] == event.uid:
                continue                                # read again while it lies: nothing new
            if self.deck.token_for(event.uid) is not None:
                self._wait(lambda: not self.idle or not self._cards_lying(), "the last deal's cards lifted")
            self._wait(lambda: key not in self.reported, f"{event.uid} lifted on {event.zone}")
            self.emulator.place(reader, event.uid)
            self._wait(lambda: key in self.reported or self.emulator.tags()[reader] != event.uid,
                       f"{event.uid} laid on {event.zone}")


def run_demo(*, deals: int, speed: float, seed: int, log_dir: Path, game: GameConfig,
             stream: TextIO, timeout: float | None = None) -> dict:
    """Play ``deals`` simulated deals through the emulated hub; return paths and the summary."""
    from firmware_bridge.emulator import HubEmulator

    zones = list(game.table.seats) + ["prikup"]
    deck = demo_deck(game, seed)
    sim = demo_simulator(game, seed, deck, speed)
    events = list(sim.deals(deals))
    emulator = HubEmulator(readers=len(zones), absent_ms=300, poll_ms=20)
    path = emulator.open_pty()
    settings = Settings(game=game, backend="hub",
                        sections={"hub": HubConfig(port=path, zones=tuple(zones)), "display": DisplayConfig("hub")})
    service = TableService(settings, deck, log_dir)
    session = service.open_session(new=True)
    if game.rules.bidding:
        service.tracker = demo_tracker(game, deck)      # reads the players' bidding tokens
    source = HubSource(game, settings.section("hub"), service.clock)
    view = LiveView(deals, stream, game.table.names)
    service.outputs = [view, HubOutputs(source.link, game.table.seats, display=True)]
    players = PacedPlayers(emulator, zones, deck, speed) if game.rules.bidding else None
    if players is not None:
        service.outputs.append(players)
    script_done = threading.Event()
    failure: list[str] = []

    def play() -> None:
        if not source.link.wait_ready(10):
            failure.append(f"the emulated hub at {path} did not answer")
            service.stop()
            return
        try:
            if players is not None:
                players.play(events)
            else:
                emulator.play(events, zones, {}, speed=speed).join()
        except LinkError as exc:
            failure.append(str(exc))
        script_done.set()

    expected_s = events[-1].t / speed
    # the paced players wait on the table itself (each move has its own limit)
    deadline = time.monotonic() + (timeout or (expected_s + 20 if players is None else math.inf))
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
    if getattr(args, "bidding", False):
        game = replace(game, rules=replace(game.rules, bidding=True))
    if args.deals < 1:
        raise SystemExit("preftable: error: --deals must be at least 1")
    if not 0 < args.speed <= 100:
        raise SystemExit("preftable: error: --speed must be above 0 and at most 100")
    out = sys.stdout
    started = time.monotonic()
    result = run_demo(deals=args.deals, speed=args.speed, seed=args.seed, log_dir=Path(args.log_dir),
                      game=game, stream=out)
    out.write("\n" + summary_text(result["summary"], game.table.names))
    out.write(f"\nplayed {args.deals} deals in {time.monotonic() - started:.1f} s; files written:\n")
    for kind, path in result["paths"].items():
        out.write(f"  {kind:<8} {path}\n")
    out.write(f"replay it with: preftable replay {result['paths']['events']} "
              f"--config {result['paths']['config']} --deck {result['paths']['deck']}\n")
    return 0


__all__ = ["run_demo", "cmd_demo", "LiveView"]
