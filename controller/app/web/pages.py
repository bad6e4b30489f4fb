"""The live table page's HTML, rendered on the table from the snapshot.

Every page and every live-update fragment is rendered here by Jinja2 with
autoescaping on, so anything from a config file or a log (player names, alert
texts, session names) is text, never markup.  The fragments (``parts``) are the
same templates the pages include: the page is rendered once on the server and
the script only swaps in the fragments that changed (no second renderer in
JavaScript).

Input is :meth:`controller.core.snapshot.TableSnapshot.to_dict`;
``names_from_config = false`` labels seats with their seat names only.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Mapping, Sequence

from jinja2 import Environment, FileSystemLoader
from markupsafe import Markup

from ...core.bidding import RANK
from ...core.cards import RANKS, STRAIN_SYMBOLS, STRAINS, SUIT_SYMBOLS, next_seat
from ...core.cards import SUIT_NAMES as SUIT_WORDS
from ...core.events import GAMES as BIDS, LEVELS, MISERE, WHIST_CALLS, WHIST_MODES
from ...core.config import Rules
from .. import report
from ..textview import mistake_advice

HERE = Path(__file__).resolve().parent
TEMPLATES = HERE / "templates"
STATIC = HERE / "static"

SUIT_NAMES = {**SUIT_WORDS, "n": "no trumps"}
RANK_NAMES = {"J": "jack", "Q": "queen", "K": "king", "A": "ace"}
GAMES = BIDS + (MISERE,)          # a result line's games (and, from the winning bid up, a contract line's)
BUTTONS = (("undo", "Undo"), ("confirm", "Confirm"), ("new_deal", "New deal"))
PHASE_TEXT = {"idle": "between deals", "play": "play", "auction": "auction (bidding)",
              "contract": "declarer names the contract", "whisting": "whisting"}
# The parts a page can ask the event stream for, and the template of each.
PARTS = {"table": "_table.html", "controls": "_controls.html", "history": "_history.html",
         "pulka": "_pulka.html"}


def card_html(code: object) -> Markup:
    """A card as coloured text with its words for screen readers: ``10♥`` / "10 of hearts"."""
    text = str(code)
    rank, suit = text[:-1], text[-1:]
    if suit not in SUIT_SYMBOLS or rank not in RANKS:
        return Markup('<span class="card">{}</span>').format(text)
    words = f"{RANK_NAMES.get(rank, rank)} of {SUIT_NAMES[suit]}"
    return Markup('<span class="card suit-{s}" data-card="{c}" title="{w}">'
                  '<span aria-hidden="true">{r}{sym}</span><span class="sr">{w}</span></span>'
                  ).format(s=suit, c=text, w=words, r=rank, sym=SUIT_SYMBOLS[suit])


def game_html(code: object) -> Markup:
    """A bid or game (``7h``, ``10n``, ``misere``, ``pass``) with its strain in colour and in words."""
    text = str(code or "")
    match = re.fullmatch(r"(6|7|8|9|10)([scdhn])", text)
    if not match:
        return Markup('<span class="game">{}</span>').format(text.replace("misere", "mis\u00e8re"))
    level, strain = match.groups()
    symbol = SUIT_SYMBOLS.get(strain, "NT")
    return Markup('<span class="game suit-{s}" title="{lv} {w}"><span aria-hidden="true">{lv}{sym}</span>'
                  '<span class="sr">{lv} {w}</span></span>').format(s=strain, lv=level, sym=symbol,
                                                                   w=SUIT_NAMES[strain])


def _seat_key(seat: str) -> int:
    match = re.fullmatch(r"seat(\d+)", seat)
    return int(match.group(1)) if match else 99


def environment() -> Environment:
    """The templates of this package, autoescaped, with the card and game filters."""
    env = Environment(loader=FileSystemLoader(str(TEMPLATES)), autoescape=True,
                      trim_blocks=True, lstrip_blocks=True)
    env.filters["card"] = card_html
    env.filters["game"] = game_html
    env.globals.update(BIDS=BIDS, GAMES=GAMES, LEVELS=LEVELS, STRAINS=STRAINS, SYMBOLS=STRAIN_SYMBOLS,
                       WHIST_CALLS=WHIST_CALLS, WHIST_MODES=WHIST_MODES, BUTTONS=BUTTONS,
                       PHASE_TEXT=PHASE_TEXT, SUIT_NAMES=SUIT_NAMES,
                       advice=mistake_advice)
    return env


class Pages:
    """Renders the pages and fragments for one table (its rules, and whether names are shown)."""

    parts = PARTS

    def __init__(self, *, rules: Rules | None = None, names_from_config: bool = True):
        self.rules = rules or Rules()
        self.names_from_config = names_from_config
        self.env = environment()

    # ------------------------------------------------------------------ the view of a snapshot

    def names(self, state: Mapping[str, Any]) -> dict[str, str]:
        seats = list(state.get("seats") or ())
        given = (state.get("names") or {}) if self.names_from_config else {}
        return {seat: str(given.get(seat) or seat) for seat in seats + ["prikup"]}

    def summary(self, state: Mapping[str, Any]) -> dict[str, Any]:
        """The session so far as the report's summary input (FORMATS.md "Summary JSON")."""
        return {"deals": list(state.get("deals") or ()), "pulka": state.get("pulka") or {},
                "settlement": state.get("settlement") or {}}

    def context(self, state: Mapping[str, Any], *, authorised: bool = False) -> dict[str, Any]:
        seats = sorted(state.get("seats") or (), key=_seat_key)
        deal = state.get("deal") or None
        names = self.names(state)
        expected = deal.get("expected") if deal else None
        leds = state.get("leds") or {}
        return {"state": state, "seats": seats, "deal": deal, "names": names, "expected": expected,
                "leds": leds, "on_table": state.get("on_table") or {}, "phase": state.get("phase") or "idle",
                "alerts": list(state.get("alerts") or ()), "last_trick": state.get("last_trick"),
                "link": state.get("link") or {"state": "none", "detail": ""},
                "next_deal": state.get("next_deal") or {}, "authorised": authorised,
                "layout": f"p{len(seats)}", "deals": list(state.get("deals") or ()),
                "call_seat": self._call_seat(state, seats), "bidding": self.rules.bidding,
                "whist_mode_open": self._whist_mode_open(deal, state.get("phase")),
                **self._remote(state, seats, deal)}

    @staticmethod
    def _remote(state: Mapping[str, Any], seats: list[str], deal: Mapping[str, Any] | None) -> dict[str, Any]:
        """What the remote's controls offer now: the games a contract line may name, and the
        claim editor's seats (declarer first, then clockwise; a sitting-out dealer never)
        and the tricks left to claim (RULES-contracts.md "Claims")."""
        phase = state.get("phase") or "idle"
        out: dict[str, Any] = {"contract_games": GAMES, "claim_seats": [], "claim_left": 0, "claim_waiting": None}
        if not deal:
            return out
        beat = (deal.get("bid_to_beat") or {}).get("bid")
        if phase == "contract" and beat in RANK:
            # at least the winning bid, never misère (RULES-contracts.md "The declarer's game")
            out["contract_games"] = tuple(g for g in BIDS if RANK[g] >= RANK[beat])
        waiting = deal.get("claim")
        if isinstance(waiting, Mapping) and waiting.get("state", "waiting") == "waiting":
            out["claim_waiting"] = waiting.get("tricks") or waiting
        declarer = deal.get("declarer")
        if (phase == "play" and deal.get("kind") in ("contract", "misere") and declarer in seats
                and not deal.get("current") and out["claim_waiting"] is None):
            active = [s for s in seats if not (len(seats) == 4 and s == deal.get("dealer"))]
            start = active.index(declarer) if declarer in active else 0
            out["claim_seats"] = active[start:] + active[:start]
            out["claim_left"] = 10 - len(deal.get("tricks") or ())
        return out

    @staticmethod
    def _call_seat(state: Mapping[str, Any], seats: list[str]) -> str:
        """The seat the controls preselect: whose call it is (or whose card); between deals the
        first to bid, the seat after the next dealer."""
        deal = state.get("deal") or {}
        for key in ("turn", "expected"):
            if deal.get(key) in seats:
                return deal[key]
        dealer = (state.get("next_deal") or {}).get("dealer")
        if dealer in seats:
            return next_seat(dealer, len(seats))
        return seats[0] if seats else ""

    @staticmethod
    def _whist_mode_open(deal: Mapping[str, Any] | None, phase: str | None) -> bool:
        """Whether a whist mode may still be chosen: whisting, or play before the first card."""
        if not deal or deal.get("kind") not in ("contract", "misere"):
            return False
        return phase == "whisting" or (phase == "play" and not deal.get("current") and not deal.get("tricks"))

    # ------------------------------------------------------------------ fragments and pages

    def part(self, name: str, state: Mapping[str, Any], *, authorised: bool = False) -> str:
        """One live fragment (a key of :data:`PARTS`)."""
        context = self.context(state, authorised=authorised)
        if name == "pulka":
            context["pulka_html"] = self.pulka_html(state)
        return self.env.get_template(PARTS[name]).render(context)

    def pulka_html(self, state: Mapping[str, Any]) -> Markup:
        summary = self.summary(state)
        seats = [s for s in state.get("seats") or () if s]
        if len(seats) not in (3, 4):
            return Markup("<p>no pulka yet</p>")
        summary["pulka"] = summary["pulka"] or {s: {"gora": 0, "pulya": 0, "whists": {}} for s in seats}
        names = {s: n for s, n in self.names(state).items() if s in seats}
        return Markup(report.pulka_sections(summary, names, rules=self.rules, analysis=state.get("analysis")))

    def page(self, template: str, state: Mapping[str, Any], *, authorised: bool, title: str,
             parts: Sequence[str] = (), **extra: Any) -> str:
        context = self.context(state, authorised=authorised)
        context.update(title=title, parts=list(parts), pulka_css=report.PULKA_CSS, **extra)
        for name in parts:
            context[f"part_{name}"] = Markup(self.part(name, state, authorised=authorised))
        return self.env.get_template(template).render(context)


__all__ = ["Pages", "PARTS", "environment", "card_html", "game_html", "STATIC", "TEMPLATES", "BIDS"]
