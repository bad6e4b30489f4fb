"""``preftable doctor --wiring``: where every wire of the config's table goes on the Pi's
40-pin header -- each RC522 reader's eight pins, the seat LEDs, the buzzer and the buttons --
as Markdown tables (docs/hardware-test.md carries them for the shipped 3- and 4-player maps)
and, with ``--svg FILE``, as a drawing of the header with every pin labelled (drawsvg).

The table is computed from the config, never written by hand, so the guide, the drawing and
the running service cannot disagree.  Header numbers and bus pins: :mod:`hw.header`.
"""

from __future__ import annotations

from dataclasses import dataclass

from hw.header import HEADER_PIN, POWER_PINS, SPI_BUS_PINS

# The common blue RC522 module's header, left to right as printed on the board.
RC522_PINS = ("SDA", "SCK", "MOSI", "MISO", "IRQ", "GND", "RST", "3.3V")
_ROLE_OF = {"SCK": "SCLK", "MOSI": "MOSI", "MISO": "MISO"}


@dataclass(frozen=True)
class Wire:
    """One wire: a part's pin to a header pin (``header`` None: left unconnected)."""

    part: str                   # "seat1 reader (spidev0.0)", "seat1 LED", "buzzer", "undo button"
    part_pin: str               # "SDA", "RST", "+" ...
    header: int | None
    signal: str                 # "GPIO8 (CE0)", "GND", "3V3", "not connected"
    kind: str                   # spi0 | spi1 | reset | power | ground | led | buzzer | button | none


def _bus_gpio(bus: int, role: str) -> int:
    return next(pin for pin, r in SPI_BUS_PINS[bus].items() if r == role)


def reader_wires(settings) -> list[Wire]:
    """The eight pins of every reader of ``[spi]``; ground and 3.3 V spread over the header's pins."""
    wires: list[Wire] = []
    grounds, supplies = POWER_PINS["GND"], POWER_PINS["3V3"]
    for i, r in enumerate(settings.section("spi").readers):
        part = f"{r.zone} reader (spidev{r.bus}.{r.device})"
        kind = f"spi{r.bus}"
        for pin in RC522_PINS:
            if pin == "SDA":                        # the chip select of its device
                gpio = _bus_gpio(r.bus, f"CE{r.device}")
                wires.append(Wire(part, pin, HEADER_PIN[gpio], f"GPIO{gpio} CE{r.device}", kind))
            elif pin in _ROLE_OF:
                gpio = _bus_gpio(r.bus, _ROLE_OF[pin])
                wires.append(Wire(part, pin, HEADER_PIN[gpio], f"GPIO{gpio} {_ROLE_OF[pin]}", kind))
            elif pin == "IRQ":                      # polled, never interrupt-driven
                wires.append(Wire(part, pin, None, "not connected", "none"))
            elif pin == "GND":
                wires.append(Wire(part, pin, grounds[i % len(grounds)], "GND", "ground"))
            elif pin == "RST":
                wires.append(Wire(part, pin, HEADER_PIN[r.reset_pin], f"GPIO{r.reset_pin}", "reset"))
            else:                                   # 3.3 V, never 5 V
                wires.append(Wire(part, pin, supplies[i % len(supplies)], "3V3", "power"))
    return wires


def part_wires(settings) -> list[Wire]:
    """The seat LEDs, the buzzer and the buttons of ``[gpio]``."""
    gpio = settings.section("gpio")
    wires = [Wire(f"{zone} LED", "anode (through 330 Ohm)", HEADER_PIN[pin], f"GPIO{pin}", "led")
             for zone, pin in gpio.leds.items()]
    if gpio.buzzer is not None:
        wires.append(Wire("buzzer (active)", "transistor base (through 1 kOhm)", HEADER_PIN[gpio.buzzer],
                          f"GPIO{gpio.buzzer}", "buzzer"))
    wires += [Wire(f"{name.replace('_', ' ')} button", "one leg (the other to GND)", HEADER_PIN[pin],
                   f"GPIO{pin}", "button") for name, pin in gpio.buttons.items()]
    return wires


def markdown(settings) -> str:
    """The wiring as Markdown: a row per reader (its pins' header numbers), then the other parts."""
    lines = []
    readers = reader_wires(settings)
    if readers:
        lines += ["| reader | " + " | ".join(RC522_PINS) + " |", "|---" * (len(RC522_PINS) + 1) + "|"]
        by_part: dict[str, list[Wire]] = {}
        for w in readers:
            by_part.setdefault(w.part, []).append(w)
        for part, wires in by_part.items():
            cells = []
            for w in wires:
                if w.header is None:
                    cells.append("–")
                elif w.kind in ("ground", "power"):
                    cells.append(f"{w.header}")
                else:
                    cells.append(f"{w.header} ({w.signal})")
            lines.append(f"| {part} | " + " | ".join(cells) + " |")
        lines.append("")
    else:
        lines += [f"readers.backend = \"{settings.backend}\": no RC522 reader on the Pi's own SPI buses.", ""]
    parts = part_wires(settings)
    if parts:
        lines += ["| part | its pin | header pin | GPIO |", "|---|---|---|---|"]
        lines += [f"| {w.part} | {w.part_pin} | {w.header} | {w.signal} |" for w in parts]
        lines.append("")
    return "\n".join(lines)


_COLOURS = {"spi0": "#1f5fbf", "spi1": "#1b8a3a", "reset": "#d9730d", "power": "#c0392b", "ground": "#222222",
            "led": "#b8860b", "buzzer": "#8e44ad", "button": "#6c3483", "none": "#999999"}


def header_labels(settings) -> dict[int, tuple[str, str]]:
    """Header pin -> (what is wired to it, the kind of wire), for the drawing."""
    users: dict[int, dict[str, list[str]]] = {}
    kinds: dict[int, str] = {}
    for w in reader_wires(settings) + part_wires(settings):
        if w.header is None:
            continue
        zone = w.part.split(" ")[0] if "reader" in w.part else w.part
        users.setdefault(w.header, {}).setdefault(w.part_pin if "reader" in w.part else "", []).append(zone)
        kinds[w.header] = w.kind
    labels = {}
    for pin, by_pin in users.items():
        text = "; ".join(f"{name} {', '.join(zones)}".strip() if name else ", ".join(zones)
                         for name, zones in by_pin.items())
        labels[pin] = (text, kinds[pin])
    return labels


def svg(settings, title: str = "") -> str:
    """The 40-pin header drawn with each pin's number, GPIO and what the config wires to it."""
    import drawsvg as draw

    gpio_of = {header: gpio for gpio, header in HEADER_PIN.items()}
    power_of = {pin: name for name, pins in POWER_PINS.items() for pin in pins}
    labels = header_labels(settings)
    row_h, width, top = 24, 980, 60
    d = draw.Drawing(width, top + 20 * row_h + 40)
    d.append(draw.Rectangle(0, 0, width, top + 20 * row_h + 40, fill="white"))
    d.append(draw.Text(title or "preftable: the table's wiring on the Raspberry Pi header (pin 1 at the "
                       "SD-card end)", 15, 20, 28, font_family="sans-serif", font_weight="bold"))
    cx = (width / 2 - 14, width / 2 + 14)           # odd pins on the left column, even on the right
    d.append(draw.Rectangle(cx[0] - 14, top - 14, 56, 20 * row_h + 4, rx=4, fill="#2d2d2d"))
    for pin in range(1, 41):
        row, column = (pin - 1) // 2, (pin - 1) % 2
        y = top + row * row_h
        name = f"GPIO{gpio_of[pin]}" if pin in gpio_of else power_of.get(pin, "")
        text, kind = labels.get(pin, ("", "none"))
        used = pin in labels
        d.append(draw.Circle(cx[column], y, 8, fill=_COLOURS[kind] if used else "#cccccc",
                             stroke="#ffffff", stroke_width=1))
        d.append(draw.Text(str(pin), 8, cx[column], y + 3, text_anchor="middle",
                           fill="white" if used else "#444444", font_family="sans-serif"))
        anchor, x = ("end", cx[0] - 22) if column == 0 else ("start", cx[1] + 22)
        caption = f"{name}: {text}" if used else name
        d.append(draw.Text(caption, 11, x, y + 4, text_anchor=anchor, font_family="sans-serif",
                           fill=_COLOURS[kind] if used else "#777777"))
    return d.as_svg()


__all__ = ["RC522_PINS", "Wire", "reader_wires", "part_wires", "markdown", "header_labels", "svg"]
