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
from pathlib import Path
from typing import Any, Mapping

from ..core.config import Rules
from ..core.errors import LogError
# The figures and the SVG sheet live beside this page; their names stay importable from here.
from .pulka_sheet import (History, balances_of, has_contract_columns, history_header, history_rows, shown_names, score_of,
                          derive_history, fmt_balance, fmt_num, players_of, written_writes)
from .pulka_svg import render_svg

__all__ = ["PULKA_CSS", "History", "analysis_section", "derive_history", "fmt_balance", "fmt_num", "players_of", "pulka_sections",
           "render_html", "render_svg", "rules_section", "write_report", "written_writes"]

log = logging.getLogger(__name__)

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
                   history: History | None = None, rules: Rules | None = None,
                   analysis: Mapping[Any, str] | None = None) -> str:
    """The pulka as HTML sections: the sheet (SVG inline), the settlement, the deal history
    and, given ``analysis`` ({deal number: line}, the session's ``analysis.jsonl``), each
    deal's double-dummy analysis (docs/analysis.md).

    Shared by ``pulka.html`` and the live page's ``/pulka``, inside
    an element of class ``pulka`` styled by :data:`PULKA_CSS`.
    """
    players = players_of(summary)
    shown = shown_names(summary, names, players)
    convention, balances = balances_of(summary)
    svg = render_svg(summary, names, history, rules, sheet_only=True)
    svg = svg.split("?>", 1)[1].strip() if svg.startswith("<?xml") else svg
    esc = html.escape
    deals = summary.get("deals") or []
    rows = []
    for deal, row in zip(deals, history_rows(summary, players, shown)):
        cells = []
        for c, value in enumerate(row):
            klass = ' class="revoke"' if c == len(row) - 2 and deal.get("revoke") else ""
            cells.append(f"<td{klass}>{esc(value)}</td>")
        klass = "" if deal.get("complete") else ' class="incomplete"'
        rows.append(f"<tr{klass}>{''.join(cells)}</tr>")
    header = "".join(f'<th scope="col">{esc(h)}</th>'
                     for h in history_header(players, shown, has_contract_columns(summary)))
    pulka = summary.get("pulka") or {}
    settle_rows = []
    for p in players:
        entry = pulka.get(p) or {}
        balance = balances.get(p, 0.0)
        klass = "pos" if balance > 0 else "neg" if balance < 0 else ""
        whists = "<br>".join(f"{esc(shown[o])}&nbsp;{esc(fmt_num(v))}"
                             for o, v in (entry.get("whists") or {}).items() if o in shown)
        settle_rows.append(
            f'<tr><th scope="row">{esc(shown[p])}</th><td>{esc(fmt_num(score_of(entry, "gora")))}</td>'
            f"<td>{esc(fmt_num(score_of(entry, 'pulya')))}</td><td>{whists or '&#8212;'}</td>"
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
        *analysis_section(analysis),
        *rules_section(rules),
    ])


def analysis_section(analysis: Mapping[Any, str] | None) -> list[str]:
    """Each deal's analysis line ("best play: 7 for the declarer (played 6); ..."), deal by
    deal, when the session has any (its keys: deal numbers, as ints or as JSON's strings)."""
    if not analysis:
        return []
    lines = sorted((int(number), line) for number, line in analysis.items())
    return ["<h2>Best play</h2>", '<ul id="analysis">',
            *(f'<li data-deal="{number}"><span class="deal">deal {number}</span>: {html.escape(line)}</li>'
              for number, line in lines), "</ul>"]


def rules_section(rules: Rules | None) -> list[str]:
    """The rules the session played, in words (docs/RULES-variants.md), when they are known
    and not the table's own defaults (a pulka of the book's rules needs no list)."""
    if rules is None or rules == Rules():
        return []
    from ..core.house_rules import describe
    return ["<h2>Rules</h2>", '<ul id="rules">',
            *(f"<li>{html.escape(line)}</li>" for line in describe(rules)), "</ul>"]


def render_html(summary: Mapping[str, Any], names: Mapping[str, str] | None = None,
                history: History | None = None, rules: Rules | None = None,
                analysis: Mapping[Any, str] | None = None) -> str:
    """A self-contained page (no external resources, works opened from a file): the same
    responsive pulka as the live page's ``/pulka``."""
    players = players_of(summary)
    shown = shown_names(summary, names, players)
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
        pulka_sections(summary, names, history, rules, analysis),
        "</main>",
        "</body>",
        "</html>",
        "",
    ])


def write_report(summary: Mapping[str, Any], out_dir: Path, names: Mapping[str, str] | None = None,
                 history: History | None = None, rules: Rules | None = None,
                 analysis: Mapping[Any, str] | None = None) -> dict[str, Path]:
    """Write ``pulka.svg`` and ``pulka.html`` (with each deal's ``analysis`` line, when given)
    into ``out_dir``; return their paths by kind."""
    out_dir = Path(out_dir)
    paths = {"svg": out_dir / "pulka.svg", "html": out_dir / "pulka.html"}
    if history is None:
        history = derive_history(summary, rules)
    svg = render_svg(summary, names, history, analysis=analysis)
    page = render_html(summary, names, history, rules, analysis)
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
        paths["svg"].write_text(svg, encoding="utf-8")
        paths["html"].write_text(page, encoding="utf-8")
    except OSError as exc:
        raise LogError(f"cannot write the pulka report into {out_dir}: {exc.strerror or exc}") from exc
    log.info("pulka report written to %s", out_dir)
    return paths
