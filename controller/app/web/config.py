"""The ``[web]`` section of the config file: where the live table page listens, and its PIN.

    [web]
    listen = "127.0.0.1:8080"     # host:port; "0.0.0.0:8080" on the Pi (the installer's skeleton)
    pin = "482913"                # 4-12 digits; without it one is generated at first start
    names_from_config = true      # label seats with [table] names (false: "seat1"...)

Validated here, by the web output itself: unknown keys are fatal with the key
named, as for every other section (README "Config file").
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass
from typing import Any, Mapping

from ...core.config import check_bool, check_known_keys, check_str, check_table
from ...core.errors import ConfigError, PreftableError

SECTION = "web"
KEYS = ("listen", "pin", "names_from_config")
DEFAULT_LISTEN = "127.0.0.1:8080"
_PIN = re.compile(r"[0-9]{4,12}")


class WebError(PreftableError, OSError):
    """The web server could not start (the address is taken, not allowed...)."""


@dataclass(frozen=True)
class WebConfig:
    """What the web output needs from the config file."""

    host: str = "127.0.0.1"
    port: int = 8080
    pin: str | None = None
    names_from_config: bool = True

    @property
    def listen(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{host}:{self.port}"


def parse_listen(value: object, key: str = "web.listen") -> tuple[str, int]:
    """``host:port`` (``[v6]:port`` for IPv6) -> (host, port); a :class:`ConfigError` naming ``key`` otherwise."""
    text = check_str(value, key)
    match = re.fullmatch(r"\[([0-9A-Fa-f:.]+)\]:(\d{1,5})|([^:\[\]]+):(\d{1,5})", text)
    if not match:
        raise ConfigError(f"{key}: must be host:port (for IPv6 [addr]:port), got {text!r}", key)
    host = match.group(1) or match.group(3)
    port = int(match.group(2) or match.group(4))
    if not 0 < port < 65536:
        raise ConfigError(f"{key}: port must be 1-65535, got {port}", key)
    if match.group(1):
        try:
            ipaddress.IPv6Address(host)
        except ValueError:
            raise ConfigError(f"{key}: {host!r} is not an IPv6 address", key) from None
    elif not re.fullmatch(r"[A-Za-z0-9.-]+", host):
        raise ConfigError(f"{key}: {host!r} is not a host name or address", key)
    return host, port


def parse(section: Mapping[str, Any] | None, game=None) -> WebConfig:
    """Validate a decoded ``[web]`` table (None or empty: the defaults); ``game`` is the
    registry's calling convention and not needed here."""
    if section is None:
        return WebConfig()
    section = check_table(section, SECTION)
    check_known_keys(section, SECTION, KEYS)
    kw: dict[str, Any] = {}
    if "listen" in section:
        kw["host"], kw["port"] = parse_listen(section["listen"])
    if "pin" in section:
        pin = section["pin"]
        if isinstance(pin, int) and not isinstance(pin, bool):
            raise ConfigError(f"web.pin: write the PIN as a string (\"{pin}\"), so leading zeros are kept",
                              "web.pin")
        pin = check_str(pin, "web.pin")
        if not _PIN.fullmatch(pin):
            raise ConfigError("web.pin: must be 4 to 12 digits", "web.pin")
        kw["pin"] = pin
    if "names_from_config" in section:
        kw["names_from_config"] = check_bool(section["names_from_config"], "web.names_from_config")
    return WebConfig(**kw)


__all__ = ["WebConfig", "WebError", "parse", "parse_listen", "SECTION", "KEYS", "DEFAULT_LISTEN"]
