"""What the table shows: a pure function of the game state.

Output drivers (``hw`` GPIO LEDs and serial display, the hub's LED/TEXT/BEEP
commands, the terminal view) only render an :class:`Indications`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

from .cards import STRAIN_SYMBOLS

# LED modes of a seat's indicator.
OFF = "off"
TURN = "turn"        # steady: this seat is to play
WINNER = "winner"    # blinking: this seat took the last trick
ERROR = "error"      # error pattern: a mistake by this seat awaits `confirm`
LED_MODES = (OFF, TURN, WINNER, ERROR)

DISPLAY_ROWS = 4
DISPLAY_COLS = 20


@dataclass(frozen=True)
class Indications:
    """Everything the table shows at one moment."""

    leds: Mapping[str, str] = field(default_factory=dict)   # zone -> LED mode
    lines: tuple[str, ...] = ("",) * DISPLAY_ROWS            # display rows, <= 20 chars each
    beep_ms: int = 0                                         # sound the buzzer this long (0: silent)


# --- the pure function: tracker state -> what the table shows ---------------------

_MISTAKE_TEXT = {
    "out_of_turn": "not your turn",
    "same_card": "card already played",
    "unknown_tag": "unknown tag",
    "table_not_clear": "clear the table",
    "revoke": "REVOKE",
    "order_guessed": "order? confirm",
    "invalid_control": "call not allowed",
    "not_in_play": "card not in play",
}


def _short(name: str) -> str:
    return name[:5]


def _cards(cards) -> str:
    return " ".join(card.pretty for _, card in cards)


def score_text(value, places: int | None = None) -> str:
    """A score as players write it: ``6`` where whole, else a decimal -- to ``places``
    decimals with the trailing zeros dropped (``2.5``, ``-12.33``: the pulka report), or
    without ``places`` in Python's shortest general form (``12.3333``: the board and the
    terminal).  The one number formatter of the outputs; a ``Fraction`` is written as the
    FORMATS.md number it stands for."""
    if places is None:
        from .scoring import number
        value = number(value)
        return f"{value:g}" if isinstance(value, float) else str(value)
    value = float(value)
    if value.is_integer():
        return str(int(value))
    return f"{value:.{places}f}".rstrip("0").rstrip(".")


def game_text(game: str | None) -> str:
    """``7h`` -> ``7♥``, ``6n`` -> ``6NT``, ``misere`` -> ``MIS``."""
    if game is None:
        return "?"
    if game == "misere":
        return "MIS"
    return game[:-1] + STRAIN_SYMBOLS[game[-1]]


_CALL_TEXT = {"pass": "-", "whist": "W", "half": "1/2"}


def _calls_text(calls, label) -> str:
    """The last three calls: ``P2:6♠ P3:- P1:7♣``."""
    return " ".join(f"{label[seat][:2]}:{_CALL_TEXT.get(value) or game_text(value)}" for seat, value in calls[-3:])


def _bidding_lines(tracker, deal, label, leds) -> list[str] | None:
    """The display rows of a deal with ``rules.bidding`` outside its play (auction, contract,
    whisting), or None in play; the seat to call gets the TURN LED."""
    b = deal.bidding
    phase = tracker.phase
    head = f"#{deal.number} {label[deal.dealer]} x{deal.price}"
    if phase == "auction":
        turn = b.auction.turn
        top = b.auction.highest
        leds[turn] = TURN
        beat = f"beat {game_text(top[1])} {label[top[0]]}" if top else "no bid yet"
        return [head + " AUCTION", beat, _calls_text(b.auction.calls, label), f"bid: {label[turn]}"]
    if phase == "contract":
        leds[b.declarer] = TURN
        return [head + " CONTRACT", f"{label[b.declarer]} won {game_text(b.winning_bid)}", "",
                f"game: {label[b.declarer]}"]
    if phase == "whisting":
        turn = b.whisting.turn
        leds[turn] = TURN
        return [head + " WHIST", f"{label[b.declarer]} {game_text(b.game)}",
                _calls_text(b.whisting.calls, label), f"whist? {label[turn]}"]
    if phase == "claim":
        # the rest of the tricks agreed without play: the players confirm (or undo withdraws it)
        claim = " ".join(f"{label[seat][:3]}:{count}" for seat, count in deal.claim)
        return [head + " CLAIM", f"{label[b.declarer]} {game_text(b.game)} T{len(deal.tricks)}",
                claim, "confirm or undo"]
    return None


def _contract_counts(deal, label) -> str:
    """Tricks against the contract: the declarer's of the level, the defence's of its obligation."""
    from .contract_scoring import obligation
    b = deal.bidding
    taken = deal.taken
    declarer = b.declarer
    mine = taken[declarer]
    theirs = sum(taken[s] for s in deal.defenders)
    if b.game == "misere":
        return f"{label[declarer][:3]}:{mine}/0 MIS"
    need = obligation(b.game, deal.rules)
    whist = "".join(label[w][:2] for w in deal.whisters)
    return f"{label[declarer][:3]}:{mine}/{b.game[:-1]} {whist}:{theirs}/{need}"


def indications(tracker, names: Mapping[str, str] | None = None, beep_ms: int = 0,
                notice: str = "", alarm: str = "") -> Indications:
    """What the LEDs and the display show for the tracker's state (no I/O, no clock).

    LEDs: the seat to play is steady; the winner of the last trick blinks until
    the next card; a seat with a mistake awaiting ``confirm`` shows the error
    pattern.  The display shows the deal in progress (dealer, price, trick
    counts, the cards of the open trick or the last closed trick, whose turn)
    and the pulka between deals.  An ``alarm`` (the game log cannot be written: a full
    disk) takes the last row whatever else it would show.
    """
    names = names or {}
    seats = tracker.config.table.seats
    label = {s: _short(names.get(s, s.replace("seat", "P"))) for s in seats}
    leds = {s: OFF for s in seats}
    deal = tracker.deal
    lines: list[str]
    bidding = deal.bidding if deal is not None else None
    calling = _bidding_lines(tracker, deal, label, leds) if bidding is not None else None
    if calling is not None:
        lines = calling
    elif deal is not None:
        due = deal.expected
        if due in leds:
            leds[due] = TURN
        if not deal.current and tracker.last_trick is not None and tracker.last_trick.winner in leds:
            leds[tracker.last_trick.winner] = WINNER
        taken = deal.taken
        head = f"#{deal.number} {label[deal.dealer]} x{deal.price} T{len(deal.tricks) + 1}"
        width = 3 if len(seats) == 3 else 2
        counts = " ".join(f"{label[s][:width]}:{taken[s]}" for s in seats)
        if bidding is not None and bidding.declarer is not None:
            # a contract or misère in play: the game and trumps, tricks against the contract
            head = f"#{deal.number} {label[bidding.declarer]} {game_text(bidding.game)} T{len(deal.tricks) + 1}"
            counts = _contract_counts(deal, label)
        if deal.current:
            table = _cards(deal.current)
        elif tracker.last_trick is not None:
            winner = tracker.last_trick.winner
            table = "<" + _cards(tracker.last_trick.cards) + ">" + (label[winner][:3] if winner else "-")
        else:
            table = ""
        turn = "turn: " + ("prikup" if due == "prikup" else label.get(due, "-"))
        lines = [head, counts, table, turn]
    else:
        pulka = tracker.pulka
        lines = [f"{label[s]:<5} P{score_text(pulka.pulya[s]):>3} G{score_text(pulka.gora[s]):>4}"
                 + (f" W{score_text(sum(pulka.whists[s].values()))}" if tracker.rules.scoring == "whists" else "")
                 for s in seats]
        if len(lines) < DISPLAY_ROWS:       # 3 players: a status row; 4 players: the pulka fills the display
            dealer, step = tracker.next_deal_params()
            # the next deal's first card or bid waits for a clear table (no card on any zone)
            unclear = bool(tracker.present)
            status = f"next: {label[dealer]} x{tracker.rules.progression[step]}"
            pin = notice.split("\n")[-1] if notice else ""
            if pin and tracker.records:
                # between deals the notice's last row (the web page's PIN) goes beside the next
                # dealer and price when it fits, so a phone can still join: "P2 x1 PIN 482913"
                compact = f"{label[dealer]} x{tracker.rules.progression[step]} {pin}"
                status = compact if len(compact) <= DISPLAY_COLS else status
            lines.append("clear the table" if unclear else status)
    for alert in tracker.alerts:
        zone = alert.get("zone")
        if zone in leds:
            leds[zone] = ERROR
    if notice and deal is None and not tracker.records and not tracker.alerts:
        # before the session's first deal: the notice's rows (the web page's address and PIN)
        # above the status row, in place of the all-zero pulka
        rows = notice.split("\n")[:DISPLAY_ROWS - 1]
        lines = rows + [""] * (DISPLAY_ROWS - 1 - len(rows)) + [lines[-1]] if len(rows) > 1 else \
            lines[:-1] + [notice]
    if tracker.alerts:
        alert = tracker.alerts[-1]
        text = _MISTAKE_TEXT.get(alert["type"], alert["type"])
        who = label.get(alert.get("zone"), alert.get("zone") or "")
        row = f"!{who} {text}"
        if len(row) > DISPLAY_COLS:
            # the text says what to do ("order? confirm"): shown whole, the zone's name shortened
            # to make room ("!prik order? confirm"; a seat's LED shows the seat too)
            room = DISPLAY_COLS - 2 - len(text)
            row = f"!{who[:room]} {text}" if room > 0 else f"!{text}"
        lines[-1] = row
    if alarm:
        lines[-1] = alarm                 # the game log is not being written: said above all
    lines = [line[:DISPLAY_COLS] for line in lines]
    lines += [""] * (DISPLAY_ROWS - len(lines))
    return Indications(leds=leds, lines=tuple(lines), beep_ms=beep_ms)
