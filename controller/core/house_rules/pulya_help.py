"""House rules of the pulya target: its help, and when the pulka ends (docs/RULES-variants.md)."""

from __future__ import annotations

from .book import HouseRule


def _apply(answers: dict, value: bool) -> None:
    answers["help_sitting_out_dealer"] = value


def _end(answers: dict, value: str) -> None:
    answers["pulka_end"] = value


RULES = (
    HouseRule("help_sitting_out_dealer", (True, False),
              {False: "a sitting-out dealer's pulya is never helped"}, _apply,
              "PrefAndroid Calculation.kt addValue"),
    HouseRule("pulka_end", ("each", "sum"),
              {"sum": "the pulka ends when the pulyas' sum reaches the target; no pulya closes, none is helped"},
              _end, "PrefAndroid Calculation.kt isFinished, addValue (EndingType.Sum)"),
)
