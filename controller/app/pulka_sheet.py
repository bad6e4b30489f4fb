"""The pulka's figures, as the report shows them: numbers as players write them, the
players in seat order, the running sums of every column (the history) and the rows of the
deal table.

Input is the summary JSON of FORMATS.md ("Summary JSON") and, for contract deals,
FORMATS-contracts.md's ``written``, ``kind``, ``game`` and ``outcome``; the running sums
are derived as :mod:`controller.app.report` describes.  The SVG sheet
(:mod:`controller.app.pulka_svg`) and the HTML page (:mod:`controller.app.report`) both
draw from these.
"""

from __future__ import annotations

import logging
import math
import re
from types import SimpleNamespace
from typing import Any, Mapping, Sequence

from ..core.config import GameConfig, Rules, Table
from ..core.deal import active_seats
from ..core.scoring import CONVENTION_K, rounded, score_deal, settle
from ..core.series import RASPASOVKA, next_deal
from ..core.view import game_text, score_text

log = logging.getLogger(__name__)

# {player: {"gora": [running sums], "pulya": [...], "whists": {other: [...]}}}; any part may be missing.
History = Mapping[str, Mapping[str, Any]]

# ---------------------------------------------------------------- numbers and data

def fmt_num(value: float) -> str:
    """A score as players write it on the sheet: ``6``, ``2.5``, ``-12.33``."""
    return score_text(value, 2)


def fmt_balance(value: float) -> str:
    """A settlement balance with its sign: ``+184``, ``-12.33``, ``0``."""
    text = fmt_num(round(float(value), 2))
    return text if text.startswith("-") or text == "0" else "+" + text


def _seat_key(name: str) -> tuple[int, str]:
    match = re.fullmatch(r"seat(\d+)", name)
    return (int(match.group(1)), name) if match else (10**6, name)


def players_of(summary: Mapping[str, Any]) -> list[str]:
    """The players of the pulka, seats in seat order."""
    pulka = summary.get("pulka") or {}
    players = list(pulka)
    if players and all(re.fullmatch(r"seat\d+", p) for p in players):
        players.sort(key=_seat_key)
    if len(players) not in (3, 4):
        raise ValueError(f"a pulka has 3 or 4 players, this summary has {len(players)}: {players}")
    return players


def score_of(entry: Mapping[str, Any], key: str) -> float:
    value = entry.get(key, 0)
    return float(value) if value is not None else 0.0


def written_writes(written: Mapping[str, Any]) -> dict[str, Any]:
    """A deal's ``written`` (FORMATS-contracts.md: per seat gora, pulya and whists on each
    other seat, zeros included) in the shape of ``Writes.to_dict()``, zeros left out."""
    gora, pulya, whists = {}, {}, []
    for seat, entry in written.items():
        entry = entry or {}
        if entry.get("gora"):
            gora[seat] = entry["gora"]
        if entry.get("pulya"):
            pulya[seat] = entry["pulya"]
        whists += [[seat, other, v] for other, v in (entry.get("whists") or {}).items() if v]
    return {"gora": gora, "pulya": pulya, "whists": whists}


def _deal_writes(summary: Mapping[str, Any], players: list[str], rules: Rules) -> list[Mapping[str, Any]] | None:
    """What each complete deal wrote, as ``Writes.to_dict()`` shapes; None when it cannot be known.

    A deal carrying its own ``writes`` (the tracker's exact figures) or ``written``
    (FORMATS-contracts.md) is taken as it is.  Only a FORMATS.md raspasovka deal with
    neither is scored again with ``rules`` (:func:`controller.core.scoring.score_deal`),
    its step in the series followed by :func:`controller.core.series.next_deal` (and
    resynchronised on its price); a contract deal without them cannot be known.
    """
    out: list[Mapping[str, Any]] = []
    seats = tuple(players)
    deals = list(summary.get("deals") or ())
    config = None
    last = None
    for index, deal in enumerate(deals):
        if isinstance(deal.get("writes"), Mapping):
            if deal.get("complete"):
                out.append(deal["writes"])
            continue
        if isinstance(deal.get("written"), Mapping):
            out.append(written_writes(deal["written"]))
            continue
        if "written" in deal:
            continue            # null: a deal that wrote nothing (incomplete, abandoned)
        if deal.get("kind") not in (None, RASPASOVKA):
            return None
        price, dealer = deal.get("price"), deal.get("dealer")
        if dealer not in seats or not all(re.fullmatch(r"seat\d+", p) for p in seats):
            return None
        if config is None:
            config = GameConfig(Table(players=len(seats)), rules)
        _, step = next_deal(config, last)
        if step >= len(rules.progression) or rules.progression[step] != price:
            if price not in rules.progression:
                return None
            step = rules.progression.index(price)
        complete = bool(deal.get("complete"))
        if not complete and index == len(deals) - 1:
            break               # the deal in progress
        last = SimpleNamespace(dealer=dealer, step=step, abandoned=not complete, kind=RASPASOVKA)
        if not complete:
            continue            # abandoned: same dealer, same price
        taken = {seat: int((deal.get("taken") or {}).get(seat, 0) or 0) for seat in seats}
        writes = score_deal(rules, seats, active_seats(len(seats), dealer), dealer, price, step, taken,
                            deal.get("revoke"))
        out.append(writes.to_dict())
    return out


def derive_history(summary: Mapping[str, Any], rules: Rules | None = None) -> dict[str, dict[str, Any]]:
    """Running sums per player of what was written: ``{"gora": [...], "pulya": [...], "whists": {other: [...]}}``.

    Taken from the deals' ``writes`` where they carry them, else rebuilt from
    the deals with ``rules`` (the defaults of RULES.md if not given).  A column
    whose rebuilt totals differ from the pulka's (other rules were in force) is
    left out: its history is then unknown and the report shows the final value.
    """
    pulka = summary.get("pulka") or {}
    players = players_of(summary)
    per_deal = _deal_writes(summary, players, rules or Rules())
    if per_deal is None:
        log.debug("pulka history not derivable from the deals")
        return {p: {} for p in players}
    cells = [(p, "gora", None) for p in players] + [(p, "pulya", None) for p in players]
    cells += [(p, "whists", o) for p in players for o in players if o != p]
    sums = {cell: 0.0 for cell in cells}
    written: dict[tuple[str, str, str | None], list[float]] = {cell: [] for cell in cells}
    for writes in per_deal:
        amounts: list[tuple[tuple[str, str, str | None], Any]] = []
        for column in ("gora", "pulya"):
            amounts += [((p, column, None), v) for p, v in (writes.get(column) or {}).items()]
        amounts += [((w, "whists", o), v) for w, o, v in writes.get("whists") or ()]
        for cell, amount in amounts:
            if cell not in sums:
                log.debug("deal writes for an unknown player: %s", cell)
                return {p: {} for p in players}
            if amount:
                sums[cell] += float(amount)
                written[cell].append(sums[cell])

    def final(cell: tuple[str, str, str | None]) -> float:
        player, column, other = cell
        entry = pulka.get(player) or {}
        if other is None:
            return score_of(entry, column)
        return float((entry.get("whists") or {}).get(other, 0) or 0)

    result: dict[str, dict[str, Any]] = {p: {} for p in players}
    for column in ("gora", "pulya", "whists"):
        column_cells = [c for c in cells if c[1] == column]
        if not all(math.isclose(sums[c], final(c), abs_tol=1e-9) for c in column_cells):
            log.debug("%s history not derivable from the deals (other rules in force)", column)
            continue
        for player, _, other in column_cells:
            if other is None:
                result[player][column] = written[(player, column, None)]
            else:
                result[player].setdefault("whists", {})[other] = written[(player, column, other)]
    return result


def shown_names(summary: Mapping[str, Any], names: Mapping[str, str] | None, players: Sequence[str]) -> dict[str, str]:
    given = dict(summary.get("names") or {})
    given.update(names or {})
    return {p: str(given.get(p) or p) for p in players}


def balances_of(summary: Mapping[str, Any]) -> tuple[str, dict[str, float]]:
    settlement = summary.get("settlement") or {}
    convention = settlement.get("convention") or "sochi"
    balance = settlement.get("balance")
    if balance is None:
        pulka = summary.get("pulka") or {}
        balance = rounded(settle(pulka, convention if convention in CONVENTION_K else "sochi"))
    return convention, {p: float(v) for p, v in balance.items()}


def column_entries(values: Sequence[float] | None, final: float) -> tuple[list[str], str]:
    """Entries and separator: ``1.3.6`` from running sums; the final value when the history is unknown."""
    if not values:
        return [fmt_num(final)], ""
    texts = [fmt_num(v) for v in values]
    return texts, ("." if all("." not in t for t in texts) else " ; ")
_OUTCOME_TEXT = {"made": "made", "failed": "failed", "passed": "both pass", "half_whist": "half-whist",
                 "ten_unwhisted": "10 unwhisted"}


def has_contract_columns(summary: Mapping[str, Any]) -> bool:
    """Whether the summary has FORMATS-contracts.md's fields (then the table shows each deal's game)."""
    return any("kind" in deal for deal in summary.get("deals") or ())


def _game_cell(deal: Mapping[str, Any], shown: Mapping[str, str]) -> str:
    """``7♥ Boris``, ``misère Vera``, ``rasp.``; ``—`` while the auction has not decided."""
    kind, declarer, game = deal.get("kind"), deal.get("declarer"), deal.get("game")
    if kind == "raspasovka":
        return "rasp."
    if declarer is None:
        return "\u2014"
    shown_game = "mis\u00e8re" if game == "misere" else game_text(game)
    return f"{shown_game} {shown.get(declarer, declarer)}"


def history_rows(summary: Mapping[str, Any], players: list[str], shown: Mapping[str, str]) -> list[list[str]]:
    contract = has_contract_columns(summary)
    rows = []
    for deal in summary.get("deals") or ():
        taken = deal.get("taken") or {}
        revoke = deal.get("revoke")
        game = [_game_cell(deal, shown), _OUTCOME_TEXT.get(deal.get("outcome"), "")] if contract else []
        rows.append([
            str(deal.get("number", "")),
            shown.get(deal.get("dealer"), str(deal.get("dealer") or "")),
            fmt_num(deal.get("price") or 0),
            *game,
            *(fmt_num(taken.get(p, 0) or 0) for p in players),
            shown.get(revoke, str(revoke)) if revoke else "\u2014",
            "\u2713" if deal.get("complete") else "\u2717",
        ])
    return rows


def history_header(players: list[str], shown: Mapping[str, str], contract: bool = False) -> list[str]:
    game = ["game", "outcome"] if contract else []
    return ["#", "dealer", "price", *game, *(shown[p] for p in players), "revoke", "done"]


def history_widths(players: list[str], contract: bool) -> list[int]:
    game = [96, 82] if contract else []
    return [34, 84, 46, *game, *([62] * len(players)), 84, 44]


def help_lines(summary: Mapping[str, Any], shown: Mapping[str, str]) -> list[str]:
    """The help of every deal, as players note it: ``deal 13: Boris → Vera 2 (20 whists)``;
    points no one could take are written off the helper's own gora."""
    k = CONVENTION_K.get((summary.get("settlement") or {}).get("convention") or "sochi", 1)
    lines = []
    for deal in summary.get("deals") or ():
        for entry in deal.get("help") or ():
            helper, to, points = entry.get("from"), entry.get("to"), entry.get("points") or 0
            if to is None:
                lines.append(f"deal {deal.get('number')}: {shown.get(helper, helper)} writes "
                             f"{fmt_num(points * k)} off the gora ({fmt_num(points)} pulya)")
            else:
                lines.append(f"deal {deal.get('number')}: {shown.get(helper, helper)} \u2192 "
                             f"{shown.get(to, to)} {fmt_num(points)} ({fmt_num(points * 10 * k)} whists)")
    return lines

