"""A stand-in table for the analyst's child tests: it hands one ended deal to an
:class:`~controller.app.analyst.Analyst`, prints its child's pid, and waits to be killed (Ctrl-C: it closes the analyst, as the table does)."""

import pathlib
import sys
import tempfile
from types import SimpleNamespace

if __name__ == "__main__":          # the analyst's child is spawned: it imports this file again
    sys.path[:0] = [str(pathlib.Path(__file__).parent), str(pathlib.Path(__file__).parents[1])]
    from table_script import DEAL_A, Script, config

    from controller.app.analyst import Analyst

    script = Script(config())
    script.deal(DEAL_A)
    analyst = Analyst(script.cfg.rules, 3)
    analyst.receive(SimpleNamespace(session_dir=pathlib.Path(tempfile.mkdtemp()),
                                    snapshot=SimpleNamespace(deals=[r.entry for r in script.tracker.records])))
    analyst.wait()
    try:                            # the pids printed inside: the test's Ctrl-C may come at once
        print(*[p.pid for p in analyst._pool._processes.values()], flush=True)
        sys.stdin.read()            # until the test kills it
    except KeyboardInterrupt:       # as the table does on Ctrl-C: close the analyst, exit 130
        analyst.close()
        sys.exit(130)
