"""The reader picture rebuilt after lost frames, tested as the pure function it is
(:mod:`firmware_bridge.reconcile`, PROTOCOL.md "Keeping the host's view true").

Frames in, table events out, time passed in: no pty, no thread, no wall clock.  The
link's own tests (``test_link*.py``) check the I/O around it on real ptys.
"""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings, strategies as st

from controller.core.clock import VirtualClock
from controller.core.events import TableEvent
from firmware_bridge.codec import Frame
from firmware_bridge.reconcile import OrderGuessed, Reconciler, SeenInGap, ShortState

ZONES = ["seat1", "seat2", "seat3", "prikup"]
A, B, C, D = "04A2B11C6F5E80", "DEADBEEF", "00112233445566778899", "CAFEF00D"


def state(*tokens: str) -> Frame:
    """A STATE frame as the codec decodes it: uids and their ``@edge_ms`` apart."""
    fields, edges = [], []
    for tok in tokens:
        uid, _, at = tok.partition("@")
        fields.append(uid)
        edges.append(int(at) if at else None)
    return Frame(0, "STATE", tuple(fields), tuple(edges) if any("@" in t for t in tokens) else ())


def seen(reader: int, uid: str) -> Frame:
    return Frame(0, "SEEN", (str(reader), uid))


def gone(reader: int, uid: str) -> Frame:
    return Frame(0, "GONE", (str(reader), uid))


def simple(out) -> list:
    return [("guessed", o.zones) if isinstance(o, OrderGuessed) else
            ("unseen", o.zone) if isinstance(o, SeenInGap) else (o.event, o.zone, o.uid) for o in out]


def ready(picture=(), first=("-", "-", "-", "-"), readers=4, zones=ZONES, clock=None):
    """A reconciler after the hub's HELLO and first STATE."""
    rec = Reconciler(zones, clock or VirtualClock(), picture)
    rec.announced(readers, rebooted=False)
    rec.state(state(*first))
    return rec


# --------------------------------------------------------------------------- small cases

def test_edges_pass_straight_through_once_a_state_has_set_the_picture():
    rec = ready()
    assert not rec.holding
    rec.edge(seen(0, A))
    rec.edge(gone(0, A))
    rec.edge(seen(3, D))
    assert simple(rec.take()) == [("placed", "seat1", A), ("removed", "seat1", A), ("placed", "prikup", D)]
    assert rec.take() == [] and rec.picture == [None, None, None, D]


def test_edges_before_the_first_state_wait_for_it():
    rec = Reconciler(ZONES, VirtualClock())
    rec.announced(4, rebooted=False)
    rec.edge(seen(1, B))
    assert rec.take() == []
    rec.state(state("-", B, "-", "-"))
    assert simple(rec.take()) == [("placed", "seat2", B)]


def test_the_first_state_reports_only_what_changed_since_the_resumed_picture():
    rec = ready(picture=[A, None, C, None], first=("-", "-", C, D))
    assert simple(rec.take()) == [("guessed", ("seat1", "prikup")), ("removed", "seat1", A),
                                  ("placed", "prikup", D)]


def test_a_gap_holds_frames_and_what_it_lost_comes_first():
    rec = ready()
    rec.gap()                                    # SEEN 0 A lost
    rec.edge(seen(1, B))
    assert rec.take() == []
    rec.state(state(f"{A}@100", f"{B}@200", "-", "-"))
    assert simple(rec.take()) == [("placed", "seat1", A), ("placed", "seat2", B)]


def test_missed_changes_follow_edge_ms_and_guess_without_it():
    rec = ready()
    rec.state(state(f"{C}@300", f"{A}@100", f"{B}@200", "-"))
    assert simple(rec.take()) == [("placed", "seat2", A), ("placed", "seat3", B), ("placed", "seat1", C)]
    rec = ready()
    rec.state(state(C, A, B, "-"))
    assert simple(rec.take()) == [("guessed", ("seat1", "seat2", "seat3")), ("placed", "seat1", C),
                                  ("placed", "seat2", A), ("placed", "seat3", B)]


def test_edge_ms_order_holds_across_the_uptime_wrap():
    rec = ready()
    rec.uptime = 2**32 - 100
    rec.state(state(f"{A}@20", f"{B}@{2**32 - 50}", f"{C}@{2**32 - 90}", "-"))
    assert simple(rec.take()) == [("placed", "seat3", C), ("placed", "seat2", B), ("placed", "seat1", A)]


def test_a_tag_lifted_and_laid_back_unheard_is_lifted_and_laid_back():
    rec = ready(first=(f"{A}@100", "-", "-", "-"))
    rec.take()
    rec.state(state(f"{A}@900", "-", "-", "-"))
    assert simple(rec.take()) == [("removed", "seat1", A), ("placed", "seat1", A)]


def test_a_replaced_tag_is_lifted_before_the_other_changes():
    rec = ready(first=(f"{A}@100", "-", "-", "-"))
    rec.take()
    rec.state(state(f"{C}@500", f"{B}@300", "-", "-"))
    assert simple(rec.take()) == [("removed", "seat1", A), ("placed", "seat2", B), ("placed", "seat1", C)]


def test_an_ignored_reader_changes_the_picture_and_makes_no_event():
    rec = ready(zones=["seat1", None, "seat2"], readers=3, first=("-", "-", "-"))
    rec.state(state(f"{A}@1", f"{B}@2", f"{C}@3"))
    assert simple(rec.take()) == [("placed", "seat1", A), ("placed", "seat2", C)]
    assert rec.picture == [A, B, C]


def test_events_are_stamped_by_the_clock_and_never_go_back():
    ticks = itertools.chain([5.0, 3.0], itertools.repeat(9.0))
    rec = ready(clock=lambda: next(ticks))
    rec.edge(seen(0, A))
    rec.edge(seen(1, B))
    rec.edge(seen(2, C))
    assert [e.t for e in rec.take()] == [5.0, 5.0, 9.0]


def test_a_reboot_forgets_edge_times_and_holds_until_its_state():
    rec = ready(first=(f"{A}@100", "-", "-", "-"))
    rec.take()
    rec.announced(4, rebooted=True)
    assert rec.holding
    rec.edge(seen(0, A))                         # a rebooted hub re-announces what lies there
    rec.state(state(f"{A}@40", "-", "-", "-"))   # a new uptime: not a lift and a re-lay
    assert rec.take() == [] and rec.picture == [A, None, None, None]


# --------------------------------------------------------------------------- nothing invented, nothing lost

@pytest.mark.parametrize("tokens", [("-", "-", "-"), (f"-@5",), ()], ids=["three", "one", "none"])
def test_a_state_with_fewer_tokens_than_readers_changes_nothing(tokens):
    """A short STATE (valid CRC) used to be padded with empty readers: it invented the
    lift of every card past its last token, and their re-lay from the next STATE."""
    rec = ready(first=(f"{A}@1", f"{B}@2", f"{C}@3", f"{D}@4"))
    rec.take()
    with pytest.raises(ShortState):
        rec.state(Frame(0, "STATE", tuple(t.partition("@")[0] for t in tokens),
                        tuple(int(t.partition("@")[2]) for t in tokens if "@" in t)))
    assert rec.take() == [] and rec.picture == [A, B, C, D]
    rec.state(state(f"{A}@1", f"{B}@2", f"{C}@3", f"{D}@4"))
    assert rec.take() == [] and rec.counters["short_states"] == 1


def test_a_card_laid_and_lifted_inside_a_gap_is_reported_as_seen_there():
    """SEEN and GONE of a card both lost: the reader is empty before and after, but its
    STATE is dated by a newer edge.  The card cannot be known; that one lay there is said."""
    rec = ready(first=("-@100", "-", "-", "-"))
    rec.take()
    rec.gap()
    rec.state(state("-@700", "-", "-", "-"))
    assert simple(rec.take()) == [("unseen", "seat1")]
    assert rec.counters["seen_in_gap"] == 1 and rec.picture == [None] * 4
    rec.state(state("-@700", "-", "-", "-"))     # said once
    assert rec.take() == []


def test_a_card_laid_and_lifted_unheard_without_a_gap_frame_is_reported_too():
    rec = ready(first=("-", "-", f"-@100", "-"))
    rec.state(state("-", "-", "-@900", "-"))
    assert simple(rec.take()) == [("unseen", "seat3")]


def test_an_empty_reader_whose_lift_was_heard_is_not_reported():
    rec = ready(first=(f"{A}@100", "-", "-", "-"))
    rec.take()
    rec.edge(gone(0, A))                         # heard: the next STATE dates it
    rec.state(state("-@400", "-", "-", "-"))
    assert simple(rec.take()) == [("removed", "seat1", A)]


# --------------------------------------------------------------------------- fuzzed

def hub_history(draw_steps, rng_bits, readers=3):
    """A hub's frames for random moves, STATEs sprinkled in, and the true edges."""
    truth: list = [None] * readers
    frames, edges = [], []
    fresh = itertools.count()
    for (reader, state_after), bit in zip(draw_steps, rng_bits):
        reader %= readers
        if truth[reader] is None:
            uid = "%08X" % (0xA0000000 + next(fresh))
            frames.append(("SEEN", reader, uid))
            edges.append(("placed", reader, uid))
            truth[reader] = uid
        else:
            frames.append(("GONE", reader, truth[reader]))
            edges.append(("removed", reader, truth[reader]))
            truth[reader] = None
            if bit:                                   # a swap: another tag laid at once
                uid = "%08X" % (0xA0000000 + next(fresh))
                frames.append(("SEEN", reader, uid))
                edges.append(("placed", reader, uid))
                truth[reader] = uid
        if state_after:
            frames.append(("STATE",) + tuple(u or "-" for u in truth))
    frames.append(("STATE",) + tuple(u or "-" for u in truth))
    return frames, edges, truth


def drive(frames, lost):
    """Feed the frames not ``lost``, telling the reconciler of each gap as the link would."""
    zones = ["seat1", "seat2", "seat3"]
    rec = Reconciler(zones, VirtualClock())
    rec.announced(3, rebooted=False)
    rec.state(Frame(1, "STATE", ("-", "-", "-")))
    out = []
    previous_lost = False
    for frame, gone_ in zip(frames, lost):
        if gone_:
            previous_lost = True
            continue
        if previous_lost:
            rec.gap()
            previous_lost = False
        fields = tuple(str(f) for f in frame[1:])
        if frame[0] == "STATE":
            rec.state(Frame(0, "STATE", fields))
        else:
            rec.edge(Frame(0, frame[0], fields))
        out += rec.take()
    return [(e.event, zones.index(e.zone), e.uid) for e in out if isinstance(e, TableEvent)], rec.picture


steps = st.lists(st.tuples(st.integers(0, 2), st.booleans()), min_size=1, max_size=25)


@settings(max_examples=300, deadline=None)
@given(steps, st.data())
def test_fuzz_picture_always_converges_and_every_event_is_well_formed(moves, data):
    frames, edges, truth = hub_history(moves, data.draw(st.lists(st.booleans(), min_size=len(moves),
                                                                 max_size=len(moves))))
    lost = data.draw(st.lists(st.booleans(), min_size=len(frames) - 1, max_size=len(frames) - 1)) + [False]
    events, picture = drive(frames, lost)
    assert picture == truth
    shown: list = [None] * 3
    for kind, reader, uid in events:              # replaying the events gives a consistent table
        if kind == "placed":
            assert shown[reader] is None
            shown[reader] = uid
        else:
            assert shown[reader] == uid
            shown[reader] = None
    assert shown == truth
    if not any(lost):
        assert events == edges


@settings(max_examples=300, deadline=None)
@given(steps, st.data())
def test_fuzz_one_gap_per_state_keeps_the_exact_order(moves, data):
    """Between two STATEs the host receives, one run of lost frames holding at most
    one edge: the event stream is exactly the hub's.  (Two gaps, or two lost edges
    on different readers, leave an order no STATE can tell.)"""
    frames, edges, truth = hub_history(moves, data.draw(st.lists(st.booleans(), min_size=len(moves),
                                                                 max_size=len(moves))))
    lost = data.draw(st.lists(st.booleans(), min_size=len(frames) - 1, max_size=len(frames) - 1)) + [False]
    runs = edges_lost = 0                         # since the last delivered STATE
    for i, frame in enumerate(frames):
        if not lost[i]:
            if frame[0] == "STATE":
                runs = edges_lost = 0
            continue
        new_run = i == 0 or not lost[i - 1]
        edge = frame[0] != "STATE"
        if (new_run and runs) or (edge and edges_lost):
            lost[i] = False
            continue
        runs += new_run
        edges_lost += edge
    events, picture = drive(frames, lost)
    assert picture == truth
    assert events == edges


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.booleans()), min_size=1, max_size=30), st.data())
def test_fuzz_with_edge_ms_every_lost_card_is_found_in_time_order(moves, data):
    """A hub that dates every edge (uptime ms): whatever is lost, the picture ends true,
    a reader empty before and after a lost lay is said to have held a card, and a
    reader whose tag changed unheard gets the right events."""
    truth: list = [None] * 4
    dated: list = [None] * 4
    fresh = itertools.count()
    rec = ready()
    now = 1000
    out = []
    for reader, lose in moves:
        now += 10
        old = truth[reader]
        uid = None if old is not None else "%08X" % (0xB0000000 + next(fresh))
        truth[reader], dated[reader] = uid, now
        if lose:
            rec.gap()                            # noticed at the next frame that arrives
        else:
            rec.edge(seen(reader, uid) if uid else gone(reader, old))
        if data.draw(st.booleans()):
            rec.state(state(*[f"{u or '-'}@{t}" if t else (u or "-") for u, t in zip(truth, dated)]))
        out += rec.take()
    rec.state(state(*[f"{u or '-'}@{t}" if t else (u or "-") for u, t in zip(truth, dated)]))
    out += rec.take()
    assert rec.picture == truth
    shown: list = [None] * 4
    for o in out:
        if isinstance(o, TableEvent):
            r = ZONES.index(o.zone)
            assert shown[r] == (None if o.event == "placed" else o.uid)
            shown[r] = o.uid if o.event == "placed" else None
    assert shown == truth
