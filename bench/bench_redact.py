"""Redaction: what every captured turn pays, and throughput over a mixed corpus.

- one turn: redact + post-check of a 4 KB prompt and answer (prose, a command, a config excerpt), as
  capture does for every turn a hook hands it, in a warm process;
- throughput: redact + post-check over the precision corpus (real Python and JavaScript source, the
  Python language reference, READMEs: 2.6 MB) and the secrets corpus placed in every context, reported
  as milliseconds per 100 KB (the note gives MB/s);
- cold start: `import habitus.redact` and a first redact in a fresh interpreter (a hook is one).
"""

from __future__ import annotations

import gzip
import subprocess
import sys
import time

from harness import REPO, Row, median_ms, time_call

sys.path.insert(0, str(REPO / "src"))
sys.path.insert(0, str(REPO / "tests"))

PRECISION = REPO / "tests" / "fixtures" / "redaction" / "precision"

TURN = (
    "Please fix the flaky login test. It fails on CI with `AssertionError: expected 200, got 401` when "
    "the token expires; the staging config is below.\n\n"
    "```yaml\nauth:\n  issuer: https://auth.example.com\n  audience: api\n  password: ${DB_PASSWORD}\n```\n"
) * 6 + (
    "I changed tests/test_login.py to refresh the token before the request (token = client.refresh()),"
    " ran `pytest -k login -x` three times and it passes; api_key = os.environ['API_KEY'] is unchanged.\n"
) * 10


def _texts() -> list[str]:
    from redaction_corpus import corpus, texts

    found = [gzip.decompress(p.read_bytes()).decode() for p in sorted(PRECISION.glob("*.gz"))]
    chunks = [body[i : i + 20_000] for body in found for i in range(0, len(body), 20_000)]
    return chunks + [row["text"] for row in texts(corpus())]


def run(runs: int) -> list[Row]:
    from habitus.redact import looks_sensitive, redact

    def turn() -> None:
        clean, _ = redact(TURN)
        looks_sensitive(clean)

    one = median_ms(time_call(turn, runs=runs * 5))
    rows = [Row("redact + post-check, one 4 KB turn (warm)", one, runs * 5, "<= 10 ms", one <= 10)]

    texts = _texts()
    size = sum(len(t.encode()) for t in texts)

    def everything() -> None:
        for text in texts:
            clean, _ = redact(text)
            looks_sensitive(clean)

    samples = time_call(everything, runs=max(3, runs // 5), warmup=1)
    per_100k = median_ms(samples) * 100_000 / size
    rate = size / 1e6 / (median_ms(samples) / 1000)
    rows.append(
        Row(
            f"  throughput over {size / 1e6:.1f} MB of code, prose and secrets in context",
            per_100k,
            len(samples),
            "<= 150 ms per 100 KB",
            per_100k <= 150,
            f"{rate:.2f} MB/s",
        )
    )

    probe = "import habitus.redact as r; r.redact('deploy with password=hunter2 now')"
    cold = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run([sys.executable, "-c", probe], check=True, capture_output=True)
        cold.append(time.perf_counter() - started)
    base = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], check=True, capture_output=True)
        base.append(time.perf_counter() - started)
    extra = median_ms(cold) - median_ms(base)
    rows.append(
        Row("  cold import + first redact (over python -c pass)", extra, runs, "<= 60 ms", extra <= 60)
    )
    return rows
