"""House rules of the raspasovka series (docs/RULES-variants.md); ``controller.core.series``
asks the book's answers."""

from __future__ import annotations

from .book import HouseRule, every_game

# Which ended game (its kind, its outcome) ends a raspasovka series:
# every_game: any contract, misère or unplayed deal (RULES-contracts.md "Dealer and progression");
# not_failed: all but a failed contract (PrefAndroid raspasyLength: a misère always does);
# made_in_play: only a contract or misère made in play (kozlov resetPassGameIfNeeded)
# Named functions, not lambdas: the rules travel to the analysis worker process by pickle.
def not_failed(kind: str | None, outcome: str | None) -> bool:
    return kind == "misere" or outcome != "failed"


def made_in_play(kind: str | None, outcome: str | None) -> bool:
    return outcome == "made"


SERIES_ENDS = {"every_game": every_game, "not_failed": not_failed, "made_in_play": made_in_play}


def _series_end(answers: dict, value: str) -> None:
    answers["series_end"] = value
    answers["series_ends"] = SERIES_ENDS[value]


def _set(name: str):
    def apply(answers: dict, value) -> None:
        answers[name] = value
    return apply


RULES = (
    HouseRule("series_end", tuple(SERIES_ENDS),
              {"not_failed": "a failed contract does not end a raspasovka series",
               "made_in_play": "only a contract or misère made in play ends a raspasovka series"},
              _series_end, "PrefAndroid Calculation.kt raspasyLength; kozlov server.cpp resetPassGameIfNeeded"),
    HouseRule("series_after_last", ("restart", "stay"),
              {"stay": "the raspasovka price stays at the last step until the series ends"},
              _set("series_after_last"), "PrefAndroid currentRaspasyMultiplier; kozlov PassGame::update"),
    HouseRule("dealer_after_failed_game", ("next", "same"),
              {"same": "a failed contract inside a running series is dealt again by the same dealer"},
              _set("dealer_after_failed_game"), "PrefAndroid Calculation.kt writeGame (dealer++)"),
)
