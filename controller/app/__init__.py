"""The table as a program: settings, reader backends, outputs, the service, the CLI.

The only layer that touches ``hw/`` and ``firmware_bridge/``, always lazily,
so the base install runs on any Linux.
"""
