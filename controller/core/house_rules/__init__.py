"""The rules of a pulka as one object: the convention and every house rule, asked by the scoring.

RULES.md and RULES-contracts.md define the table's own rules; the house rules in this
package are the variants the score programs and the seeds play (docs/RULES-variants.md
describes each key, with a worked example and its source).  Each house rule is one
:class:`HouseRule` entry in a module of this package, listed once in :data:`MODULES`;
:func:`rule_book` applies them, in order, to the table's own answers and hands the
scoring a frozen :class:`RuleBook`.  The scoring (``scoring``, ``contract_scoring``,
``series``) reads the book's answers and never tests a convention's or a rule's name.

Every key's first value is the table's own behaviour, so a config without these keys
(every existing log) scores exactly as before.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Any, Iterator

from . import pulya_help, raspasovka, series_rules, settlement, whisting
from .book import HouseRule, RuleBook
from .conventions import CONVENTIONS
from .presets import PRESET_WORDS, PRESETS

# --- the registry ------------------------------------------------------------------------

# Each module's RULES, in the order they are applied (one line a module).
MODULES = [
    raspasovka,
    whisting,
    pulya_help,
    series_rules,
    settlement,
]


def registered() -> dict[str, HouseRule]:
    """Every house rule by its key."""
    return {rule.key: rule for module in MODULES for rule in module.RULES}


@contextmanager
def extra_module(module) -> Iterator[None]:
    """Register one more house-rule module for a while (a test's made-up house rule)."""
    MODULES.append(module)
    try:
        yield
    finally:
        MODULES.remove(module)


def rule_book(rules) -> RuleBook:
    """The book of a parsed :class:`~controller.core.config.Rules`."""
    convention = CONVENTIONS[rules.convention]
    answers: dict[str, Any] = {"convention": convention}
    chosen = dict(rules.house)
    words = []
    if rules.preset is not None:
        words.append(f"preset {rules.preset}: {PRESET_WORDS.get(rules.preset, rules.preset)}")
    for key, rule in registered().items():
        value = chosen.get(key, rule.default)
        rule.apply(answers, value)
        if value != rule.default:
            words.append(rule.words[value])
    hooks = answers.pop("deal_hooks", ())
    return RuleBook(deal_hooks=tuple(hooks), words=tuple(words), **answers)


def describe(rules) -> list[str]:
    """The rules a session plays, in words: the convention and scoring first, then each
    house rule away from the table's own."""
    lines = [CONVENTIONS[rules.convention].words,
             "raspasovka written in whists" if rules.scoring == "whists" else "raspasovka written on the gora",
             f"raspasovka prices {', '.join(str(p) for p in rules.progression)}"
             + (", the same dealer through a series" if rules.same_dealer else ", the deal passes on every time")]
    if rules.subtract_minimum:
        lines.append("raspasovka amnesty: only the tricks beyond the fewest are written")
    lines.append("a whisters' remiz costs " + ("half" if rules.responsibility == "half" else "the whole")
                 + " of the game's value per trick")
    lines += rules.book.words
    return lines


__all__ = ["HouseRule", "RuleBook", "MODULES", "PRESETS", "PRESET_WORDS", "registered", "rule_book",
           "describe", "extra_module", "CONVENTIONS"]
