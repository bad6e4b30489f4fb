"""preftable controller, in three layers that the imports make visible.

- :mod:`controller.core`: the game, pure (cards, rules config, deck, table
  events, the deal, the tracker, scoring, the view).  It imports nothing of
  ``hw/``, ``firmware_bridge/``, ``store`` or ``app``.
- :mod:`controller.store`: the game log, the checkpoint journal and replay;
  it uses ``core`` only.
- :mod:`controller.app`: settings, backends, the table service, the CLI and
  its commands (demo, enroll, doctor, report); it uses everything.

``hw/`` and ``firmware_bridge/`` depend on ``controller.core`` only.
"""

__version__ = "0.1.0"
