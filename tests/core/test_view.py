"""What the table shows is a pure function of the tracker's state."""

from controller.app.outputs import HUB_COLOURS
from controller.core.cards import ascii_text
from controller.core.view import DISPLAY_COLS, DISPLAY_ROWS, ERROR, OFF, TURN, WINNER, indications
from table_script import DEAL_A, Script, config
from conftest import eventually


def shown(s, names=None):
    ind = indications(s.tracker, names)
    assert len(ind.lines) == DISPLAY_ROWS and all(len(line) <= DISPLAY_COLS for line in ind.lines)
    return ind


def test_turn_led_and_the_open_trick_on_the_display():
    s = Script()
    s.lay("prikup", "7s")
    ind = shown(s, {"seat2": "Boris"})
    assert ind.leds == {"seat1": OFF, "seat2": TURN, "seat3": OFF}
    assert ind.lines[0].startswith("#1 P1 x1 T1")
    assert ind.lines[2] == "7\u2660"
    assert ind.lines[3] == "turn: Boris"


def test_winner_blinks_until_the_next_card_and_counts_show():
    s = Script()
    s.trick(*DEAL_A[0], clear=False)
    ind = shown(s)
    assert ind.leds["seat3"] == WINNER                       # took trick 1; the prikup leads next
    assert "P3:1" in ind.lines[1]
    assert ind.lines[2].startswith("<7\u2660 8\u2660 A\u2660 9\u2660>")   # only the last trick is shown
    s.lay("prikup", "Ah")
    assert shown(s).leds["seat3"] == OFF


def test_mistake_shows_error_pattern_until_confirm():
    s = Script()
    s.lay("prikup", "7s")
    s.lay("seat3", "As")
    ind = shown(s)
    assert ind.leds["seat3"] == ERROR and ind.leds["seat2"] == TURN
    assert ind.lines[3] == "!P3 not your turn"
    s.press("confirm")
    ind = shown(s)
    assert ind.leds["seat3"] == OFF and ind.lines[3].startswith("turn:")


def test_pulka_between_deals_and_the_next_dealer():
    s = Script()
    s.deal(DEAL_A)
    ind = shown(s)
    assert ind.lines[:3] == ("P1    P  0 G   3", "P2    P  0 G   3", "P3    P  0 G   4")
    assert ind.lines[3] == "next: P1 x2"
    assert set(ind.leds.values()) == {OFF}


def test_four_players_pulka_fills_the_display():
    s = Script(config(players=4))
    ind = shown(s)
    assert [line[:2] for line in ind.lines] == ["P1", "P2", "P3", "P4"]


def test_same_state_same_picture():
    a, b = Script(), Script()
    for s in (a, b):
        s.trick(*DEAL_A[0], clear=False)
        s.lay("seat1", "Ks")
    assert indications(a.tracker) == indications(b.tracker)


def test_hub_rendering_is_printable_ascii():
    assert ascii_text("7\u2660 10\u2665 $*\u00e9") == "7s 10h ???"
    assert HUB_COLOURS[OFF] == "000000"


def test_gpio_outputs_drive_the_fake_rpi_gpio():
    from hw.pins import MockFactory

    from controller.app.outputs import GpioOutputs
    from controller.core.view import Indications

    factory = MockFactory()
    out = GpioOutputs(factory, {"seat1": 5, "seat2": 6, "seat3": 13}, buzzer=19)
    out.show(Indications(leds={"seat1": TURN, "seat2": OFF, "seat3": ERROR}, beep_ms=300), now=100.0)
    fake = factory.fake
    assert fake.level(5) and not fake.level(6) and fake.level(19)
    out.tick(100.4)                                   # the buzzer stops, the turn LED stays lit
    assert fake.level(5) and not fake.level(19)
    levels = set()
    for step in range(20):                            # the error pattern flashes
        out.tick(100.0 + step * 0.05)
        levels.add(fake.level(13))
    assert levels == {True, False}
    out.close()


def test_hub_outputs_reach_the_emulated_hub():
    import time

    from firmware_bridge.emulator import HubEmulator
    from firmware_bridge.link import HubLink

    from controller.app.outputs import HubOutputs
    from controller.core.view import Indications

    emu = HubEmulator(readers=4)
    link = HubLink(emu.open_pty(), ["seat1", "seat2", "seat3", "prikup"], lambda e: None)
    link.start()
    try:
        assert link.wait_ready(5)
        out = HubOutputs(link, ("seat1", "seat2", "seat3"))
        out.show(Indications(leds={"seat1": OFF, "seat2": TURN, "seat3": WINNER},
                             lines=("#1 P1 x1 T2", "", "7\u2660 8\u2660", "turn: P2"), beep_ms=0), 0.0)
        eventually(lambda: len(emu.leds) >= 3 and len(emu.text_rows) >= 4, timeout=3)
        assert emu.leds == {0: "000000", 1: HUB_COLOURS[TURN], 2: HUB_COLOURS[WINNER]}
        assert emu.text_rows[2] == "7s 8s" and emu.text_rows[0] == "#1 P1 x1 T2"
        sent = len(emu.received)
        out.show(Indications(leds={"seat1": OFF, "seat2": TURN, "seat3": WINNER},
                             lines=("#1 P1 x1 T2", "", "7\u2660 8\u2660", "turn: P2")), 0.1)
        time.sleep(0.2)
        assert len([f for f in emu.received[sent:] if f.verb in ("LED", "TEXT")]) == 0   # nothing changed
    finally:
        link.stop()
        emu.close()


def test_the_phases_of_a_contract_deal_on_the_display():
    s = Script(config(bidding=True))
    s.bid("seat2", "6s")
    ind = shown(s)
    assert ind.leds["seat3"] == TURN and "AUCTION" in ind.lines[0]
    assert ind.lines[1] == "beat 6\u2660 P2" and ind.lines[3] == "bid: P3"
    s.bids("seat3:pass", "seat1:pass")
    ind = shown(s)
    assert "CONTRACT" in ind.lines[0] and ind.leds["seat2"] == TURN and ind.lines[3] == "game: P2"
    s.contract("seat2", "7h")
    ind = shown(s)
    assert ind.lines[1] == "P2 7\u2665" and ind.lines[3] == "whist? P3" and ind.leds["seat3"] == TURN
    s.whists("seat3:whist", "seat1:pass")
    s.trick("seat2:Ah", "seat3:7h", "seat1:8h")
    ind = shown(s)
    assert ind.lines[0].startswith("#1 P2 7\u2665 T2")
    assert ind.lines[1] == "P2:1/7 P3:0/2"              # tricks against the contract and the obligation
    assert ind.leds["seat2"] == WINNER


def test_a_refused_call_shows_on_the_callers_led():
    s = Script(config(bidding=True))
    s.bid("seat3", "6s")
    ind = shown(s)
    assert ind.leds["seat3"] == ERROR and ind.lines[-1] == "!P3 call not allowed"


def test_the_snapshot_carries_the_contract_phase():
    import json
    from controller.core.snapshot import SnapshotBuilder
    s = Script(config(bidding=True))
    s.bids("seat2:6s", "seat3:pass")
    snap = SnapshotBuilder().build(s.tracker, seq=2)
    assert snap.phase == "auction" and snap.deal["turn"] == "seat1"
    assert snap.deal["bid_to_beat"] == {"seat": "seat2", "bid": "6s"}
    s.bids("seat1:pass")
    s.contract("seat2", "7h")
    s.whists("seat3:whist")
    snap = SnapshotBuilder().build(s.tracker, seq=6)
    assert snap.phase == "whisting" and snap.deal["turn"] == "seat1" and snap.deal["trump"] == "h"
    assert snap.deal["needs"] == {"declarer": 7, "whisters": 2}
    json.dumps(snap.to_dict())
    plain = SnapshotBuilder().build(Script().tracker, seq=0)
    assert plain.phase == "idle"
