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
