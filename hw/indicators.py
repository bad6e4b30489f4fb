"""Seat LEDs, the buzzer and the buttons on the Pi's GPIO pins.

No threads: the service loop calls ``tick(now)`` / ``poll(now)`` often (every
10-20 ms) with its own clock.  Every device reserves its pins through a
:class:`hw.pins.PinFactory` and frees them on ``close()``.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Mapping

from controller.core import events
from controller.core.errors import ConfigError
from controller.core.view import ERROR, LED_MODES, OFF, TURN, WINNER

from .pins import InputPin, OutputPin, PinFactory

log = logging.getLogger(__name__)

EPS = 1e-9          # clock readings are floats: 1.03 - 1.0 may fall just short of 0.03


def led_level(mode: str, t_since_change: float, period: float = 0.5) -> bool:
    """Whether an LED in ``mode`` is lit ``t_since_change`` seconds after the mode was set.

    ``off``: never; ``turn``: always; ``winner``: blinks, lit the first half of each
    ``period``; ``error``: a double flash every ``2 * period`` (lit 0-10 % and 20-30 %
    of the cycle), which neither of the others looks like.
    """
    if period <= 0:
        raise ValueError(f"blink period must be > 0, got {period!r}")
    if mode == OFF:
        return False
    if mode == TURN:
        return True
    # Whole microseconds, so that edges fall exactly where they should despite float noise.
    t_us = max(0, round(t_since_change * 1_000_000))
    cycle = max(2, round(period * 1_000_000))
    if mode == WINNER:
        return 2 * (t_us % cycle) < cycle
    if mode == ERROR:
        cycle *= 2
        tenths = 10 * (t_us % cycle)          # phase in tenths of the cycle, scaled by the cycle
        return tenths < cycle or 2 * cycle <= tenths < 3 * cycle
    raise ValueError(f"unknown LED mode {mode!r} (expected one of {', '.join(LED_MODES)})")


def _open_all(factory: PinFactory, pins: Mapping[str, int], opener) -> dict:
    """Open one pin per name; on failure close the ones opened, then re-raise."""
    opened: dict = {}
    try:
        for name, pin in pins.items():
            opened[name] = opener(name, pin)
    except BaseException:
        for done in opened.values():
            done.close()
        raise
    return opened


class SeatLeds:
    """One single-colour LED per zone (``seat1``...), rendering the LED modes of :mod:`controller.core.view`.

    Zones of ``show`` without an LED are ignored; LEDs of zones it leaves out go off.
    """

    def __init__(self, factory: PinFactory, pins: Mapping[str, int], blink_period: float = 0.5):
        if blink_period <= 0:
            raise ConfigError(f"LED blink period must be > 0 s, got {blink_period!r}", key="blink_period")
        self.blink_period = blink_period
        self._pins: dict[str, OutputPin] = _open_all(
            factory, pins, lambda zone, pin: factory.output_pin(pin, f"LED {zone}"))
        self._modes: dict[str, str] = {zone: OFF for zone in self._pins}
        self._since: dict[str, float] = {zone: 0.0 for zone in self._pins}

    @property
    def modes(self) -> dict[str, str]:
        """zone -> current mode."""
        return dict(self._modes)

    def show(self, leds: Mapping[str, str], now: float) -> None:
        """Take new modes (zone -> off/turn/winner/error) and drive the LEDs at once.

        A zone whose mode is unchanged keeps its blink phase.
        """
        for zone, mode in leds.items():
            if mode not in LED_MODES:
                raise ValueError(f"unknown LED mode {mode!r} for {zone} "
                                 f"(expected one of {', '.join(LED_MODES)})")
        for zone in self._pins:
            mode = leds.get(zone, OFF)
            if mode != self._modes[zone]:
                self._modes[zone] = mode
                self._since[zone] = now
        self.tick(now)

    def tick(self, now: float) -> None:
        """Drive every LED to its level at ``now`` (pins are written only when it changes)."""
        for zone, pin in self._pins.items():
            pin.set(led_level(self._modes[zone], now - self._since[zone], self.blink_period))

    def close(self) -> None:
        """Switch the LEDs off and free their pins."""
        for pin in self._pins.values():
            pin.close()


class Buzzer:
    """An active buzzer (sounds while its pin is HIGH)."""

    def __init__(self, factory: PinFactory, pin: int):
        self._pin = factory.output_pin(pin, "buzzer")
        self._until: float | None = None

    @property
    def sounding(self) -> bool:
        return self._pin.state

    def beep(self, ms: int | float, now: float) -> None:
        """Sound for ``ms`` milliseconds from ``now`` (a longer running beep is not shortened)."""
        if ms < 0:
            raise ValueError(f"beep length must be >= 0 ms, got {ms!r}")
        if ms == 0:
            return
        end = now + ms / 1000.0
        self._until = end if self._until is None else max(self._until, end)
        self._pin.set(True)

    def tick(self, now: float) -> None:
        """Stop the beep once its time is up."""
        if self._until is not None and now + EPS >= self._until:
            self._until = None
            self._pin.set(False)

    def close(self) -> None:
        """Silence the buzzer and free its pin."""
        self._until = None
        self._pin.close()


@dataclass(frozen=True, slots=True)
class ButtonPress:
    """A debounced press of button ``name`` noticed at ``t``; ``held`` once it has lasted ``hold_s``."""

    name: str
    t: float
    held: bool = False


def to_event(press: ButtonPress) -> events.TableEvent | None:
    """The table event of a press (``button``), or None for the extra ``held`` report."""
    return None if press.held else events.button(press.t, press.name)


class _ButtonState:
    __slots__ = ("raw", "raw_since", "pressed", "press_began", "held_sent")

    def __init__(self) -> None:
        self.raw: bool | None = None       # last level seen (True: closed)
        self.raw_since = 0.0               # when it was first seen
        self.pressed = False               # the debounced state
        self.press_began = 0.0
        self.held_sent = False


class Buttons:
    """Push buttons wired from a pin to ground (internal pull-up): ``undo``, ``new_deal``, ``confirm``.

    :meth:`poll` debounces by time: a level counts once it has lasted ``debounce_ms``.
    """

    def __init__(self, factory: PinFactory, pins: Mapping[str, int], debounce_ms: float = 30,
                 hold_s: float = 3.0):
        for name in pins:
            if name not in events.BUTTONS:
                raise ConfigError(f"unknown button {name!r} (expected one of {', '.join(events.BUTTONS)})",
                                  key=name)
        if debounce_ms < 0:
            raise ConfigError(f"debounce must be >= 0 ms, got {debounce_ms!r}", key="debounce_ms")
        if hold_s <= 0:
            raise ConfigError(f"hold time must be > 0 s, got {hold_s!r}", key="hold_s")
        self.debounce = debounce_ms / 1000.0
        self.hold_s = hold_s
        self._pins: dict[str, InputPin] = _open_all(
            factory, pins, lambda name, pin: factory.input_pin(pin, f"button {name}", pull_up=True))
        self._state = {name: _ButtonState() for name in self._pins}

    def is_pressed(self, name: str) -> bool:
        """The debounced state of one button."""
        return self._state[name].pressed

    def poll(self, now: float) -> list[ButtonPress]:
        """Read the buttons; return the presses that began, and the holds that completed, by ``now``."""
        out: list[ButtonPress] = []
        for name, pin in self._pins.items():
            st = self._state[name]
            raw = pin.is_active
            if raw != st.raw:
                st.raw, st.raw_since = raw, now
            if raw != st.pressed and now - st.raw_since + EPS >= self.debounce:
                st.pressed = raw
                if raw:
                    st.press_began, st.held_sent = st.raw_since, False
                    out.append(ButtonPress(name, now))
                    log.debug("button %s pressed at %.3f", name, now)
            if st.pressed and not st.held_sent and now - st.press_began + EPS >= self.hold_s:
                st.held_sent = True
                out.append(ButtonPress(name, now, held=True))
                log.debug("button %s held at %.3f", name, now)
        return out

    def close(self) -> None:
        """Free the buttons' pins."""
        for pin in self._pins.values():
            pin.close()


__all__ = ["led_level", "SeatLeds", "Buzzer", "ButtonPress", "Buttons", "to_event"]
