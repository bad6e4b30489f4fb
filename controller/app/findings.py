"""The doctor's vocabulary: a finding (:mod:`controller.core.findings`, shared with the
live check of ``hw``) and the device groups of Raspberry Pi OS.

Shared by :mod:`controller.app.doctor` and each backend's own ``doctor`` checks
(:mod:`controller.app.backends`), so a backend never imports the doctor back.
"""

from __future__ import annotations

from ..core.findings import FAIL, OK, WARN, Finding

PI_EXTRA = "pip install 'preftable[pi]'"

# The group that usually owns each kind of device on Raspberry Pi OS.
SERIAL_GROUP, SPI_GROUP, GPIO_GROUP = "dialout", "spi", "gpio"

__all__ = ["OK", "WARN", "FAIL", "Finding", "PI_EXTRA", "SERIAL_GROUP", "SPI_GROUP", "GPIO_GROUP"]
