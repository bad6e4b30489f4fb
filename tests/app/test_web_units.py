"""The live page's parts without a browser: [web] config, the PIN gate and its limiter, control
lines, escaping, the pages rendered from snapshots, past sessions."""

from __future__ import annotations

import json
import stat
import urllib.error
import urllib.request

import pytest

from conftest import cli
from controller.app.report import render_html
from controller.app.web import WebConfig, parse, start_web
from controller.app.web.server import control_event
from controller.app.web.pages import Pages, card_html
from controller.app.web.pin import GuessLimiter, PinGate, stored_pin, table_pin
from controller.core.errors import ConfigError, EventError
from controller.core.events import BUTTON

ZONES = ("seat1", "seat2", "seat3", "prikup")


# ---------------------------------------------------------------- [web]

def test_web_section_defaults_and_values():
    assert parse(None) == WebConfig(host="127.0.0.1", port=8080, pin=None, names_from_config=True)
    cfg = parse({"listen": "0.0.0.0:8081", "pin": "0042", "names_from_config": False})
    assert (cfg.host, cfg.port, cfg.pin, cfg.names_from_config) == ("0.0.0.0", 8081, "0042", False)
    assert parse({"listen": "[::]:9000"}).listen == "[::]:9000"
    assert parse({"listen": "127.0.0.1:0"}).port == 0          # any free port


@pytest.mark.parametrize("section, key", [
    ({"port": 80}, "web.port"),
    ({"listen": "8080"}, "web.listen"),
    ({"listen": "host:99999"}, "web.listen"),
    ({"listen": "[zz]:80"}, "web.listen"),
    ({"pin": 1234}, "web.pin"),
    ({"pin": "12"}, "web.pin"),
    ({"pin": "12ab"}, "web.pin"),
    ({"names_from_config": "yes"}, "web.names_from_config"),
])
def test_bad_web_sections_name_the_key(section, key):
    with pytest.raises(ConfigError) as err:
        parse(section)
    assert err.value.key == key and key in str(err.value)


# ---------------------------------------------------------------- the PIN

def test_a_pin_is_generated_once_kept_private_and_shown_to_doctor(tmp_path):
    assert stored_pin(tmp_path) is None
    pin, where = table_pin(tmp_path)
    assert pin.isdigit() and len(pin) == 6 and where.endswith("web-pin")
    assert table_pin(tmp_path) == (pin, where)
    assert stat.S_IMODE((tmp_path / "web-pin").stat().st_mode) == 0o600
    assert stored_pin(tmp_path) == pin
    assert table_pin(tmp_path, "9999") == ("9999", "config")


def test_cookies_prove_the_pin_until_they_expire_or_the_pin_changes():
    now = [1_000_000.0]
    gate = PinGate("1234", b"k" * 32, days=1, clock=lambda: now[0])
    token = gate.token()
    assert gate.valid(token)
    assert not gate.valid(token[:-1] + ("0" if token[-1] != "0" else "1"))
    assert not gate.valid(None) and not gate.valid("") and not gate.valid("x.y")
    expiry, _, mac = token.partition(".")
    assert not gate.valid(f"{int(expiry) + 10}.{mac}")        # a stretched expiry is not signed
    assert not PinGate("5678", b"k" * 32, clock=lambda: now[0]).valid(token)
    now[0] += 86400 + 1
    assert not gate.valid(token)
    assert gate.check_pin("1234") and not gate.check_pin("1235") and not gate.check_pin("")


def test_pin_guesses_are_limited_per_client_never_for_the_whole_table():
    now = [0.0]
    limiter = GuessLimiter(per_client=3, window_s=60, clock=lambda: now[0])
    for _ in range(3):
        assert limiter.retry_after("10.0.0.1") == 0
        limiter.failed("10.0.0.1")
    assert limiter.retry_after("10.0.0.1") == pytest.approx(60)
    for n in range(2, 40):                      # 76 wrong PINs from 38 other phones in the minute
        limiter.failed(f"10.0.0.{n}")
        limiter.failed(f"10.0.0.{n}")
    assert limiter.retry_after("10.0.0.99") == 0          # a new phone may still enter the PIN
    assert limiter.retry_after("10.0.0.2") == 0
    for n in range(3):                          # one machine, any address of its IPv6 /64
        limiter.failed(f"2001:db8::{n + 1}")
    assert limiter.retry_after("2001:db8::ffff") == pytest.approx(60)
    assert limiter.retry_after("2001:db8:0:1::1") == 0
    now[0] = 61
    assert limiter.retry_after("10.0.0.1") == 0


# ---------------------------------------------------------------- control lines

def test_control_lines_are_parsed_like_log_lines():
    event = control_event({"event": "button", "button": "undo"}, ZONES)
    assert event.event == BUTTON and event.button == "undo"
    for bad, words in [({"event": "button", "button": "boom"}, "button"),
                       ({"t": 3.0, "event": "button", "button": "undo"}, "'t'"),
                       ({"event": "placed", "zone": "seat1", "card": "7s"}, "readers"),
                       ({"event": "removed", "zone": "seat1", "card": "7s"}, "readers"),
                       (["button"], "object"),
                       ({"event": "button", "button": "undo", "zone": "seat1"}, "zone")]:
        with pytest.raises(EventError) as err:
            control_event(bad, ZONES)
        assert words in str(err.value)


# ---------------------------------------------------------------- pages

def state(**over) -> dict:
    base = {"seq": 5, "session": "2026-12-01T08-00-00Z", "players": 3, "seats": ["seat1", "seat2", "seat3"],
            "names": {"seat1": "<b>Anna</b>", "seat2": "Boris", "seat3": "Vera"}, "phase": "play",
            "deal": {"number": 2, "dealer": "seat1", "price": 1, "trick": 1, "expected": "seat2",
                     "current": [["prikup", "Ah"]], "taken": {"seat1": 0, "seat2": 0, "seat3": 0}, "tricks": []},
            "on_table": {"seat1": [], "seat2": [], "seat3": [], "prikup": ["Ah"]}, "last_trick": None,
            "alerts": [{"type": "out_of_turn", "zone": "seat3", "card": "7c"}],
            "pulka": {}, "settlement": {"convention": "sochi", "balance": {}}, "deals": [],
            "next_deal": {"dealer": "seat2", "price": 1}, "link": {"state": "connected", "detail": "emu-1"},
            "display": [], "leds": {"seat1": "off", "seat2": "turn", "seat3": "error"}, "beep_ms": 0}
    base.update(over)
    return base


def test_cards_have_colour_classes_and_words():
    html = str(card_html("10h"))
    assert 'class="card suit-h"' in html and "10 of hearts" in html and "10\u2665" in html
    assert "queen of spades" in str(card_html("Qs"))
    assert str(card_html("<x>")) == '<span class="card">&lt;x&gt;</span>'


def test_the_table_fragment_shows_turn_cards_alerts_and_link_with_names_escaped():
    html = Pages().part("table", state())
    assert "&lt;b&gt;Anna&lt;/b&gt;" in html and "<b>Anna</b>" not in html
    assert "Turn: <strong>Boris</strong>" in html
    assert 'data-zone="prikup"' in html and 'data-card="Ah"' in html
    assert "Vera: lift the 7\u2663, it is Boris&#39;s turn" in html and 'class="seat seat-3 led-error"' in html
    assert "Hub: connected" in html
    plain = Pages(names_from_config=False).part("table", state())
    assert "Anna" not in plain and "Turn: <strong>seat2</strong>" in plain


def test_contract_fields_and_their_controls_follow_a_real_auction():
    """Snapshots of a real tracker with bidding on (FORMATS-contracts.md lines), rendered."""
    from controller.core.config import GameConfig, Rules, Table
    from controller.core.events import control
    from controller.core.snapshot import SnapshotBuilder
    from controller.core.tracker import DealTracker

    game = GameConfig(Table(players=3, names={"seat1": "Anna", "seat2": "Boris", "seat3": "Vera"}),
                      Rules(bidding=True))
    tracker, builder, pages = DealTracker(game), SnapshotBuilder("s"), Pages(rules=game.rules)

    def view(part, authorised=True):
        return pages.part(part, builder.build(tracker, seq=0).to_dict(), authorised=authorised)

    # Between deals with bidding on, the first line of a deal is a bid: seat2 (after the dealer) is preselected.
    controls = view("controls")
    assert 'data-event="bid"' in controls and 'name="seat" value="seat2" checked' in controls
    assert 'value="10n"' in controls and 'value="misere"' in controls and 'value="pass"' in controls
    assert "Read-only" in view("controls", authorised=False)
    tracker.feed(control(1.0, "bid", "6s", "seat2"))
    table = view("table")
    assert "Call: <strong>Vera</strong>" in table and "bid to beat" in table and "6 spades" in table
    assert 'name="seat" value="seat3" checked' in view("controls")
    tracker.feed(control(2.0, "bid", "pass", "seat3"))
    tracker.feed(control(3.0, "bid", "pass", "seat1"))
    controls = view("controls")
    assert 'data-event="contract"' in controls and 'data-event="bid"' not in controls
    assert "Call: <strong>Boris</strong>" in view("table")
    tracker.feed(control(4.0, "contract", "7h", "seat2"))
    table = view("table")
    assert "7 hearts" in table and "trumps" in table and "declarer 7, whisters 2 tricks" in table
    controls = view("controls")
    assert 'data-event="whist"' in controls and 'name="seat" value="seat3" checked' in controls
    tracker.feed(control(5.0, "whist", "whist", "seat3"))
    assert "Vera whist" in view("table")


def test_the_report_page_is_the_live_pulka_and_self_contained():
    summary = {"deals": [], "pulka": {s: {"gora": 0, "pulya": 0, "whists": {}} for s in ("seat1", "seat2", "seat3")}}
    page = render_html(summary, {"seat1": "<i>A</i>"})
    assert "<i>A</i>" not in page and "&lt;i&gt;A&lt;/i&gt;" in page
    assert "prefers-color-scheme: dark" in page and 'name="viewport"' in page
    assert "http://" not in page.replace('xmlns="http://www.w3.org/2000/svg"', "")
    assert 'href="' not in page and "<script" not in page and "<link" not in page
    live = Pages().pulka_html(state(names={"seat1": "<i>A</i>"}))
    assert str(live) in page                              # the same sections on both


# ---------------------------------------------------------------- the server, by plain HTTP

def http(url: str, data: bytes | None = None, headers=None):
    request = urllib.request.Request(url, data=data, headers=headers or {}, method="POST" if data else "GET")
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as err:
        return err.code, dict(err.headers), err.read()


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kw):
        return None


@pytest.fixture
def server(tmp_path):
    submitted = []
    output = start_web(WebConfig(port=0, pin="2468"), submit=submitted.append, log_dir=tmp_path, zones=ZONES)
    output.server.publish(state())
    output.submitted = submitted
    yield output
    output.close()


def test_api_state_serves_the_snapshot_and_control_needs_the_pin(server):
    base = server.server.url.rstrip("/")
    # publish() is asynchronous: wait until the web loop has taken the state.
    for _ in range(200):
        status, headers, body = http(base + "/api/state")
        if json.loads(body)["seq"] == 5:
            break
    assert status == 200 and json.loads(body)["names"]["seat1"] == "<b>Anna</b>"
    assert "script-src 'self'" in headers["Content-Security-Policy"]
    line = json.dumps({"event": "button", "button": "new_deal"}).encode()
    assert http(base + "/api/control", line, {"Content-Type": "application/json"})[0] == 401
    opener = urllib.request.build_opener(_NoRedirect)
    try:
        opener.open(urllib.request.Request(base + "/pin", data=b"pin=2468&next=/history", method="POST"),
                    timeout=10)
    except urllib.error.HTTPError as err:
        assert err.code == 303 and err.headers["Location"] == "/history"
        cookie = err.headers["Set-Cookie"]
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie and "Max-Age=" in cookie
    token = cookie.split(";")[0]
    status, _, body = http(base + "/api/control", line, {"Content-Type": "application/json", "Cookie": token})
    assert status == 202 and json.loads(body)["line"] == {"event": "button", "button": "new_deal"}
    assert [e.button for e in server.submitted] == ["new_deal"]
    assert http(base + "/api/control", line, {"Content-Type": "text/plain", "Cookie": token})[0] == 415
    assert http(base + "/api/control", b"{", {"Content-Type": "application/json", "Cookie": token})[0] == 400
    assert http(base + "/api/control", b" " * 5000, {"Content-Type": "application/json", "Cookie": token})[0] == 413


def test_wrong_pins_are_rate_limited(server):
    base = server.server.url.rstrip("/")
    codes = [http(base + "/pin", json.dumps({"pin": "0000"}).encode(), {"Content-Type": "application/json"})[0]
             for _ in range(7)]
    assert codes[:5] == [401] * 5 and codes[5:] == [429, 429]
    status, headers, _ = http(base + "/pin", json.dumps({"pin": "2468"}).encode(),
                              {"Content-Type": "application/json"})
    assert status == 429 and int(headers["Retry-After"]) > 0     # even the right PIN waits now


def test_sessions_list_their_pulka_and_events_and_refuse_other_paths(tmp_path):
    from controller.core.config import GameConfig, Table
    from controller.store.gamelog import SessionLog
    from table_script import Script

    game = GameConfig(Table(players=3, names={"seat1": "Anna"}))
    log = SessionLog.create(tmp_path, game, None)
    script = Script(game)
    signals = script.lay("prikup", "7s")
    log.append(script.events[-1], signals)
    log.close()
    output = start_web(WebConfig(port=0, pin="2468"), submit=lambda e: None, log_dir=tmp_path, zones=ZONES)
    try:
        base = output.server.url.rstrip("/")
        status, _, body = http(base + "/sessions")
        name = log.folder.name
        assert status == 200 and name in body.decode() and "not finished" in body.decode()
        status, _, body = http(f"{base}/sessions/{name}/pulka")
        assert status == 200 and "Anna" in body.decode() and "<svg" in body.decode()
        status, headers, body = http(f"{base}/sessions/{name}/events.jsonl")
        assert status == 200 and "attachment" in headers["Content-Disposition"]
        assert body == (log.folder / "events.jsonl").read_bytes()
        assert http(f"{base}/sessions/..%2F..%2Fetc/events.jsonl")[0] == 404
        assert http(f"{base}/sessions/nope/pulka")[0] == 404
    finally:
        output.close()


def test_an_address_in_use_is_one_clear_error(tmp_path, server):
    from controller.app.web import WebError
    host, port = server.server.bound
    with pytest.raises(WebError) as err:
        start_web(WebConfig(port=port), submit=lambda e: None, log_dir=tmp_path, zones=ZONES)
    assert str(port) in str(err.value) and "in use" in str(err.value)


def test_demo_web_serves_the_page_and_a_taken_port_is_one_line_and_status_2(tmp_path):
    """The bad ports through ``main`` in this process (exit status and stderr as a child's); the
    page served by a demo on a virtual clock."""
    import io
    import socket

    from controller.app.demo import run_demo
    from controller.core.clock import VirtualClock
    from controller.core.config import GameConfig

    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen()
    try:
        port = taken.getsockname()[1]
        run = cli(["demo", "--deals", "1", "--web", str(port), "--log-dir", str(tmp_path / "a")])
        assert run.returncode == 2 and run.stderr.count("\n") == 1 and "in use" in run.stderr
        assert not list((tmp_path / "a").glob("*/events.jsonl"))           # no session left behind
    finally:
        taken.close()
    run = cli(["demo", "--web", "70000"])
    assert run.returncode == 2 and "0-65535, got 70000" in run.stderr and "Traceback" not in run.stderr
    out = io.StringIO()
    result = run_demo(deals=1, speed=8, seed=3, log_dir=tmp_path / "b", game=GameConfig(), stream=out, web_port=0,
                      clock=VirtualClock())
    assert "the live table page: http://127.0.0.1:" in out.getvalue() and "PIN " in out.getvalue()
    assert len(result["summary"]["deals"]) >= 1


# ---------------------------------------------------------------- the club page

def test_the_club_page_draws_contracts_misere_and_raspasovka_from_the_lean_state():
    """A real tracker with bidding on, through the state topic's payload (mqtt.board_state) and the
    board's view of it, rendered as /club renders it; the terminal row says the same."""
    from controller.app.club import TableView
    from controller.app.mqtt import board_state
    from controller.app.web.board import BoardPages
    from controller.core.config import GameConfig, Rules, Table
    from controller.core.events import control
    from controller.core.snapshot import SnapshotBuilder
    from controller.core.tracker import DealTracker

    game = GameConfig(Table(players=3, names={"seat1": "Anna", "seat2": "Boris", "seat3": "<i>Vera</i>"}),
                      Rules(bidding=True))
    tracker, builder, pages = DealTracker(game), SnapshotBuilder("s"), BoardPages()

    def shown():
        view = TableView("t7", status="online", snapshot=board_state(builder.build(tracker, seq=1)))
        board = {"seq": 1, "tables": [view.board()], "bad": {"not JSON": 2}, "bad_total": 2}
        return view, pages.part("club", board)

    view, html = shown()
    assert "between deals (0 played)" in html and "Anna deals, price 1" in html
    assert "bad messages: 2" in html and "not JSON 2" in html
    tracker.feed(control(1.0, "bid", "6s", "seat2"))
    view, html = shown()
    assert "auction" in html and view.board()["deal"]["contract"] == "auction, bid to beat 6s"
    tracker.feed(control(2.0, "bid", "7h", "seat3"))
    tracker.feed(control(3.0, "bid", "pass", "seat1"))
    tracker.feed(control(4.0, "bid", "pass", "seat2"))
    tracker.feed(control(5.0, "contract", "7h", "seat3"))
    view, html = shown()
    assert "7 hearts" in html and "declarer &lt;i&gt;Vera&lt;/i&gt;" in html and "trumps" in html
    assert ">hearts<" in html and "<i>" not in html
    assert view.row()[4] == "7h by <i>Vera</i>"                 # the terminal board: the same contract
    board = view.board()
    assert board["deal"]["declarer"] == "seat3" and board["deal"]["trump"] == "h"
    assert [p["seat"] for p in board["pulka"]] == ["seat1", "seat2", "seat3"]

    misere = TableView("t8", snapshot={"seats": ["seat1", "seat2", "seat3"], "names": {"seat2": "Boris"},
                                       "phase": "play", "deals_played": 4,
                                       "deal": {"number": 5, "kind": "misere", "declarer": "seat2",
                                                "game": "misere", "trick": 3, "taken": {}}})
    html = pages.part("club", {"tables": [misere.board()], "bad": {}, "bad_total": 0})
    assert "misère · declarer Boris" in html and "trick 3" in html and "no bad messages" in html
    raspasy = TableView("t9", snapshot={"seats": ["seat1", "seat2", "seat3"], "phase": "play",
                                        "deal": {"number": 2, "dealer": "seat1", "trick": 1, "taken": {}}})
    assert raspasy.board()["deal"]["contract"] == "raspasovka" and raspasy.row()[4] == "raspasovka"


def test_the_board_server_pulls_the_board_when_told_and_streams_it():
    """BoardServer: ``changed()`` (from the board's thread) makes it take a fresh copy, which the
    JSON endpoint and the event stream then serve; it has no POST route and no unknown parts."""
    import threading

    from controller.app.web.board import start_board

    board = {"seq": 1, "tables": [], "bad": {}, "bad_total": 0}
    lock = threading.Lock()

    def source():
        with lock:
            return json.loads(json.dumps(board))

    page = start_board(source, "127.0.0.1", 0, prefix="preftable", broker="mqtt://127.0.0.1:1")
    try:
        base = page.url.rstrip("/")
        stream = urllib.request.urlopen(base + "/api/club/events", timeout=20)
        assert stream.headers["Content-Type"].startswith("text/event-stream")

        def next_state() -> dict:
            """The data of the next ``event: state`` the stream sends (read as it comes)."""
            event = None
            while True:
                line = stream.readline().decode().strip()
                if line.startswith("event:"):
                    event = line.split(":", 1)[1].strip()
                elif line.startswith("data:") and event == "state":
                    return json.loads(line.split(":", 1)[1])

        first = next_state()
        assert first["tables"] == []
        with lock:
            board.update(seq=2, tables=[{"table": "t1", "status": "online", "players": [], "pulka": [],
                                         "deal": None, "known": False, "next_deal": {}, "mirror": None}],
                         bad={"not JSON": 1}, bad_total=1)
        page.changed()
        while (got := next_state())["seq"] != 2:
            pass
        assert got["tables"][0]["table"] == "t1" and got["bad_total"] == 1
        stream.close()
        status, _, body = http(base + "/api/club")
        assert status == 200 and json.loads(body)["seq"] == 2
        status, headers, body = http(base + "/club")
        assert status == 200 and 'data-table="t1"' in body.decode() and "bad messages: 1" in body.decode()
        assert 'data-events="/api/club/events"' in body.decode() and "<form" not in body.decode()
        assert headers["X-Content-Type-Options"] == "nosniff"
        assert http(base + "/api/club/events?parts=table")[0] == 400
        assert http(base + "/club", data=b"x")[0] == 405
        assert http(base + "/api/control", data=b"{}")[0] in (404, 405)
    finally:
        page.stop()
