"""House rules of a raspasovka's entries (docs/RULES-variants.md)."""

from __future__ import annotations

from .book import HouseRule


def _doubled(answers: dict, value: bool) -> None:
    # PrefAndroid Calculation.addValue multiplies every gora and whist entry by the
    # convention's factor, a raspasovka's too
    answers["raspasovka_factor"] = answers["convention"].contract_factor if value else 1


def _amnesty(answers: dict, value: str) -> None:
    answers["amnesty_all_seats"] = value == "all"


def _whists(answers: dict, value: str) -> None:
    answers["raspasovka_whists"] = value


RULES = (
    HouseRule("raspasovka_doubled", (False, True),
              {True: "the convention's factor doubles raspasovka gora too (Leningrad)"}, _doubled,
              "PrefAndroid Calculation.kt addValue"),
    HouseRule("amnesty_seats", ("active", "all"),
              {"all": "raspasovka amnesty over every seat, the sitting-out dealer included"}, _amnesty,
              "PrefAndroid Calculation.kt writeGame (tMin over every seat)"),
    # with scoring = "whists" (Rostov): who writes whists for which tricks, and the pulya
    HouseRule("raspasovka_whists", ("all_tricks", "beyond_fewest"),
              {"beyond_fewest": "raspasovka in whists: only a single fewest writes, for the tricks beyond his;"
                                " no trick, or the dealer with none, writes the price in pulya"}, _whists,
              "PrefAndroid Calculation.kt writeGame (RulesGameType.Rostov)"),
)
