"""Settlement arithmetic: a pulka's gora, pulya and whists into balances in whists
(RULES.md "The pulka"), exactly or in whole whists as the book's ``settlement`` says
(docs/RULES-variants.md).  Pure numbers: it knows no rule but the factor k it is given."""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Mapping

MAX_ENTRY = 10**12      # the largest gora, pulya or whists settle accepts (real pulkas: hundreds)


def settle_parts(pulka: Mapping[str, Mapping], k: int):
    """Each player's gora (pulya included) in whists, 10 × (A − his gora), and his whist
    saldo, exactly; :func:`settle` is their sum.  Validates as :func:`settle` says."""
    gora, pulya, written = read_pulka(pulka)
    if not gora:
        return {}, {}
    players = list(gora)
    top = max(pulya.values())
    adjusted = {p: gora[p] + k * (top - pulya[p]) for p in players}
    average = sum(adjusted.values(), Fraction(0)) / len(players)
    gora_part = {p: 10 * (average - adjusted[p]) for p in players}
    return gora_part, whist_saldo(players, written)


def whist_saldo(players, written: Mapping[tuple[str, str], Fraction]) -> dict[str, Fraction]:
    """Whists each player wrote on others less those written on him."""
    saldo = {p: Fraction(0) for p in players}
    for (p, q), v in written.items():
        saldo[p] += v
        saldo[q] -= v
    return saldo


def read_pulka(pulka: Mapping[str, Mapping]):
    """(gora, pulya, whists) of a pulka object, every number checked and exact."""
    players = list(pulka)
    if not players:
        return {}, {}, {}

    def num(v: object, where: str) -> Fraction:
        if isinstance(v, bool) or not isinstance(v, (int, float, Fraction)):
            raise ValueError(f"{where}: must be a number, got {v!r}")
        # bounded before any arithmetic: a 4000-digit number would overflow the float output
        if not (isinstance(v, float) and not math.isfinite(v)) and not -MAX_ENTRY <= v <= MAX_ENTRY:
            shown = repr(v) if isinstance(v, float) or abs(v) < 10**20 else "a number of more than 20 digits"
            raise ValueError(f"{where}: must be a number from -{MAX_ENTRY:.0e} to {MAX_ENTRY:.0e}, got {shown}")
        if isinstance(v, float):
            if not math.isfinite(v):
                raise ValueError(f"{where}: must be a finite number, got {v!r}")
            return Fraction(repr(v))        # 0.1 in JSON means one tenth, not the nearest double
        return Fraction(v)

    gora, pulya, written = {}, {}, {}
    for p in players:
        entry = pulka[p]
        if not isinstance(entry, Mapping):
            raise ValueError(f"{p}: must be an object with gora, pulya and whists, got {entry!r}")
        gora[p] = num(entry.get("gora", 0), f"{p}.gora")
        pulya[p] = num(entry.get("pulya", 0), f"{p}.pulya")
        whists = entry.get("whists", {}) or {}
        if not isinstance(whists, Mapping):
            raise ValueError(f"{p}.whists: must be an object of player: whists, got {whists!r}")
        for q, v in whists.items():
            if q not in pulka:
                raise ValueError(f"{p}.whists.{q}: no such player")
            written[(p, q)] = num(v, f"{p}.whists.{q}")
    return gora, pulya, written


def _exact(pulka, k):
    gora_part, saldo = settle_parts(pulka, k)
    return {p: gora_part[p] + saldo[p] for p in gora_part}


def _truncated(pulka, k):
    """Each player's gora in whists, 10 × (A − his gora), cut toward zero; then his whists
    (PrefCount ``getFinalMountainInWhists``: an ``(int)`` cast of a float)."""
    gora_part, saldo = settle_parts(pulka, k)
    return {p: _toward_zero(gora_part[p]) + saldo[p] for p in gora_part}


def _toward_zero(value: Fraction) -> int:
    return math.trunc(value)


def _rounded(pulka, k):
    """Every player's gora and pulya (each beyond the pulka's lowest) become whists a share
    at a time, each share rounded to the nearest whole whist: the others write
    round(10 × gora / n) on him, he writes round(10 × k × pulya / n) on each other
    (kozlov ``calculateFinalResult``: its ±1/±3 adjustment is this rounding for n = 3)."""
    gora, pulya, written = read_pulka(pulka)
    players = list(gora)
    if not players:
        return {}
    n = len(players)
    low_gora, low_pulya = min(gora.values()), min(pulya.values())
    dump = {p: _nearest(Fraction(10) * (gora[p] - low_gora) / n) for p in players}
    pool = {p: _nearest(Fraction(10 * k) * (pulya[p] - low_pulya) / n) for p in players}
    saldo = whist_saldo(players, written)
    total_dump, total_pool = sum(dump.values()), sum(pool.values())
    return {p: n * pool[p] - total_pool - n * dump[p] + total_dump + saldo[p] for p in players}


def _nearest(value: Fraction) -> int:
    return math.floor(value + Fraction(1, 2))


SETTLE = {"exact": _exact, "whole_truncated": _truncated, "whole_rounded": _rounded}
