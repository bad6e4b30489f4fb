"""Table events (FORMATS.md "Table events", FORMATS-contracts.md "Table events: new
control lines"): what the readers and the players' calls said, in time order.

Control lines -- ``button``, and the contract game's ``bid``, ``contract``,
``whist``, ``whist_mode``, ``result`` and ``claim`` (FORMATS-contracts.md "Second
edition") -- have no zone and no card.  A control line whose
field value is missing or unknown is an invalid line (reported, skipped); one
that is well formed but not allowed at that moment is the tracker's business
(a signalled ``invalid_control`` mistake).

Both reader paths -- the Pi's own RC522 readers (``hw/``) and the table hub
(``firmware_bridge/``) -- produce :class:`TableEvent` objects; the deal tracker
cannot tell them apart.
"""

from __future__ import annotations

import json
import math
import re
from typing import Callable, Iterable, Iterator, NamedTuple

from .cards import STRAINS, Card, parse_card
from .errors import CardError, EventError

PLACED = "placed"
REMOVED = "removed"
BUTTON = "button"
BUTTONS = ("undo", "new_deal", "confirm")
BID, CONTRACT, WHIST, WHIST_MODE = "bid", "contract", "whist", "whist_mode"
RESULT, CLAIM = "result", "claim"               # the second edition's auction-in-one and claim
CONTROL_EVENTS = (BUTTON, BID, CONTRACT, WHIST, WHIST_MODE, RESULT, CLAIM)
PASS, MISERE = "pass", "misere"
LEVELS = (6, 7, 8, 9, 10)       # a game's tricks to take; STRAINS (controller.core.cards): its trumps
GAMES = tuple(f"{level}{strain}" for level in LEVELS for strain in STRAINS)
WHIST_CALLS = ("whist", "pass", "half")
WHIST_MODES = ("open", "closed")
# the field that carries the value of each contract control line
VALUE_FIELD = {BID: "bid", CONTRACT: "game", WHIST: "call", WHIST_MODE: "mode", RESULT: "game", CLAIM: "tricks"}
MAX_CLAIM = 10          # a claim's number of tricks for one seat: a JSON integer 0-10
_HEX = frozenset("0123456789abcdefABCDEF")
MAX_T = 10**12      # seconds (31,000 years): every real session time, and exact as a float


class TableEvent(NamedTuple):
    """One table event.  Exactly one of ``uid``/``card`` for placed/removed;
    ``button`` (and no zone) for button presses; ``seat`` and ``call`` (the bid, game,
    whist call or mode, normalised) for the contract game's control lines; a claim's
    ``call`` is its tricks, ``((seat, n), ...)`` in the table's seat order (no seat).

    A named tuple: frozen, and made at C speed (a replay makes one per line; a frozen
    dataclass's nine field setters were a fifth of its reading).  ``event._replace(t=…)``
    gives a changed copy."""

    t: float
    event: str
    zone: str | None = None
    uid: str | None = None
    card: Card | None = None
    button: str | None = None
    seat: str | None = None
    call: str | None = None
    guessed: bool = False       # the hub link could not know this edge's order (PROTOCOL.md)

    def to_dict(self) -> dict:
        """The JSON object of FORMATS.md, keys in the documented order."""
        if self.event == BUTTON:
            return {"t": self.t, "event": BUTTON, "button": self.button}
        if self.event in VALUE_FIELD:
            out = {"t": self.t, "event": self.event}
            if self.seat is not None:
                out["seat"] = self.seat
            out[VALUE_FIELD[self.event]] = dict(self.call) if self.event == CLAIM else self.call
            return out
        out: dict = {"t": self.t, "zone": self.zone, "event": self.event}
        if self.uid is not None:
            out["uid"] = self.uid
        else:
            out["card"] = str(self.card)
        if self.guessed:                    # an added field: written only when true
            out["guessed"] = True
        return out

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False, separators=(", ", ": "))


_new_event = tuple.__new__      # TableEvent's own constructor, without its argument handling


def normalise_uid(uid: object) -> str:
    """Upper-case hex UID (FORMATS.md: "UIDs are hex digits"); raise :class:`EventError` otherwise."""
    if not isinstance(uid, str) or not uid or not set(uid) <= _HEX:
        raise EventError(f"uid must be hex digits, got {uid!r}")
    return uid.upper()


def placed(t: float, zone: str, *, uid: str | None = None, card: Card | str | None = None) -> TableEvent:
    """Convenience constructor for a ``placed`` event."""
    return TableEvent(t, PLACED, zone, uid=None if uid is None else normalise_uid(uid),
                      card=parse_card(card) if isinstance(card, str) else card)


def removed(t: float, zone: str, *, uid: str | None = None, card: Card | str | None = None) -> TableEvent:
    """Convenience constructor for a ``removed`` event."""
    return TableEvent(t, REMOVED, zone, uid=None if uid is None else normalise_uid(uid),
                      card=parse_card(card) if isinstance(card, str) else card)


def button(t: float, name: str) -> TableEvent:
    """Convenience constructor for a ``button`` event."""
    if name not in BUTTONS:
        raise EventError(f"unknown button {name!r} (expected one of {', '.join(BUTTONS)})")
    return TableEvent(t, BUTTON, button=name)


def control(t: float, event: str, value: str, seat: str | None = None) -> TableEvent:
    """Convenience constructor for a ``bid``/``contract``/``whist``/``whist_mode``/``result`` line."""
    return TableEvent(t, event, seat=seat, call=_control_value(event, value))


def claim(t: float, tricks: dict[str, int], zones: Iterable[str]) -> TableEvent:
    """Convenience constructor for a ``claim`` line at a table with ``zones``."""
    return TableEvent(t, CLAIM, call=claim_tricks(tricks, tuple(zones)))


def claim_tricks(tricks: object, zones: tuple[str, ...]) -> tuple[tuple[str, int], ...]:
    """A claim's ``tricks`` as ``((seat, n), ...)`` in the table's seat order; :class:`EventError`
    unless it is an object of seats of the table to JSON integers 0-10 (FORMATS-contracts.md:
    ``2.0``, ``"2"`` and ``true`` are not whole numbers there).  Whether the seats and the
    sum suit the deal is the tracker's business (an ``invalid_control`` mistake)."""
    if not isinstance(tricks, dict):
        raise EventError(f"field 'tricks' must be an object of seats to whole numbers, got {tricks!r}")
    seats = tuple(z for z in zones if z.startswith("seat"))
    for seat, count in tricks.items():
        if seat not in seats:
            raise EventError(f"field 'tricks': {seat!r} is not a seat of the table ({', '.join(seats)})")
        if count.__class__ is not int or not 0 <= count <= MAX_CLAIM:
            raise EventError(f"field 'tricks': {seat} must have a whole number 0-{MAX_CLAIM}, got {count!r}")
    return tuple((seat, tricks[seat]) for seat in seats if seat in tricks)


def _bid_value(text: str, allow_pass: bool) -> str | None:
    """A bid or game in its written form (``7h``, ``misere``, ``pass``), any letter case
    and ``misère`` accepted; None if it is none of them."""
    code = text.lower().replace("\u00e8", "e")
    if code == MISERE or code in GAMES or (allow_pass and code == PASS):
        return code
    return None


_CHOICES = {BID: "pass, misere or a game 6s ... 10n", CONTRACT: "misere or a game 6s ... 10n",
            RESULT: "misere or a game 6s ... 10n",
            WHIST: ", ".join(WHIST_CALLS), WHIST_MODE: ", ".join(WHIST_MODES)}


def _control_value(event: str, value: object) -> str:
    if isinstance(value, str):
        if event in (BID, CONTRACT, RESULT):
            code = _bid_value(value, allow_pass=event == BID)
        else:
            code = value if value in (WHIST_CALLS if event == WHIST else WHIST_MODES) else None
        if code is not None:
            return code
    raise EventError(f"field '{VALUE_FIELD[event]}' must be {_CHOICES[event]}, got {value!r}")


def _control_from_dict(obj: dict, t: float, kind: str, zones: tuple[str, ...]) -> TableEvent:
    for extra in ("zone", "uid", "card", "button"):
        if obj.get(extra) is not None:
            raise EventError(f"a {kind} line has no field '{extra}'")
    if kind == CLAIM:
        if "tricks" not in obj:
            raise EventError("a claim line needs the field 'tricks'")
        return TableEvent(t, CLAIM, call=claim_tricks(obj["tricks"], zones))
    seats = tuple(z for z in zones if z.startswith("seat"))
    seat = obj.get("seat")
    if kind == WHIST_MODE:
        seat = None                 # allowed and ignored (FORMATS-contracts.md)
    elif seat not in seats:
        raise EventError(f"field 'seat' must be one of {', '.join(seats)}, got {seat!r}")
    return TableEvent(t, kind, seat=seat, call=_control_value(kind, obj.get(VALUE_FIELD[kind])))


def event_from_dict(obj: object, zones: Iterable[str]) -> TableEvent:
    """Validate one decoded JSON object as a table event for a table with ``zones``.

    Raises :class:`EventError` naming the field at fault.  Extra fields are
    allowed (the formats only ever grow by adding fields).
    """
    if not isinstance(obj, dict):
        raise EventError("not a JSON object")
    t = obj.get("t")
    if isinstance(t, bool) or not isinstance(t, (int, float)):
        raise EventError("field 't' must be a number of seconds")
    # a bound before any float arithmetic: a 400-digit integer overflows math.isfinite
    if not 0 <= t <= MAX_T:
        shown = repr(t) if isinstance(t, float) or abs(t) < 10**20 else "a number of more than 20 digits"
        raise EventError(f"field 't' must be a number of seconds from 0 to {MAX_T:.0e}, got {shown}")
    kind = obj.get("event")
    if kind == BUTTON:
        name = obj.get("button")
        if name not in BUTTONS:
            raise EventError(f"field 'button' must be one of {', '.join(BUTTONS)}, got {name!r}")
        for extra in ("zone", "uid", "card"):
            if obj.get(extra) is not None:
                raise EventError(f"a button event has no field '{extra}'")
        return TableEvent(float(t), BUTTON, button=name)
    zones = tuple(zones)
    if kind in VALUE_FIELD:
        return _control_from_dict(obj, float(t), kind, zones)
    if kind not in (PLACED, REMOVED):
        raise EventError("field 'event' must be placed, removed, button, bid, contract, whist, "
                         f"whist_mode, result or claim, got {kind!r}")
    zone = obj.get("zone")
    if zone not in zones:
        raise EventError(f"field 'zone' must be one of {', '.join(zones)}, got {zone!r}")
    has_uid, has_card = obj.get("uid") is not None, obj.get("card") is not None
    if has_uid == has_card:
        raise EventError("exactly one of the fields 'uid' and 'card' is needed")
    guessed = obj.get("guessed", False)
    if guessed is None:
        guessed = False
    if not isinstance(guessed, bool):
        raise EventError(f"field 'guessed' must be true or false, got {guessed!r}")
    if has_uid:
        return TableEvent(float(t), kind, zone, uid=normalise_uid(obj["uid"]), guessed=guessed)
    try:
        card = parse_card(obj["card"])
    except CardError as exc:
        raise EventError(f"field 'card': {exc}") from None
    return TableEvent(float(t), kind, zone, card=card, guessed=guessed)


ErrorSink = Callable[[int, str], None]


class SkippedLine(str):
    """A line its reader could not give as text (not UTF-8, over-long): blank, with the
    ``reason``, so that the event reader reports it in its place among the other lines'
    reports (the reader decodes a block of lines at once, ahead of their parsing)."""

    reason: str

    def __new__(cls, reason: str) -> "SkippedLine":
        line = super().__new__(cls, "")
        line.reason = reason
        return line

# The fast path for the common line, a card or tag on a zone exactly as to_json (and
# json.dumps' default spacing) writes it.  Only lines it accepts skip json.loads and
# event_from_dict, and for those it gives the same event: the number has no sign,
# exponent or leading zero (so float() of its text is the value json reads, exactly
# also for integers below 2**53), the strings have no escapes (their text is their
# value), the keys are four distinct ones, and a zone, card or t the slow path would
# refuse sends the line to the slow path, which reports it.
#
# The line is '{"t": ' NUMBER "," TAIL, and the number holds no comma, so it ends at the
# line's first one.  A table has a few hundred distinct tails (zone, edge, card), so
# each tail is judged once per file and remembered (see _fast_event).  str.partition
# and slices, not find or startswith: those parse their arguments at every call.
_CARD_PREFIX = '{"t": '
_NUMBER = re.compile(r"(?:0|[1-9][0-9]{0,12})(?:\.[0-9]{1,20})?")
_CARD_TAIL = re.compile(r' "zone": "([a-z0-9]{1,12})", "event": "(placed|removed)", '
                        r'"(card|uid)": "([0-9A-Za-z]{1,40})"\}')
MAX_TAILS = 4096        # tails remembered per file: bounded, whatever the file holds
# The same for a button or a contract control line exactly as to_json writes it: t, event,
# the seat when there is one, then the one value field.  The value goes through the slow
# path's own check (_control_value), and anything it or this pattern refuses -- a value
# field that is not the event's, an unknown seat, a button with a seat -- takes the slow path.
_CONTROL_LINE = re.compile(r'\{"t": ((?:0|[1-9][0-9]{0,12})(?:\.[0-9]{1,20})?), "event": "([a-z_]{1,12})", '
                           r'(?:"seat": "([a-z0-9]{1,12})", )?"([a-z]{1,8})": "([0-9a-z_]{1,12})"\}')
_decoder = json.JSONDecoder()


def _card_tail(tail: str, zones: frozenset[str]) -> tuple | None:
    """(edge, zone, uid, card) of a well-formed card line's tail (see _CARD_TAIL), or None."""
    m = _card_tail_match(tail)
    if m is None:
        return None
    zone, kind, field_name, value = m.groups()
    if zone not in zones:
        return None
    if field_name == "card":
        try:
            return kind, zone, None, parse_card(value)
        except CardError:
            return None
    return (kind, zone, value.upper(), None) if set(value) <= _HEX else None


def _fast_event(text: str, zones: frozenset[str], tails: dict[str, tuple | None]) -> TableEvent | None:
    """The event of a well-formed card/tag line (see _CARD_TAIL), or None: take the slow path.
    ``tails`` remembers what each tail seen in this file was (None: not a fast one)."""
    head, comma, tail = text.partition(",")
    if not comma or head[:6] != _CARD_PREFIX:
        return None
    try:
        known = tails[tail]
    except KeyError:
        known = _card_tail(tail, zones)
        if len(tails) < MAX_TAILS:
            tails[tail] = known
    if known is None:
        return None
    t_text = head[6:]
    if _number(t_text) is None:
        return None
    t = float(t_text)
    if t > MAX_T:
        return None
    kind, zone, uid, card = known
    return _new_event(TableEvent, (t, kind, zone, uid, card, None, None, None, False))


def _fast_control(text: str, zones: frozenset[str]) -> TableEvent | None:
    """The event of a well-formed button or control line (see _CONTROL_LINE), or None."""
    m = _control_line(text)
    if m is None:
        return None
    t_text, kind, seat, field_name, value = m.groups()
    t = float(t_text)
    if t > MAX_T:
        return None
    if kind == BUTTON:
        if field_name != BUTTON or seat is not None or value not in BUTTONS:
            return None
        return TableEvent(t, BUTTON, button=value)
    if field_name != VALUE_FIELD.get(kind):
        return None
    if kind == WHIST_MODE:
        seat = None                     # allowed and ignored, as on the slow path
    elif seat not in zones or not seat.startswith("seat"):
        return None
    try:
        return TableEvent(t, kind, seat=seat, call=_control_value(kind, value))
    except EventError:
        return None


_card_tail_match = _CARD_TAIL.fullmatch
_number = _NUMBER.fullmatch
_control_line = _CONTROL_LINE.fullmatch


def read_events(lines: Iterable[str], zones: Iterable[str],
                on_error: ErrorSink | None = None) -> Iterator[TableEvent]:
    """Yield the valid table events of a JSON Lines stream.

    Invalid lines are passed to ``on_error(line_number, message)`` and skipped;
    blank lines and derived log lines (with ``"kind"``) are skipped silently.
    A ``t`` lower than the previous valid line's is invalid.
    """
    for _, event in numbered_events(lines, zones, on_error):
        yield event


def numbered_events(lines: Iterable[str], zones: Iterable[str],
                    on_error: ErrorSink | None = None) -> Iterator[tuple[int, TableEvent]]:
    """:func:`read_events` with each event's line number (1 for the first line)."""
    zones = tuple(zones)
    zone_set, tails = frozenset(zones), {}
    decode = _decoder.raw_decode
    last_t = -math.inf
    number = 0
    for line in lines:
        number += 1
        # the common line is already bare (the stream reader drops the newline), so the
        # fast path is tried on it before any stripping
        event = _fast_event(line, zone_set, tails) or _fast_control(line, zone_set)
        if event is None:
            text = line.strip()
            if not text:
                if on_error and line.__class__ is SkippedLine:
                    on_error(number, line.reason)
                continue
            if text is not line:
                event = _fast_event(text, zone_set, tails) or _fast_control(text, zone_set)
        else:
            text = line
        if event is not None:
            if event.t >= last_t:
                last_t = event.t
                yield number, event
                continue
        try:
            # the text is stripped, so json.loads would only add the check that the
            # document fills it (the end test here)
            obj, end = decode(text)
            if end != len(text):
                raise ValueError("extra data")
        except (ValueError, RecursionError):
            if on_error:
                on_error(number, "not valid JSON")
            continue
        if isinstance(obj, dict) and "kind" in obj:
            continue
        try:
            event = event_from_dict(obj, zones)
            if event.t < last_t:
                raise EventError(f"field 't' goes back in time ({event.t} < {last_t})")
        except EventError as exc:
            if on_error:
                on_error(number, str(exc))
            continue
        last_t = event.t
        yield number, event
