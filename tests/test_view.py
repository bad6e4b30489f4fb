"""What the table shows is a pure function of the tracker's state."""

from controller.outputs import HUB_COLOURS, ascii_text
from controller.view import DISPLAY_COLS, DISPLAY_ROWS, ERROR, OFF, TURN, WINNER, indications
from table_script import DEAL_A, Script, config


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
