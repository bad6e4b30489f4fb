"""One deal as pure data: its auction and whisting, who plays when, tricks, winners, revokes.

The rules of the play sit behind one seam, :class:`DealKind`: who leads each
trick, what wins it, which trump a revoke is judged against, and what the
finished deal writes.  :class:`Raspasovka` (RULES.md) and :class:`ContractPlay`
(RULES-contracts.md: a trump or no-trump game, or misère) are its two kinds;
:class:`Deal` plays cards through whichever kind the auction chose.

:class:`Deal` knows nothing of readers or presence; the tracker feeds it the
lines it accepted (cards and the calls of :mod:`controller.core.bidding`).
Everything is derived from that list of accepted lines, so taking one back
(``undo``) is replaying all lines but the last (the tracker feeds them to its machine
again).  The deal has no phase of its own:
which line is allowed when is the tracker's state machine
(:mod:`controller.core.phases`), the one truth of a deal's phase; the deal answers
what its rules decide (the auction's result, the whisting's, whose card is due).

With ``rules.bidding = "auto"`` a deal is born a raspasovka and its first line
decides (RULES-contracts.md "Second edition"): a bid or a result line turns it into
a deal with an auction (:meth:`Deal.begin_auction`), a card keeps it a raspasovka.
A claim and its ``confirm`` are lines of the deal too: a confirmed claim ends the
play, and the deal is written on the tricks taken plus those claimed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from typing import NamedTuple, Protocol

from .bidding import (CONTRACT as CONTRACT_RESULT, MISERE_DEAL, PLAY, RASPASOVKA, TEN_UNWHISTED, Auction,
                      Whisting, level, trump_of)
from .cards import DECK, Card, next_seat, seat_names
from .config import Rules
from .contract_scoring import ContractDeal, ContractRevoke, game_value, score_contract
from .events import BID, CLAIM, CONTRACT, MISERE, RESULT, WHIST, WHIST_MODE
from .scoring import Writes, score_deal

PRIKUP = "prikup"
CARD = "card"
CONFIRM = "confirm"         # the line a `confirm` of a waiting claim adds to its deal
CODES: dict[Card, str] = {card: str(card) for card in DECK}     # a card's code, looked up (str() is slower)

# deal kinds (FORMATS-contracts.md `kind`)
KIND_RASPASOVKA, KIND_CONTRACT, KIND_MISERE, KIND_UNPLAYED = "raspasovka", "contract", "misere", "unplayed"

# the phases of a deal: the states of the tracker's machine (controller.core.phases)
AUCTION, CONTRACT_PHASE, WHISTING, PLAYING = "auction", "contract", "whisting", "play"
CLAIMING = "claim"          # a claim waits for `confirm` (the play is stopped meanwhile)


class Trick(NamedTuple):
    """A closed trick: its leader (a seat or ``prikup``), cards in play order, and winner
    (a named tuple: frozen, and made at C speed, one per three or four cards).

    ``shown`` is the trick's cards as the formats write them, zone -> card code, made once
    when the trick closes: its trick line and the deal's summary entry both hold it, and
    nobody changes it."""

    leader: str
    cards: tuple[tuple[str, Card], ...]
    winner: str | None
    shown: dict[str, str]

    def to_dict(self) -> dict:
        return {"leader": self.leader, "cards": self.shown, "winner": self.winner}


@dataclass(frozen=True)
class Revoke:
    """A proven revoke: ``seat`` failed to follow ``suit`` (or, ``trump`` True, failed to
    play a trump of that suit) at play ``failed_at`` (index into the deal's plays) and proved
    it by playing that suit at ``proven_at``."""

    seat: str
    suit: str
    failed_at: int
    proven_at: int
    trump: bool = False


@lru_cache(maxsize=64)      # a pure function of the table and the dealer, asked at every deal
def active_seats(players: int, dealer: str) -> tuple[str, ...]:
    """The seats holding cards, clockwise from first hand (the dealer last with 3 players)."""
    count = 3 if players == 4 else players
    return tuple(next_seat(dealer, players, step) for step in range(1, count + 1))


def follow_marks(led: str, suit: str, trump: str | None) -> tuple[bool, bool]:
    """What a follower's card of ``suit`` to a trick led in ``led`` says of his hand
    (RULES.md: follow suit, else any card; RULES-contracts.md "Play": follow suit, else
    trump, else any): (he held no card of the led suit, he held no trump).

    The one statement of the duty to follow: the deal remembers these marks to prove a
    revoke; the double-dummy solver allows a card only to a hand they are true of."""
    if suit == led:
        return False, False
    return True, trump is not None and led != trump and suit != trump


# --- the seam: the rules of the play of one kind of deal ----------------------------

class DealKind(Protocol):
    """What differs between kinds of deal: the lead, the trump, the winner, the score."""

    name: str
    trump: str | None

    def trick_order(self, index: int, previous_winner: str | None) -> tuple[str, ...]:
        """The zones that lay a card to trick ``index`` (0-based), in play order."""

    def winner(self, cards: list[tuple[str, Card]]) -> str | None:
        """The seat that takes a full trick (None: nobody)."""

    def score(self, deal: "Deal") -> tuple[Writes, str | None]:
        """What the finished deal writes (before the help rule), and its outcome."""


@lru_cache(maxsize=256)     # a pure function of the seats: asked at every trick
def _rotated(active: tuple[str, ...], leader: str) -> tuple[str, ...]:
    at = active.index(leader)
    return active[at:] + active[:at]


class Raspasovka:
    """RULES.md: no trumps, the prikup leads the first two tricks (``rules.prikup``)."""

    name = KIND_RASPASOVKA
    trump = None

    def __init__(self, rules: Rules, dealer: str, active: tuple[str, ...]):
        self.rules, self.dealer, self.active = rules, dealer, active
        self.prikup_leads = rules.prikup != "closed"
        self.suit_only = rules.prikup == "suit_only"

    def trick_order(self, index: int, previous_winner: str | None) -> tuple[str, ...]:
        if self.prikup_leads and index < 2:
            return (PRIKUP,) + self.active
        if index == 0 or (self.prikup_leads and index == 2):
            return self.active
        return _rotated(self.active, previous_winner)

    def winner(self, cards: list[tuple[str, Card]]) -> str | None:
        led = cards[0][1].suit
        best_zone, best_rank = None, -1
        for zone, card in cards:
            if card.suit != led or (zone == PRIKUP and self.suit_only):
                continue
            if card.rank > best_rank:
                best_zone, best_rank = zone, card.rank
        if best_zone == PRIKUP:
            return self.dealer          # a prikup trick nobody beat is the dealer's
        return best_zone

    def score(self, deal: "Deal") -> tuple[Writes, None]:
        return score_deal(self.rules, deal.seats, deal.active, deal.dealer, deal.price, deal.step,
                          deal.taken, deal.charged_revoke), None


class ContractPlay:
    """RULES-contracts.md "Play": first hand leads trick 1, then the winner; the highest
    trump wins, else the highest card of the led suit.  Also misère (no trumps)."""

    def __init__(self, rules: Rules, game: str, active: tuple[str, ...]):
        self.rules, self.game, self.active = rules, game, active
        self.name = KIND_MISERE if game == MISERE else KIND_CONTRACT
        self.trump = trump_of(game)

    def trick_order(self, index: int, previous_winner: str | None) -> tuple[str, ...]:
        return self.active if index == 0 else _rotated(self.active, previous_winner)

    def winner(self, cards: list[tuple[str, Card]]) -> str | None:
        # the highest trump, else the highest card of the led suit (the ranks are distinct)
        trump, led = self.trump, cards[0][1].suit
        best_zone, best_rank, best_trump = None, -1, False
        for zone, card in cards:
            is_trump = card.suit == trump
            if is_trump and not best_trump:
                best_zone, best_rank, best_trump = zone, card.rank, True
            elif (is_trump or (card.suit == led and not best_trump)) and card.rank > best_rank:
                best_zone, best_rank = zone, card.rank
        return best_zone

    def score(self, deal: "Deal") -> tuple[Writes, str]:
        return score_contract(self.rules, deal.contract_deal())


# --- the contract game's calls ----------------------------------------------------

@dataclass
class Bidding:
    """The auction, the declarer's game and the whisting of a deal with ``rules.bidding``."""

    auction: Auction
    game: str | None = None             # the declarer's final game (misère at once after a misère auction)
    whisting: Whisting | None = None
    mode_line: str | None = None        # the last valid whist_mode line
    contract_lines: int = 0
    result_line: bool = False           # the auction and the contract came as one result line

    @property
    def declarer(self) -> str | None:
        top = self.auction.highest
        return top[0] if top is not None and self.auction.result in (CONTRACT_RESULT, MISERE_DEAL) else None

    @property
    def winning_bid(self) -> str | None:
        top = self.auction.highest
        return top[1] if self.declarer else None

    @property
    def ending(self) -> str | None:
        """How a game's deal ends without play: passed, half_whist, ten_unwhisted (None: played or open)."""
        if self.whisting is None:
            return None
        result = self.whisting.result
        return result if result not in (None, PLAY) else None


@dataclass(slots=True)
class Deal:
    """State of one deal, advanced with lines already judged valid (cards by :meth:`play`).

    Slotted: a replay reads its fields at every card (slots are the quicker lookup)."""

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
    trumpless: dict[str, int] = field(default_factory=dict)    # seat -> play where he did not trump
    revokes: list[Revoke] = field(default_factory=list)
    abandoned: bool = False
    lines: list[tuple[str, str, object]] = field(default_factory=list)   # accepted lines, in order
    bidding: Bidding | None = None
    claim: tuple[tuple[str, int], ...] | None = None    # the claim on record: ((seat, n), ...)
    claim_confirmed: bool = False
    # set by __post_init__ (the table's seats, the kind of deal once known, the phase ...)
    seats: tuple[str, ...] = field(init=False, repr=False)
    active: tuple[str, ...] = field(init=False, repr=False)
    total_tricks: int = field(init=False, repr=False)
    kind: DealKind | None = field(init=False, repr=False)
    _trick_starts: list[int] = field(init=False, repr=False)
    _taken: dict[str, int] = field(init=False, repr=False)
    _finished: bool = field(init=False, repr=False)
    _due: bool = field(init=False, repr=False)     # a card is due: the play is on (see expected)
    _kind_name: str | None = field(init=False, repr=False)
    _order: tuple[str, ...] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self.seats = seat_names(self.players)
        self.active = active_seats(self.players, self.dealer)
        self.total_tricks = 10
        self._trick_starts = []
        self._taken = dict.fromkeys(self.seats, 0)     # tricks taken, counted as they close
        self._finished = False
        # with bidding = true every deal begins with its auction; with false and "auto" it is
        # a raspasovka unless (auto) its first line is a bid or a result (begin_auction)
        if self.rules.bidding is True:
            self.begin_auction()
        else:
            self._kind_name = KIND_RASPASOVKA
            self._set_kind(Raspasovka(self.rules, self.dealer, self.active))
            self._due = True

    def begin_auction(self) -> None:
        """The deal begins with its auction (``bidding = true``, or the first line a bid or a
        result line under ``"auto"``); only before the deal's first line."""
        self.bidding = Bidding(Auction(self.active))
        self.kind = None
        self._order = ()
        self._kind_name, self._due = None, False

    def _set_kind(self, kind: DealKind) -> None:
        self.kind = kind
        self._order = kind.trick_order(0, None)

    # --- what the lines decided -----------------------------------------------------

    @property
    def finished(self) -> bool:
        """The deal is over: its 10th trick, or an ending without play."""
        return self._finished

    def _refresh(self) -> None:
        """Work out again what the lines decided (they change only with lines; cards read it):
        whether the deal is over, its kind, and whether a card is due (the kind of play is
        known, the deal goes on, and no claim waits for `confirm`)."""
        self._finished = self._is_finished()
        self._kind_name = self._kind_now()
        self._due = (self.kind is not None and not self._finished
                     and (self.claim is None or self.claim_confirmed))

    def _is_finished(self) -> bool:
        if len(self.tricks) == self.total_tricks or self.claim_confirmed:
            return True
        b = self.bidding
        return b is not None and b.game is not None and b.game != MISERE and (
            b.whisting is None or b.whisting.result not in (None, PLAY))

    @property
    def complete(self) -> bool:
        return self.finished and not self.abandoned

    @property
    def kind_name(self) -> str | None:
        """FORMATS-contracts.md ``kind``."""
        return self._kind_name

    def _kind_now(self) -> str | None:
        b = self.bidding
        if b is None:
            return KIND_RASPASOVKA
        result = b.auction.result
        if result is None:
            return None
        if result == RASPASOVKA:
            return KIND_RASPASOVKA
        if result == MISERE_DEAL:
            return KIND_MISERE
        return (KIND_UNPLAYED if self.finished and not self.tricks and self.claim is None and b.game is not None
                else KIND_CONTRACT)

    # --- the contract game's calls ---------------------------------------------------

    def call(self, event: str, seat: str | None, value) -> None:
        """Record an accepted bid, contract, whist, whist_mode, result or claim line, or the
        ``confirm`` of a waiting claim (``value``: the claim's ``((seat, n), ...)``)."""
        if self.bidding is None and not self.lines and event in (BID, RESULT):
            self.begin_auction()                # "auto": the deal's first line decides
        b = self.bidding
        self.lines.append((event, seat, value))
        if event == CLAIM:
            self.claim = tuple(tuple(pair) for pair in value)
        elif event == CONFIRM:
            self.claim_confirmed = True
        elif event == RESULT:
            # the auction and the contract at once: the deal goes on as after a contract line
            b.auction.settle(seat, value)
            b.result_line = True
            self._declare(value)
        elif event == BID:
            b.auction.call(seat, value)
            result = b.auction.result
            if result == RASPASOVKA:
                self._set_kind(Raspasovka(self.rules, self.dealer, self.active))
            elif result == MISERE_DEAL:
                b.game = MISERE
                self._set_kind(ContractPlay(self.rules, MISERE, self.active))
        elif event == CONTRACT:
            b.contract_lines += 1
            if b.game != MISERE:            # after a misère auction: accepted, changes nothing
                self._declare(value)
        elif event == WHIST:
            b.whisting.call(seat, value)
            if b.whisting.result == PLAY:
                self._set_kind(ContractPlay(self.rules, b.game, self.active))
        elif event == WHIST_MODE:
            b.mode_line = value
        self._refresh()

    def _declare(self, game: str) -> None:
        """The declarer's game is ``game``: whisting follows (a 10 with ``ten_whisted = false``
        ends the deal unplayed), a misère is played at once."""
        b = self.bidding
        b.game = game
        if game == MISERE:
            self._set_kind(ContractPlay(self.rules, MISERE, self.active))
        elif level(game) != 10 or self.rules.ten_whisted:
            b.whisting = Whisting(game, *self.defenders, self.rules.half_whist, self.rules.book.whist_required(game))

    @property
    def defenders(self) -> tuple[str, str]:
        """(first defender, second defender): the active seats clockwise after the declarer."""
        declarer = self.bidding.declarer
        at = self.active.index(declarer)
        return self.active[(at + 1) % 3], self.active[(at + 2) % 3]

    @property
    def whisters(self) -> list[str]:
        b = self.bidding
        if b is None or b.whisting is None:
            return []
        return b.whisting.whisters

    @property
    def whist_mode(self) -> str | None:
        """FORMATS-contracts.md ``whist_mode``."""
        b = self.bidding
        if b is None:
            return None
        if b.game == MISERE and b.auction.result == MISERE_DEAL:
            return b.mode_line or "open"
        whisters = self.whisters
        if len(whisters) == 2:
            return "closed"
        if len(whisters) == 1:
            return b.mode_line or "closed"
        return None

    def whist_refusal(self, seat: str, call: str) -> str | None:
        """Why the whist call ``call`` of ``seat`` is not valid in this deal's whisting (None
        if it is): the one check of a whist call, whatever the phase machine allowed."""
        return self.bidding.whisting.refusal(seat, call)

    def mode_refusal(self) -> str | None:
        """Why a whist_mode line is not valid in the play (None if it is); outside the play
        the phase machine refuses it (``the whisting is not decided``)."""
        b = self.bidding
        if b is None or b.auction.result == RASPASOVKA:
            return "no whist mode in a raspasovka"
        if self.tricks:
            return "the first trick has closed"
        if b.auction.result == MISERE_DEAL:
            return None
        if len(self.whisters) != 1:
            return "two whisters always play closed"
        return None

    # --- who plays -----------------------------------------------------------------

    @property
    def expected(self) -> str | None:
        """The zone whose card is due next, or None when no card is (auction, whisting, a
        claim waiting, over)."""
        if not self._due:
            return None
        return self._order[len(self.current)]

    # --- play ----------------------------------------------------------------------

    def play(self, zone: str, card: Card) -> tuple[Trick | None, Revoke | None]:
        """Record an accepted card; return the trick it closed and the revoke it proved."""
        plays, current = self.plays, self.current
        index = len(plays)
        self.lines.append((CARD, zone, card))
        pair = (zone, card)
        plays.append(pair)
        self.played.add(card)
        proven = None
        if zone != PRIKUP:
            voids = self.voids.get(zone)
            if (voids is not None and card.suit in voids) or zone in self.trumpless:
                proven = self._proven_revoke(zone, card.suit, index)
        if not current:
            self._trick_starts.append(index)
        elif zone != PRIKUP:
            # a follower not following the led suit (or not trumping) is remembered: the
            # revoke is proven when that seat later plays the suit (above)
            led = current[0][1].suit
            if card.suit != led:
                void, no_trump = follow_marks(led, card.suit, self.kind.trump)
                if void:
                    self.voids.setdefault(zone, {}).setdefault(led, index)
                if no_trump:
                    self.trumpless.setdefault(zone, index)
        current.append(pair)
        if len(current) < len(self._order):
            return None, proven
        winner = self.kind.winner(current)
        trick = Trick(self._order[0], tuple(current), winner, {z: CODES[c] for z, c in current})
        self.tricks.append(trick)
        if winner is not None:
            self._taken[winner] += 1
        self.current = []
        if len(self.tricks) == self.total_tricks:
            self._refresh()
        if not self._finished:
            self._order = self.kind.trick_order(len(self.tricks), trick.winner)
        return trick, proven

    def _proven_revoke(self, zone: str, suit: str, index: int) -> Revoke | None:
        """The revoke the card of ``zone`` at play ``index`` proves, if any: the seat plays
        a suit it did not follow, or a trump after not trumping (seed 001); a revoke in
        that suit proven before is not proven again."""
        voids = self.voids.get(zone)
        trump = self.kind.trump
        revoked = voids is not None and suit in voids
        trumpless = suit == trump and zone in self.trumpless
        if not (revoked or trumpless):
            return None
        failed = [(voids[suit], False)] if revoked else []
        if trumpless:
            failed.append((self.trumpless[zone], True))
        if any(r.seat == zone and r.suit == suit for r in self.revokes):
            return None
        at, by_trump = min(failed)
        proven = Revoke(zone, suit, at, index, by_trump)
        self.revokes.append(proven)
        return proven

    # --- results -------------------------------------------------------------------

    @property
    def taken(self) -> dict[str, int]:
        """Tricks taken per seat (a copy: the caller may keep it)."""
        return dict(self._taken)

    @property
    def claimed(self) -> dict[str, int] | None:
        """The confirmed claim's tricks per active seat (FORMATS-contracts.md ``claimed``), or None."""
        return dict(self.claim) if self.claim_confirmed else None

    @property
    def written_on(self) -> dict[str, int]:
        """The tricks the deal is written on: taken plus claimed (RULES-contracts.md "Claims")."""
        taken = dict(self._taken)
        if self.claim_confirmed:
            for seat, count in self.claim:
                taken[seat] += count
        return taken

    @property
    def first_revoke(self) -> Revoke | None:
        """The proven revoke whose offending card came first in play order."""
        if not self.revokes:
            return None
        return min(self.revokes, key=lambda r: r.failed_at)

    @property
    def charged_revoke(self) -> str | None:
        """The seat charged for the first revoke, or None.  In open play with one whister a
        revoke from the passer's zone is the whister's."""
        revoke = self.first_revoke
        if revoke is None:
            return None
        whisters = self.whisters
        if (len(whisters) == 1 and self.whist_mode == "open" and revoke.seat != self.bidding.declarer
                and revoke.seat != whisters[0]):
            return whisters[0]
        return revoke.seat

    @property
    def revoke_trick(self) -> int | None:
        """The number (1-10) of the trick of the first revoke's offending card."""
        revoke = self.first_revoke
        if revoke is None:
            return None
        return sum(1 for start in self._trick_starts if start <= revoke.failed_at)

    def in_current_trick(self, zone: str, card: Card) -> bool:
        return (zone, card) in self.current

    # --- what scoring needs --------------------------------------------------------

    @property
    def value(self) -> int | None:
        """P of the game, once it is known."""
        b = self.bidding
        return game_value(b.game) if b is not None and b.game is not None else None

    def contract_deal(self) -> ContractDeal:
        """The finished contract, misère or unplayed deal as contract scoring takes it."""
        b = self.bidding
        declarer = b.declarer
        ending = b.ending or (TEN_UNWHISTED if b.game != MISERE and b.whisting is None else "played")
        defenders = self.defenders
        revoke = None
        first = self.first_revoke
        if first is not None:
            trick = self.tricks[self.revoke_trick - 1]
            led = trick.cards[0][1].suit
            highest = max(((c.rank, z) for z, c in trick.cards if z in defenders and c.suit == led),
                          default=None)
            revoke = ContractRevoke(offender=first.seat, charged=self.charged_revoke,
                                    by_declarer=first.seat == declarer, trick_winner=trick.winner,
                                    highest_defender=highest[1] if highest else None)
        half = b.whisting.half_whister if b.whisting is not None else None
        return ContractDeal(game=b.game, declarer=declarer, ending=ending, defenders=defenders,
                            whisters=tuple(self.whisters), half_whister=half, dealer=self.dealer,
                            seats=self.seats, taken=self.written_on, revoke=revoke)

    def score(self) -> tuple[Writes, str | None]:
        """What the finished deal writes before the help rule, and its outcome."""
        if self.kind is None or (self.bidding is not None and self.kind_name == KIND_UNPLAYED):
            return score_contract(self.rules, self.contract_deal())
        return self.kind.score(self)
