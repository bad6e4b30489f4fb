"""``preftable doctor``: checks the config, the deck, the ports, SPI, GPIO and
permissions, and says what to fix, one line per finding::

    ok   config /etc/preftable.toml: readers hub, display hub
    warn no deck file given (--deck): every tag will be an unknown tag
    FAIL /dev/spidev1.0: no such device — fix: add dtoverlay=spi1-3cs to /boot/firmware/config.txt and reboot

Everything the doctor probes on the machine goes through a :class:`Host`
(the ``/dev`` directory, the user's id and groups, the group database, which
Python modules are installed), so tests fake a ``/dev`` in a tmp dir.  The
hardware modules are looked up, never imported.
"""

from __future__ import annotations

import argparse
import importlib.machinery
import importlib.util
import logging
import os
import stat
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable
from urllib.parse import urlsplit

from ..core.errors import ConfigError, DeckError
from .textview import plural

log = logging.getLogger(__name__)

OK, WARN, FAIL = "ok", "warn", "FAIL"
HELLO_TIMEOUT = 2.0
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


# --- the machine as the doctor sees it ----------------------------------------------------

# grp and pwd exist on Unix only: imported when used, so this module imports anywhere.

def _group_name(gid: int) -> str | None:
    import grp
    try:
        return grp.getgrgid(gid).gr_name
    except KeyError:
        return None


def _group_members(name: str) -> tuple[str, ...] | None:
    """Members of group ``name`` in the group database (None: no such group)."""
    import grp
    try:
        return tuple(grp.getgrnam(name).gr_mem)
    except KeyError:
        return None


def _user_name() -> str:
    import pwd
    try:
        return pwd.getpwuid(os.geteuid()).pw_name
    except KeyError:
        return str(os.geteuid())


def _module_available(name: str) -> bool:
    """Whether ``name`` (``a`` or ``a.b``) is installed, without importing anything."""
    parts = name.split(".")
    spec = importlib.util.find_spec(parts[0])
    for part in parts[1:]:
        if spec is None or not spec.submodule_search_locations:
            return False
        spec = importlib.machinery.PathFinder.find_spec(part, list(spec.submodule_search_locations))
    return spec is not None


@dataclass
class Host:
    """What the doctor probes: every part injectable for tests."""

    dev: Path = Path("/dev")
    uid: int = field(default_factory=os.geteuid)
    gids: frozenset[int] = field(default_factory=lambda: frozenset(os.getgroups()) | {os.getegid()})
    user: str = field(default_factory=_user_name)
    group_name: Callable[[int], str | None] = _group_name
    group_members: Callable[[str], tuple[str, ...] | None] = _group_members
    module_available: Callable[[str], bool] = _module_available
    hello_timeout: float = HELLO_TIMEOUT

    def usable(self, st: os.stat_result) -> bool:
        """Readable and writable by this user, by the mode bits (root: always)."""
        if self.uid == 0:
            return True
        mode = st.st_mode
        if st.st_uid == self.uid:
            return bool(mode & stat.S_IRUSR and mode & stat.S_IWUSR)
        if st.st_gid in self.gids:
            return bool(mode & stat.S_IRGRP and mode & stat.S_IWGRP)
        return bool(mode & stat.S_IROTH and mode & stat.S_IWOTH)

    def writable_dir(self, path: Path) -> bool:
        """Can this user create files in the folder ``path``?  For the real user: tried
        (an empty folder made and removed at once); for another uid: by the mode bits."""
        if self.uid == os.geteuid():
            try:
                os.rmdir(tempfile.mkdtemp(prefix=".preftable-doctor-", dir=path))
                return True
            except OSError:
                return False
        if self.uid == 0:
            return True
        st = path.stat()
        mode = st.st_mode
        if st.st_uid == self.uid:
            return bool(mode & stat.S_IWUSR and mode & stat.S_IXUSR)
        if st.st_gid in self.gids:
            return bool(mode & stat.S_IWGRP and mode & stat.S_IXGRP)
        return bool(mode & stat.S_IWOTH and mode & stat.S_IXOTH)


# --- the checks ---------------------------------------------------------------------------

class Doctor:
    """Runs the checks for one config and deck; :meth:`run` returns the findings."""

    def __init__(self, config: str | None, deck: str | None, host: Host | None = None):
        self.config = config
        self.deck = deck
        self.host = host or Host()
        self.findings: list[Finding] = []
        # group -> [(device, usable; None: the device is missing)]
        self.needed_groups: dict[str, list[tuple[str, bool | None]]] = {}

    def add(self, level: str, text: str, fix: str | None = None) -> Finding:
        finding = Finding(level, text, fix)
        log.debug("%s", finding.line())
        self.findings.append(finding)
        return finding

    @property
    def failed(self) -> bool:
        return any(f.level == FAIL for f in self.findings)

    def run(self) -> list[Finding]:
        settings = self.check_config()
        self.check_deck(settings)
        if settings is None:
            return self.findings
        self.check_log_dir(settings)
        if settings.backend == "hub":
            self.check_hub(settings)
        elif settings.backend == "spi":
            self.check_spi(settings)
        self.check_gpio(settings)
        if settings.display == "serial":
            self.check_serial_display(settings)
        self.check_groups()
        return self.findings

    # --- config, deck, log dir -----------------------------------------------------------

    def check_config(self):
        from .settings import load_settings

        try:
            settings = load_settings(self.config)
        except ConfigError as exc:
            if exc.key:
                fix = f"correct {exc.key} in {self.config} (the README lists every key)"
            elif not Path(self.config).exists():
                fix = "check the path given with --config"
            else:
                fix = f"correct {self.config}"
            self.add(FAIL, f"config: {exc}", fix)
            return None
        if self.config is None:
            self.add(WARN, "no config file given (--config): checking the default simulated table",
                     "pass the table's config with --config")
        else:
            self.add(OK, f"config {self.config}: readers {settings.backend}, display {settings.display}, "
                         f"{settings.game.table.players} players")
        return settings

    def check_deck(self, settings) -> None:
        from ..core.deck import load_deck

        if self.deck is None:
            if settings is not None and settings.backend != "sim":
                self.add(WARN, "no deck file given (--deck): every tag will be an unknown tag",
                         "enrol the cards with preftable enroll --deck DECK, then pass --deck DECK")
            return
        try:
            deck = load_deck(self.deck)
        except DeckError as exc:
            if "missing:" in str(exc) and Path(self.deck).exists():
                fix = f"finish the enrolment: preftable enroll --deck {self.deck}"
            elif not Path(self.deck).exists():
                fix = f"check the path, or enrol a deck: preftable enroll --deck {self.deck}"
            else:
                fix = f"correct the file, or enrol the deck again: preftable enroll --deck {self.deck}"
            self.add(FAIL, f"deck: {exc}", fix)
            return
        self.add(OK, f"deck {self.deck}: {len(deck.cards)} cards")

    def check_log_dir(self, settings) -> None:
        path = Path(settings.log_dir)
        fix = f"create it writable by {self.host.user} (mkdir -p {path}) or set [log] dir"
        if path.exists():
            if not path.is_dir():
                self.add(FAIL, f"log dir {path}: exists but is not a folder", "move it away or set [log] dir")
            elif self.host.writable_dir(path):
                self.add(OK, f"log dir {path}: writable")
            else:
                self.add(FAIL, f"log dir {path}: not writable by {self.host.user}",
                         f"sudo chown {self.host.user} {path}, or set [log] dir")
            return
        parent = path.absolute().parent
        while not parent.exists() and parent != parent.parent:
            parent = parent.parent
        if parent.is_dir() and self.host.writable_dir(parent):
            self.add(OK, f"log dir {path}: will be created (in {parent})")
        else:
            self.add(FAIL, f"log dir {path}: does not exist and cannot be created ({parent} is not writable)", fix)

    # --- devices -----------------------------------------------------------------------

    def check_device(self, path: Path, what: str, group: str, missing_fix: str) -> bool:
        """A device node: exists and is readable+writable; True when usable."""
        try:
            st = path.stat()
        except OSError as exc:
            self.needed_groups.setdefault(group, []).append((str(path), None))
            problem = "no such device" if isinstance(exc, FileNotFoundError) else \
                f"cannot be examined: {exc.strerror}"
            self.add(FAIL, f"{what} {path}: {problem}", missing_fix)
            return False
        owner_group = self.host.group_name(st.st_gid) if st.st_gid != 0 else None
        group = owner_group or group
        usable = self.host.usable(st)
        self.needed_groups.setdefault(group, []).append((str(path), usable))
        if usable:
            self.add(OK, f"{what} {path}: readable and writable by {self.host.user}")
            return True
        self.add(FAIL, f"{what} {path}: permission denied for {self.host.user}",
                 f"add {self.host.user} to the '{group}' group: sudo usermod -aG {group} {self.host.user}, "
                 "then log in again")
        return False

    def check_port(self, port: str, what: str, missing_fix: str) -> bool:
        """A serial port: a device path or a pyserial URL; True when worth opening."""
        if "://" in port:
            problem = url_problem(port)
            if problem:
                self.add(FAIL, f"{what} {port}: {problem}",
                         "use a device path or socket://HOST:PORT, rfc2217://HOST:PORT, loop://")
                return False
            self.add(OK, f"{what} {port}: URL form valid")
            return True
        return self.check_device(Path(port), what, SERIAL_GROUP, missing_fix)

    def check_hub(self, settings) -> None:
        port = settings.hub_port
        if not self.check_port(port, "hub port", "check the hub's USB cable and hub.port "
                                                 "(ls /dev/serial/by-id/; the udev rule for /dev/preftable-hub)"):
            return
        self.check_hello(settings)

    def check_hello(self, settings) -> None:
        from firmware_bridge.link import HubLink

        statuses: list[str] = []
        zones = settings.hub_zones or settings.zones
        link = HubLink(settings.hub_port, zones, lambda event: None, on_status=statuses.append,
                       baudrate=settings.hub_baudrate, reopen_backoff=(0.2, 1.0))
        link.start()
        try:
            deadline = time.monotonic() + self.host.hello_timeout
            while not link.wait_ready(0.02) and link.error is None and time.monotonic() < deadline:
                pass
            info, error = link.hub_info, link.error
        finally:
            link.stop()
        if error is not None:
            self.add(FAIL, f"hub at {settings.hub_port}: {error}", "update the hub firmware or preftable "
                                                                  "so both speak the same protocol")
            return
        if info is None:
            said = f" ({statuses[-1]})" if statuses else ""
            self.add(FAIL, f"waiting for hub on {settings.hub_port}: no HELLO within "
                           f"{self.host.hello_timeout:g} s{said}",
                     f"check that the hub is powered and runs the preftable firmware, and hub.baudrate "
                     f"({settings.hub_baudrate})")
            return
        self.add(OK, f"hub connected on {settings.hub_port}: firmware {info.fw_version}, {plural(info.readers, 'reader')}, "
                     f"proto {info.proto}, boot {info.boot_id}")
        lacking = [f"{zone} (reader {i})" for i, zone in enumerate(zones) if zone and i >= info.readers]
        if lacking:
            self.add(FAIL, f"hub has {plural(info.readers, 'reader')} but hub.zones maps {len(zones)}: no reader for "
                           + ", ".join(lacking),
                     "connect the missing readers to the hub, or shorten hub.zones")

    def check_spi(self, settings) -> None:
        for r in settings.spi_readers:
            name = f"spidev{r.bus}.{r.device}"
            if r.bus == 0:
                missing = "enable SPI: sudo raspi-config -> Interface Options -> SPI (dtparam=spi=on), then reboot"
            else:
                missing = "add dtoverlay=spi1-3cs to /boot/firmware/config.txt (spi1 with 3 chip selects), then reboot"
            self.check_device(self.host.dev / name, f"SPI reader {r.zone}", SPI_GROUP, missing)
        for module in ("spidev", "mfrc522"):
            self.check_module(module, "the SPI readers")

    def check_module(self, module: str, needed_for: str) -> None:
        if self.host.module_available(module):
            self.add(OK, f"Python module {module} installed (for {needed_for})")
        else:
            self.add(FAIL, f"Python module {module} is not installed (needed for {needed_for})", PI_EXTRA)

    def check_gpio(self, settings) -> None:
        if not settings.uses_gpio and settings.backend != "spi":
            return
        if settings.gpio_factory == "mock":
            self.add(OK, 'gpio.factory = "mock": the pins are simulated')
            return
        path = self.host.dev / "gpiomem"
        if not path.exists() and settings.gpio_factory == "auto":
            self.add(WARN, f"GPIO {path}: no such device: the pins will be simulated (not a Raspberry Pi?)",
                     "run on the Pi, or set gpio.factory = \"mock\" to silence this")
            return
        self.check_device(path, "GPIO", GPIO_GROUP,
                          "run on a Raspberry Pi (gpio.factory = \"rpigpio\" needs /dev/gpiomem)")
        self.check_module("RPi.GPIO", "the GPIO pins")

    def check_serial_display(self, settings) -> None:
        self.check_port(settings.display_port, "serial display",
                        "check the display's USB cable and display.port (ls /dev/serial/by-id/)")

    # --- groups ---------------------------------------------------------------------------

    def check_groups(self) -> None:
        """Is the user in the groups that own the devices checked (or would own the missing ones)?"""
        host = self.host
        mine = {host.group_name(gid) for gid in host.gids}
        for group, devices in sorted(self.needed_groups.items()):
            paths = ", ".join(path for path, _ in devices)
            if group in mine:
                self.add(OK, f"user {host.user} is in group {group} (for {paths})")
                continue
            members = host.group_members(group)
            if members is not None and host.user in members:
                self.add(WARN, f"user {host.user} was added to group {group}, but this login predates it",
                         "log out and in again (or reboot)")
                continue
            if host.uid == 0:
                # only the devices that exist: one that does not has had its FAIL already
                present = ", ".join(path for path, usable in devices if usable is not None)
                if present:
                    self.add(OK, f"user {host.user} is not in group {group}, but root can use {present}")
                continue
            fix = ("sudo groupadd " + group + "; " if members is None else "") + \
                f"sudo usermod -aG {group} {host.user}, then log in again"
            found = [usable for _, usable in devices if usable is not None]
            if found and all(found):
                self.add(WARN, f"user {host.user} is not in group {group}, but can use {paths}",
                         f"sudo usermod -aG {group} {host.user}, so it keeps working if the device "
                         "is recreated")
            elif found:
                self.add(FAIL, f"user {host.user} is not in group {group} (needed for {paths})", fix)
            else:
                self.add(WARN, f"user {host.user} is not in group {group}, which usually owns {paths}", fix)


def url_problem(url: str) -> str | None:
    """Why ``url`` is not a pyserial URL that can work (None: it looks valid)."""
    import serial

    try:
        port = serial.serial_for_url(url, do_not_open=True)
    except (ValueError, serial.SerialException) as exc:
        return str(exc)
    scheme = url.split("://", 1)[0].lower()
    if scheme in ("socket", "rfc2217"):
        try:
            parts = urlsplit(url)
            number = parts.port
        except ValueError as exc:
            return f"bad URL: {exc}"
        if not parts.hostname or number is None:
            return f"a {scheme}:// URL needs a host and a port ({scheme}://HOST:PORT)"
        return None
    from_url = getattr(port, "from_url", None)
    if from_url is not None:
        try:
            from_url(url)
        except (ValueError, serial.SerialException) as exc:
            return str(exc)
    return None


def diagnose(config: str | None, deck: str | None, host: Host | None = None) -> list[Finding]:
    """Run every check; the findings in order."""
    return Doctor(config, deck, host).run()


def cmd_doctor(args: argparse.Namespace, *, host: Host | None = None, stream=None) -> int:
    """``preftable doctor``: print the findings; 1 if any FAIL."""
    out = stream or sys.stdout
    findings = diagnose(args.config, args.deck, host)
    for finding in findings:
        out.write(finding.line() + "\n")
    out.flush()
    return 1 if any(f.level == FAIL for f in findings) else 0


def add_doctor(sub) -> None:
    """Register ``preftable doctor`` on the CLI's subparsers."""
    p = sub.add_parser("doctor", help="check config, deck, ports, SPI, GPIO and permissions; say what to fix")
    p.add_argument("--config", help="config file (TOML) of the table")
    p.add_argument("--deck", help="deck file (TOML) to check")
    p.set_defaults(func=cmd_doctor)


__all__ = ["Finding", "Host", "Doctor", "diagnose", "url_problem", "cmd_doctor", "add_doctor",
           "OK", "WARN", "FAIL"]
