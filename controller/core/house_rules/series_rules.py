"""House rules of the raspasovka series (docs/RULES-variants.md); ``controller.core.series``
asks the book's answers."""

from __future__ import annotations

from .book import HouseRule

# every_game: any contract, misère or unplayed deal ends a series (RULES-contracts.md);
# not_failed: all but a failed contract end it (PrefAndroid raspasyLength: a misère always does);
# made_in_play: only a contract or misère made in play ends it (kozlov resetPassGameIfNeeded)
SERIES_ENDS = ("every_game", "not_failed", "made_in_play")


def _set(name: str):
    def apply(answers: dict, value) -> None:
        answers[name] = value
    return apply


RULES = (
    HouseRule("series_end", SERIES_ENDS,
              {"not_failed": "a failed contract does not end a raspasovka series",
               "made_in_play": "only a contract or misère made in play ends a raspasovka series"},
              _set("series_end"), "PrefAndroid Calculation.kt raspasyLength; kozlov server.cpp resetPassGameIfNeeded"),
    HouseRule("series_after_last", ("restart", "stay"),
              {"stay": "the raspasovka price stays at the last step until the series ends"},
              _set("series_after_last"), "PrefAndroid currentRaspasyMultiplier; kozlov PassGame::update"),
    HouseRule("dealer_after_failed_game", ("next", "same"),
              {"same": "a failed contract inside a running series is dealt again by the same dealer"},
              _set("dealer_after_failed_game"), "PrefAndroid Calculation.kt writeGame (dealer++)"),
)
