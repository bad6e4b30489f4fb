"""Real RC522 readers on a Raspberry Pi; skipped unless ``/dev/spidev0.0`` exists.

Wiring is read from the environment: ``PREFTABLE_RC522_RST`` (BCM reset pin of the reader on
spidev0.0, default 25); put a tag on it and set ``PREFTABLE_RC522_TAG`` to its UID (hex) to
check a real read.  Run on the Pi: ``.venv/bin/python -m pytest -m hardware tests/test_hw_real.py``.
"""

from __future__ import annotations

import os
import re
import time

import pytest

pytestmark = [
    pytest.mark.hardware,
    pytest.mark.skipif(not os.path.exists("/dev/spidev0.0"), reason="no /dev/spidev0.0 (not a Pi with SPI on)"),
]

RST = int(os.environ.get("PREFTABLE_RC522_RST", "25"))
TAG = os.environ.get("PREFTABLE_RC522_TAG", "").upper() or None


@pytest.fixture
def reader():
    from hw.pins import RPiGPIOFactory
    from hw.rc522 import RealBackend, Reader

    pins = RPiGPIOFactory()
    r = Reader(0, 0, RST, backend=RealBackend(pins))
    yield r
    r.close()
    pins.close()


def test_chip_answers(reader):
    assert reader.alive(), f"VersionReg reads 0x{reader.version():02X}"


def test_poll_gives_a_complete_uid_or_nothing(reader):
    for _ in range(10):
        uid = reader.read_uid()
        assert uid is None or re.fullmatch(r"[0-9A-F]{8}|[0-9A-F]{14}|[0-9A-F]{20}", uid)


@pytest.mark.skipif(TAG is None, reason="set PREFTABLE_RC522_TAG to the UID of a tag lying on the reader")
def test_tag_on_the_reader_is_read_completely(reader):
    reads = [reader.read_uid() for _ in range(10)]
    assert reads.count(TAG) >= 9, reads


def test_reset_brings_the_chip_back(reader):
    reader.reset()
    assert reader.alive()


def test_empty_poll_is_quick(reader):
    if TAG is not None:
        pytest.skip("a tag lies on the reader")
    start = time.perf_counter()
    for _ in range(20):
        assert reader.read_uid() is None
    per_poll = (time.perf_counter() - start) / 20
    assert per_poll < 0.010, f"{per_poll * 1e3:.1f} ms per empty poll"
