"""The page's and the views' hub status follow the link: "connected" once the hub reads the
table, with ``run``'s hub backend and with the demo's (both on a real emulated hub)."""

from __future__ import annotations

import threading

import pytest

from controller.app import backends
from controller.app.backends.hub import HubConfig, source
from controller.app.settings import Settings
from controller.core.config import GameConfig
from firmware_bridge.emulator import HubEmulator

ZONES = ("seat1", "seat2", "seat3", "prikup")


class RecordingService:
    """What the hub backend tells the table service about the link."""

    def __init__(self):
        self.states: list[tuple[str, str]] = []
        self.connected = threading.Event()
        self.tracker = None

    def set_link(self, state: str, detail: str = "") -> None:
        self.states.append((state, detail))
        if state == "connected":
            self.connected.set()


@pytest.mark.parametrize("transport", ["pty", "tcp"])
def test_link_state_is_connected_once_the_hub_reads_the_table(transport):
    emu = HubEmulator(readers=4, poll_ms=5, hb_ms=100, state_ms=250)
    port = emu.open_pty() if transport == "pty" else "socket://%s:%d" % emu.serve_tcp()
    service = RecordingService()
    config = HubConfig(port=port, zones=ZONES)
    ctx = backends.RunContext(Settings(game=GameConfig(), backend="hub", sections={"hub": config}),
                              clock=lambda: 0.0, service=service)
    src = source(config, ctx)
    try:
        src.start(lambda event: None)
        assert src.link.wait_ready(10), "the emulated hub did not answer"
        # the status that follows readiness arrives on the link's thread just after it
        assert service.connected.wait(10), f"the link never said connected: {service.states}"
        assert service.states[-1][0] == "connected"
        assert "hub connected" in service.states[-1][1]
    finally:
        src.stop()
        emu.close()
