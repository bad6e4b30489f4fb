"""``preftable doctor``: checks the config, the deck, the ports, SPI, GPIO and
permissions, and says what to fix, one line per finding::

    ok   config /etc/preftable/config.toml: readers spi, display terminal, 4 players
    warn deck /etc/preftable/deck.toml ([table] deck): not enrolled yet; ... — fix: enrol the cards: ...
    FAIL SPI reader seat3 /dev/spidev1.0: no such device — fix: add dtoverlay=spi1-3cs to ... and reboot
    FAIL RPi.GPIO is RPi.GPIO 0.7.1 (for the GPIO pins): cannot drive the pins of a Raspberry Pi 5 ...

``--live`` then checks the readers, LEDs and buttons by hand (never while the service holds
them: its lock on the log dir is looked at first), and ``--wiring`` prints where every wire of
the config goes on the header (:mod:`controller.app.wiring`).

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
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable
from urllib.parse import urlsplit

from ..core.errors import ConfigError, DeckError, PreftableError

log = logging.getLogger(__name__)

from .findings import FAIL, GPIO_GROUP, OK, PI_EXTRA, SERIAL_GROUP, SPI_GROUP, WARN, Finding  # noqa: F401

HELLO_TIMEOUT = 2.0
# The unit's StateDirectory= (its --log-dir): where a running service holds its lock.
SERVICE_LOG_DIR = Path("/var/lib/preftable")
STOP_SERVICE = "sudo systemctl stop preftable"


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


def _board_model() -> str | None:
    """The device tree's model ("Raspberry Pi 5 Model B Rev 1.0"), None off a Pi."""
    try:
        return Path("/proc/device-tree/model").read_bytes().rstrip(b"\0\n").decode("ascii", "replace") or None
    except OSError:
        return None


def _module_available(name: str) -> bool:
    """Whether ``name`` (``a`` or ``a.b``) is installed, without importing anything."""
    parts = name.split(".")
    spec = importlib.util.find_spec(parts[0])
    for part in parts[1:]:
        if spec is None or not spec.submodule_search_locations:
            return False
        spec = importlib.machinery.PathFinder.find_spec(part, list(spec.submodule_search_locations))
    return spec is not None


def _gpio_library():
    """Which ``RPi.GPIO`` is installed (:func:`hw.pins.gpio_library`: looked up, not imported)."""
    from hw.pins import gpio_library
    return gpio_library()


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
    board_model: Callable[[], str | None] = lambda: _board_model()
    service_log_dirs: tuple[Path, ...] = (SERVICE_LOG_DIR,)
    gpio_library: Callable[[], object] = _gpio_library
    locks: Path = Path("/proc/locks")

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


def service_in_the_way(log_dirs, locks: Path = Path("/proc/locks")) -> str | None:
    """What to do when a preftable service holds one of ``log_dirs`` (None: none does).

    The service's lock on its log dir (:class:`controller.store.files.LogDirLock`) is looked
    at, never taken.  A second program on the same readers mixes its SPI or serial traffic
    with the service's, which looks exactly like bad wiring."""
    from ..store.files import log_dir_holder

    seen: set[Path] = set()
    for folder in log_dirs:
        folder = Path(folder).absolute()
        if folder in seen:
            continue
        seen.add(folder)
        pid = log_dir_holder(folder, locks)
        if pid is not None:
            return (f"the table service is running (pid {pid} holds {folder}) and drives the readers: "
                    f"stop it first with {STOP_SERVICE} (and sudo systemctl start preftable afterwards)")
    return None


class ServiceRunning(PreftableError):
    """A running table service holds the readers another command wants."""


def refuse_if_service_runs(settings, host: "Host | None" = None) -> None:
    """Raise :class:`ServiceRunning` (one line, exit status 2) when a service holds the table."""
    dirs = host.service_log_dirs if host is not None else (SERVICE_LOG_DIR,)
    locks = host.locks if host is not None else Path("/proc/locks")
    problem = service_in_the_way((Path(settings.log_dir), *dirs), locks)
    if problem is not None:
        raise ServiceRunning(problem)


# --- the checks ---------------------------------------------------------------------------

class Doctor:
    """Runs the checks for one config and deck; :meth:`run` returns the findings."""

    def __init__(self, config: str | None, deck: str | None, host: Host | None = None,
                 log_dir: str | None = None):
        self.config = config
        self.deck = deck
        self.host = host or Host()
        # the log dir the table runs with: --log-dir, else the unit's $STATE_DIRECTORY (the
        # service runs `run --log-dir ${STATE_DIRECTORY}`), else the config's [log] dir
        self.log_dir = log_dir or os.environ.get("STATE_DIRECTORY") or None
        self.findings: list[Finding] = []
        # group -> [(device, usable; None: the device is missing)]
        self.needed_groups: dict[str, list[tuple[str, bool | None]]] = {}
        self.service_running = False     # then nothing is sent to the readers or the hub

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
        if self.log_dir:
            from dataclasses import replace
            settings = replace(settings, log_dir=self.log_dir)
        self.check_log_dir(settings)
        problem = service_in_the_way((Path(settings.log_dir), *self.host.service_log_dirs), self.host.locks)
        self.service_running = problem is not None
        if problem is not None:
            self.add(WARN, problem, f"{STOP_SERVICE} before preftable doctor --live or preftable enroll")
        self.check_pins(settings)
        from . import backends
        backends.run_doctor(settings, self)      # each backend and output checks its own section
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
            self.add(OK, f"config {self.config}: readers {settings.backend}, "
                         f"display {settings.section('display').kind}, "
                         f"{settings.game.table.players} players")
        self.add_rules(settings.game.rules)
        return settings

    def add_rules(self, rules) -> None:
        """Which rules a session plays, in words (docs/RULES-variants.md)."""
        from ..core.house_rules import describe
        self.add(OK, "rules: " + "; ".join(describe(rules)))

    def check_deck(self, settings) -> None:
        """The deck the service will read: ``--deck``, else the config's ``[table] deck``."""
        from ..core.deck import load_deck

        from . import backends

        path = settings.deck_file(self.deck) if settings is not None else \
            (Path(self.deck) if self.deck else None)
        enroll = "preftable enroll" + (f" --config {self.config}" if self.config else "")
        if path is None:
            if settings is not None and not backends.simulated(settings):
                self.add(WARN, "no deck file ([table] deck or --deck): preftable run refuses to start, "
                               "every card would be an unknown tag",
                         f'set [table] deck = "deck.toml" in the config, then enrol the cards: {enroll}')
            return
        from_config = not self.deck
        if from_config and not path.exists():
            # a fresh install: the config names the deck, the cards are not enrolled yet
            self.add(WARN, f"deck {path} ([table] deck): not enrolled yet; preftable run refuses to start "
                           "without it", f"enrol the cards: {enroll}")
            return
        again = enroll if from_config else f"preftable enroll --deck {path}"
        try:
            deck = load_deck(path)
        except DeckError as exc:
            if "missing:" in str(exc) and path.exists():
                fix = f"finish the enrolment: {again}"
            elif not path.exists():
                fix = f"check the path, or enrol a deck: {again}"
            else:
                fix = f"correct the file, or enrol the deck again: {again}"
            self.add(FAIL, f"deck: {exc}", fix)
            return
        self.add(OK, f"deck {path}: {len(deck.cards)} cards" + (" ([table] deck)" if from_config else ""))

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

    def check_pins(self, settings) -> None:
        """A GPIO of the config on a pin another interface owns (I2C, the UART, the HAT EEPROM)."""
        from hw.header import HEADER_PIN, OTHER_USERS

        for owner, pin in config_pins(settings):
            user = OTHER_USERS.get(pin)
            if user is not None:
                self.add(WARN, f"{owner}: GPIO{pin} (header pin {HEADER_PIN[pin]}) is {user}",
                         "move it to a free GPIO (4, 5, 6, 12, 13, 22-27 are free with both SPI buses on; "
                         "see preftable doctor --wiring)")

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

    def check_module(self, module: str, needed_for: str) -> None:
        if self.host.module_available(module):
            if module == "RPi.GPIO":
                self.check_gpio_library(needed_for)
            else:
                self.add(OK, f"Python module {module} installed (for {needed_for})")
        else:
            self.add(FAIL, f"Python module {module} is not installed (needed for {needed_for})", PI_EXTRA)

    def check_gpio_library(self, needed_for: str) -> None:
        """Which package is ``RPi.GPIO`` here (the original or the rpi-lgpio drop-in), and does it
        drive this board's pins (the original cannot on a Pi 5)?"""
        library = self.host.gpio_library()
        model = self.host.board_model()
        name = getattr(library, "name", None)
        if name is None:                         # found by the import system, not as either package
            self.add(OK, f"Python module RPi.GPIO installed (for {needed_for})")
            return
        version = getattr(library, "version", None)
        what = f"RPi.GPIO is {name}" + (f" {version}" if version else "") + f" (for {needed_for})"
        problem = library.problem(model) if library is not None else None
        if problem is not None:
            text, fix = problem
            self.add(FAIL, f"{what}: {text}", fix)
        elif model:
            self.add(OK, f"{what}: drives the pins of this {model}")
        else:
            self.add(OK, what)

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


def config_pins(settings) -> list[tuple[str, int]]:
    """Every GPIO the config claims, with the key that claims it (each shared reset line once)."""
    from . import backends

    found = []
    for name, mod in backends.section_modules(present=settings.present, backend=settings.backend).items():
        pins = getattr(mod, "pins", None)
        if pins is not None:
            found += pins(settings.section(name))
    return found


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


def diagnose(config: str | None, deck: str | None, host: Host | None = None,
             log_dir: str | None = None) -> list[Finding]:
    """Run every check; the findings in order."""
    return Doctor(config, deck, host, log_dir).run()


def cmd_doctor(args: argparse.Namespace, *, host: Host | None = None, stream=None) -> int:
    """``preftable doctor``: print the findings; 1 if any FAIL.  ``--live``: then the hands-on
    check of the readers, LEDs and buttons (docs/hardware-test.md)."""
    out = stream or sys.stdout
    if getattr(args, "wiring", False) or getattr(args, "svg", None):
        return print_wiring(args, out)
    if getattr(args, "live", False):
        from .settings import load_settings
        try:
            settings = load_settings(args.config)
        except ConfigError:
            settings = None              # the findings say what is wrong with it
        if settings is not None:
            refuse_if_service_runs(settings, host)     # before a single byte goes to a reader
    findings = diagnose(args.config, args.deck, host, getattr(args, "log_dir", None))
    for finding in findings:
        out.write(finding.line() + "\n")
    out.flush()
    if any(f.level == FAIL for f in findings):
        return 1
    if getattr(args, "live", False):
        from .settings import load_settings

        return live_check(load_settings(args.config), out, step_s=args.step_s)
    return 0


def print_wiring(args: argparse.Namespace, out) -> int:
    """``doctor --wiring [--svg FILE]``: the config's wiring to the header, nothing probed."""
    from . import wiring
    from .settings import load_settings

    if args.config is None:
        raise ConfigError("--wiring: give the table's config with --config (its readers and [gpio] pins)")
    settings = load_settings(args.config)
    if args.svg:
        try:
            Path(args.svg).write_text(wiring.svg(settings, f"preftable: {args.config} on the Raspberry Pi header "
                                                           "(pin 1 at the SD-card end)"), encoding="utf-8")
        except OSError as exc:
            raise ConfigError(f"--svg {args.svg}: cannot write it: {exc.strerror or exc}") from None
    if args.wiring or not args.svg:
        out.write(wiring.markdown(settings))
    else:
        out.write(f"wrote {args.svg}\n")
    out.flush()
    return 0


def live_check(settings, out, *, driver=None, factory=None, step_s: float = 30.0) -> int:
    """``doctor --live``: :class:`hw.check.LiveCheck` on the readers the chosen backend opens for
    it (its ``live_readers``; ``driver``: their hardware driver, the tests' emulated chips) and on
    the config's LEDs, buzzer and buttons, all on one pin factory (``factory``, else the run's
    own); 1 if any FAIL."""
    from contextlib import nullcontext

    from hw.check import LiveCheck, LiveReaders

    from . import backends

    gpio = settings.section("gpio")
    live_readers = getattr(backends.reader(settings.backend), "live_readers", None)
    owned: list = []
    check = None
    with nullcontext(factory) if factory is not None else backends.open_pins(settings) as pins:
        readers = LiveReaders()
        try:
            if live_readers is not None:
                readers = live_readers(settings.readers, settings, pins, driver)
            else:
                out.write(f"warn readers.backend = \"{settings.backend}\": --live checks only the readers the Pi "
                          "drives itself (a hub reports its readers in HELLO and FAULT: preftable doctor)\n")
            leds = {zone: pins.output_pin(pin, f"{zone} LED") for zone, pin in gpio.leds.items()}
            owned += leds.values()
            buzzer = pins.output_pin(gpio.buzzer, "buzzer") if gpio.buzzer is not None else None
            owned += [buzzer] if buzzer is not None else []
            buttons = {name: pins.input_pin(pin, f"button {name}") for name, pin in gpio.buttons.items()}
            owned += buttons.values()
            check = LiveCheck(readers.readers, readers.clock, absent_ms=readers.absent_ms, leds=leds,
                              buzzer=buzzer, buttons=buttons, step_s=step_s, identify=readers.identify,
                              cost=readers.cost,
                              prompt=lambda text: (out.write(f"  -> {text}\n"), out.flush()),
                              emit=lambda line: (out.write(line.render() + "\n"), out.flush()))
            check.run()
        finally:
            readers.close()
            for pin in owned:
                pin.close()
    return 1 if check.failed else 0


def add_doctor(sub) -> None:
    """Register ``preftable doctor`` on the CLI's subparsers."""
    p = sub.add_parser("doctor", help="check config, deck, ports, SPI, GPIO and permissions; say what to fix")
    p.add_argument("--config", help="config file (TOML) of the table")
    p.add_argument("--deck", help="deck file (TOML) to check")
    p.add_argument("--log-dir", help="the log dir the table runs with (default: $STATE_DIRECTORY under "
                                     "systemd, else the config's [log] dir); the web PIN is kept there")
    p.add_argument("--live", action="store_true",
                   help="then check the table by hand: VersionRegs, polls/s, each card as laid, stacked cards, "
                        "removal, LEDs and buttons one by one (docs/hardware-test.md)")
    p.add_argument("--step-s", type=float, default=30.0, dest="step_s",
                   help="--live: seconds to wait for each thing asked (default 30)")
    p.add_argument("--wiring", action="store_true",
                   help="print where every reader pin, LED, buzzer and button of the config goes on the Pi's "
                        "40-pin header (Markdown tables), and check nothing")
    p.add_argument("--svg", metavar="FILE", help="draw that wiring on the header as an SVG file")
    p.set_defaults(func=cmd_doctor)


__all__ = ["Finding", "Host", "Doctor", "diagnose", "url_problem", "cmd_doctor", "add_doctor",
           "service_in_the_way", "refuse_if_service_runs", "ServiceRunning", "OK", "WARN", "FAIL"]
