"""The remote's routes without a browser: names and closing the pulka need the PIN and go to
the table service; the manifest, the icon and /join; the page's addresses; the LAN
announcement (with an injected registrar: nothing leaves this machine); the players' names
saved with the session."""

from __future__ import annotations

import json
import urllib.error
import urllib.request

import pytest

from controller.app.web import WebConfig, start_web
from controller.app.web.join import Announcer, join_info, qr_terminal
from controller.app.web.remote import MANIFEST

ZONES = ("seat1", "seat2", "seat3", "prikup")


def http(url: str, data: bytes | None = None, headers=None):
    request = urllib.request.Request(url, data=data, headers=headers or {}, method="POST" if data else "GET")
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as err:
        return err.code, dict(err.headers), err.read()


class FakeTable:
    def __init__(self):
        self.names: list[dict] = []
        self.closed = 0

    def set_names(self, names):
        if "seat9" in names:
            raise ValueError("no seat 'seat9' at this table (seat1, seat2, seat3)")
        self.names.append(dict(names))

    def close_pulka(self):
        self.closed += 1


@pytest.fixture
def web(tmp_path):
    table = FakeTable()
    output = start_web(WebConfig(port=0, pin="2468"), submit=lambda e: None, log_dir=tmp_path, zones=ZONES)
    output.server.table = table
    output.table_fake = table
    yield output
    output.close()


def cookie(base: str) -> dict:
    status, headers, _ = http(base + "/pin", json.dumps({"pin": "2468"}).encode(), {"Content-Type": "application/json"})
    assert status == 200
    return {"Cookie": headers["Set-Cookie"].split(";")[0], "Content-Type": "application/json"}


def test_names_and_closing_need_the_pin_and_reach_the_table(web):
    base = web.server.url.rstrip("/")
    names = json.dumps({"names": {"seat1": "Anna"}}).encode()
    close = json.dumps({"close": "pulka"}).encode()
    assert http(base + "/api/names", names, {"Content-Type": "application/json"})[0] == 401
    assert http(base + "/api/pulka/close", close, {"Content-Type": "application/json"})[0] == 401
    auth = cookie(base)
    assert http(base + "/api/names", names, auth)[0] == 202
    assert web.table_fake.names == [{"seat1": "Anna"}]
    assert http(base + "/api/names", json.dumps({"names": {"seat9": "X"}}).encode(), auth)[0] == 400
    assert http(base + "/api/names", json.dumps({"names": ["Anna"]}).encode(), auth)[0] == 400
    assert http(base + "/api/pulka/close", b"{}", auth)[0] == 400            # it must say so
    assert web.table_fake.closed == 0
    assert http(base + "/api/pulka/close", close, auth)[0] == 202
    assert web.table_fake.closed == 1


def test_the_page_installs_with_its_manifest_and_icon_and_joins_by_qr(web):
    base = web.server.url.rstrip("/")
    status, headers, body = http(base + "/manifest.webmanifest")
    assert status == 200 and headers["Content-Type"].startswith("application/manifest+json")
    manifest = json.loads(body)
    assert manifest == MANIFEST and manifest["display"] == "standalone" and manifest["start_url"] == "/"
    for icon in manifest["icons"]:
        assert http(base + icon["src"])[0] == 200
    status, headers, body = http(base + "/favicon.ico")
    assert status == 200 and headers["Content-Type"].startswith("image/svg+xml")
    page = http(base + "/")[2].decode()
    assert 'rel="manifest" href="/manifest.webmanifest"' in page and 'rel="icon"' in page
    status, _, body = http(base + "/join")
    text = body.decode()
    assert status == 200 and "<svg" in text and web.server.url in text and "2468" not in text
    with urllib.request.urlopen(urllib.request.Request(base + "/join", headers=cookie(base)), timeout=10) as r:
        assert "2468" in r.read().decode()                                  # a phone with the PIN sees it


def test_the_addresses_a_phone_opens():
    wide = join_info(WebConfig(host="0.0.0.0", port=8080), "482913", addresses=["192.168.1.23"])
    assert wide.urls == ("http://preftable.local:8080/", "http://192.168.1.23:8080/") and not wide.local_only
    assert wide.lines()[0] == "the live table page: http://preftable.local:8080/  (PIN 482913)"
    quiet = join_info(WebConfig(host="0.0.0.0", port=8080), "1", addresses=["10.0.0.5"], announced=False)
    assert quiet.urls == ("http://10.0.0.5:8080/",)
    local = join_info(WebConfig(), "1")
    assert local.local_only and local.urls == ("http://127.0.0.1:8080/",) and "0.0.0.0:8080" in local.lines()[-1]
    assert "\u2588" in qr_terminal("http://preftable.local:8080/") or "\u2580" in qr_terminal("http://x/")


class Registrar:
    """Stands in for zeroconf.Zeroconf: records what would be announced, sends nothing."""

    made: list["Registrar"] = []

    def __init__(self):
        self.registered, self.unregistered, self.closed = [], [], False
        Registrar.made.append(self)

    def register_service(self, info, allow_name_change=False):
        self.registered.append(info)

    def unregister_service(self, info):
        self.unregistered.append(info)

    def close(self):
        self.closed = True


def test_the_table_announces_itself_as_preftable_local():
    import socket
    announcer = Announcer(8080, ["192.168.1.23"], registrar=Registrar)
    assert announcer.start()
    [registrar] = Registrar.made[-1:]
    [info] = registrar.registered
    assert info.server == "preftable.local." and info.port == 8080 and info.type == "_http._tcp.local."
    assert [socket.inet_ntoa(a) for a in info.addresses] == ["192.168.1.23"]
    announcer.close()
    assert registrar.unregistered == [info] and registrar.closed


def test_an_announcement_that_fails_leaves_the_page_up():
    def broken():
        raise OSError("no multicast here")
    assert not Announcer(8080, ["192.168.1.23"], registrar=broken).start()
    assert not Announcer(8080, [], registrar=Registrar).start()           # no LAN address: nothing to say


def test_players_named_are_saved_with_the_session_and_shown(tmp_path):
    from controller.app.service import TableService
    from controller.app.settings import Settings
    from controller.store.gamelog import SessionLog

    service = TableService(Settings(), None, tmp_path)
    session = service.open_session(new=True)
    seen = []

    class Source:
        def start(self, sink):
            service.set_names({"seat1": "  Anna  ", "seat2": "Boris"})

        def stop(self):
            pass

    class Watch:
        name, inline = "watch", True

        def receive(self, item):
            seen.append(dict(item.snapshot.names))

        def tick(self, now):
            pass

        def close(self):
            pass

    service.outputs = [Watch()]
    service.run(Source(), until=lambda: {"seat1": "Anna", "seat2": "Boris"} in seen)
    assert SessionLog(session.folder).game_config().table.names == {"seat1": "Anna", "seat2": "Boris"}
    with pytest.raises(ValueError):
        service.set_names({"seat7": "X"})
