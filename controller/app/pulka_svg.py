"""The pulka as players draw it on paper, as an SVG document: one sector per player
(gora, pulya and the whists band on each opponent, the running sums joined by dots), the
names and balances outside, the deal history table beside the sheet.

Input is the summary JSON of FORMATS.md ("Summary JSON", FORMATS-contracts.md for
contract deals); the figures come from :mod:`controller.app.pulka_sheet`, the layout is
described in :mod:`controller.app.report`.
"""

from __future__ import annotations

import math
import textwrap
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from ..core.config import Rules
from .pulka_sheet import (History, balances_of, score_of, column_entries, has_contract_columns, help_lines, history_header,
                          history_rows, history_widths, shown_names, derive_history, fmt_balance, fmt_num,
                          players_of)

SVG_NS = "http://www.w3.org/2000/svg"
FONT = "DejaVu Sans, Verdana, Arial, sans-serif"

# Layout of the sheet (SVG user units).
SHEET_X, SHEET_Y, SHEET_W, SHEET_H = 60.0, 90.0, 600.0, 480.0
TABLE_X = SHEET_X + SHEET_W + 60.0
# Nested bands as scales of the sheet around its centre: (outer, inner).
BANDS = {"whists": (1.0, 0.72), "pulya": (0.72, 0.46), "gora": (0.46, 0.2)}
CIRCLE_SCALE = 0.14
ROW_H = 20.0


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
            entries, separator = column_entries(known.get(band), score_of(entry, band))
            closed = band == "pulya" and target is not None and score_of(entry, "pulya") >= float(target)
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
        entries, separator = column_entries(known.get(other), float(whists.get(other, 0) or 0))
        # large: on a phone the sheet is drawn at about half its size, and the whists are what a
        # player reads there (the earliest entries give way, '…', before the numbers shrink)
        lines, size = _fit_lines(entries, separator, part - 10, thick * 0.6, 24, smallest=16)
        _text_lines(cell, px - up[0] * thick * 0.15, py - up[1] * thick * 0.15, lines, size, rot,
                    class_="whists", fill="#1a1a1a")

def _draw_history(svg: ET.Element, x: float, y: float, summary: Mapping[str, Any], players: list[str],
                  shown: Mapping[str, str]) -> float:
    """The deal history table; returns its bottom y."""
    contract = has_contract_columns(summary)
    header = history_header(players, shown, contract)
    widths = history_widths(players, contract)
    group = _el(svg, "g", id="history", font_family=FONT, font_size=12)
    _el(group, "text", "Deals", x=x, y=y - 10, font_size=16, font_weight="bold", fill="#1f3a68")
    rows = history_rows(summary, players, shown)
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


ANALYSIS_ROW_H = 15.0
ANALYSIS_CHAR_W = 6.2           # the width of one character at 11 units, near enough to wrap by


def analysis_rows(analysis: Mapping[Any, str], width: float) -> list[str]:
    """The analysis lines as the sheet writes them under the history table: ``deal 3: ...``,
    deal by deal, wrapped to the table's width."""
    chars = max(20, int(width / ANALYSIS_CHAR_W))
    rows: list[str] = []
    for number, line in sorted((int(n), text) for n, text in analysis.items()):
        rows += textwrap.wrap(f"deal {number}: {line}", chars)
    return rows


def render_svg(summary: Mapping[str, Any], names: Mapping[str, str] | None = None,
               history: History | None = None, rules: Rules | None = None, *, sheet_only: bool = False,
               analysis: Mapping[Any, str] | None = None) -> str:
    """The paper pulka of ``summary`` with the deal history beside it, as an SVG document.

    ``history`` gives the running sums written ({player: {"gora": [1, 3, 6],
    "pulya": [...], "whists": {other: [...]}}}); by default they are derived
    from the deals with ``rules`` (RULES.md defaults if None) where that
    reproduces the pulka.  ``sheet_only`` draws just the sheet, cropped close
    (the HTML page, which has the title, settlement and deals as text, so the
    picture stays legible on a 360 px phone).  ``analysis`` ({deal number: line}) lists each
    deal's double-dummy analysis under the history table (docs/analysis.md).
    """
    players = players_of(summary)
    shown = shown_names(summary, names, players)
    convention, balances = balances_of(summary)
    if history is None:
        history = derive_history(summary, rules)
    n_deals = len(summary.get("deals") or ())
    table_w = sum(history_widths(players, has_contract_columns(summary)))
    helps = help_lines(summary, shown)
    width = TABLE_X + table_w + 30
    table_bottom = SHEET_Y + ROW_H * (n_deals + 1) + 40
    best = analysis_rows(analysis, table_w) if analysis and n_deals else []
    height = max(SHEET_Y + SHEET_H + 110 + 18 * (len(helps) + bool(helps)),
                 table_bottom + 20 + (ANALYSIS_ROW_H * (len(best) + 1) + 10 if best else 0))

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
    bottom = _draw_history(svg, TABLE_X, SHEET_Y, summary, players, shown)
    if best:
        group = _el(svg, "g", id="analysis", font_family=FONT, font_size=11, fill="#1a1a1a")
        _el(group, "text", "Best play", x=TABLE_X, y=bottom + 34, font_size=14, font_weight="bold", fill="#1f3a68")
        for index, row in enumerate(best):
            _el(group, "text", row, x=TABLE_X, y=bottom + 34 + ANALYSIS_ROW_H * (index + 1), class_="analysis")
    ET.indent(svg)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(svg, encoding="unicode") + "\n"


# ---------------------------------------------------------------- HTML
