"""Real card sequences for contract and misère deals, found by a seeded search.

A second, independent reading of RULES-contracts.md "Play" (first hand leads
trick 1, then the winner; follow suit, else trump, else any; the highest trump
wins, else the highest card of the led suit), written here without
controller.core.deal, so the tracker is checked against it.  ``find_play``
searches seeds until a deal's trick counts are the ones a worked example names.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from controller.core.cards import DECK, Card

SEATS = {3: ["seat1", "seat2", "seat3"], 4: ["seat1", "seat2", "seat3", "seat4"]}


def active_after(dealer: str, players: int) -> list[str]:
    seats = SEATS[players]
    i = seats.index(dealer)
    return [seats[(i + k) % players] for k in range(1, 4)]


def trump_of(game: str) -> str | None:
    return None if game == "misere" or game.endswith("n") else game[-1]


def legal_cards(hand: list[Card], led: str | None, trump: str | None) -> list[Card]:
    if led is None:
        return list(hand)
    same = [c for c in hand if c.suit == led]
    if same:
        return same
    trumps = [c for c in hand if c.suit == trump]
    return trumps or list(hand)


def trick_winner(cards: list[tuple[str, Card]], trump: str | None) -> str:
    trumps = [(c.rank, z) for z, c in cards if c.suit == trump]
    if trumps:
        return max(trumps)[1]
    led = cards[0][1].suit
    return max((c.rank, z) for z, c in cards if c.suit == led)[1]


@dataclass
class Played:
    tricks: list[list[tuple[str, Card]]]
    winners: list[str]
    hands: dict[str, list[Card]]
    prikup: list[Card]
    revoke: tuple[int, str] | None = None          # (trick index, seat) of an injected revoke
    taken: dict[str, int] = field(default_factory=dict)


def _strength(card: Card, trump: str | None) -> int:
    return card.rank + (10 if card.suit == trump else 0)


def play_deal(rng: random.Random, active: list[str], game: str, declarer: str | None,
              strength: int = 0, revoke: tuple[int, str, str] | None = None) -> Played | None:
    """One deal of legal random play.  ``strength`` > 0 gives the declarer strong cards
    (misère: weak ones).  ``revoke = (trick, seat, "trump"|"discard")``: in that trick
    ``seat`` plays an illegal card (a trump, or a side card, while holding the led suit);
    returns None if the cards do not allow it."""
    trump = trump_of(game)
    cards = list(DECK)
    rng.shuffle(cards)
    hands: dict[str, list[Card]] = {}
    if declarer is not None and strength:
        ranked = sorted(cards, key=lambda c: _strength(c, trump), reverse=game != "misere")
        pool = ranked[:10 + 22 - strength]
        hands[declarer] = rng.sample(pool, 10)
        rest = [c for c in cards if c not in hands[declarer]]
    else:
        rest = cards
    for seat in active:
        if seat not in hands:
            hands[seat], rest = rest[:10], rest[10:]
    prikup = rest
    start = {s: list(h) for s, h in hands.items()}
    tricks, winners, leader, injected = [], [], active[0], None
    for n in range(10):
        i = active.index(leader)
        order = active[i:] + active[:i]
        plays: list[tuple[str, Card]] = []
        for seat in order:
            led = plays[0][1].suit if plays else None
            hand = hands[seat]
            pool = legal_cards(hand, led, trump)
            if revoke is not None and revoke[0] == n and revoke[1] == seat and led is not None:
                if not any(c.suit == led for c in hand):
                    return None
                if revoke[2] == "trump":
                    pool = [c for c in hand if c.suit == trump and trump != led]
                else:
                    pool = [c for c in hand if c.suit != led and c.suit != trump]
                if not pool:
                    return None
                injected = (n, seat)
            card = rng.choice(pool)
            hand.remove(card)
            plays.append((seat, card))
        leader = trick_winner(plays, trump)
        tricks.append(plays)
        winners.append(leader)
    if revoke is not None and injected is None:
        return None
    taken = {s: winners.count(s) for s in active}
    return Played(tricks, winners, start, prikup, injected, taken)


def find_play(active: list[str], game: str, declarer: str | None, taken: dict[str, int],
              revoke: tuple[int, str, str] | None = None, check=None, tries: int = 60_000) -> Played:
    """The first seeded deal whose trick counts are ``taken`` (and that passes ``check``)."""
    for seed in range(tries):
        rng = random.Random(seed)
        strength = seed % 23
        played = play_deal(rng, active, game, declarer, strength, revoke)
        if played is None or played.taken != {s: taken.get(s, 0) for s in active}:
            continue
        if check is None or check(played):
            return played
    raise AssertionError(f"no deal found for {game} {taken} {revoke}")
