"""The conventions (RULES.md "The pulka", RULES-contracts.md "What a deal writes"), one
table entry each: what a pulya point is worth in gora (k) and the factor m on a contract's
gora and whists, and the whisters' responsibility each convention defaults to.

Rostov is not a convention here (RULES-contracts.md): it is the preset ``rostov``
(raspasovka in whists, half responsibility) over Sochi's factors.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Convention:
    name: str
    k: int                     # a pulya point in gora: settlement, help (10 × k whists), write-off
    contract_factor: int       # m: remiz, whists for tricks, consolation, half-whist, misère failure
    responsibility: str        # whist_responsibility's default: "full" | "half"
    words: str


CONVENTIONS: dict[str, Convention] = {
    "sochi": Convention("sochi", 1, 1, "full", "Sochi: a pulya point is worth one gora point"),
    "leningrad": Convention("leningrad", 2, 2, "half",
                            "Leningrad: a pulya point is worth two gora points, contract gora and whists doubled"),
}
