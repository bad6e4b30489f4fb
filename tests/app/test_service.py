"""The table service: game logs, resume after crashes, SIGTERM, new pulka, the demo."""

import io
import json
import os
import random
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from controller.core.clock import VirtualClock
from controller.core.config import GameConfig
from controller.core.events import read_events
from controller.store.gamelog import SessionLog
from controller.app.settings import load_settings
from controller.app.sim import Noise, TableSimulator
from controller.core.tracker import DealTracker
from conftest import cli, eventually, fork_main, spawn as spawn_child, wait_until
from resume_check import cut_and_resume

ROOT = Path(__file__).resolve().parents[2]


def preftable(*args, **kw):
    return spawn_child([sys.executable, "-m", "controller", *map(str, args)], cwd=ROOT,
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, **kw)


def table_event_lines(path: Path) -> list[str]:
    return [line for line in path.read_text().splitlines() if line and '"kind"' not in line]


def replay_lines(lines, game=None):
    """Feed lines; return the tracker and the lines it would write (events + derived)."""
    tracker = DealTracker(game or GameConfig())
    out = []
    for ev in read_events(lines, tracker.zones):
        out.append(json.dumps(ev.to_dict(), ensure_ascii=False, separators=(", ", ": ")))
        out += [json.dumps(s.to_dict(), ensure_ascii=False, separators=(", ", ": ")) for s in tracker.feed(ev)]
    return tracker, out


def sim_config(tmp_path, seed=11, speed=30.0):
    cfg = tmp_path / "table.toml"
    cfg.write_text(f'[readers]\nbackend = "sim"\n[sim]\nseed = {seed}\nspeed = {speed}\nnoise = true\n'
                   '[display]\nkind = "none"\n')
    return cfg


def expected_events_of_deals(cfg_path, deals):
    settings = load_settings(cfg_path)
    sim = TableSimulator(settings.game, seed=settings.section("sim").seed, noise=Noise.demo())
    return [event for _ in range(deals) for event in sim.deal()]


def expected_events(cfg_path, count):
    settings = load_settings(cfg_path)
    sim = TableSimulator(settings.game, seed=settings.section("sim").seed, noise=Noise.demo())
    out = []
    while len(out) < count:
        out.extend(sim.deal())
    return out[:count]


def wait_for_events(events_path: Path, count: int, timeout: float) -> int:
    """The table-event lines in ``events_path`` once there are ``count`` (fewer: the bound passed)."""
    def logged() -> int:
        return len(table_event_lines(events_path)) if events_path.exists() else 0

    eventually(lambda: logged() >= count, timeout, interval=0.05)
    return logged()


def test_sigkill_at_50_random_moments_loses_nothing(tmp_path):
    """``run`` killed (SIGKILL) 50 times while it writes, restarted on the same log dir each
    time.  The kill moments are the seed's: after a random number of new lines (0-8) has
    reached the log, while the service goes on writing.  The services are forked from the
    test process (real processes, really killed) to spare 50 interpreter starts; the players
    play fast (the log's content does not depend on their pace, only on the seed)."""
    cfg = sim_config(tmp_path, speed=300)
    logs = tmp_path / "logs"
    rng = random.Random(4)
    torn_seen = 0
    events_path = None
    for _ in range(50):
        before = len(table_event_lines(events_path)) if events_path else 0
        proc = fork_main(["run", "--config", cfg, "--log-dir", logs])
        try:
            more = rng.randint(0, 8)
            # the first start creates the session; later ones resume it (a race, not a timeout)
            (events_path,) = wait_until(lambda: list(logs.glob("*/events.jsonl")), "the session's events file")
            wait_until(lambda: len(table_event_lines(events_path)) >= before + more or proc.poll() is not None,
                       f"{more} more lines")
            assert proc.poll() is None, "the service exited by itself"
        finally:
            proc.kill()
            proc.wait()
        assert proc.returncode == -signal.SIGKILL
        data = events_path.read_bytes()
        torn_seen += bool(data) and not data.endswith(b"\n")
    # play on past the point reached and past three deals
    three_deals = len(expected_events_of_deals(cfg, 3))
    target = max(len(table_event_lines(events_path)) + 40, three_deals)
    proc = preftable("run", "--config", cfg, "--log-dir", logs)
    got = wait_for_events(events_path, target, 120)
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(10) == 0, proc.stderr.read().decode()
    assert got >= target
    assert len(SessionLog.sessions(logs)) == 1                 # always the same session, resumed

    lines = events_path.read_text().splitlines()
    logged = table_event_lines(events_path)
    expected = expected_events(cfg, len(logged))
    # not one placement lost, none invented or repeated: the log holds exactly the simulated stream
    assert [json.loads(line) for line in logged] == [e.to_dict() for e in expected]
    tracker, reproduced = replay_lines(lines)
    assert reproduced == lines                                  # every derived line reproduced exactly
    uninterrupted = DealTracker(GameConfig())
    uninterrupted.feed_all(expected)
    assert tracker.summary() == uninterrupted.summary()
    assert len(tracker.summary()["deals"]) >= 3


def test_sigterm_flushes_and_exits_zero_then_resumes(tmp_path):
    cfg = sim_config(tmp_path, speed=50)
    logs = tmp_path / "logs"
    proc = preftable("run", "--config", cfg, "--log-dir", logs)
    (events_path,) = wait_until(lambda: list(logs.glob("*/events.jsonl")), "the session's events file")
    assert wait_for_events(events_path, 20, 20) >= 20
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(10) == 0
    first = table_event_lines(events_path)
    assert events_path.read_bytes().endswith(b"\n")
    proc = preftable("run", "--config", cfg, "--log-dir", logs)
    assert wait_for_events(events_path, len(first) + 10, 20) >= len(first) + 10
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(10) == 0
    assert table_event_lines(events_path)[:len(first)] == first
    proc = preftable("run", "--config", cfg, "--log-dir", logs, "--new")
    # the new session exists before it is stopped (no guess)
    wait_until(lambda: len(SessionLog.sessions(logs)) >= 2 or proc.poll() is not None, "the new session")
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(10) == 0
    assert len(SessionLog.sessions(logs)) == 2


def test_torn_last_line_dropped_on_resume(tmp_path):
    game = GameConfig()
    session = SessionLog.create(tmp_path, game, None)
    tracker = DealTracker(game)
    events = list(TableSimulator(game, seed=5).deal())
    for ev in events[:40]:
        session.append(ev, tracker.feed(ev))
    session.close()
    whole = session.events_path.read_bytes()
    session.events_path.write_bytes(whole + b'{"t": 99.0, "zone": "se')
    resumed = SessionLog.newest_unfinished(tmp_path)
    assert resumed.folder == session.folder
    tracker2, count, last_t = resumed.resume(game, None)
    assert count == 40 and last_t == events[39].t and resumed.events_path.read_bytes() == whole
    assert tracker2.summary() == tracker.summary()


def test_finished_session_is_not_resumed(tmp_path):
    game = GameConfig()
    session = SessionLog.create(tmp_path, game, None)
    session.finish({"deals": []})
    assert SessionLog.newest_unfinished(tmp_path) is None


def test_unwritable_log_dir_is_a_clear_error(tmp_path):
    if os.geteuid() == 0:
        blocker = tmp_path / "file"
        blocker.write_text("x")
        target = blocker / "logs"        # a path under a regular file cannot be created, even by root
    else:
        target = tmp_path / "ro" / "logs"
        (tmp_path / "ro").mkdir(mode=0o500)
    proc = cli(["run", "--log-dir", target])
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and "cannot create a session folder" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_demo_through_emulated_hub_matches_direct_feed(tmp_path):
    from controller.app.demo import demo_simulator, run_demo
    from controller.app.sim import make_deck

    out = io.StringIO()
    result = run_demo(deals=1, speed=8, seed=7, log_dir=tmp_path, game=GameConfig(), stream=out,
                      clock=VirtualClock())         # as fast as the code runs, in real-time order
    deck = make_deck(7)
    sim = demo_simulator(GameConfig(), 7, deck, 8)
    direct = DealTracker(GameConfig(), deck)
    direct.feed_all(sim.deals(1))
    assert json.loads(json.dumps(direct.summary())) == result["summary"]
    for path in result["paths"].values():
        assert Path(path).is_file()
    assert "deal 1/1" in out.getvalue()
    lines = result["paths"]["events"].read_text().splitlines()
    # uid events need the deck to resolve: replay with it
    tracker = DealTracker(GameConfig(), deck)
    out_lines = []
    for ev in read_events(lines, tracker.zones):
        out_lines.append(json.dumps(ev.to_dict(), ensure_ascii=False, separators=(", ", ": ")))
        out_lines += [json.dumps(s.to_dict(), ensure_ascii=False, separators=(", ", ": "))
                      for s in tracker.feed(ev)]
    assert out_lines == lines


@pytest.mark.parametrize("seed", range(6))
def test_resume_from_checkpoints_equals_uninterrupted(tmp_path, seed):
    """Cut a session anywhere, resume it through the checkpoint journal, go on: same signals, same summary."""
    from controller.core.events import TableEvent

    rng = random.Random(seed)
    game = GameConfig()
    events = list(TableSimulator(game, seed=seed, noise=Noise.demo()).deals(4))
    # buttons at awkward moments: undo right after deals end, a misdeal, a confirm
    ends = [i for i, e in enumerate(events) if i and events[i - 1].event == "removed" and e.event == "placed"]
    for i in sorted(rng.sample(ends, 2), reverse=True):
        events.insert(i, TableEvent(events[i - 1].t, "button", button=rng.choice(["undo", "confirm"])))
    events.insert(len(events) // 2, TableEvent(events[len(events) // 2 - 1].t, "button", button="new_deal"))

    cut = rng.randrange(len(events))
    r = cut_and_resume(tmp_path, game, events, cut)
    assert r.journal_written == r.deal_before_cut
    assert r.replayed == cut
    assert r.got == r.expected
    assert r.tracker.summary() == r.whole.summary()


def test_bad_checkpoint_journal_falls_back_to_events(tmp_path):
    game = GameConfig()
    events = list(TableSimulator(game, seed=3).deals(2))
    session = SessionLog.create(tmp_path, game, None)
    tracker = DealTracker(game)
    for e in events:
        signals = tracker.feed(e)
        session.append(e, signals, tracker.checkpoint() if any(s.kind == "deal" for s in signals) else None)
    session.close()
    lines = session.checkpoints_path.read_text().splitlines()
    assert len(lines) == 2
    session.checkpoints_path.write_text(lines[0][:-5] + "garbage\n" + lines[1] + "\n")
    resumed, count, _ = SessionLog(session.folder).resume(game, None)
    assert count == len(events) and resumed.summary() == tracker.summary()


def test_systemd_ready_and_watchdog_pings_from_the_loop(tmp_path):
    import socket

    cfg = sim_config(tmp_path, speed=20)
    sock_path = str(tmp_path / "notify")
    server = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    server.bind(sock_path)
    server.settimeout(20)
    env = dict(os.environ, NOTIFY_SOCKET=sock_path, WATCHDOG_USEC="400000")
    env.pop("WATCHDOG_PID", None)
    proc = preftable("run", "--config", cfg, "--log-dir", tmp_path / "logs", env=env)
    messages = []
    try:
        while sum("WATCHDOG=1" in m for m in messages) < 3:
            messages.append(server.recv(4096).decode())
    finally:
        proc.send_signal(signal.SIGTERM)
        rc = proc.wait(10)
        server.close()
    assert messages[0].startswith("READY=1")
    assert rc == 0


def test_spi_readers_path_gives_the_same_game(tmp_path):
    """Emulated RC522 chips -> the real mfrc522 driver -> scanner -> tracker: the deal of a direct feed."""
    import threading

    from hw.rc522 import FakeBackend
    from hw.rc522_chip import VirtualTag

    from controller.app.service import TableService
    from controller.app.backends.display import DisplayConfig
    from controller.app.backends.spi import SpiConfig, SpiReader, SpiSource
    from controller.app.settings import Settings
    from controller.app.sim import make_deck

    deck = make_deck(11)
    game = GameConfig()
    readers = (SpiReader("seat1", 0, 0, 25), SpiReader("seat2", 0, 1, 24),
               SpiReader("seat3", 1, 0, 23), SpiReader("prikup", 1, 1, 22))
    settings = Settings(game=game, backend="spi", sections={"spi": SpiConfig(absent_ms=60, readers=readers),
                                                            "display": DisplayConfig("none")})
    backend = FakeBackend()
    chips = {r.zone: backend.add_chip(r.bus, r.device) for r in readers}
    events = list(TableSimulator(game, seed=11, deck=deck).deal())

    service = TableService(settings, deck, tmp_path)
    service.open_session(new=True)
    source = SpiSource(settings.section("spi"), service.clock, factory=backend.pins(), spi_backend=backend)
    runner = threading.Thread(target=service.run, args=(source,), daemon=True)
    runner.start()
    tags = {}
    try:
        for index, ev in enumerate(events):
            field = chips[ev.zone].field
            if ev.event == "placed":
                tags[ev.uid] = VirtualTag(bytes.fromhex(ev.uid))
                field.put(tags[ev.uid])
            else:
                field.take(tags[ev.uid])
            # one change on the table, one table event: wait until the scanner reported it before
            # the next, as players' moves are far apart -- on a loaded machine a fixed pause let two
            # moves fall into one scan and come out in reader order (a race, not a slow test)
            eventually(lambda: service.seq > index)
            assert service.seq == index + 1, f"the scanner did not report {ev.to_dict()}"
        eventually(lambda: not service.tracker.leftover and service.tracker.records, timeout=10)
    finally:
        service.stop()
        runner.join(10)
    direct = DealTracker(game, deck)
    direct.feed_all(events)
    assert service.tracker.summary() == direct.summary()
    assert service.tracker.summary()["deals"][0]["complete"]


def test_gpio_buttons_reach_the_tracker_and_a_held_new_deal_closes_the_pulka(tmp_path):
    import threading

    from hw.indicators import Buttons
    from hw.pins import MockFactory

    from controller.core.events import placed
    from controller.app.service import TableService
    from controller.app.settings import Settings

    class QuietTable:
        """No readers: the test lays cards through the service's sink."""
        def start(self, sink):
            self.sink = sink

        def stop(self):
            pass

    factory = MockFactory()
    pins = {"undo": 20, "new_deal": 21, "confirm": 26}
    buttons = Buttons(factory, pins, debounce_ms=10, hold_s=0.4)
    finished = []
    from controller.app.backends.display import DisplayConfig

    clock = VirtualClock(50.0)          # the loop's button polls read it: presses and holds on virtual time
    service = TableService(Settings(sections={"display": DisplayConfig("none")}), None, tmp_path, buttons=buttons,
                           on_finished=lambda summary, path: finished.append((summary, path)), clock=clock)
    first = service.open_session(new=True)
    source = QuietTable()
    runner = threading.Thread(target=service.run, args=(source,), daemon=True)
    runner.start()

    def wait(cond, timeout=60.0):
        return eventually(cond, timeout, interval=0.01)

    def while_time_passes(cond) -> bool:
        """Move the clock 10 ms at each look until ``cond`` holds (the loop polls meanwhile)."""
        return eventually(lambda: cond() or clock.advance(0.01) < 0, 60.0, interval=0.005)

    try:
        assert wait(lambda: hasattr(source, "sink"))
        source.sink(placed(0.5, "prikup", card="7s"))
        source.sink(placed(0.6, "seat2", card="8s"))
        assert wait(lambda: service.tracker.deal is not None and len(service.tracker.deal.plays) == 2)
        factory.fake.press(pins["undo"])
        assert while_time_passes(lambda: len(service.tracker.deal.plays) == 1)
        factory.fake.release(pins["undo"])
        factory.fake.press(pins["new_deal"])              # held: a new pulka
        assert while_time_passes(lambda: service.session.folder != first.folder)
        factory.fake.release(pins["new_deal"])
    finally:
        service.stop()
        runner.join(5)
    lines = [json.loads(l) for l in (first.folder / "events.jsonl").read_text().splitlines()]
    buttons_logged = [l for l in lines if l.get("event") == "button"]
    assert [b["button"] for b in buttons_logged][:2] == ["undo", "new_deal"]
    assert all(b["t"] >= 0.6 for b in buttons_logged)    # session time, after the cards
    summary = json.loads((first.folder / "summary.json").read_text())
    assert summary["deals"][0]["complete"] is False      # the pressed new_deal abandoned the deal
    assert finished == [(summary, first.folder / "summary.json")]
    assert (service.session.folder / "events.jsonl").exists()
