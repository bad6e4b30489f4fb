"""Both units set LimitNOFILE to what the table's page and the club board need: the page's
connection cap at that limit is its full MAX_CONNECTIONS (the board's mirrors hold none)."""

import re
from pathlib import Path

import pytest

from controller.app.web.guard import FD_RESERVE, MAX_CONNECTIONS

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("unit", ["systemd/preftable.service", "systemd/mosquitto/preftable-club.service"])
def test_both_units_give_the_descriptors_the_page_and_board_need(unit):
    text = (ROOT / unit).read_text()
    service = text.split("[Service]", 1)[1].split("[Install]", 1)[0]
    (value,) = re.findall(r"^LimitNOFILE=(\d+)$", service, re.M)
    assert int(value) >= 2 * MAX_CONNECTIONS + FD_RESERVE
