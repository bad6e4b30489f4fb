"""What a raspasovka deal writes into the pulka, the pulya target with help, and settlement.

Follows RULES.md ("Scoring one deal", "The pulka") and RULES-contracts.md
"Pulya target and help; the pulka's end"; a contract deal's own entries come
from :mod:`controller.core.contract_scoring`.  :meth:`Pulka.write_deal` turns
any deal's :class:`Writes` into what it actually writes after the help rule
(FORMATS-contracts.md ``written`` and ``help``).

Everything is exact: a whole amount is an ``int`` and any other a ``fractions.Fraction``
(:func:`exact`; Fraction arithmetic is some fifty times slower than int's, and almost
every entry is whole); rounding happens only for output.  The house rules of a session
(:mod:`controller.core.house_rules`) are asked through ``rules.book``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Iterable, Mapping, Sequence

from .config import Rules
from .house_rules import CONVENTIONS
from .settlement import MAX_ENTRY, SETTLE, settle_parts  # noqa: F401 (MAX_ENTRY: settle's bound, as before)

# a pulya point's worth in gora, by convention name (for summaries that name their convention)
CONVENTION_K = {name: convention.k for name, convention in CONVENTIONS.items()}
HELP_WHISTS = 10        # whists per pulya point of help, times k (a pulya point's worth in settlement)


@dataclass
class Writes:
    """What one deal writes: gora and pulya per seat, whists per (writer, on whom)."""

    gora: dict[str, Fraction] = field(default_factory=dict)
    pulya: dict[str, Fraction] = field(default_factory=dict)
    whists: dict[tuple[str, str], Fraction] = field(default_factory=dict)

    def add_gora(self, seat: str, amount) -> None:
        _add(self.gora, seat, amount)

    def add_pulya(self, seat: str, amount) -> None:
        _add(self.pulya, seat, amount)

    def add_whists(self, writer: str, on: str, amount) -> None:
        _add(self.whists, (writer, on), amount)

    def to_dict(self) -> dict:
        return {
            "gora": {s: number(v) for s, v in self.gora.items()},
            "pulya": {s: number(v) for s, v in self.pulya.items()},
            "whists": [[w, o, number(v)] for (w, o), v in self.whists.items()],
        }

    def per_seat(self, players: Sequence[str]) -> dict:
        """FORMATS-contracts.md ``written``: every seat's gora, pulya and whists on each other seat,
        zeros included."""
        gora, pulya, whists = self.gora, self.pulya, self.whists
        out = {}
        for p in players:
            g, u = gora.get(p, 0), pulya.get(p, 0)
            on = {q: whists.get((p, q), 0) for q in players if q != p}
            # whole amounts are ints (exact): only a fraction needs number()
            out[p] = {"gora": g if type(g) is int else number(g), "pulya": u if type(u) is int else number(u),
                      "whists": on if all(type(v) is int for v in on.values())
                      else {q: number(v) for q, v in on.items()}}
        return out


def exact(amount) -> int | Fraction:
    """An amount exactly: an int if whole, else a Fraction."""
    if type(amount) is int:
        return amount
    amount = Fraction(amount)
    return amount.numerator if amount.denominator == 1 else amount


def _add(entries: dict, key, amount) -> None:
    """Add a non-zero ``amount`` to one entry, exactly."""
    if amount:
        amount = exact(amount)
        old = entries.get(key)
        entries[key] = amount if old is None else exact(old + amount)


def is_last_step(rules: Rules, step: int) -> bool:
    """True at the last price of a progressive series of at least two prices."""
    return rules.same_dealer and len(rules.progression) >= 2 and step == len(rules.progression) - 1


def dealer_penalty(rules: Rules, price: int) -> int:
    """The last-step dealer penalty in points."""
    if rules.last_step_dealer_penalty_points is not None:
        return rules.last_step_dealer_penalty_points
    return rules.last_step_dealer_penalty * price


def score_deal(rules: Rules, seats: tuple[str, ...], active: tuple[str, ...], dealer: str,
               price: int, step: int, taken: Mapping[str, int], revoke: str | None) -> Writes:
    """What a finished raspasovka deal writes (RULES.md "Scoring one deal", "Mistakes"),
    with the house rules of the book (``raspasovka_factor``, ``amnesty_all_seats``)."""
    book = rules.book
    w = _raspasovka_entries(rules, book, seats, active, dealer, price, step, taken, revoke)
    if book.raspasovka_factor != 1:
        w = Writes({s: book.raspasovka_factor * v for s, v in w.gora.items()}, w.pulya,
                   {key: book.raspasovka_factor * v for key, v in w.whists.items()})
    for hook in book.deal_hooks:
        hook(rules, "raspasovka", {"seats": seats, "active": active, "dealer": dealer, "price": price,
                                   "step": step, "taken": taken, "revoke": revoke}, w)
    return w


def _raspasovka_entries(rules: Rules, book, seats: tuple[str, ...], active: tuple[str, ...], dealer: str,
                        price: int, step: int, taken: Mapping[str, int], revoke: str | None) -> Writes:
    w = Writes()
    if is_last_step(rules, step):
        w.add_gora(dealer, dealer_penalty(rules, price))
    if revoke is not None:
        w.add_gora(revoke, 10 * price)
        return w
    if rules.scoring == "whists":
        if book.raspasovka_whists == "beyond_fewest":
            _score_whists_beyond_fewest(w, rules, active, dealer, price, taken)
        else:
            _score_whists(w, rules, active, price, taken)
        return w
    fewest = min(taken[s] for s in (seats if book.amnesty_all_seats else active))
    amnesty = rules.subtract_minimum
    for seat in seats:
        tricks = taken[seat]
        if seat in active:
            w.add_gora(seat, (tricks - fewest if amnesty else tricks) * price)
            if tricks == 0:
                w.add_pulya(seat, price)
        else:   # a sitting-out dealer writes his prikup tricks in full (beyond the fewest: all seats' amnesty)
            w.add_gora(seat, (tricks - fewest if amnesty and book.amnesty_all_seats else tricks) * price)
    if rules.prikup == "closed" and len(seats) == 4:
        w.add_pulya(dealer, price)
    return w


def _score_whists(w: Writes, rules: Rules, active: tuple[str, ...], price: int,
                  taken: Mapping[str, int]) -> None:
    fewest = min(taken[s] for s in active)
    winners = [s for s in active if taken[s] == fewest]
    losers = [s for s in active if taken[s] != fewest]
    if not losers:
        return
    share = Fraction(1, len(winners))
    for winner in winners:
        for loser in losers:
            w.add_whists(winner, loser, share * rules.whists_per_trick * price * taken[loser])


def _score_whists_beyond_fewest(w: Writes, rules: Rules, active: tuple[str, ...], dealer: str, price: int,
                                taken: Mapping[str, int]) -> None:
    """PrefAndroid's Rostov (docs/RULES-variants.md ``raspasovka_whists``): a single fewest
    writes ``whists_per_trick`` × price for each trick beyond his on every other active seat
    (a tie for the fewest writes no whists); every active seat with no trick writes the price
    in pulya, and so does the dealer with no trick (once more if he is active)."""
    fewest = min(taken[s] for s in active)
    winners = [s for s in active if taken[s] == fewest]
    if len(winners) == 1:
        for seat in active:
            if seat != winners[0]:
                w.add_whists(winners[0], seat, rules.whists_per_trick * price * (taken[seat] - fewest))
    for seat in active:
        if taken[seat] == 0:
            w.add_pulya(seat, price)
    if taken[dealer] == 0:
        w.add_pulya(dealer, price)


def pulya_order(seats: Sequence[str], dealer: str) -> tuple[str, ...]:
    """The order a deal's pulya entries are written in: clockwise from the first hand, the dealer
    last (with four players, the sitting-out dealer)."""
    seats = tuple(seats)
    i = seats.index(dealer)
    return seats[i + 1:] + seats[:i + 1]


@dataclass(frozen=True)
class HelpEntry:
    """Pulya points one player's entry could not keep: into ``to``'s pulya, or (``to`` None)
    written off the helper's own gora."""

    helper: str
    to: str | None
    points: Fraction

    def to_dict(self) -> dict:
        return {"from": self.helper, "to": self.to, "points": number(self.points)}


@dataclass
class DealWritten:
    """What one deal actually wrote into the pulka, after the help rule.

    ``writes`` holds the exact differences, so ``pulka.add(writes, sign=-1)`` takes the deal out
    again (``undo``); ``help`` the help entries in the order they were written; ``finished``
    whether every pulya is closed after this deal (the summary's ``finished_after_deal`` is the
    first deal for which it is true).
    """

    writes: Writes
    help: list[HelpEntry] = field(default_factory=list)
    finished: bool = False

    def written(self, players: Sequence[str]) -> dict:
        return self.writes.per_seat(players)

    def help_list(self) -> list[dict]:
        return [h.to_dict() for h in self.help]


class Pulka:
    """The running score: gora, pulya and whists per player."""

    def __init__(self, players: Iterable[str]):
        self.players = tuple(players)
        self.gora: dict[str, int | Fraction] = {p: 0 for p in self.players}
        self.pulya: dict[str, int | Fraction] = {p: 0 for p in self.players}
        self.whists = {p: {q: 0 for q in self.players if q != p} for p in self.players}

    def add(self, writes: Writes, sign: int = 1) -> None:
        """Write a deal into the pulka (``sign=-1`` takes it out again, exactly)."""
        if sign != 1:
            writes = Writes({s: sign * v for s, v in writes.gora.items()},
                            {s: sign * v for s, v in writes.pulya.items()},
                            {k: sign * v for k, v in writes.whists.items()})
        gora, pulya, whists = self.gora, self.pulya, self.whists
        for seat, v in writes.gora.items():
            gora[seat] = exact(gora[seat] + v)
        for seat, v in writes.pulya.items():
            pulya[seat] = exact(pulya[seat] + v)
        for (writer, on), v in writes.whists.items():
            whists[writer][on] = exact(whists[writer][on] + v)

    def write_deal(self, rules: Rules, writes: Writes, order: Sequence[str] | None = None) -> DealWritten:
        """Write one deal's ``writes`` (raspasovka or contract) into the pulka under the pulya
        target, and return what it actually wrote (RULES-contracts.md "Pulya target and help").

        ``order`` is the pulya-entry order (:func:`pulya_order`: the dealer last); without a
        target the deal is written exactly as :meth:`add` writes it.
        """
        target = rules.pulya_target
        if target is None:
            self.add(writes)
            return DealWritten(writes)      # no target: no help, and the pulka never finishes
        book = rules.book
        if book.pulka_end == "sum":         # the target is the pulyas' sum: nothing closes, nobody helps
            self.add(writes)
            return DealWritten(writes, [], self.finished(rules))
        k = book.k
        # a sitting-out dealer (four players: the last of the order) may be kept from help
        unhelped = order[-1] if order and len(self.players) == 4 and not book.help_sitting_out_dealer else None
        out = Writes(dict(writes.gora), {}, dict(writes.whists))
        # the deal's gora and whists come first; the pulya entries follow one at a time
        for seat, v in writes.gora.items():
            self.gora[seat] = exact(self.gora[seat] + v)
        for (writer, on), v in writes.whists.items():
            self.whists[writer][on] = exact(self.whists[writer][on] + v)
        seats = list(order or self.players)
        seats += [s for s in writes.pulya if s not in seats]
        helped: list[HelpEntry] = []
        for seat in seats:
            amount = writes.pulya.get(seat)
            if amount:
                helped += self._enter_pulya(seat, exact(amount), target, k, out, unhelped)
        return DealWritten(out, helped, self.finished(rules))

    def _enter_pulya(self, seat: str, amount: int | Fraction, target: int, k: int,
                     out: Writes, unhelped: str | None = None) -> list[HelpEntry]:
        own = amount if amount < 0 else min(amount, max(0, target - self.pulya[seat]))
        self.pulya[seat] = exact(self.pulya[seat] + own)
        out.add_pulya(seat, own)
        rest = amount - own
        helped = []
        i = self.players.index(seat)
        clockwise = self.players[i + 1:] + self.players[:i]
        while rest > 0:
            below = [p for p in clockwise if self.pulya[p] < target and p != unhelped]
            if not below:
                # every other pulya is closed: the rest comes off the helper's own gora
                self.gora[seat] = exact(self.gora[seat] - k * rest)
                out.add_gora(seat, -k * rest)
                helped.append(HelpEntry(seat, None, rest))
                break
            to = max(below, key=lambda p: self.pulya[p])     # max keeps the first: a tie goes clockwise
            part = min(rest, target - self.pulya[to])
            self.pulya[to] = exact(self.pulya[to] + part)
            out.add_pulya(to, part)
            self.whists[seat][to] = exact(self.whists[seat][to] + HELP_WHISTS * k * part)
            out.add_whists(seat, to, HELP_WHISTS * k * part)
            helped.append(HelpEntry(seat, to, part))
            rest -= part
        return helped

    def finished(self, rules: Rules) -> bool:
        """True once every player's pulya is closed at the target (never without a target);
        with the house rule ``pulka_end = "sum"``, once the pulyas' sum reaches it."""
        target = rules.pulya_target
        if target is None:
            return False
        if rules.book.pulka_end == "sum":
            return sum(self.pulya.values()) >= target
        return all(v >= target for v in self.pulya.values())

    def exact(self) -> dict:
        """The pulka with exact values as strings (``"9/2"``), for checkpoints."""
        return {"gora": {p: str(v) for p, v in self.gora.items()},
                "pulya": {p: str(v) for p, v in self.pulya.items()},
                "whists": {p: {q: str(v) for q, v in w.items()} for p, w in self.whists.items()}}

    @classmethod
    def from_exact(cls, players: Iterable[str], exact: dict) -> "Pulka":
        pulka = cls(players)
        pulka.gora = {p: _exact_text(exact["gora"][p]) for p in pulka.players}
        pulka.pulya = {p: _exact_text(exact["pulya"][p]) for p in pulka.players}
        pulka.whists = {p: {q: _exact_text(exact["whists"][p][q]) for q in pulka.whists[p]}
                        for p in pulka.players}
        return pulka

    def to_dict(self) -> dict:
        return {p: {"gora": number(self.gora[p]), "pulya": number(self.pulya[p]),
                    "whists": {q: number(v) for q, v in self.whists[p].items()}}
                for p in self.players}


def _exact_text(text: str) -> int | Fraction:
    return exact(Fraction(text))


def number(value: Fraction | int | float) -> int | float:
    """An integer where whole, a decimal otherwise (FORMATS.md)."""
    kind = type(value)
    if kind is int:                     # the common cases first: Fraction() of them is slow
        return value
    if kind is Fraction:
        return value.numerator if value.denominator == 1 else float(value)
    f = Fraction(value)
    if f.denominator == 1:
        return int(f)
    return float(f)


def settle(pulka: Mapping[str, Mapping], convention: str = "sochi") -> dict[str, Fraction]:
    """Exact balances in whists, summing to zero (RULES.md "The pulka", steps 1-3).

    ``pulka`` maps each player to ``{"gora", "pulya", "whists": {other: n}}``;
    missing fields count as zero.  Raises ValueError for a whist written on an
    unknown player or a non-numeric value.
    """
    gora_part, saldo = settle_parts(pulka, CONVENTION_K[convention])
    return {p: gora_part[p] + saldo[p] for p in gora_part}


def settle_pulka(pulka: Mapping[str, Mapping], rules: Rules) -> dict[str, int | Fraction]:
    """The balances as the session's rules settle them: exact (RULES.md) or in whole whists
    (the book's ``settlement``; docs/RULES-variants.md)."""
    return SETTLE[rules.book.settlement](pulka, rules.book.k)


# the settlement object's "whole" for each whole-whist settlement (absent when exact)
WHOLE = {"whole_rounded": "rounded", "whole_truncated": "truncated"}


def settlement_object(pulka: Mapping[str, Mapping], rules: Rules) -> dict:
    """The summary's ``settlement`` object (FORMATS.md): ``convention`` and ``balance``, and
    between them ``whole`` when the session settles in whole whists (docs/RULES-variants.md),
    so that ``preftable settle`` of the summary prints the same object."""
    out: dict = {"convention": rules.convention}
    whole = WHOLE.get(rules.book.settlement)
    if whole is not None:
        out["whole"] = whole
    out["balance"] = rounded(settle_pulka(pulka, rules))
    return out


def settle_whole(pulka: Mapping[str, Mapping], convention: str, whole: str | None) -> dict[str, int | Fraction]:
    """:func:`settle`, or in whole whists as a settlement object's ``whole`` says."""
    how = {v: k for k, v in WHOLE.items()}.get(whole, "exact") if whole is not None else "exact"
    return SETTLE[how](pulka, CONVENTION_K[convention])


def rounded(balance: Mapping[str, Fraction]) -> dict[str, float]:
    """Balances rounded to two decimals for output (never ``-0.0``)."""
    return {p: round(float(v), 2) + 0.0 for p, v in balance.items()}
