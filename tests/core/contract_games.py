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


# --- whole mixed games as table events (properties, resume tests, the benchmark) -----------

from controller.core.bidding import Auction, level as game_level          # noqa: E402
from controller.core.events import (BID, CONTRACT, PLACED, REMOVED, WHIST, WHIST_MODE,  # noqa: E402
                                    TableEvent, control)

GAMES = [f"{lv}{st}" for lv in range(6, 11) for st in "scdhn"]


def _next(seat: str, players: int) -> str:
    return f"seat{int(seat[4:]) % players + 1}"


def raspasovka_tricks(active, dealer, prikup_mode, prikup, choose):
    """Raspasovka's play order (RULES.md), independent of controller.core.deal: the tricks
    (lists of (zone, card)) and their winners; ``choose(zone, plays)`` takes the card a seat
    plays from its hand (the prikup's cards lead the first two tricks unless it is closed)."""
    tricks, winners, leader = [], [], active[0]
    for n in range(10):
        if prikup_mode != "closed" and n < 2:
            order = ["prikup"] + active
        else:
            if n == 0 or (prikup_mode != "closed" and n == 2):
                leader = active[0]
            i = active.index(leader)
            order = active[i:] + active[:i]
        plays = []
        for zone in order:
            plays.append((zone, prikup[n] if zone == "prikup" else choose(zone, plays)))
        led = plays[0][1].suit
        best = [(c.rank, z) for z, c in plays if c.suit == led and not (z == "prikup" and prikup_mode == "suit_only")]
        winner = max(best)[1] if best else None
        if winner == "prikup":
            winner = dealer
        leader = winner
        tricks.append(plays)
        winners.append(winner)
    return tricks, winners


def raspasovka_play(rng, players, dealer, prikup_mode, hands, prikup):
    """Legal random raspasovka tricks."""
    def choose(zone, plays):
        card = rng.choice(legal_cards(hands[zone], plays[0][1].suit if plays else None, None))
        hands[zone].remove(card)
        return card
    return raspasovka_tricks(active_after(dealer, players), dealer, prikup_mode, prikup, choose)[0]


class MixedGame:
    """Generates the table events of whole deals with ``rules.bidding``: random legal auctions
    (all-pass raspasovkas, contracts, misères), contract lines, whisting (both pass, half-whist,
    one or two whisters, whist_mode), legal play, the talon on the prikup zone; with ``noise``
    also refused lines, cards outside play, flicker, repeated reads and out-of-turn cards, none
    of which may change the result."""

    def __init__(self, cfg, seed: int = 0, noise: bool = False):
        self.cfg, self.rules, self.players = cfg, cfg.rules, cfg.table.players
        self.rng = random.Random(seed)                 # the game
        self.mess = random.Random(seed + 1) if noise else None   # the noise: the same game with or without it
        self.noise = noise
        self.clock = random.Random(seed + 2)
        self.t = 0.0
        self.dealer, self.step = cfg.table.first_dealer, 0

    def _tick(self) -> float:
        self.t = round(self.t + 0.1 + self.clock.random() * 0.3, 3)
        return self.t

    def _card(self, kind, zone, card):
        return TableEvent(0.0, kind, zone, card=card)          # stamped when yielded

    def _line(self, event, seat, value):
        return control(0.0, event, value, seat)

    def _auction(self, active):
        rng = self.rng
        auction = Auction(tuple(active))
        wanted = rng.random()
        out = []
        while auction.result is None:
            seat = auction.turn
            options = ["pass"]
            if wanted > 0.3:                       # about a third of the deals are all-pass raspasovkas
                options += [g for g in GAMES[:12] + ["misere"] if auction.refusal(seat, g) is None]
            calls = [c for c in options if c not in ("pass", "misere")][:3]
            if "misere" in options and rng.random() < 0.15:
                calls = ["misere"]
            call = rng.choice(calls) if calls and rng.random() < 0.55 else "pass"
            if self.noise and self.mess.random() < 0.1:
                wrong = next(s for s in active if s != seat)
                out.append(self._line(BID, wrong, "6s"))           # out of turn: refused
            auction.call(seat, call)
            out.append(self._line(BID, seat, call))
        return auction, out

    def deal(self):
        rng, players = self.rng, self.players
        dealer = self.dealer
        active = active_after(dealer, players)
        cards = list(DECK)
        rng.shuffle(cards)
        hands = {s: cards[i * 10:(i + 1) * 10] for i, s in enumerate(active)}
        talon = cards[30:]
        if self.noise and self.mess.random() < 0.3:    # a card laid before the auction decides
            seat = self.mess.choice(active)
            auction, calls = self._auction(active)
            first = next(i for i, e in enumerate(calls) if e.seat == active[0]) + 1   # after the first valid bid
            events = calls[:first] + [self._card(PLACED, seat, hands[seat][0])] + calls[first:]
            events.append(self._card(REMOVED, seat, hands[seat][0]))
        else:
            auction, events = self._auction(active)
        yield from events
        result = auction.result
        on_prikup = []
        if result == "raspasovka":
            tricks = raspasovka_play(rng, players, dealer, self.rules.prikup, hands, talon)
            yield from self._play(tricks)
            self._advance("raspasovka")
            return
        declarer, bid = auction.highest
        for card in talon:                               # the talon turned up: never a play
            yield self._card(PLACED, "prikup", card)
            on_prikup.append(card)
        if result == "misere":
            game = "misere"
            if rng.random() < 0.3:
                yield self._line(WHIST_MODE, None, rng.choice(["open", "closed"]))
        else:
            higher = [g for g in GAMES if GAMES.index(g) >= GAMES.index(bid)] if bid != "misere" else [bid]
            game = rng.choice(higher[:3])
            if self.noise and self.mess.random() < 0.2:
                yield self._line(CONTRACT, next(s for s in active if s != declarer), game)   # refused
            yield self._line(CONTRACT, declarer, game)
            if game_level(game) == 10 and not self.rules.ten_whisted:
                yield from self._clear_prikup(on_prikup)
                self._advance("unplayed")
                return
            i = active.index(declarer)
            first, second = active[(i + 1) % 3], active[(i + 2) % 3]
            sequences = [["whist", "whist"], ["whist", "pass"], ["pass", "whist"], ["pass", "pass"]]
            if self.rules.half_whist and game_level(game) in (6, 7):
                sequences += [["pass", "half", "whist"], ["pass", "half", "pass"]]
            calls = rng.choice(sequences)
            for seat, call in zip([first, second, first], calls):
                yield self._line(WHIST, seat, call)
            whisters = [s for s, c in zip([first, second, first], calls) if c == "whist"]
            if not whisters:
                yield from self._clear_prikup(on_prikup)
                self._advance("unplayed")
                return
            if len(whisters) == 1 and rng.random() < 0.5:
                yield self._line(WHIST_MODE, None, rng.choice(["open", "closed"]))
        # the declarer takes the talon and discards two (the discard lies on the prikup zone)
        hand = hands[declarer] + talon
        rng.shuffle(hand)
        hands[declarer], discard = hand[:10], hand[10:]
        yield from self._clear_prikup(on_prikup)
        for card in discard:
            yield self._card(PLACED, "prikup", card)
            on_prikup.append(card)
        tricks = self._contract_play(active, trump_of(game), hands)
        yield from self._play(tricks)
        yield from self._clear_prikup(on_prikup)
        self._advance(result)

    def _clear_prikup(self, on_prikup):
        while on_prikup:
            yield self._card(REMOVED, "prikup", on_prikup.pop())

    def _contract_play(self, active, trump, hands):
        tricks, leader = [], active[0]
        for _ in range(10):
            i = active.index(leader)
            plays = []
            for seat in active[i:] + active[:i]:
                led = plays[0][1].suit if plays else None
                card = self.rng.choice(legal_cards(hands[seat], led, trump))
                hands[seat].remove(card)
                plays.append((seat, card))
            leader = trick_winner(plays, trump)
            tricks.append(plays)
        return tricks

    def _play(self, tricks):
        for plays in tricks:
            for n, (zone, card) in enumerate(plays):
                yield self._card(PLACED, zone, card)
                if self.noise and n < len(plays) - 1:
                    r = self.mess.random()
                    if r < 0.05:                      # flicker within the open trick
                        yield self._card(REMOVED, zone, card)
                        yield self._card(PLACED, zone, card)
                    elif r < 0.08:                    # a repeated read
                        yield self._card(PLACED, zone, card)
            for zone, card in plays:
                yield self._card(REMOVED, zone, card)

    def _advance(self, kind):
        if kind == "raspasovka" and self.rules.same_dealer and self.step + 1 < len(self.rules.progression):
            self.step += 1
        else:
            self.step = 0
            self.dealer = _next(self.dealer, self.players)

    def deals(self, count: int):
        """The events of ``count`` deals, stamped in the order they happen (t never decreases)."""
        for _ in range(count):
            for event in self.deal():
                yield event._replace(t=self._tick())
