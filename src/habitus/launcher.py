"""What the `habitus` command (entry/habitus) runs: answers `--version` (and hook calls under
HABITUS_NO_HOOKS) before click is even imported, and hands a hook call to the warm worker
(habitus.worker.client, standard library only) when one can take it.

Everything else, and every hook call the worker does not answer, goes to `habitus.cli`.
"""

import os
import sys

from habitus import hookmode  # first: its import time is the start of a hook call's deadline


def main() -> None:
    argv = sys.argv[1:]
    if os.environ.get("HABITUS_NO_HOOKS") and hookmode.is_hook_call(argv):
        # A model call habitus itself started (an agent CLI preset): its hooks must not recurse.
        return
    if argv in (["--version"], ["-V"]):
        from habitus import __version__

        sys.stdout.write(f"habitus {__version__}\n")
        return
    if hookmode.is_hook_call(argv):
        hookmode.one_thread()  # before the client copies the environment the worker runs the call in
        from habitus.worker import client

        code = client.run(argv)
        if code is not None:
            # Served: the reply is written and flushed, nothing else was opened or registered, so the
            # interpreter's teardown (2-3 ms of a warm hook's ~20) has nothing to do but take time.
            _leave(code)
    from habitus import cli

    cli.main()


def _leave(code: int) -> None:
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        pass  # the harness closed our stdout: nothing more to say
    os._exit(code)
