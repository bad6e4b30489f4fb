"""Host side of the table hub's serial protocol (``/work/shared/PROTOCOL.md``).

``codec`` encodes and parses frames (pure, no I/O), ``link`` runs the host end
of the line and turns the hub's reports into table events, ``emulator`` is a
virtual hub behind a pty or a TCP port with scriptable faults.  The hub's own
MicroPython firmware lives in ``firmware/`` and shares no code with these.
"""
