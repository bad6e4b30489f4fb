"""Resume speed: ``preftable run`` with the hub backend and no ``[web]``/``[mqtt]``
section loads none of the code those sections, or the other subcommands, need.

The run is a real one (an emulated hub on a pty, systemd's notify socket), stopped by
SIGTERM once ready; the modules it imported are read from its own ``sys.modules``,
written at its exit.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
from pathlib import Path

from conftest import spawn as spawn_child
from firmware_bridge.emulator import HubEmulator

ROOT = Path(__file__).resolve().parents[2]

# run as `python -c`: the real entry point, then its modules written at exit
PROBE = ("import atexit, json, runpy, sys\n"
         "out = sys.argv.pop(1)\n"
         "atexit.register(lambda: open(out, 'w').write(json.dumps(sorted(sys.modules))))\n"
         "sys.argv[0] = 'preftable'\n"
         "runpy.run_module('controller', run_name='__main__')\n")
LIVENESS_S = 120        # bounds a broken run; the test waits on READY=1 or the run's exit, not on time

NOT_NEEDED = ("aiohttp", "aiohttp_sse", "jinja2", "paho", "hypothesis", "controller.app.web",
              "controller.app.mqtt", "controller.app.club", "controller.app.enroll",
              "controller.app.doctor", "controller.app.report", "controller.app.demo",
              "controller.app.mqtt_config", "controller.app.mqtt_outbox", "controller.app.club_mirror",
              "controller.app.club_view", "controller.app.pulka_sheet", "controller.app.pulka_svg")


def modules_of_run(tmp_path: Path, config: str) -> list[str]:
    emu = HubEmulator(readers=4)
    port = emu.open_pty()
    cfg = tmp_path / "table.toml"
    cfg.write_text(config.format(port=port))
    out = tmp_path / "modules.json"
    sock_path = str(tmp_path / "notify")
    server = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    server.bind(sock_path)
    server.settimeout(1)
    proc = spawn_child([sys.executable, "-c", PROBE, str(out), "run", "--config", str(cfg),
                        "--deck", str(ROOT / "controller" / "examples" / "deck.toml"),
                        "--log-dir", str(tmp_path / "logs")], cwd=ROOT,
                       env=dict(os.environ, NOTIFY_SOCKET=sock_path), stderr=subprocess.PIPE)
    watchdog = threading.Timer(LIVENESS_S, proc.kill)
    watchdog.daemon = True
    watchdog.start()
    try:
        while proc.poll() is None:
            try:
                if "READY=1" in server.recv(4096).decode():
                    break
            except TimeoutError:
                continue        # not ready yet: look again whether it is still running
    finally:
        watchdog.cancel()
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
        server.close()
        emu.close()
    assert proc.returncode == 0, err
    return json.loads(out.read_text())


def test_run_with_the_hub_and_no_web_or_mqtt_imports_neither(tmp_path):
    modules = modules_of_run(tmp_path, '[readers]\nbackend = "hub"\n[hub]\nport = "{port}"\n'
                                       '[display]\nkind = "hub"\n')
    # what it does need was loaded: the probe sees the run's own modules
    assert {"controller.app.service", "controller.store.gamelog", "firmware_bridge.link"} <= set(modules)
    loaded = [m for m in modules if any(m == name or m.startswith(name + ".") for name in NOT_NEEDED)]
    assert loaded == []


def test_run_with_a_web_section_loads_the_web_page(tmp_path):
    """The other side: the section, not the backend, decides (the page listens on a free port)."""
    modules = modules_of_run(tmp_path, '[readers]\nbackend = "hub"\n[hub]\nport = "{port}"\n'
                                       '[web]\nlisten = "127.0.0.1:0"\n')
    assert "controller.app.web" in modules and "controller.app.mqtt" not in modules


def test_a_service_command_parses_as_the_whole_parser_parses_it():
    """``main`` builds only the named service command's parser: every example of each
    command's help gives the same arguments as the whole parser gives."""
    import shlex

    from controller.app.cli import HELP, _command_of, build_parser
    from controller.app.commands import REGISTER

    whole = build_parser()
    checked = 0
    for name in REGISTER:
        for example in HELP[name][1]:
            argv = shlex.split(example.split("#")[0])[1:]
            if not argv or argv[0] != name:
                continue
            assert _command_of(["-v"] + argv) == name
            assert vars(build_parser(name).parse_args(argv)) == vars(whole.parse_args(argv))
            checked += 1
    assert checked >= len(REGISTER)
    assert _command_of(["--help"]) is None and _command_of(["replay", "x"]) is None
