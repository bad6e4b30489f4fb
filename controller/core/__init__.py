"""The game, pure: no I/O, no clock, no hardware (RULES.md, FORMATS.md).

Feeding the same table events always gives the same signals, which is what
lets a game log replay exactly.  Nothing here imports ``hw``,
``firmware_bridge``, ``controller.store`` or ``controller.app``.
"""
