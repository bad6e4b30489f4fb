"""preftable doctor: each finding kind against a fake /dev, a bad config, the hub's HELLO."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from controller.app import cli
from controller.app.doctor import FAIL, OK, WARN, Doctor, Finding, Host, diagnose, url_problem
from firmware_bridge.emulator import HubEmulator

USER_UID, USER_GID, DIALOUT, SPI, GPIO = 4242, 4242, 20, 999, 997
GROUPS = {USER_GID: "table", DIALOUT: "dialout", SPI: "spi", GPIO: "gpio", 0: "root"}


def fake_host(dev: Path, gids=(USER_GID,), members=None, modules=("spidev", "mfrc522", "RPi.GPIO"),
              uid=USER_UID, **kw) -> Host:
    """A non-root user 'table' whose groups, group database and modules are chosen by the test."""
    members = members or {}
    return Host(dev=dev, uid=uid, gids=frozenset(gids), user="table",
                group_name=GROUPS.get,
                group_members=lambda name: members.get(name, ()) if name in GROUPS.values() else None,
                module_available=lambda name: name in modules, **kw)


def device(path: Path, mode: int, gid: int) -> Path:
    path.write_bytes(b"")
    os.chown(path, 0, gid)
    os.chmod(path, mode)
    return path


def write(path: Path, text: str) -> str:
    path.write_text(text, encoding="utf-8")
    return str(path)


def levels(findings, needle):
    return [f.level for f in findings if needle in f.text]


@pytest.fixture(autouse=True)
def open_tmp(tmp_path):
    """tmp_path is root's here: let the fake user 'table' write in it (log dirs)."""
    os.chmod(tmp_path, 0o777)


@pytest.fixture
def spi_config(tmp_path):
    (tmp_path / "logs").mkdir(mode=0o777)
    os.chmod(tmp_path / "logs", 0o777)
    return write(tmp_path / "spi.toml", f"""
[readers]
backend = "spi"
[spi]
readers = [ {{ zone = "seat1", bus = 0, device = 0, reset_pin = 25 }},
            {{ zone = "prikup", bus = 1, device = 0, reset_pin = 24 }} ]
[gpio]
factory = "rpigpio"
leds = {{ seat1 = 5 }}
[log]
dir = "{tmp_path / 'logs'}"
""")


def test_finding_lines():
    assert Finding(OK, "config a.toml").line() == "ok   config a.toml"
    assert Finding(WARN, "no deck", "pass --deck").line() == "warn no deck — fix: pass --deck"
    assert Finding(FAIL, "gone", "plug it").line() == "FAIL gone — fix: plug it"


def test_spi_all_ok_with_groups(tmp_path, spi_config):
    dev = tmp_path / "dev"
    dev.mkdir()
    device(dev / "spidev0.0", 0o660, SPI)
    device(dev / "spidev1.0", 0o660, SPI)
    device(dev / "gpiomem", 0o660, GPIO)
    findings = diagnose(spi_config, None, fake_host(dev, gids=(USER_GID, SPI, GPIO)))
    lines = [f.line() for f in findings]
    assert not [f for f in findings if f.level == FAIL], lines
    assert levels(findings, "SPI reader seat1") == [OK]
    assert levels(findings, "SPI reader prikup") == [OK]
    assert levels(findings, "GPIO /") == [OK]
    assert levels(findings, "module RPi.GPIO") == [OK]
    assert levels(findings, "group spi") == [OK]
    assert levels(findings, "group gpio") == [OK]
    assert levels(findings, "no deck file") == [WARN]        # spi without --deck: a warning only


def test_spi_missing_devices_say_how_to_enable(tmp_path, spi_config):
    dev = tmp_path / "dev"
    dev.mkdir()
    device(dev / "gpiomem", 0o660, GPIO)
    findings = diagnose(spi_config, None, fake_host(dev, gids=(USER_GID, GPIO)))
    bus0 = next(f for f in findings if "spidev0.0" in f.text)
    bus1 = next(f for f in findings if "spidev1.0" in f.text)
    assert bus0.level == FAIL and "no such device" in bus0.text and "raspi-config" in bus0.fix
    assert bus1.level == FAIL and "dtoverlay=spi1-3cs" in bus1.fix
    assert bus1.line().startswith("FAIL ") and " — fix: " in bus1.line()


def test_permission_denied_names_the_group(tmp_path, spi_config):
    dev = tmp_path / "dev"
    dev.mkdir()
    device(dev / "spidev0.0", 0o660, SPI)
    device(dev / "spidev1.0", 0o660, SPI)
    device(dev / "gpiomem", 0o600, 0)          # root only: the conventional group is advised
    findings = diagnose(spi_config, None, fake_host(dev))
    spi = next(f for f in findings if "spidev0.0" in f.text)
    assert spi.level == FAIL and "permission denied" in spi.text
    assert "usermod -aG spi table" in spi.fix
    gpio = next(f for f in findings if "gpiomem" in f.text)
    assert gpio.level == FAIL and "'gpio' group" in gpio.fix
    group = next(f for f in findings if "not in group spi" in f.text)
    assert group.level == FAIL and "log in again" in group.fix


def test_group_added_but_not_logged_in_again_is_a_warning(tmp_path, spi_config):
    dev = tmp_path / "dev"
    dev.mkdir()
    for name in ("spidev0.0", "spidev1.0"):
        device(dev / name, 0o666, SPI)          # usable by anyone
    device(dev / "gpiomem", 0o660, GPIO)
    findings = diagnose(spi_config, None, fake_host(dev, gids=(USER_GID, GPIO), members={"spi": ("table",)}))
    spi = [f for f in findings if "group spi" in f.text]
    assert [f.level for f in spi] == [WARN] and "log out and in" in spi[0].fix


def test_missing_modules_say_pip_install(tmp_path, spi_config):
    dev = tmp_path / "dev"
    dev.mkdir()
    for name in ("spidev0.0", "spidev1.0"):
        device(dev / name, 0o660, SPI)
    device(dev / "gpiomem", 0o660, GPIO)
    findings = diagnose(spi_config, None, fake_host(dev, gids=(USER_GID, SPI, GPIO), modules=("mfrc522",)))
    bad = [f for f in findings if f.level == FAIL]
    assert {f.text.split()[2] for f in bad} == {"spidev", "RPi.GPIO"}
    assert all(f.fix == "pip install 'preftable[pi]'" for f in bad)


def test_auto_factory_without_gpiomem_warns(tmp_path):
    cfg = write(tmp_path / "c.toml", '[gpio]\nleds = { seat1 = 5 }\n[log]\ndir = "%s"\n' % tmp_path)
    findings = diagnose(cfg, None, fake_host(tmp_path / "nodev", modules=()))
    assert levels(findings, "gpiomem") == [WARN]
    assert not [f for f in findings if f.level == FAIL]     # RPi.GPIO is not needed: the pins are simulated


def test_module_lookup_does_not_import(tmp_path, monkeypatch):
    import sys

    from controller.app.doctor import _module_available
    pkg = tmp_path / "fakerpi_pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text(f"open({str(tmp_path / 'imported')!r}, 'w').close()\n")
    (pkg / "GPIO.py").write_text("raise RuntimeError('imported')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert _module_available("fakerpi_pkg.GPIO")
    assert not _module_available("fakerpi_pkg.SPI")
    assert not _module_available("no_such_package_xyz.GPIO")
    assert not (tmp_path / "imported").exists() and "fakerpi_pkg" not in sys.modules


def test_bad_config_gives_one_fail_naming_the_key(tmp_path):
    cfg = write(tmp_path / "bad.toml", '[hub]\nbaudrate = "fast"\n')
    findings = diagnose(cfg, None, fake_host(tmp_path))
    assert len(findings) == 1
    assert findings[0].level == FAIL and "hub.baudrate" in findings[0].text and "hub.baudrate" in findings[0].fix


def test_unknown_key_and_missing_config(tmp_path):
    cfg = write(tmp_path / "bad.toml", '[display]\ncolour = "red"\n')
    [finding] = diagnose(cfg, None, fake_host(tmp_path))
    assert finding.level == FAIL and "display.colour" in finding.text
    [finding] = diagnose(str(tmp_path / "nope.toml"), None, fake_host(tmp_path))
    assert finding.level == FAIL and "no such config file" in finding.text and "--config" in finding.fix


def test_deck_findings(tmp_path):
    from controller.core.cards import DECK
    full = write(tmp_path / "full.toml", "[cards]\n" + "".join(f'"04{i:012X}" = "{c}"\n' for i, c in enumerate(DECK)))
    part = write(tmp_path / "part.toml", '[cards]\n"0401" = "7s"\n')
    dup = write(tmp_path / "dup.toml", '[cards]\n"0401" = "7s"\n"0402" = "7s"\n')
    host = fake_host(tmp_path)
    assert levels(diagnose(None, full, host), "deck") == [OK]
    [partial] = [f for f in diagnose(None, part, host) if "deck" in f.text]
    assert partial.level == FAIL and "missing" in partial.text and "preftable enroll --deck" in partial.fix
    [twice] = [f for f in diagnose(None, dup, host) if "deck" in f.text]
    assert twice.level == FAIL and "7s given twice" in twice.text
    [gone] = [f for f in diagnose(None, str(tmp_path / "none.toml"), host) if "deck" in f.text]
    assert gone.level == FAIL and "no such deck file" in gone.text


def test_log_dir_findings(tmp_path):
    locked = tmp_path / "locked"
    locked.mkdir()
    os.chmod(locked, 0o755)                     # root's; the user 'table' may not write
    host = fake_host(tmp_path)
    for log_dir, level, needle in ((locked, FAIL, "not writable"), (locked / "a" / "b", FAIL, "cannot be created"),
                                   (tmp_path / "new", OK, "will be created")):
        cfg = write(tmp_path / "c.toml", f'[log]\ndir = "{log_dir}"\n')
        [finding] = [f for f in diagnose(cfg, None, host) if "log dir" in f.text]
        assert finding.level == level and needle in finding.text, finding.line()
    file_dir = tmp_path / "afile"
    file_dir.write_text("")
    cfg = write(tmp_path / "c.toml", f'[log]\ndir = "{file_dir}"\n')
    [finding] = [f for f in diagnose(cfg, None, host) if "log dir" in f.text]
    assert finding.level == FAIL and "not a folder" in finding.text


def test_hub_port_missing_gives_the_fix(tmp_path):
    cfg = write(tmp_path / "c.toml", f'[readers]\nbackend = "hub"\n[hub]\nport = "{tmp_path}/ttyACM9"\n'
                                     f'[log]\ndir = "{tmp_path}"\n')
    # no HELLO attempt on a port that does not exist: one would wait an hour (and trip the
    # test's own timeout) rather than be timed by the wall clock
    findings = diagnose(cfg, None, fake_host(tmp_path, hello_timeout=3600))
    [port] = [f for f in findings if "ttyACM9: no such device" in f.text]
    assert port.level == FAIL and "USB cable" in port.fix
    [group] = [f for f in findings if "group dialout" in f.text]   # cannot tell yet: a warning
    assert group.level == WARN and "usermod -aG dialout table" in group.fix


def test_hub_port_without_dialout(tmp_path):
    port = device(tmp_path / "ttyACM0", 0o660, DIALOUT)
    cfg = write(tmp_path / "c.toml", f'[readers]\nbackend = "hub"\n[hub]\nport = "{port}"\n[log]\ndir = "{tmp_path}"\n')
    findings = diagnose(cfg, None, fake_host(tmp_path))
    [access] = [f for f in findings if "ttyACM0" in f.text and "permission" in f.text]
    assert access.level == FAIL and "usermod -aG dialout table" in access.fix
    assert levels(findings, "not in group dialout") == [FAIL]


@pytest.mark.parametrize("url, bad", [("socket://localhost:7000", False), ("loop://", False),
                                      ("socket://localhost:99999", True), ("socket://:7000", True),
                                      ("nosuch://x", True)])
def test_url_forms(url, bad):
    assert (url_problem(url) is not None) == bad


@pytest.mark.parametrize("transport", ["pty", "tcp"])
def test_hub_answers_hello_with_its_info(tmp_path, transport):
    emu = HubEmulator(readers=3, fw_version="emu-9", poll_ms=5, hb_ms=100, state_ms=250)
    path = emu.open_pty() if transport == "pty" else "socket://%s:%d" % emu.serve_tcp()
    try:
        cfg = write(tmp_path / "c.toml", f'[readers]\nbackend = "hub"\n[hub]\nport = "{path}"\n'
                                         f'zones = ["seat1", "seat2", "seat3", "prikup"]\n[log]\ndir = "{tmp_path}"\n')
        findings = diagnose(cfg, None, Host(dev=tmp_path))       # this machine's real user (root here)
    finally:
        emu.close()
    [hello] = [f for f in findings if "proto" in f.text]
    assert hello.level == OK
    assert f"boot {emu.boot_id}" in hello.text and "firmware emu-9" in hello.text and "3 readers" in hello.text
    assert hello.text.startswith("hub connected on ")          # the board's and live view's words
    [short] = [f for f in findings if "hub.zones maps 4" in f.text]
    assert short.level == FAIL and "prikup (reader 3)" in short.text


def test_hub_that_does_not_answer(tmp_path):
    master, slave = os.openpty()                 # a port that opens but never speaks
    try:
        path = os.ttyname(slave)
        cfg = write(tmp_path / "c.toml", f'[readers]\nbackend = "hub"\n[hub]\nport = "{path}"\n[log]\ndir = "{tmp_path}"\n')
        findings = diagnose(cfg, None, Host(dev=tmp_path, hello_timeout=0.5))
    finally:
        os.close(master)
        os.close(slave)
    [hello] = [f for f in findings if "HELLO" in f.text]
    assert hello.level == FAIL and "powered" in hello.fix and "no HELLO within 0.5 s" in hello.text


def test_cli_exit_codes(tmp_path, capsys, monkeypatch):
    ok = write(tmp_path / "ok.toml", f'[log]\ndir = "{tmp_path}"\n')
    assert cli.main(["doctor", "--config", ok]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0].startswith("ok   config ")
    bad = write(tmp_path / "bad.toml", "[nonsense]\n")
    assert cli.main(["doctor", "--config", bad]) == 1
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 1 and out[0].startswith("FAIL config: ") and "nonsense" in out[0]


def test_serial_display_port_checked(tmp_path):
    cfg = write(tmp_path / "c.toml", f'[display]\nkind = "serial"\nport = "{tmp_path}/ttyUSB3"\n[log]\ndir = "{tmp_path}"\n')
    [display] = [f for f in Doctor(cfg, None, fake_host(tmp_path)).run() if "ttyUSB3: no such" in f.text]
    assert display.level == FAIL and "display" in display.text and "display.port" in display.fix


def test_log_dir_probe_for_the_real_user(tmp_path):
    """For this process's own user the doctor tries (an empty folder, removed at once)."""
    host = Host(dev=tmp_path)
    for log_dir, level in ((tmp_path / "logs", OK), ("/proc/preftable-doctor/logs", FAIL)):
        cfg = write(tmp_path / "c.toml", f'[log]\ndir = "{log_dir}"\n')
        [finding] = [f for f in diagnose(cfg, None, host) if "log dir" in f.text]
        assert finding.level == level, finding.line()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.toml"]      # nothing left behind


def test_hub_speaking_another_protocol(tmp_path):
    emu = HubEmulator(readers=4, proto=99, poll_ms=5, hb_ms=100, state_ms=250)
    path = emu.open_pty()
    try:
        cfg = write(tmp_path / "c.toml", f'[readers]\nbackend = "hub"\n[hub]\nport = "{path}"\n[log]\ndir = "{tmp_path}"\n')
        findings = diagnose(cfg, None, Host(dev=tmp_path))
    finally:
        emu.close()
    [proto] = [f for f in findings if "protocol 99" in f.text]
    assert proto.level == FAIL and "firmware" in proto.fix


# --- a running service holds the table ---------------------------------------------------------

def spi_table(tmp_path: Path, log_dir: Path) -> str:
    return write(tmp_path / "table.toml", f"""
[readers]
backend = "spi"
[spi]
readers = [ {{ zone = "seat1", bus = 0, device = 0, reset_pin = 25 }} ]
[log]
dir = "{log_dir}"
""")


def test_doctor_live_and_enroll_refuse_while_the_service_holds_its_log_dir(tmp_path, capsys):
    from controller.store.files import LogDirLock

    logs = tmp_path / "state"
    cfg = spi_table(tmp_path, logs)
    lock = LogDirLock(logs).acquire()          # what a running `preftable run` holds
    try:
        assert cli.main(["doctor", "--live", "--config", cfg]) == 2
        out, err = capsys.readouterr()
        assert out == "", "nothing checked, no reader touched"
        assert len(err.strip().splitlines()) == 1
        assert f"pid {os.getpid()} holds {logs}" in err and "sudo systemctl stop preftable" in err
        assert cli.main(["enroll", "--config", cfg, "--deck", str(tmp_path / "d.toml")]) == 2
        assert "sudo systemctl stop preftable" in capsys.readouterr().err
        assert not (tmp_path / "d.toml").exists()
        # plain doctor says it too, as a warning
        findings = diagnose(cfg, None, fake_host(tmp_path / "dev"))
        [warning] = [f for f in findings if "service is running" in f.text]
        assert warning.level == WARN and "sudo systemctl stop preftable" in warning.fix
    finally:
        lock.release()
    findings = diagnose(cfg, None, fake_host(tmp_path / "dev"))
    assert not [f for f in findings if "service is running" in f.text]


def test_the_units_state_directory_is_looked_at_without_permission_on_it(tmp_path):
    """The service's /var/lib/preftable is 0750 preftable: its lock is read from /proc/locks."""
    from controller.app.doctor import service_in_the_way
    from controller.store.files import log_dir_holder

    state = tmp_path / "var-lib-preftable"
    state.mkdir(mode=0o700)
    st = state.stat()
    locks = tmp_path / "locks"
    locks.write_text(f"1: POSIX  ADVISORY  WRITE 99 00:11:22 0 EOF\n"
                     f"2: FLOCK  ADVISORY  WRITE 4242 {os.major(st.st_dev):02x}:{os.minor(st.st_dev):02x}:"
                     f"{st.st_ino} 0 EOF\n")
    assert log_dir_holder(state, locks) == "4242"
    assert log_dir_holder(tmp_path / "absent", locks) is None
    said = service_in_the_way([tmp_path / "logs", state], locks)
    assert said is not None and "pid 4242" in said and str(state) in said
    host = fake_host(tmp_path / "dev", service_log_dirs=(state,), locks=locks)
    cfg = write(tmp_path / "c.toml", f'[log]\ndir = "{tmp_path / "logs"}"\n')
    assert any("pid 4242" in f.text for f in diagnose(cfg, None, host))


# --- which RPi.GPIO, on which board ---------------------------------------------------------

def fake_rpi_package(root: Path, kind: str) -> Path:
    """An installed ``RPi/GPIO/__init__.py`` as each package writes it (first lines)."""
    gpio = root / "RPi" / "GPIO"
    gpio.mkdir(parents=True)
    (root / "RPi" / "__init__.py").write_text("")
    if kind == "rpi-lgpio":       # waveform80/rpi-lgpio: RPi/GPIO/__init__.py
        text = "import os\nimport sys\n\nimport lgpio\n\n# This is *not* the version of rpi-lgpio\nVERSION = '0.7.2'\n"
    else:                         # RPi.GPIO 0.7.x: the C extension behind a thin package
        text = "from RPi._GPIO import *\n\nVERSION = '0.7.1'\n"
    (gpio / "__init__.py").write_text(text)
    return root


@pytest.mark.parametrize("kind, dists, model, level, needle", [
    ("RPi.GPIO", {"RPi.GPIO": "0.7.1"}, "Raspberry Pi 4 Model B Rev 1.5", OK, "RPi.GPIO is RPi.GPIO 0.7.1"),
    ("RPi.GPIO", {"RPi.GPIO": "0.7.1"}, "Raspberry Pi 5 Model B Rev 1.0", FAIL, "cannot drive the pins"),
    ("rpi-lgpio", {"rpi-lgpio": "0.6"}, "Raspberry Pi 5 Model B Rev 1.0", OK, "RPi.GPIO is rpi-lgpio 0.6"),
    ("rpi-lgpio", {"rpi-lgpio": "0.6"}, "Raspberry Pi 4 Model B Rev 1.5", OK, "drives the pins of this"),
    ("rpi-lgpio", {"rpi-lgpio": "0.4"}, "Raspberry Pi 5 Model B Rev 1.0", FAIL, "older than the 0.6"),
    ("rpi-lgpio", {"rpi-lgpio": "0.6", "RPi.GPIO": "0.7.1"}, "Raspberry Pi 5 Model B Rev 1.0", FAIL,
     "both installed"),
])
def test_doctor_says_which_rpi_gpio_is_installed_and_whether_it_drives_this_board(
        tmp_path, spi_config, kind, dists, model, level, needle):
    import importlib.metadata
    import importlib.machinery

    from hw.pins import gpio_library

    root = fake_rpi_package(tmp_path / "site", kind)

    def version(dist):
        if dist in dists:
            return dists[dist]
        raise importlib.metadata.PackageNotFoundError(dist)

    library = gpio_library(lambda name: importlib.machinery.PathFinder.find_spec(name, [str(root)]), version)
    assert library.name == kind
    dev = tmp_path / "dev"
    dev.mkdir()
    host = fake_host(dev, board_model=lambda: model, gpio_library=lambda: library)
    [finding] = [f for f in diagnose(spi_config, None, host) if f.text.startswith("RPi.GPIO is")]
    assert finding.level == level and needle in finding.text, finding.line()
    if level == FAIL and model.startswith("Raspberry Pi 5") and "older" not in needle:
        assert "pip uninstall -y RPi.GPIO" in finding.fix and "rpi-lgpio>=0.6" in finding.fix


def test_no_rpi_package_at_all(tmp_path):
    from hw.pins import gpio_library
    assert gpio_library(lambda name: None, lambda dist: "1").name is None


def test_plain_doctor_does_not_ask_a_hub_the_service_holds_for_its_hello(tmp_path):
    import pty

    from controller.store.files import LogDirLock

    master, slave = pty.openpty()
    logs = tmp_path / "state"
    cfg = write(tmp_path / "hub.toml", f'[readers]\nbackend = "hub"\n[hub]\nport = "{os.ttyname(slave)}"\n'
                                       f'[log]\ndir = "{logs}"\n')
    lock = LogDirLock(logs).acquire()
    try:
        findings = diagnose(cfg, None, fake_host(tmp_path / "dev", uid=0, hello_timeout=30.0))
    finally:
        lock.release()
        os.close(master)
        os.close(slave)
    [skipped] = [f for f in findings if "HELLO" in f.text]
    assert skipped.level == WARN and "the running service holds it" in skipped.text
