"""Habits: embedding throughput, model load, a 100-habit dedupe scan with model load, review commands."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import time

from harness import HABITUS, REPO, Row, median_ms, temp_root, time_call, time_command

SENTENCES = [
    f"When {situation}, {action} before anything else (case {i})"
    for i, (situation, action) in enumerate(
        [
            ("a test fails", "read the whole error message"),
            ("I ask for a release", "run the full test suite"),
            ("editing a configuration file", "keep the existing comments"),
            ("a dependency is outdated", "read its changelog"),
        ]
        * 64
    )
]


def _seed(root: str, count: int) -> None:
    """`count` distinct approved habits, written through the production row sealing."""
    os.environ["HABITUS_HOME"] = root
    sys.path.insert(0, str(REPO / "tests"))
    from habit_seed import seed_habits
    from habitus.state.root import StateRoot

    topics = [
        "tests",
        "releases",
        "configs",
        "docs",
        "migrations",
        "logging",
        "shell",
        "reviews",
        "git",
        "deps",
    ]
    verbs = [
        "check",
        "explain",
        "summarise",
        "verify",
        "document",
        "measure",
        "ask about",
        "list",
        "compare",
        "log",
    ]
    seed_habits(
        StateRoot.at(root),
        (
            {
                "condition": f"When working on {topics[i % 10]} in area {i // 10}",
                "behavior": f"Always {verbs[(i * 3) % 10]} the {topics[(i * 7) % 10]} first (rule {i})",
                "polarity": 1,
            }
            for i in range(count)
        ),
    )


def _scan_cold(root: str, runs: int) -> list[float]:
    """Each run is a new process with no cached vectors: model load + 200 embeddings + 4,950 pairs."""
    env = {**os.environ, "HABITUS_HOME": root}
    samples = []
    for index in range(runs + 1):
        conn = sqlite3.connect(os.path.join(root, "ledger.sqlite"))
        conn.execute("DELETE FROM habit_vectors")
        conn.commit()
        conn.close()
        started = time.perf_counter()
        done = subprocess.run([HABITUS, "dedupe", "scan"], capture_output=True, env=env, check=False)
        elapsed = time.perf_counter() - started
        if done.returncode != 0:
            raise RuntimeError(f"dedupe scan exited {done.returncode}: {done.stderr[-500:]!r}")
        if index:  # the first run warms the page cache
            samples.append(elapsed)
    return samples


def run(runs: int) -> list[Row]:
    from habitus.models.embedders import load_embedder
    from habitus.state.root import StateRoot

    rows: list[Row] = []
    with temp_root() as root:
        os.environ["HABITUS_HOME"] = str(root)
        embedder = load_embedder(StateRoot.at(root))
        batch = median_ms(time_call(lambda: embedder.embed(SENTENCES), runs=max(3, runs // 3), warmup=1))
        rate = len(SENTENCES) / (batch / 1000)
        rows.append(
            Row(
                f"embed {len(SENTENCES)} sentences (1 thread)",
                batch,
                max(3, runs // 3),
                note=f"{rate:.0f} sentences/s",
            )
        )
        one = median_ms(time_call(lambda: embedder.embed(["When a test fails, read the error"]), runs=runs))
        rows.append(Row("embed 1 sentence", one, runs))
        probe = (
            "from habitus.models.embedders import load_embedder; from habitus.state.root import StateRoot; "
            "load_embedder(StateRoot.at()).embed(['warm'])"
        )
        load = median_ms(
            time_command([sys.executable, "-c", probe], runs=runs, env={"HABITUS_HOME": str(root)})
        )
        rows.append(Row("process: import + verify (cached) + load model + embed 1", load, runs))
        stamp = root / "models" / "verified.json"
        first = []
        for _ in range(max(3, runs // 3)):
            stamp.unlink(missing_ok=True)
            first += time_command(
                [sys.executable, "-c", probe], runs=1, warmup=0, env={"HABITUS_HOME": str(root)}
            )
        rows.append(Row("same, first use: SHA-256 of the 90 MB model", median_ms(first), len(first)))

    with temp_root() as root:
        _seed(str(root), 100)
        samples = _scan_cold(str(root), max(3, runs // 3))
        scan = median_ms(samples)
        rows.append(
            Row(
                "dedupe scan, 100 habits, cold vectors, model load included",
                scan,
                len(samples),
                "<= 5000 ms",
                scan <= 5000,
                "4,950 pairs; 200 embeddings",
            )
        )
        env = {"HABITUS_HOME": str(root)}
        listed = median_ms(time_command([HABITUS, "habit", "list"], runs=runs, env=env))
        rows.append(Row("habit list (100 habits)", listed, runs, "", None, "no model load"))
        warm = median_ms(time_command([HABITUS, "dedupe", "scan"], runs=max(3, runs // 3), env=env))
        rows.append(Row("dedupe scan, 100 habits, cached vectors", warm, max(3, runs // 3)))
    return rows
