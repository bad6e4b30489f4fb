"""A check's findings: what ``preftable doctor`` and ``doctor --live`` report, one line each.

One model for both (README "Checking a table"; docs/hardware-test.md for the live
check): a level (``ok``, ``warn``, ``FAIL``), what was seen, and for a finding that is
not ``ok`` either what to do about it (the doctor's ``fix``) or what it means on the
bench (the live check's ``meaning``).  Pure data, so the ``hw`` layer's live check and
the app's doctor share it.
"""

from __future__ import annotations

from dataclasses import dataclass

OK, WARN, FAIL = "ok", "warn", "FAIL"


@dataclass(frozen=True)
class Finding:
    """One line of a check's report."""

    level: str                  # ok | warn | FAIL
    text: str
    fix: str | None = None      # what to do about it
    meaning: str | None = None  # what a failure means on the bench (the live check)

    def line(self) -> str:
        """``warn no deck — fix: pass --deck``; an ``ok`` line is its level and text only."""
        head = f"{self.level:<4} {self.text}"
        if self.level == OK:
            return head
        if self.fix:
            return f"{head} — fix: {self.fix}"
        if self.meaning:
            return f"{head} — means: {self.meaning}"
        return head

    render = line               # the live check's callers say ``render()``
