"""The auction and the whisting of a contract deal as pure data (RULES-contracts.md
"The auction", "The declarer's game", "Whisting").

:class:`Auction` and :class:`Whisting` are fed calls already known to be well formed
(``controller.core.events``); each answers whether a call is valid now (``None``, or
the reason it is not, which becomes an ``invalid_control`` mistake) and, once the
calls decide, what they decided.  Neither knows of cards, zones or signals.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .events import GAMES, MISERE, PASS

# Bid order, low to high: 6s 6c 6d 6h 6n 7s ... 8n misere 9s ... 10n (seed 003; Gusev).
BID_ORDER: tuple[str, ...] = GAMES[:15] + (MISERE,) + GAMES[15:]
RANK = {bid: index for index, bid in enumerate(BID_ORDER)}
MISERE_RANK = RANK[MISERE]

RASPASOVKA, CONTRACT, MISERE_DEAL = "raspasovka", "contract", "misere"


def level(game: str) -> int:
    """6 … 10 for a game (``7h``); 0 for misère."""
    return 0 if game == MISERE else int(game[:-1])


def trump_of(game: str) -> str | None:
    """The trump suit of a game, or None for no trumps and misère."""
    if game == MISERE or game.endswith("n"):
        return None
    return game[-1]


@dataclass
class Auction:
    """The calls of one auction among the three active seats, first hand first."""

    active: tuple[str, ...]
    calls: list[tuple[str, str]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._work_out()

    def _work_out(self) -> None:
        """What the calls so far mean, from all of them (kept, since every line and card asks)."""
        self.passed: set[str] = {seat for seat, bid in self.calls if bid == PASS}
        self.bidders: set[str] = {seat for seat, bid in self.calls if bid != PASS}
        self.highest: tuple[str, str] | None = next(
            ((seat, bid) for seat, bid in reversed(self.calls) if bid != PASS), None)   # the last non-pass
        self._decide(self.calls[-1][0] if self.calls else None)

    def _decide(self, last: str | None) -> None:
        """Whether the auction is decided, its result and whose call is next, after a call by
        ``last`` (None: no call yet)."""
        passed = self.passed
        decided = len(passed) == 3
        if len(passed) == 2:
            rest = next(s for s in self.active if s not in passed)
            decided = rest in self.bidders
        self.decided = decided
        if not decided:
            self.result: str | None = None
        elif len(passed) == 3 or self.highest is None:
            self.result = RASPASOVKA
        else:
            self.result = MISERE_DEAL if self.highest[1] == MISERE else CONTRACT
        self.turn: str | None = None            # the seat to call next, None once decided
        if not decided:
            if last is None:
                self.turn = self.active[0]
            else:
                at = self.active.index(last)
                self.turn = next(self.active[(at + k) % 3] for k in range(1, 4)
                                 if self.active[(at + k) % 3] not in passed)

    def refusal(self, seat: str, bid: str) -> str | None:
        """Why ``seat`` may not call ``bid`` now, or None if the call is valid."""
        turn = self.turn
        if turn is None:
            return "the auction is over"
        if seat != turn:
            return f"not {seat}'s call: {turn} calls"
        if bid == PASS:
            return None
        own = [b for s, b in self.calls if s == seat]
        top = self.highest
        if bid == MISERE:
            if own:
                return "misere only as a first call"
            if top is not None and RANK[top[1]] >= MISERE_RANK:
                return f"misere is below {top[1]}"
            return None
        if MISERE in own:
            return "a player who bid misere may only pass"
        if top is None or RANK[bid] > RANK[top[1]]:
            return None
        if (bid == top[1] and bid != MISERE and len(self.passed) == 1
                and self.active.index(seat) < self.active.index(top[0])):
            return None             # holds («здесь»): the senior of the last two matches the bid
        return f"{bid} does not beat {top[1]}"

    def settle(self, seat: str, game: str) -> None:
        """Decided at once by a result line (RULES-contracts.md "Second edition"): ``seat``
        won with ``game``; no call was made (the deal's ``auction`` stays ``[]``)."""
        self.highest = (seat, game)
        self.bidders = {seat}
        self.decided = True
        self.result = MISERE_DEAL if game == MISERE else CONTRACT
        self.turn = None

    def call(self, seat: str, bid: str) -> None:
        self.calls.append((seat, bid))
        if bid == PASS:                 # one call changes the picture by itself: no pass over all calls
            self.passed.add(seat)
        else:
            self.bidders.add(seat)
            self.highest = (seat, bid)
        self._decide(seat)


def contract_refusal(winning_bid: str, game: str) -> str | None:
    """Why ``game`` may not be the declarer's contract after a game auction won with
    ``winning_bid`` (None if it may)."""
    if game == MISERE:
        return "misere cannot be declared after a game auction"
    if RANK[game] < RANK[winning_bid]:
        return f"{game} is below the winning bid {winning_bid}"
    return None


# whisting results
PLAY, PASSED, HALF_WHIST, TEN_UNWHISTED = "play", "passed", "half_whist", "ten_unwhisted"


@dataclass
class Whisting:
    """The whist calls after a game's contract line: first defender, second, (first again)."""

    game: str
    first: str                      # the first defender: the active seat after the declarer
    second: str
    half_allowed: bool              # rules.half_whist
    whist_required: bool = False    # both defenders must whist (rules.stalingrad on a 6♠)
    calls: list[tuple[str, str]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._work_out()

    def _work_out(self) -> None:
        """Whose call is next, the result and the whisters, after the calls so far (kept:
        the tracker, the views and the scoring ask them again and again)."""
        said = [c for _, c in self.calls]
        if not said:
            self.turn: str | None = self.first
        elif len(said) == 1:
            self.turn = self.second
        elif said == ["pass", "half"]:
            self.turn = self.first
        else:
            self.turn = None
        # ``play``, ``passed`` or ``half_whist`` once decided, else None
        if len(said) < 2 or said == ["pass", "half"]:
            self.result: str | None = None
        elif said == ["pass", "pass"]:
            self.result = PASSED
        elif said == ["pass", "half", "pass"]:
            self.result = HALF_WHIST
        else:
            self.result = PLAY
        self._whisters = [seat for seat, c in self.calls if c == "whist"] if self.result == PLAY else []

    @property
    def whisters(self) -> list[str]:
        """The seats that whist in play, in the order of their whist calls."""
        return list(self._whisters)

    @property
    def half_whister(self) -> str | None:
        return self.second if ("half" in (c for _, c in self.calls)) else None

    def refusal(self, seat: str, call: str) -> str | None:
        turn = self.turn
        if turn is None:
            return "the whisting is over"
        if seat != turn:
            return f"not {seat}'s whist call: {turn} speaks"
        if self.whist_required and call != "whist":
            return "a 6s is whisted by both defenders (rules.stalingrad)"
        if call != "half":
            return None
        if not self.half_allowed:
            return "half-whist is not played (rules.half_whist = false)"
        if seat != self.second or [c for _, c in self.calls] != ["pass"]:
            return "half only by the second defender after a pass"
        if level(self.game) not in (6, 7):
            return "half only on a 6 or a 7"
        return None

    def call(self, seat: str, call: str) -> None:
        self.calls.append((seat, call))
        self._work_out()
