"""The deal tracker's state diagram: transitions' graph support with graphviz, Mermaid text otherwise."""

from __future__ import annotations

import logging
import sys
from pathlib import Path

from ..core.errors import ConfigError
from ..core.tracker import STATES, TRANSITIONS

PICTURES = (".png", ".svg", ".pdf")

log = logging.getLogger(__name__)


def mermaid() -> str:
    """The state machine as a Mermaid ``stateDiagram-v2``, built from the declared data."""
    lines = ["stateDiagram-v2", f"    [*] --> {STATES[0]}"]
    for tr in TRANSITIONS:
        sources = tr["source"] if isinstance(tr["source"], list) else [tr["source"]]
        for source in sources:
            dest = tr["dest"] or source
            lines.append(f"    {source} --> {dest}: {tr['trigger']}")
    return "\n".join(lines) + "\n"


def graphviz_available() -> bool:
    try:
        import graphviz  # noqa: F401  (the Python binding used by transitions.extensions)
    except ImportError:
        return False
    import shutil
    return shutil.which("dot") is not None


def write_diagram(output: Path | None) -> Path | None:
    """Write the diagram to ``output`` (standard output when None); return the path written.

    A picture (.png, .svg, .pdf) needs graphviz: without it this raises
    :class:`ConfigError` rather than write something else than was asked.
    """
    if output is not None and output.suffix in PICTURES and not graphviz_available():
        raise ConfigError(f"{output}: a {output.suffix} picture needs graphviz (Debian: apt install graphviz; "
                          f"pip install graphviz); -o {output.with_suffix('.mmd')} writes Mermaid text",
                          "output")
    if output is not None and output.suffix in PICTURES:
        from transitions.extensions import GraphMachine

        class _Model:
            pass

        model = _Model()
        GraphMachine(model=model, states=STATES, transitions=TRANSITIONS, initial=STATES[0],
                     auto_transitions=False, queued=True, show_conditions=True)
        model.get_graph().draw(str(output), prog="dot")
        return output
    text = mermaid()
    if output is None:
        sys.stdout.write(text)
        return None
    output.write_text(text, encoding="utf-8")
    return output
