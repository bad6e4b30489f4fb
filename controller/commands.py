"""Registration of the subcommands that live outside :mod:`controller.cli`.

Each entry adds one subparser; its handler imports the service, hub or
hardware code only when the command runs.
"""

from __future__ import annotations

REGISTER: list = []
