"""Presence scanning: the pure tracker, then the scanner over five emulated readers."""

from __future__ import annotations

import logging
import threading

import pytest

from controller.core.errors import ConfigError
from controller.core.events import PLACED, REMOVED, TableEvent
from hw.rc522 import FakeBackend, Reader
from hw.rc522_chip import VirtualTag
from hw.scanner import PresenceTracker, Scanner

ZONES = ("seat1", "seat2", "seat3", "seat4", "prikup")
WIRING = [(0, 0, 25), (0, 1, 24), (1, 0, 23), (1, 1, 22), (1, 2, 27)]
A, B = "04A2B11C6F5E80", "04A2B11C6F5E81"


def kinds(events):
    return [(e.event, e.zone, e.uid) for e in events]


# ------------------------------------------------------------------------------------------ tracker
def feed(tracker, reads, step=0.02, start=0.0):
    """``reads``: per scan, a tuple of one UID-or-None per reader."""
    out, now = [], start
    for scan in reads:
        for index, uid in enumerate(scan):
            out += tracker.observe(index, uid, now)
        now += step
    return out, now


def test_placed_after_two_consecutive_reads():
    tr = PresenceTracker(["seat1", "seat2"])
    assert tr.observe(0, A, 0.00) == []
    assert tr.observe(0, None, 0.02) == []
    assert tr.observe(0, A, 0.04) == []                      # a gap restarts the count
    events = tr.observe(0, A.lower(), 0.06)
    assert events == [TableEvent(0.06, PLACED, "seat1", uid=A)]
    assert tr.observe(0, A, 0.08) == []                      # once only
    assert tr.present() == {"seat1": {A}, "seat2": set()}


def test_removed_after_absent_ms_unseen_and_not_before():
    tr = PresenceTracker(["seat1"], absent_ms=300)
    tr.observe(0, A, 0.0)
    tr.observe(0, A, 0.1)                                    # placed, last seen 0.1
    assert tr.observe(0, None, 0.399) == []
    assert tr.observe(0, None, 0.4) == [TableEvent(0.4, REMOVED, "seat1", uid=A)]
    assert tr.present() == {"seat1": set()}


def test_flicker_shorter_than_absent_ms_gives_nothing():
    tr = PresenceTracker(["seat1"], absent_ms=300)
    reads = [(A,), (A,)] + [(None,), (None,), (A,), (None,), (A,), (A,), (None,)] * 10
    events, _ = feed(tr, reads, step=0.03)
    assert kinds(events) == [(PLACED, "seat1", A)]


def test_crosstalk_held_back_until_it_settles():
    tr = PresenceTracker(["seat1", "seat2"], absent_ms=300)
    events, now = feed(tr, [(A, A)] * 10, step=0.02)         # both antennas see it
    assert events == []
    events, now = feed(tr, [(A, None)] * 20, step=0.02, start=now)
    assert kinds(events) == [(PLACED, "seat1", A)]
    assert events[0].t >= 0.18 + 0.3 - 1e-9                  # once seat2's last sighting is stale


def test_crosstalk_onto_a_placed_card_changes_nothing():
    tr = PresenceTracker(["seat1", "seat2"])
    events, now = feed(tr, [(A, None)] * 3 + [(A, A)] * 5 + [(A, None)] * 30)
    assert kinds(events) == [(PLACED, "seat1", A)]


def test_card_moved_between_zones_is_removed_then_placed():
    tr = PresenceTracker(["seat1", "seat2"])
    events, now = feed(tr, [(A, None)] * 3 + [(None, A)] * 30)
    assert kinds(events) == [(PLACED, "seat1", A), (REMOVED, "seat1", A), (PLACED, "seat2", A)]
    assert [e.t for e in events] == sorted(e.t for e in events)


def test_two_cards_on_two_zones():
    tr = PresenceTracker(["seat1", "seat2"])
    events, _ = feed(tr, [(A, B)] * 2)
    assert kinds(events) == [(PLACED, "seat1", A), (PLACED, "seat2", B)]


def test_tracker_config_is_strict():
    with pytest.raises(ConfigError, match="seat1"):
        PresenceTracker(["seat1", "seat1"])
    with pytest.raises(ConfigError, match="absent_ms"):
        PresenceTracker(["seat1"], absent_ms=0)


# ------------------------------------------------------------------------------------------ scanner
@pytest.fixture
def table():
    backend = FakeBackend()
    chips = [backend.add_chip(bus, dev) for bus, dev, _ in WIRING]
    readers = [Reader(bus, dev, pin, backend=backend) for bus, dev, pin in WIRING]
    faults = []
    scanner = Scanner(list(zip(ZONES, readers)), absent_ms=300, clock=backend.clock,
                      on_fault=lambda zone, ok: faults.append((zone, ok)))
    yield backend, chips, scanner, faults
    for r in readers:
        r.close()


def scan_for(scanner, clock, seconds):
    events, end = [], clock() + seconds
    while clock() < end:
        events += scanner.scan_once()
    return events


def test_scanner_places_on_the_second_scan_and_removes_after_absent_ms(table):
    backend, chips, scanner, _ = table
    clock = backend.clock
    tags = [chips[i].field.put(VirtualTag(f"04A2B11C6F5E8{i}")) for i in range(5)]
    assert scanner.scan_once() == []
    events = scanner.scan_once()
    assert kinds(events) == [(PLACED, z, t.uid_hex) for z, t in zip(ZONES, tags)]
    longest = 0.0                                                # one scan, full scans included
    end = clock() + 1.0
    while clock() < end:
        start = clock()
        assert scanner.scan_once() == []
        longest = max(longest, clock() - start)
    assert longest < 0.035
    chips[1].field.take(tags[1])
    gone_at = clock()
    events = scan_for(scanner, clock, 0.5)
    assert kinds(events) == [(REMOVED, "seat2", tags[1].uid_hex)]
    assert 0.3 - longest <= events[0].t - gone_at < 0.3 + longest   # last seen up to one scan before


def test_scanner_event_times_never_decrease(table):
    backend, chips, scanner, _ = table
    events = []
    for i, chip in enumerate(chips):
        chip.field.put(VirtualTag(f"04A2B11C6F5E9{i}"), flicker=0.3, seed=i)
    events = scan_for(scanner, backend.clock, 2.0)
    assert events and [e.t for e in events] == sorted(e.t for e in events)


def test_scanner_flicker_shorter_than_absent_ms_gives_nothing_more(table):
    backend, chips, scanner, _ = table
    chips[4].field.put(VirtualTag(A), pattern=[True] * 2 + [False] * 8)   # misses ~80 ms at a time
    events = scan_for(scanner, backend.clock, 2.0)
    assert kinds(events) == [(PLACED, "prikup", A)]


def test_scanner_holds_crosstalk_until_it_settles(table, caplog):
    backend, chips, scanner, _ = table
    tag = VirtualTag(A)
    chips[0].field.put(tag)
    chips[1].field.put(tag)                                  # the neighbour's antenna sees it too
    with caplog.at_level(logging.INFO, logger="hw.scanner"):
        assert scan_for(scanner, backend.clock, 0.5) == []
    assert any("held back" in r.getMessage() for r in caplog.records)
    chips[1].field.take(tag)
    settled_at = backend.clock()
    events = scan_for(scanner, backend.clock, 0.5)
    assert kinds(events) == [(PLACED, "seat1", A)]
    assert events[0].t - settled_at >= 0.29


def test_dead_reader_reported_reset_and_recovered_while_others_scan(table, caplog):
    backend, chips, scanner, faults = table
    clock = backend.clock
    chips[2].field.put(VirtualTag(B))
    assert kinds(scanner.scan_once() + scanner.scan_once()) == [(PLACED, "seat3", B)]
    chips[2].kill(0x00)                                      # a loose wire: resets do not help
    with caplog.at_level(logging.WARNING, logger="hw.scanner"):
        scanner.scan_once()
    assert faults == [("seat3", False)]
    assert scanner.faulty() == ["seat3"]
    assert any("seat3" in r.getMessage() and "stopped answering" in r.getMessage() for r in caplog.records)
    resets_before = chips[2].hard_resets
    chips[0].field.put(VirtualTag(A))
    events = scan_for(scanner, clock, 1.0)                   # others keep working meanwhile
    assert kinds(events) == [(PLACED, "seat1", A)]           # and seat3's card is not "removed"
    assert chips[2].hard_resets > resets_before              # retried with resets, backing off
    assert chips[2].hard_resets - resets_before < 8
    chips[2].revive()
    events = scan_for(scanner, clock, 2.0)
    assert faults == [("seat3", False), ("seat3", True)]
    assert scanner.faulty() == []
    assert events == []                                      # its card is still there
    chips[2].field.clear()
    assert kinds(scan_for(scanner, clock, 0.5)) == [(REMOVED, "seat3", B)]


def test_latched_reader_is_back_after_one_reset(table):
    backend, chips, scanner, faults = table
    chips[3].kill(0xFF, until_reset=True)
    scanner.scan_once()
    assert faults == [("seat4", False), ("seat4", True)]
    chips[3].field.put(VirtualTag(A))
    assert kinds(scanner.scan_once() + scanner.scan_once()) == [(PLACED, "seat4", A)]


def test_run_until_stopped(table):
    backend, chips, scanner, _ = table
    chips[0].field.put(VirtualTag(A))
    got, stop = [], threading.Event()

    def sink(event):
        got.append(event)
        stop.set()

    worker = threading.Thread(target=scanner.run, args=(sink, stop))
    worker.start()
    worker.join(timeout=10)
    assert not worker.is_alive()
    assert kinds(got) == [(PLACED, "seat1", A)]


def test_resume_gives_a_recovered_reader_a_fresh_absence_window():
    tr = PresenceTracker(["seat1"])
    tr.observe(0, A, 0.0)
    tr.observe(0, A, 0.02)                                   # placed
    tr.resume(0, 5.0)                                        # reader was dead from 0.02 to 5.0
    assert tr.observe(0, None, 5.01) == []
    assert kinds(tr.observe(0, None, 5.31)) == [(REMOVED, "seat1", A)]


def test_run_does_not_spin_when_every_reader_is_out(table):
    backend, chips, scanner, faults = table
    for chip in chips:
        chip.kill(0x00)
    stop = threading.Event()
    worker = threading.Thread(target=scanner.run, args=(lambda e: None, stop))
    worker.start()
    stop.wait(0.3)                                           # real time; the virtual clock stands still
    stop.set()
    worker.join(timeout=10)
    assert not worker.is_alive()
    assert sorted(faults) == sorted((zone, False) for zone in ZONES)
    assert 1 <= scanner.scans <= 40                          # ~10 ms waits, not a busy loop


def test_a_card_laid_on_an_occupied_reader_is_placed_and_both_leave(table):
    """The fast path checks the known UID; the periodic full scan finds the second card."""
    backend, chips, scanner, _ = table
    clock = backend.clock
    first = chips[0].field.put(VirtualTag("04A2B11C6F5E80"))
    assert kinds(scan_for(scanner, clock, 0.2)) == [(PLACED, "seat1", first.uid_hex)]
    second = chips[0].field.put(VirtualTag("3A5F1C7E"))
    assert kinds(scan_for(scanner, clock, 0.3)) == [(PLACED, "seat1", second.uid_hex)]
    assert scanner.tracker.present()["seat1"] == {first.uid_hex, second.uid_hex}
    chips[0].field.take(first)
    assert kinds(scan_for(scanner, clock, 0.6)) == [(REMOVED, "seat1", first.uid_hex)]
    chips[0].field.take(second)
    assert kinds(scan_for(scanner, clock, 0.6)) == [(REMOVED, "seat1", second.uid_hex)]


def test_a_card_laid_on_a_leftover_card_is_table_not_clear():
    """End to end: a deal played on emulated readers; its last trick's cards stay;
    the next card laid on top of seat1's is seen (full scan) and the tracker says *table not clear*."""
    from controller.app.sim import TableSimulator, make_deck
    from controller.core.config import GameConfig
    from controller.core.tracker import TABLE_NOT_CLEAR, DealTracker

    zones = ("seat1", "seat2", "seat3", "prikup")
    backend = FakeBackend()
    chips = dict(zip(zones, (backend.add_chip(bus, dev) for bus, dev, _ in WIRING[:4])))
    from hw.rc522 import open_readers

    readers = open_readers(WIRING[:4], backend=backend)
    scanner = Scanner(list(zip(zones, readers)), absent_ms=60, clock=backend.clock)
    deck = make_deck(3)
    events = list(TableSimulator(GameConfig(), seed=3, deck=deck).deal())
    last_placed = max(i for i, e in enumerate(events) if e.event == PLACED)
    tracker = DealTracker(GameConfig(), deck)
    tags: dict[str, VirtualTag] = {}

    def happen(kind, zone, uid):
        for _ in range(200):                                   # scans until the scanner reports it
            for event in scanner.scan_once():
                signals = tracker.feed(event)
                if (event.event, event.zone, event.uid) == (kind, zone, uid):
                    return signals
        raise AssertionError(f"the scanner never reported {kind} {zone} {uid}")

    try:
        for e in events[:last_placed + 1]:
            if e.event == PLACED:
                tags[e.uid] = chips[e.zone].field.put(VirtualTag(e.uid))
            else:
                chips[e.zone].field.take(tags[e.uid])
            happen(e.event, e.zone, e.uid)
        assert tracker.records and tracker.deal is None and tracker.leftover   # the deal is over, cards lie
        again = events[1].uid                                  # a card of the first trick, laid again
        chips["seat1"].field.put(VirtualTag(again))
        signals = happen(PLACED, "seat1", again)
        assert [(s.kind, s.data.get("type")) for s in signals] == [("mistake", TABLE_NOT_CLEAR)]
    finally:
        for r in readers:
            r.close()


def test_a_scan_of_five_readers_runs_their_polls_side_by_side(table):
    """At 60 us a transfer (the emulation's default) and SPI 1 MHz: 5 empty readers <= 8 ms,
    5 cards lying still <= 12 ms, 5 cards never seen <= 18 ms -- one chip's air time filled
    with the others' SPI work (in turn, the 5 new 7-byte cards took 27 ms)."""
    backend, chips, scanner, _ = table
    clock = backend.clock

    def longest(scans, fresh=False):
        worst = 0.0
        for n in range(scans):
            if fresh:
                for i, chip in enumerate(chips):
                    chip.field.clear()
                    chip.field.put(VirtualTag(f"04A2B11C6F{n:02X}8{i}"))
            start = clock()
            scanner.scan_once()
            worst = max(worst, clock() - start)
        return worst

    assert longest(10) <= 0.008
    for i, chip in enumerate(chips):
        chip.field.put(VirtualTag(f"04A2B11C6F5E8{i}"))
    longest(3)
    assert longest(16) <= 0.012                                 # full scans for stacked cards included
    worst = longest(10, fresh=True)                             # (each replacing the card read before)
    assert worst <= 0.018, worst
    assert scanner.tracker.zones == ZONES and not scanner.faulty()
