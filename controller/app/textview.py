"""Readable text renderings of summaries and settlements (for the terminal)."""

from __future__ import annotations

from typing import Mapping


def plural(n: int, word: str) -> str:
    """``1 deal``, ``2 deals``."""
    return f"{n:,} {word}" + ("" if n == 1 else "s")


def _fmt(value: float | int) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


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
        note = []
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
        whists = ", ".join(f"{label.get(o, o)} {_fmt(v)}" for o, v in p["whists"].items())
        out.append(f"{label[s]:<{width}}  {_fmt(p['pulya']):>7}  {_fmt(p['gora']):>7}  {whists}")
    if "settlement" in summary:
        out.append("")
        out.append(settlement_text(summary["settlement"], names).rstrip("\n"))
    return "\n".join(out) + "\n"


def settlement_text(settlement: dict, names: Mapping[str, str] | None = None) -> str:
    names = names or {}
    lines = [f"settlement ({settlement['convention']}), in whists:"]
    for player, value in settlement["balance"].items():
        lines.append(f"  {names.get(player, player):<12} {value:+10.2f}")
    return "\n".join(lines) + "\n"
