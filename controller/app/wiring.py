"""``preftable doctor --wiring``: where every wire of the config's table goes on the Pi's
40-pin header -- every pin of each reader (its backend's ``wires``: the ``spi`` backend's RC522
boards), the seat LEDs, the buzzer and the buttons --
as Markdown tables (docs/hardware-test.md carries them for the shipped 3- and 4-player maps)
and, with ``--svg FILE``, as a drawing of the header with every pin labelled (drawsvg).

The table is computed from the config, never written by hand, so the guide, the drawing and
the running service cannot disagree.  Header numbers and bus pins: :mod:`hw.header`.
"""

from __future__ import annotations

from dataclasses import dataclass

from hw.header import HEADER_PIN, POWER_PINS

@dataclass(frozen=True)
class Wire:
    """One wire: a part's pin to a header pin (``header`` None: left unconnected)."""

    part: str                   # "seat1 reader (spidev0.0)", "seat1 LED", "buzzer", "undo button"
    part_pin: str               # "SDA", "RST", "+" ...
    header: int | None
    signal: str                 # "GPIO8 (CE0)", "GND", "3V3", "not connected"
    kind: str                   # spi0 | spi1 | reset | power | ground | led | buzzer | button | none


def _reader_backend(settings):
    from . import backends
    return backends.reader(settings.backend)


def reader_pins(settings) -> tuple[str, ...]:
    """The pins of one reader board of the config's backend, as printed on it (its module's
    ``WIRE_PINS``; none for a backend whose readers are not on the Pi's header)."""
    return tuple(getattr(_reader_backend(settings), "WIRE_PINS", ()))


def reader_wires(settings) -> list[Wire]:
    """Every pin of every reader of the config's backend to the header: its module's
    ``wires(config)`` (the ``spi`` backend's RC522 readers); none for the hub, on USB, or
    the simulation."""
    module = _reader_backend(settings)
    wires = getattr(module, "wires", None)
    return list(wires(settings.section(module.SECTION))) if wires is not None else []


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
    readers, pins = reader_wires(settings), reader_pins(settings)
    if readers:
        lines += ["| reader | " + " | ".join(pins) + " |", "|---" * (len(pins) + 1) + "|"]
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
        lines += [f"readers.backend = \"{settings.backend}\": no reader wired to the Pi's header.", ""]
    parts = part_wires(settings)
    if parts:
        lines += ["| part | its pin | header pin | GPIO |", "|---|---|---|---|"]
        lines += [f"| {w.part} | {w.part_pin} | {w.header} | {w.signal} |" for w in parts]
        lines.append("")
    return "\n".join(lines)


#: a wire's colour by its kind; a backend's own kind of bus ("i2c") is drawn in the bus colour
BUS_COLOUR = "#1f5fbf"
_COLOURS = {"spi0": BUS_COLOUR, "spi1": "#1b8a3a", "reset": "#d9730d", "power": "#c0392b", "ground": "#222222",
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
        d.append(draw.Circle(cx[column], y, 8, fill=_COLOURS.get(kind, BUS_COLOUR) if used else "#cccccc",
                             stroke="#ffffff", stroke_width=1))
        d.append(draw.Text(str(pin), 8, cx[column], y + 3, text_anchor="middle",
                           fill="white" if used else "#444444", font_family="sans-serif"))
        anchor, x = ("end", cx[0] - 22) if column == 0 else ("start", cx[1] + 22)
        caption = f"{name}: {text}" if used else name
        d.append(draw.Text(caption, 11, x, y + 4, text_anchor=anchor, font_family="sans-serif",
                           fill=_COLOURS.get(kind, BUS_COLOUR) if used else "#777777"))
    return d.as_svg()


__all__ = ["Wire", "reader_pins", "reader_wires", "part_wires", "markdown", "header_labels", "svg"]
