"""Properties of random legal games with ``rules.bidding`` in every option: 10 tricks per played
deal, each card once, settlement sums to zero, ``written`` adds up to the pulka, noise does not
change the result, and a replay of the logged lines equals the live run."""

import json
from fractions import Fraction

from hypothesis import HealthCheck, given, settings, strategies as st

from contract_games import MixedGame
from controller.core.events import read_events
from controller.core.scoring import settle
from controller.core.tracker import DealTracker
from table_script import config

options = st.fixed_dictionaries({
    "players": st.sampled_from([3, 4]),
    "prikup": st.sampled_from(["dealer_leads", "suit_only", "closed"]),
    "convention": st.sampled_from(["sochi", "leningrad"]),
    "ten_whisted": st.booleans(),
    "half_whist": st.booleans(),
    "consolation_to_dealer": st.booleans(),
    "second_whist_responsible": st.booleans(),
    "whist_responsibility": st.sampled_from([None, "full", "half"]),
    "pulya_target": st.sampled_from([None, 3, 10, 30]),
    "same_dealer": st.booleans(),
    "progression": st.sampled_from([(1, 2, 3), (1,), (2, 4)]),
})


def make_config(opts):
    opts = dict(opts)
    players = opts.pop("players")
    return config(players=players, bidding=True, **opts)


def exact(value) -> Fraction:
    return Fraction(repr(value)) if isinstance(value, float) else Fraction(value)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(opts=options, seed=st.integers(0, 10_000))
def test_random_mixed_games(opts, seed):
    cfg = make_config(opts)
    events = list(MixedGame(cfg, seed).deals(12))
    live = DealTracker(cfg)
    signals = [s.to_dict() for e in events for s in live.feed(e)]
    summary = live.summary()
    seats = cfg.table.seats

    assert len(summary["deals"]) == 12
    for deal in summary["deals"]:
        assert deal["complete"]
        cards = [c for trick in deal["tricks"] for c in trick["cards"].values()]
        assert len(cards) == len(set(cards))                        # each card once
        if deal["kind"] == "unplayed":
            assert deal["tricks"] == [] and deal["outcome"] in ("passed", "half_whist", "ten_unwhisted")
        else:
            assert len(deal["tricks"]) == 10                        # 10 tricks per played deal
        if deal["kind"] in ("contract", "misere"):
            assert len(cards) == 30 and deal["outcome"] in ("made", "failed")
            assert all(len(t["cards"]) == 3 for t in deal["tricks"])
        if cfg.table.players == 4:
            assert deal["taken"][deal["dealer"]] == 0 or deal["kind"] == "raspasovka"
        if cfg.rules.pulya_target is None:
            assert deal["help"] == []

    # written adds up to the pulka
    for seat in seats:
        for column in ("gora", "pulya"):
            total = sum((exact(d["written"][seat][column]) for d in summary["deals"]), Fraction(0))
            assert total == exact(summary["pulka"][seat][column])
        for other in seats:
            if other != seat:
                total = sum((exact(d["written"][seat]["whists"][other]) for d in summary["deals"]), Fraction(0))
                assert total == exact(summary["pulka"][seat]["whists"][other])
    # settlement sums to zero, exactly
    assert sum(settle(summary["pulka"], cfg.rules.convention).values()) == 0
    if cfg.rules.pulya_target is not None and summary["finished_after_deal"] is not None:
        n = summary["finished_after_deal"]
        pulya = {s: sum(exact(d["written"][s]["pulya"]) for d in summary["deals"][:n]) for s in seats}
        assert all(v == cfg.rules.pulya_target for v in pulya.values())

    # replay of the logged table-event lines equals the live run
    lines = [e.to_json() for e in events]
    again = DealTracker(cfg)
    replayed = [s.to_dict() for e in read_events(lines, again.zones) for s in again.feed(e)]
    assert replayed == signals
    assert json.dumps(again.summary()) == json.dumps(summary)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(opts=options, seed=st.integers(0, 10_000))
def test_noise_does_not_change_the_result(opts, seed):
    cfg = make_config(opts)
    clean, noisy = DealTracker(cfg), DealTracker(cfg)
    clean.feed_all(MixedGame(cfg, seed).deals(8))
    mistakes = [s for s in noisy.feed_all(MixedGame(cfg, seed, noise=True).deals(8)) if s.kind == "mistake"]
    assert noisy.summary() == clean.summary()
    assert all(m.data["type"] in ("invalid_control", "not_in_play") for m in mistakes)


def test_the_noise_makes_mistakes():
    cfg = config(bidding=True)
    tracker = DealTracker(cfg)
    kinds = {s.data["type"] for s in tracker.feed_all(MixedGame(cfg, 3, noise=True).deals(30)) if s.kind == "mistake"}
    assert kinds == {"invalid_control", "not_in_play"}


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 100_000), game=st.sampled_from(["6s", "7c", "8d", "9h", "10n", "6n", "misere"]),
       revoke=st.one_of(st.none(), st.tuples(st.integers(1, 8), st.sampled_from(["seat2", "seat3", "seat1"]),
                                             st.sampled_from(["trump", "discard"]))))
def test_the_play_agrees_with_a_second_reading(seed, game, revoke):
    """Winners, leaders and revokes against contract_games' independent play engine."""
    import random as _random
    from contract_games import play_deal, trump_of
    from table_script import Script
    if revoke is not None and revoke[2] == "trump" and trump_of(game) is None:
        revoke = (revoke[0], revoke[1], "discard")
    played = None
    for attempt in range(50):
        played = play_deal(_random.Random(seed * 50 + attempt), ["seat2", "seat3", "seat1"], game, "seat2", 0, revoke)
        if played is not None:
            break
    if played is None:
        return
    s = Script(config(bidding=True))
    s.bids(f"seat2:{game}", "seat3:pass", "seat1:pass")
    if game != "misere":
        s.contract("seat2", game)
        s.whists("seat3:whist", "seat1:whist")
    for trick in played.tricks:
        s.trick(*(f"{z}:{c}" for z, c in trick))
    deal = s.summary["deals"][0]
    assert [t["winner"] for t in deal["tricks"]] == played.winners
    assert [t["leader"] for t in deal["tricks"]] == ["seat2"] + played.winners[:-1]
    assert deal["complete"] and s.tracker.state == "idle"
    if played.revoke is None:
        assert deal["revoke"] is None and not s.mistakes()
    else:
        trick, seat = played.revoke
        assert deal["revoke"] == seat and deal["revoke_trick"] == trick + 1
        assert {m.data["type"] for m in s.mistakes()} == {"revoke"}
