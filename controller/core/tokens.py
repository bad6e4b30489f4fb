"""Bidding tokens (FORMATS.md "Deck file", its optional ``[bids]`` table; RULES-contracts.md):
tagged tokens a player lays on his own seat reader instead of typing a control line.

A token says one word -- ``pass``, a game ``6s`` … ``10n``, ``misere``, ``whist``,
``half``, ``open`` or ``closed`` -- and the phase of the deal decides which control
line of FORMATS-contracts.md that word is:

- ``pass``: a ``bid`` pass until the auction decides, then a ``whist`` pass;
- a game or ``misere``: a ``bid`` until the auction decides, then a ``contract``
  line (the declarer's game);
- ``whist``, ``half``: a ``whist`` line; ``open``, ``closed``: a ``whist_mode`` line.

So the first game token the declarer lays after the auction is his contract line;
whether a line is *allowed* then stays the tracker's business (a token laid out of
turn is an ``invalid_control`` mistake like a typed line).  A token on the prikup
zone speaks for nobody and makes no line; lifting a token makes none either.

The table event stays the raw ``placed`` line with the token's ``uid``: the tracker
maps it with :func:`control_line_for` when it feeds the event, so a game log replays
exactly (the deck file the session copied says which UIDs are tokens).
"""

from __future__ import annotations

from .deal import AUCTION
from .errors import EventError
from .events import BID, CONTRACT, GAMES, MISERE, PASS, WHIST, WHIST_CALLS, WHIST_MODE, WHIST_MODES, TableEvent

# The words a token may say, in the order enrolment asks for them.
BID_WORDS = (PASS,) + GAMES[:15] + (MISERE,) + GAMES[15:]
TOKENS: tuple[str, ...] = BID_WORDS + tuple(c for c in WHIST_CALLS if c != PASS) + WHIST_MODES

IDLE = "idle"          # no deal in progress (the tracker's state of that name)
_BEFORE_THE_AUCTION_DECIDES = (IDLE, AUCTION)


def parse_token(text: object) -> str:
    """A token's word in its written form (any letter case, ``misère`` accepted);
    :class:`EventError` naming the accepted words otherwise."""
    if isinstance(text, str):
        word = text.strip().lower().replace("\u00e8", "e")
        if word in TOKENS:
            return word
    raise EventError(f"unknown bidding token {text!r} (expected pass, 6s ... 10n, misere, whist, half, "
                     "open or closed)")


def phase_of(tracker) -> str:
    """The phase a token is read in: ``idle`` with no tracker, else the tracker's
    :attr:`~controller.core.tracker.DealTracker.phase`, its phase machine's state (``idle``,
    ``auction``, ``contract``, ``whisting``, ``play``, ``claim``).  No phase makes a token a
    ``result`` line: a result line comes from the live page or simulated players
    (RULES-contracts.md "Second edition"), never from a token."""
    return IDLE if tracker is None else tracker.phase


def control_line_for(token: str, seat: str | None, phase: str, t: float = 0.0) -> TableEvent | None:
    """The control line a ``token`` laid on ``seat``'s reader makes in ``phase``
    (:func:`phase_of`), stamped ``t``; None when it makes none (not a seat's reader)."""
    if seat is None or not seat.startswith("seat"):
        return None
    token = parse_token(token)
    early = phase in _BEFORE_THE_AUCTION_DECIDES
    if token in WHIST_MODES:
        return TableEvent(t, WHIST_MODE, call=token)       # FORMATS-contracts.md: its seat is ignored
    if token in WHIST_CALLS and (token != PASS or not early):
        return TableEvent(t, WHIST, seat=seat, call=token)
    return TableEvent(t, BID if early else CONTRACT, seat=seat, call=token)


__all__ = ["TOKENS", "BID_WORDS", "parse_token", "phase_of", "control_line_for"]
