"""The pulka report: the score sheet as players draw it on paper, as SVG and HTML.

Input is the summary JSON of FORMATS.md ("Summary JSON") as a dict: ``deals``,
``pulka`` ({player: {gora, pulya, whists: {other: n}}}), ``settlement``
({convention, balance}) and optionally ``names`` ({seat: display name}).

The picture: a sheet split into one sector per player by lines running from a
central circle to the sheet's edge (for 4 players to the four corners; for 3
to the two bottom corners and the top middle).  Inside each sector, from the
centre outwards: the gora, the pulya, and the whists band split per opponent.
Every figure is written as on paper, the running sums joined by dots
("1.3.6"), when its history is known (the ``history`` argument, the deals'
own ``writes`` or ``written``, or -- for a FORMATS.md summary of raspasovka
deals that carries neither -- the deals scored again with the session's rules
when that reproduces the pulka exactly); otherwise the final value.  The
player's name and settlement balance stand outside the sector; the deal
history is a table beside the sheet.

Contract deals (FORMATS-contracts.md) are drawn the way players write them,
from each deal's ``written``: game values into the declarer's pulya, remiz on
his gora, whists in the writer's band on the opponent they are written on;
help goes into the helped player's pulya and the helper's whists on him, and
is listed under the sheet.  The ``pulya_target`` stands in the centre circle
and a closed pulya is marked; the history table gains the game (with its
declarer) and the outcome of every deal (``kind``, ``game``, ``outcome``).

``preftable report SESSION_DIR`` is meant to call :func:`write_report` with the
session's summary, its ``[table] names`` and its ``[rules]``.
"""

from __future__ import annotations

import html
import logging
import math
import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Mapping, Sequence

from ..core.config import GameConfig, Rules, Table
from ..core.deal import active_seats
from ..core.errors import LogError
from ..core.scoring import CONVENTION_K, rounded, score_deal, settle
from ..core.series import RASPASOVKA, next_deal
from ..core.view import game_text

log = logging.getLogger(__name__)

SVG_NS = "http://www.w3.org/2000/svg"
FONT = "DejaVu Sans, Verdana, Arial, sans-serif"

# Layout of the sheet (SVG user units).
SHEET_X, SHEET_Y, SHEET_W, SHEET_H = 60.0, 90.0, 600.0, 480.0
TABLE_X = SHEET_X + SHEET_W + 60.0
# Nested bands as scales of the sheet around its centre: (outer, inner).
BANDS = {"whists": (1.0, 0.72), "pulya": (0.72, 0.46), "gora": (0.46, 0.2)}
CIRCLE_SCALE = 0.14
ROW_H = 20.0

# {player: {"gora": [running sums], "pulya": [...], "whists": {other: [...]}}}; any part may be missing.
History = Mapping[str, Mapping[str, Any]]


@dataclass(frozen=True)
class _Sector:
    """Where one player writes: a side of the sheet and a stretch of it (-1..1, corner to corner)."""

    side: str   # "top" | "bottom" | "left" | "right"
    t0: float
    t1: float
    open0: bool = False     # the sector goes round the corner at t0 (no line ends there)
    open1: bool = False


# Seat order is clockwise; seat 1 sits at the bottom, the viewer's place.
_LAYOUT = {
    3: ((_Sector("bottom", -1, 1), _Sector("top", -1, 0, open0=True), _Sector("top", 0, 1, open1=True)),
        ((-1, 1), (1, 1), (0, -1))),
    4: ((_Sector("bottom", -1, 1), _Sector("left", -1, 1), _Sector("top", -1, 1),
         _Sector("right", -1, 1)),
        ((-1, -1), (1, -1), (1, 1), (-1, 1))),
}


# ---------------------------------------------------------------- numbers and data

def fmt_num(value: float) -> str:
    """A score as players write it: ``6``, ``2.5``, ``-12.33``."""
    value = float(value)
    if value.is_integer():
        return str(int(value))
    return f"{value:.2f}".rstrip("0").rstrip(".")


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


def _score(entry: Mapping[str, Any], key: str) -> float:
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
            return _score(entry, column)
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


def _names(summary: Mapping[str, Any], names: Mapping[str, str] | None, players: Sequence[str]) -> dict[str, str]:
    given = dict(summary.get("names") or {})
    given.update(names or {})
    return {p: str(given.get(p) or p) for p in players}


def _balances(summary: Mapping[str, Any]) -> tuple[str, dict[str, float]]:
    settlement = summary.get("settlement") or {}
    convention = settlement.get("convention") or "sochi"
    balance = settlement.get("balance")
    if balance is None:
        pulka = summary.get("pulka") or {}
        balance = rounded(settle(pulka, convention if convention in CONVENTION_K else "sochi"))
    return convention, {p: float(v) for p, v in balance.items()}


def _column_entries(values: Sequence[float] | None, final: float) -> tuple[list[str], str]:
    """Entries and separator: ``1.3.6`` from running sums; the final value when the history is unknown."""
    if not values:
        return [fmt_num(final)], ""
    texts = [fmt_num(v) for v in values]
    return texts, ("." if all("." not in t for t in texts) else " ; ")


# ---------------------------------------------------------------- SVG building

def _el(parent: ET.Element, tag: str, text: str | None = None, **attrs: Any) -> ET.Element:
    element = ET.SubElement(parent, tag, {k.rstrip("_").replace("_", "-"): str(v) for k, v in attrs.items()})
    if text is not None:
        element.text = text
    return element


# The direction of "up" for text rotated by 0, -90 or 90 degrees (SVG's y grows downwards).
_UP = {0.0: (0.0, -1.0), -90.0: (-1.0, 0.0), 90.0: (1.0, 0.0)}


def _fit(text: str, length: float, base: float, smallest: float = 8.0) -> tuple[str, float]:
    """A font size that fits ``text`` into ``length``; cut from the left ('…') if even the smallest does not."""
    em = 0.62   # average advance of DejaVu Sans digits and letters, in em
    size = min(base, length / max(1, len(text)) / em)
    if size >= smallest:
        return text, size
    keep = max(1, int(length / (smallest * em)) - 1)
    return "\u2026" + text[-keep:], smallest


def _fit_lines(items: Sequence[str], separator: str, length: float, thick: float,
               base: float, smallest: float = 8.0) -> tuple[list[str], float]:
    """Lines and a font size fitting the entries ``items`` into a band ``length`` long and ``thick`` thick.

    Entries are kept whole and in order; up to three lines, as a long gora is
    written on paper; the earliest entries give way ('…') if even that fails.
    """
    em, leading = 0.62, 1.2
    best: tuple[float, list[str]] = (0.0, [])
    for count in range(1, min(3, len(items)) + 1):
        per_line = math.ceil(len(items) / count)
        lines = [separator.join(items[i:i + per_line]) for i in range(0, len(items), per_line)]
        lines = [line + (separator.strip() or separator) if i < len(lines) - 1 and separator == "." else line
                 for i, line in enumerate(lines)]
        size = min(base, length / (max(len(line) for line in lines) * em), thick / (len(lines) * leading))
        if size > best[0] + 0.5:        # another line only if it makes the text clearly larger
            best = (size, lines)
    size, lines = best
    if size >= smallest:
        return lines, size
    text, size = _fit(separator.join(items), length, base, smallest)
    return [text], size


def _text_lines(parent: ET.Element, x: float, y: float, lines: Sequence[str], size: float, rotate: float,
                **attrs: Any) -> None:
    """Lines of text stacked around x, y (first line on top, in the text's own frame)."""
    up = _UP[rotate]
    for index, line in enumerate(lines):
        shift = ((len(lines) - 1) / 2 - index) * size * 1.2
        _text(parent, x + up[0] * shift, y + up[1] * shift, line, size, rotate, **attrs)


def _text(parent: ET.Element, x: float, y: float, text: str, size: float, rotate: float = 0,
          anchor: str = "middle", **attrs: Any) -> ET.Element:
    """Text centred (vertically too) on x, y, optionally rotated about that point."""
    extra = {"transform": f"rotate({rotate:g} {x:.1f} {y:.1f})"} if rotate else {}
    return _el(parent, "text", text, x=f"{x:.1f}", y=f"{y + 0.35 * size:.1f}", font_size=f"{size:.1f}",
               text_anchor=anchor, **extra, **attrs)


class _Sheet:
    """Geometry of the paper sheet."""

    def __init__(self, x: float, y: float, w: float, h: float):
        self.x, self.y, self.w, self.h = x, y, w, h
        self.cx, self.cy = x + w / 2, y + h / 2

    def point(self, tx: float, ty: float, scale: float = 1.0) -> tuple[float, float]:
        """The point at (tx, ty) in -1..1 sheet coordinates, scaled towards the centre."""
        return self.cx + tx * scale * self.w / 2, self.cy + ty * scale * self.h / 2

    def strip(self, sector: _Sector, band: str) -> tuple[float, float, float, float, float]:
        """Centre x, y, length along the side, thickness and text rotation of a band in a sector."""
        outer, inner = BANDS[band]
        usable = inner + 0.35 * (outer - inner)    # clear of the lines to the corners
        mid = (outer + inner) / 2
        e0 = sector.t0 * (outer if sector.open0 else usable)
        e1 = sector.t1 * (outer if sector.open1 else usable)
        tm, span, usable = (e0 + e1) / 2, (e1 - e0) / 2, 1.0
        if sector.side in ("top", "bottom"):
            sign = -1 if sector.side == "top" else 1
            x, y = self.point(tm * usable, sign * mid)
            return x, y, span * usable * self.w, (outer - inner) * self.h / 2, 0.0
        sign = -1 if sector.side == "left" else 1
        x, y = self.point(sign * mid, tm * usable)
        return x, y, span * usable * self.h, (outer - inner) * self.w / 2, 90.0 * sign

    def outside(self, sector: _Sector, gap: float) -> tuple[float, float, float]:
        """Where the player's name goes, just outside the sheet, and its rotation."""
        tm = (sector.t0 + sector.t1) / 2
        if sector.side == "top":
            return self.point(tm, -1)[0], self.y - gap, 0.0
        if sector.side == "bottom":
            return self.point(tm, 1)[0], self.y + self.h + gap, 0.0
        if sector.side == "left":
            return self.x - gap, self.cy, -90.0
        return self.x + self.w + gap, self.cy, 90.0


def _draw_sheet(svg: ET.Element, sheet: _Sheet, players: list[str], shown: Mapping[str, str],
                summary: Mapping[str, Any], history: History, convention: str,
                balances: Mapping[str, float]) -> None:
    pulka = summary.get("pulka") or {}
    sectors, ray_ends = _LAYOUT[len(players)]
    group = _el(svg, "g", id="sheet", font_family=FONT)
    _el(group, "rect", x=sheet.x, y=sheet.y, width=sheet.w, height=sheet.h, fill="#fffdf5",
        stroke="#1f3a68", stroke_width=2)
    for band in ("pulya", "gora"):
        scale = BANDS[band][0]
        _el(group, "rect", x=f"{sheet.cx - scale * sheet.w / 2:.1f}", y=f"{sheet.cy - scale * sheet.h / 2:.1f}",
            width=f"{scale * sheet.w:.1f}", height=f"{scale * sheet.h:.1f}", fill="none",
            stroke="#1f3a68", stroke_width=1.2)
    radius = CIRCLE_SCALE * sheet.h / 2
    for tx, ty in ray_ends:
        ex, ey = sheet.point(tx, ty)
        length = math.hypot(ex - sheet.cx, ey - sheet.cy)
        sx = sheet.cx + (ex - sheet.cx) * radius / length
        sy = sheet.cy + (ey - sheet.cy) * radius / length
        _el(group, "line", x1=f"{sx:.1f}", y1=f"{sy:.1f}", x2=f"{ex:.1f}", y2=f"{ey:.1f}",
            stroke="#1f3a68", stroke_width=1.5)
    _el(group, "circle", cx=sheet.cx, cy=sheet.cy, r=f"{radius:.1f}", fill="#fffdf5", stroke="#1f3a68",
        stroke_width=1.5)
    target = summary.get("pulya_target")
    if target is None:
        _text(group, sheet.cx, sheet.cy, convention, 12, fill="#1f3a68", font_style="italic")
    else:                   # players write the pulya they play to in the centre
        _text(group, sheet.cx, sheet.cy - 8, convention, 11, fill="#1f3a68", font_style="italic")
        _text(group, sheet.cx, sheet.cy + 9, f"pulya {fmt_num(target)}", 11, class_="pulya-target",
              fill="#1f3a68", font_weight="bold")

    for player, sector in zip(players, sectors):
        entry = pulka.get(player) or {}
        known = history.get(player) or {}
        cell = _el(group, "g", class_="sector", id=f"sector-{player}")
        for band in ("gora", "pulya"):
            x, y, length, thick, rot = sheet.strip(sector, band)
            entries, separator = _column_entries(known.get(band), _score(entry, band))
            closed = band == "pulya" and target is not None and _score(entry, "pulya") >= float(target)
            if closed:
                entries = entries + ["\u2016"]     # the pulya closed: a double bar after its last entry
            lines, size = _fit_lines(entries, separator, length - 12, thick - 8, 17)
            _text_lines(cell, x, y, lines, size, rot, class_=band + (" pulya-closed" if closed else ""),
                        fill="#1a1a1a")
        _draw_whists(cell, sheet, sector, player, players, shown, entry, known.get("whists") or {})
        x, y, rot = sheet.outside(sector, 22)
        balance = balances.get(player, 0.0)
        label = _text(cell, x, y, "", 15, rot, class_="player", font_weight="bold", fill="#1a1a1a")
        label.text = shown[player] + "  "
        colour = "#1b7a2e" if balance > 0 else "#b3261e" if balance < 0 else "#555555"
        _el(label, "tspan", fmt_balance(balance), fill=colour, class_="balance")


def _draw_whists(cell: ET.Element, sheet: _Sheet, sector: _Sector, player: str, players: list[str],
                 shown: Mapping[str, str], entry: Mapping[str, Any],
                 known: Mapping[str, Sequence[float]]) -> None:
    """The whists band of one sector: one box per opponent, his name small, the whists large."""
    whists = entry.get("whists") or {}
    opponents = [p for p in players if p != player]
    x, y, length, thick, rot = sheet.strip(sector, "whists")
    part = length / len(opponents)
    # Unit vectors along the band and towards the top of its (possibly rotated) text.
    along = {0.0: (1.0, 0.0), -90.0: (0.0, -1.0), 90.0: (0.0, 1.0)}[rot]
    up = _UP[rot]
    for index, other in enumerate(opponents):
        offset = -length / 2 + part * (index + 0.5)
        px, py = x + along[0] * offset, y + along[1] * offset
        if index:
            bx, by = px - along[0] * part / 2, py - along[1] * part / 2
            _el(cell, "line", x1=f"{bx - up[0] * thick / 2:.1f}", y1=f"{by - up[1] * thick / 2:.1f}",
                x2=f"{bx + up[0] * thick / 2:.1f}", y2=f"{by + up[1] * thick / 2:.1f}",
                stroke="#1f3a68", stroke_width=0.8, stroke_dasharray="3 3")
        name, name_size = _fit("\u2192 " + shown[other], part - 10, 16, 12)
        _text(cell, px + up[0] * thick * 0.28, py + up[1] * thick * 0.28, name, name_size, rot,
              class_="whist-target", fill="#6b6b6b")
        entries, separator = _column_entries(known.get(other), float(whists.get(other, 0) or 0))
        # large: on a phone the sheet is drawn at about half its size, and the whists are what a
        # player reads there (the earliest entries give way, '…', before the numbers shrink)
        lines, size = _fit_lines(entries, separator, part - 10, thick * 0.6, 24, smallest=16)
        _text_lines(cell, px - up[0] * thick * 0.15, py - up[1] * thick * 0.15, lines, size, rot,
                    class_="whists", fill="#1a1a1a")


_OUTCOME_TEXT = {"made": "made", "failed": "failed", "passed": "both pass", "half_whist": "half-whist",
                 "ten_unwhisted": "10 unwhisted"}


def _contract_columns(summary: Mapping[str, Any]) -> bool:
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


def _history_rows(summary: Mapping[str, Any], players: list[str], shown: Mapping[str, str]) -> list[list[str]]:
    contract = _contract_columns(summary)
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


def _history_header(players: list[str], shown: Mapping[str, str], contract: bool = False) -> list[str]:
    game = ["game", "outcome"] if contract else []
    return ["#", "dealer", "price", *game, *(shown[p] for p in players), "revoke", "done"]


def _history_widths(players: list[str], contract: bool) -> list[int]:
    game = [96, 82] if contract else []
    return [34, 84, 46, *game, *([62] * len(players)), 84, 44]


def _help_lines(summary: Mapping[str, Any], shown: Mapping[str, str]) -> list[str]:
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


def _draw_history(svg: ET.Element, x: float, y: float, summary: Mapping[str, Any], players: list[str],
                  shown: Mapping[str, str]) -> float:
    """The deal history table; returns its bottom y."""
    contract = _contract_columns(summary)
    header = _history_header(players, shown, contract)
    widths = _history_widths(players, contract)
    group = _el(svg, "g", id="history", font_family=FONT, font_size=12)
    _el(group, "text", "Deals", x=x, y=y - 10, font_size=16, font_weight="bold", fill="#1f3a68")
    rows = _history_rows(summary, players, shown)
    total = sum(widths)
    _el(group, "rect", x=x, y=y, width=total, height=ROW_H, fill="#1f3a68")
    for r, row in enumerate(rows):
        if r % 2:
            _el(group, "rect", x=x, y=f"{y + ROW_H * (r + 1):.1f}", width=total, height=ROW_H, fill="#eef2f8")
    for r, row in enumerate([header, *rows]):
        deal = (summary.get("deals") or [])[r - 1] if r else None
        cx = x
        for c, (value, width) in enumerate(zip(row, widths)):
            text, size = _fit(value, width - 6, 12, 7)
            attrs: dict[str, Any] = {"fill": "#ffffff", "font_weight": "bold"} if r == 0 else {"fill": "#1a1a1a"}
            if deal is not None and not deal.get("complete"):
                attrs.update(fill="#8a8a8a", font_style="italic")
            if deal is not None and c == len(row) - 2 and deal.get("revoke"):
                attrs.update(fill="#b3261e", font_weight="bold")
            _text(group, cx + width / 2, y + ROW_H * r + ROW_H / 2, text, size, **attrs)
            cx += width
    bottom = y + ROW_H * (len(rows) + 1)
    _el(group, "rect", x=x, y=y, width=total, height=bottom - y, fill="none", stroke="#1f3a68", stroke_width=1)
    if not rows:
        _el(group, "text", "no deals", x=x + 8, y=bottom + 16, fill="#6b6b6b", font_style="italic")
        bottom += 24
    return bottom


def render_svg(summary: Mapping[str, Any], names: Mapping[str, str] | None = None,
               history: History | None = None, rules: Rules | None = None, *, sheet_only: bool = False) -> str:
    """The paper pulka of ``summary`` with the deal history beside it, as an SVG document.

    ``history`` gives the running sums written ({player: {"gora": [1, 3, 6],
    "pulya": [...], "whists": {other: [...]}}}); by default they are derived
    from the deals with ``rules`` (RULES.md defaults if None) where that
    reproduces the pulka.  ``sheet_only`` draws just the sheet, cropped close
    (the HTML page, which has the title, settlement and deals as text, so the
    picture stays legible on a 360 px phone).
    """
    players = players_of(summary)
    shown = _names(summary, names, players)
    convention, balances = _balances(summary)
    if history is None:
        history = derive_history(summary, rules)
    n_deals = len(summary.get("deals") or ())
    table_w = sum(_history_widths(players, _contract_columns(summary)))
    helps = _help_lines(summary, shown)
    width = TABLE_X + table_w + 30
    table_bottom = SHEET_Y + ROW_H * (n_deals + 1) + 40
    height = max(SHEET_Y + SHEET_H + 110 + 18 * (len(helps) + bool(helps)), table_bottom + 20)

    left, top = 0.0, 0.0
    if sheet_only:
        left, top = SHEET_X - 42, SHEET_Y - 42
        width, height = SHEET_W + 84, SHEET_H + 84
    svg = ET.Element("svg", {"xmlns": SVG_NS, "version": "1.1",
                             "viewBox": f"{left:g} {top:g} {width:g} {height:g}",
                             "width": f"{width:g}", "height": f"{height:g}"})
    _el(svg, "title", "Pulka: " + ", ".join(shown[p] for p in players))
    _el(svg, "rect", x=left, y=top, width=width, height=height, fill="#ffffff")
    if sheet_only:
        _draw_sheet(svg, _Sheet(SHEET_X, SHEET_Y, SHEET_W, SHEET_H), players, shown, summary, history,
                    convention, balances)
        ET.indent(svg)
        return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(svg, encoding="unicode") + "\n"
    complete = sum(1 for d in summary.get("deals") or () if d.get("complete"))
    heading = f"Pulka \u2014 {complete} deal{'s' if complete != 1 else ''} played"
    if summary.get("finished_after_deal") is not None:
        heading += f", finished after deal {summary['finished_after_deal']}"
    _el(svg, "text", heading, x=SHEET_X, y=36, font_family=FONT, font_size=22, font_weight="bold",
        fill="#1f3a68")
    sheet = _Sheet(SHEET_X, SHEET_Y, SHEET_W, SHEET_H)
    _draw_sheet(svg, sheet, players, shown, summary, history, convention, balances)
    legend = ("inside out: gora (running sums), pulya, whists on each opponent; "
              "outside: name and balance in whists")
    _el(svg, "text", legend, x=SHEET_X, y=SHEET_Y + SHEET_H + 56, font_family=FONT, font_size=11,
        fill="#6b6b6b")
    settlement = f"Settlement ({convention}): " + ",  ".join(
        f"{shown[p]} {fmt_balance(balances.get(p, 0.0))}" for p in players)
    _el(svg, "text", settlement, id="settlement", x=SHEET_X, y=SHEET_Y + SHEET_H + 80, font_family=FONT,
        font_size=14, font_weight="bold", fill="#1a1a1a")
    if helps:
        group = _el(svg, "g", id="help", font_family=FONT, font_size=12, fill="#1a1a1a")
        _el(group, "text", "Help (into the pulya of the highest open one, 10 whists a point):",
            x=SHEET_X, y=SHEET_Y + SHEET_H + 104, font_weight="bold")
        for index, line in enumerate(helps):
            _el(group, "text", line, x=SHEET_X + 12, y=SHEET_Y + SHEET_H + 122 + 18 * index, class_="help")
    _draw_history(svg, TABLE_X, SHEET_Y, summary, players, shown)
    ET.indent(svg)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(svg, encoding="unicode") + "\n"


# ---------------------------------------------------------------- HTML

# Phone first: the sheet scales to the width, the tables wrap instead of scrolling
# sideways, and the browser's dark mode is followed (the sheet itself stays paper-white).
PULKA_CSS = """
.pulka { --ink: #1a1a1a; --head: #1f3a68; --rule: #c8d0dc; --stripe: #eef2f8; --pos: #1b7a2e; --neg: #b3261e; }
@media (prefers-color-scheme: dark) {
  .pulka { --ink: #e6e6e6; --head: #9db8e8; --rule: #3a4658; --stripe: #1c2330; --pos: #6fd38a; --neg: #ff8a80; }
}
.pulka { color: var(--ink); }
.pulka h1 { color: var(--head); font-size: 1.4em; margin: .3em 0; overflow-wrap: anywhere; }
.pulka h2 { color: var(--head); font-size: 1.15em; margin-top: 1.2em; }
.pulka figure { margin: 0; }
.pulka figcaption { font-size: .85em; opacity: .8; margin-top: .3em; }
.pulka figure svg { display: block; width: 100%; max-width: 760px; height: auto; background: #fff;
  border-radius: 4px; box-shadow: 0 1px 4px #0003; }
/* tables keep their words whole ("dealer", not "dea ler"): a table wider than a phone scrolls
   inside its own box instead of breaking its headings letter by letter */
.pulka .table-scroll { overflow-x: auto; max-width: 760px; -webkit-overflow-scrolling: touch; }
.pulka table { border-collapse: collapse; margin-top: .5em; width: 100%; }
.pulka th, .pulka td { border: 1px solid var(--rule); padding: .25em .3em; text-align: center;
  overflow-wrap: normal; word-break: normal; hyphens: manual; }
.pulka th { background: var(--head); color: #fff; white-space: nowrap; }
.pulka td { font-variant-numeric: tabular-nums; }
@media (prefers-color-scheme: dark) { .pulka th { color: #10141c; } }
.pulka tr:nth-child(even) td { background: var(--stripe); }
.pulka tr.incomplete td { opacity: .65; font-style: italic; }
.pulka td.revoke { color: var(--neg); font-weight: bold; }
.pulka td.pos { color: var(--pos); } .pulka td.neg { color: var(--neg); }
@media (max-width: 480px) { .pulka table { font-size: .85em; } }
""".strip()

_PAGE_CSS = """
:root { color-scheme: light dark; }
body { font-family: "DejaVu Sans", Verdana, Arial, sans-serif; margin: 0 auto; padding: .8em; max-width: 800px;
  background: #fafafa; }
@media (prefers-color-scheme: dark) { body { background: #12151b; } }
""".strip()


def pulka_sections(summary: Mapping[str, Any], names: Mapping[str, str] | None = None,
                   history: History | None = None, rules: Rules | None = None) -> str:
    """The pulka as HTML sections: the sheet (SVG inline), the settlement and the deal history.

    Shared by ``pulka.html`` and the live page's ``/pulka``, inside
    an element of class ``pulka`` styled by :data:`PULKA_CSS`.
    """
    players = players_of(summary)
    shown = _names(summary, names, players)
    convention, balances = _balances(summary)
    svg = render_svg(summary, names, history, rules, sheet_only=True)
    svg = svg.split("?>", 1)[1].strip() if svg.startswith("<?xml") else svg
    esc = html.escape
    deals = summary.get("deals") or []
    rows = []
    for deal, row in zip(deals, _history_rows(summary, players, shown)):
        cells = []
        for c, value in enumerate(row):
            klass = ' class="revoke"' if c == len(row) - 2 and deal.get("revoke") else ""
            cells.append(f"<td{klass}>{esc(value)}</td>")
        klass = "" if deal.get("complete") else ' class="incomplete"'
        rows.append(f"<tr{klass}>{''.join(cells)}</tr>")
    header = "".join(f'<th scope="col">{esc(h)}</th>'
                     for h in _history_header(players, shown, _contract_columns(summary)))
    pulka = summary.get("pulka") or {}
    settle_rows = []
    for p in players:
        entry = pulka.get(p) or {}
        balance = balances.get(p, 0.0)
        klass = "pos" if balance > 0 else "neg" if balance < 0 else ""
        whists = "<br>".join(f"{esc(shown[o])}&nbsp;{esc(fmt_num(v))}"
                             for o, v in (entry.get("whists") or {}).items() if o in shown)
        settle_rows.append(
            f'<tr><th scope="row">{esc(shown[p])}</th><td>{esc(fmt_num(_score(entry, "gora")))}</td>'
            f"<td>{esc(fmt_num(_score(entry, 'pulya')))}</td><td>{whists or '&#8212;'}</td>"
            f'<td class="{klass}">{esc(fmt_balance(balance))}</td></tr>')
    complete = sum(1 for d in deals if d.get("complete"))
    return "\n".join([
        f'<figure aria-label="the pulka sheet">\n{svg}\n'
        f"<figcaption>{complete} deal{'s' if complete != 1 else ''} played; inside out: gora (running sums), "
        "pulya, whists on each opponent; outside: name and balance in whists</figcaption>\n</figure>",
        f"<h2>Settlement ({esc(convention)})</h2>",
        '<div class="table-scroll"><table id="settlement">',
        '<tr><th scope="col">player</th><th scope="col">gora</th><th scope="col">pulya</th>'
        '<th scope="col">whists on</th><th scope="col">balance</th></tr>',
        *settle_rows,
        "</table></div>",
        "<h2>Deals</h2>",
        '<div class="table-scroll"><table id="deals">',
        f"<tr>{header}</tr>",
        *(rows or [f'<tr><td colspan="{len(players) + 5}">no deals</td></tr>']),
        "</table></div>",
        *rules_section(rules),
    ])


def rules_section(rules: Rules | None) -> list[str]:
    """The rules the session played, in words (docs/RULES-variants.md), when they are known
    and not the table's own defaults (a pulka of the book's rules needs no list)."""
    if rules is None or rules == Rules():
        return []
    from ..core.house_rules import describe
    return ["<h2>Rules</h2>", '<ul id="rules">',
            *(f"<li>{html.escape(line)}</li>" for line in describe(rules)), "</ul>"]


def render_html(summary: Mapping[str, Any], names: Mapping[str, str] | None = None,
                history: History | None = None, rules: Rules | None = None) -> str:
    """A self-contained page (no external resources, works opened from a file): the same
    responsive pulka as the live page's ``/pulka``."""
    players = players_of(summary)
    shown = _names(summary, names, players)
    esc = html.escape
    title = "Pulka: " + ", ".join(shown[p] for p in players)
    return "\n".join([
        "<!DOCTYPE html>",
        '<html lang="en">',
        "<head>",
        '<meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        '<meta name="color-scheme" content="light dark">',
        f"<title>{esc(title)}</title>",
        f"<style>\n{_PAGE_CSS}\n{PULKA_CSS}\n</style>",
        "</head>",
        '<body class="pulka">',
        "<main>",
        f"<h1>{esc(title)}</h1>",
        pulka_sections(summary, names, history, rules),
        "</main>",
        "</body>",
        "</html>",
        "",
    ])


def write_report(summary: Mapping[str, Any], out_dir: Path, names: Mapping[str, str] | None = None,
                 history: History | None = None, rules: Rules | None = None) -> dict[str, Path]:
    """Write ``pulka.svg`` and ``pulka.html`` into ``out_dir``; return their paths by kind."""
    out_dir = Path(out_dir)
    paths = {"svg": out_dir / "pulka.svg", "html": out_dir / "pulka.html"}
    if history is None:
        history = derive_history(summary, rules)
    svg = render_svg(summary, names, history)
    page = render_html(summary, names, history, rules)
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
        paths["svg"].write_text(svg, encoding="utf-8")
        paths["html"].write_text(page, encoding="utf-8")
    except OSError as exc:
        raise LogError(f"cannot write the pulka report into {out_dir}: {exc.strerror or exc}") from exc
    log.info("pulka report written to %s", out_dir)
    return paths
