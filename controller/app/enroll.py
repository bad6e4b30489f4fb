"""``preftable enroll``: guided enrolment of a deck of tagged cards.

The display asks for each card of :data:`~controller.cards.DECK` in turn
("place 7♠"); the next tag read becomes that card, unless its UID is already
in the deck ("already enrolled as 8s", a beep, place another).  The tag must be
lifted before the next card is asked for, so a tag lying on a reader is never
enrolled twice.  The deck file is rewritten atomically after every card, so
an interrupted enrolment resumes with the first missing card.

:class:`Enrolment` is the logic, driven by table events and free of threads
and I/O; :func:`cmd_enroll` wires the configured reader backend's source to it
(:mod:`controller.app.backends`: sim, hub, SPI readers or any other registered)
through a queue and renders it on the configured outputs.
"""

from __future__ import annotations

import argparse
import logging
import os
import queue
import random
import shlex
import signal
import sys
import textwrap
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Sequence

from ..core.cards import DECK, Card
from ..core.deck import Deck, load_deck
from ..core.errors import ConfigError, DeckError
from ..core.events import PLACED, REMOVED, TableEvent, placed, removed
from ..core.tokens import TOKENS
from ..core.view import DISPLAY_COLS, DISPLAY_ROWS, ERROR, TURN, Indications
from . import backends, stop_signals
from .backends import ReaderSource

log = logging.getLogger(__name__)

REFUSAL_BEEP_MS = 300
DECK_MODE = 0o644
EXIT_INTERRUPTED = 130

# Message kinds returned by Enrolment.on_event.
ENROLLED = "enrolled"     # the tag became the asked-for card
REFUSED = "refused"       # the tag is already in the deck
WAIT_LIFT = "wait_lift"   # another tag was placed before the last one was lifted
LIFTED = "lifted"         # the last enrolled tag was lifted: the next card is asked for
IGNORED = "ignored"       # a tag on another zone than --zone
DONE = "done"             # the deck is complete
BLOCKED = "blocked"       # tags lay on readers when the enrolment started: they must be lifted first
READY_WAIT_S = 5.0        # how long the enrolment waits for the hub's picture before it starts anyway


@dataclass(frozen=True)
class Message:
    """What one table event did to the enrolment, in a line for the user."""

    kind: str
    text: str
    card: Card | None = None
    uid: str | None = None
    zone: str | None = None


class Enrolment:
    """The enrolment of one deck, event by event (no threads, no I/O).

    ``deck`` is what is enrolled so far (a partial deck: resume); ``zone``
    limits the tags taken to one zone (None: any zone).
    """

    def __init__(self, deck: Deck | None = None, zone: str | None = None):
        self.cards: dict[str, Card] = dict(deck.cards) if deck is not None else {}
        self.bids: dict[str, str] = dict(deck.bids) if deck is not None else {}   # kept as they are
        self.zone = zone
        self.resumed_with = len(self.cards)
        self.lifting: tuple[str, Card] | None = None   # (uid, card) enrolled, not yet lifted
        self.last: Message | None = None
        self.alert_zone: str | None = None
        self.blocked: set[str] = set()          # zones that must be cleared before the first card

    def clear_first(self, zones: Iterable[str]) -> list[Message]:
        """Tags lie on these zones at the start: nothing is enrolled until they are lifted."""
        self.blocked = set(zones)
        return self._say(self._blocked_message()) if self.blocked else []

    def _blocked_message(self) -> Message:
        zones = sorted(self.blocked)
        return Message(BLOCKED, f"a tag lies on {', '.join(zones)}: take it off first", None, None, zones[0])

    # --- state ------------------------------------------------------------------------

    @property
    def deck(self) -> Deck:
        return Deck(dict(self.cards), dict(self.bids))

    def known(self, uid: str) -> str | None:
        """What ``uid`` is enrolled as already (a card, or a bidding token), or None."""
        if uid in self.cards:
            return str(self.cards[uid])
        if uid in self.bids:
            return f"token {self.bids[uid]}"
        return None

    @property
    def missing(self) -> list[Card]:
        have = set(self.cards.values())
        return [c for c in DECK if c not in have]

    @property
    def next_card(self) -> Card | None:
        """The card asked for next (None once the deck is complete)."""
        missing = self.missing
        return missing[0] if missing else None

    @property
    def done(self) -> bool:
        return not self.missing

    @property
    def progress(self) -> str:
        return f"{len(self.cards)}/{len(DECK)}"

    # --- events -----------------------------------------------------------------------

    def on_event(self, event: TableEvent) -> list[Message]:
        """Feed one table event; return what it did (empty: nothing to say)."""
        if event.uid is None or event.event not in (PLACED, REMOVED) or self.done:
            return []
        uid = event.uid.upper()
        if self.blocked:
            if event.event == REMOVED:
                self.blocked.discard(event.zone)
            else:
                self.blocked.add(event.zone)
            if self.blocked:
                return self._say(self._blocked_message())
            return self._say(Message(LIFTED, f"readers clear, place {self.next_card}", None, uid, event.zone))
        if event.event == REMOVED:
            if self.lifting is not None and self.lifting[0] == uid:
                card = self.lifting[1]
                self.lifting = None
                self.alert_zone = None
                nxt = self.next_card
                return self._say(Message(LIFTED, f"{card} lifted, place {nxt}" if nxt else f"{card} lifted",
                                         card, uid, event.zone))
            return []
        if self.zone is not None and event.zone != self.zone:
            return self._say(Message(IGNORED, f"tag on {event.zone}: use {self.zone}", None, uid, event.zone))
        if self.known(uid) is not None:
            self.alert_zone = event.zone
            return self._say(Message(REFUSED, f"already enrolled as {self.known(uid)}",
                                     self.cards.get(uid), uid, event.zone))
        if self.lifting is not None:
            self.alert_zone = event.zone
            return self._say(Message(WAIT_LIFT, f"lift {self.lifting[1]} first, then place again",
                                     None, uid, event.zone))
        card = self.next_card
        self.cards[uid] = card
        self.alert_zone = None
        out = [Message(ENROLLED, f"{card} = {uid}", card, uid, event.zone)]
        if self.done:
            out.append(Message(DONE, "all cards enrolled"))
        else:
            self.lifting = (uid, card)
        return self._say(*out)

    def _say(self, *messages: Message) -> list[Message]:
        for m in messages:
            log.info("enrol: %s", m.text)
        self.last = messages[-1]
        return list(messages)

    # --- what the table shows -----------------------------------------------------------

    def indications(self, beep_ms: int = 0) -> Indications:
        """Row 0 the request, row 1 the progress, rows 2-3 the last message."""
        if self.done:
            head = "deck complete"
        elif self.blocked:
            head = "clear " + " ".join(sorted(self.blocked))
        elif self.lifting is not None:
            head = f"lift {self.lifting[1].pretty}"
        else:
            head = f"place {self.next_card.pretty}"
        progress = self.progress + (f" on {self.zone}" if self.zone else "")
        tail = textwrap.wrap(self.last.text, DISPLAY_COLS) if self.last else []
        lines = [head, progress] + tail[:DISPLAY_ROWS - 2]
        lines = [line[:DISPLAY_COLS] for line in lines] + [""] * (DISPLAY_ROWS - len(lines))
        leds: dict[str, str] = {}
        if self.zone is not None and not self.done:
            leds[self.zone] = TURN
        if self.alert_zone is not None:
            leds[self.alert_zone] = ERROR
        for zone in self.blocked:
            leds[zone] = ERROR
        return Indications(leds=leds, lines=tuple(lines), beep_ms=beep_ms)


# --- bidding tokens (enroll --bids) ---------------------------------------------------------

@dataclass(frozen=True)
class TokenItem:
    """One bidding token to enrol: a word of :data:`~controller.core.tokens.TOKENS` in set
    ``of`` (1-based) of ``sets`` (a set per seat, or one shared set passed round)."""

    word: str
    of: int = 1
    sets: int = 1

    def __str__(self) -> str:
        return f"token {self.word}" + (f" of set {self.of}" if self.sets > 1 else "")

    @property
    def pretty(self) -> str:
        return f"token {self.word}" if self.sets == 1 else f"{self.word} of set {self.of}"


class TokenEnrolment(Enrolment):
    """The enrolment of ``sets`` sets of bidding tokens into the deck file's ``[bids]`` table,
    the same guided way as the cards: each word of every set in turn, set by set, a tag
    already enrolled (card or token) refused, each lifted before the next is asked for.
    The deck's cards are kept as they are.  Resumes with the first token missing."""

    def __init__(self, deck: Deck | None = None, zone: str | None = None, sets: int = 1):
        super().__init__(deck, zone)
        self.sets = sets
        by_word: dict[str, int] = {}
        for uid, word in sorted(self.bids.items()):   # tokens already enrolled take the first sets
            by_word[word] = by_word.get(word, 0) + 1
            self.cards[uid] = TokenItem(word, by_word[word], sets)
        self.bids = {}                                  # now held in self.cards, as TokenItems
        self.resumed_with = len(self._tokens())
        self._total = sets * len(TOKENS)

    def _tokens(self) -> dict:
        return {uid: item for uid, item in self.cards.items() if isinstance(item, TokenItem)}

    @property
    def deck(self) -> Deck:
        cards = {uid: c for uid, c in self.cards.items() if not isinstance(c, TokenItem)}
        return Deck(cards, {uid: item.word for uid, item in self._tokens().items()})

    @property
    def enrolled(self) -> int:
        return len(self._tokens())

    @property
    def missing(self) -> list[TokenItem]:
        have = {(item.word, item.of) for item in self._tokens().values()}
        return [TokenItem(word, of, self.sets) for of in range(1, self.sets + 1) for word in TOKENS
                if (word, of) not in have]

    @property
    def progress(self) -> str:
        return f"{len(self._tokens())}/{self._total}"

    def on_event(self, event: TableEvent) -> list[Message]:
        messages = [Message(DONE, "all tokens enrolled") if m.kind == DONE else m
                    for m in super().on_event(event)]
        if messages:
            self.last = messages[-1]
        return messages

    def indications(self, beep_ms: int = 0) -> Indications:
        ind = super().indications(beep_ms)
        if self.done:
            ind = Indications(leds=ind.leds, lines=("tokens complete",) + tuple(ind.lines[1:]),
                              beep_ms=ind.beep_ms)
        return ind


# --- a simulated helper for the sim backend --------------------------------------------

class EnrolSimSource(ReaderSource):
    """A simulated helper laying fresh tags (``04`` + 6 random bytes) one at a time,
    each lifted after being read; now and then it lays an already enrolled one
    again (to show the refusal).  Deterministic for a seed; runs until stopped."""

    def __init__(self, zones: Sequence[str], *, seed: int | None = None, speed: float = 1.0,
                 known: Iterable[str] = (), repeat: float = 0.15, step_s: float = 0.5,
                 clock: Callable[[], float] = time.monotonic):
        self.zones = tuple(zones)
        self.rng = random.Random(seed)
        self.delay = step_s / speed
        self.known = [u.upper() for u in known]
        self.repeat = repeat
        self.clock = clock
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def events(self):
        """The helper's table events, forever (timestamps added when sent)."""
        while True:
            zone = self.rng.choice(self.zones)
            if self.known and self.rng.random() < self.repeat:
                uid = self.rng.choice(self.known)
            else:
                uid = "04" + "".join(f"{self.rng.randrange(256):02X}" for _ in range(6))
                self.known.append(uid)
            yield PLACED, zone, uid
            yield REMOVED, zone, uid

    def start(self, sink: Callable[[TableEvent], None]) -> None:
        def run() -> None:
            for kind, zone, uid in self.events():
                if self._stop.wait(self.delay):
                    return
                make = placed if kind == PLACED else removed
                sink(make(self.clock(), zone, uid=uid))

        self._thread = threading.Thread(target=run, name="enrol helper", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=2)

    def lying(self, timeout: float) -> list[str]:
        """The helper starts with every reader clear."""
        return []


# --- the command --------------------------------------------------------------------------

def save_deck(path: Path, deck: Deck) -> None:
    """Write the (possibly partial) deck atomically; DeckError if it cannot be written."""
    from ..store.gamelog import write_atomic

    try:
        write_atomic(path, deck.to_toml().encode("utf-8"))
        # readable by all: the service reads it as its own user (preftable), and the deck is
        # usually enrolled with sudo into /etc/preftable (a game log's 0640 would lock it out)
        os.chmod(path, DECK_MODE)
    except OSError as exc:
        raise DeckError(f"{path}: cannot write the deck file: {exc.strerror or exc}") from None


def load_partial(path: Path) -> Deck:
    """The deck enrolled so far: empty when the file does not exist yet."""
    if not path.exists():
        return Deck({})
    return load_deck(path, complete=False)


class EnrolRun:
    """One run of the command: source -> queue -> :class:`Enrolment` -> outputs and deck file.

    ``source`` is any reader backend's (:class:`~controller.app.backends.ReaderSource`): what
    it says lies on the readers as it starts must be lifted before the first tag is taken."""

    def __init__(self, path: Path, enrolment: Enrolment, source, outputs: Sequence = (),
                 tick_s: float = 0.05):
        self.path = path
        self.enrolment = enrolment
        self.source = source
        self.outputs = list(outputs)
        self.tick_s = tick_s
        self.queue: queue.Queue = queue.Queue()
        self.stop_event = threading.Event()
        self.on_message: Callable[[Message], object] | None = None
        self.started = threading.Event()    # set once what lay on the readers at the start is known

    def _show(self, ind: Indications) -> None:
        now = time.monotonic()
        for out in self.outputs:
            out.show(ind, now)

    def run(self) -> bool:
        """Enrol until the deck is complete (True) or :meth:`stop` (False)."""
        enrolment = self.enrolment
        self.source.start(self.queue.put)
        try:
            # what lies on the readers now would be enrolled at once: it must be lifted first
            lying = self.source.lying(READY_WAIT_S)
            for m in enrolment.clear_first(lying or []):
                if self.on_message is not None:
                    self.on_message(m)
            self.started.set()
            self._show(enrolment.indications())
            while not enrolment.done and not self.stop_event.is_set():
                try:
                    event = self.queue.get(timeout=self.tick_s)
                except queue.Empty:
                    event = None
                if event is not None:
                    messages = enrolment.on_event(event)
                    if any(m.kind == ENROLLED for m in messages):
                        save_deck(self.path, enrolment.deck)
                    if self.on_message is not None:
                        for m in messages:
                            self.on_message(m)
                    beep = REFUSAL_BEEP_MS if any(m.kind in (REFUSED, WAIT_LIFT) for m in messages) else 0
                    if messages:
                        self._show(enrolment.indications(beep))
                now = time.monotonic()
                # again without the beep: an output that was not ready (the hub) catches up
                self._show(enrolment.indications())
                for out in self.outputs:
                    out.tick(now)
        finally:
            self.source.stop()
        return enrolment.done

    def stop(self) -> None:
        self.stop_event.set()

    def close(self) -> None:
        for out in self.outputs:
            try:
                out.close()
            except OSError as exc:
                log.warning("closing an output: %s", exc)


def cmd_enroll(args: argparse.Namespace, *, stream=None) -> int:
    """``preftable enroll``; ``stream`` replaces standard output (tests)."""
    from .settings import load_settings
    from .sources import SessionClock

    out = stream or sys.stdout
    settings = load_settings(args.config)
    if not backends.simulated(settings):          # the service would be reading the same tags
        from .doctor import refuse_if_service_runs
        refuse_if_service_runs(settings)
    backends.preflight(settings, wait=getattr(args, "wait", False))
    zone = args.zone
    if zone is not None and zone not in settings.zones:
        raise ConfigError(f"--zone: must be one of {', '.join(settings.zones)}, got {zone!r}", "zone")
    path = settings.deck_file(args.deck)          # --deck, else the config's [table] deck
    if path is None:
        raise ConfigError("no deck file to write: pass --deck DECK, or set [table] deck = \"deck.toml\" "
                          "in the config and give it with --config", "deck")
    deck = load_partial(path)
    sets = getattr(args, "bids", None)              # enroll --bids [SETS]: bidding tokens
    if sets is not None and sets < 1:
        raise ConfigError(f"--bids: the number of token sets must be at least 1, got {sets}", "bids")
    enrolment = Enrolment(deck, zone) if sets is None else TokenEnrolment(deck, zone, sets)
    what = "cards" if sets is None else "tokens"
    again = ["preftable", "enroll", "--deck", str(path)]
    if args.config:
        again += ["--config", args.config]
    if zone:
        again += ["--zone", zone]
    if sets is not None:
        again += ["--bids", str(sets)]
    resume = f"run `{shlex.join(again)}` again to continue"
    if sets is not None and enrolment.done:
        out.write(f"{path}: bidding tokens already complete ({enrolment.progress} tokens); nothing to enrol\n")
        return 0
    if enrolment.done:
        load_deck(path)
        out.write(f"{path}: deck already complete ({len(DECK)} cards); nothing to enrol\n")
        return 0
    if not path.exists():
        save_deck(path, enrolment.deck)       # fail now, not after the first card, if it cannot be written
    elif enrolment.resumed_with:
        out.write(f"{path}: resuming: {enrolment.progress} {what} enrolled, next {enrolment.next_card}\n")
    with backends.open_pins(settings) as pins:
        ctx = backends.RunContext(settings, clock=SessionClock(), pins=pins, stream=out)
        ctx = backends.with_reader(ctx, enrolling=(zone, enrolment.cards))
        runner = EnrolRun(path, enrolment, ctx.source, backends.build_outputs(ctx))

        def say(message: Message) -> None:
            out.write(f"{enrolment.progress} {message.text}\n")
            out.flush()

        if settings.section("display").kind != "terminal":    # the display is elsewhere: say it here too, a line each
            runner.on_message = say

        def on_term(signum, frame):
            log.info("signal %d: stopping the enrolment", signum)
            runner.stop()

        try:
            with stop_signals.handling(on_term, (signal.SIGTERM,)):     # Ctrl-C: KeyboardInterrupt, below
                complete = runner.run()
        except KeyboardInterrupt:
            save_deck(path, enrolment.deck)       # in case Ctrl-C fell between a card and its save
            sys.stderr.write(f"preftable: enrolment interrupted: {enrolment.progress} {what} saved in {path}; "
                             f"{resume}\n")
            return EXIT_INTERRUPTED
        finally:
            runner.close()
    if not complete:
        sys.stderr.write(f"preftable: enrolment stopped: {enrolment.progress} {what} saved in {path}; {resume}\n")
        return 0
    if sets is not None:
        load_deck(path, complete=False)       # the file on disk is a valid deck file
        out.write(f"{path}: bidding tokens complete, {enrolment.progress} tokens in {sets} set"
                  f"{'s' if sets > 1 else ''} ({enrolment.enrolled - enrolment.resumed_with} enrolled now)\n")
        return 0
    load_deck(path)                           # the file on disk is a valid, complete deck
    added = len(enrolment.cards) - enrolment.resumed_with
    out.write(f"{path}: deck complete, {len(DECK)} cards ({added} enrolled now)\n")
    return 0


def add_enroll(sub) -> None:
    """Register ``preftable enroll`` on the CLI's subparsers."""
    p = sub.add_parser("enroll", help="enrol a new deck of tagged cards, card by card (resumable)")
    p.add_argument("--deck", help="deck file (TOML) to write; an existing partial one is resumed "
                                  "(default: [table] deck of the config, the file the service reads)")
    p.add_argument("--config", help="config file (TOML); a simulated table when omitted")
    p.add_argument("--zone", help="take tags only from this zone (seat1, ..., prikup); default: any")
    p.add_argument("--wait", action="store_true",
                   help="with a hub port that does not exist (yet), wait for it instead of stopping")
    p.add_argument("--bids", type=int, nargs="?", const=1, metavar="SETS",
                   help="enrol bidding tokens instead of cards: SETS sets (default 1; one per seat, or "
                        "one shared) into the deck file's [bids] table")
    p.set_defaults(func=cmd_enroll)


__all__ = ["Enrolment", "TokenEnrolment", "TokenItem", "Message", "EnrolSimSource", "EnrolRun", "cmd_enroll", "add_enroll",
           "save_deck", "load_partial", "ENROLLED", "REFUSED", "WAIT_LIFT", "LIFTED", "IGNORED", "DONE"]
