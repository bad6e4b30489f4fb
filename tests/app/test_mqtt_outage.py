"""The game log is the outbox: outages lose nothing, a mirror never holds a line twice.

``preftable run`` (sim readers, ``[mqtt]``) as its own process, so it can be
SIGKILLed; the board in this process, so the test can wait on what it holds.
Every wait is on a condition and bounded; none is on time.
"""

import json
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from conftest import spawn as spawn_child
from controller.app.mqtt import MqttPublisher
from controller.app.service import TableService
from controller.app.settings import load_settings

from mqtt_broker import (broker, club_factory, describe, mirror_complete, replay_summary,  # noqa: F401
                         wait_until)

ROOT = Path(__file__).resolve().parents[2]
WAIT_S = 60


def table_config(tmp_path: Path, url: str, speed: float) -> Path:
    cfg = tmp_path / "table.toml"
    cfg.write_text(f'[readers]\nbackend = "sim"\n[sim]\nseed = 21\nspeed = {speed}\nnoise = true\n'
                   f'[display]\nkind = "none"\n[mqtt]\nbroker = "{url}"\ntable_id = "t1"\n')
    return cfg


def run_table(cfg: Path, logs: Path, *, new: bool = False) -> subprocess.Popen:
    args = [sys.executable, "-m", "controller", "run", "--config", str(cfg), "--log-dir", str(logs)]
    return spawn_child(args + (["--new"] if new else []), cwd=ROOT, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)


class IdleReaders:
    """Readers on which nobody lays a card: the service restarted only to publish its tail."""

    def start(self, sink) -> None:
        pass

    def stop(self) -> None:
        pass


@pytest.mark.slow
def test_broker_restarted_twice_and_table_sigkilled_the_mirror_is_complete_and_equal(
        tmp_path, broker, club_factory):
    club = club_factory(broker.url)
    cfg = table_config(tmp_path, broker.url, speed=20)
    logs = tmp_path / "logs"
    proc = run_table(cfg, logs, new=True)
    try:
        wait_until(lambda: list(logs.glob("*/events.jsonl")), WAIT_S, "the table to open its session")
        (events,) = logs.glob("*/events.jsonl")
        session = events.parent.name
        mirror = tmp_path / "club" / "t1" / session

        def lines() -> int:
            return events.read_bytes().count(b"\n")

        def mirrored() -> int:
            return club.mirror_lines("t1", session)

        def mid_deal(after: int) -> bool:
            """Past line ``after`` and inside a deal: the last line is no deal's end."""
            whole = events.read_bytes()
            data = whole[:whole.rfind(b"\n") + 1].splitlines()      # whole lines only
            last = json.loads(data[-1]) if data else {}
            # a deal's result line carries its entry's fields, its "kind" the deal's kind
            return len(data) > after and last.get("kind") != "abandon" and "complete" not in last

        def plays_on(what: str) -> None:
            start = lines()
            wait_until(lambda: lines() >= start + 30, WAIT_S, f"the table to play on {what}")

        def catches_up(what: str) -> None:
            target = lines()
            wait_until(lambda: mirrored() >= target, WAIT_S,
                       lambda: f"the mirror to reach line {target} {what} (it has {mirrored()})")

        # 1. the broker stopped in the middle of a deal; the table plays on; the broker comes back
        wait_until(lambda: mirrored() >= 30 and mid_deal(40), WAIT_S, "the first lines mirrored")
        broker.stop()
        plays_on("without the broker")
        broker.start()
        catches_up("after the broker's restart")

        # 2. the table's service SIGKILLed in the middle of a deal, and started again (it resumes)
        mark = lines()
        wait_until(lambda: mid_deal(mark + 10), WAIT_S, "the next deal under way")
        proc.kill()
        proc.wait(20)
        proc = run_table(cfg, logs)
        plays_on("after its restart")
        catches_up("after the table's restart")

        # 3. the broker killed (SIGKILL: nothing saved since its last start) in the middle of a deal
        mark = lines()
        wait_until(lambda: club.subscribed.is_set() and club.tables["t1"].status == "online"
                   and mid_deal(mark + 10), WAIT_S, "the board and the table connected, a deal under way")
        broker.kill()
        plays_on("without the broker")
        broker.start()
        catches_up("after the broker's crash")
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(20) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(20)

    # the service once more, its readers idle, to publish the last lines the broker had not acknowledged
    settings = load_settings(cfg)
    publisher = MqttPublisher(settings.section("mqtt"))
    service = TableService(settings, None, logs, outputs=[publisher])
    assert service.open_session().folder == events.parent                  # the same session, resumed
    runner = threading.Thread(target=service.run, args=(IdleReaders(),))
    runner.start()
    try:
        wait_until(lambda: mirror_complete(mirror, events.parent), WAIT_S, describe(mirror, events.parent))
    finally:
        service.stop()
        runner.join(30)

    table_log = events.read_bytes()
    assert (mirror / "events.jsonl").read_bytes() == table_log             # complete, in order, no line twice
    assert not (mirror / "pending.jsonl").exists() and not club.bad
    assert replay_summary(mirror) == replay_summary(events.parent)
    assert len(replay_summary(mirror)["deals"]) >= 2
