"""The test suite mirrors the code's layers: core/, store/, app/, hw/, firmware_bridge/, systemd/.

This file sits at the top so that pytest puts ``tests/`` on ``sys.path`` and
every layer's tests can import the shared deal scripts of ``table_script``.
"""
