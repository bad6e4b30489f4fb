"""The pulka report: well-formed SVG with the right texts, a page without external
resources, and a picture that librsvg actually renders (not blank)."""

from __future__ import annotations

import itertools
import operator
import shutil
import struct
import subprocess
import xml.etree.ElementTree as ET
import zlib
from html.parser import HTMLParser

import pytest

from controller.core.config import Rules
from controller.core.errors import LogError
from controller.app.report import derive_history, render_html, render_svg, write_report

NS = "{http://www.w3.org/2000/svg}"


def deal(number, dealer, price, taken, revoke=None, complete=True):
    return {"number": number, "dealer": dealer, "price": price, "tricks": [], "taken": taken,
            "revoke": revoke, "complete": complete}


def summary3() -> dict:
    """Three players, default rules: a progressive series 1-2-3 (the dealer's last-step
    penalty of 2 x 3 in deal 3), an abandoned deal, a revoke."""
    return {
        "deals": [
            deal(1, "seat1", 1, {"seat1": 0, "seat2": 4, "seat3": 6}),
            deal(2, "seat1", 2, {"seat1": 3, "seat2": 2, "seat3": 5}),
            deal(3, "seat1", 3, {"seat1": 1, "seat2": 0, "seat3": 9}),
            deal(4, "seat2", 1, {"seat1": 1, "seat2": 2, "seat3": 0}, complete=False),
            deal(5, "seat2", 1, {"seat1": 2, "seat2": 3, "seat3": 5}, revoke="seat3"),
        ],
        "pulka": {
            "seat1": {"gora": 15, "pulya": 1, "whists": {"seat2": 0, "seat3": 0}},
            "seat2": {"gora": 8, "pulya": 3, "whists": {"seat1": 0, "seat3": 2.5}},
            "seat3": {"gora": 53, "pulya": 0, "whists": {"seat1": 0, "seat2": 0}},
        },
        "settlement": {"convention": "sochi", "balance": {"seat1": 161.67, "seat2": 188.83, "seat3": -350.5}},
    }


def summary4() -> dict:
    deals = [deal(i + 1, f"seat{i % 4 + 1}", (1, 2, 3)[i % 3],
                  {f"seat{j + 1}": (0 if j == i % 4 else (j + i) % 4) for j in range(4)}) for i in range(12)]
    return {
        "deals": deals,
        "pulka": {
            "seat1": {"gora": 17, "pulya": 2, "whists": {"seat2": 4, "seat3": 0, "seat4": 1.5}},
            "seat2": {"gora": 12, "pulya": 0, "whists": {"seat1": 0, "seat3": 7, "seat4": 0}},
            "seat3": {"gora": 30, "pulya": 5, "whists": {}},
            "seat4": {"gora": 9, "pulya": 1},
        },
        "settlement": {"convention": "leningrad", "balance": {"seat1": 1, "seat2": 2, "seat3": 3, "seat4": -6}},
    }


def texts(svg: str) -> list[str]:
    root = ET.fromstring(svg)
    return ["".join(el.itertext()).strip() for el in root.iter(f"{NS}text")]


def sector_texts(svg: str, player: str) -> list[str]:
    root = ET.fromstring(svg)
    sector = root.find(f".//{NS}g[@id='sector-{player}']")
    assert sector is not None, f"no sector for {player}"
    return ["".join(el.itertext()).strip() for el in sector.iter(f"{NS}text")]


# ---------------------------------------------------------------- content

def test_three_players_texts():
    names = {"seat1": "Anna", "seat2": "Boris", "seat3": "Vera"}
    svg = render_svg(summary3(), names)
    root = ET.fromstring(svg)
    assert root.tag == f"{NS}svg"
    assert root.get("viewBox", "").startswith("0 0 ")
    assert len(root.findall(f".//{NS}g[@class='sector']")) == 3
    # Gora written as running sums, from the centre; pulya; whists per opponent (a half kept).
    assert "6.16.43.53" in sector_texts(svg, "seat3")        # 6, +10, +27, revoke +10
    assert "6.15" in sector_texts(svg, "seat1")               # 6, then penalty 6 + 1 trick x 3
    assert "4.8" in sector_texts(svg, "seat2")
    assert "1" in sector_texts(svg, "seat1")                  # pulya of deal 1
    assert "3" in sector_texts(svg, "seat2")                  # pulya: no trick in deal 3, price 3
    boris = sector_texts(svg, "seat2")
    assert "2.5" in boris and "\u2192 Vera" in boris and "\u2192 Anna" in boris
    assert "Boris  +188.83" in boris
    assert "Vera  -350.5" in sector_texts(svg, "seat3")
    all_texts = texts(svg)
    assert "Settlement (sochi): Anna +161.67,  Boris +188.83,  Vera -350.5" in all_texts
    # History table: header with the names, one row per deal, revoke and abandoned deal marked.
    for cell in ("#", "dealer", "price", "Anna", "Boris", "Vera", "revoke", "done", "\u2713", "\u2717"):
        assert cell in all_texts
    assert all_texts.count("Vera") >= 2        # the header and the revoke of deal 5


def test_history_derivation_and_fallback():
    history = derive_history(summary3())
    assert history["seat3"]["gora"] == [6, 16, 43, 53]
    assert history["seat1"]["gora"] == [6, 15]
    assert history["seat2"]["pulya"] == [3]
    assert history["seat1"]["pulya"] == [1]
    # Other rules were in force (no dealer penalty): with the defaults the totals do not match,
    # so the gora shows its final value only ...
    changed = summary3()
    changed["pulka"]["seat1"]["gora"] = 9
    history = derive_history(changed)
    assert "gora" not in history["seat1"] and history["seat1"]["pulya"] == [1]
    svg = render_svg(changed)
    assert "9" in sector_texts(svg, "seat1") and "6.9" not in sector_texts(svg, "seat1")
    # ... unless the session's rules are given.
    svg = render_svg(changed, rules=Rules(last_step_dealer_penalty=0))
    assert "6.9" in sector_texts(svg, "seat1")
    # An explicit history wins.
    svg = render_svg(changed, history={"seat1": {"gora": [2, 5, 9]}})
    assert "2.5.9" in sector_texts(svg, "seat1")
    # Deals that carry what they wrote are taken as they are.
    carried = summary3()
    for d in carried["deals"]:
        d["writes"] = {"gora": {"seat1": 1}, "pulya": {}, "whists": []}
    carried["pulka"]["seat1"]["gora"] = 4
    carried["pulka"]["seat2"]["gora"] = carried["pulka"]["seat3"]["gora"] = 0
    assert derive_history(carried)["seat1"]["gora"] == [1, 2, 3, 4]


def test_whists_scoring_history():
    deals = [deal(1, "seat1", 1, {"seat1": 2, "seat2": 3, "seat3": 5}),
             deal(2, "seat1", 2, {"seat1": 4, "seat2": 4, "seat3": 2}),
             deal(3, "seat1", 3, {"seat1": 3, "seat2": 3, "seat3": 4})]
    pulka = {"seat1": {"gora": 6, "pulya": 0, "whists": {"seat2": 12, "seat3": 44}},
             "seat2": {"gora": 0, "pulya": 0, "whists": {"seat1": 0, "seat3": 24}},
             "seat3": {"gora": 0, "pulya": 0, "whists": {"seat1": 32, "seat2": 32}}}
    summary = {"deals": deals, "pulka": pulka}
    history = derive_history(summary, Rules(scoring="whists"))
    assert history["seat1"]["whists"] == {"seat2": [12], "seat3": [20, 44]}
    assert history["seat1"]["gora"] == [6]
    svg = render_svg(summary, rules=Rules(scoring="whists"))
    assert {"20.44", "12", "6"} <= set(sector_texts(svg, "seat1"))
    assert "24" in sector_texts(svg, "seat2")
    # With the default (gora) rules nothing matches: final values only.
    assert all("gora" not in h and "whists" not in h for h in derive_history(summary).values())
    assert "44" in sector_texts(render_svg(summary), "seat1")


def test_four_players_and_names_from_summary():
    data = summary4()
    data["names"] = {"seat1": "North", "seat3": "South"}
    svg = render_svg(data, {"seat4": "West"})
    root = ET.fromstring(svg)
    assert len(root.findall(f".//{NS}g[@class='sector']")) == 4
    north = sector_texts(svg, "seat1")
    assert {"\u2192 seat2", "\u2192 South", "\u2192 West"} <= set(north)
    assert "1.5" in north and "4" in north
    assert "West  -6" in sector_texts(svg, "seat4")
    assert "Settlement (leningrad): North +1,  seat2 +2,  South +3,  West -6" in texts(svg)
    # 12 deal rows + header: each deal number appears in the table.
    assert {str(n) for n in range(1, 13)} <= set(texts(svg))


def test_names_are_escaped():
    evil = {"seat1": "<b>&Co</b>", "seat2": "Tom & \"Jerry\"", "seat3": "x]]>y"}
    svg = render_svg(summary3(), evil)
    assert "<b>" not in svg and "&lt;b&gt;&amp;Co&lt;/b&gt;" in svg
    found = texts(svg)
    assert any(t.startswith("<b>&Co</b>  ") for t in found)
    assert "\u2192 Tom & \"Jerry\"" in sector_texts(svg, "seat1")
    page = render_html(summary3(), evil)
    assert "<b>&Co" not in page and "&lt;b&gt;&amp;Co&lt;/b&gt;" in page


def test_settlement_computed_when_missing_reproduces_rules_example():
    pulka = {
        "E": {"pulya": 56, "gora": 22, "whists": {"S": 24, "W": 32}},
        "S": {"pulya": 22, "gora": 22, "whists": {"E": 100, "W": 32}},
        "W": {"pulya": 12, "gora": 34, "whists": {"E": 72, "S": 56}},
    }
    svg = render_svg({"pulka": pulka})                 # a bare pulka, players named anything
    assert "Settlement (sochi): E +184,  S +12,  W -196" in texts(svg)
    assert "no deals" in texts(svg)
    svg = render_svg({"pulka": pulka, "settlement": {"convention": "leningrad"}})
    assert "Settlement (leningrad): E +444,  S -68,  W -376" in texts(svg)


def test_wrong_player_count_is_refused():
    with pytest.raises(ValueError, match="3 or 4 players"):
        render_svg({"pulka": {"a": {}, "b": {}}})


class _Collector(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags: list[str] = []
        self.attrs: list[tuple[str, str | None]] = []
        self.data: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.attrs += attrs

    def handle_data(self, data):
        self.data.append(data.strip())


def test_html_is_self_contained():
    page = render_html(summary3(), {"seat1": "Anna", "seat2": "Boris", "seat3": "Vera"})
    parser = _Collector()
    parser.feed(page)
    assert {"html", "head", "style", "body", "svg", "table"} <= set(parser.tags)
    assert parser.tags.count("table") == 2
    for name, value in parser.attrs:
        assert name not in ("src", "href"), f"external resource via {name}={value}"
    assert "url(" not in page and "@import" not in page and "<script" not in page
    assert "<?xml" not in page
    assert "+188.83" in parser.data and "-350.5" in parser.data
    assert parser.tags.count("tr") == 1 + 3 + 1 + 5       # settlement header + players, deals header + deals


def test_write_report(tmp_path):
    paths = write_report(summary4(), tmp_path / "session")
    assert paths == {"svg": tmp_path / "session" / "pulka.svg", "html": tmp_path / "session" / "pulka.html"}
    ET.fromstring(paths["svg"].read_text(encoding="utf-8"))
    assert "<svg" in paths["html"].read_text(encoding="utf-8")
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    with pytest.raises(LogError, match=str(blocker)):
        write_report(summary4(), blocker)


# ---------------------------------------------------------------- the picture itself

def decode_png(data: bytes) -> tuple[int, int, list[bytes]]:
    """Width, height and RGBA rows of an 8-bit RGBA/RGB PNG (what rsvg-convert writes)."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, width = 8, b"", 0
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, colour = struct.unpack(">IIBB", body[:10])
            assert depth == 8 and colour in (2, 6), (depth, colour)
            bpp = 4 if colour == 6 else 3
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    raw = zlib.decompress(idat)
    stride = width * bpp
    rows, prev = [], bytearray(stride)
    for y in range(height):
        start = y * (stride + 1)
        line = unfilter(raw[start], bytearray(raw[start + 1:start + 1 + stride]), prev, bpp)
        if bpp == 4:
            rows.append(bytes(line))
        else:
            rgba = bytearray(b"\xff" * (4 * width))
            for k in range(3):
                rgba[k::4] = line[k::3]
            rows.append(bytes(rgba))
        prev = line
    return width, height, rows


def unfilter(filt: int, line: bytearray, prev: bytearray, bpp: int) -> bytearray:
    """One PNG row with its filter undone (``prev``: the row above, undone).  None and Up
    have no dependency along the row and Sub is a running sum in each channel, so those
    run at C speed (map, accumulate); Average and Paeth go byte by byte."""
    if filt == 0:
        return line
    if filt == 2:
        return bytearray(map(operator.and_, map(operator.add, line, prev), itertools.repeat(0xFF)))
    if filt == 1:
        out = bytearray(len(line))
        for k in range(bpp):
            out[k::bpp] = bytes(map(operator.and_, itertools.accumulate(line[k::bpp]), itertools.repeat(0xFF)))
        return out
    out = bytearray(line)
    if filt == 3:
        for i in range(len(out)):
            a = out[i - bpp] if i >= bpp else 0
            out[i] = (out[i] + (a + prev[i]) // 2) & 0xFF
        return out
    assert filt == 4, filt
    for i in range(bpp):                # the first pixel has no left neighbours: Paeth predicts b
        out[i] = (out[i] + prev[i]) & 0xFF
    for i in range(bpp, len(out)):      # p - a = b - c, p - b = a - c, p - c = a + b - 2c
        a, b, c = out[i - bpp], prev[i], prev[i - bpp]
        pa, pb, pc = abs(b - c), abs(a - c), abs(a + b - c - c)
        out[i] = (out[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 0xFF
    return out


def ink(rows: list[bytes], x0: int, y0: int, x1: int, y1: int) -> float:
    """Fraction of dark pixels in a box."""
    dark = total = 0
    for row in rows[y0:y1]:
        px = row[4 * x0:4 * x1]
        assert len(px) == 4 * (x1 - x0), (x0, x1, len(row) // 4)     # the box lies in the picture
        dark += sum(a > 128 and r + g + b < 384 for r, g, b, a in zip(px[0::4], px[1::4], px[2::4], px[3::4]))
        total += x1 - x0
    return dark / total


@pytest.mark.skipif(shutil.which("rsvg-convert") is None, reason="rsvg-convert absent (apt install librsvg2-bin)")
@pytest.mark.parametrize("make", [summary3, summary4], ids=["3 players", "4 players"])
def test_rsvg_renders_a_real_picture(make, tmp_path):
    paths = write_report(make(), tmp_path)
    png = tmp_path / "pulka.png"
    run = subprocess.run(["rsvg-convert", "--format=png", "--output", str(png), str(paths["svg"])],
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    assert run.stderr == ""
    data = png.read_bytes()
    assert len(data) > 20_000
    width, height, rows = decode_png(data)
    root = ET.fromstring(paths["svg"].read_text(encoding="utf-8"))
    assert (width, height) == tuple(int(float(v)) for v in root.get("viewBox").split()[2:])
    overall = ink(rows, 0, 0, width, height)
    assert 0.01 < overall < 0.5, f"picture {overall:.1%} dark: blank or a smudge"
    # The sheet (60..660 x 90..570) has its lines and figures, the table beside it its text.
    assert ink(rows, 60, 90, 660, 570) > 0.02
    assert ink(rows, 720, 90, width - 30, 300) > 0.03
    # The sheet's frame: the top edge is a dark line.
    assert ink(rows, 100, 89, 600, 92) > 0.5
