"""The phone as the table's remote, in a real browser at a phone's size (390x844): Debian's
Chromium driven by Playwright, on a real table (emulated hub on a pty, host link, service,
web server).  Every control is a control line of FORMATS.md / FORMATS-contracts.md, the
same a token or a button makes; names and closing the pulka go to the service as its held
button does.  Screenshots go to ``PREFTABLE_SCREENS`` (default /work/wt/screens) when that
folder exists, for the people reviewing the page.
"""

from __future__ import annotations

import json
import tomllib
import os

import pytest

from web_table import CHROMIUM, LiveTable, shot, wait_live
from conftest import eventually

pytestmark = [pytest.mark.skipif(not os.path.exists(CHROMIUM), reason="Debian's chromium is not installed"),
              pytest.mark.timeout(180)]

sync_api = pytest.importorskip("playwright.sync_api")

PHONE = {"width": 390, "height": 844}


@pytest.fixture
def page(browser):
    page = browser.new_page()
    page.set_viewport_size(PHONE)
    yield page
    page.close()


@pytest.fixture
def table(tmp_path):
    from controller.core.config import Rules
    live = LiveTable(tmp_path / "logs", rules=Rules(bidding=True))
    yield live
    live.close()


def unlock(page, table) -> None:
    page.get_by_label("Table PIN").fill(table.pin)
    page.get_by_role("button", name="Unlock").click()
    page.wait_for_selector("form[data-event=button]")


def entered(table) -> list[dict]:
    """The table-event lines of the session's log, without their times."""
    lines = [json.loads(x) for x in table.events_text().splitlines() if x.strip()]
    return [{k: v for k, v in x.items() if k != "t"} for x in lines if "kind" not in x]


def wait_until(check, timeout: float = 20.0) -> bool:
    """Whether ``check`` came true within ``timeout`` (the callers assert it, naming what)."""
    return bool(eventually(check, timeout))


def posted(page, action) -> tuple[dict, int]:
    """The JSON body the page posts to /api/control while ``action()`` runs, and the answer's status."""
    with page.expect_request("**/api/control") as request_info:
        action()
    request = request_info.value
    return json.loads(request.post_data), request.response().status


def test_an_auction_a_whist_and_the_whist_mode_from_the_phone_are_the_tokens_lines(page, table):
    page.goto(table.url)
    wait_live(page)
    unlock(page, table)
    # the players' names, saved with the session and shown at once
    page.click("#names-form >> xpath=.. >> summary")
    for seat, name in (("seat1", "Anna"), ("seat2", "Boris"), ("seat3", "Vera")):
        page.fill(f"#name-{seat}", name)
    page.click("#names-form button[type=submit]")
    page.wait_for_selector("#table .name:has-text('Boris')")
    saved = tomllib.loads((table.session.folder / "config.toml").read_text(encoding="utf-8"))
    assert saved["table"]["names"] == {"seat1": "Anna", "seat2": "Boris", "seat3": "Vera"}
    # the auction bid by bid: whose call it is is preselected, one tap a bid
    page.click("#bid-form >> xpath=.. >> summary")
    page.click("#bid-form button[value='6s']")
    page.wait_for_selector("#turn:has-text('Vera')")
    page.click("#bid-form button[value='pass']")
    page.wait_for_selector("#turn:has-text('Anna')")
    shot(page, "remote-1-auction")
    page.click("#bid-form button[value='pass']")
    page.wait_for_selector("#contract-form")
    page.click("#contract-form button[value='6s']")
    page.wait_for_selector("#whist-form")
    page.click("#whist-form button[value='whist']")            # seat3, preselected
    page.wait_for_selector("#whist-form input[value=seat1]:checked")
    shot(page, "remote-2-whist")
    page.click("#whist-form button[value='pass']")
    page.wait_for_selector("#whist-mode-form")
    page.click("#whist-mode-form button[value='open']")
    assert wait_until(lambda: {"event": "whist_mode", "mode": "open"} in entered(table))
    assert entered(table) == [{"event": "bid", "seat": "seat2", "bid": "6s"},
                              {"event": "bid", "seat": "seat3", "bid": "pass"},
                              {"event": "bid", "seat": "seat1", "bid": "pass"},
                              {"event": "contract", "seat": "seat2", "game": "6s"},
                              {"event": "whist", "seat": "seat3", "call": "whist"},
                              {"event": "whist", "seat": "seat1", "call": "pass"},
                              {"event": "whist_mode", "mode": "open"}]
    # every touch target is at least 44 px tall at a phone's size, and nothing scrolls sideways
    small = page.evaluate("""() => Array.from(document.querySelectorAll('#controls button, #controls .chip span'))
        .filter(e => e.offsetParent !== null && e.getBoundingClientRect().height < 44).length""")
    assert small == 0
    assert page.evaluate("() => document.documentElement.scrollWidth") <= PHONE["width"]


def logged(table, kind: str) -> dict:
    """The last derived line of this kind in the session's log (empty before there is one)."""
    lines = [json.loads(line) for line in table.events_text().splitlines() if line.strip()]
    return next((line for line in reversed(lines) if line.get("kind") == kind), {})


def test_a_claim_offers_only_valid_sums_and_posts_the_contracts_line(page, table):
    from controller.core.events import control

    for i, (event, value, seat) in enumerate([("bid", "6s", "seat2"), ("bid", "pass", "seat3"),
                                              ("bid", "pass", "seat1"), ("contract", "6s", "seat2"),
                                              ("whist", "whist", "seat3"), ("whist", "whist", "seat1")]):
        table.service.submit(control(0.0, event, value, seat))
    page.goto(table.url)
    wait_live(page)
    unlock(page, table)
    page.wait_for_selector("#claim-form", state="attached")
    page.click("#claim-form >> xpath=.. >> summary")
    assert page.get_attribute("#claim-form", "data-left") == "10"
    page.click("#claim-form fieldset[data-seat=seat2] label:has-text('7')")
    # the first defender may take at most the 3 the declarer leaves; the last seat takes the rest
    offered = page.evaluate("""() => Array.from(document.querySelectorAll(
        '#claim-form fieldset[data-seat=seat3] input')).filter(i => !i.disabled).map(i => i.value)""")
    assert offered == ["0", "1", "2", "3"]
    page.click("#claim-form fieldset[data-seat=seat3] label:has-text('2')")
    assert page.inner_text("#claim-form output.rest") == "1"
    shot(page, "remote-3-claim")
    body, status = posted(page, lambda: page.click("#claim-form button[type=submit]"))
    assert body == {"event": "claim", "tricks": {"seat2": 7, "seat3": 2, "seat1": 1}}
    assert status == 202
    assert wait_until(lambda: {"kind": "claim", "state": "waiting"}.items() <= logged(table, "claim").items())


def test_the_auctions_result_in_two_taps_posts_the_result_line(page, table):
    page.goto(table.url)
    wait_live(page)
    unlock(page, table)
    page.click("#result-form label:has-text('seat2')")            # tap 1: who won
    body, status = posted(page, lambda: page.click("#result-form button[value='8h']"))     # tap 2: the game
    assert body == {"event": "result", "seat": "seat2", "game": "8h"}
    assert status == 202
    assert wait_until(lambda: logged(table, "auction").get("result") == "contract")


def test_closing_the_pulka_from_the_phone_writes_its_summary_and_starts_a_new_one(page, table):
    first = table.session.folder
    table.lay("prikup", "7s")                                  # a deal begun: the pulka has a deal
    assert wait_until(lambda: '"card"' in table.events_text() or '"uid"' in table.events_text())
    page.goto(table.url)
    wait_live(page)
    unlock(page, table)
    page.click("#close-form >> xpath=.. >> summary")
    page.check("#close-form input[name=sure]")
    page.click("#close-form button[type=submit]")
    assert wait_until(lambda: (first / "summary.json").exists())
    page.wait_for_function(f"() => document.body.dataset.session !== {json.dumps(first.name)}")
    summary = json.loads((first / "summary.json").read_text(encoding="utf-8"))
    assert "pulka" in summary and "settlement" in summary
    page.wait_for_selector("#control-status:has-text('the pulka is closed')")
    assert not page.is_checked("#close-form input[name=sure]")          # a second tap needs ticking again
    shot(page, "remote-4-pulka-closed")
    page.goto(table.url.rstrip("/") + "/join")
    page.wait_for_selector("#join-qr svg")
    assert page.inner_text("#join-pin") == table.pin            # a phone with the PIN sees it
    shot(page, "remote-5-join")
