"""A `confirm` pressed while a guessed card lies in the open trick (PROTOCOL.md: the table
"waits for `confirm` before it counts the trick; it never guesses silently").

The table shows ``order? confirm`` as soon as a card comes in a guessed order, before
its trick is whole; a player who presses `confirm` then has looked at the order shown
so far and accepted it: those cards are no longer guessed, and their trick counts when
it is whole, without a second confirm.  A card found guessed after that confirm shows
the prompt again and holds its trick as before.  Whatever the order of cards and
presses, a trick the table holds for `confirm` always has its prompt: an
``order_guessed`` alert in the snapshot, ``order? confirm`` on the display.
"""

from __future__ import annotations

import pytest

from controller.core.cards import parse_card
from controller.core.events import BUTTON, PLACED, REMOVED, TableEvent
from controller.core.signals import MAX_ALERTS
from controller.core.snapshot import SnapshotBuilder
from controller.core.tracker import DealTracker

from table_script import DEAL_A, config

PROMPT = "order? confirm"


class Table:
    """A tracker fed one event at a time; after each event the snapshot is checked: a held
    trick never waits without its prompt."""

    def __init__(self):
        self.tracker = DealTracker(config())
        self.builder = SnapshotBuilder()
        self.t = 0.0
        self.signals = []

    def feed(self, event_kind: str, zone: str | None = None, card: str | None = None,
             guessed: bool = False, button: str | None = None) -> list:
        self.t += 1
        if event_kind == BUTTON:
            event = TableEvent(self.t, BUTTON, button=button)
        else:
            event = TableEvent(self.t, event_kind, zone, card=parse_card(card), guessed=guessed)
        out = self.tracker.feed(event)
        self.signals += out
        self.check_prompt()
        return out

    def lay(self, play: str, guessed: bool = False) -> list:
        zone, card = play.split(":")
        return self.feed(PLACED, zone, card, guessed)

    def lift(self, play: str) -> list:
        zone, card = play.split(":")
        return self.feed(REMOVED, zone, card)

    def press(self, button: str = "confirm") -> list:
        return self.feed(BUTTON, button=button)

    def snapshot(self):
        return self.builder.build(self.tracker, seq=int(self.t))

    def asks(self) -> bool:
        """What a player at the table sees: the display asks for `confirm`."""
        return PROMPT in self.snapshot().display[-1]

    def check_prompt(self) -> None:
        if self.tracker.state == "held":
            snap = self.snapshot()
            assert any(a["type"] == "order_guessed" for a in snap.alerts), "a held trick with no prompt"
            assert PROMPT in snap.display[-1]


def _clean_summary() -> dict:
    tracker = DealTracker(config())
    for trick in DEAL_A:
        for play in trick:
            zone, card = play.split(":")
            tracker.feed(TableEvent(1.0, PLACED, zone, card=parse_card(card)))
        for play in trick:
            zone, card = play.split(":")
            tracker.feed(TableEvent(1.0, REMOVED, zone, card=parse_card(card)))
    return tracker.summary()


def test_a_confirm_before_the_trick_is_whole_accepts_the_order_and_the_trick_counts():
    table = Table()
    first = DEAL_A[0]
    laid = table.lay(first[0], guessed=True)
    assert [s.data.get("type") for s in laid if s.kind == "mistake"] == ["order_guessed"]
    assert table.asks()
    pressed = table.press()
    assert [s.kind for s in pressed] == ["confirm"]           # nothing to count yet: the trick is open
    assert not table.tracker.alerts and table.tracker.state == "play"
    table.lay(first[1])
    table.lay(first[2])
    whole = table.lay(first[3])
    tricks = [s.data for s in whole if s.kind == "trick"]
    assert len(tricks) == 1 and tricks[0]["number"] == 1 and tricks[0]["winner"] == "seat3"
    assert table.tracker.state == "play" and table.tracker.held is None
    assert table.tracker.deal.expected == DEAL_A[1][0].split(":")[0]   # the next lead is expected
    assert table.snapshot().display[-1] == "turn: prikup"
    for play in first:
        table.lift(play)
    played = table.lay(DEAL_A[1][0])                           # and taken, without another confirm
    assert [s.kind for s in played] == ["play"]


def test_a_card_guessed_after_the_early_confirm_holds_its_trick_with_the_prompt():
    table = Table()
    first = DEAL_A[0]
    table.lay(first[0], guessed=True)
    table.press()
    table.lay(first[1])
    again = table.lay(first[2], guessed=True)                # found guessed after the confirm
    assert [s.data.get("type") for s in again if s.kind == "mistake"] == ["order_guessed"]
    whole = table.lay(first[3])
    assert "trick" not in [s.kind for s in whole]
    assert table.tracker.state == "held" and table.asks()
    counted = table.press()
    assert [s.kind for s in counted] == ["confirm", "trick"]
    assert table.tracker.state == "play" and not table.tracker.alerts


def test_a_confirm_with_nothing_guessed_and_nothing_held_changes_nothing():
    table = Table()
    table.lay(DEAL_A[0][0])
    table.lay(DEAL_A[0][1])
    before = (table.tracker.state, list(table.tracker.deal.lines), table.snapshot().display)
    assert [s.kind for s in table.press()] == ["confirm"]
    assert (table.tracker.state, list(table.tracker.deal.lines), table.snapshot().display) == before
    whole = table.lay(DEAL_A[0][2]) + table.lay(DEAL_A[0][3])
    assert [s.kind for s in whole] == ["play", "play", "trick"]


def test_a_guessed_card_taken_back_after_an_early_confirm_is_laid_again_as_any_card():
    """`undo` takes back the accepted card; laid again by a plain event it is a card like any
    other: its trick counts when whole (the early confirm accepted what it showed)."""
    table = Table()
    first = DEAL_A[0]
    table.lay(first[0])
    table.lay(first[1])
    table.lay(first[2], guessed=True)
    table.press()
    undone = table.press("undo")
    assert [s.kind for s in undone] == ["undo"] and len(table.tracker.deal.current) == 2
    table.lift(first[2])
    table.lay(first[2])
    whole = table.lay(first[3])
    assert [s.kind for s in whole] == ["play", "trick"] and table.tracker.state == "play"


def test_undo_after_a_held_trick_was_confirmed_reopens_it_and_it_counts_when_whole_again():
    """The confirm accepted the trick's order; `undo` takes its last card back as ever, and
    the card laid again closes the trick, counted (the table held it again before, unasked)."""
    table = Table()
    first = DEAL_A[0]
    for play in first:
        table.lay(play, guessed=True)
    assert [s.kind for s in table.press()] == ["confirm", "trick"]
    assert [s.kind for s in table.press("undo")] == ["undo"]
    assert table.tracker.state == "play" and len(table.tracker.deal.current) == 3
    table.lift(first[-1])
    again = table.lay(first[-1])
    assert [s.kind for s in again] == ["play", "trick"] and table.tracker.state == "play"


def test_a_held_trick_keeps_its_prompt_among_more_mistakes_than_the_table_shows():
    """The alerts keep only the latest few; while a trick waits for `confirm`, the prompt of
    its guessed order is never the one dropped."""
    table = Table()
    first = DEAL_A[0]
    table.lay(first[0], guessed=True)
    for play in first[1:]:
        table.lay(play)
    assert table.tracker.state == "held"
    for i in range(MAX_ALERTS + 2):                 # unknown tags: each a distinct mistake
        table.t += 1
        table.tracker.feed(TableEvent(table.t, PLACED, "seat1", uid=f"FF{i:02d}"))
        assert len(table.tracker.alerts) <= MAX_ALERTS
        assert any(a["type"] == "order_guessed" for a in table.tracker.alerts)
    assert [s.kind for s in table.press()] == ["confirm", "trick"]


# --- a player who presses confirm whenever the display asks, at any card of the trick ---

def _patterns():
    """Which cards of each trick come guessed: one pattern per trick position, two cards,
    every card; the laying order is the play order."""
    sizes = [len(trick) for trick in DEAL_A]
    yield "first", [{0} for _ in sizes]
    yield "second", [{1} for _ in sizes]
    yield "last", [{n - 1} for n in sizes]
    yield "first and last", [{0, n - 1} for n in sizes]
    yield "every card", [set(range(n)) for n in sizes]
    yield "a different card each trick", [{i % n} for i, n in enumerate(sizes)]


@pytest.mark.parametrize("name,guessed", list(_patterns()), ids=[name for name, _ in _patterns()])
def test_a_player_who_confirms_when_asked_plays_the_deal_to_its_end(name, guessed):
    table = Table()
    for number, (trick, marks) in enumerate(zip(DEAL_A, guessed), 1):
        for i, play in enumerate(trick):
            table.lay(play, guessed=i in marks)
            if table.asks():
                table.press()
        assert len(table.tracker.records) == 1 or len(table.tracker.deal.tricks) == number, \
            f"trick {number} not counted (state {table.tracker.state})"
        for play in trick:
            table.lift(play)
    assert table.tracker.state == "idle" and len(table.tracker.records) == 1
    assert table.tracker.summary() == _clean_summary()


def test_cards_found_in_reader_order_with_a_confirm_at_every_prompt_play_the_deal_out():
    """All of a trick's cards found at once in reader order (the link with no ``edge_ms``):
    cards before their turn wait; the player confirms each time the display asks."""
    table = Table()
    for trick in DEAL_A:
        for play in sorted(trick, key=lambda p: table.tracker.zones.index(p.split(":")[0])):
            table.lay(play, guessed=True)
            if table.asks():
                table.press()
        if table.asks():
            table.press()
        for play in trick:
            table.lift(play)
    assert table.tracker.state == "idle" and table.tracker.summary() == _clean_summary()


@pytest.mark.parametrize("names,row", [({}, "!prik order? confirm"),
                                       ({"seat1": "Alice"}, "!Alic order? confirm")])
def test_the_prompt_is_shown_whole_the_zone_name_shortened_to_make_room(names, row):
    from controller.core.view import indications

    tracker = DealTracker(config())
    zone = "prikup" if not names else "seat1"
    tracker.alerts.append({"type": "order_guessed", "zone": zone, "card": "7♠"})
    assert indications(tracker, names).lines[-1] == row
    tracker.alerts[-1] = {"type": "out_of_turn", "zone": "seat3", "card": "7♠"}
    assert indications(tracker).lines[-1] == "!P3 not your turn"          # a row that fits: as it was


def test_a_table_event_file_with_an_early_confirm_replays_to_what_the_table_said(tmp_path):
    """The game is its table events: replayed from the file, the same signals and summary."""
    import json

    from controller.store.replay import replay_file

    table = Table()
    events = []
    original_feed = table.tracker.feed

    def feed(event):
        events.append(event)
        return original_feed(event)

    table.tracker.feed = feed
    for number, trick in enumerate(DEAL_A):
        for i, play in enumerate(trick):
            table.lay(play, guessed=i == number % len(trick))
            if table.asks():
                table.press()
        for play in trick:
            table.lift(play)
    path = tmp_path / "table.jsonl"
    path.write_text("".join(json.dumps(e.to_dict()) + "\n" for e in events))
    said = []
    replayed = replay_file(path, config(), on_signals=lambda n, signals: said.extend(signals))
    assert said == table.signals and replayed.summary() == table.tracker.summary() == _clean_summary()
