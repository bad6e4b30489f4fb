"""The project's exception tree.

One root, :class:`PreftableError`; every error also subclasses the matching
built-in so callers may catch either.  Messages are one line a user can act on
and name the key, card, UID, pin or port at fault.
"""

from __future__ import annotations


class PreftableError(Exception):
    """Root of every error raised by preftable."""


class ConfigError(PreftableError, ValueError):
    """A config file is missing, unreadable or invalid.  ``key`` names the culprit."""

    def __init__(self, message: str, key: str | None = None):
        super().__init__(message)
        self.key = key


class DeckError(PreftableError, ValueError):
    """A deck file is missing, unreadable or invalid (card or UID named)."""


class CardError(PreftableError, ValueError):
    """A card code that is not one of the 32 cards."""


class EventError(PreftableError, ValueError):
    """A table-event line that is not valid."""


class ProtocolError(PreftableError, ValueError):
    """A hub frame or handshake that breaks PROTOCOL.md (wrong version, …)."""


class LinkError(PreftableError, ConnectionError):
    """The serial link to the table hub cannot be opened or was lost."""


class HardwareError(PreftableError, OSError):
    """A device of the Pi (SPI reader, GPIO pin, serial display) cannot be used."""


class PinInUse(HardwareError):
    """A GPIO pin asked for twice; the message names the pin and who holds it."""


class LogError(PreftableError, OSError):
    """A game-log folder cannot be written or read."""
