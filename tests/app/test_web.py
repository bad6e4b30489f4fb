"""The live table page in a real browser: Debian's Chromium, driven by Playwright.

The table is real (emulated hub on a pty, the host link, the service loop, the bus, the web
server on its own thread); only the players are simulated.  Every wait is on the DOM, on a
file's contents or on the emulated hub's LEDs, bounded only against a hang: no test here
measures how long the page took (the latency from the hub's SEEN frame to the page is
bench/'s to measure on the table's own hardware, never a test's to assert on a loaded box).
"""

from __future__ import annotations

import json
import os
import re
import socket
import threading
import urllib.error
import urllib.request

import pytest

from controller.app.sim import Noise, TableSimulator
from web_table import CHROMIUM, LiveTable, shot, wait_live

from conftest import eventually

pytestmark = [pytest.mark.skipif(not os.path.exists(CHROMIUM), reason="Debian's chromium is not installed"),
              pytest.mark.timeout(180)]

sync_api = pytest.importorskip("playwright.sync_api")

NAMES = {"seat1": "Anna", "seat2": "<script>alert(1)</script>", "seat3": "Vera & Co"}


@pytest.fixture
def page(browser):
    page = browser.new_page()
    dialogs: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    page.dialogs = dialogs
    yield page
    page.close()


@pytest.fixture
def table(tmp_path):
    live = LiveTable(tmp_path / "logs", names=NAMES)
    yield live
    live.close()


def unlock(page, table) -> None:
    """Enter the PIN in the page's form, as a player does once per phone."""
    page.get_by_label("Table PIN").fill(table.pin)
    page.get_by_role("button", name="Unlock").click()
    page.wait_for_selector("form[data-event=button]")


def test_a_card_laid_is_on_the_page_once_the_hub_has_sent_its_seen_frame(page, table):
    page.goto(table.url)
    wait_live(page)
    uid = table.lay("prikup", "7s")       # a raspasovka opens with the prikup's card
    # The hub reports a tag after two polls; then pty -> link -> loop -> bus -> web loop -> SSE ->
    # Chromium bring it to the page, with no reload.
    assert table.hub.wait_seen(uid, 20) is not None, "the emulated hub never sent SEEN"
    page.wait_for_selector('[data-zone="prikup"] [data-card="7s"]', timeout=60_000)   # bounds a hang only
    assert "7 of spades" in page.inner_text('[data-zone="prikup"]')


def table_events_logged(table) -> int:
    return sum(1 for line in table.events_text().splitlines() if line.strip() and '"kind"' not in line)


def test_a_whole_deal_gives_the_page_the_summary_trick_counts(page, table):
    sim = TableSimulator(table.game, seed=3, deck=table.deck, noise=Noise())
    events = list(sim.deal())
    page.goto(table.url.rstrip("/") + "/history")
    wait_live(page)
    # Move by move, each one reported by the hub's firmware at once (flip) and logged before the
    # next: the players' order is kept however loaded the machine is (no race on real time).
    reader = {zone: i for i, zone in enumerate(table.zones)}
    for count, event in enumerate(events, start=1):
        table.hub.flip(reader[event.zone], event.uid if event.event == "placed" else None)
        eventually(lambda: table_events_logged(table) >= count, 30, interval=0.01)
        assert table_events_logged(table) == count, f"move {count} ({event}) was not logged"
    # The deal's entry appears on the history page by the live stream when the deal ends.
    page.wait_for_selector('details[data-deal="1"]', timeout=60_000)
    shown = {seat: int(page.inner_text(f'details[data-deal="1"] [data-taken="{seat}"]')) for seat in table.seats}
    # The summary of the same moves fed straight to a tracker of their own (no hub, no service).
    from controller.core.tracker import DealTracker
    direct = DealTracker(table.game, table.deck)
    direct.feed_all(events)
    summary = direct.summary()
    assert summary["deals"][0]["complete"]
    assert shown == summary["deals"][0]["taken"]
    assert sum(shown.values()) == 10
    page.click('details[data-deal="1"] summary')
    assert page.locator('details[data-deal="1"] ol.tricks li').count() == 10


def post_control(url: str, line: dict, cookie: str | None = None) -> tuple[int, dict]:
    request = urllib.request.Request(url.rstrip("/") + "/api/control", data=json.dumps(line).encode(),
                                     headers={"Content-Type": "application/json",
                                              **({"Cookie": cookie} if cookie else {})}, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.load(response)
    except urllib.error.HTTPError as err:
        return err.code, json.load(err)


def wait_for_line(table, needle: str, timeout: float = 20.0) -> bool:
    return eventually(lambda: needle in table.events_text(), timeout, interval=0.05)


def test_control_without_the_pin_is_refused_and_with_it_reaches_the_game_log(page, table):
    page.goto(table.url)
    wait_live(page)
    # Read-only: no buttons on the page, and the API answers 401.
    assert page.locator("form[data-event=button]").count() == 0
    status, answer = post_control(table.url, {"event": "button", "button": "undo"})
    assert status == 401 and "PIN" in answer["error"]
    # A wrong PIN is refused too.
    page.get_by_label("Table PIN").fill("0000")
    page.get_by_role("button", name="Unlock").click()
    page.wait_for_selector("text=Wrong PIN")
    assert page.locator("form[data-event=button]").count() == 0
    with page.expect_response(lambda r: r.request.method == "POST" and r.header_value("set-cookie")) as unlocked:
        unlock(page, table)
    # a phone keeps the PIN for more than a day: the server's Max-Age, not the clock's date
    max_age = re.search(r"max-age=(\d+)", unlocked.value.header_value("set-cookie"), re.I)
    assert max_age and int(max_age.group(1)) > 86400
    cookie = next(c for c in page.context.cookies() if c["name"] == "preftable_pin")
    assert cookie["httpOnly"] and cookie["expires"] != -1          # kept, not a session cookie
    page.get_by_role("button", name="Confirm").click()
    page.wait_for_selector("#control-status:has-text('sent')")
    assert wait_for_line(table, '"event": "button", "button": "confirm"')
    lines = [json.loads(x) for x in table.events_text().splitlines() if x.strip()]
    button = [x for x in lines if x.get("event") == "button"]
    assert button[-1]["button"] == "confirm" and isinstance(button[-1]["t"], float)
    # Bad lines are refused with the field named, and nothing reaches the log.
    token = f"preftable_pin={cookie['value']}"
    assert post_control(table.url, {"event": "button", "button": "explode"}, token)[0] == 400
    status, answer = post_control(table.url, {"t": 1, "event": "button", "button": "undo"}, token)
    assert status == 400 and "'t'" in answer["error"]
    status, answer = post_control(table.url, {"event": "placed", "zone": "seat1", "card": "7s"}, token)
    assert status == 400 and "readers" in answer["error"]
    assert sum(1 for x in table.events_text().splitlines() if '"button"' in x) == 1


def no_overflow(page) -> dict:
    return page.evaluate("""() => ({scroll: document.documentElement.scrollWidth,
                                     client: document.documentElement.clientWidth,
                                     // a wide table scrolls inside its own box (.table-scroll): the box
                                     // must fit, what it scrolls may be wider
                                     widest: Math.max(...[...document.querySelectorAll('body *')]
                                                      .filter(e => !e.closest('.table-scroll > *'))
                                                      .map(e => e.getBoundingClientRect().right))})""")


@pytest.mark.parametrize("width, players", [(360, 3), (1280, 3), (360, 4)])
def test_no_horizontal_overflow_and_screenshots(page, tmp_path, width, players):
    names = dict(NAMES, seat4="Grigory Aleksandrovich Pechorin") if players == 4 else NAMES
    table = LiveTable(tmp_path / "logs", names=names, players=players)
    try:
        check_no_overflow(page, table, width)
    finally:
        table.close()


def check_no_overflow(page, table, width):
    page.set_viewport_size({"width": width, "height": 800})
    page.goto(table.url)
    wait_live(page)
    unlock(page, table)
    table.lay("prikup", "10h")
    page.wait_for_selector('[data-zone="prikup"] [data-card="10h"]', timeout=20_000)
    table.lay("seat3", "Qd")                  # out of turn (seat2 is to play): an alert to confirm
    page.wait_for_selector('[data-zone="seat3"] [data-card="Qd"]', timeout=20_000)
    page.wait_for_selector(".alerts")
    for path in ("/", "/pulka", "/history", "/sessions"):
        page.goto(table.url.rstrip("/") + path)
        page.wait_for_load_state("load")
        measured = no_overflow(page)
        assert measured["scroll"] <= measured["client"], (path, measured)
        assert measured["widest"] <= measured["client"] + 0.5, (path, measured)
        name = "table" if path == "/" else path.strip("/")
        shot(page, f"{name}-{width}-p{len(table.seats)}")


def test_a_player_called_script_is_shown_as_text(page, table):
    page.goto(table.url)
    wait_live(page)
    seat2 = page.inner_text('[data-zone="seat2"] .name')
    assert seat2 == NAMES["seat2"]
    assert page.inner_text('[data-zone="seat3"] .name') == "Vera & Co"
    # The name is text in the DOM: no script element came from it, and no dialog opened.
    assert page.evaluate("document.querySelectorAll('script').length") == 1
    table.lay("seat2", "8c")
    page.wait_for_selector('[data-zone="seat2"] [data-card="8c"]', timeout=20_000)
    assert page.inner_text('[data-zone="seat2"] .name') == NAMES["seat2"]
    page.goto(table.url.rstrip("/") + "/pulka")
    assert NAMES["seat2"] in page.inner_text("#settlement")
    assert page.dialogs == []


def test_killing_the_web_listener_leaves_the_table_running(page, table):
    page.goto(table.url)
    wait_live(page)
    listener = table.web.server.socket
    # Kill the listening socket under the web server (as a crashed or firewalled server would).
    listener.shutdown(socket.SHUT_RDWR)
    with pytest.raises(OSError):
        urllib.request.urlopen(table.url, timeout=5)
    # The table plays on: the log grows and the hub's LED of the seat to play lights.
    assert table.hub.leds.get(1) != "00C000"
    uid = table.lay("prikup", "9d")
    assert table.hub.wait_seen(uid, 20) is not None
    assert wait_for_line(table, '"zone": "prikup", "event": "placed"')
    eventually(lambda: table.hub.leds.get(1) == "00C000", 20)           # seat2 to play: green
    assert table.hub.leds.get(1) == "00C000"
    assert table.thread.is_alive() and table.service.tracker.deal.expected == "seat2"


def ax_controls(page) -> list[dict]:
    """The controls in Chromium's own accessibility tree (what a screen reader gets), over CDP."""
    cdp = page.context.new_cdp_session(page)
    nodes = cdp.send("Accessibility.getFullAXTree")["nodes"]
    roles = ("button", "combobox", "textbox", "link", "listbox", "checkbox", "radio")
    return [{"role": n["role"]["value"], "name": (n.get("name") or {}).get("value", "")}
            for n in nodes if not n.get("ignored") and n.get("role", {}).get("value") in roles]


def test_the_accessibility_tree_labels_every_control(page, table):
    page.goto(table.url)
    wait_live(page)
    locked = ax_controls(page)
    assert {"name": "Table PIN (to enter bids and buttons)", "role": "textbox"} in locked
    unlock(page, table)
    controls = ax_controls(page)
    assert {n["name"] for n in controls if n["role"] == "button"} >= {"Undo", "Confirm", "New deal"}
    assert {n["name"] for n in controls if n["role"] == "link"} >= {"Table", "Pulka", "History", "Sessions"}
    assert all(n["name"].strip() for n in locked + controls), [n for n in controls if not n["name"].strip()]
    # The check itself works: an unlabelled input is reported.
    page.evaluate("() => document.body.appendChild(document.createElement('input'))")
    assert any(n["role"] == "textbox" and not n["name"] for n in ax_controls(page))


def test_the_accessibility_tree_labels_the_contract_controls(page, tmp_path):
    from controller.core.config import Rules

    table = LiveTable(tmp_path / "logs", rules=Rules(bidding=True))
    try:
        page.goto(table.url)
        wait_live(page)
        unlock(page, table)
        controls = ax_controls(page)
        # the auction's result in two taps (a seat, a game) and the bids: chips and buttons, each named
        assert {"role": "radio", "name": "seat2"} in controls and {"role": "button", "name": "6 spades"} in controls
        assert {"role": "button", "name": "misère"} in controls
        assert all(n["name"].strip() for n in controls), [n for n in controls if not n["name"].strip()]
    finally:
        table.close()


@pytest.mark.parametrize("width", [360, 1280])
def test_the_reports_pulka_html_is_the_same_responsive_page_from_a_file(page, tmp_path, width):
    from controller.app.report import write_report
    from controller.core.config import GameConfig, Table
    from controller.core.tracker import DealTracker

    game = GameConfig(Table(players=3, names={"seat1": "Anna Karenina-Vronskaya", "seat2": "Boris", "seat3": "Vera"}))
    sim = TableSimulator(game, seed=12, noise=Noise())
    tracker = DealTracker(game)
    for event in sim.deals(4):
        tracker.feed(event)
    paths = write_report(tracker.report_summary(), tmp_path, names=dict(game.table.names))
    fetched: list[str] = []
    page.on("request", lambda request: fetched.append(request.url))
    page.set_viewport_size({"width": width, "height": 800})
    page.goto(paths["html"].as_uri())
    page.wait_for_load_state("load")
    assert [url for url in fetched if not url.startswith("file:")] == []      # nothing from elsewhere
    measured = no_overflow(page)
    assert measured["scroll"] <= measured["client"] and measured["widest"] <= measured["client"] + 0.5, measured
    svg = page.locator("figure svg").bounding_box()
    assert svg["width"] <= width and svg["width"] >= min(width, 760) - 60     # the sheet uses the width
    assert page.locator("#settlement tr").count() == 4 and page.locator("#deals tr").count() == 5
    shot(page, f"pulka-html-{width}")


def test_dark_mode_is_followed(page, table):
    page.emulate_media(color_scheme="dark")
    page.set_viewport_size({"width": 360, "height": 800})
    page.goto(table.url)
    wait_live(page)
    table.lay("prikup", "Kh")
    page.wait_for_selector('[data-zone="prikup"] [data-card="Kh"]', timeout=20_000)
    background = page.evaluate("getComputedStyle(document.body).backgroundColor")
    text = page.evaluate("getComputedStyle(document.body).color")
    assert background == "rgb(18, 21, 27)" and text == "rgb(230, 230, 230)"
    shot(page, "table-dark-360")
    page.emulate_media(color_scheme="light")
    assert page.evaluate("getComputedStyle(document.body).backgroundColor") == "rgb(246, 244, 238)"


def test_a_stuck_web_server_does_not_delay_the_table(page, table):
    page.goto(table.url)
    wait_live(page)
    stuck, release = threading.Event(), threading.Event()

    def hang() -> None:            # the web loop blocks, as a server stuck in a slow call would
        stuck.set()
        release.wait(60)

    table.web.server._loop.call_soon_threadsafe(hang)
    assert stuck.wait(10)
    try:
        uid = table.lay("prikup", "Jc")
        assert table.hub.wait_seen(uid, 20) is not None
        # While the web loop cannot run at all, the card is logged and the seat's LED lights.
        assert wait_for_line(table, '"zone": "prikup", "event": "placed"')
        eventually(lambda: table.hub.leds.get(1) == "00C000", 20)
        assert table.hub.leds.get(1) == "00C000"
        assert not release.is_set() and page.locator('[data-card="Jc"]').count() == 0
    finally:
        release.set()
    # Let go, the page catches up with the newest state.
    page.wait_for_selector('[data-zone="prikup"] [data-card="Jc"]', timeout=20_000)


def test_the_auction_entered_from_the_page_is_logged_as_the_tokens_lines(page, tmp_path):
    from controller.core.config import Rules

    table = LiveTable(tmp_path / "logs", names={"seat1": "Anna", "seat2": "Boris", "seat3": "Vera"},
                      rules=Rules(bidding=True))
    try:
        page.goto(table.url)
        wait_live(page)
        unlock(page, table)
        # seat2 (after the dealer) opens the auction: the page preselects whose call it is.
        page.click("#bid-form >> xpath=.. >> summary")          # "…or enter the auction bid by bid"
        assert page.locator("#bid-form input[name=seat]:checked").input_value() == "seat2"
        page.click("#bid-form button[value='6s']")
        page.wait_for_selector("#turn:has-text('Vera')")
        for seat in ("seat3", "seat1"):
            assert page.locator("#bid-form input[name=seat]:checked").input_value() == seat
            page.click("#bid-form button[value='pass']")
            page.wait_for_selector(f"#turn:has-text('{'Anna' if seat == 'seat3' else 'Boris'}')")
        page.wait_for_selector("form[data-event=contract]")
        assert not page.locator("#contract-form button[value='6s']").is_disabled()  # the winning bid
        assert page.locator("#contract-form button[value='misere']").count() == 0  # never after a game
        page.click("#contract-form button[value='7h']")
        page.wait_for_selector("form[data-event=whist]")
        assert "trumps" in page.inner_text("#table") and "hearts" in page.inner_text("#table")
        assert page.locator("#whist-form input[name=seat]:checked").input_value() == "seat3"
        page.click("#whist-form button[value='whist']")
        assert wait_for_line(table, '"event": "whist", "seat": "seat3", "call": "whist"')
        lines = [json.loads(x) for x in table.events_text().splitlines() if x.strip()]
        entered = [{k: v for k, v in x.items() if k != "t"} for x in lines if "kind" not in x]
        assert entered == [{"event": "bid", "seat": "seat2", "bid": "6s"},
                           {"event": "bid", "seat": "seat3", "bid": "pass"},
                           {"event": "bid", "seat": "seat1", "bid": "pass"},
                           {"event": "contract", "seat": "seat2", "game": "7h"},
                           {"event": "whist", "seat": "seat3", "call": "whist"}]
        # The tracker's own derived lines followed, as for lines from tokens.
        assert any(x.get("kind") == "auction" and x.get("declarer") == "seat2" for x in lines)
    finally:
        table.close()
