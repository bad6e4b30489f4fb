"""House rules of the pulya target's help (docs/RULES-variants.md)."""

from __future__ import annotations

from .book import HouseRule


def _apply(answers: dict, value: bool) -> None:
    answers["help_sitting_out_dealer"] = value


RULES = (
    HouseRule("help_sitting_out_dealer", (True, False),
              {False: "a sitting-out dealer's pulya is never helped"}, _apply,
              "PrefAndroid Calculation.kt addValue"),
)
