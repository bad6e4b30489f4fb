"""Presets: the names players (and the score programs) give a set of rules.

``preset = "NAME"`` in ``[rules]`` fills these keys; a key given beside the preset wins.
Each program's preset says what that program plays by default (its file and function in
docs/RULES-variants.md); the pulya target is never part of a preset (players agree it).
"""

from __future__ import annotations

_SERIES_ROTATING = {"same_dealer": False, "series_after_last": "stay", "progression": [1, 2, 3]}

PRESETS: dict[str, dict] = {
    # the conventions by their players' names
    "sochi": {"convention": "sochi"},
    "leningrad": {"convention": "leningrad"},
    # Rostov (PrefCount prefReference): raspasovka in whists, a whisters' remiz at half price
    "rostov": {"convention": "sochi", "scoring": "whists", "whist_responsibility": "half"},
    # PrefAndroid (SmaginStepan/PrefAndroid, Calculation.kt, SettingsScreen applyGameTypePreset)
    "prefandroid-sochi": {"convention": "sochi", "subtract_minimum": True, "amnesty_seats": "all",
                          "raspasovka_doubled": True, "ten_obligation": False,
                          "second_whist_responsible": False, "consolation_to_dealer": True,
                          "whist_responsibility": "full", "help_sitting_out_dealer": False,
                          "series_end": "not_failed", "dealer_after_failed_game": "same",
                          **_SERIES_ROTATING},
    "prefandroid-leningrad": {"convention": "leningrad", "subtract_minimum": True, "amnesty_seats": "all",
                              "raspasovka_doubled": True, "ten_obligation": False,
                              "second_whist_responsible": False, "consolation_to_dealer": True,
                              "whist_responsibility": "half", "gentleman_whist": True,
                              "help_sitting_out_dealer": False, "pulka_end": "sum",
                              "series_end": "not_failed", "dealer_after_failed_game": "same",
                              **_SERIES_ROTATING},
    # its Rostov: raspasovka in whists (5 a trick beyond the single fewest), no progression --
    # the price stays 1 while the series still counts (the same dealer after a failed game) --,
    # gentleman's whist at half responsibility, the consolation 10 a trick
    "prefandroid-rostov": {"convention": "sochi", "scoring": "whists", "whists_per_trick": 5,
                           "raspasovka_whists": "beyond_fewest", "ten_obligation": False,
                           "second_whist_responsible": False, "consolation_to_dealer": True,
                           "whist_responsibility": "half", "gentleman_whist": True,
                           "consolation_price": "ten", "help_sitting_out_dealer": False,
                           "series_end": "not_failed", "dealer_after_failed_game": "same",
                           **_SERIES_ROTATING, "progression": [1, 1]},
    # oleksandrkozlov/preferans (server.cpp calculateDealScore, common.hpp calculateFinalResult)
    "kozlov": {"convention": "sochi", "subtract_minimum": True, "single_whister_tricks": "own",
               "second_whist_responsible": False, "whist_responsibility": "full",
               "series_end": "made_in_play", "settlement": "whole_rounded", **_SERIES_ROTATING},
    # mrzhenya/prefcount (ResultService.generateFinalResults): its settlement, by its three types
    "prefcount-sochi": {"convention": "sochi", "settlement": "whole_truncated"},
    "prefcount-leningrad": {"convention": "leningrad", "settlement": "whole_truncated"},
    "prefcount-rostov": {"convention": "sochi", "scoring": "whists", "whist_responsibility": "half",
                         "settlement": "whole_truncated"},
}

PRESET_WORDS: dict[str, str] = {
    "sochi": "Sochi",
    "leningrad": "Leningrad",
    "rostov": "Rostov (raspasovka in whists, half responsibility)",
    "prefandroid-sochi": "as PrefAndroid's Sochi",
    "prefandroid-leningrad": "as PrefAndroid's Leningrad",
    "prefandroid-rostov": "as PrefAndroid's Rostov",
    "kozlov": "as oleksandrkozlov/preferans",
    "prefcount-sochi": "PrefCount's Sochinka settlement",
    "prefcount-leningrad": "PrefCount's Leningradka settlement",
    "prefcount-rostov": "PrefCount's Rostov settlement",
}
