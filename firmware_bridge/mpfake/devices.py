"""Stand-ins for the firmware's device drivers, for running its ``Hub`` without a board.

``firmware.hub.Hub`` takes its readers, LEDs, display, buzzer and clock from
its constructor; these objects have the same methods as ``rc522.Rc522``,
``leds.Ws2812Chain``, ``lcd.Lcd``, ``buzzer.Buzzer`` and ``ticks.ticks_ms`` and
record what the firmware did with them.  The hub emulator
(``firmware_bridge.emulator``) uses them; tests that need the chip-level
emulation use ``machine.Board`` with ``hw.rc522_chip`` instead.
"""

import time

TICKS_PERIOD = 1 << 30          # the RP2040's ticks_ms wrap, as firmware/ticks.py


class VirtualReader:
    """One RC522 as the firmware's ``Hub`` sees it: ``tag`` (hex UID or None) lies on it;
    a ``failed`` reader answers nothing (its VersionReg reads as no chip)."""

    def __init__(self):
        self.tag = None
        self.failed = False
        self.version = 0x92

    def init(self):
        """Soft reset and configure: False when the chip does not answer."""
        return not self.failed

    def alive(self):
        return not self.failed

    def read_uid(self):
        """The complete UID of the tag in the field (bytes), or None."""
        tag = self.tag
        return None if tag is None or self.failed else bytes.fromhex(tag)


class RecordingLeds:
    """A WS2812 chain of ``count`` LEDs: ``colours`` maps index -> ``RRGGBB`` once the
    firmware has shown it."""

    def __init__(self, count=8):
        self.count = count
        self.dirty = True
        self.colours = {}
        self._buffer = {}

    def set(self, index, rgb):
        self._buffer[index] = "%06X" % rgb
        self.dirty = True

    def show(self):
        self.colours.update(self._buffer)
        self._buffer.clear()
        self.dirty = False


class RecordingDisplay:
    """The 20x4 LCD: ``rows`` maps row -> the text the firmware wrote there."""

    addr = 0x27

    def __init__(self):
        self.rows = {}

    def init(self):
        self.rows.clear()

    def show(self, row, text):
        self.rows[row] = text


class RecordingBuzzer:
    """The buzzer: ``beeps`` lists the length of every beep the firmware started (0: silenced)."""

    def __init__(self):
        self.beeps = []
        self._until = None

    def beep(self, ms, now):
        self.beeps.append(ms)
        self._until = None if ms <= 0 else (now + ms) % TICKS_PERIOD

    def update(self, now):
        if self._until is None:
            return None
        left = ((self._until - now + TICKS_PERIOD // 2) % TICKS_PERIOD) - TICKS_PERIOD // 2
        if left <= 0:
            self._until = None
            return None
        return left


class HubTicks:
    """A ``ticks_ms`` for the firmware: the wall clock (``realtime``) or only what
    :meth:`advance` adds (a test's hand-moved hub time), wrapping like the RP2040's."""

    def __init__(self, realtime=True):
        self.realtime = realtime
        self._t0 = time.monotonic()
        self._offset = 0

    def __call__(self):
        wall = int((time.monotonic() - self._t0) * 1000) if self.realtime else 0
        return (wall + self._offset) % TICKS_PERIOD

    def advance(self, ms):
        """Move the hub's time ``ms`` milliseconds on at once."""
        self._offset += int(ms)
