"""House rules of the settlement: exact thirds and quarters (RULES.md) or whole whists
(docs/RULES-variants.md)."""

from __future__ import annotations

from .book import HouseRule

SETTLEMENTS = ("exact", "whole_rounded", "whole_truncated")


def _apply(answers: dict, value: str) -> None:
    answers["settlement"] = value


RULES = (
    HouseRule("settlement", SETTLEMENTS,
              {"whole_rounded": "settled in whole whists, each gora and pulya share rounded to the nearest",
               "whole_truncated": "settled in whole whists, each player's gora in whists cut toward zero"},
              _apply, "kozlov common.hpp calculateFinalResult; PrefCount PlayerStatistics.getFinalMountainInWhists"),
)

