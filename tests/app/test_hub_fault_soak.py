"""The fault soak: 20 seeded sessions through a hostile hub line and SIGKILLs.

Each session plays a few simulated raspasovka deals (with table noise) on an
emulated hub's readers while ``preftable run`` reads it over a pty; the seed
chooses the faults (:mod:`hub_soak`): 1-4 frames in a row dropped or
corrupted, garbage, a hub reboot mid-trick, an unplug, a SIGKILL and restart
on the same log dir (with cards laid while the service is down), and in every
fourth session a silence the host must time out on; every fifth session's service
also analyses its deals (the double-dummy search beside the table loop; the others
leave it out, it costs more CPU than the rest of a session).  The game log must replay
to exactly the summary a tracker fed the same table events directly gives:
nothing lost, nothing invented, no card out of its order (PROTOCOL.md
"Keeping the host's view true", FORMATS.md).
"""

import signal

import pytest

from controller.store.replay import replay_file

from hub_soak import NO_DEVICE, SoakTable

SEEDS = range(20)
DEALS = 2


@pytest.fixture
def table(tmp_path, request):
    seed = request.param
    table = SoakTable(tmp_path, seed, DEALS, silence=seed % 4 == 0, analysed=seed % 5 == 0)
    yield table
    table.close()


@pytest.mark.slow
@pytest.mark.parametrize("table", SEEDS, indirect=True, ids=lambda seed: f"seed{seed}")
def test_a_session_through_every_fault_replays_to_the_clean_summary(table):
    table.play()
    assert table.stop() == 0
    session = table.session()
    replayed = replay_file(session.events_path, session.game_config(), session.deck())
    assert replayed.summary() == table.clean

    # the faults happened: not a clean run that passed by itself
    err = table.stderr()
    assert "Traceback" not in err
    assert table.evidence.kills == [-signal.SIGKILL] and table.evidence.starts == 2
    assert err.count("resumed ") == 1                        # the restart resumed the same session
    emu = table.emu
    assert emu.line_faults["dropped"] + emu.line_faults["corrupted"] > 0 and emu.line_faults["garbage"] > 0
    assert len(set(table.evidence.boots)) == 3              # booted, rebooted mid-trick, replugged
    assert NO_DEVICE in err                                 # the host saw the unplug
    if "silence" in table.evidence.faults:
        assert "no HB for" in err                           # and timed the silence out


def test_a_whole_trick_held_after_an_early_confirm_is_confirmed_again(tmp_path):
    """The harness's player: a confirm pressed as the guessed order was shown, before its
    trick was whole, counts nothing; once the trick is whole and still not counted, the log
    says it is held, and the player presses confirm again (the table waited for ever before)."""
    import json

    lines = [{"kind": "play", "deal": 1, "zone": "seat1", "card": "7s"},
             {"kind": "mistake", "type": "order_guessed", "zone": "seat1", "card": "7\u2660"},
             {"t": 1.0, "event": "button", "button": "confirm"},            # early: nothing held yet
             {"kind": "play", "deal": 1, "zone": "seat2", "card": "8s"}]
    log = tmp_path / "events.jsonl"
    log.write_text("".join(json.dumps(x) + "\n" for x in lines))
    assert SoakTable._read_log([log])[1] == (1, False, None)              # half a trick: not held
    with log.open("a") as more:
        more.write(json.dumps({"kind": "play", "deal": 1, "zone": "seat3", "card": "9s"}) + "\n")
    count, waiting, held = SoakTable._read_log([log])[1]
    assert (count, waiting) == (1, False) and held == (1, 0, 3)           # whole, not counted: held
    with log.open("a") as more:
        more.write(json.dumps({"t": 2.0, "event": "button", "button": "confirm"}) + "\n")
        more.write(json.dumps({"kind": "trick", "deal": 1, "number": 1}) + "\n")
    assert SoakTable._read_log([log])[1] == (1, False, None)              # counted on the confirm
