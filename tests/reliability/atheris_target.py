"""Coverage-guided fuzzing of every command's stdin with atheris (libFuzzer), run by test_atheris.py.

    python tests/reliability/atheris_target.py STATE_ROOT WORK CORPUS -runs=N

The first byte of an input picks the command (from the click tree), the rest is its stdin. Each run
checks the same contract as test_hostile_input.py: no traceback, never `failed`, one error object on
failure, and a failure changes nothing in the state root. A violation raises, so atheris stops and
prints the input that caused it.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent), str(HERE)]

import atheris  # noqa: E402

with atheris.instrument_imports(include=["habitus"]):
    import habitus.cli
    import habitus.codec
    import habitus.commands.advise
    import habitus.commands.capture
    import habitus.commands.config
    import habitus.commands.habit
    import habitus.commands.memory
    import habitus.commands.restore
    import habitus.commands.select
    import habitus.harness.events
    import habitus.io
    import habitus.memory.records  # noqa: F401

from test_hostile_input import HOOK_LOGS, check_contract, hook_mode, logged, readers  # noqa: E402

from conftest import run  # noqa: E402
from reliability_helpers import fingerprint  # noqa: E402

ROOT = Path(sys.argv[1])
INVOCATIONS = readers()


def one(data: bytes) -> None:
    if not data:
        return
    args = INVOCATIONS[data[0] % len(INVOCATIONS)]
    skip = ("locks", *HOOK_LOGS) if hook_mode(args) else ("locks",)
    before = fingerprint(ROOT, skip=skip)
    count = len(logged(ROOT))
    out = run(args, stdin=data[1:])
    check_contract(out, args)
    if out.exit or (hook_mode(args) and len(logged(ROOT)) > count):
        assert fingerprint(ROOT, skip=skip) == before, (args, out.stderr[:300])
        assert all(e["code"] != "failed" for e in logged(ROOT)[count:]), logged(ROOT)[count:]


def main() -> None:
    os.environ["HABITUS_HOME"] = str(ROOT)
    os.chdir(sys.argv[2])
    atheris.Setup([sys.argv[0], *sys.argv[3:]], one)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
