"""The table's PIN: who may change the game from a phone.

Entering bids, whists and button presses from the page needs the
table's PIN, entered once per phone and kept in an HttpOnly cookie with an
expiry.  The PIN is ``[web] pin`` or, without one, six random digits generated
at first start and kept in the log dir (``web-pin``), so the table's display and
``preftable doctor`` can show it and it survives restarts.

The cookie holds ``<expiry>.<HMAC-SHA256(secret, expiry + PIN)>``: nothing is
kept per phone on the table, a cookie outlives a restart, and changing the PIN
revokes every cookie.  The secret is random, kept in the log dir
(``web-secret``, mode 0600).  Guesses are rate-limited per client address (not
for the whole table, so one phone's wrong PINs never lock the others out), so a
phone on the club's Wi-Fi cannot walk the PIN space.  Both files are written
through the log dir's opener (:mod:`controller.store.files`): never through a
planted link.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import logging
import secrets
import time
from collections import deque
from pathlib import Path

from ...core.errors import ConfigError
from ...store.files import SECRET_MODE, read_bounded, write_atomic

log = logging.getLogger(__name__)

PIN_FILE = "web-pin"
SECRET_FILE = "web-secret"
COOKIE = "preftable_pin"
COOKIE_DAYS = 30
GENERATED_DIGITS = 6
MAX_FILE_BYTES = 4096


def _read(path: Path) -> str:
    """The stripped text of ``path`` (a regular file, not a link, a few bytes)."""
    return read_bounded(path, MAX_FILE_BYTES).decode("utf-8", "replace").strip()


def _read_or_create(path: Path, make) -> str:
    """The stripped text of ``path``; created (mode 0600, atomically, through the log dir's
    opener: never through a planted ``.tmp`` link) with ``make()`` when missing."""
    try:
        return _read(path)
    except FileNotFoundError:
        pass
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror}") from None
    value = make()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, (value + "\n").encode("utf-8"), SECRET_MODE)
    except OSError as exc:
        raise ConfigError(f"{path}: cannot write: {exc.strerror}") from None
    return value


def table_pin(log_dir: Path, configured: str | None = None) -> tuple[str, str]:
    """The PIN and where it comes from (``"config"`` or the file's path), generating it at first start."""
    if configured:
        return configured, "config"
    path = Path(log_dir) / PIN_FILE
    pin = _read_or_create(path, lambda: "".join(secrets.choice("0123456789") for _ in range(GENERATED_DIGITS)))
    if not pin.isdigit():
        raise ConfigError(f"{path}: the stored web PIN must be digits; delete the file to make a new one")
    return pin, str(path)


def stored_pin(log_dir: Path) -> str | None:
    """The generated PIN if one was made (for ``doctor``), without creating it."""
    try:
        return _read(Path(log_dir) / PIN_FILE) or None
    except OSError:
        return None


class GuessLimiter:
    """At most ``per_client`` wrong PINs per client per ``window_s`` seconds.

    Per client only, never for the whole table: wrong PINs from one phone (or one
    attacker) never lock out the others.  A client is its IPv4 address, or the /64
    network of its IPv6 address (one machine can take any address of its /64).  At
    most ``clients`` clients are remembered; the ones whose window has passed are
    forgotten first, and beyond that the oldest."""

    def __init__(self, per_client: int = 5, window_s: float = 60.0, clock=time.monotonic,
                 clients: int = 4096):
        self.per_client = per_client
        self.window_s = window_s
        self.clock = clock
        self.clients = clients
        self._failures: dict[str, deque[float]] = {}

    @staticmethod
    def key(client: str) -> str:
        try:
            address = ipaddress.ip_address(client)
        except ValueError:
            return client
        if address.version == 4:
            return str(address)
        if address.ipv4_mapped is not None:
            return str(address.ipv4_mapped)
        return str(ipaddress.ip_network(f"{address}/64", strict=False))

    def _trim(self, times: deque[float], now: float) -> None:
        while times and times[0] <= now - self.window_s:
            times.popleft()

    def retry_after(self, client: str) -> float:
        """Seconds until ``client`` may guess again (0: now)."""
        now = self.clock()
        mine = self._failures.get(self.key(client))
        if not mine:
            return 0.0
        self._trim(mine, now)
        if len(mine) >= self.per_client:
            return mine[0] + self.window_s - now
        return 0.0

    def failed(self, client: str) -> None:
        now = self.clock()
        key = self.key(client)
        times = self._failures.pop(key, None) or deque(maxlen=self.per_client)
        self._failures[key] = times             # the newest failure last (the oldest first to go)
        times.append(now)
        if len(self._failures) > self.clients:
            for old in [k for k, v in self._failures.items() if not v or v[-1] <= now - self.window_s]:
                del self._failures[old]
            while len(self._failures) > self.clients:
                del self._failures[next(iter(self._failures))]


class PinGate:
    """Checks PINs and the cookies that prove one was entered."""

    def __init__(self, pin: str, secret: bytes, *, days: int = COOKIE_DAYS, clock=time.time):
        self.pin = pin
        self.secret = secret
        self.max_age = days * 86400
        self.clock = clock
        self.limiter = GuessLimiter()

    @classmethod
    def for_table(cls, log_dir: Path, configured: str | None) -> "PinGate":
        pin, _ = table_pin(log_dir, configured)
        secret = _read_or_create(Path(log_dir) / SECRET_FILE, lambda: secrets.token_hex(32))
        return cls(pin, bytes.fromhex(secret) if _is_hex(secret) else secret.encode())

    def check_pin(self, guess: str) -> bool:
        return hmac.compare_digest(guess.encode("utf-8", "replace"), self.pin.encode())

    def _mac(self, expiry: int) -> str:
        return hmac.new(self.secret, f"{expiry}:{self.pin}".encode(), hashlib.sha256).hexdigest()

    def token(self) -> str:
        """A fresh cookie value, valid for ``max_age`` seconds."""
        expiry = int(self.clock()) + self.max_age
        return f"{expiry}.{self._mac(expiry)}"

    def valid(self, token: str | None) -> bool:
        if not token or "." not in token:
            return False
        expiry_text, _, mac = token.partition(".")
        if not expiry_text.isdigit():
            return False
        expiry = int(expiry_text)
        return expiry > self.clock() and hmac.compare_digest(mac, self._mac(expiry))


def _is_hex(text: str) -> bool:
    try:
        bytes.fromhex(text)
    except ValueError:
        return False
    return bool(text)


__all__ = ["PinGate", "GuessLimiter", "table_pin", "stored_pin", "COOKIE", "PIN_FILE"]
