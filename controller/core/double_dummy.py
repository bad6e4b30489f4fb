"""Double-dummy search of a Preferans deal: every hand known, every seat playing its best.

A :class:`Solver` answers one question about a position: how many of the tricks still
to play a set of seats (``counted``) takes when that side plays to take the most
(``maximise``) or the fewest, and every other seat plays against it.  The games of
``docs/analysis.md`` are all of this form: a contract (the declarer maximises, the
two others together minimise), a misère (the declarer minimises, the others
maximise), and a raspasovka seen from one seat (that seat minimises its own tricks,
the other two together maximise them).

The rules are the deal's own (``controller.core.deal``), never restated here: the kind
of deal (:class:`~controller.core.deal.Raspasovka` or
:class:`~controller.core.deal.ContractPlay`) says who lays a card to each trick, the
prikup's leads included, and who wins a trick (asked once for each distinct trick and
remembered); :func:`~controller.core.deal.follow_marks` says which suits a hand may
lay to a led suit (worked out once for each led suit and set of suits held).

The search is the one of the bridge solvers (Bo Haglund's DDS, "Search Algorithms for
a Bridge Double Dummy Solver"):

- a zero-window search -- "can the counted side be held to / reach k tricks?" -- with
  a cut-off as soon as one card answers, and the exact value found by moving k;
- a transposition table on trick boundaries, keyed by the cards left and the leader,
  the cards of each suit renumbered by their order among the cards left (a position
  where the 8 is gone and one where the 7 is gone are one position), holding a lower
  and an upper bound of the tricks to come, and the lead that decided it;
- equivalent cards searched once: cards of one hand touching in rank once the cards
  between them are gone (cards lying in the current trick are not gone);
- quick tricks at a trick's lead in a contract: the top cards the leader can cash;
- move order: the lead that decided the position before, then cards that win the
  trick for a side that wants it (cheapest first) or lose it for one that does not.

Cards are bit indices (suit index × 8 + rank), hands bit masks, in the order of the
kind's active seats; the prikup, when it lays cards, is zone 3.

The search is written twice: here in Python, the reference, and in C (``_dd.c``, built
by the install when a compiler is at hand, optional), card for card the same search --
the same table, bounds and move order, so the same nodes -- a whole analysis 11 to 27
times faster.  A :class:`Solver` runs the compiled one when it was built (:data:`ENGINES`), and
asks it to search; the C code asks back, through :meth:`Solver._winner_number` and
:meth:`Solver._follow_number`, who takes each distinct trick and what follows it, so
the rules stay the kind's even there.
"""

from __future__ import annotations

from typing import Iterable, Sequence

from .cards import DECK, SUITS, Card
from .deal import PRIKUP, DealKind, follow_marks

try:
    from . import _dd       # the same search compiled (_dd.c), built by the install when it can be
except ImportError:         # no compiler or headers at install: the pure search alone
    _dd = None

#: the searches a :class:`Solver` can run: the pure one always, the compiled one when built
ENGINES = ("python",) + (("c",) if _dd is not None else ())

SUIT_INDEX = {suit: index for index, suit in enumerate(SUITS)}
PRIKUP_ZONE = 3
_SHIFTS = (0, 8, 16, 24)


def card_index(card: Card) -> int:
    """A card's bit index: suit index × 8 + rank."""
    return SUIT_INDEX[card.suit] * 8 + card.rank


def hand_mask(cards: Iterable[Card]) -> int:
    mask = 0
    for card in cards:
        mask |= 1 << card_index(card)
    return mask


CARD_OF = {card_index(card): card for card in DECK}


def _tables() -> tuple[list[int], list[tuple[int, ...]]]:
    """For every suit's cards left ``u`` (8 bits) and a hand's part ``h`` of them:
    ``h`` renumbered among ``u`` (its cards' order among the cards left), and the ranks
    of ``h`` that stand for its runs of equivalent cards (the lowest of each run of cards
    touching within ``u``)."""
    pext = [0] * 65536
    reps: list[tuple[int, ...]] = [()] * 65536
    for u in range(256):
        bits = [b for b in range(8) if u >> b & 1]
        h = u
        while True:
            packed, runs, in_run = 0, [], False
            for i, b in enumerate(bits):
                if h >> b & 1:
                    packed |= 1 << i
                    if not in_run:
                        runs.append(b)
                    in_run = True
                else:
                    in_run = False
            pext[u << 8 | h] = packed
            reps[u << 8 | h] = tuple(runs)
            if h == 0:
                break
            h = (h - 1) & u
    return pext, reps


_PEXT, _REPS = _tables()


def _held(h: int) -> int:
    """The suits a hand holds, as 4 bits."""
    return ((h & 0xFF != 0) | (h & 0xFF00 != 0) << 1 | (h & 0xFF0000 != 0) << 2
            | (h & 0xFF000000 != 0) << 3)


def _allowed_suits(trump: str | None) -> list[list[tuple[int, ...]]]:
    """``allowed[led][held]``: the suits a hand holding the suits ``held`` may lay to a
    trick led in ``led``, from :func:`follow_marks` (a card is allowed when what it says
    of the hand is true)."""
    table = []
    for led in range(4):
        row = []
        for held in range(16):
            suits = []
            for s in range(4):
                if not held >> s & 1:
                    continue
                void, no_trump = follow_marks(SUITS[led], SUITS[s], trump)
                if void and held >> led & 1:
                    continue
                if no_trump and trump is not None and held >> SUIT_INDEX[trump] & 1:
                    continue
                suits.append(s)
            row.append(tuple(suits))
        table.append(row)
    return table


class Solver:
    """Double-dummy values of positions of one deal, for one side's count of tricks.

    ``kind`` is the deal's rules seam, ``prikup`` the cards the prikup lays to tricks 1
    and 2 (a raspasovka whose prikup leads; else empty), ``counted`` the seats whose
    tricks are counted, ``maximise`` whether the seats in ``counted`` play to take the
    most (the others then play to take the fewest from them) or the fewest.
    The transposition table lives as long as the solver: the positions of one played
    deal share most of their subtrees.  ``engine`` is one of :data:`ENGINES` (by default
    the compiled search when it was built, else the pure one): the two search alike,
    node for node.
    """

    def __init__(self, kind: DealKind, active: Sequence[str], counted: Iterable[str], maximise: bool,
                 prikup: Sequence[Card] = (), engine: str | None = None):
        if engine is None:
            engine = ENGINES[-1]
        if engine not in ENGINES:
            raise ValueError(f"no {engine!r} search here (have {', '.join(ENGINES)})")
        self.engine = engine
        self.kind = kind
        self.active = tuple(active)
        self.counted = frozenset(counted)
        self.maximise = maximise
        self.zone = {seat: i for i, seat in enumerate(self.active)}
        self.zone[PRIKUP] = PRIKUP_ZONE
        self.prikup = tuple(card_index(c) for c in prikup)
        self.nodes = 0
        self._tt: dict[int, tuple[int, int]] = {}
        self._best: dict[int, int] = {}
        self._plans: dict[tuple[int, str | None], tuple] = {}
        self._plan_list: list[tuple] = []          # the plans by their number (the compiled search's name)
        self._winners: list[str | None] = []       # the winners of tricks by their number (the same)
        self._compiled = None
        self._hands = [0, 0, 0]
        self._search = self._build()

    # --- the trick structure, from the kind -----------------------------------------

    def plan(self, trick: int, previous_winner: str | None) -> tuple:
        """(trick, zones in play order, winners seen, its number) of trick ``trick`` (0-based)."""
        key = (trick, previous_winner)
        plan = self._plans.get(key)
        if plan is None:
            order = tuple(self.zone[z] for z in self.kind.trick_order(trick, previous_winner))
            plan = (trick, order, {}, len(self._plan_list))
            self._plans[key] = plan
            self._plan_list.append(plan)
        return plan

    def _winner(self, order: tuple[int, ...], laid: tuple[int, ...]) -> str | None:
        """Who takes a full trick, the kind says: its cards laid by the zones of ``order``."""
        zones = [PRIKUP if z == PRIKUP_ZONE else self.active[z] for z in order]
        return self.kind.winner([(zone, CARD_OF[c]) for zone, c in zip(zones, laid)])

    def _resolve(self, plan: tuple, laid: tuple[int, ...]) -> tuple[int, tuple]:
        """(1 if the counted side takes it, the next trick's plan) of a full trick."""
        trick, order, memo, _ = plan
        winner = self._winner(order, laid)
        result = (1 if winner in self.counted else 0, self.plan(trick + 1, winner))
        memo[laid] = result
        return result

    # --- the search -----------------------------------------------------------------

    def _build(self):
        hands, tt, best = self._hands, self._tt, self._best
        killers: dict[tuple, int] = {}      # the card that last refuted or answered a trick so far
        zone_max = [(seat in self.counted) == self.maximise for seat in self.active]
        zone_counted = [seat in self.counted for seat in self.active]
        # a side "wants the trick" when taking it is what it plays for
        wants = [zone_max[z] == zone_counted[z] for z in range(3)]
        trump_suit = self.kind.trump
        trump = SUIT_INDEX[trump_suit] if trump_suit is not None else None
        allowed = _allowed_suits(trump_suit)
        prikup = self.prikup
        # prikup cards still to be laid at the start of each trick
        pending = [0] * 12
        for t in range(len(prikup)):
            for c in prikup[t:]:
                pending[t] |= 1 << c
        after = [0] * 12                    # ... and after the current trick's own
        for t in range(len(prikup)):
            for c in prikup[t + 1:]:
                after[t] |= 1 << c
        pext, reps, resolve = _PEXT, _REPS, self._resolve
        quick_side = self.maximise         # quick tricks bound only the game a side takes tricks in
        # the lone seat playing to take the fewest, in a game without trumps (else -1)
        duck_seat = -1
        if not self.maximise and trump is None and len(self.counted & set(self.active)) == 1:
            duck_seat = self.active.index(next(iter(self.counted & set(self.active))))
        counter = [0]

        def quick(leader: int) -> int:
            """Tricks the leader can cash at once, whatever the others do (DDS quick tricks)."""
            h = hands[leader]
            o1, o2 = hands[(leader + 1) % 3], hands[(leader + 2) % 3]
            o = o1 | o2
            if trump is None:
                total = 0
                for sh in _SHIFTS:
                    hs = h >> sh & 255
                    if hs:
                        total += (hs >> (o >> sh & 255).bit_length()).bit_count()
                return total
            tsh = trump << 3
            ht = h >> tsh & 255
            t1, t2 = o1 >> tsh & 255, o2 >> tsh & 255
            top_trumps = (ht >> (t1 | t2).bit_length()).bit_count()
            drawn = max(t1.bit_count(), t2.bit_count()) <= top_trumps
            total = ht.bit_count() if drawn else top_trumps
            for sh in _SHIFTS:
                if sh == tsh:
                    continue
                hs = h >> sh & 255
                if not hs:
                    continue
                wins = (hs >> (o >> sh & 255).bit_length()).bit_count()
                if wins and not drawn:
                    # a hand still holding a trump must follow every round of it
                    if (t1 and (o1 >> sh & 255).bit_count() < wins) or (t2 and (o2 >> sh & 255).bit_count() < wins):
                        continue
                total += wins
            return total

        def escapes(leader: int) -> bool:
            """Whether the lone seat playing for the fewest (a misère's declarer, a
            raspasovka's seat) can take no more tricks, not being on lead: in every suit its
            i-th lowest card is below the others' i-th lowest -- each round of the suit holds
            a card of the others at least that high, and it ducks with its lowest, never
            wins, so never leads (no trumps in these games)."""
            h = hands[duck_seat]
            o = hands[(duck_seat + 1) % 3] | hands[(duck_seat + 2) % 3]
            for sh in _SHIFTS:
                hs = h >> sh & 255
                if not hs:
                    continue
                os_ = o >> sh & 255
                while hs and os_:
                    low = hs & -hs
                    other = os_ & -os_
                    if low > other:
                        return False
                    hs ^= low
                    os_ ^= other
            return True

        def caught(leader: int) -> bool:
            """Whether the lone seat playing for the fewest takes every trick left: each of
            its cards is above all the others' cards of its suit, and it is on lead, or the
            leader holds one of its suits (led, it must follow and win, and then lead)."""
            h = hands[duck_seat]
            o = hands[(duck_seat + 1) % 3] | hands[(duck_seat + 2) % 3]
            for sh in _SHIFTS:
                hs = h >> sh & 255
                if hs and (hs & -hs) < (o >> sh & 255):
                    return False
            if leader == duck_seat:
                return True
            lead = hands[leader]
            return any(h >> sh & 255 and lead >> sh & 255 for sh in _SHIFTS)

        def boundary(plan: tuple, k: int) -> bool:
            """At the start of a trick: does the side playing for the count reach ``k``?"""
            if k <= 0:
                return True
            h0, h1, h2 = hands
            r = h0.bit_count()
            if k > r:
                return False
            t, order, memo, _ = plan
            if r == 1 and not pending[t]:
                # the last trick: every card is forced
                cards = (h0.bit_length() - 1, h1.bit_length() - 1, h2.bit_length() - 1)
                laid = tuple(cards[z] for z in order)
                done = memo.get(laid)
                if done is None:
                    done = resolve(plan, laid)
                return done[0] >= k
            leader = order[0]
            pend = pending[t]
            u = h0 | h1 | h2 | pend
            key = leader
            for sh in _SHIFTS:
                base = (u >> sh & 255) << 8
                key = (key << 24 | pext[base | (h0 >> sh & 255)] << 16 | pext[base | (h1 >> sh & 255)] << 8
                       | pext[base | (h2 >> sh & 255)])
            if pend:
                for sh in _SHIFTS:
                    key = key << 8 | pext[(u >> sh & 255) << 8 | (pend >> sh & 255)]
            entry = tt.get(key)
            if entry is None:
                lo, hi = 0, r
            else:
                lo, hi = entry
                if lo >= k:
                    return True
                if hi < k:
                    return False
            if duck_seat >= 0 and leader != PRIKUP_ZONE:
                if leader != duck_seat and escapes(leader):
                    tt[key] = (lo, 0)
                    return False
                if caught(leader):
                    tt[key] = (r, hi)
                    return True
            if quick_side and leader != PRIKUP_ZONE:
                q = quick(leader)
                if q > r:
                    q = r
                if zone_counted[leader]:
                    if q > lo:
                        lo = q
                    if lo >= k:
                        tt[key] = (lo, hi)
                        return True
                elif r - q < hi:
                    hi = r - q
                    if hi < k:
                        tt[key] = (lo, hi)
                        return False
            result = play(plan, 0, (), u, k, key)
            if result:
                lo = k
            else:
                hi = k - 1
            tt[key] = (lo, hi)
            return result

        def play(plan: tuple, i: int, laid: tuple, present: int, k: int, key: int = -1) -> bool:
            """The ``i``-th card of a trick: does the side playing for the count reach ``k``
            (this trick's tricks included)?  ``present``: the cards not gone (the hands, the
            prikup's cards to come, this trick's cards), the same all through the trick."""
            t, order, memo, _ = plan
            z = order[i]
            if z == PRIKUP_ZONE:
                return play(plan, i + 1, laid + (prikup[t],), present, k)
            counter[0] += 1
            h = hands[z]
            if laid:
                led = laid[0] >> 3
                suits = allowed[led][(h & 0xFF != 0) | (h & 0xFF00 != 0) << 1 | (h & 0xFF0000 != 0) << 2
                                     | (h & 0xFF000000 != 0) << 3]
            else:
                led = -1
                suits = (0, 1, 2, 3)
            moves = []
            for s in suits:
                sh = s << 3
                hs = h >> sh & 255
                if hs:
                    for rank in reps[(present >> sh & 255) << 8 | hs]:
                        moves.append(sh | rank)
            if len(moves) > 1:
                moves = order_moves(moves, z, laid, order, i, led, key)
            mx = zone_max[z]
            first = True
            last = i == len(order) - 1
            for c in moves:
                hands[z] = h ^ (1 << c)
                after_card = laid + (c,)
                if last:                # the trick is full: who took it, and on to the next
                    done = memo.get(after_card) or resolve(plan, after_card)
                    result = boundary(done[1], k - done[0])
                else:
                    result = play(plan, i + 1, after_card, present, k)
                if result == mx:
                    hands[z] = h
                    if not first:
                        if i == 0:
                            if key >= 0:
                                best[key] = c
                        else:
                            killers[laid] = c
                    return mx
                first = False
            hands[z] = h
            return not mx

        def order_moves(moves: list, z: int, laid: tuple, order: tuple, i: int, led: int, key: int) -> list:
            if i == 0:
                lead = best.get(key)
                if wants[z]:
                    moves.sort(key=lambda c: -(c & 7))             # high cards first
                elif zone_max[z] and duck_seat >= 0:
                    # leading into the ducking seat: first the suits it must follow
                    d = hands[duck_seat]
                    moves.sort(key=lambda c: (not d >> (c & ~7) & 255, c & 7))
                elif duck_seat == z:
                    # the ducking seat leads: first the cards some other hand must cover
                    o1, o2 = hands[(z + 1) % 3], hands[(z + 2) % 3]

                    def cover(c: int) -> int:
                        sh = c & ~7
                        above = 255 << (c & 7) + 1 & 255
                        a1, a2 = o1 >> sh & 255, o2 >> sh & 255
                        if (a1 and not a1 & ~above) or (a2 and not a2 & ~above):
                            return 0                        # a hand holding only higher cards
                        return 1 if (a1 | a2) & above else 2
                    moves.sort(key=lambda c: (cover(c), c & 7))
                else:
                    moves.sort(key=lambda c: c & 7)                # low cards first
                if lead is not None and lead in moves:
                    moves.remove(lead)
                    moves.insert(0, lead)
                return moves
            # the card winning so far (a guide for the order only: the kind decides the trick)
            top, top_zone = laid[0], order[0]
            for j in range(1, i):
                c = laid[j]
                if (c >> 3 == top >> 3 and c > top) or (c >> 3 == trump and top >> 3 != trump):
                    top, top_zone = c, order[j]
            top_suit = top >> 3
            ruffable = top_suit != trump
            winners, losers = [], []
            for c in moves:             # generated suit by suit, each rising
                if (c >> 3 == top_suit and c > top) or (ruffable and c >> 3 == trump):
                    winners.append(c)
                else:
                    losers.append(c)
            if wants[z]:
                if not (i == len(order) - 1 and top_zone != PRIKUP_ZONE
                        and zone_counted[top_zone] == zone_counted[z]):
                    moves = winners + losers                    # the cheapest winner first
            elif zone_max[z] and duck_seat >= 0 and duck_seat in order[i + 1:]:
                # giving the lone ducking seat the trick, before it plays: as low as can be
                if moves[0] >> 3 != moves[-1] >> 3:
                    moves.sort(key=lambda c: c & 7)
            else:
                if losers and losers[0] >> 3 != losers[-1] >> 3:
                    losers.sort(key=lambda c: c & 7)
                losers.reverse()
                winners.reverse()
                moves = losers + winners                        # the highest loser first
            killer = killers.get(laid)
            if killer is not None and killer in moves:
                moves.remove(killer)
                moves.insert(0, killer)
            return moves

        def search(plan: tuple, laid: tuple, k: int) -> bool:
            if not laid:
                return boundary(plan, k)
            present = hands[0] | hands[1] | hands[2] | after[plan[0]]
            for c in laid:
                present |= 1 << c
            return play(plan, len(laid), laid, present, k)

        self._counter = counter
        self._allowed, self._after = allowed, after
        if self.engine == "c":
            masks = [[sum(1 << s for s in row[held]) for held in range(16)] for row in allowed]
            self._compiled = _dd.Search(zone_max, zone_counted, wants, -1 if trump is None else trump, masks,
                                        pending, after, prikup, quick_side, duck_seat, self._winner_number,
                                        self._follow_number)
        return search

    # the compiled search's two questions of the rules, plans and winners by their numbers

    def _winner_number(self, number: int, laid: tuple[int, ...]) -> int:
        """The number of the seat that takes a full trick of plan ``number``."""
        winner = self._winner(self._plan_list[number][1], laid)
        if winner not in self._winners:
            self._winners.append(winner)
        return self._winners.index(winner)

    def _follow_number(self, number: int, winner: int) -> tuple[int, int, int, tuple]:
        """After a trick of plan ``number`` taken by winner ``winner``: (1 if the counted
        side took it, the next plan's number, its trick, its order of play)."""
        seat = self._winners[winner]
        following = self.plan(self._plan_list[number][0] + 1, seat)
        return (1 if seat in self.counted else 0), following[3], following[0], following[1]

    # --- the public questions --------------------------------------------------------

    def choices(self, hands: Sequence[int], trick: int, laid: Sequence[int], zone: str) -> int:
        """How many different cards (runs of equal cards count once) ``zone`` may lay now."""
        z = self.zone[zone]
        h = hands[z]
        present = hands[0] | hands[1] | hands[2] | self._after[trick]
        for c in laid:
            present |= 1 << c
        suits = self._allowed[laid[0] >> 3][_held(h)] if laid else (0, 1, 2, 3)
        return sum(len(_REPS[(present >> (s << 3) & 255) << 8 | (h >> (s << 3) & 255)])
                   for s in suits if h >> (s << 3) & 255)

    def reaches(self, hands: Sequence[int], plan: tuple, laid: Sequence[int], k: int) -> bool:
        """Whether the counted side, playing its best, gets ``k`` of the tricks left (the
        current one included) against best play: for ``maximise`` at least ``k``, else
        whether the other side can force at least ``k`` on it."""
        compiled = self._compiled
        if compiled is not None:
            before = compiled.nodes
            try:
                return compiled.search(hands, plan[3], plan[0], plan[1], tuple(laid), k)
            finally:
                self.nodes += compiled.nodes - before
        self._hands[:] = hands
        before = self._counter[0]
        try:
            return self._search(plan, tuple(laid), k)
        finally:
            self.nodes += self._counter[0] - before

    def value(self, hands: Sequence[int], plan: tuple, laid: Sequence[int] = (), guess: int | None = None,
              lo: int = 0, hi: int | None = None) -> int:
        """The counted side's tricks from this position on (the trick in progress included),
        every seat playing its best: hands are bit masks in the active seats' order, ``plan``
        is :meth:`plan` of the trick in progress, ``laid`` its cards so far (bit indices).
        ``lo`` and ``hi`` are bounds the caller knows (the value after a card of the side
        playing for the most is at most the value before it)."""
        left = max(h.bit_count() for h in hands)
        lo = max(lo, 0)
        hi = left if hi is None else min(hi, left)
        g = guess
        while lo < hi:
            # no guess: halve the window; else step from the guess
            k = (lo + hi + 1) // 2 if guess is None else min(max(g, lo + 1), hi)
            if self.reaches(hands, plan, laid, k):
                lo, g = k, k + 1
            else:
                hi, g = k - 1, k - 1
        return lo


__all__ = ["ENGINES", "Solver", "card_index", "hand_mask", "CARD_OF", "SUIT_INDEX"]
