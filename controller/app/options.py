"""Value types of the CLI's options, each refusing a bad value with a line naming it (exit 2).

Light on purpose: the parser of every subcommand is built on each call of
``preftable``, so nothing here imports the service, the hub or the hardware.
It also holds the pace of the demo's simulated players, which the ``demo``
option ``--speed`` is bounded by.
"""

from __future__ import annotations

import argparse
import math

# Real readers need time: the hub reports a tag after two 20 ms polls, and tags laid within one
# poll cycle on different readers come out in reader order.  The simulated players keep the pace of
# real ones (the [sim] backend's: a card every ~0.5 s, never faster than MIN_HUMAN_GAP_S), and
# --speed divides every time by the same factor up to MAX_SPEED, where the quickest move is still
# MIN_GAP_S of real time apart: so --speed 2 is twice as fast, really.  Gathering the cards takes
# longer than the hub's absent_ms at any allowed speed.
MIN_GAP_S = 0.08
MIN_HUMAN_GAP_S = 0.4
MAX_SPEED = MIN_HUMAN_GAP_S / MIN_GAP_S
DEFAULT_SPEED = 3.0


def demo_speed(text: str) -> float:
    """``demo --speed``: a finite number above 0 and at most :data:`MAX_SPEED`."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number, got {text!r}") from None
    if not (math.isfinite(value) and 0 < value <= MAX_SPEED):
        raise argparse.ArgumentTypeError(
            f"must be above 0 and at most {MAX_SPEED:g} (real readers need {MIN_GAP_S * 1000:.0f} ms "
            f"between cards), got {text}")
    return value


def deal_count(text: str) -> int:
    """``demo --deals``: a whole number of at least 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def port_number(text: str) -> int:
    """A TCP port, 0 (any free one) to 65535."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a port number 0-65535, got {text!r}") from None
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"must be a port number 0-65535, got {value}")
    return value


def web_address(text: str) -> str:
    """``--web``: ``PORT`` (on 127.0.0.1) or ``HOST:PORT`` (``0.0.0.0:8080``, ``[::]:8080``),
    given back as ``host:port``."""
    if text.isdigit():
        return f"127.0.0.1:{port_number(text)}"
    from ..core.errors import ConfigError
    from .web.config import parse_listen
    try:
        host, port = parse_listen(text, "--web")
    except ConfigError as exc:
        raise argparse.ArgumentTypeError(str(exc).removeprefix("--web: ")) from None
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def speed_factor(text: str) -> float:
    """A finite speed factor above 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number above 0, got {text!r}") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"must be a finite number above 0, got {text}")
    return value


def count(minimum: int):
    """An integer of at least ``minimum``."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be a whole number, got {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be at least {minimum}, got {value}")
        return value
    parse.__name__ = "count"
    return parse


__all__ = ["MIN_GAP_S", "MIN_HUMAN_GAP_S", "MAX_SPEED", "DEFAULT_SPEED", "demo_speed", "deal_count",
           "port_number", "web_address", "speed_factor", "count"]
