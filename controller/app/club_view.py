"""What the club board knows of one table, and the board drawn from it: the terminal's
rows and the ``/club`` page's JSON (README "The club page").

A table's view is built from its retained ``state`` (the snapshot's board part,
:func:`controller.app.mqtt.board_state`, field names of :mod:`controller.core.snapshot`)
and its mirrors (:mod:`controller.app.club_mirror`).  Everything in it came from the
network, so the terminal shows no control character of it.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from .club_mirror import Mirror

ANALYSIS_CHARS = 2000           # a deal's analysis line: its head and the costly cards (thirty at most)


@dataclass
class TableView:
    table: str
    status: str = "?"
    session: str = ""
    lines: int = 0                      # lines the table's log had at its last state
    snapshot: dict = field(default_factory=dict)    # the state topic's board part (mqtt.board_state)
    mirrors: dict[str, Mirror] = field(default_factory=dict)
    analysis: dict | None = None        # the state's last analysed deal: {"deal", "line"}

    def board(self) -> dict:
        """This table as the board shows it, JSON-ready: the terminal row and the ``/club`` page
        (README "The club page") are both drawn from it."""
        snap = self.snapshot
        names = snap.get("names") or {}
        seats = [s for s in snap.get("seats") or [] if isinstance(s, str)]
        deal = snap.get("deal") if isinstance(snap.get("deal"), dict) else None
        balance = (snap.get("settlement") or {}).get("balance") or {}
        pulka = snap.get("pulka") or {}
        played = snap.get("deals_played")
        if not isinstance(played, int):           # a table from before the lean state: its history
            played = len(snap.get("deals") or [])
        mirror = self.mirrors.get(self.session)
        return {
            "table": self.table, "status": self.status, "session": self.session,
            "known": bool(snap),
            "players": [{"seat": s, "name": str(names.get(s) or s)} for s in seats],
            "phase": snap.get("phase") or "idle",
            "deal": _deal_view(deal, names),
            "deals_played": played,
            "next_deal": snap.get("next_deal") or {},
            "pulka": [{"seat": s, "name": str(names.get(s) or s),
                       "pulya": _num((pulka.get(s) or {}).get("pulya")),
                       "gora": _num((pulka.get(s) or {}).get("gora")),
                       "whists": _num(sum(v for v in ((pulka.get(s) or {}).get("whists") or {}).values()
                                          if isinstance(v, (int, float)))),
                       "balance": _num(balance.get(s))} for s in seats],
            "convention": (snap.get("settlement") or {}).get("convention"),
            "alerts": (snap["alerts_waiting"] if isinstance(snap.get("alerts_waiting"), int)
                       else len(snap.get("alerts") or [])),
            "link": (snap.get("link") or {}).get("state", "none"),
            "seq": snap.get("seq", 0),
            "analysis": self.analysis,
            "mirror": None if mirror is None else {
                "lines": mirror.lines, "table_lines": max(self.lines, mirror.lines),
                "gap": list(mirror.gap) if mirror.gap else None, "held": len(mirror.pending),
                "duplicates": mirror.duplicates},
        }

    def row(self) -> list[str]:
        b = self.board()
        names = {p["seat"]: p["name"] for p in b["players"]}
        players = ", ".join(names.values()) or "?"
        deal = b["deal"]
        if deal:
            due = deal.get("expected")
            what = f"#{deal['number']} trick {deal['trick']}" + (f", {names.get(due, due)} due" if due else "")
            contract = deal["contract"]
        elif b["known"]:
            what = f"between deals ({b['deals_played']} played)"
            dealer = b["next_deal"].get("dealer", "?")
            contract = f"next: {names.get(dealer, dealer)} deals"
        else:
            what = contract = "?"
        pulka_text = " ".join(f"{p['name']} {p['gora']}/{p['pulya']}" for p in b["pulka"]) or "-"
        mirror = b["mirror"]
        if mirror is None:
            mirror_text = "no mirror yet"
        else:
            mirror_text = f"{mirror['lines']}/{mirror['table_lines']} lines"
            if mirror["gap"]:
                mirror_text += f", gap {mirror['gap'][0]}-{mirror['gap'][1]} (waiting for the table)"
        return [self.table, self.status, players, what, contract, pulka_text, mirror_text]


def _deal_view(deal: dict | None, names: dict) -> dict | None:
    """The deal in progress for the board: its number, trick, whose card, and the contract in words
    (raspasovka, misère, or declarer, game and trumps)."""
    if not deal:
        return None
    kind = deal.get("kind") or ("raspasovka" if "declarer" not in deal else None)
    declarer = deal.get("declarer")
    who = str(names.get(declarer) or declarer) if declarer else None
    game = deal.get("game")
    if kind == "raspasovka":
        contract = "raspasovka"
    elif kind == "misere":
        contract = f"misère by {who}"
    elif kind == "contract" and game:
        contract = f"{game} by {who}"
    elif kind == "unplayed":
        contract = f"{game or 'contract'} by {who}, not played"
    else:
        top = deal.get("bid_to_beat") or {}
        contract = f"auction, bid to beat {top['bid']}" if top.get("bid") else "auction"
    return {"number": deal.get("number"), "dealer": deal.get("dealer"), "price": deal.get("price"),
            "trick": deal.get("trick"), "expected": deal.get("expected"), "kind": kind,
            "declarer": declarer, "game": game, "trump": deal.get("trump"),
            "whisters": list(deal.get("whisters") or []), "whist_mode": deal.get("whist_mode"),
            "taken": deal.get("taken") or {}, "contract": contract}


def analysis_line(value: Any) -> dict | None:
    """A state's ``analysis`` as the board keeps it: ``{"deal": n, "line": text}`` with the
    line at most :data:`ANALYSIS_CHARS` long, or None for anything else (a table that
    analyses nothing, or sends what is not one)."""
    if not isinstance(value, dict):
        return None
    deal, line = value.get("deal"), value.get("line")
    if isinstance(deal, bool) or not isinstance(deal, int) or deal < 1 or not isinstance(line, str):
        return None
    return {"deal": deal, "line": line[:ANALYSIS_CHARS]}


def _num(value: Any) -> int | float:
    """A figure of the network's state as the board keeps it: a number, never a string (the
    page formats it); 0 for what is not a number, and no ``Fraction`` of what JSON let in
    (``Infinity``, ``NaN``)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return 0
    return int(value) if float(value).is_integer() else value


HEADERS = ["table", "status", "players", "deal", "contract", "pulka (gora/pulya)", "mirror"]


def shown(text: str) -> str:
    """A cell as the terminal may show it: names and statuses come from the network, so a
    control character (an escape sequence that would clear or retitle the board's terminal,
    a carriage return, a bidi override) is shown as ``?``, never sent to the terminal."""
    return "".join(ch if ch.isprintable() else "?" for ch in text)


def board_text(tables: dict[str, TableView], bad: Counter) -> str:
    rows = [HEADERS] + [[shown(cell) for cell in tables[t].row()] for t in sorted(tables)]
    widths = [max(len(r[i]) for r in rows) for i in range(len(HEADERS))]
    lines = [f"preftable club: {len(tables)} table(s)" +
             (f"; bad messages: {sum(bad.values())} (" + ", ".join(f"{k} {v}" for k, v in sorted(bad.items())) + ")"
              if bad else "")]
    lines += ["  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in rows]
    return "\n".join(lines) + "\n"


def board_dict(tables: dict[str, TableView], bad: Counter, *, seq: int = 0) -> dict:
    """The whole board, JSON-ready (``/api/club``): every table, and the bad messages by reason."""
    return {"seq": seq, "tables": [tables[t].board() for t in sorted(tables)],
            "bad": dict(sorted(bad.items())), "bad_total": sum(bad.values())}

