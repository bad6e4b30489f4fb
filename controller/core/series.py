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
"""

from __future__ import annotations

from typing import Protocol

from .cards import next_seat
from .config import GameConfig

RASPASOVKA = "raspasovka"


class EndedDeal(Protocol):
    dealer: str
    step: int
    abandoned: bool
    kind: str | None


def next_deal(config: GameConfig, last: EndedDeal | None) -> tuple[str, int]:
    """(dealer, progression step) of the deal after ``last`` (the first deal when None)."""
    rules = config.rules
    if last is None:
        return config.table.first_dealer, 0
    if last.abandoned:
        return last.dealer, last.step
    if last.kind == RASPASOVKA and rules.same_dealer and last.step + 1 < len(rules.progression):
        return last.dealer, last.step + 1
    return next_seat(last.dealer, config.table.players), 0
