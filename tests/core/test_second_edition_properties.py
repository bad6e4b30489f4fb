"""Properties of the second edition (RULES-contracts.md "Claims", "bidding = auto"), with
hypothesis: a claimed deal is written as the same deal played out with those trick counts;
a claim is accepted exactly when it names every active seat and sums to the tricks left;
confirm and undo are inverse; a log of cards alone replays the same under "auto" and false."""

from __future__ import annotations

import random

from hypothesis import HealthCheck, given, settings, strategies as st

from contract_games import active_after, play_deal
from controller.app.sim import Noise, TableSimulator
from controller.core.tracker import DealTracker
from second_edition_script import Edition2, config, rest_of

GAMES = [f"{level}{strain}" for level in range(6, 11) for strain in "scdhn"] + ["misere"]
SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _deal(seed: int, game: str, players: int):
    active = active_after("seat1", players)
    for extra in range(100):
        played = play_deal(random.Random(seed * 101 + extra), active, game, active[0], extra % 20)
        if played is not None:
            return active, played
    raise AssertionError("no deal")


def _opened(cfg, game: str, active, whist: str, mode: str | None) -> Edition2:
    """The result line and, for a game, the whist calls of the first defender and the second."""
    s = Edition2(cfg)
    s.result(active[0], game)
    if game != "misere":
        first, second = active[1], active[2]
        calls = {"both": ("whist", "whist"), "first": ("whist", "pass"), "second": ("pass", "whist")}[whist]
        s.whists(f"{first}:{calls[0]}", f"{second}:{calls[1]}")
    if mode is not None and (game == "misere" or whist != "both"):
        s.mode(mode)
    return s


@SETTINGS
@given(seed=st.integers(0, 10_000), game=st.sampled_from(GAMES), players=st.sampled_from([3, 4]),
       whist=st.sampled_from(["both", "first", "second"]), mode=st.sampled_from([None, "open", "closed"]),
       at=st.integers(0, 9), convention=st.sampled_from(["sochi", "leningrad"]))
def test_a_claimed_deal_is_written_as_the_same_deal_played_out(seed, game, players, whist, mode, at, convention):
    cfg = config(players=players, convention=convention)
    active, played = _deal(seed, game, players)
    whole = _opened(cfg, game, active, whist, mode)
    whole.tricks(played, 0, 10)
    s = _opened(cfg, game, active, whist, mode)
    s.tricks(played, 0, at)
    assert s.tracker.state == "play"
    s.claim(**rest_of(played, at))
    assert s.tracker.state == "claim"
    s.press("confirm")
    got, want = s.entry, whole.entry
    assert got["complete"] and got["claimed"] == rest_of(played, at)
    assert (got["written"], got["outcome"], got["kind"], got["revoke"]) == \
        (want["written"], want["outcome"], want["kind"], want["revoke"])
    assert s.summary["pulka"] == whole.summary["pulka"]


@SETTINGS
@given(seed=st.integers(0, 10_000), at=st.integers(0, 9),
       counts=st.dictionaries(st.sampled_from(["seat1", "seat2", "seat3", "seat4"]), st.integers(0, 10)),
       players=st.sampled_from([3, 4]))
def test_a_claim_is_accepted_exactly_when_it_names_the_active_seats_and_sums_to_the_tricks_left(
        seed, at, counts, players):
    seats = [f"seat{i}" for i in range(1, players + 1)]
    counts = {seat: n for seat, n in counts.items() if seat in seats}
    active, played = _deal(seed, "7h", players)
    s = _opened(config(players=players), "7h", active, "both", None)
    s.tricks(played, 0, at)
    out = s.claim(**counts)
    valid = set(counts) == set(active) and sum(counts.values()) == 10 - at
    assert [sig.kind for sig in out] == (["claim"] if valid else ["mistake"])
    assert s.tracker.state == ("claim" if valid else "play")


@SETTINGS
@given(seed=st.integers(0, 10_000), at=st.integers(0, 9))
def test_confirm_and_undo_are_inverse(seed, at):
    active, played = _deal(seed, "6s", 3)
    s = _opened(config(), "6s", active, "both", None)
    s.tricks(played, 0, at)
    before = s.summary
    s.claim(**rest_of(played, at))
    waiting = s.summary
    s.press("confirm")
    s.press("undo")
    assert s.summary == waiting and s.tracker.state == "claim"
    s.press("undo")
    assert s.summary == before and s.tracker.state == "play"


@settings(max_examples=8, deadline=None)
@given(seed=st.integers(0, 10_000), players=st.sampled_from([3, 4]))
def test_a_log_of_cards_alone_replays_the_same_under_auto_and_false(seed, players):
    events = list(TableSimulator(config(players=players), seed=seed, noise=Noise.demo()).deals(2))
    runs = []
    for bidding in ("auto", False):
        tracker = DealTracker(config(players=players, bidding=bidding))
        runs.append(([s.to_dict() for e in events for s in tracker.feed(e)], tracker.summary()))
    assert runs[0] == runs[1]
