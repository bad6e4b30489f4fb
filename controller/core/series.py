"""Who deals next, at what price (RULES.md "Progression of repeated raspasovka",
RULES-contracts.md "Dealer and progression").

The one place the series is worked out; the tracker asks it after every deal.
(``controller/app/sim.py`` ``TableSimulator._advance`` and ``controller/app/report.py``
``_deal_writes`` still follow the raspasovka series on their own; they belong to other
owners and should ask :func:`next_deal` too -- left for the lead.)

- An abandoned deal (``new_deal``, a misdeal): the same dealer deals again at the same step.
- After a raspasovka with ``same_dealer``: the same dealer, the next price of the
  progression, until its last price; then the deal passes on and the series restarts.
- After any other deal (a contract, misère or unplayed deal ends a series), or with
  ``same_dealer = false``: the next seat clockwise, the first price.

The house rules of the series (the book's ``series_end``, ``series_after_last`` and
``dealer_after_failed_game``; docs/RULES-variants.md) change three of these answers: which
deals end a series (a deal that does not is skipped over: the next raspasovka takes the
price it would have had), whether the price restarts or stays at the last step, and who
deals after a failed game inside a running series.
"""

from __future__ import annotations

from typing import Protocol

from .bidding import RASPASOVKA
from .cards import next_seat
from .config import GameConfig


class EndedDeal(Protocol):
    dealer: str
    step: int
    abandoned: bool
    kind: str | None
    # optional: ``entry`` (the deal's summary entry, its "outcome"), asked only by house rules


def next_deal(config: GameConfig, last: EndedDeal | None) -> tuple[str, int]:
    """(dealer, progression step) of the deal after ``last`` (the first deal when None)."""
    rules = config.rules
    if last is None:
        return config.table.first_dealer, 0
    if last.abandoned:
        return last.dealer, last.step
    book = rules.book
    last_step = len(rules.progression) - 1
    onward = next_seat(last.dealer, config.table.players)
    if last.kind == RASPASOVKA:
        if last.step < last_step:
            return (last.dealer if rules.same_dealer else onward), last.step + 1 if (
                rules.same_dealer or book.series_after_last == "stay") else 0
        return onward, last_step if book.series_after_last == "stay" else 0
    entry = getattr(last, "entry", None) or {}
    if book.series_ends(last.kind, entry.get("outcome")):
        return onward, 0
    # a deal that leaves the series running: the next raspasovka keeps its price
    if book.dealer_after_failed_game == "same" and last.step > 0:
        return last.dealer, last.step
    return onward, last.step

