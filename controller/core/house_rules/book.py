"""The two shapes of the house rules: a :class:`HouseRule` (one ``[rules]`` key) and the
:class:`RuleBook` (the answers the scoring asks, built from one session's rules)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping

from .conventions import Convention

STALINGRAD_GAME = "6s"      # the game Stalingrad makes both defenders whist: 6♠


def every_game(kind: str | None, outcome: str | None) -> bool:
    """The table's own rule: every contract, misère or unplayed deal ends a raspasovka series.
    A named function, not a lambda: the rules travel to the analysis worker by pickle."""
    return True


@dataclass(frozen=True)
class HouseRule:
    """One ``[rules]`` key: its values (the first is the table's own), what each value
    means in words, and how it sets the book's answers (``apply(answers, value)``)."""

    key: str
    values: tuple
    words: Mapping[Any, str]
    apply: Callable[[dict, Any], None]
    source: str = ""

    @property
    def default(self):
        return self.values[0]


@dataclass(frozen=True)
class RuleBook:
    """The answers the scoring asks for, built from one session's ``[rules]``.

    ``convention`` carries the settlement and contract factors; the other fields are
    the house rules' answers, each named for the question it answers.
    """

    convention: Convention
    raspasovka_factor: int = 1               # × every raspasovka gora and whist entry
    amnesty_all_seats: bool = False          # the fewest tricks over every seat, the sitting-out dealer too
    single_whister_own_tricks: bool = False  # one whister writes whists for his own tricks only
    gentleman_whist: bool = False            # a failed contract: whister and passer share the whists for tricks
    ten_obligation: bool = True              # a whisted 10 carries the whisters' obligation (1 trick)
    stalingrad: bool = False                 # a 6♠ must be whisted by both defenders
    consolation_per_trick: int | None = None  # a failed contract's consolation a trick (None: the game's value)
    raspasovka_whists: str = "all_tricks"    # scoring = "whists": "all_tricks" | "beyond_fewest"
    pulka_end: str = "each"                  # the target closes each pulya (with help), or ends the pulka by their sum
    help_sitting_out_dealer: bool = True     # a sitting-out dealer's pulya can be helped
    series_end: str = "every_game"           # which deals end a raspasovka series (by name) ...
    series_ends: Callable[[str | None, str | None], bool] = every_game               # ... asked
    series_after_last: str = "restart"       # after the last price: restart the series, or stay at it
    dealer_after_failed_game: str = "next"   # in a running series: the next seat deals, or the same again
    settlement: str = "exact"                # "exact" | "whole_rounded" | "whole_truncated"
    deal_hooks: tuple = ()                   # callables (rules, kind, deal, writes) -> None, after a deal's entries
    words: tuple[str, ...] = ()              # what the non-default rules say, for doctor and the report

    def whist_required(self, game: str) -> bool:
        """True when both defenders must whist ``game``: any other whist call is invalid
        (Stalingrad, сталинград: a 6♠)."""
        return self.stalingrad and game == STALINGRAD_GAME

    def consolation(self, value: int) -> int:
        """A failed contract's consolation for each trick short, before the factor m:
        the game's value, or the house's fixed price."""
        return value if self.consolation_per_trick is None else self.consolation_per_trick

    @property
    def k(self) -> int:
        """A pulya point's worth in gora (settlement, help, write-off)."""
        return self.convention.k

    @property
    def contract_factor(self) -> int:
        """m: the factor on a contract's gora and whists."""
        return self.convention.contract_factor
