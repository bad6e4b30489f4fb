"""The check every resume test makes: a session cut after ``cut`` events, resumed from its
game log and checkpoint journal and played on, equals the uninterrupted run (every derived
line and the summary).  Shared by the raspasovka and the whole-game resume tests."""

from __future__ import annotations

from dataclasses import dataclass

from controller.core.tracker import DealTracker
from controller.store.gamelog import SessionLog


@dataclass
class Resumed:
    tracker: DealTracker        # the resumed tracker, played on to the end
    replayed: int               # the events its resume said it had
    state_at_resume: str        # its machine state right after the resume
    in_deal_at_resume: bool     # a deal in progress right after the resume
    journal_written: bool       # the cut session has a checkpoint journal
    deal_before_cut: bool       # a deal ended before the cut
    expected: list[dict]        # the uninterrupted run's derived lines
    got: list[dict]             # the cut and resumed run's
    whole: DealTracker          # the uninterrupted tracker


def cut_and_resume(tmp_path, game, events, cut, lose_journal: bool = False) -> Resumed:
    """Play ``events[:cut]`` into a session as the service does, resume it (after deleting
    its checkpoint journal with ``lose_journal``), play the rest."""
    whole = DealTracker(game)
    expected = [s.to_dict() for e in events for s in whole.feed(e)]
    session = SessionLog.create(tmp_path, game, None)
    first = DealTracker(game)
    got = []
    deal_before_cut = False
    for e in events[:cut]:
        signals = first.feed(e)
        got += [s.to_dict() for s in signals]
        # a deal's result line carries its entry's kind (raspasovka, contract ...) as "kind":
        # the signal's own kind says which line it is
        ended = any(s.kind == "deal" for s in signals)
        deal_before_cut = deal_before_cut or ended
        session.append(e, signals, first.checkpoint() if ended else None)
    session.close()
    journal_written = session.checkpoints_path.exists()
    if lose_journal:
        session.checkpoints_path.unlink(missing_ok=True)
    tracker, count, _ = SessionLog.newest_unfinished(tmp_path).resume(game, None)
    state, in_deal = tracker.state, tracker.deal is not None
    for e in events[cut:]:
        got += [s.to_dict() for s in tracker.feed(e)]
    return Resumed(tracker, count, state, in_deal, journal_written, deal_before_cut,
                   expected, got, whole)
