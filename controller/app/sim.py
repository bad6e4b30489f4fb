"""Simulated players: random raspasovka deals as table events.

Used by ``preftable demo``, the benchmarks and the tests.  Players deal, lay
legal cards (following suit when able) and clear tricks at their own pace;
optional noise adds what a real table does: flickering tags, repeated reads,
out-of-turn cards taken back, a card of a closed trick laid again, unknown
tags, and now and then a revoke.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Iterator

from ..core.cards import DECK, Card, next_seat
from ..core.config import GameConfig
from ..core.deal import PRIKUP, Deal
from ..core.deck import Deck
from ..core.events import PLACED, REMOVED, TableEvent


@dataclass(frozen=True)
class Noise:
    """Probabilities, per accepted card, of each kind of table mess."""

    flicker: float = 0.0
    repeat: float = 0.0
    out_of_turn: float = 0.0
    same_card: float = 0.0
    unknown_tag: float = 0.0
    revoke: float = 0.0

    @classmethod
    def demo(cls) -> "Noise":
        return cls(flicker=0.04, repeat=0.02, out_of_turn=0.01, same_card=0.005,
                   unknown_tag=0.002, revoke=0.002)


class TableSimulator:
    """Generates the table events of whole deals, played legally by simulated players.

    The series (dealer, price) follows the rules as RULES.md says; the simulator
    keeps its own :class:`~controller.deal.Deal` to know whose turn it is.
    """

    def __init__(self, config: GameConfig, *, seed: int | None = None, deck: Deck | None = None,
                 noise: Noise = Noise(), step_s: float = 0.5, gather_s: float = 2.0,
                 min_gap_s: float = 0.0):
        self.config = config
        self.rules = config.rules
        self.players = config.table.players
        self.rng = random.Random(seed)
        self.deck = deck
        self.noise = noise
        self.step_s = step_s
        self.gather_s = gather_s
        self.min_gap_s = min_gap_s
        self.t = 0.0
        self.dealer = config.table.first_dealer
        self.step = 0
        self.number = 0
        self.uids = {card: uid for uid, card in deck.cards.items()} if deck else {}

    # --- events --------------------------------------------------------------------

    def _tick(self) -> float:
        self.t = round(self.t + max(self.min_gap_s, self.step_s * (0.3 + self.rng.random())), 3)
        return self.t

    def _ev(self, kind: str, zone: str, card: Card) -> TableEvent:
        uid = self.uids.get(card)
        if uid is not None:
            return TableEvent(self._tick(), kind, zone, uid=uid)
        return TableEvent(self._tick(), kind, zone, card=card)

    def _unknown(self, zone: str, kind: str) -> TableEvent:
        return TableEvent(self._tick(), kind, zone, uid="DEADBEEF")

    # --- deals ---------------------------------------------------------------------

    def deals(self, count: int) -> Iterator[TableEvent]:
        """The events of ``count`` complete deals, advancing the series after each."""
        for _ in range(count):
            yield from self.deal()

    def deal(self) -> Iterator[TableEvent]:
        """The events of one complete deal (the cards are cleared at its end)."""
        self.number += 1
        price = self.rules.progression[self.step]
        deal = Deal(self.number, self.dealer, price, self.step, self.players, self.rules)
        cards = list(DECK)
        self.rng.shuffle(cards)
        hands = {seat: cards[i * 10:(i + 1) * 10] for i, seat in enumerate(deal.active)}
        prikup = cards[30:32]
        on_table: list[tuple[str, Card]] = []
        closed: list[tuple[str, Card]] = []
        noise, rng = self.noise, self.rng
        while not deal.finished:
            zone = deal.expected
            if zone == PRIKUP:
                card = prikup.pop(0)
            else:
                card = self._choose(deal, hands[zone])
                hands[zone].remove(card)
            if not deal.current and on_table:
                # the next leader may lay before the closed trick is cleared: clear part of it first
                keep = rng.randint(0, len(on_table))
                for z, c in on_table[keep:]:
                    yield self._ev(REMOVED, z, c)
                on_table = on_table[:keep]
            # a place holds one card at a time (a reader reads one tag): clear it before laying
            for z, c in [zc for zc in on_table if zc[0] == zone]:
                yield self._ev(REMOVED, z, c)
                on_table.remove((z, c))
            occupied = {z for z, _ in on_table}
            if noise.out_of_turn and rng.random() < noise.out_of_turn:
                yield from self._out_of_turn(hands, zone, occupied)
            if noise.unknown_tag and rng.random() < noise.unknown_tag:
                yield self._unknown(zone, PLACED)
                yield self._unknown(zone, REMOVED)
            if noise.same_card and closed and rng.random() < noise.same_card:
                old_zone, old = rng.choice(closed)
                if old_zone not in occupied:
                    yield self._ev(PLACED, old_zone, old)
                    yield self._ev(REMOVED, old_zone, old)
            yield self._ev(PLACED, zone, card)
            on_table.append((zone, card))
            if noise.repeat and rng.random() < noise.repeat:
                yield self._ev(PLACED, zone, card)
            trick, _ = deal.play(zone, card)
            if trick is None and noise.flicker and rng.random() < noise.flicker:
                yield self._ev(REMOVED, zone, card)
                yield self._ev(PLACED, zone, card)
            if trick is not None:
                closed.extend(trick.cards)
        for z, c in on_table:
            yield self._ev(REMOVED, z, c)
        self.t = round(self.t + self.gather_s, 3)      # gathering and shuffling
        self._advance(deal)

    def _choose(self, deal: Deal, hand: list[Card]) -> Card:
        if deal.current:
            led = deal.current[0][1].suit
            follow = [c for c in hand if c.suit == led]
            others = [c for c in hand if c.suit != led]
            if follow and others and self.noise.revoke and self.rng.random() < self.noise.revoke:
                return self.rng.choice(others)
            if follow:
                return self.rng.choice(follow)
        return self.rng.choice(hand)

    def _out_of_turn(self, hands: dict[str, list[Card]], due: str, occupied: set[str]):
        seats = [s for s in hands if s != due and hands[s] and s not in occupied]
        if not seats:
            return
        seat = self.rng.choice(seats)
        card = self.rng.choice(hands[seat])
        yield self._ev(PLACED, seat, card)
        yield self._ev(REMOVED, seat, card)

    def _advance(self, deal: Deal) -> None:
        if self.rules.same_dealer and self.step + 1 < len(self.rules.progression):
            self.step += 1
        else:
            self.step = 0
            self.dealer = next_seat(self.dealer, self.players)


def make_deck(seed: int = 0) -> Deck:
    """A deck of 32 made-up 7-byte NTAG-style UIDs (``04`` + 6 bytes), for simulations."""
    rng = random.Random(seed)
    uids: dict[str, Card] = {}
    for card in DECK:
        while True:
            uid = "04" + "".join(f"{rng.randrange(256):02X}" for _ in range(6))
            if uid not in uids:
                break
        uids[uid] = card
    return Deck(uids)


__all__ = ["Noise", "TableSimulator", "make_deck"]
