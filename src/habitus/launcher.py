"""The console-script entry point: answers `--version` before click is even imported.

Everything else goes to `habitus.cli`. Keeping this module import-free keeps `habitus --version`
near the interpreter's own start-up time.
"""

import sys


def main() -> None:
    if sys.argv[1:] in (["--version"], ["-V"]):
        from habitus import __version__

        sys.stdout.write(f"habitus {__version__}\n")
        return
    from habitus.cli import main as cli_main

    cli_main()
