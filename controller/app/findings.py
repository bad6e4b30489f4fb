"""The doctor's vocabulary: a finding's levels and the device groups of Raspberry Pi OS.

Shared by :mod:`controller.app.doctor` and each backend's own ``doctor`` checks
(:mod:`controller.app.backends`), so a backend never imports the doctor back.
"""

from __future__ import annotations

from dataclasses import dataclass

OK, WARN, FAIL = "ok", "warn", "FAIL"
PI_EXTRA = "pip install 'preftable[pi]'"

# The group that usually owns each kind of device on Raspberry Pi OS.
SERIAL_GROUP, SPI_GROUP, GPIO_GROUP = "dialout", "spi", "gpio"


@dataclass(frozen=True)
class Finding:
    """One line of the doctor's report."""

    level: str                  # ok | warn | FAIL
    text: str
    fix: str | None = None

    def line(self) -> str:
        head = f"{self.level:<4} {self.text}"
        return f"{head} — fix: {self.fix}" if self.fix and self.level != OK else head
