"""Simulated players: random raspasovka deals, or whole Preferans games, as table events.

Used by ``preftable demo``, the benchmarks and the tests.  Players deal, lay
legal cards (following suit when able) and clear tricks at their own pace;
optional noise adds what a real table does: flickering tags, repeated reads,
out-of-turn cards taken back, a card of a closed trick laid again, unknown
tags, and now and then a revoke.

:class:`TableSimulator` plays raspasovka deals (RULES.md).  :class:`BiddingSimulator`
plays the whole game of RULES-contracts.md (``rules.bidding = true``): its players
value their hands, bid by laying their bidding tokens (the deck's ``[bids]`` table)
on their own readers, take the talon and discard on the prikup zone, declare,
whist or pass (or half-whist), choose open or closed play, and lay legal cards
(follow suit, else trump, else any).  What is legal is asked of the core's own
rules (:mod:`controller.core.bidding`, :class:`~controller.core.deal.Deal`), never
written again here.
"""

from __future__ import annotations

import copy
import random
from dataclasses import dataclass
from typing import Callable, Iterator

from ..core.bidding import BID_ORDER, RANK, level, trump_of
from ..core.cards import DECK, SUITS, Card
from ..core.config import GameConfig
from ..core.contract_scoring import obligation
from ..core.deal import KIND_RASPASOVKA, PRIKUP, Deal
from ..core.deck import Deck
from ..core.events import BID, CONTRACT, MISERE, PASS, PLACED, REMOVED, WHIST, WHIST_MODE, TableEvent
from ..core.series import next_deal
from ..core.tokens import TOKENS


@dataclass(frozen=True)
class PageLine:
    """A control line a player enters on the live page (the table's remote), not by a token:
    FORMATS-contracts.md's lines as JSON objects without ``t`` -- the second edition's
    ``result`` and ``claim``, and the whist calls, whist mode and ``confirm`` around them."""

    t: float
    line: dict

    @property
    def event(self) -> str:
        return self.line["event"]

    zone = None             # not a reader's line: no zone, no tag
    uid = None

    def to_dict(self) -> dict:
        return {"t": self.t, **self.line}


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

    The series (dealer, price) follows the rules as RULES.md says, asked of
    :func:`controller.core.series.next_deal` as the tracker does; the simulator keeps
    its own :class:`~controller.deal.Deal` to know whose turn it is.
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
        self.last: _Ended | None = None         # the deal just played, for the series
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

    def _dealt(self) -> tuple[Deal, dict[str, list[Card]], list[Card]]:
        """The next deal of the series (:func:`next_deal`), shuffled and dealt: (deal, hands,
        the two cards of the prikup or talon)."""
        self.number += 1
        dealer, step = next_deal(self.config, self.last)
        deal = Deal(self.number, dealer, self.rules.progression[step], step, self.players, self.rules)
        cards = list(DECK)
        self.rng.shuffle(cards)
        hands = {seat: cards[i * 10:(i + 1) * 10] for i, seat in enumerate(deal.active)}
        return deal, hands, cards[30:32]

    def deal(self) -> Iterator[TableEvent]:
        """The events of one complete deal (the cards are cleared at its end)."""
        deal, hands, prikup = self._dealt()
        yield from self._play(deal, hands, prikup, self._choose)
        self.t = round(self.t + self.gather_s, 3)      # gathering and shuffling
        self.last = _Ended(deal.dealer, deal.step, False, deal.kind_name)

    def _play(self, deal: Deal, hands: dict[str, list[Card]], prikup: list[Card],
              choose: Callable[[Deal, list[Card]], Card], stop_after: int | None = None) -> Iterator[TableEvent]:
        """Lay the cards of ``deal`` until it is finished (``choose`` picks each seat's card),
        with the table's noise, then clear the table; with ``stop_after``, stop between tricks
        once that many are played (the rest is claimed)."""
        on_table: list[tuple[str, Card]] = []
        closed: list[tuple[str, Card]] = []
        noise, rng = self.noise, self.rng
        while not deal.finished:
            if stop_after is not None and not deal.current and len(deal.tricks) >= stop_after:
                break
            zone = deal.expected
            if zone == PRIKUP:
                card = prikup.pop(0)
            else:
                card = choose(deal, hands[zone])
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


def make_deck(seed: int = 0, token_sets: int = 0) -> Deck:
    """A deck of 32 made-up 7-byte NTAG-style UIDs (``04`` + 6 bytes), for simulations;
    with ``token_sets``, that many sets of bidding tokens (every word of
    :data:`~controller.core.tokens.TOKENS` once a set) in its ``[bids]`` table."""
    rng = random.Random(seed)
    uids: dict[str, Card] = {}

    def fresh() -> str:
        while True:
            uid = "04" + "".join(f"{rng.randrange(256):02X}" for _ in range(6))
            if uid not in uids and uid not in bids:
                return uid

    bids: dict[str, str] = {}
    for card in DECK:
        uids[fresh()] = card
    for _ in range(token_sets):
        for word in TOKENS:
            bids[fresh()] = word
    return Deck(uids, bids)


def token_sets(deck: Deck, seats: tuple[str, ...]) -> dict[tuple[str, str], str]:
    """(seat, word) -> UID: the deck's token sets dealt out one per seat, in UID order within
    each word (a deck with one set shares it: every seat lays the same tokens)."""
    by_word: dict[str, list[str]] = {}
    for uid, word in sorted(deck.bids.items()):
        by_word.setdefault(word, []).append(uid)
    missing = [w for w in TOKENS if w not in by_word]
    if missing:
        raise ValueError(f"the deck has no bidding token for {', '.join(missing)}")
    return {(seat, word): uids[i % len(uids)] for word, uids in by_word.items()
            for i, seat in enumerate(seats)}


# --- how the simulated players value a hand -----------------------------------------

_ACE, _KING, _QUEEN = 7, 6, 5
WHIST_WHIM = 1.0            # tricks a defender's mood may add to or take from his valuation


def expected_tricks(hand: list[Card], trump: str | None) -> float:
    """A rough count of the tricks ``hand`` takes with ``trump`` (None: no trumps): high
    cards, length in trumps (or in a solid suit at no trumps), and ruffs of short suits."""
    by_suit = {s: sorted((c.rank for c in hand if c.suit == s), reverse=True) for s in SUITS}
    trumps = len(by_suit.get(trump, ())) if trump else 0
    total = 0.0
    for suit, ranks in by_suit.items():
        n = len(ranks)
        top = 0.0
        if _ACE in ranks:
            top += 1
        if _KING in ranks and n >= 2:
            top += 1 if _ACE in ranks else 0.6
        if _QUEEN in ranks and n >= 3:
            top += 0.5 if (_ACE in ranks or _KING in ranks) else 0.3
        if suit == trump:
            top += max(0, n - 3)
        elif trump is None and _ACE in ranks and _KING in ranks:
            top += 0.8 * max(0, n - 3)
        elif trump is not None and n <= 1 and trumps >= 3:
            top += 0.6 * (2 - n)
        total += top
    return total


def misere_risk(hand: list[Card]) -> int:
    """How far ``hand`` is from a clean misère: per suit, how much each card stands above
    the lowest cards it could hide under (0: every card can be ducked)."""
    risk = 0
    for suit in SUITS:
        ranks = sorted(c.rank for c in hand if c.suit == suit)
        risk += sum(max(0, rank - 2 * i) for i, rank in enumerate(ranks))
    return risk


def best_game(hand: list[Card], boldness: float = 0.0) -> tuple[str | None, float]:
    """The game ``hand`` would bid up to (None: it passes) and its valuation."""
    strain, value = max(((s, expected_tricks(hand, None if s == "n" else s)) for s in "scdhn"),
                        key=lambda item: item[1])
    tricks = int(value + boldness)
    if tricks < 6:
        return None, value
    return f"{min(tricks, 10)}{strain}", value


def legal_cards(hand: list[Card], led: str | None, trump: str | None) -> list[Card]:
    """RULES-contracts.md "Play": follow suit, else a trump, else any card."""
    if led is None:
        return list(hand)
    return ([c for c in hand if c.suit == led] or [c for c in hand if trump and c.suit == trump]
            or list(hand))


class BiddingSimulator(TableSimulator):
    """Whole Preferans games (``rules.bidding = true``) as table events: the auction, the
    talon and discard, the contract, whisting and play, with bidding tokens for the calls.

    ``deck`` must carry the token sets (:func:`make_deck` with ``token_sets``); each seat
    lays its own set (:func:`token_sets`).  The series follows
    :func:`controller.core.series.next_deal`, as the tracker does.
    """

    ENTRIES = ("tokens", "page")

    def __init__(self, config: GameConfig, *, seed: int | None = None, deck: Deck,
                 noise: Noise = Noise(), step_s: float = 0.5, gather_s: float = 2.0,
                 min_gap_s: float = 0.0, entry: str = "tokens", claims: float = 0.5):
        if not config.rules.bidding:
            raise ValueError("the bidding simulator plays with rules.bidding = true")
        if entry not in self.ENTRIES:
            raise ValueError(f"entry must be one of {', '.join(self.ENTRIES)}, got {entry!r}")
        super().__init__(config, seed=seed, deck=deck, noise=noise, step_s=step_s, gather_s=gather_s,
                         min_gap_s=min_gap_s)
        # "tokens": every call a bidding token laid; "page": as a group with a phone plays it --
        # the auction's result in one line, the whists from the page, and now and then a claim
        self.entry = entry
        self.claims = claims                    # the chance that a contract is claimed before its end
        self.tokens = token_sets(deck, config.table.seats) if entry == "tokens" else {}
        self.kinds: list[str | None] = []       # what each deal became (for the demo's own check)

    # --- events ----------------------------------------------------------------------

    def _lay_token(self, seat: str, word: str) -> Iterator[TableEvent]:
        """A player lays a token on his own reader and lifts it again."""
        uid = self.tokens[(seat, word)]
        yield TableEvent(self._tick(), PLACED, seat, uid=uid)
        if self.noise.repeat and self.rng.random() < self.noise.repeat:
            yield TableEvent(self._tick(), PLACED, seat, uid=uid)     # read twice: still one call
        yield TableEvent(self._tick(), REMOVED, seat, uid=uid)

    def _page(self, line: dict) -> PageLine:
        return PageLine(self._tick(), line)

    def _say(self, deal: Deal, event: str, seat: str | None, value: str, by: str) -> Iterator[TableEvent]:
        """``by`` lays the token of ``value`` (or enters the line on the page); the deal records
        the call it makes."""
        if self.entry == "silent":                  # said aloud, entered later as a result line
            deal.call(event, seat, value)
            return
            yield                                       # a generator all the same
        if self.entry == "page":
            field = {BID: "bid", CONTRACT: "game", WHIST: "call", WHIST_MODE: "mode"}[event]
            line = {"event": event, **({"seat": seat} if seat is not None else {}), field: value}
            yield self._page(line)
            deal.call(event, seat, value)
            return
        noise, rng = self.noise, self.rng
        if noise.out_of_turn and rng.random() < noise.out_of_turn and event in (BID, WHIST):
            others = [s for s in deal.active if s != seat]
            yield from self._lay_token(rng.choice(others), PASS)     # out of turn: refused, signalled
        yield from self._lay_token(by, value)
        deal.call(event, seat, value)

    def _show(self, cards: list[Card]) -> Iterator[TableEvent]:
        """Cards laid one at a time on the prikup reader and taken up: the talon, the discard."""
        for card in cards:
            yield self._ev(PLACED, PRIKUP, card)
            yield self._ev(REMOVED, PRIKUP, card)

    # --- deals -----------------------------------------------------------------------

    def deal(self) -> Iterator[TableEvent]:
        """The events of one whole deal, from its first bid until the table is cleared."""
        deal, hands, talon = self._dealt()
        if deal.bidding is None:
            deal.begin_auction()        # rules.bidding = "auto": these deals begin with a bid
        page = self.entry == "page"
        if page:
            self._aloud(deal, hands)
        else:
            yield from self._auction(deal, hands)
        b = deal.bidding
        if deal.kind_name != KIND_RASPASOVKA:
            declarer = b.declarer
            if page:
                # the declarer took the talon, laid his discard and named his game at the table;
                # the phone enters the result as the deal's first line (a prikup card first would
                # start a raspasovka), then the talon and the discard go over the prikup reader
                kept = hands[declarer] + talon
                away = self._discard(kept, b.winning_bid)
                named = MISERE if b.game == MISERE else \
                    self._declare([c for c in kept if c not in away], b.winning_bid)
                yield self._page({"event": "result", "seat": declarer, "game": named})
            yield from self._show(talon)
            hands[declarer] = hands[declarer] + talon
            discard = self._discard(hands[declarer], b.winning_bid)
            for card in discard:
                hands[declarer].remove(card)
            yield from self._show(discard)
            if b.game == MISERE and page:
                pass                                    # the result line said misère
            elif b.game == MISERE:
                if self.rng.random() < 0.3:
                    yield from self._say(deal, CONTRACT, declarer, MISERE, declarer)
                if self.rng.random() < 0.3:
                    yield from self._say(deal, WHIST_MODE, None, "closed", deal.defenders[0])
            else:
                if page:
                    deal.call(CONTRACT, declarer, named)    # the result line said it already
                else:
                    game = self._declare(hands[declarer], b.winning_bid)
                    yield from self._say(deal, CONTRACT, declarer, game, declarer)
                while b.whisting is not None and b.whisting.result is None:     # the whisting
                    seat = b.whisting.turn
                    yield from self._say(deal, WHIST, seat, self._whist_call(deal, hands[seat]), seat)
                if deal.expected is not None and len(deal.whisters) == 1 and self.rng.random() < 0.5:
                    yield from self._say(deal, WHIST_MODE, None, "open", deal.whisters[0])
        if deal.expected is not None:                   # the deal is played
            choose = self._choose if deal.kind_name == KIND_RASPASOVKA else self._choose_contract
            stop = None
            if self.entry == "page" and deal.kind_name != KIND_RASPASOVKA and self.rng.random() < self.claims:
                stop = self.rng.randint(4, 9)           # the declarer shows his hand after trick 4..9
            yield from self._play(deal, hands, talon, choose, stop_after=stop)
            if not deal.finished:
                yield self._page({"event": "claim", "tricks": self._rest(deal, hands)})
                yield self._page({"event": "button", "button": "confirm"})
        self.kinds.append(deal.kind_name)
        self.t = round(self.t + self.gather_s, 3)      # gathering and shuffling
        self.last = _Ended(deal.dealer, deal.step, False, deal.kind_name)

    def _aloud(self, deal: Deal, hands: dict[str, list[Card]]) -> None:
        """The auction said aloud at the table: the deal follows it, nothing is entered (the
        result line comes after, FORMATS-contracts.md "The result line")."""
        entry, self.entry = self.entry, "silent"
        try:
            for _ in self._auction(deal, hands):
                pass
        finally:
            self.entry = entry

    def _rest(self, deal: Deal, hands: dict[str, list[Card]]) -> dict[str, int]:
        """What a claim gives each active seat: the remaining tricks as the hands would play out
        (on copies; the table sees no card of it)."""
        rest, left = copy.deepcopy(deal), copy.deepcopy(hands)
        noise, self.noise = self.noise, Noise()
        try:
            while not rest.finished:
                zone = rest.expected
                card = self._choose_contract(rest, left[zone])
                left[zone].remove(card)
                rest.play(zone, card)
        finally:
            self.noise = noise
        return {seat: rest.taken[seat] - deal.taken[seat] for seat in deal.active}

    def _auction(self, deal: Deal, hands: dict[str, list[Card]]) -> Iterator[TableEvent]:
        auction = deal.bidding.auction
        limits = {seat: self._limit(hands[seat]) for seat in deal.active}
        while auction.result is None:
            seat = auction.turn
            yield from self._say(deal, BID, seat, self._bid(auction, seat, limits[seat]), seat)

    def _limit(self, hand: list[Card]) -> str | None:
        """The highest bid a player goes to: a game, misère, or None (he passes)."""
        boldness = 0.5 + 0.9 * self.rng.random()            # and the talon's hope
        if misere_risk(hand) <= 2 + self.rng.randrange(3):
            return MISERE
        return best_game(hand, boldness)[0]

    @staticmethod
    def _bid(auction, seat: str, limit: str | None) -> str:
        """The lowest valid bid up to ``limit`` (holding when he may), else pass."""
        if limit is None:
            return PASS
        if limit == MISERE:
            return MISERE if auction.refusal(seat, MISERE) is None else PASS
        for bid in BID_ORDER:
            if RANK[bid] > RANK[limit]:
                break
            if bid != MISERE and auction.refusal(seat, bid) is None:
                return bid
        return PASS

    @staticmethod
    def _discard(hand: list[Card], winning_bid: str) -> list[Card]:
        """Two cards to lay away: the highest for a misère, else the lowest side cards."""
        if winning_bid == MISERE:
            return sorted(hand, key=lambda c: (c.rank, c.suit))[-2:]
        trump = trump_of(winning_bid)
        return sorted(hand, key=lambda c: (c.suit == trump, c.rank, c.suit))[:2]

    def _declare(self, hand: list[Card], winning_bid: str) -> str:
        """The game: the hand's best strain and level, never below the winning bid."""
        game, _ = best_game(hand, 0.5 * self.rng.random())
        if game is None or RANK[game] < RANK[winning_bid]:
            strain = (game or winning_bid)[-1]
            higher = [g for g in BID_ORDER if g != MISERE and g[-1] == strain and RANK[g] >= RANK[winning_bid]]
            game = higher[0] if higher else winning_bid
        return game

    def _whist_call(self, deal: Deal, hand: list[Card]) -> str:
        """A defender's call, by how many of the whisters' obligation his hand may take."""
        b = deal.bidding
        game = b.game
        need = obligation(game, self.rules) / 2
        value = 0.7 * expected_tricks(hand, trump_of(game)) + self.rng.uniform(-WHIST_WHIM, WHIST_WHIM)
        said = [c for _, c in b.whisting.calls]
        valid = [c for c in ("whist", "half", PASS) if b.whisting.refusal(b.whisting.turn, c) is None]
        if said == [PASS, "half"]:                  # the first defender again: whist, or let it go
            return "whist" if value >= 2 * need else PASS
        if value >= need:
            return "whist"
        if "half" in valid and value >= need / 2:
            return "half"
        return PASS

    def _choose_contract(self, deal: Deal, hand: list[Card]) -> Card:
        """A legal card of a contract or misère: win cheaply, or duck (the misère's declarer)."""
        trump = deal.kind.trump
        led = deal.current[0][1].suit if deal.current else None
        legal = legal_cards(hand, led, trump)
        if led is not None and self.noise.revoke and self.rng.random() < self.noise.revoke:
            wrong = [c for c in hand if c not in legal]
            if wrong:
                return self.rng.choice(wrong)           # a revoke, proven later (or not)
        zone = deal.expected
        declarer = deal.bidding.declarer
        low = min(legal, key=lambda c: (c.rank, c.suit))
        if not deal.current:
            if deal.kind.name == MISERE and zone == declarer:
                return low
            return max(legal, key=lambda c: (c.suit == trump, c.rank, c.suit))
        winners = [c for c in legal if deal.kind.winner(deal.current + [(zone, c)]) == zone]
        if deal.kind.name == MISERE:
            if zone != declarer:
                return low
            ducks = [c for c in legal if c not in winners]
            return max(ducks, key=lambda c: (c.rank, c.suit)) if ducks else low
        ahead = deal.kind.winner(deal.current)
        partners = ahead != declarer and zone != declarer
        if winners and not partners:
            return min(winners, key=lambda c: (c.suit == trump, c.rank, c.suit))
        return low


@dataclass(frozen=True)
class _Ended:
    """What the series needs of the deal just played (:class:`controller.core.series.EndedDeal`)."""

    dealer: str
    step: int
    abandoned: bool
    kind: str | None


__all__ = ["Noise", "PageLine", "TableSimulator", "BiddingSimulator", "make_deck", "token_sets", "expected_tricks",
           "misere_risk", "best_game", "legal_cards"]
