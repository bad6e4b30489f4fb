"""Readable text renderings of summaries and settlements (for the terminal).

The summary is FORMATS.md's JSON; a session with the contract rules adds
FORMATS-contracts.md's fields (each deal's kind, contract, whisters, outcome,
help; the pulya target and the deal after which the pulka closed), and the
text then says them too.  A raspasovka-only summary renders as before.
"""

from __future__ import annotations

from typing import Mapping

from ..core.cards import SUIT_NAMES
from ..core.view import score_text


def plural(n: int, word: str) -> str:
    """``1 deal``, ``2 deals``."""
    return f"{n:,} {word}" + ("" if n == 1 else "s")


def analysis_lines_text(lines: Mapping[int, str]) -> str:
    """Each deal's double-dummy analysis line (docs/analysis.md), one a deal in deal order:
    ``deal 3: best play: 7 for the declarer (played 6); ...``; nothing without lines."""
    return "".join(f"deal {number}: {lines[number]}\n" for number in sorted(lines))


def summary_text(summary: dict, names: Mapping[str, str] | None = None) -> str:
    names = names or {}
    pulka = summary["pulka"]
    seats = list(pulka)
    label = {s: names.get(s, s) for s in seats}
    width = max([len(v) for v in label.values()] + [6])
    out = []
    head = f"{'deal':>4}  {'dealer':<{width}}  {'price':>5}  " + "  ".join(f"{label[s]:>{width}}" for s in seats)
    out.append(head + "  note")
    out.append("-" * len(head + "  note"))
    for d in summary["deals"]:
        note = [] if "kind" not in d else [deal_kind_text(d, label)]
        if d["revoke"]:
            note.append(f"revoke by {label.get(d['revoke'], d['revoke'])}")
        if not d["complete"]:
            note.append(f"incomplete ({plural(len(d['tricks']), 'trick')})")
        out.append(f"{d['number']:>4}  {label.get(d['dealer'], d['dealer']):<{width}}  {d['price']:>5}  "
                   + "  ".join(f"{d['taken'][s]:>{width}}" for s in seats) + "  " + ", ".join(note))
    out.append("")
    out.append(f"{'pulka':<{width}}  {'pulya':>7}  {'gora':>7}  whists written")
    for s in seats:
        p = pulka[s]
        whists = ", ".join(f"{label.get(o, o)} {score_text(v)}" for o, v in p["whists"].items())
        out.append(f"{label[s]:<{width}}  {score_text(p['pulya']):>7}  {score_text(p['gora']):>7}  {whists}")
    if "pulya_target" in summary:
        target = summary["pulya_target"]
        closed = summary.get("finished_after_deal")
        out.append(f"pulya target: {target if target is not None else 'none'}"
                   + (f"; the pulka closed after deal {closed}" if closed is not None else ""))
    if "settlement" in summary:
        out.append("")
        out.append(settlement_text(summary["settlement"], names).rstrip("\n"))
    return "\n".join(out) + "\n"


def deal_kind_text(deal: Mapping, label: Mapping[str, str]) -> str:
    """What a contract-rules deal was, as players say it: ``P2 7c failed (whist P3, P1)``,
    ``raspasovka``, ``unplayed: passed``, with the help written after it."""
    kind = deal.get("kind")
    name = lambda seat: label.get(seat, seat)
    if kind is None:
        text = "auction not ended"
    elif kind == "raspasovka":
        text = "raspasovka"
    elif deal.get("game") is None:          # stopped between the auction and the contract line
        text = f"{name(deal['declarer'])} won the auction, no contract line"
    elif kind == "unplayed":
        text = f"{name(deal['declarer'])} {deal['game']}: unplayed, {(deal.get('outcome') or '').replace('_', ' ')}"
    else:
        text = f"{name(deal['declarer'])} {deal['game']}"
        if deal.get("outcome"):
            text += f" {deal['outcome']}"
        if deal.get("whisters"):
            text += f" (whist {', '.join(name(w) for w in deal['whisters'])}"
            text += f", {deal['whist_mode']})" if deal.get("whist_mode") else ")"
    for h in deal.get("help") or ():
        to = name(h["to"]) if h["to"] is not None else "own gora"
        text += f"; help {name(h['from'])} -> {to} {score_text(h['points'])}"
    return text


def settlement_text(settlement: dict, names: Mapping[str, str] | None = None) -> str:
    names = names or {}
    whole = f", whole whists {settlement['whole']}" if settlement.get("whole") else ""
    lines = [f"settlement ({settlement['convention']}{whole}), in whists:"]
    for player, value in settlement["balance"].items():
        lines.append(f"  {names.get(player, player):<12} {value:+10.2f}")
    return "\n".join(lines) + "\n"


# --- a mistake as the players read it: who, what to do now -------------------------------



def _pretty(card: object) -> str:
    from ..core.cards import parse_card
    from ..core.errors import CardError
    try:
        return parse_card(card).pretty
    except (CardError, ValueError, TypeError):
        return str(card)


def mistake_advice(alert: Mapping, label: Mapping[str, str] | None = None, turn: str | None = None) -> str:
    """One mistake in words a player can act on: ``seat3: lift the 7♠, it is seat2's turn``.

    ``alert`` is a snapshot's alert (its ``type``, ``zone``, ``card`` …); ``label`` names
    the seats; ``turn``, whose call or card it is now (for a call refused), if known."""
    label = label or {}
    name = lambda zone: "the prikup" if zone == "prikup" else label.get(zone, zone)
    kind = alert.get("type")
    zone = alert.get("zone")
    who = f"{name(zone)}: " if zone else ""
    card = f"the {_pretty(alert['card'])}" if alert.get("card") else "that card"
    expected = alert.get("expected") or turn
    if kind == "out_of_turn":
        whose = ("turn the prikup card up first" if expected == "prikup"
                 else f"it is {name(expected)}'s turn" if expected else "it is not your turn")
        return f"{who}lift {card}, {whose}"
    if kind == "same_card":
        return f"{who}lift {card}, it was already played in this deal"
    if kind == "unknown_tag":
        return f"{who}lift that tag: it is not in the deck file (enroll it, or start with the right --deck)"
    if kind == "table_not_clear":
        if alert.get("line_event"):
            return f"{who}clear the table (every card off), then call again"
        return f"{who}lift {card}: take every card of the last deal off the table first"
    if kind == "revoke":
        suit = SUIT_NAMES.get(str(alert.get("suit")), "the led suit")
        return f"{who}revoke: did not follow {suit}; it is written in this deal - press confirm"
    if kind == "not_in_play":
        return f"{who}lift {card}: no card is played until the calls are over"
    if kind == "invalid_control":
        what = alert.get("line_event") or "call"
        value = next((alert[k] for k in ("bid", "game", "call", "mode", "tricks") if alert.get(k) is not None), "")
        said = f"{what} {value}".strip()
        now = f"; it is {name(turn)}'s call" if turn else ""
        return f"{who}{said} is not allowed now{now} - enter it again"
    if kind == "order_guessed":
        return f"{who}check the order of {card} in the trick, then press confirm"
    return f"{who}{str(kind).replace('_', ' ')}"
