"""The console-script entry point: answers `--version` before click is even imported, and hands a hook
call to the warm worker (habitus.worker.client, standard library only) when one can take it.

Everything else, and every hook call the worker does not answer, goes to `habitus.cli`.
"""

import sys

from habitus import hookmode  # noqa: F401  (first: its import time is the hook's start for the deadline)


def main() -> None:
    argv = sys.argv[1:]
    if argv in (["--version"], ["-V"]):
        from habitus import __version__

        sys.stdout.write(f"habitus {__version__}\n")
        return
    if "--harness" in argv or any(a.startswith("--harness=") for a in argv):
        from habitus.worker import client

        code = client.run(argv)
        if code is not None:
            sys.exit(code)
    from habitus.cli import main as cli_main

    cli_main()
