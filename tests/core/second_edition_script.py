"""Table scripts for the second edition's lines (RULES-contracts.md "Second edition"): the
result line and claims, on top of :class:`table_script.Script`."""

from __future__ import annotations

import random

from contract_games import active_after, play_deal
from controller.core.events import RESULT, claim, control
from table_script import Script, config

__all__ = ["Edition2", "config", "played_deal", "rest_of"]


class Edition2(Script):
    """A script that also enters result lines and claims."""

    def result(self, seat: str, game: str) -> list:
        return self._feed(control(self._next_t(), RESULT, game, seat))

    def claim(self, **tricks: int) -> list:
        return self._feed(claim(self._next_t(), tricks, self.tracker.zones))

    def tricks(self, played, first: int, last: int) -> list:
        """Lay tricks ``first`` to ``last - 1`` of a :class:`contract_games.Played` deal."""
        out = []
        for trick in played.tricks[first:last]:
            out += self.trick(*(f"{zone}:{card}" for zone, card in trick))
        return out

    def signals_of(self, kind: str) -> list[dict]:
        return [s.data for s in self.signals if s.kind == kind]

    def invalid(self) -> list[dict]:
        return [s.data for s in self.signals if s.kind == "mistake" and s.data["type"] == "invalid_control"]

    @property
    def entry(self) -> dict:
        return self.tracker.summary()["deals"][-1]


def played_deal(seed: int, game: str, declarer: str = "seat2", dealer: str = "seat1", players: int = 3,
                revoke=None):
    """A legal random deal of ``game`` (seeded), its tricks as :func:`play_deal` plays them."""
    active = active_after(dealer, players)
    for extra in range(200):
        played = play_deal(random.Random(seed * 1000 + extra), active, game, declarer, 0, revoke)
        if played is not None:
            return played
    raise AssertionError("no deal")


def rest_of(played, first: int) -> dict[str, int]:
    """The tricks from trick ``first`` (0-based) on, per active seat, as played."""
    active = list(played.hands)
    rest = dict.fromkeys(active, 0)
    for winner in played.winners[first:]:
        rest[winner] += 1
    return rest
