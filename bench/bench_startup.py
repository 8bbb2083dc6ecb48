"""Start-up: `habitus --version` against `python3 -c pass` in the same run."""

from __future__ import annotations

import sys

from harness import HABITUS, Row, median_ms, time_command


def run(runs: int) -> list[Row]:
    python = median_ms(time_command([sys.executable, "-c", "pass"], runs=runs))
    version = median_ms(time_command([HABITUS, "--version"], runs=runs))
    helptext = median_ms(time_command([HABITUS, "--help"], runs=runs))
    ratio = version / python
    return [
        Row("python3 -c pass (baseline)", python, runs),
        Row(
            "habitus --version",
            version,
            runs,
            "<= 150 ms and <= 3x baseline",
            version <= 150 and ratio <= 3,
            f"{ratio:.2f}x baseline",
        ),
        Row("habitus --help", helptext, runs, "<= 150 ms", helptext <= 150),
    ]
