"""House rules of the whists a contract writes, and of who must whist (docs/RULES-variants.md)."""

from __future__ import annotations

from .book import HouseRule


def _set(name: str, when):
    def apply(answers: dict, value) -> None:
        answers[name] = when(value)
    return apply


RULES = (
    HouseRule("gentleman_whist", (False, True),
              {True: "gentleman's whist: whister and passer share the whists of a failed contract equally"},
              _set("gentleman_whist", bool), "PrefAndroid Calculation.kt writeGame, ConsolationType.Gentlemen"),
    HouseRule("single_whister_tricks", ("defence", "own"),
              {"own": "a single whister writes whists for his own tricks only"},
              _set("single_whister_own_tricks", lambda v: v == "own"),
              "kozlov server.cpp calculateDealScore"),
    HouseRule("ten_obligation", (True, False),
              {False: "a whisted 10 carries no whist obligation"},
              _set("ten_obligation", bool), "PrefAndroid Calculation.kt sumVistNeeded"),
    HouseRule("consolation_price", ("game", "ten"),
              {"ten": "a failed contract's consolation is 10 a trick, whatever the game"},
              _set("consolation_per_trick", lambda v: 10 if v == "ten" else None),
              "PrefAndroid Calculation.kt writeGame (ConsolationSum.Max10)"),
    # asked by the deal's whisting (controller.core.deal), not by the scoring: it decides
    # which whist calls are valid; a 6♠ whisted by both is scored as any other
    HouseRule("stalingrad", (False, True),
              {True: "Stalingrad: a 6♠ is whisted by both defenders"},
              _set("stalingrad", bool), "PrefAndroid Game.kt setContract (stalindgrad); PrefCount commonRules"),
)
