"""The table's web page under hostile use: links in the log dir, idle and oversized
connections, wrong PINs from one client, old sessions' replays off the table's process."""

import stat

from controller.app.web.pin import PIN_FILE, SECRET_FILE, PinGate, table_pin


def test_the_pin_and_the_secret_are_never_written_through_planted_links(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    logs = tmp_path / "logs"
    logs.mkdir()
    for name in (PIN_FILE, SECRET_FILE):
        (logs / f"{name}.tmp").symlink_to(outside / name)
    pin, _ = table_pin(logs)
    gate = PinGate.for_table(logs, None)
    assert list(outside.iterdir()) == []                 # nothing written out of the log dir
    assert (logs / PIN_FILE).read_text().strip() == pin == gate.pin
    for name in (PIN_FILE, SECRET_FILE):
        path = logs / name
        assert not path.is_symlink() and stat.S_IMODE(path.stat().st_mode) == 0o600
        assert not (logs / f"{name}.tmp").exists()
