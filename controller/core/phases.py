"""The phases of a deal as a ``transitions`` state machine, declared as data.

The machine's state is the one truth of the phase of the deal in progress
(RULES.md, RULES-contracts.md): ``idle`` between deals, ``auction``, ``contract``
(the declarer names his game), ``whisting``, ``play``, ``held`` (a trick holding a
card whose order the hub link could only guess waits for ``confirm``, PROTOCOL.md)
and ``claim`` (a claim waits for ``confirm``, RULES-contracts.md "Claims").  The
model is the :class:`~controller.core.tracker.DealTracker`: the names below are its
methods.

A control line (``bid``, ``contract``, ``whist``, ``whist_mode``, ``result``,
``claim``) is allowed only from the states of :data:`ALLOWED` (from any other it is
refused with the message of :data:`REFUSED`).  A call inside the auction or the
whisting -- a bid in ``auction``, a whist call in ``whisting`` (:data:`IN_PHASE`) --
is the auction's or the whisting's own bookkeeping, as a card inside the play is the
deal's: judged by their own check and recorded without a trigger, it moves the machine
when it decides its phase (``auction_ends``, ``whisting_ends``, whose conditions choose
the way on).  Every other line is a trigger of its own, fired with ``(kind, seat,
value)``; from a state that allows it its transitions are tried in order
(:func:`line_moves`):

1. the guard, the machine's condition that the line is valid by the rules (e.g.
   ``bid_valid``: the auction's own check); a line it refuses makes no move and its
   effect ``refuse`` writes the mistake;
2. the line is recorded (``record``, or ``open_deal`` for a deal's first line: the
   ``prepare`` of the first move, run once), and the first move whose condition holds
   on what the line decided is made, with its effects (``auction_decided``,
   ``whisting_decided``, ``ten_unwhisted``, ``end_deal``: the derived lines); the last
   move has no condition.

So a replay fires about as many triggers as a deal has phases.  A card fires no
trigger; the machine moves with the deal's first card (``start_deal``), a held trick (``hold_trick``,
``release_trick``), the last trick (``finish_deal``), a claim confirmed, a deal
abandoned.  ``undo`` is a transition of the model too: from any state, when there
is a line to take back, the deal is taken apart (back to ``idle``) and the lines
that remain are fed to the machine again, which so reaches their phase.

``auto_transitions=False`` (no ``to_<state>`` shortcuts: no move is made that is
not declared here) and ``queued=True`` (a trigger fired by an effect runs after it).
"""

from __future__ import annotations

from transitions import Machine

from .deal import AUCTION, CLAIMING, CONTRACT_PHASE, PLAYING, WHISTING
from .events import BID, CLAIM, CONTRACT, RESULT, WHIST, WHIST_MODE

IDLE = "idle"
PLAY = PLAYING
HELD = "held"
CLAIM_STATE = CLAIMING
STATES = [IDLE, AUCTION, CONTRACT_PHASE, WHISTING, PLAY, HELD, CLAIM_STATE]
IN_DEAL = [AUCTION, CONTRACT_PHASE, WHISTING, PLAY, HELD, CLAIM_STATE]

# The phase a deal shows (a snapshot's ``phase``, a bidding token's reading): a held
# trick is in the play.
SHOWN = {state: state for state in STATES} | {HELD: PLAY}

# the effects that end a deal by its calls: the derived lines, then the deal's end
_TEN_UNWHISTED = ["ten_unwhisted", "end_deal"]


def line_moves(trigger: str, source: str, guard: str, moves=((None, None, ()),)) -> list[dict]:
    """The transitions of the line ``trigger`` from ``source``: refused by ``guard`` (no
    move; the mistake line), else recorded and moved by the first ``(dest, condition,
    effects)`` of ``moves`` whose condition holds (dest None: the phase goes on; the last
    move's condition is None); by default the phase goes on."""
    out = [{"trigger": trigger, "source": source, "dest": None, "unless": guard, "after": "refuse"}]
    record = "open_deal" if source == IDLE else "record"
    for dest, condition, after in moves:
        move = {"trigger": trigger, "source": source, "dest": dest}
        if len(out) == 1:
            move["prepare"] = record            # once: the guard let the line through
        if condition is not None:
            move["conditions"] = condition
        if after:
            move["after"] = list(after)
        out.append(move)
    return out


_AUCTION_ENDS = [(CONTRACT_PHASE, "auction_won", ["auction_decided"]),    # won with a game
                 (PLAY, None, ["auction_decided"])]                       # all passed, or misère

TRANSITIONS = [
    # a deal's first line: a bid (the first hand's), or a result line (the auction and the
    # contract at once, RULES-contracts.md "Second edition"); a card starts a raspasovka
    *line_moves(BID, IDLE, "first_bid_valid", [(AUCTION, "auction_open", ()), *_AUCTION_ENDS]),
    *line_moves(RESULT, IDLE, "result_valid",
                [(WHISTING, "whisting_open", ["auction_decided"]),
                 (PLAY, "misere_declared", ["auction_decided"]),
                 (IDLE, None, ["auction_decided", *_TEN_UNWHISTED])]),          # a 10 not whisted
    {"trigger": "start_deal", "source": IDLE, "dest": PLAY},
    # the auction decided by its last call; the whisting by its last whist call
    *({"trigger": "auction_ends", "source": AUCTION, "dest": dest, "conditions": condition, "after": after}
      for dest, condition, after in _AUCTION_ENDS),
    *line_moves(CONTRACT, CONTRACT_PHASE, "contract_valid",
                [(WHISTING, "whisting_open", ()), (IDLE, None, _TEN_UNWHISTED)]),     # a 10 not whisted
    # after the game is named a contract line is refused, but after a misère auction (the
    # game is misère until the first card: accepted, it changes nothing)
    *line_moves(CONTRACT, WHISTING, "contract_valid"),
    *line_moves(CONTRACT, PLAY, "contract_valid"),
    *line_moves(CONTRACT, HELD, "contract_valid"),
    {"trigger": "whisting_ends", "source": WHISTING, "dest": PLAY, "conditions": "whisting_played",
     "after": ["whisting_decided"]},
    {"trigger": "whisting_ends", "source": WHISTING, "dest": IDLE,
     "after": ["whisting_decided", "end_deal"]},                                   # both pass, half-whist
    *line_moves(WHIST_MODE, PLAY, "mode_valid"),
    *line_moves(WHIST_MODE, HELD, "mode_valid"),
    *line_moves(CLAIM, PLAY, "claim_valid", [(CLAIM_STATE, None, ["claim_waiting"])]),
    # a trick is counted when its last card comes, or on `confirm` if it was held
    {"trigger": "hold_trick", "source": PLAY, "dest": HELD},
    {"trigger": "release_trick", "source": HELD, "dest": PLAY},
    {"trigger": "finish_deal", "source": [PLAY, HELD], "dest": IDLE, "after": "end_deal"},   # the 10th
    {"trigger": "claim_confirmed", "source": CLAIM_STATE, "dest": IDLE, "after": "end_deal"},
    {"trigger": "abandon", "source": IN_DEAL, "dest": IDLE, "after": "end_deal"},           # new_deal
    # the last line taken back: the deal taken apart; its remaining lines are fed again
    {"trigger": "undo", "source": STATES, "dest": IDLE, "conditions": "can_take_back", "after": "take_back"},
]

LINES = (BID, CONTRACT, WHIST, WHIST_MODE, RESULT, CLAIM)
# The calls inside a phase, by the guard that judges them (the auction's, the whisting's own check).
IN_PHASE = {(BID, AUCTION): "bid_valid", (WHIST, WHISTING): "whist_valid"}
# The states each line is allowed from: those with a transition for it, and its phase for a call.
ALLOWED = {line: frozenset([*(t["source"] for t in TRANSITIONS if t["trigger"] == line),
                            *(state for kind, state in IN_PHASE if kind == line)]) for line in LINES}

_NO_DEAL = "no deal awaits this line"
_CLAIM_WAITS = "a claim waits for confirm"
NO_WHISTING = "no whisting now"          # (a misère deal: "a misere is not whisted")
# Why a line is refused in a state it is not allowed from.  A line in a raspasovka
# (``a raspasovka has no ... line``) is refused before, whatever the state.
REFUSED = {
    **{(BID, s): "no auction now" for s in (CONTRACT_PHASE, WHISTING, PLAY, HELD, CLAIM_STATE)},
    **{(RESULT, s): "a result line only as a deal's first line" for s in IN_DEAL},
    **{(line, IDLE): _NO_DEAL for line in (CONTRACT, WHIST, WHIST_MODE, CLAIM)},
    (CONTRACT, AUCTION): "the auction is not over", (CONTRACT, CLAIM_STATE): _CLAIM_WAITS,
    **{(WHIST, s): NO_WHISTING for s in (AUCTION, CONTRACT_PHASE, PLAY, HELD)},
    (WHIST, CLAIM_STATE): _CLAIM_WAITS,
    **{(WHIST_MODE, s): "the whisting is not decided" for s in (AUCTION, CONTRACT_PHASE, WHISTING)},
    (WHIST_MODE, CLAIM_STATE): _CLAIM_WAITS,
    **{(CLAIM, s): "a claim only during the play" for s in (AUCTION, CONTRACT_PHASE, WHISTING)},
    (CLAIM, HELD): "a claim only between tricks (a trick is open)",
    (CLAIM, CLAIM_STATE): "a claim already waits for confirm",
}

MACHINE_FLAGS = {"auto_transitions": False, "queued": True}


def phase_machine(model, machine_class=Machine, **options) -> Machine:
    """The machine of :data:`STATES` and :data:`TRANSITIONS` on ``model``, in ``idle``."""
    return machine_class(model=model, states=STATES, transitions=TRANSITIONS, initial=IDLE,
                         **MACHINE_FLAGS, **options)


__all__ = ["IDLE", "PLAY", "HELD", "CLAIM_STATE", "STATES", "IN_DEAL", "SHOWN", "TRANSITIONS", "LINES",
           "IN_PHASE", "ALLOWED", "REFUSED", "NO_WHISTING", "line_moves", "phase_machine"]
