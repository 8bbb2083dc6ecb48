"""Run the benchmarks in bench/bench_*.py and print one table (markdown) with the machine and date.

bench/run                 every benchmark
bench/run startup capture only these
bench/run --runs 30       more samples per figure (default 15, never fewer than 10)
"""

from __future__ import annotations

import argparse
import datetime
import importlib
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from harness import Row, machine, table


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("names", nargs="*", help="benchmarks to run (file names without bench_)")
    parser.add_argument("--runs", type=int, default=15, help="timed runs per figure (>= 10)")
    args = parser.parse_args()
    available = sorted(p.stem[len("bench_") :] for p in Path(__file__).parent.glob("bench_*.py"))
    names = args.names or available
    unknown = sorted(set(names) - set(available))
    if unknown:
        parser.error(f"unknown benchmark(s) {', '.join(unknown)}; available: {', '.join(available)}")
    rows: list[Row] = []
    for name in names:
        print(f"running {name} ...", file=sys.stderr)
        rows += importlib.import_module(f"bench_{name}").run(max(10, args.runs))
    today = datetime.date.today().isoformat()
    print(f"{today} · {machine()}\n")
    print(table(rows))
    return 1 if any(row.ok is False for row in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
