"""The bus (controller/app/bus.py) and the frozen snapshot (controller/core/snapshot.py).

A slow, stuck or failing subscriber never blocks or breaks the publisher; a
full mailbox drops its oldest item and counts it; the snapshot cannot be
changed by an output.  Synchronised on events, never on sleeps.
"""

from __future__ import annotations

import dataclasses
import threading

import pytest

from controller.app.bus import Bus, Published
from controller.core.snapshot import SnapshotBuilder
from controller.core.tracker import DealTracker

from conftest import eventually
from table_script import DEAL_A, Script, config


def deal_a_events(n: int):
    """The first ``n`` card events of DEAL_A, no card lifted."""
    script = Script()
    for plays in DEAL_A:
        script.trick(*plays, clear=False)
    return script.events[:n]


def snapshot_after(n_events: int):
    tracker = DealTracker(config())
    for event in deal_a_events(n_events):
        tracker.feed(event)
    return SnapshotBuilder("s").build(tracker, seq=n_events)


class Recorder:
    inline = False

    def __init__(self, name="rec", gate: threading.Event | None = None):
        self.name = name
        self.gate = gate
        self.items: list[Published] = []
        self.threads: set[str] = set()
        self.got = threading.Condition()
        self.closed = False

    def receive(self, item):
        self.threads.add(threading.current_thread().name)
        if self.gate is not None:
            self.gate.wait()
        with self.got:
            self.items.append(item)
            self.got.notify_all()

    def wait_for(self, n: int, timeout: float = 30) -> bool:
        with self.got:
            return self.got.wait_for(lambda: len(self.items) >= n, timeout)

    def tick(self, now):
        pass

    def close(self):
        self.closed = True


class Failing(Recorder):
    def receive(self, item):
        raise RuntimeError("broken output")


def item(seq: int) -> Published:
    return Published(None, (), dataclasses.replace(snapshot_after(0), seq=seq))


def test_a_stuck_subscriber_never_blocks_publish_and_drops_its_oldest_items():
    gate = threading.Event()
    stuck, fine = Recorder("stuck", gate), Recorder("fine")
    bus = Bus()
    bus.subscribe(stuck, maxlen=4)
    bus.subscribe(fine)
    for seq in range(1, 21):
        bus.publish(item(seq))          # returns although "stuck" is blocked in receive
    assert fine.wait_for(20)
    assert [i.snapshot.seq for i in fine.items] == list(range(1, 21))
    gate.set()
    bus.close()
    seqs = [i.snapshot.seq for i in stuck.items]
    assert seqs[-1] == 20 and len(seqs) < 20            # the newest always arrives
    assert stuck.closed and fine.closed


def test_the_mailbox_counts_what_it_dropped():
    gate = threading.Event()
    stuck = Recorder("stuck", gate)
    bus = Bus()
    bus.subscribe(stuck, maxlen=2)
    bus.publish(item(1))
    # wait until the worker holds item 1 inside receive (blocked on the gate)
    assert _wait(lambda: "output stuck" in stuck.threads)
    for seq in range(2, 8):
        bus.publish(item(seq))          # the mailbox holds 2: items 2..5 are dropped
    assert bus.stats()["stuck"]["dropped"] == 4
    gate.set()
    assert stuck.wait_for(3)
    bus.close()
    assert [i.snapshot.seq for i in stuck.items] == [1, 6, 7]


def _wait(predicate, timeout: float = 30) -> bool:
    return eventually(predicate, timeout, interval=0.01)


def test_a_failing_subscriber_is_counted_and_the_others_go_on(caplog):
    bad, good = Failing("bad"), Recorder("good")
    inline_bad = Failing("inline bad")
    bus = Bus()
    bus.subscribe(bad)
    bus.subscribe(inline_bad, inline=True)
    bus.subscribe(good)
    for seq in range(1, 4):
        bus.publish(item(seq))          # the inline failure does not raise here
    assert good.wait_for(3)
    assert _wait(lambda: bus.stats()["bad"]["errors"] == 3)
    assert bus.stats()["inline bad"]["errors"] == 3
    bus.close()
    # logged once per kind, not once per item
    assert sum("output bad failed" in r.getMessage() for r in caplog.records) == 1


def test_inline_subscribers_run_on_the_publishing_thread_and_threaded_ones_on_their_own():
    inline, threaded = Recorder("leds"), Recorder("web")
    bus = Bus()
    bus.subscribe(inline, inline=True)
    bus.subscribe(threaded)
    bus.publish(item(1))
    assert inline.items and inline.threads == {threading.current_thread().name}
    assert threaded.wait_for(1)
    assert threaded.threads == {"output web"}
    bus.close()


def test_the_snapshot_is_frozen_and_json_ready():
    snap = snapshot_after(5)
    with pytest.raises(dataclasses.FrozenInstanceError):
        snap.seq = 9
    with pytest.raises(TypeError):
        snap.on_table["seat1"] = ("7s",)
    with pytest.raises(TypeError):
        snap.names["seat1"] = "x"
    d = snap.to_dict()
    assert d["phase"] == "play" and d["deal"]["number"] == 1
    assert sum(len(c) for c in d["on_table"].values()) == 5
    assert d["deal"]["trick"] == 2                      # 4 cards closed the first (prikup) trick
    import json
    json.dumps(d)


def test_the_service_publishes_each_event_with_its_signals_and_a_growing_seq(tmp_path):
    from controller.app.service import TableService
    from controller.app.settings import Settings

    service = TableService(Settings(game=config()), None, tmp_path)
    rec = Recorder("rec")
    service.bus.subscribe(rec, inline=True)
    service.open_session(new=True)
    events = deal_a_events(4)
    for event in events:
        service.handle(event)
    service.session.close()
    assert [i.snapshot.seq for i in rec.items] == [1, 2, 3, 4]
    assert [i.event for i in rec.items] == events
    assert rec.items[3].snapshot.deal["trick"] == 2
    assert any(s.kind == "trick" for s in rec.items[3].signals)
    assert rec.items[0].session_dir == service.session.folder


def test_submit_stamps_an_outside_control_line_with_the_session_clock(tmp_path):
    from controller.app.service import TableService
    from controller.app.settings import Settings
    from controller.core.events import TableEvent

    service = TableService(Settings(game=config()), None, tmp_path)
    service.open_session(new=True)
    service.submit(TableEvent(t=0.0, event="button", button="confirm"))
    queued = service.queue.get_nowait()
    assert queued.button == "confirm" and queued.t >= 0.0
    service.session.close()


def test_a_resumed_sessions_history_is_not_decoded_until_an_output_reads_it():
    """A 10,000-deal session must not decode every ended deal at each event (memory, speed)."""
    from controller.core.tracker import Records

    tracker = DealTracker(config())
    for event in deal_a_events(40):
        tracker.feed(event)                   # deal 1 ended: one record
    record = tracker.records[0]
    decoded = []

    def decode(raw):
        decoded.append(raw)
        return record

    tracker.records = Records([b"journal line 1", b"journal line 2", record], decode)
    snap = SnapshotBuilder("s").build(tracker, seq=41)
    assert len(snap.deals) == 3 and decoded == []
    assert snap.deals[1] == record.entry and decoded == [b"journal line 2"]
    assert snap.deals[2] is record.entry
