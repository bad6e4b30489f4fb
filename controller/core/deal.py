"""One raspasovka deal as pure data: who plays when, tricks, winners, revokes.

:class:`Deal` knows nothing of readers or presence; the tracker feeds it the
cards it accepted.  Everything here is derived from the list of accepted
plays, so taking a card back (``undo``) is replaying all plays but the last.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .cards import Card, next_seat, seat_names
from .config import Rules

PRIKUP = "prikup"


@dataclass(frozen=True)
class Trick:
    """A closed trick: its leader (a seat or ``prikup``), cards in play order, and winner."""

    leader: str
    cards: tuple[tuple[str, Card], ...]
    winner: str | None

    def to_dict(self) -> dict:
        return {"leader": self.leader,
                "cards": {zone: str(card) for zone, card in self.cards},
                "winner": self.winner}


@dataclass(frozen=True)
class Revoke:
    """A proven revoke: ``seat`` failed to follow ``suit`` at play ``failed_at``
    (index into the deal's plays) and proved it by playing that suit at ``proven_at``."""

    seat: str
    suit: str
    failed_at: int
    proven_at: int


def active_seats(players: int, dealer: str) -> tuple[str, ...]:
    """The seats holding cards, clockwise from first hand (the dealer last with 3 players)."""
    count = 3 if players == 4 else players
    return tuple(next_seat(dealer, players, step) for step in range(1, count + 1))


@dataclass
class Deal:
    """State of one deal, advanced by :meth:`play` with cards already judged legal to lay."""

    number: int
    dealer: str
    price: int
    step: int
    players: int
    rules: Rules
    plays: list[tuple[str, Card]] = field(default_factory=list)
    tricks: list[Trick] = field(default_factory=list)
    current: list[tuple[str, Card]] = field(default_factory=list)
    played: set[Card] = field(default_factory=set)
    voids: dict[str, dict[str, int]] = field(default_factory=dict)
    revokes: list[Revoke] = field(default_factory=list)
    abandoned: bool = False

    def __post_init__(self) -> None:
        self.seats = seat_names(self.players)
        self.active = active_seats(self.players, self.dealer)
        self.prikup_leads = self.rules.prikup != "closed"
        self.total_tricks = 10
        self._order = self._trick_order(0, None)

    # --- who plays -----------------------------------------------------------------

    def _trick_order(self, index: int, previous_winner: str | None) -> tuple[str, ...]:
        if self.prikup_leads and index < 2:
            return (PRIKUP,) + self.active
        if index == 0 or (self.prikup_leads and index == 2):
            leader = self.active[0]
        else:
            leader = previous_winner
        at = self.active.index(leader)
        return self.active[at:] + self.active[:at]

    @property
    def expected(self) -> str | None:
        """The zone whose card is due next, or None when the deal is over."""
        if self.finished:
            return None
        return self._order[len(self.current)]

    @property
    def finished(self) -> bool:
        return len(self.tricks) == self.total_tricks

    @property
    def complete(self) -> bool:
        return self.finished and not self.abandoned

    # --- play ----------------------------------------------------------------------

    def play(self, zone: str, card: Card) -> tuple[Trick | None, Revoke | None]:
        """Record an accepted card; return the trick it closed and the revoke it proved."""
        index = len(self.plays)
        self.plays.append((zone, card))
        self.played.add(card)
        proven = None
        if zone != PRIKUP:
            voids = self.voids.get(zone)
            if voids and card.suit in voids and not any(
                    r.seat == zone and r.suit == card.suit for r in self.revokes):
                proven = Revoke(zone, card.suit, voids[card.suit], index)
                self.revokes.append(proven)
            if self.current:
                led = self.current[0][1].suit
                if card.suit != led:
                    self.voids.setdefault(zone, {}).setdefault(led, index)
        self.current.append((zone, card))
        if len(self.current) < len(self._order):
            return None, proven
        trick = Trick(self._order[0], tuple(self.current), self._winner(self.current))
        self.tricks.append(trick)
        self.current = []
        if not self.finished:
            self._order = self._trick_order(len(self.tricks), trick.winner)
        return trick, proven

    def _winner(self, cards: list[tuple[str, Card]]) -> str | None:
        led = cards[0][1].suit
        best_zone, best_rank = None, -1
        for zone, card in cards:
            if card.suit != led or (zone == PRIKUP and self.rules.prikup == "suit_only"):
                continue
            if card.rank > best_rank:
                best_zone, best_rank = zone, card.rank
        if best_zone == PRIKUP:
            return self.dealer
        return best_zone

    def without_last(self) -> "Deal":
        """A fresh deal with every play but the last (``undo``)."""
        deal = Deal(self.number, self.dealer, self.price, self.step, self.players, self.rules)
        for zone, card in self.plays[:-1]:
            deal.play(zone, card)
        return deal

    # --- results -------------------------------------------------------------------

    @property
    def taken(self) -> dict[str, int]:
        counts = {seat: 0 for seat in self.seats}
        for trick in self.tricks:
            if trick.winner is not None:
                counts[trick.winner] += 1
        return counts

    @property
    def charged_revoke(self) -> str | None:
        """The seat whose proven revoke came first in play order, or None."""
        if not self.revokes:
            return None
        return min(self.revokes, key=lambda r: r.failed_at).seat

    def in_current_trick(self, zone: str, card: Card) -> bool:
        return (zone, card) in self.current
