"""Run the benchmarks in bench/bench_*.py and print one table (markdown) with the machine and date.

bench/run                 every benchmark (about ten minutes on 2 cores)
bench/run startup capture only these
bench/run --runs 30       more samples per figure (default 15, never fewer than 10; the slow
                          whole-run figures, analyze of 10k observations and the demo, take fewer)

The table's first column names the benchmark each row comes from; the ratios the issues ask for are in
the notes: `habitus --version` against `python3 -c pass`, capture over 100,000 records against an
empty log, memory retrieve against sqlite-utils search on the same rows.
"""

from __future__ import annotations

import argparse
import compileall
import datetime
import importlib
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from harness import Row, machine

# The order of the table: start-up first, then the hot paths a hook takes, then the heavy runs.
ORDER = (
    "startup",
    "hooks",
    "capture",
    "redact",
    "select",
    "memory",
    "mcp",
    "habits",
    "analyze",
    "advise",
    "report",
    "backup",
    "demo",
    "harnesses",
)


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("names", nargs="*", help="benchmarks to run (file names without bench_)")
    parser.add_argument("--runs", type=int, default=15, help="timed runs per figure (>= 10)")
    args = parser.parse_args()
    found = {p.stem[len("bench_") :] for p in Path(__file__).parent.glob("bench_*.py")}
    available = [n for n in ORDER if n in found] + sorted(found - set(ORDER))
    names = args.names or available
    unknown = sorted(set(names) - set(available))
    if unknown:
        parser.error(f"unknown benchmark(s) {', '.join(unknown)}; available: {', '.join(available)}")
    # Bytecode for habitus's own modules: an editable install has none, and with PYTHONDONTWRITEBYTECODE
    # set (as on the shared machines) every hook process would compile them again, which measured
    # 4 ms of a warm hook's CPU and 50-60 ms of a cold one's: the compiler, not habitus.
    compileall.compile_dir(str(Path(__file__).resolve().parent.parent / "src"), quiet=1)
    load = os.getloadavg()[0]
    rows: list[tuple[str, Row]] = []
    started = time.monotonic()
    for name in names:
        print(f"running {name} ...", file=sys.stderr)
        try:
            found = importlib.import_module(f"bench_{name}").run(max(10, args.runs))
        except Exception as exc:  # one broken benchmark must not lose the others' figures
            found = [Row(f"{name} did not run", 0.0, 0, "", False, f"{type(exc).__name__}: {exc}"[:200])]
        rows += [(name, row) for row in found]
    today = datetime.date.today().isoformat()
    span = f"load average {load:.1f} at the start, {os.getloadavg()[0]:.1f} at the end"
    print(f"{today} · {machine()} · {time.monotonic() - started:.0f} s in all · {span}\n")
    print(table(rows))
    return 1 if any(row.ok is False for _, row in rows) else 0


def table(rows: list[tuple[str, Row]]) -> str:
    lines = [
        "| area | benchmark | median | runs | target | ok | note |",
        "|---|---|---:|---:|---|---|---|",
    ]
    for area, row in rows:
        ok = "" if row.ok is None else ("yes" if row.ok else "**NO**")
        median = f"{row.median_ms:.1f} ms" if row.runs else "—"
        lines.append(
            f"| {area} | {row.name.strip()} | {median} | {row.runs} | {row.target} | {ok} | {row.note} |"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
