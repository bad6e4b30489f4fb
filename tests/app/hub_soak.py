"""The fault soak harness: players at an emulated hub, a hostile line, a killed service.

One :class:`SoakTable` is one seeded session: ``preftable run`` (a real
process, forked from the test's so that its two starts cost no interpreter start;
hub backend) reads a :class:`~firmware_bridge.emulator.HubEmulator` on a pty; the harness lays and lifts the cards of simulated raspasovka deals
(:class:`~controller.app.sim.TableSimulator`, with its table noise) on the
emulator's virtual readers, as players would, and between moves injects the
faults the seed chose: dropped or corrupted frames (1-4 in a row, of any verb
or of the edges only), garbage on the line, a hub reboot while a trick lies
on the table, a silence the host must notice, an unplug and replug, and a
SIGKILL of the service followed by a restart on the same log dir.

Nothing waits on time, and both ends run on virtual time.  The firmware's clock moves
only by hand (``realtime=False``): ``HUB_STEP_MS`` at each tick of the harness, so its
HBs and STATEs come as often as the harness ticks, and a restarted hub is past its first
scans within a few ticks.  The service's link reads a :class:`SharedClock` the harness
moves ``POLL`` at each tick (so its reply timeouts run, and no HB timeout can fire while
the harness ticks: the hub's HBs come ten times as often in that time) and past the HB
timeout at once for a silence.  The harness looks at the log every ``LOOK`` (a card
logged is seen a millisecond later, not ten) but ticks at most once every ``POLL`` of
real time: a service the machine's load holds up for a while sees as little virtual time
pass as it would with a look per tick -- the soak's clocks never outrun the process.
Every card is reported by the firmware at once, in
play order (``HubEmulator.flip`` runs its polls on its own clock, so each edge
has a later ``edge_ms`` than the one before); a card stays on its reader until
the service has logged it (PROTOCOL.md: a tag laid and lifted inside a gap is
never seen, on a real table too); a silence and an unplug end only when the
service has said it lost the link.  Waits poll the game log (the facts) under
a generous deadline that only bounds a hang.
"""

from __future__ import annotations

import json
import os
import random
import signal
import socket
import string
import time
from dataclasses import dataclass, field
from multiprocessing.sharedctypes import RawValue
from pathlib import Path

# what ``preftable run`` imports, imported once here: each forked start of the service (two a
# session) then begins with it instead of importing it again
import controller.app.analyst  # noqa: F401
import controller.app.backends.display  # noqa: F401
import controller.app.backends.gpio  # noqa: F401
import controller.app.backends.hub  # noqa: F401
import controller.app.commands  # noqa: F401
import controller.app.outputs  # noqa: F401
import controller.app.screen  # noqa: F401
from controller.app.sim import Noise, TableSimulator, make_deck
from controller.core.clock import VirtualClock
from controller.core.config import GameConfig
from controller.core.events import PLACED, REMOVED, TableEvent
from controller.core.tracker import DealTracker
from controller.store.gamelog import SessionLog
from firmware_bridge.emulator import HubEmulator
from firmware_bridge.link import HB_TIMEOUT, HubLink

from conftest import fork_main, wait_until

GAME = GameConfig()
ZONES = ("seat1", "seat2", "seat3", "prikup")          # reader i is ZONES[i] (the hub backend's default)
READER = {zone: i for i, zone in enumerate(ZONES)}
HANG = 60.0          # s: a wait that takes this long is a hang (a lost card), never a slow machine
LOOK = 0.001         # s between two looks at the game log
POLL = 0.01          # s of the link's virtual time per tick of the harness (at most one a POLL of real time)
HUB_STEP_MS = 100    # the firmware's time for each tick
LINE_FAULTS = ("drop", "corrupt", "garbage")
EDGES = ("SEEN", "GONE")
NO_DEVICE = "no such device"     # firmware_bridge.link.describe_open_error, once per outage
CONNECTED = ") connected at "    # the link's WARNING line at each handshake


@dataclass
class Fault:
    """One fault, applied just before move ``at`` of the session's plan."""

    at: int
    kind: str                  # drop, corrupt, garbage, reboot, silence, unplug, sigkill
    count: int = 0             # frames dropped or corrupted in a row
    verbs: tuple[str, ...] | None = None
    data: bytes = b""


@dataclass
class Evidence:
    """What the faults did, for the test to prove they happened."""

    kills: list[int] = field(default_factory=list)      # the killed services' exit statuses
    starts: int = 0
    laid_while_down: int = 0
    boots: list[str] = field(default_factory=list)    # the hub's boot ids, one per (re)boot
    faults: list[str] = field(default_factory=list)
    confirms: int = 0                                 # confirms pressed for a guessed order


class SharedClock(VirtualClock):
    """A :class:`VirtualClock` whose time lives in memory shared with the forked service,
    so that the harness moves the clock the service's link reads."""

    def __init__(self) -> None:
        self._cell = RawValue("d", 0.0)

    @property
    def now(self) -> float:
        return self._cell.value

    @now.setter
    def now(self, value: float) -> None:
        self._cell.value = value


def deals_of(seed: int, deals: int):
    """The deck, the table events of ``deals`` deals played with table noise, and the
    summary a tracker fed those events directly gives (the clean run)."""
    deck = make_deck(seed)
    events = list(TableSimulator(GAME, seed=seed, deck=deck, noise=Noise.demo()).deals(deals))
    clean = DealTracker(GAME, deck)
    plays = [0]                     # plays[i]: plays the clean tracker made from events[:i]
    for event in events:
        plays.append(plays[-1] + sum(s.kind == "play" for s in clean.feed(event)))
    return deck, events, plays, clean.summary()


def choose_faults(rng: random.Random, events: list[TableEvent], silence: bool) -> list[Fault]:
    """Faults at moves the seed picks: bursts of line faults everywhere, one reboot while
    cards lie on the table, one unplug, one SIGKILL, and a silence if asked for."""
    n = len(events)
    faults = []
    for at in sorted(rng.sample(range(1, n), min(n - 1, 12))):
        kind = rng.choice(LINE_FAULTS)
        if kind == "garbage":
            faults.append(Fault(at, kind, data=_garbage(rng)))
        else:
            faults.append(Fault(at, kind, rng.randint(1, 4), rng.choice([None, EDGES, ("SEEN",)])))
    lying = _moves_with_cards_lying(events)
    faults.append(Fault(rng.choice(lying), "reboot"))
    faults.append(Fault(rng.randrange(n // 4, n), "unplug"))
    faults.append(Fault(rng.randrange(n // 4, 3 * n // 4), "sigkill"))
    if silence:
        faults.append(Fault(rng.randrange(1, n), "silence"))
    return sorted(faults, key=lambda f: f.at)


def _garbage(rng: random.Random) -> bytes:
    """Line noise: printable junk, a torn frame, a bare CR -- with or without a newline after."""
    junk = "".join(rng.choice(string.printable[:94]) for _ in range(rng.randint(1, 60)))
    pick = rng.choice([junk, "$" + junk, "$12 SEEN 0 " + junk[:8], junk + "*0000", "\r"])
    return (pick + rng.choice(["", "\n", "\r\n"])).encode("ascii")


def _moves_with_cards_lying(events: list[TableEvent]) -> list[int]:
    """Indices of moves made while at least one card lies on a reader (mid-trick)."""
    lying: set[str] = set()
    out = []
    for i, event in enumerate(events):
        if lying:
            out.append(i)
        if event.event == PLACED:
            lying.add(event.zone)
        elif event.event == REMOVED:
            lying.discard(event.zone)
    return out


class SoakTable:
    """One soak session: the emulated hub, the service, and the players' hands on the readers."""

    def __init__(self, tmp: Path, seed: int, deals: int, silence: bool, analysed: bool = True):
        """``analysed``: the service's analyst runs (each ended deal's double-dummy search, in a
        process of its own); else its outputs are the table's only -- the search costs a second
        or so of CPU a deal, twice the rest of a session, and what the soak checks is the log."""
        self.tmp = tmp
        self.analysed = analysed
        self.rng = random.Random(seed)
        self.deck, self.events, self.plays, self.clean = deals_of(seed, deals)
        self.faults = choose_faults(self.rng, self.events, silence)
        self.logs = tmp / "logs"
        self.err = tmp / "service.err"
        self.deck_path = tmp / "deck.toml"
        self.deck_path.write_text(self.deck.to_toml())
        self.emu = HubEmulator(readers=len(ZONES), realtime=False)
        self.emu.open_pty()
        self.cfg = tmp / "table.toml"
        self.cfg.write_text(f'[readers]\nbackend = "hub"\n[hub]\nport = "{self.emu.link_path}"\n'
                            '[display]\nkind = "hub"\n')
        self.proc = None
        self.unconfirmed: set[str] = set()     # zones whose card the service may not have yet
        # the service's terminal: its Enter key is the table's confirm (no button wired), which
        # a player presses when the table shows that the hub link guessed an order
        self.keys, self.terminal = os.openpty()
        self.link_clock = SharedClock()
        self.guesses_confirmed = 0
        self.held_pressed = None                # the held trick confirm was last pressed for
        self.evidence = Evidence(boots=[self.emu.boot_id])
        self._log_sizes: tuple = ()
        self._log_facts = self._read_log([])
        self._ticked = time.monotonic()          # when the clocks last moved (see LOOK)

    # ------------------------------------------------------------------ the service

    def start(self) -> None:
        """``preftable run`` on the log dir, its terminal ours, its link on our clock (and its
        analyst off unless ``analysed``); back once it has told systemd READY=1 (its session
        is open)."""
        clock, analysed = self.link_clock, self.analysed
        sock_path = str(self.tmp / f"notify{self.evidence.starts}")

        def in_the_service() -> None:              # in the child, before the CLI starts
            HubLink.__init__.__kwdefaults__["monotonic"] = clock
            os.setpgid(0, 0)                       # its own group, as its own cgroup under systemd
            if not analysed:
                from controller.app.analyst import Analyst
                Analyst.receive = lambda self, item: None   # hands no deal to a search

        with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as server:
            server.bind(sock_path)
            server.settimeout(HANG)
            err = os.open(self.err, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
            try:
                self.proc = fork_main(["run", "--config", self.cfg, "--log-dir", self.logs, "--deck",
                                       self.deck_path], stdin=self.terminal, stderr=err,
                                      env={"NOTIFY_SOCKET": sock_path}, before=in_the_service)
            finally:
                os.close(err)
            while "READY=1" not in server.recv(4096).decode():
                pass
        os.unlink(sock_path)
        self.evidence.starts += 1

    def stop(self) -> int:
        self.proc.send_signal(signal.SIGTERM)
        return self.proc.wait(HANG)

    def close(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
        self.emu.close()
        os.close(self.keys)
        os.close(self.terminal)

    def stderr(self) -> str:
        return self.err.read_text(errors="replace") if self.err.exists() else ""

    def session(self) -> SessionLog:
        (folder,) = SessionLog.sessions(self.logs)
        return SessionLog(folder)

    # ------------------------------------------------------------------ facts

    def _log(self) -> tuple[tuple[int, dict[str, str | None]], tuple[int, bool, tuple | None]]:
        """:meth:`logged` and :meth:`guesses`, read again only when a log file has grown
        (the harness looks every millisecond)."""
        paths = sorted(self.logs.glob("*/events.jsonl"))
        sizes = tuple((path, path.stat().st_size) for path in paths)
        if sizes != self._log_sizes:
            self._log_sizes = sizes
            self._log_facts = self._read_log(paths)
        return self._log_facts

    @staticmethod
    def _read_log(paths) -> tuple[tuple[int, dict[str, str | None]], tuple[int, bool, tuple | None]]:
        plays = 0
        picture: dict[str, str | None] = dict.fromkeys(ZONES)
        count, waiting = 0, False
        # the trick in hand: its deal, the tricks the deal has counted, the plays since, and
        # whether a guessed order was shown since the last trick was counted
        deal, tricks, since, guessed = None, 0, 0, False
        for path in paths:
            for line in path.read_text(errors="replace").splitlines():
                try:
                    obj = json.loads(line)
                except ValueError:             # a torn last line, while being written
                    continue
                if obj.get("kind") == "play":
                    plays += 1
                    if obj.get("deal") != deal:
                        deal, tricks, since, guessed = obj.get("deal"), 0, 0, False
                    since += 1
                elif obj.get("kind") == "trick":
                    tricks, since, guessed = tricks + 1, 0, False
                elif "kind" not in obj and obj.get("event") in (PLACED, REMOVED):
                    if obj["event"] == PLACED:
                        picture[obj["zone"]] = obj.get("uid")
                    elif picture[obj["zone"]] == obj.get("uid"):
                        picture[obj["zone"]] = None
                if obj.get("kind") == "mistake" and "order_guessed" in (obj.get("type"), obj.get("mistake")):
                    count, waiting, guessed = count + 1, True, True
                elif obj.get("event") == "button" and obj.get("button") == "confirm":
                    waiting = False
        # a whole trick played, not counted, after a guessed order: the table holds it for confirm
        held = (deal, tricks, since) if guessed and since >= len(ZONES) - 1 else None
        return (plays, picture), (count, waiting, held)

    def logged(self) -> tuple[int, dict[str, str | None]]:
        """From the game log: the plays so far, and each zone's tag as its last event left it."""
        return self._log()[0]

    def guesses(self) -> tuple[int, bool, tuple | None]:
        """From the game log: the ``order_guessed`` mistakes so far, whether the last of
        them still waits for a confirm (PROTOCOL.md: the table "waits for confirm before it
        counts the trick"), and the held trick (deal, tricks counted, plays since) when a
        whole trick after a guess is not counted."""
        return self._log()[1]

    def confirm_if_asked(self) -> None:
        """A player looks at the trick and presses confirm, once for each guess shown, and
        again at a whole trick the table still holds: a confirm pressed as the guess was shown,
        before its trick was whole, counted nothing (the table holds only a whole trick)."""
        count, waiting, held = self.guesses()
        if waiting and count > self.guesses_confirmed:
            self.guesses_confirmed = count
            self.evidence.confirms += 1
            os.write(self.keys, b"\n")
        elif held is not None and held != self.held_pressed:
            self.held_pressed = held
            self.evidence.confirms += 1
            os.write(self.keys, b"\n")

    def lying(self) -> dict[str, str | None]:
        return dict(zip(ZONES, self.emu.tags()))

    def wait_until(self, what: str, fact) -> None:
        def looked() -> bool:
            if fact():
                return True
            self.confirm_if_asked()
            if self.proc.poll() is not None:
                raise AssertionError(f"the service exited ({self.proc.returncode}) while waiting for "
                                     f"{what}\n{self.stderr()[-3000:]}")
            if time.monotonic() - self._ticked >= POLL:    # pacing only: never measured
                self._ticked = time.monotonic()
                self.link_clock.advance(POLL)      # the link's replies time out as time passes
                if not self.emu.silent:            # a hung hub does nothing
                    self.emu.advance(HUB_STEP_MS)
            return False

        try:
            wait_until(looked, what, HANG, interval=LOOK)
        except AssertionError as exc:
            if "never happened" not in str(exc):
                raise
            raise AssertionError(f"no {what} after {HANG:g} s: log has {self.logged()}, "
                                 f"the table has {self.lying()}\n{self.stderr()[-3000:]}") from None

    def sync(self, done: int) -> None:
        """Wait until the service has logged every play of ``events[:done]`` and sees the
        table as it lies."""
        want = (self.plays[done], self.lying())
        self.wait_until(f"{want[0]} plays and the table {want[1]}", lambda: self.logged() == want)
        self.unconfirmed.clear()

    def wait_connected(self, before: int) -> None:
        """Wait for the host's next handshake.  Edges the hub sends while the host has its
        port closed are lost without a trace (it flushes its input when it opens): a lift
        lost so, before a lay the host does hear, has no time, and the host rightly says
        the order was guessed and waits for `confirm` -- a real loss, not what this soak
        checks (cards laid while the service is down are heard, from the STATE)."""
        self.wait_until("the host's handshake", lambda: self.said(CONNECTED) > before)

    def said(self, words: str) -> int:
        return self.stderr().count(words)

    # ------------------------------------------------------------------ play

    def play(self) -> None:
        # the players lay their first cards once the table says the hub is connected, as at a
        # real table: READY=1 comes when the session is open, which can be before the link has
        # opened its port, and an edge sent before that is lost (see wait_connected)
        connects = self.said(CONNECTED)
        self.start()
        self.wait_connected(connects)
        pending = list(self.faults)
        last_zone: dict[str, str] = {}         # where each tag was last laid
        for i, event in enumerate(self.events):
            while pending and pending[0].at == i:
                self.inject(pending.pop(0), i)
            zone, uid = event.zone, event.uid
            if event.event == REMOVED and zone in self.unconfirmed:
                self.sync(i)                   # a card lies until the service has it
            if event.event == PLACED and last_zone.get(uid, zone) != zone and self.lying()[zone] != uid:
                # the next deal deals a card again: gathered and shuffled first, which takes a
                # real table longer than the hub's absent_ms (its lift reported before it is
                # laid elsewhere; the soak does not play faster than cards can be dealt)
                self.sync(i)
            if event.event == PLACED:
                last_zone[uid] = zone
            if event.event == PLACED:
                self.unconfirmed.add(zone)
                if self.lying()[zone] != uid:      # else a repeated read, or laid while the service was down
                    self.emu.flip(READER[zone], uid)
            else:
                self.emu.flip(READER[zone], None)
        self.sync(len(self.events))

    def inject(self, fault: Fault, i: int) -> None:
        emu = self.emu
        self.evidence.faults.append(fault.kind)
        if fault.kind == "drop":
            emu.drop_next(fault.count, fault.verbs)
        elif fault.kind == "corrupt":
            emu.corrupt_next(fault.count, fault.verbs)
        elif fault.kind == "garbage":
            emu.send_garbage(fault.data)
        elif fault.kind == "reboot":
            # the service has every card first: a hub that loses power with edges unsent
            # forgets their order (its new boot has no edge_ms for them), and the host
            # rightly says it guessed -- a real loss, not what this soak checks
            self.sync(i)
            emu.reboot()
            self.evidence.boots.append(emu.boot_id)
        elif fault.kind == "silence":
            timeouts, connects = self.said("no HB for"), self.said(CONNECTED)
            emu.go_silent(10 * HANG)            # hung until the host has given up on it
            self.link_clock.advance(HB_TIMEOUT + POLL)   # no HB for the protocol's 3 s, at once
            self.wait_until("reconnect after the silence", lambda: self.said("no HB for") > timeouts)
            emu.clear_faults()
            self.wait_connected(connects)
        elif fault.kind == "unplug":
            # the host has noticed once it tries to open the port again (one line each time)
            reopening = self.said(NO_DEVICE)
            self.sync(i)                        # as for a reboot
            connects = self.said(CONNECTED)
            emu.unplug()
            self.wait_until("the host trying to reopen after the unplug", lambda: self.said(NO_DEVICE) > reopening)
            emu.replug()
            self.wait_connected(connects)
            self.evidence.boots.append(emu.boot_id)
        elif fault.kind == "sigkill":
            # systemd's SIGKILL (its stop timeout ran out) goes to the unit's whole cgroup: the
            # service and the analysis worker it spawned (a worker left alive would fail to
            # start with a traceback once its parent is gone)
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.evidence.kills.append(self.proc.wait())
            self.lay_while_down(i)
            connects = self.said(CONNECTED)
            self.start()
            self.wait_connected(connects)
        else:
            raise ValueError(fault.kind)

    def lay_while_down(self, i: int) -> None:
        """Cards laid while the service is dead (at most the next two, and only up to the
        next lift): the restarted service must learn them, in order, from STATE."""
        for event in self.events[i:i + 2]:
            if event.event != PLACED:
                return
            if self.lying()[event.zone] != event.uid:
                self.emu.flip(READER[event.zone], event.uid)
                self.evidence.laid_while_down += 1
