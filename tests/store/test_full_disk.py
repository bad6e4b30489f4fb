"""A full disk (ENOSPC from an injected writer, no real disk filled): holding new_deal does not
stop the service nor lose a line, SIGTERM while full waits for space and loses nothing, and the
display and the page say the disk is full."""

import errno
import json
import threading

from controller.app.backends.display import DisplayConfig
from controller.app.service import NEW_PULKA, TableService
from controller.app.settings import Settings
from controller.app.web.pages import Pages
from controller.store import gamelog

from conftest import wait_until
from played import events


class Disk:
    """The game log's writer, full while ``full`` is set."""

    def __init__(self, monkeypatch):
        self.full = False
        real = gamelog.write_all

        def write_all(fd, data):
            if self.full:
                raise OSError(errno.ENOSPC, "No space left on device")
            real(fd, data)
        monkeypatch.setattr(gamelog, "write_all", write_all)


class Source:
    """Feeds the scripted events, then says so."""

    def __init__(self, items):
        self.items = items
        self.fed = threading.Event()

    def start(self, sink):
        for item in self.items:
            sink(item)
        self.fed.set()

    def stop(self):
        pass


def wait_for(condition, bound_s: float = 20.0) -> None:
    """Poll a condition; the bound only matters when the code is broken."""
    wait_until(condition, "the condition", bound_s)


def _service(logs):
    return TableService(Settings(sections={"display": DisplayConfig("none")}), None, logs)


def _lines(session) -> bytes:
    return session.events_path.read_bytes()


def test_new_deal_held_and_sigterm_on_a_full_disk_lose_no_line(tmp_path, monkeypatch):
    disk = Disk(monkeypatch)
    service = _service(tmp_path / "logs")
    session = service.open_session()
    played = events(2, 1)
    source = Source(played)
    disk.full = True
    waited = threading.Event()

    def sleep(seconds):                 # the stop waits for space: the space comes back
        disk.full = False
        waited.set()

    original_close = session.close
    monkeypatch.setattr(session, "close", lambda wait_s=0.0, **kw: original_close(wait_s, sleep=sleep, **kw))
    runner = threading.Thread(target=service.run, args=(source,))
    runner.start()
    try:
        assert source.fed.wait(20)
        service.queue.put(NEW_PULKA)                  # new_deal held: the pulka cannot be closed
        service.set_notice("after the hold")          # handled after it: the loop went on
        wait_for(lambda: service.notice == "after the hold")
        assert runner.is_alive()                       # the service did not stop
        snapshot = service.snapshot
        storage = snapshot.to_dict().get("storage") or {}
        assert storage.get("full") and storage.get("waiting", 0) > 0
        assert snapshot.display[-1].startswith("DISK FULL")
        html = Pages().part("table", snapshot.to_dict())
        assert "disk is full" in html
        assert service.session.folder == session.folder and not (session.folder / "summary.json").exists()
    finally:
        service.stop()                                 # SIGTERM while full
        runner.join(30)
    assert waited.is_set() and not runner.is_alive()
    written = _lines(session).decode().splitlines()
    table_events = [json.loads(line) for line in written if '"kind"' not in line]
    assert len(table_events) == len(played)            # every line kept and written
