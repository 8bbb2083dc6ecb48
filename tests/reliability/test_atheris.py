"""Coverage-guided fuzzing with atheris (libFuzzer) over every command's stdin, on top of the hypothesis
fuzz in test_hostile_input.py. atheris is a test extra for Linux x86_64 (where PyPI has wheels); the
test is skipped where it is not installed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from reliability_helpers import rich_root

pytest.importorskip("atheris")

TARGET = Path(__file__).resolve().parent / "atheris_target.py"
RUNS = int(os.environ.get("HABITUS_ATHERIS_RUNS", "1200"))


@pytest.mark.slow
def test_atheris_finds_no_crash_in_any_command(state_root: Path, tmp_path: Path) -> None:
    from test_hostile_input import readers, seeds

    rich_root(state_root)
    work = tmp_path / "work"
    work.mkdir()
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    known = seeds(state_root, work)
    from test_hostile_input import seed_key

    for index, args in enumerate(readers()):
        for number, seed in enumerate(known.get(seed_key(args), [{}])):
            (corpus / f"{index:03d}-{number}").write_bytes(bytes([index]) + json.dumps(seed).encode())
    done = subprocess.run(
        [
            sys.executable,
            str(TARGET),
            str(state_root),
            str(work),
            str(corpus),
            f"-runs={RUNS}",
            "-seed=1",
            "-timeout=120",
            "-rss_limit_mb=4096",
            "-max_len=65536",
        ],
        capture_output=True,
        timeout=900,
        env={**os.environ, "XDG_CONFIG_HOME": str(tmp_path / "xdg")},
        cwd=work,
    )
    assert done.returncode == 0, done.stderr[-6000:].decode(errors="replace")
    assert f"Done {RUNS} runs".encode() in done.stderr, done.stderr[-2000:]
