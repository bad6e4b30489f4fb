"""The deal tracker's state diagram, drawn by ``transitions``' own graph support.

The machine is the one of :mod:`controller.core.phases` (its states, transitions and
guards, as declared there), built as a ``transitions.extensions.diagrams.GraphMachine``:
Mermaid ``stateDiagram-v2`` text with its ``mermaid`` engine (no graphviz needed), and
a picture (.png, .svg, .pdf) with its ``graphviz`` engine when graphviz is installed.
"""

from __future__ import annotations

import logging
import shutil
import sys
from pathlib import Path

from ..core.errors import ConfigError
from ..core.phases import phase_machine

PICTURES = (".png", ".svg", ".pdf")
TITLE = "deal phases"

log = logging.getLogger(__name__)


class _Drawn:
    """The model the diagram's machine is bound to (it only draws: no trigger is fired)."""


def _graph(engine: str):
    from transitions.extensions.diagrams import GraphMachine

    model = _Drawn()
    phase_machine(model, GraphMachine, graph_engine=engine, show_conditions=True, title=TITLE)
    return model.get_graph()


def mermaid() -> str:
    """The state machine as Mermaid ``stateDiagram-v2`` text, with each move's guards."""
    return _graph("mermaid").source + "\n"


def graphviz_available() -> bool:
    try:
        import graphviz  # noqa: F401  (the Python binding used by transitions.extensions)
    except ImportError:
        return False
    return shutil.which("dot") is not None


def write_diagram(output: Path | None) -> Path | None:
    """Write the diagram to ``output`` (standard output when None); return the path written.

    A picture (.png, .svg, .pdf) needs graphviz: without it this raises
    :class:`ConfigError` rather than write something else than was asked.
    """
    if output is not None and output.suffix in PICTURES:
        if not graphviz_available():
            raise ConfigError(f"{output}: a {output.suffix} picture needs graphviz (Debian: apt install graphviz; "
                              f"pip install graphviz); -o {output.with_suffix('.mmd')} writes Mermaid text",
                              "output")
        _graph("graphviz").draw(str(output), prog="dot")
        return output
    text = mermaid()
    if output is None:
        sys.stdout.write(text)
        return None
    output.write_text(text, encoding="utf-8")
    return output
