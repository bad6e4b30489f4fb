"""What the table shows: a pure function of the game state.

Output drivers (``hw`` GPIO LEDs and serial display, the hub's LED/TEXT/BEEP
commands, the terminal view) only render an :class:`Indications`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

# LED modes of a seat's indicator.
OFF = "off"
TURN = "turn"        # steady: this seat is to play
WINNER = "winner"    # blinking: this seat took the last trick
ERROR = "error"      # error pattern: a mistake by this seat awaits `confirm`
LED_MODES = (OFF, TURN, WINNER, ERROR)

DISPLAY_ROWS = 4
DISPLAY_COLS = 20


@dataclass(frozen=True)
class Indications:
    """Everything the table shows at one moment."""

    leds: Mapping[str, str] = field(default_factory=dict)   # zone -> LED mode
    lines: tuple[str, ...] = ("",) * DISPLAY_ROWS            # display rows, <= 20 chars each
    beep_ms: int = 0                                         # sound the buzzer this long (0: silent)
