"""The demo: `habitus demo`, the whole loop in 13 processes (the embedding model loads in 6 of them)."""

from __future__ import annotations

from harness import HABITUS, Row, median_ms, time_command

RUNS = 5  # each run is a few seconds; the median of 5 is enough for a figure a person waits for


def run(runs: int) -> list[Row]:
    samples = time_command([HABITUS, "demo"], runs=min(runs, RUNS), warmup=1)
    took = median_ms(samples)
    return [Row("habitus demo (the whole loop, 13 commands)", took, len(samples), "<= 10 s", took <= 10_000)]
