"""What a finished contract, misère or unplayed deal writes (RULES-contracts.md).

Follows RULES-contracts.md "What a deal writes (scoring)", the scoring side of
"Revokes in contract and misère deals", and the worked examples 1-12.  The
result is a :class:`~controller.core.scoring.Writes` *before* the help rule;
:meth:`controller.core.scoring.Pulka.write_deal` applies the pulya target.

This module is pure: it knows nothing of cards or tricks, only of the counts
the tracker hands it in a :class:`ContractDeal`.  Everything is exact
(``Fraction``); whole numbers stay whole.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from types import MappingProxyType
from typing import Mapping, NamedTuple

from .config import Rules
from .events import GAMES, MISERE            # the games, low to high (seed 003)
from .scoring import Writes

ENDINGS = ("played", "passed", "half_whist", "ten_unwhisted")
OUTCOMES = ("made", "failed", "passed", "half_whist", "ten_unwhisted")

# O: the tricks the whisters must take together (Kodex 3.8.2; seed 003).
_OBLIGATION = {6: 4, 7: 2, 8: 1, 9: 1, 10: 1}


@dataclass(frozen=True)
class ContractRevoke:
    """The first proven revoke of a contract or misère deal, as the tracker saw it."""

    offender: str                    # the zone whose card revoked (may be a passer's zone in open play)
    charged: str                     # the seat charged (the whister for a passer's zone in open play)
    by_declarer: bool
    trick_winner: str | None         # who won the revoke trick as played
    highest_defender: str | None     # the defender with the highest card of the led suit in that trick


_NO_TRICKS: Mapping[str, int] = MappingProxyType({})


class ContractDeal(NamedTuple):
    """What the tracker knows of a finished non-raspasovka deal, after the play (a named
    tuple: frozen, and made at C speed, once per deal)."""

    game: str                        # "6s" … "10n" or "misere"
    declarer: str                    # a seat
    ending: str                      # "played" | "passed" (both pass) | "half_whist" | "ten_unwhisted"
    defenders: tuple[str, str]       # (first defender, second defender): the active seats after the declarer
    whisters: tuple[str, ...]        # seats whisting in play, in the order of their whist calls
    half_whister: str | None         # ending "half_whist": the seat that said half
    dealer: str
    seats: tuple[str, ...]           # every seat of the table (4 with a sitting-out dealer)
    taken: Mapping[str, int] = _NO_TRICKS    # tricks as played per seat, before any revoke move
    revoke: ContractRevoke | None = None


_LEVELS = {game: int(game[:-1]) for game in GAMES}


def game_level(game: str) -> int | None:
    """The number of tricks a game promises (6-10); None for misère.  ValueError if unknown."""
    if game == MISERE:
        return None
    level = _LEVELS.get(game)
    if level is None:
        raise ValueError(f"unknown game {game!r} (expected 6s … 10n or misere)")
    return level


def game_value(game: str) -> int:
    """P: what the game writes into the pulya when made (2 4 6 8 10; misère 10)."""
    level = game_level(game)
    return 10 if level is None else (level - 5) * 2


def obligation(game: str, rules: Rules) -> int:
    """O: the tricks the whisters must take together (0 for misère and an unwhisted 10)."""
    level = game_level(game)
    if level is None or (level == 10 and not (rules.ten_whisted and rules.book.ten_obligation)):
        return 0
    return _OBLIGATION[level]


def convention_factor(rules: Rules) -> int:
    """m: Leningrad doubles every contract entry on gora and whists (not the pulya)."""
    return rules.book.contract_factor


_HALF = Fraction(1, 2)


def responsibility_factor(rules: Rules) -> int | Fraction:
    """w: what a whisters' remiz costs per missing trick, relative to P × m (whole: an int)."""
    return 1 if rules.responsibility == "full" else _HALF


def score_contract(rules: Rules, deal: ContractDeal) -> tuple[Writes, str]:
    """What the deal writes (before the help rule), and its outcome:
    ``made`` | ``failed`` | ``passed`` | ``half_whist`` | ``ten_unwhisted``."""
    w, outcome = _score(rules, deal)
    for hook in rules.book.deal_hooks:
        hook(rules, outcome, deal, w)
    return w, outcome


def _score(rules: Rules, deal: ContractDeal) -> tuple[Writes, str]:
    if deal.ending not in ENDINGS:
        raise ValueError(f"unknown ending {deal.ending!r} (expected one of {', '.join(ENDINGS)})")
    value = game_value(deal.game)
    m = convention_factor(rules)
    w = Writes()
    if deal.ending == "passed":                 # both pass: «Игра считается сыгранной»
        w.add_pulya(deal.declarer, value)
        return w, "passed"
    if deal.ending == "ten_unwhisted":
        w.add_pulya(deal.declarer, value)
        return w, "ten_unwhisted"
    if deal.ending == "half_whist":
        if deal.half_whister is None:
            raise ValueError("a half-whist ending needs its half_whister")
        w.add_pulya(deal.declarer, value)
        # the half-whister writes the whists for half the obligation (2 tricks on 6, 1 on 7)
        w.add_whists(deal.half_whister, deal.declarer,
                     Fraction(obligation(deal.game, rules), 2) * value * m)
        return w, "half_whist"
    if deal.game == MISERE:
        return _score_misere(rules, deal, w)
    return _score_played(rules, deal, w)


def _adjusted_taken(deal: ContractDeal) -> dict[str, int]:
    """The trick counts after the revoke move of seed 001 pts 34-35."""
    taken = {seat: deal.taken.get(seat, 0) for seat in deal.seats}
    revoke = deal.revoke
    if revoke is None:
        return taken
    winner = revoke.trick_winner
    if deal.game == MISERE:
        # a revoke by the declarer in a misère: the revoke trick counts as his;
        # by a defender: nothing is counted (the declarer is written as made).
        to = deal.declarer if revoke.by_declarer else None
    elif revoke.by_declarer:
        # the trick goes to the defender with the highest card of the led suit,
        # even if the defence already won it (Readings fixed)
        to = revoke.highest_defender
        if to is None:              # cannot happen in a legal deal: the leader followed his own suit
            to = winner if winner in deal.defenders else deal.defenders[0]
    else:
        to = deal.declarer           # if the defence won it, it goes to the declarer
    if to is not None and winner is not None and winner != to and taken.get(winner, 0) > 0:
        taken[winner] -= 1
        taken[to] += 1
    return taken


def _score_misere(rules: Rules, deal: ContractDeal, w: Writes) -> tuple[Writes, str]:
    m = convention_factor(rules)
    revoke = deal.revoke
    if revoke is not None and not revoke.by_declarer:
        # pt 35: the declarer is written as made; the charged seat pays 10 × m
        w.add_pulya(deal.declarer, 10)
        w.add_gora(revoke.charged, 10 * m)
        return w, "made"
    tricks = _adjusted_taken(deal)[deal.declarer]
    if tricks == 0:
        w.add_pulya(deal.declarer, 10)
        return w, "made"
    w.add_gora(deal.declarer, 10 * m * tricks)
    return w, "failed"


def _whisters_remiz(rules: Rules, deal: ContractDeal, taken: Mapping[str, int]) -> dict[str, Fraction]:
    """Rule 4: each whister's remiz on the gora for a defence short of O (no matter who made)."""
    need = obligation(deal.game, rules)
    defence = sum(taken[d] for d in deal.defenders)
    remiz: dict[str, Fraction] = {}
    if not deal.whisters or defence >= need:
        return remiz
    level = game_level(deal.game)
    value = game_value(deal.game)
    unit = value * convention_factor(rules) * responsibility_factor(rules)
    if len(deal.whisters) == 1:
        remiz[deal.whisters[0]] = (need - defence) * unit
    elif level in (6, 7):
        half = need // 2
        for whister in deal.whisters:
            if taken[whister] < half:
                remiz[whister] = (half - taken[whister]) * unit
    elif rules.second_whist_responsible:
        remiz[deal.defenders[1]] = unit           # «второй вист ответственный»
    else:
        for whister in deal.whisters:
            remiz[whister] = unit
    return remiz


def _score_played(rules: Rules, deal: ContractDeal, w: Writes) -> tuple[Writes, str]:
    level = game_level(deal.game)
    value = game_value(deal.game)
    m = convention_factor(rules)
    revoke = deal.revoke
    taken = _adjusted_taken(deal)
    tricks = taken[deal.declarer]
    defence = sum(taken[d] for d in deal.defenders)
    by_defender = revoke is not None and not revoke.by_declarer

    # 3. whists for tricks, on the adjusted counts, made or not
    book = rules.book
    if len(deal.whisters) == 1:
        whister = deal.whisters[0]
        credited = taken[whister] if book.single_whister_own_tricks else defence
        if book.gentleman_whist and tricks < level and not by_defender:
            # gentleman's whist: a failed contract's whists for tricks shared by whister and passer
            for seat in deal.defenders:
                w.add_whists(seat, deal.declarer, Fraction(credited * value * m, 2))
        else:
            w.add_whists(whister, deal.declarer, credited * value * m)
    else:
        for whister in deal.whisters:
            w.add_whists(whister, deal.declarer, taken[whister] * value * m)

    if by_defender:
        # pt 35: the declarer gets what a made game writes; no consolation; the
        # charged seat pays one remiz for the mistake (P × m, never halved) plus
        # every whisters' remiz the adjusted counts bring.
        w.add_pulya(deal.declarer, value)
        w.add_gora(revoke.charged, value * m + sum(_whisters_remiz(rules, deal, taken).values()))
        return w, "made"

    if tricks >= level:
        # 1. made: P into the pulya, nothing for extra tricks
        w.add_pulya(deal.declarer, value)
        remiz = _whisters_remiz(rules, deal, taken)
        if revoke is not None:
            # pt 34: the whisters' remiz is the revoking declarer's
            w.add_gora(deal.declarer, sum(remiz.values()))
        else:
            for whister, amount in remiz.items():
                w.add_gora(whister, amount)
        return w, "made"

    # 2. failed by u tricks: remiz on the declarer's gora, consolation from every defender
    u = level - tricks
    w.add_gora(deal.declarer, u * value * m)
    consolers = list(deal.defenders)
    active = {deal.declarer, *deal.defenders}
    if len(deal.seats) == 4 and rules.consolation_to_dealer and deal.dealer not in active:
        consolers.append(deal.dealer)
    for seat in consolers:
        w.add_whists(seat, deal.declarer, u * book.consolation(value) * m)
    return w, "failed"
