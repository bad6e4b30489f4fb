"""The buzzer: a passive piezo on a PWM pin, beeping without blocking the main loop."""

from .ticks import ticks_add, ticks_diff


class Buzzer:
    """Beeps at ``freq`` Hz on ``pwm`` (a ``machine.PWM``)."""

    def __init__(self, pwm, freq=2700):
        self._pwm = pwm
        pwm.freq(freq)
        pwm.duty_u16(0)
        self._until = None

    def beep(self, ms, now):
        """Sound for ``ms`` from ticks ``now`` (0 silences it)."""
        if ms <= 0:
            self._pwm.duty_u16(0)
            self._until = None
            return
        self._pwm.duty_u16(32768)
        self._until = ticks_add(now, ms)

    def update(self, now):
        """Stop a beep whose time is up; return ms until it is, or None."""
        if self._until is None:
            return None
        left = ticks_diff(self._until, now)
        if left <= 0:
            self._pwm.duty_u16(0)
            self._until = None
            return None
        return left
