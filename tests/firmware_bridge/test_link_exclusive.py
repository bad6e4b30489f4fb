"""One host on a hub's line: the link opens its port for itself (pyserial's ``exclusive``),
so a second host -- a second ``preftable run``, or a link left retrying a /dev/pts number a
new emulator got since -- cannot open it and read half its frames; it is told who to ask."""

from __future__ import annotations

import pytest

from controller.core.errors import LinkError
from firmware_bridge.emulator import HubEmulator
from firmware_bridge.link import HubLink, open_port

from conftest import wait_until

ZONES = ("seat1", "seat2", "seat3", "prikup")


def test_a_second_host_cannot_open_a_port_the_link_holds_until_it_lets_go():
    with HubEmulator(readers=4) as emulator:
        path = emulator.open_pty()
        first: list = []
        link = HubLink(path, ZONES, first.append)
        link.start()
        try:
            assert link.wait_ready(10), link.error
            with pytest.raises(LinkError, match="another host holds it -- is a second preftable running"):
                open_port(path)
            said: list[str] = []
            second = HubLink(emulator.link_path, ZONES, lambda e: None, on_status=said.append)
            second.start()
            try:
                wait_until(lambda: any("another host holds it" in s for s in said), "the second host told why")
                emulator.place(0, "04A2B11C6F5E80")
                wait_until(lambda: first, "the card heard by the first host")
                assert not second.wait_ready(0)
            finally:
                second.stop()
        finally:
            link.stop()
        open_port(path).close()                     # let go: the next host opens it
