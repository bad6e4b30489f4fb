"""The double-dummy solver against a brute-force minimax, and hand-worked endings.

The brute force (dd_brute.py) tries every legal card of every hand with no pruning; the
solver must give the same value on random endings of 3 to 6 cards a hand, of every kind
of deal (trump and no-trump contracts, misère, raspasovka with each prikup mode,
starting at a trick's lead or inside a trick).  ``DD_RANDOM_ENDINGS`` multiplies how
many endings of each size are checked (the default keeps this file to a few seconds).
Every test runs both searches, the pure Python one and the compiled one (``engine``;
the compiled one skips, saying so, where the install could not build it; the random
endings are worked out by the brute force once and checked against every search built),
and the two must search the same nodes.
"""

from __future__ import annotations

import gc
import os
import random
import weakref

import pytest
from contract_games import legal_cards
from dd_brute import brute_value

from controller.core.cards import DECK, parse_card
from controller.core.config import Rules
from controller.core.deal import PRIKUP, ContractPlay, Raspasovka, active_seats
from controller.core.double_dummy import ENGINES, Solver, card_index, hand_mask

GAMES = ["6s", "7c", "8d", "9h", "6n", "7n", "misere"]
SCALE = int(os.environ.get("DD_RANDOM_ENDINGS", "1"))
COMPILED = pytest.mark.skipif("c" not in ENGINES, reason="the compiled search was not built (no compiler at install)")


ENGINE_PARAMS = ["python", pytest.param("c", marks=COMPILED)]


@pytest.fixture(params=ENGINE_PARAMS)
def engine(request) -> str:
    """The search under test: the pure Python one, then the compiled one."""
    return request.param


def random_ending(rng: random.Random, n: int):
    """A random position with ``n`` cards in each hand (fewer for seats that already laid
    to the trick in progress): (kind, hands, counted, maximise, trick, previous, laid, prikup)."""
    players = rng.choice([3, 4])
    dealer = f"seat{rng.randint(1, players)}"
    active = active_seats(players, dealer)
    cards = rng.sample(DECK, 3 * n + 2)
    hands = {seat: cards[i * n:(i + 1) * n] for i, seat in enumerate(active)}
    extra = cards[3 * n:]
    prikup: list = []
    if rng.random() < 0.4:
        mode = rng.choice(["dealer_leads", "suit_only", "closed"])
        kind = Raspasovka(Rules(prikup=mode), dealer, active)
        counted, maximise = frozenset([rng.choice(active)]), False
        if mode != "closed" and rng.random() < 0.5:
            trick, previous, prikup = 0, None, extra      # the prikup's two leads first
        else:
            trick = rng.choice([3, 5]) if mode != "closed" else rng.choice([0, 5])
            previous = rng.choice(active) if trick else None
    else:
        game = rng.choice(GAMES)
        kind = ContractPlay(Rules(), game, active)
        counted, maximise = frozenset([rng.choice(active)]), game != "misere"
        trick = rng.choice([0, 5])
        previous = rng.choice(active) if trick else None
    # some cards of the trick in progress already laid (legally)
    order = kind.trick_order(trick, previous)
    laid = []
    for zone in order[:rng.randint(0, len(order) - 1)]:
        if zone == PRIKUP:
            laid.append((PRIKUP, prikup[trick]))
            continue
        led = laid[0][1].suit if laid else None
        card = rng.choice(legal_cards(hands[zone], led, kind.trump))
        hands[zone] = [c for c in hands[zone] if c != card]
        laid.append((zone, card))
    return kind, hands, counted, maximise, trick, previous, laid, prikup


def solver_value(kind, hands, counted, maximise, trick, previous, laid, prikup, engine: str = "python",
                 nodes: list | None = None) -> int:
    solver = Solver(kind, kind.active, counted, maximise, prikup, engine)
    masks = [hand_mask(hands[seat]) for seat in kind.active]
    value = solver.value(masks, solver.plan(trick, previous), [card_index(c) for _, c in laid])
    if nodes is not None:
        nodes.append(solver.nodes)
    return value


@pytest.mark.parametrize("n, count, seed", [(3, 1000, 1), (4, 60, 2), (5, 3, 3), (6, 1, 4)])
def test_solver_equals_brute_force(n, count, seed):
    """Every search built (:data:`ENGINES`) against one brute force of each ending (the brute
    force is most of the time: worked out once, not once a search)."""
    rng = random.Random(seed)
    for _ in range(count * SCALE):
        position = random_ending(rng, n)
        expected = brute_value(*position)
        for engine in ENGINES:
            assert solver_value(*position, engine) == expected, (engine, position)


@COMPILED
def test_the_compiled_search_is_built_here():
    """Where the install could build it, the brute-force checks above check it too."""
    assert ENGINES == ("python", "c")


@COMPILED
@pytest.mark.parametrize("n, count, seed", [(4, 100, 5), (5, 30, 6), (6, 10, 7)])
def test_the_compiled_search_is_the_pure_one(n, count, seed):
    """The compiled search tries the same cards in the same order: the same value after
    the same number of nodes, on endings too large for the brute force."""
    rng = random.Random(seed)
    for _ in range(count * SCALE):
        position = random_ending(rng, n)
        pure, compiled = [], []
        assert solver_value(*position, "python", pure) == solver_value(*position, "c", compiled), position
        assert pure == compiled, position


class _BrokenRules(ContractPlay):
    """A kind whose winner fails at the 2nd trick it is asked about."""

    asked = 0

    def winner(self, cards):
        self.asked += 1
        if self.asked == 2:
            raise LookupError("no winner")
        return super().winner(cards)


def test_an_error_of_the_rules_comes_out_of_the_search(engine):
    """The compiled search asks the kind who takes each trick: what the kind raises comes
    out of the search as it would from the pure one, and the solver answers again after."""
    kind = _BrokenRules(Rules(), "7n", ("seat1", "seat2", "seat3"))
    hands = _hands(seat1="Ac 10h 10d", seat2="Jh Jd 9h", seat3="8c 9c Kc")
    solver = Solver(kind, kind.active, ["seat1"], True, engine=engine)
    masks = [hand_mask(hands[seat]) for seat in kind.active]
    with pytest.raises(LookupError, match="no winner"):
        solver.value(masks, solver.plan(5, "seat1"))
    assert solver.value(masks, solver.plan(5, "seat1")) == 1


def test_a_solver_dropped_is_freed(engine):
    """The compiled search holds its solver's methods (the rules' questions) and the solver
    holds it: the garbage collector must free the pair."""
    kind = ContractPlay(Rules(), "6s", ("seat1", "seat2", "seat3"))
    solver = Solver(kind, kind.active, ["seat1"], True, engine=engine)
    gone = weakref.ref(solver)
    del solver
    gc.collect()
    assert gone() is None


def test_an_engine_not_built_is_refused():
    kind = ContractPlay(Rules(), "6s", ("seat1", "seat2", "seat3"))
    with pytest.raises(ValueError, match="no 'fortran' search"):
        Solver(kind, kind.active, ["seat1"], True, engine="fortran")


def _hands(**cards: str) -> dict:
    return {seat: [parse_card(c) for c in text.split()] for seat, text in cards.items()}


def _both(engine, kind, hands, counted, maximise, trick=5, previous="seat2", prikup=()):
    position = (kind, hands, frozenset(counted), maximise, trick, previous, [], list(prikup))
    return solver_value(*position, engine), brute_value(*position)


def test_misere_caught_by_the_lead_of_his_singleton(engine):
    """Seed 003 («мизер ... игроки борются против взявшего прикуп с открытыми картами»):
    the declarer seat3 holds the 9♠ alone against the 7♠ and the 8♠.  A spade led by a
    defender makes the other follow under it and the 9♠ take the trick: whatever seat1
    leads first, seat2 wins a red trick and leads the 8♠.  His 7♥, 7♦ are the lowest of
    their suits: nothing more.  With the 7♠ in his hand instead, nothing catches him."""
    active = ("seat1", "seat2", "seat3")
    kind = ContractPlay(Rules(), "misere", active)
    hands = _hands(seat1="7s 8h 8d", seat2="8s 9h 9d", seat3="9s 7h 7d")
    assert _both(engine, kind, hands, ["seat3"], False, previous="seat1") == (1, 1)
    hands = _hands(seat1="9s 8h 8d", seat2="8s 9h 9d", seat3="7s 7h 7d")
    assert _both(engine, kind, hands, ["seat3"], False, previous="seat1") == (0, 0)


def test_misere_lead_costs_docs_worked_example(engine):
    """docs/analysis.md's worked example: seat3 (misère) holds 9♠ 7♥ 8♥, no diamond.
    The 9♥ led: seat2 must take it with the 10♥ and leads the 8♠, the 9♠ is caught,
    and seat3's last heart, led, nobody can follow: 2.  The 7♠ led catches the 9♠ at
    once, but seat3 then leads a heart the others cover: 1 (the 7♠ costs one).  The 8♦
    led, seat3 throws the 9♠ and is safe: 0 (it costs two)."""
    active = ("seat1", "seat2", "seat3")
    kind = ContractPlay(Rules(), "misere", active)
    hands = _hands(seat1="7s 9h 8d", seat2="8s 10h 9d", seat3="9s 7h 8h")
    assert _both(engine, kind, hands, ["seat3"], False, previous="seat1") == (2, 2)
    for lead, value in (("9h", 2), ("7s", 1), ("8d", 0)):
        card = parse_card(lead)
        rest = dict(hands, seat1=[c for c in hands["seat1"] if c != card])
        position = (kind, rest, frozenset(["seat3"]), False, 5, "seat1", [("seat1", card)], [])
        assert solver_value(*position, engine) == brute_value(*position) == value, lead


def test_a_trump_lead_stops_the_ruff(engine):
    """Seed 003's duty to trump («на выхоженную карту нужно класть карту той же масти, при
    отсутствии – козыря»): seat3 plays 6♠ with the 7♠ and the A♥ against the 8♠ A♦ and
    the K♥ K♦.  Led the A♦, he must ruff it (and takes a trick); the defence leads the 8♠
    instead, his only trump falls under it, and the A♦ takes the last trick over his A♥.
    On lead himself, his A♥ makes seat1 (void in hearts, holding a trump) ruff, and then
    the A♦ must be ruffed by his 7♠: one trick."""
    active = ("seat1", "seat2", "seat3")
    kind = ContractPlay(Rules(), "6s", active)
    hands = _hands(seat1="8s Ad", seat2="Kh Kd", seat3="7s Ah")
    assert _both(engine, kind, hands, ["seat3"], True, previous="seat1") == (0, 0)
    assert _both(engine, kind, hands, ["seat3"], True, previous="seat3") == (1, 1)


def test_a_trump_coup_the_tenace_behind_the_trumps_the_lead_through_them(engine):
    """The ending a trump coup plays for, made by seed 003's duty to trump («при отсутствии –
    козыря»): seat3 plays 6♥ with the A♥ Q♥ behind seat2's K♥ J♥, seat1 holds clubs alone.
    seat1 leads a club: seat2, void, must ruff, and whichever heart he ruffs with seat3
    takes it and the next: both tricks.  seat2 on lead can only lead into the tenace: both
    again.  seat3 on lead must lead from it himself, and the K♥ takes one."""
    active = ("seat1", "seat2", "seat3")
    kind = ContractPlay(Rules(), "6h", active)
    hands = _hands(seat1="7c 8c", seat2="Kh Jh", seat3="Ah Qh")
    assert _both(engine, kind, hands, ["seat3"], True, previous="seat1") == (2, 2)
    assert _both(engine, kind, hands, ["seat3"], True, previous="seat2") == (2, 2)
    assert _both(engine, kind, hands, ["seat3"], True, previous="seat3") == (1, 1)


def test_a_long_suit_set_up_by_dropping_a_singleton(engine):
    """seat3 plays 7NT with A♦ J♦ 9♦ 8♦: one top card.  seat1's Q♦ stands alone, so the
    A♦ led fells it and the J♦ 9♦ 8♦ are then the only diamonds left: all four tricks.
    With a second diamond beside the queen, the Q♦ takes the second round and seat1
    never gives the lead back: the A♦ alone."""
    active = ("seat1", "seat2", "seat3")
    kind = ContractPlay(Rules(), "7n", active)
    hands = _hands(seat3="8d 9d Jd Ad", seat1="9c Qd 10h Jh", seat2="9h 8s 9s As")
    assert _both(engine, kind, hands, ["seat3"], True, previous="seat3") == (4, 4)
    hands = _hands(seat3="8d 9d Jd Ad", seat1="7d Qd 10h Jh", seat2="9h 8s 9s As")
    assert _both(engine, kind, hands, ["seat3"], True, previous="seat3") == (1, 1)


def test_prikup_tricks_belong_to_the_dealer_at_most_two(engine):
    """Seed 003: «сдатчик на картах прикупа может взять не более двух взяток, которые
    будут принадлежать ему»; seed 000 (suit_only): the prikup card only names the suit.
    Nobody holds a spade: the prikup's A♠ and K♠ take tricks 1 and 2 (the dealer seat1's
    with dealer_leads, nobody's with suit_only), and the dealer's last heart is higher
    than every other, so seat2's heart lead of trick 3 gives it to him as well."""
    active = ("seat2", "seat3", "seat1")                     # dealer seat1 plays (3 players)
    hands = _hands(seat2="7h 8h 9h", seat3="10h Jh 7c", seat1="Qh Kh Ah")
    prikup = [parse_card("As"), parse_card("Ks")]
    leads = Raspasovka(Rules(), "seat1", active)
    assert _both(engine, leads, hands, ["seat1"], False, trick=0, previous=None, prikup=prikup) == (3, 3)
    only = Raspasovka(Rules(prikup="suit_only"), "seat1", active)
    assert _both(engine, only, hands, ["seat1"], False, trick=0, previous=None, prikup=prikup) == (1, 1)
    # seat2 is sure of none: it follows under everything
    assert _both(engine, leads, hands, ["seat2"], False, trick=0, previous=None, prikup=prikup) == (0, 0)


def test_the_last_free_card_squeezes_no_one_holding_a_spare(engine):
    """seat1 plays 7NT with the A♣ and two threats, the 10♥ and the 10♦, against seat2's
    J♥ and J♦.  Without a dummy the declarer alone faces each defender card for card: he
    has three cards, the A♣ and two threats, and seat2 needs only two of his three to
    guard them, so the A♣ led finds seat2 a spare to throw (the 9♥, or a club to follow
    with): one trick, never the squeeze's two.  With the guards split (the Q♦ beside
    the J♦) the same: the spare is the second diamond."""
    active = ("seat1", "seat2", "seat3")
    kind = ContractPlay(Rules(), "7n", active)
    for guards in ("Jh Jd 9h", "Jh Jd 7c", "Jh Qd Jd"):
        hands = _hands(seat1="Ac 10h 10d", seat2=guards, seat3="8c 9c Kc")
        assert _both(engine, kind, hands, ["seat1"], True, previous="seat1") == (1, 1), guards
    # the threats good once seat2 holds no guard: both, after the A♣
    hands = _hands(seat1="Ac 10h 10d", seat2="7c 8h 8d", seat3="8c 9c Kc")
    assert _both(engine, kind, hands, ["seat1"], True, previous="seat1") == (3, 3)
