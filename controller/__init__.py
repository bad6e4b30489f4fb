"""preftable controller: the game (cards, rules, deal tracker, scoring, logs, service, CLI).

Pure logic here is free of I/O so it can be tested and replayed exactly.
"""

__version__ = "0.1.0"
