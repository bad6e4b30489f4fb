"""After the deal: what best play would have made of a played deal, and what each card cost.

Pure: a deal's summary entry (FORMATS.md, FORMATS-contracts.md) in, an analysis out,
exactly as ``docs/analysis.md`` defines it:

- a contract: the declarer's tricks when he plays to take the most and both others
  together play to take the most from him, from the first lead, with the game's trump;
- a misère: the fewest tricks the declarer can be held to against both others;
- a raspasovka: for each active seat, the fewest tricks it can be sure of taking
  whatever the other two do (that seat playing to take the fewest, the two others
  together playing to give it the most);
- every card: the tricks its side lost by it against the best card it had then
  (0 for a card as good as any).  The value of the position before a card is the
  value after its best card, so a card's cost is the value before it less the value
  after it, in its side's direction; and the result as played is the value at the
  start moved by every card's cost.

The hands are the cards each seat laid (a deal played to its 10th trick shows them
all); the prikup's two cards lead tricks 1 and 2 of a raspasovka as they were turned
up.  The rules are the deal's own (:mod:`controller.core.deal`), through
:mod:`controller.core.double_dummy`.  A deal that was not played to its 10th trick
as the rules allow (a claim, stopped, abandoned, unplayed, a revoke) is not analysed,
and says why.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Iterable, Iterator

from .cards import Card, parse_card
from .config import Rules
from .deal import (KIND_CONTRACT, KIND_MISERE, KIND_RASPASOVKA, KIND_UNPLAYED, PRIKUP, ContractPlay, Raspasovka,
                   active_seats, follow_marks)
from .double_dummy import Solver, card_index
from .tracker import deal_entry

#: the version of what an analysis holds; a stored analysis of another version is made again
ANALYSIS_VERSION = 1

_WORDS = ("nothing", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten")


@dataclass(frozen=True)
class CardCost:
    """One card as played: its trick (1-10), seat, card and the tricks its side lost by it."""

    trick: int
    seat: str
    card: Card
    loss: int

    def to_dict(self) -> dict:
        return {"trick": self.trick, "seat": self.seat, "card": str(self.card), "loss": self.loss}


@dataclass
class DealAnalysis:
    """The analysis of one deal (``analysed`` False: ``reason`` says why not)."""

    number: int
    kind: str | None
    analysed: bool
    reason: str | None = None
    declarer: str | None = None
    best: dict[str, int] = field(default_factory=dict)       # the value at the start, per game
    played: dict[str, int] = field(default_factory=dict)     # the same count as played
    cards: list[CardCost] = field(default_factory=list)
    nodes: int = 0                                           # search nodes, all games together
    # per game (the declarer's, or each raspasovka seat's), the value before each active
    # card and after the last: the costs' running sum (docs/analysis.md)
    values: dict[str, list[int]] = field(default_factory=dict)
    maximises: dict[str, list[bool]] = field(default_factory=dict)

    @property
    def dd(self) -> dict | None:
        if not self.analysed:
            return None
        if self.kind == KIND_RASPASOVKA:
            return {"guaranteed": dict(self.best)}
        return {"declarer": self.declarer, "declarer_tricks": self.best[self.declarer]}

    def to_dict(self) -> dict:
        """The ``analyse --json`` deal object."""
        return {"number": self.number, "kind": self.kind, "analysed": self.analysed, "reason": self.reason,
                "dd": self.dd, "cards": [c.to_dict() for c in self.cards]}

    def line(self) -> str:
        """One line for people: "best play: 7 for the declarer (played 6); the 9♠ in trick 4
        (seat3) cost one"."""
        if not self.analysed:
            return f"not analysed: {self.reason}"
        if self.kind == KIND_RASPASOVKA:
            seats = list(self.best)
            head = ("best play: " + ", ".join(f"{s} sure of {self.best[s]}" for s in seats)
                    + " (played " + ", ".join(str(self.played[s]) for s in seats) + ")")
        else:
            head = f"best play: {self.best[self.declarer]} for the declarer (played {self.played[self.declarer]})"
        costs = [f"the {c.card.pretty} in trick {c.trick} ({c.seat}) cost {_WORDS[c.loss]}"
                 for c in self.cards if c.loss]
        return "; ".join([head] + (costs or ["every card as good as any"]))


def analysis_from_dict(data: dict, taken: dict[str, int] | None = None) -> DealAnalysis:
    """A :class:`DealAnalysis` back from :meth:`DealAnalysis.to_dict`; ``taken`` (the deal
    entry's) gives the counts as played."""
    dd = data.get("dd") or {}
    result = DealAnalysis(int(data["number"]), data.get("kind"), bool(data["analysed"]), data.get("reason"))
    result.cards = [CardCost(int(c["trick"]), str(c["seat"]), parse_card(c["card"]), int(c["loss"]))
                    for c in data["cards"]]
    if "guaranteed" in dd:
        result.best = {str(seat): int(n) for seat, n in dd["guaranteed"].items()}
    elif dd:
        result.declarer = str(dd["declarer"])
        result.best = {result.declarer: int(dd["declarer_tricks"])}
    if taken is not None:
        result.played = {seat: taken.get(seat, 0) for seat in result.best}
    return result


def _not_analysed(entry: dict, kind: str | None, reason: str) -> DealAnalysis:
    return DealAnalysis(entry.get("number", 0), kind, False, reason)


def _reason(entry: dict, kind: str | None, abandoned: bool) -> str | None:
    """Why a deal cannot be analysed, or None."""
    tricks = entry.get("tricks") or []
    if abandoned:
        return "abandoned with new_deal"
    if not entry.get("complete"):
        return f"stopped before its 10th trick ({len(tricks)} played)"
    if kind == KIND_UNPLAYED:
        return f"not played ({entry.get('outcome') or 'no play'})"
    if entry.get("claimed") is not None:
        return f"ended by a claim after trick {len(tricks)}"
    if len(tricks) != 10:
        return f"not played to the 10th trick ({len(tricks)} played)"
    if entry.get("revoke") is not None:
        at = entry.get("revoke_trick")
        return f"a revoke ({entry['revoke']}{f', trick {at}' if at else ''}): best play ends at a card the rules forbid"
    if kind not in (KIND_RASPASOVKA, KIND_CONTRACT, KIND_MISERE):
        return f"not a played deal (kind {kind})"
    return None


def analyse_entry(entry: dict, rules: Rules, players: int, abandoned: bool = False,
                  full: bool = False, engine: str | None = None) -> DealAnalysis:
    """Analyse one deal of a summary (its entry as ``replay --json`` prints it); ``full``
    values every raspasovka seat's game before every card (``values``), not only around
    its own cards; ``engine`` picks the solver's search (the tests and the benchmark run
    both: :data:`~controller.core.double_dummy.ENGINES`)."""
    kind_name = entry.get("kind", KIND_RASPASOVKA)     # a raspasovka-only session's entries have no kind
    reason = _reason(entry, kind_name, abandoned)
    if reason is not None:
        return _not_analysed(entry, kind_name, reason)
    dealer = entry["dealer"]
    active = active_seats(players, dealer)
    if kind_name == KIND_RASPASOVKA:
        kind = Raspasovka(rules, dealer, active)
        games = {seat: frozenset((seat,)) for seat in active}
        maximise = False
        declarer = None
    else:
        game, declarer = entry.get("game"), entry.get("declarer")
        if game is None or declarer not in active:
            return _not_analysed(entry, kind_name, "no declarer or game on record")
        kind = ContractPlay(rules, game, active)
        games = {declarer: frozenset((declarer,))}
        maximise = kind_name == KIND_CONTRACT
    played = _read_tricks(entry, kind, active)
    if isinstance(played, str):
        return _not_analysed(entry, kind_name, played)
    tricks, winners, hands, prikup = played
    return _solve(entry["number"], kind_name, declarer, kind, active, games, maximise, tricks, winners, hands, prikup,
                  full, engine)


def _read_tricks(entry: dict, kind, active: tuple[str, ...]):
    """(tricks as (zone, card) lists, winners, hands, prikup cards), or why they cannot be
    analysed: the tricks must be what the rules give (the kind's play order and winners)
    and every card must be one its hand was allowed to lay."""
    tricks, winners = [], []
    hands: dict[str, list[Card]] = {seat: [] for seat in active}
    prikup: list[Card] = []
    previous = None
    try:
        for index, trick in enumerate(entry["tricks"]):
            cards = [(zone, parse_card(code)) for zone, code in trick["cards"].items()]
            order = kind.trick_order(index, previous)
            if tuple(zone for zone, _ in cards) != tuple(order):
                return f"trick {index + 1} was not played in the order the rules give (another config?)"
            winner = kind.winner(cards)
            if winner != trick.get("winner"):
                return f"trick {index + 1}'s winner is not the one the rules give (another config?)"
            for zone, card in cards:
                (prikup if zone == PRIKUP else hands[zone]).append(card)
            tricks.append(cards)
            winners.append(winner)
            previous = winner
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        return f"the deal's tricks cannot be read ({exc})"
    if any(len(hand) != 10 for hand in hands.values()):
        return "the tricks do not hold ten cards of every active seat"
    # the duty to follow, judged on the hands the tricks show
    left = {seat: set(hand) for seat, hand in hands.items()}
    for index, cards in enumerate(tricks):
        led = cards[0][1].suit
        for n, (zone, card) in enumerate(cards):
            if zone == PRIKUP:
                continue
            if n > 0:
                void, no_trump = follow_marks(led, card.suit, kind.trump)
                if (void and any(c.suit == led for c in left[zone])) or (
                        no_trump and any(c.suit == kind.trump for c in left[zone])):
                    return f"a revoke ({zone}, trick {index + 1}): best play ends at a card the rules forbid"
            left[zone].discard(card)
    return tricks, winners, hands, prikup


def _solve(number, kind_name, declarer, kind, active, games, maximise, tricks, winners, hands, prikup,
           full: bool = False, engine: str | None = None) -> DealAnalysis:
    """Values of every game before each active card, and the cards' costs.

    A contract's one game is valued before every card; a raspasovka seat's game only
    before and after that seat's own cards (``full``: before every card, for the tests'
    running sum)."""
    solvers = {name: Solver(kind, active, counted, maximise, prikup, engine) for name, counted in games.items()}
    zone = {seat: i for i, seat in enumerate(active)}
    masks = [0, 0, 0]
    for seat, hand in hands.items():
        for card in hand:
            masks[zone[seat]] |= 1 << card_index(card)
    plays = [(t, seat, card) for t, cards in enumerate(tricks) for seat, card in cards if seat != PRIKUP]
    wanted = {}
    for name in games:
        if full or kind_name != KIND_RASPASOVKA:
            wanted[name] = set(range(len(plays) + 1))
        else:
            mine = [j for j, (_, seat, _) in enumerate(plays) if seat == name]
            wanted[name] = {0} | set(mine) | {j + 1 for j in mine}
    # every active card's position: (trick, previous winner, cards laid to it, hands),
    # whose cards were laid before it, and whether it was its seat's only choice (a
    # forced card moves no value)
    positions, forced = [], []
    won_before = {name: [] for name in games}
    won = dict.fromkeys(games, 0)
    previous = None
    probe = next(iter(solvers.values()))
    for t, cards in enumerate(tricks):
        laid = []
        for seat, card in cards:
            if seat != PRIKUP:
                positions.append((t, previous, tuple(laid), tuple(masks)))
                forced.append(probe.choices(masks, t, laid, seat) == 1)
                for name in games:
                    won_before[name].append(won[name])
                masks[zone[seat]] ^= 1 << card_index(card)
            laid.append(card_index(card))
        for name, counted in games.items():
            if winners[t] in counted:
                won[name] += 1
        previous = winners[t]
    # valued from the last card back to the first: the value after a card bounds the value
    # before it (a card of the side playing for the most can only lower it, the other
    # side's only raise it) and is its guess, so a card as good as any costs one search,
    # the null window just past that bound; and the table holds the played line's ends
    values: dict[str, dict[int, int]] = {name: {len(plays): won[name]} for name in games}
    for name, counted in games.items():
        solver = solvers[name]
        later = len(plays)
        for j in sorted(wanted[name] - {len(plays)}, reverse=True):
            between = [(plays[i][1] in counted) == maximise for i in range(j, later) if not forced[i]]
            t, previous, laid, position = positions[j]
            base = values[name][later] - won_before[name][j]
            lo = base if all(between) else 0                  # only cards of the side playing for the most
            hi = base if not any(between) else None           # only the other side's
            values[name][j] = won_before[name][j] + solver.value(list(position), solver.plan(t, previous), laid,
                                                                 base, lo, hi)
            later = j
    cards = []
    for j, (t, seat, card) in enumerate(plays):
        name = seat if kind_name == KIND_RASPASOVKA else declarer
        before, after = values[name][j], values[name][j + 1]
        loss = before - after if (seat in games[name]) == maximise else after - before
        cards.append(CardCost(t + 1, seat, card, loss))
    side_max = {name: [(seat in counted) == maximise for _, seat, _ in plays] for name, counted in games.items()}
    return DealAnalysis(number, kind_name, True, None, declarer,
                        best={name: v[0] for name, v in values.items()}, played=dict(won), cards=cards,
                        nodes=sum(s.nodes for s in solvers.values()),
                        values={name: [v[i] for i in sorted(v)] for name, v in values.items()},
                        maximises=side_max)


def analyse_summary(summary: dict, rules: Rules, players: int) -> list[DealAnalysis]:
    """Every deal of a summary JSON, in order (an incomplete last deal: stopped)."""
    return [analyse_entry(entry, rules, players) for entry in summary.get("deals", [])]


def tracker_deals(tracker) -> Iterator[tuple[dict, bool]]:
    """(summary entry, abandoned) of every deal a tracker knows, the one in progress last."""
    for record in tracker.records:
        yield record.entry, record.abandoned
    if tracker.deal is not None:
        yield deal_entry(tracker.deal), False


def analyse_deals(deals: Iterable[tuple[dict, bool]], rules: Rules, players: int,
                  known: Callable[[dict], DealAnalysis | None] | None = None,
                  progress: Callable[[int], None] | None = None) -> list[DealAnalysis]:
    """Analyse (entry, abandoned) pairs in order; ``known(entry)`` may give an analysis made
    before (a session's ``analysis.jsonl``), ``progress(done)`` is told after each deal."""
    out = []
    for entry, abandoned in deals:
        result = known(entry) if known is not None else None
        out.append(result if result is not None else analyse_entry(entry, rules, players, abandoned))
        if progress is not None:
            progress(len(out))
    return out


__all__ = ["ANALYSIS_VERSION", "CardCost", "DealAnalysis", "analyse_entry", "analyse_summary", "analyse_deals",
           "tracker_deals",
           "analysis_from_dict"]
