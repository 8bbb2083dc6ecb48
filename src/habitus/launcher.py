"""The console-script entry point: answers `--version` (and hook calls under HABITUS_NO_HOOKS) before
click is even imported.

Everything else goes to `habitus.cli`. Keeping this module import-free keeps `habitus --version`
near the interpreter's own start-up time.
"""

import os
import sys


def main() -> None:
    if os.environ.get("HABITUS_NO_HOOKS") and _hook_mode(sys.argv[1:]):
        # A model call habitus itself started (an agent CLI preset): its hooks must not recurse.
        return
    if sys.argv[1:] in (["--version"], ["-V"]):
        from habitus import __version__

        sys.stdout.write(f"habitus {__version__}\n")
        return
    from habitus.cli import main as cli_main

    cli_main()


def _hook_mode(args: list[str]) -> bool:
    """`--harness` given to anything but `habitus hooks` (which only prints or installs settings)."""
    named = any(a == "--harness" or a.startswith("--harness=") for a in args)
    return named and next((a for a in args if not a.startswith("-")), None) != "hooks"
