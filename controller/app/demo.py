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

The players pause and wait on the clock the demo is given (``preftable demo``: real time);
on a :class:`~controller.core.clock.VirtualClock` the emulated hub runs on it too and the
whole demo runs as fast as the code does (:mod:`controller.app.demo_players`).
"""

from __future__ import annotations

import argparse
import logging
import math
import shlex
import shutil
import sys
import threading
import time
from dataclasses import replace
from pathlib import Path
from typing import Mapping, Sequence, TextIO

from ..core.clock import Clock
from ..core.config import GameConfig, Table, load_game_config
from ..core.errors import LinkError, PreftableError
from ..core.events import button
from ..store.gamelog import CONFIG, DECK, EVENTS
from . import backends
from .outputs import Output
from .service import TableService
from .settings import settings_from_dict
from .sim import BiddingSimulator, Noise, TableSimulator, make_deck
from .demo_players import PacedPlayers, TableFollower, TableTime, play_in_order
from .linkstate import link_state
from .options import MIN_GAP_S, MIN_HUMAN_GAP_S
from .screen import DIM, MISTAKE, TURN as TURN_STYLE, EnterConfirms, Screen
from .textview import mistake_advice, plural, summary_text
from ..core.cards import parse_card
from ..core.snapshot import TableSnapshot
from ..core.view import ERROR, TURN, WINNER

log = logging.getLogger(__name__)

_MARK = {TURN: "\u25b6", WINNER: "\u2605", ERROR: "!"}
LEGEND = "\u25b6 to play  \u2605 took the last trick  ! mistake to confirm"
class LiveView:
    """A live terminal panel: whose turn, the cards on the table, trick counts, pulka, progress.

    A bus subscriber: it renders each published snapshot on its own thread.
    Drawn in place on a terminal (through :class:`~controller.app.screen.Screen`:
    it fits the width, log records go above it, colour for the turn and the
    mistakes); on a pipe or a file, one line per finished deal.
    ``confirm_hint`` says how a mistake is cleared at this table.
    """

    name = "live view"
    inline = False

    def __init__(self, deals: int, stream: TextIO, names=None, link=None, confirm_hint: str = "press confirm"):
        self.deals = deals
        self.stream = stream
        self.names = names or {}
        self.link = link
        self.confirm_hint = confirm_hint
        self.screen = Screen(stream)
        self.tty = self.screen.tty
        self._reported = 0
        self._counted = 0            # ended deals whose cards are in _played
        self._played = 0
        self._link_state = None
        self._snap: TableSnapshot | None = None
        self._closed = False
        self.screen.capture_logging()

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

    def panel(self, snap: TableSnapshot) -> list[tuple[str, str | None]]:
        """The panel's lines, each with its style."""
        done = len(snap.deals)
        deal = snap.deal
        number = deal["number"] if deal else done
        tricks = len(deal["tricks"]) if deal else 0
        played = self._cards_played(snap)
        frac = min(1.0, (done + (tricks / 10 if deal else 0)) / max(self.deals, 1))
        bar = "#" * int(frac * 20) + "." * (20 - int(frac * 20))
        lines: list[tuple[str, str | None]] = [
            (f"demo deal {max(number, 1)}/{self.deals} [{bar}] {frac:4.0%}, {plural(played, 'card')} played",
             None)]
        if self.link is not None:
            state = self._link_state = link_state(self.link)
            lines.append((state, None if state.startswith("hub connected") else MISTAKE))
        seats = snap.seats
        if deal is not None and snap.phase in _CALLING:     # the calls before play, in words
            lines += self._calling(deal, snap.phase)
        elif deal is not None:
            due = deal["expected"]
            lines.append((f"deal {deal['number']}: dealer {self._label(deal['dealer'])}, price x{deal['price']}, "
                          f"trick {min(tricks + 1, 10)} of 10", None))
            lines.append((f"to play: \u25b6 {self._label(due) if due else '-'}"
                          + (f"   {self._contract(deal)}" if deal.get("declarer") else ""), TURN_STYLE))
            on_table = "  ".join(f"{self._label(z)} {parse_card(c).pretty}" for z, c in deal["current"]) or "-"
            lines.append((f"on the table: {on_table}", None))
            last = snap.last_trick
            if last is not None:
                cards = "  ".join(f"{self._label(z)} {parse_card(c).pretty}" for z, c in last["cards"].items())
                winner = self._label(last["winner"]) if last["winner"] else "nobody"
                lines.append((f"last trick:   {cards}  -> {winner}", None))
            else:
                lines.append(("last trick:   -", None))
            taken = deal["taken"]
            lines.append(("tricks taken: " + "  ".join(
                f"{_MARK.get(snap.leds.get(s, ''), ' ')}{self._label(s)} {taken[s]}" for s in seats), None))
        else:
            lines += [("between deals" + (": clear the table" if snap.leftover else ""), None),
                      ("to play: -", None), ("", None), ("", None), ("", None)]
        p = snap.pulka
        lines.append(("pulya (points): " + "  ".join(f"{self._label(s)} {float(p[s]['pulya']):g}" for s in seats),
                      None))
        lines.append(("gora (penalty): " + "  ".join(f"{self._label(s)} {float(p[s]['gora']):g}" for s in seats),
                      None))
        if snap.alerts:
            more = f" (+{len(snap.alerts) - 1} more)" if len(snap.alerts) > 1 else ""
            turn = (deal or {}).get("turn") or (deal or {}).get("expected")
            lines.append((f"! {mistake_advice(snap.alerts[-1], self.names, turn)}{more} - {self.confirm_hint}",
                          MISTAKE))
        else:
            lines.append(("no mistake waiting", None))
        lines.append((LEGEND, DIM))
        return lines

    def _calling(self, deal: Mapping, phase: str) -> list[tuple[str, str | None]]:
        """The auction, the contract line and the whisting as five rows: who is to call
        (the ``to play`` row, always there), the calls so far, what they decided."""
        turn = deal.get("turn")
        doing = {"auction": "to bid", "contract": "to name the game", "whisting": "to whist or pass"}[phase]
        calls = "  ".join(f"{self._label(b['seat'])} {_game_words(b['bid'])}" for b in deal.get("auction") or ())
        whists = "  ".join(f"{self._label(w['seat'])} {w['call']}" for w in deal.get("whist_calls") or ())
        beat = deal.get("bid_to_beat")
        return [(f"deal {deal['number']}: dealer {self._label(deal['dealer'])}, price x{deal['price']}, {phase}",
                 None),
                (f"to play: \u25b6 {self._label(turn) if turn else '-'} ({doing})", TURN_STYLE),
                (f"bids: {calls or '-'}", None),
                (f"highest: {_game_words(beat['bid'])} ({self._label(beat['seat'])})" if beat and phase == "auction"
                 else f"contract: {self._contract(deal)}" if deal.get("declarer") else "highest: -", None),
                (f"whist calls: {whists or '-'}", None)]

    def _contract(self, deal: Mapping) -> str:
        """``Boris 7♥ (whist Vera, closed)``."""
        game = deal.get("game")
        text = f"{self._label(deal['declarer'])} {_game_words(game) if game else 'won the auction'}"
        if deal.get("whisters"):
            text += f" (whist {', '.join(self._label(w) for w in deal['whisters'])}"
            text += f", {deal['whist_mode']})" if deal.get("whist_mode") else ")"
        return text

    def receive(self, item) -> None:
        snap = self._snap = item.snapshot
        if snap.names:
            self.names = dict(snap.names)       # players named from the page show at once
        if self._closed:
            return
        if self.tty:
            self.screen.draw(self.panel(snap))
        elif len(snap.deals) > self._reported:
            for d in snap.deals[self._reported:]:
                taken = " ".join(f"{self._label(s)}:{n}" for s, n in d["taken"].items())
                note = (" revoke by " + self._label(d["revoke"])) if d["revoke"] else ""
                if d.get("kind") is not None:           # --bidding: what the deal was
                    note = self._kind_note(d) + note
                note += "" if d["complete"] else " (abandoned)"
                self.stream.write(f"deal {d['number']}/{self.deals}: dealer {self._label(d['dealer'])} "
                                  f"price {d['price']} tricks {taken}{note}\n")
            self._reported = len(snap.deals)
            self.stream.flush()

    def _kind_note(self, d: Mapping) -> str:
        """`` contract 7h by Boris made``, `` misere by Vera failed``, `` unplayed 6s by Anna passed``,
        `` raspasovka``."""
        if d.get("declarer") is None:
            return f" {d['kind']}"
        game = "" if d.get("game") == d["kind"] else f" {d.get('game') or '?'}"
        return f" {d['kind']}{game} by {self._label(d['declarer'])} {d.get('outcome') or ''}".rstrip()

    def tick(self, now: float) -> None:
        if not self._closed and self.tty and self.link is not None and self._snap is not None \
                and link_state(self.link) != self._link_state:
            self.screen.draw(self.panel(self._snap))

    def close(self) -> None:
        # the panel stays as the table last was: not redrawn when the emulated hub goes away after it
        self._closed = True
        self.screen.release_logging()


_CALLING = ("auction", "contract", "whisting")


def _game_words(code: str | None) -> str:
    """``7h`` -> ``7♥``, ``6n`` -> ``6NT``, ``misere`` -> ``misère``, ``pass`` stays."""
    from ..core.view import game_text
    if code in (None, "pass"):
        return code or "-"
    return "misère" if code == "misere" else game_text(code)


# Real readers need time: the pace of the simulated players and the demo's --speed limit live in
# options.py (the CLI reads them without importing the demo).


def whole_games(game: GameConfig, entry: str) -> bool:
    """Whether the demo's players play whole games: always with ``bidding = true`` (their calls
    on bidding tokens, or from the page), and under ``"auto"`` when they enter what they agree
    on the page as a group with a phone would (RULES-contracts.md, second edition: a deal that
    all pass is just played, a bid one's result is one line).  ``false``: raspasovka only."""
    return game.rules.bidding is True or (game.rules.bidding == "auto" and entry == "page")


def demo_simulator(game: GameConfig, seed: int, deck, speed: float, entry: str = "tokens") -> TableSimulator:
    """The simulated players of the demo (sim times are divided by ``speed`` when played).

    Above :data:`MAX_SPEED` (only callers other than the CLI ask for that) the
    moves are held :data:`MIN_GAP_S` of real time apart, as the readers need.
    """
    if whole_games(game, entry):
        return BiddingSimulator(game, seed=seed, deck=deck, noise=Noise.demo(), step_s=0.5,
                                gather_s=max(2.0, 0.6 * speed), min_gap_s=max(MIN_HUMAN_GAP_S, MIN_GAP_S * speed),
                                entry=entry)
    return TableSimulator(game, seed=seed, deck=deck, noise=Noise.demo(), step_s=0.5,
                          gather_s=max(2.0, 0.6 * speed), min_gap_s=max(MIN_HUMAN_GAP_S, MIN_GAP_S * speed))


def demo_deck(game: GameConfig, seed: int):
    """The demo's deck: with ``rules.bidding``, one set of bidding tokens per seat too."""
    return make_deck(seed, token_sets=game.table.players if game.rules.bidding is True else 0)


def page_entry(service, zones):
    """How the demo's players enter a line on the page: the same parsing and the same
    ``service.submit`` as ``POST /api/control`` (a bad line raises, as the page is refused)."""
    from ..core.events import event_from_dict

    def enter(line: dict) -> None:
        service.submit(event_from_dict({**line, "t": 0.0}, tuple(zones)))
    return enter


def demo_tracker(game: GameConfig, deck):
    """The tracker that reads the demo's table (bidding tokens with ``rules.bidding``)."""
    from ..core.tracker import DealTracker
    return DealTracker(game, deck)


def run_demo(*, deals: int, speed: float, seed: int, log_dir: Path, game: GameConfig,
             stream: TextIO, timeout: float | None = None, keyboard: TextIO | None = None,
             web_port: int | None = None, web: str | None = None, entry: str = "tokens",
             clock: Clock = time.monotonic, outputs: Sequence[Output] = ()) -> dict:
    """Play ``deals`` simulated deals through the emulated hub; return paths and the summary.

    ``clock``: the time the players pace themselves on and every limit counts on (real
    seconds; a :class:`~controller.core.clock.VirtualClock` plays the same demo as fast as the
    code runs: :class:`~controller.app.demo_players.TableTime`).  ``outputs``: more subscribers
    of the table's bus.

    With ``web`` (``host:port``) or ``web_port`` (a port on 127.0.0.1) the live table page is
    served while it plays (``0.0.0.0:8080``: for the phones on the LAN, announced as
    ``preftable.local``).

    ``keyboard``: a terminal whose Enter key is the table's ``confirm`` button
    (the demo's hub has no buttons).  Ctrl-C raises KeyboardInterrupt holding
    the session folder.
    """
    zones = list(game.table.seats) + ["prikup"]
    deck = demo_deck(game, seed)
    sim = demo_simulator(game, seed, deck, speed, entry)
    events = list(sim.deals(deals))
    pace = TableTime(clock)
    emulator = pace.emulated_hub(readers=len(zones))
    emulator.open_pty()
    # the stable symlink, not /dev/pts/N: once the emulator closes, the symlink goes with it, while
    # the pty's number is soon another terminal's, which a reconnecting link would write into
    path = emulator.link_path
    settings = settings_from_dict({"readers": {"backend": "hub"}, "hub": {"port": path, "zones": zones},
                                   "display": {"kind": "hub"}}, game=game)
    service = TableService(settings, deck, log_dir, clock=clock)
    listen = web if web is not None else None if web_port is None else f"127.0.0.1:{web_port}"
    web = None
    if listen is not None:         # before the session: a port in use leaves no empty session behind
        from .web import WebConfig, WebError, for_service
        from .web.config import parse_listen
        host, port = parse_listen(listen, "--web")
        try:
            web = for_service(service, WebConfig(host=host, port=port))
        except WebError:
            emulator.close()
            raise
        stream.write("\n".join(web.join.lines()) + "\n")
        if stream.isatty() and not web.join.local_only:
            from .web.join import qr_terminal
            stream.write(qr_terminal(web.join.url))
        stream.flush()
    session = service.open_session(new=True)
    if game.rules.bidding is True:
        service.tracker = demo_tracker(game, deck)      # reads the players' bidding tokens
    ctx = backends.with_reader(backends.RunContext(settings, clock=service.clock, deck=deck, stream=stream,
                                                   session=session.folder.name, service=service))
    source = ctx.source
    hint = "fix it, then press Enter to confirm" if keyboard is not None else "fix it, then press confirm"
    view = LiveView(deals, stream, game.table.names, link=ctx.link, confirm_hint=hint)
    service.outputs = [view, *backends.build_outputs(ctx)]      # the hub's LEDs and display rows
    players = PacedPlayers(emulator, zones, deck, speed, enter=page_entry(service, zones), pace=pace) \
        if whole_games(game, entry) else None
    follower = TableFollower(deck, pace) if players is None else None
    if players is not None:
        service.outputs.append(players)
    if follower is not None:
        service.outputs.append(follower)
    if web is not None:
        service.outputs.append(web)
    from .analyst import Analyst            # each ended deal analysed in a child process, as run does
    service.outputs.append(Analyst(service.tracker.rules, service.tracker.players))
    service.outputs += outputs
    if keyboard is not None:
        EnterConfirms(keyboard, lambda: service.sink(button(service.clock(), "confirm"))).start()
    script_done = threading.Event()
    over = threading.Event()
    failure: list[str] = []

    def play() -> None:
        if not pace.wait(lambda: source.link.ready, 10):
            failure.append(f"the emulated hub at {path} did not answer")
            service.stop()
            return
        try:
            if players is not None:
                players.play(events)
            else:
                play_in_order(emulator, events, zones, speed, service.stop_event, follower, pace)
        except PreftableError as exc:       # the hub stuck, or a line the tracker cannot read
            failure.append(str(exc))
            service.stop()
        script_done.set()
        pace.idle(over)                     # on virtual time the last reports need time to pass

    expected_s = events[-1].t / speed
    # the paced players wait on the table itself (each move has its own limit)
    deadline = pace() + (timeout or (expected_s + 20 if players is None else math.inf))
    settle_at: list[float] = []

    def finished() -> bool:
        tr = service.tracker
        if pace() > deadline:
            failure.append("the demo did not finish in time")
            return True
        if not script_done.is_set():
            return False
        if len(tr.records) >= deals and not tr.leftover:
            return True
        settle_at.append(pace())
        return pace() - settle_at[0] > 3.0      # the last GONEs have had time to arrive

    player = threading.Thread(target=play, name="demo players", daemon=True)
    player.start()
    try:
        service.run(source, until=finished)
    except KeyboardInterrupt:
        raise KeyboardInterrupt(str(session.folder)) from None
    finally:
        over.set()
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
        # the names the table ended with (named from the page, or the config's)
        paths.update(write_report(report_input, session.folder, names=dict(service.tracker.config.table.names)))
    return {"summary": summary, "paths": paths, "session": session.folder,
            "recorded": recorded(summary, session.folder / EVENTS), "names": dict(service.tracker.config.table.names)}


def recorded(summary: Mapping, events_path: Path) -> dict:
    """What the session's game log holds: its deals (complete or not), and how many mistakes
    and taken-back lines its derived lines say there were."""
    import json
    deals = summary["deals"]
    counts = {"deals": len(deals), "complete": sum(1 for d in deals if d["complete"]), "mistakes": 0, "undos": 0}
    with open(events_path, encoding="utf-8") as lines:
        for line in lines:
            if '"kind": "mistake"' in line or '"kind": "undo"' in line:
                kind = json.loads(line).get("kind")
                counts["mistakes" if kind == "mistake" else "undos"] += 1
    return counts


def recorded_text(counts: Mapping, asked: int) -> str:
    """The demo's last line: ``recorded 3 of 3 deals (all complete), 2 mistakes, 1 line taken back``."""
    complete = counts["complete"]
    state = "all complete" if complete == counts["deals"] else f"{complete} complete"
    return (f"recorded {counts['deals']} of {plural(asked, 'deal')} ({state}), "
            f"{plural(counts['mistakes'], 'mistake')}, {plural(counts['undos'], 'line')} taken back")


def preftable_command() -> str:
    """How to call preftable from here, as a user would type it (``.venv/bin/preftable`` in a clone)."""
    script = Path(sys.executable).parent / "preftable"
    found = shutil.which("preftable")
    if found and script.exists() and Path(found).resolve() == script.resolve():
        return "preftable"
    if script.exists():
        try:
            return str(script.absolute().relative_to(Path.cwd()))
        except ValueError:
            return str(script)
    return f"{shlex.quote(sys.executable)} -m controller"


def cmd_demo(args: argparse.Namespace, clock: Clock = time.monotonic) -> int:
    """``preftable demo``; on ``clock`` (real time; a test's virtual clock runs it as fast as it goes)."""
    game = load_game_config(args.config) if args.config else GameConfig(Table(players=args.players))
    # --bidding: the calls on bidding tokens (every deal begins with its auction); otherwise the
    # players enter what they agree on the page, under the config's rules.bidding ("auto")
    entry = getattr(args, "entry", None) or ("tokens" if getattr(args, "bidding", False) else "page")
    if entry == "tokens" and getattr(args, "bidding", False):
        game = replace(game, rules=replace(game.rules, bidding=True))
    out = sys.stdout
    keyboard = sys.stdin if sys.stdin is not None and sys.stdin.isatty() and out.isatty() else None
    started = clock()
    try:
        result = run_demo(deals=args.deals, speed=args.speed, seed=args.seed, log_dir=Path(args.log_dir),
                          game=game, stream=out, keyboard=keyboard, web=getattr(args, "web", None),
                          entry=entry, clock=clock)
    except KeyboardInterrupt as exc:
        where = f"; the game log so far is in {exc.args[0]}" if exc.args else ""
        sys.stderr.write(f"preftable: demo interrupted (Ctrl-C){where}\n")
        return 130
    out.write("\n" + summary_text(result["summary"], result["names"]))
    counts = result["recorded"]
    out.write(f"\nplayed {plural(counts['complete'], 'deal')} in {clock() - started:.1f} s; "
              "files written:\n")
    for kind, path in result["paths"].items():
        out.write(f"  {kind:<8} {path}\n")
    paths = result["paths"]
    out.write(f"replay it with: {preftable_command()} replay {shlex.quote(str(paths['events']))}\n")
    out.write(recorded_text(counts, args.deals) + "\n")
    if counts["complete"] < args.deals:         # not a success: say so, and in the status
        sys.stderr.write(f"preftable: demo: only {plural(counts['complete'], 'complete deal')} of "
                         f"{args.deals} recorded; the game log shows what happened\n")
        return 1
    return 0


__all__ = ["run_demo", "cmd_demo", "LiveView", "demo_simulator", "play_in_order"]
