"""The club board's web page (``/club``) end to end, in a real browser.

Debian's mosquitto on loopback, two simulated tables publishing (a real
TableService with the MQTT publisher each), ``preftable club --web`` as the
user runs it (its own process), and Debian's Chromium driven by Playwright.
Every wait is on the DOM, the board's files or the broker's answers; nothing
sleeps and then asserts.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import urllib.error
import urllib.request

import pytest

from conftest import cli, spawn as spawn_child
from mqtt_broker import ROOT, RawClient, SimTable, broker, wait_until  # noqa: F401
from web_table import CHROMIUM, shot, wait_live

pytestmark = [pytest.mark.skipif(not os.path.exists(CHROMIUM), reason="Debian's chromium is not installed"),
              pytest.mark.timeout(240)]

sync_api = pytest.importorskip("playwright.sync_api")

WAIT_S = 60
SESSION = "2026-12-01T08-00-00Z"
NAMES = {"seat1": "Anna", "seat2": "<b>Boris</b>", "seat3": "Vera & Co"}


@pytest.fixture
def page(browser):
    page = browser.new_page()
    yield page
    page.close()


class BoardProcess:
    """``preftable club --broker URL --dir DIR --web 127.0.0.1:0``, its output in files."""

    def __init__(self, folder, broker_url: str):
        folder.mkdir(parents=True, exist_ok=True)
        self.out, self.err = folder / "club.out", folder / "club.err"
        with open(self.out, "wb") as out, open(self.err, "wb") as err:
            self.proc = spawn_child(
                [sys.executable, "-m", "controller", "club", "--broker", broker_url, "--dir", str(folder / "club"),
                 "--client-id", "club-web-test", "--web", "127.0.0.1:0"],
                cwd=ROOT, stdout=out, stderr=err, stdin=subprocess.DEVNULL)
        wait_until(lambda: self._url() or self.proc.poll() is not None, WAIT_S, "the club page's address")
        assert self.proc.poll() is None, f"club exited: {self.err.read_text()}"
        self.url = self._url()

    def _url(self) -> str | None:
        match = re.search(r"the club page: (http://\S+)", self.err.read_text())
        return match.group(1) if match else None

    @property
    def base(self) -> str:
        return self.url.removesuffix("club")

    def stop(self) -> int:
        self.proc.send_signal(signal.SIGTERM)
        return self.proc.wait(30)


def get(url: str, method: str = "GET") -> tuple[int, dict, bytes]:
    request = urllib.request.Request(url, method=method, data=b"{}" if method == "POST" else None)
    try:
        with urllib.request.urlopen(request, timeout=20) as answer:
            return answer.status, dict(answer.headers), answer.read()
    except urllib.error.HTTPError as exc:
        return exc.code, dict(exc.headers), exc.read()


def deal_number(page, table: str, above: int) -> int:
    """The deal number the page shows for ``table``, once it is above ``above`` (waited for on the
    DOM: between deals the page shows no number)."""
    return page.wait_for_function(
        "([table, n]) => { const el = document.querySelector(`[data-table=\"${table}\"] [data-deal-number]`);"
        " const t = el ? el.textContent.trim() : ''; return /^\\d+$/.test(t) && Number(t) > n && Number(t); }",
        arg=[table, above], timeout=WAIT_S * 1000).json_value()


def test_the_club_page_shows_every_table_and_follows_the_deals_live(tmp_path, broker, page):
    board = BoardProcess(tmp_path / "board", broker.url)
    tables = [SimTable(tmp_path / "logs-north", broker.url, "north-1", seed=4, speed=40, deals=1000,
                       names=NAMES).start(),
              SimTable(tmp_path / "logs-south", broker.url, "south-2", seed=9, speed=40, deals=1000).start()]
    raw = None
    try:
        page.goto(board.url)
        wait_live(page)
        page.evaluate("window.sameDocument = 'no reload since'")
        for table in ("north-1", "south-2"):
            page.wait_for_selector(f'[data-table="{table}"] [data-deal-number]', timeout=WAIT_S * 1000)
        # the players' names, escaped (a name is text, never markup)
        page.wait_for_function("() => document.querySelector('[data-table=\"north-1\"] .players')"
                               ".textContent.includes('<b>Boris</b>')", timeout=WAIT_S * 1000)
        assert page.locator('[data-table="north-1"] .players b').count() == 0
        assert "Vera & Co" in page.inner_text('[data-table="north-1"] .players')
        # the deal number moves on live, over the event stream: the same document, never reloaded
        first = deal_number(page, "north-1", above=0)
        later = deal_number(page, "north-1", above=first)        # moved on, on the same page
        assert page.evaluate("window.sameDocument") == "no reload since"
        assert isinstance(later, int) and later > first
        assert page.inner_text('[data-table="north-1"] [data-contract]').strip() == "raspasovka"
        # the pulka: a row per player, with pulya, gora, whists and balance
        rows = page.locator('[data-table="north-1"] table.club-pulka tbody tr')
        assert rows.count() == 3 and rows.nth(0).locator("td").count() == 4
        page.wait_for_function("() => /seat1.*seat2.*seat3/.test(document.querySelector("
                               "'[data-table=\"south-2\"] .players').textContent)", timeout=WAIT_S * 1000)
        # the JSON the page is drawn from
        status, headers, body = get(board.base + "api/club")
        assert status == 200 and headers["Content-Type"].startswith("application/json")
        data = json.loads(body)
        shown = {t["table"]: t for t in data["tables"]}
        assert set(shown) == {"north-1", "south-2"}
        assert shown["north-1"]["deal"] is None or shown["north-1"]["deal"]["number"] >= later
        assert [p["name"] for p in shown["north-1"]["players"]] == list(NAMES.values())
        assert data["bad_total"] == 0 and "no bad messages" in page.inner_text("#board-summary")
        # the page as served, before any script: the tables are there, rendered on the board
        status, _, body = get(board.url)
        html = body.decode()
        assert status == 200 and '<article class="club-table' in html and 'data-table="north-1"' in html
        assert "&lt;article" not in html and "&lt;b&gt;Boris&lt;/b&gt;" in html

        # bad messages and a gap in a mirror, as the terminal board shows them
        raw = RawClient(broker.url, "club-web-vandal")
        raw.publish("preftable/north-1/log", b"not json at all")
        line = json.dumps({"t": 1.0, "event": "placed", "zone": "seat1", "uid": "04A1B2C3"})
        for n in (1, 3):
            raw.publish("preftable/gap-9/log", json.dumps({"table": "gap-9", "session": SESSION,
                                                           "line": n, "text": line}))
        page.wait_for_selector("#bad-messages", timeout=WAIT_S * 1000)
        assert "bad messages: 1" in page.inner_text("#bad-messages")
        assert "not JSON 1" in page.inner_text("#board-summary")
        gap = page.wait_for_selector('[data-table="gap-9"] [data-gap]', timeout=WAIT_S * 1000)
        assert "lines 2–2 missing" in gap.inner_text() and "1 later line held" in gap.inner_text()
        assert page.evaluate("window.sameDocument") == "no reload since"
        wait_until(lambda: "gap 2-2" in board.out.read_text(), WAIT_S, "the terminal board to show the gap too")

        # read-only: no POST anywhere, the table page's security headers
        for path in ("club", "api/club", "api/control", "pin"):
            assert get(board.base + path, method="POST")[0] in (404, 405), path
        status, headers, _ = get(board.url)
        assert status == 200 and "script-src 'self'" in headers["Content-Security-Policy"]
        assert headers["X-Content-Type-Options"] == "nosniff"
        assert page.locator("form").count() == 0 and page.locator("button").count() == 0

        # phone first: no sideways scrolling at 360 px, nor at desktop width
        for width in (360, 1280):
            page.set_viewport_size({"width": width, "height": 900})
            overflow = page.evaluate("() => document.documentElement.scrollWidth - document.documentElement.clientWidth")
            shot(page, f"club-{width}")
            assert overflow <= 0, f"{overflow} px of horizontal overflow at {width} px"
    finally:
        if raw is not None:
            raw.close()
        for table in tables:
            table.stop()
        code = board.stop()
    assert code == 0, board.err.read_text()


def test_club_web_option_errors_are_one_line(tmp_path, broker):
    """A bad --web value, or a port that is taken, is one line on stderr and exit status 2."""
    def club(*extra):        # in this process: what is asserted is the status and the words
        return cli(["club", "--broker", broker.url, "--dir", tmp_path / "club", *extra])
    bad = club("--web", "nowhere:port")
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1 and "--web" in bad.stderr
    taken = club("--web", f"127.0.0.1:{broker.port}")      # the broker holds that port
    assert taken.returncode == 2, taken.stderr
    assert len(taken.stderr.strip().splitlines()) == 1 and "cannot listen" in taken.stderr
    assert "Traceback" not in bad.stderr + taken.stderr
