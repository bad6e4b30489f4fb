"""What is kept on disk: the game log, its checkpoint journal, and replay (FORMATS.md "Game log").

Depends on :mod:`controller.core` only.
"""
