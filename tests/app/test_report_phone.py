"""The pulka report on a phone (390x844) in Debian's Chromium: table headings keep their words
whole ("dealer", never "dea ler") and the sheet's whist numbers stay readable."""

from __future__ import annotations

import os

import pytest

from web_table import CHROMIUM, shot

pytestmark = [pytest.mark.skipif(not os.path.exists(CHROMIUM), reason="Debian's chromium is not installed"),
              pytest.mark.timeout(120)]
sync_api = pytest.importorskip("playwright.sync_api")

#: the smallest whist number a phone shows, in CSS pixels (body text is 16)
MIN_WHIST_PX = 8.0


def _report(tmp_path):
    from controller.app.report import write_report
    from controller.app.sim import BiddingSimulator, Noise, make_deck
    from controller.core.config import GameConfig, Rules, Table
    from controller.core.tracker import DealTracker

    game = GameConfig(Table(players=3, names={"seat1": "Anna", "seat2": "Boris", "seat3": "Vera"}), Rules(bidding=True))
    deck = make_deck(4, token_sets=3)
    tracker = DealTracker(game, deck)
    for event in BiddingSimulator(game, seed=4, deck=deck, noise=Noise()).deals(30):
        tracker.feed(event)
    return write_report(tracker.report_summary(), tmp_path, names=dict(game.table.names), rules=game.rules)


def test_the_report_on_a_phone_keeps_words_whole_and_whists_readable(browser, tmp_path):
    paths = _report(tmp_path)
    page = browser.new_page()
    try:
        page.set_viewport_size({"width": 390, "height": 844})
        page.goto(paths["html"].as_uri())
        page.wait_for_load_state("load")
        # every heading cell on one line: a word broken across lines makes two line boxes
        broken = page.evaluate("""() => Array.from(document.querySelectorAll('th')).filter(th => {
            const range = document.createRange(); range.selectNodeContents(th);
            const tops = new Set(Array.from(range.getClientRects()).map(r => Math.round(r.top)));
            return tops.size > 1; }).map(th => th.textContent)""")
        assert broken == []
        # the whists and whom they are on, as drawn on the phone (font size times the sheet's scale)
        sizes = page.evaluate("""() => Array.from(document.querySelectorAll('svg text.whists, svg text.whist-target'))
            .filter(t => t.textContent.trim()).map(t => parseFloat(t.getAttribute('font-size'))
                * t.ownerSVGElement.getScreenCTM().a)""")
        assert sizes and min(sizes) >= MIN_WHIST_PX, sorted(sizes)[:5]
        shot(page, "report-phone")
    finally:
        page.close()
