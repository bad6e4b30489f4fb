"""Lost edges the fault soak (tests/app/test_hub_fault_soak.py) found the link misplacing.

PROTOCOL.md "Keeping the host's view true": what a gap lost happened before the
frame that revealed the gap, and the host's picture must end true.  Each case is
a raw hub driven frame by frame, so the exact order of the table events is known.
"""

from __future__ import annotations

from contextlib import contextmanager

from firmware_bridge.link import HubLink

from test_link import FAST_LINK, ZONES, A, B, C, D, RawHub, raw_ordered_rig, wait_for


@contextmanager
def resumed_rig(picture):
    """A link that starts from a resumed game's picture, before the hub's HELLO."""
    hub = RawHub()
    log: list = []
    link = HubLink(hub.path, ZONES, lambda e: log.append((e.event, e.zone, e.uid)),
                   on_order_guessed=lambda zones: log.append(("guessed", zones)),
                   picture=picture, **dict(FAST_LINK, hb_timeout=60))
    link.start()
    try:
        hub.wait_host("HELLO")
        hub.send("HELLO", 1, "raw-1", "0000CAFE", 4)
        hub.wait_host("SNAP")
        yield hub, link, log
    finally:
        link.stop()
        hub.close()


def test_an_edge_lost_after_frames_held_since_the_connect_comes_before_the_frame_after_the_gap():
    # held since the connect (no gap yet): GONE of A; then SEEN 0 C is lost; SEEN 1 B reveals it
    with resumed_rig([A, None, None, None]) as (hub, link, log):
        hub.send("GONE", 0, A)
        hub.seq += 1
        hub.send("SEEN", 1, B)
        hub.send("STATE", f"{C}@300", f"{B}@400", "-", "-")
        assert wait_for(lambda: len(log) == 3)
        assert log == [("removed", "seat1", A), ("placed", "seat1", C), ("placed", "seat2", B)]


def test_a_resumed_picture_hears_of_a_card_lifted_meanwhile_and_not_of_one_still_lying():
    with resumed_rig([A, B, None, None]) as (hub, link, log):
        hub.send("STATE", "-@50", f"{B}@20", "-", "-")
        assert wait_for(lambda: link.ready and link.picture() == [None, B, None, None])
        assert log == [("removed", "seat1", A)]


def test_a_tag_lifted_and_laid_back_inside_a_gap_is_lifted_and_laid_back():
    with raw_ordered_rig() as (hub, link, log):
        hub.send("STATE", f"{A}@100", "-", "-", "-")
        assert wait_for(lambda: len(log) == 1)
        hub.seq += 3                        # GONE 0 A, SEEN 1 B, SEEN 0 A lost: same uid, newer edge
        hub.send("STATE", f"{A}@200", f"{B}@150", "-", "-")
        assert wait_for(lambda: len(log) == 4)
        assert log[1:] == [("placed", "seat2", B), ("removed", "seat1", A), ("placed", "seat1", A)]
        hub.send("STATE", f"{A}@200", f"{B}@150", "-", "-")      # the same STATE again: nothing new
        hub.send("SEEN", 2, C)
        assert wait_for(lambda: len(log) == 5)
        assert log[4] == ("placed", "seat3", C)


def test_edges_lost_in_two_gaps_around_a_held_frame_keep_their_time_order():
    # the fault soak's seed 1: SEEN-only losses, the GONE between them passes
    with raw_ordered_rig() as (hub, link, log):
        hub.send("STATE", "-", "-", f"{C}@50", "-")
        assert wait_for(lambda: len(log) == 1)
        hub.seq += 1                        # SEEN 1 B lost (t 100)
        hub.send("GONE", 2, C)              # reveals the gap: held (t 200)
        hub.seq += 2                        # SEEN 2 D lost (t 300), SEEN 0 A lost (t 400)
        hub.send("STATE", f"{A}@400", f"{B}@100", f"{D}@300", "-")
        assert wait_for(lambda: len(log) == 5)
        assert log[1:] == [("placed", "seat2", B), ("removed", "seat3", C), ("placed", "seat3", D),
                           ("placed", "seat1", A)]


def test_an_edge_lost_after_a_held_frame_the_state_dates_comes_after_it():
    with raw_ordered_rig() as (hub, link, log):
        hub.seq += 1                        # SEEN 0 A lost (t 100)
        hub.send("SEEN", 1, B)              # reveals the gap: held (t 200, the STATE says)
        hub.seq += 1                        # SEEN 2 C lost (t 300)
        hub.send("STATE", f"{A}@100", f"{B}@200", f"{C}@300", "-")
        assert wait_for(lambda: len(log) == 3)
        assert log == [("placed", "seat1", A), ("placed", "seat2", B), ("placed", "seat3", C)]


def test_a_tag_replaced_unheard_is_lifted_before_the_other_changes():
    # a deal's last cards lifted, the next deal's first laid: the STATE dates only the SEENs
    with raw_ordered_rig() as (hub, link, log):
        hub.send("STATE", f"{A}@10", f"{B}@20", "-", "-")
        assert wait_for(lambda: len(log) == 2)
        hub.seq += 4                        # GONE 0 A, GONE 1 B, SEEN 3 D, SEEN 0 C lost
        hub.send("STATE", f"{C}@400", "-@200", "-", f"{D}@300")
        assert wait_for(lambda: len(log) == 6)
        assert log[2:] == [("removed", "seat1", A), ("removed", "seat2", B), ("placed", "prikup", D),
                           ("placed", "seat1", C)]


def test_a_guess_applies_every_lift_first_and_the_laid_tags_by_their_edge_ms():
    # the soak's restart at a deal's end (seed 18 under load): the last trick lifted, the next
    # deal's first card laid; a lift whose time no STATE tells makes the order a guess (said),
    # but every lift -- a replaced tag's too -- comes before the tags laid, and those go by edge_ms
    E = "0A0B0C0D"
    with raw_ordered_rig() as (hub, link, log):
        hub.send("STATE", f"{A}@10", f"{B}@20", "-", "-")
        assert wait_for(lambda: len(log) == 2)
        hub.seq += 4                        # GONE 0 A, GONE 1 B, SEEN 3 E (t 300), SEEN 1 C (t 400) lost
        hub.send("SEEN", 0, D)              # reveals the gap: held (t 500)
        hub.send("STATE", f"{D}@500", f"{C}@400", "-", f"{E}@300")
        assert wait_for(lambda: len(log) == 8)
        assert log[2] == ("guessed", ("seat1", "prikup", "seat2"))
        assert sorted(log[3:5]) == [("removed", "seat1", A), ("removed", "seat2", B)]
        assert log[5:] == [("placed", "prikup", E), ("placed", "seat2", C), ("placed", "seat1", D)]
