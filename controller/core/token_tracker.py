"""The deal tracker reading bidding tokens (issue 12, item 2; :mod:`controller.core.tokens`).

:class:`TokenTracker` is :class:`~controller.core.tracker.DealTracker` with one step
added where a ``placed``/``removed`` line's UID is resolved: a UID of the deck's
``[bids]`` table is a token, and a token laid on a seat reader is fed as the control
line :func:`~controller.core.tokens.control_line_for` makes of it in the deal's
phase.  The table event stays the raw ``placed`` line with its ``uid``, so a game log
replays exactly through this tracker.

This step belongs in ``DealTracker.feed`` itself (the contract tracker's module); it
lives here, as a subclass, only until it is moved there -- then ``TokenTracker`` is
``DealTracker``.  Presence of a token (the same token reported twice without being
lifted is one call) is kept with the other non-card tags in ``unknown_present``, which
the checkpoints already carry; lifting a token does nothing else.
"""

from __future__ import annotations

from .events import PLACED, REMOVED, TableEvent
from .tokens import control_line_for, phase_of
from .tracker import DealTracker, Signal


class TokenTracker(DealTracker):
    """A :class:`DealTracker` that turns bidding tokens into control lines."""

    def feed(self, event: TableEvent) -> list[Signal]:
        token = None
        if event.uid is not None and event.event in (PLACED, REMOVED) and self.deck is not None:
            token = self.deck.token_for(event.uid)
        if token is None:
            return super().feed(event)
        self.events_seen += 1           # as DealTracker.feed counts every table event
        self._t = event.t
        key = (event.zone, event.uid)
        if event.event == REMOVED:
            self.unknown_present.discard(key)
            return []
        if key in self.unknown_present:
            return []                   # reported again without a lift: the same call
        self.unknown_present.add(key)
        line = control_line_for(token, event.zone, phase_of(self.deal), event.t)
        return [] if line is None else self._control(line)


__all__ = ["TokenTracker"]
