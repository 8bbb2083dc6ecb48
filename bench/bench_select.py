"""select: a hook call with no approved habit, and with 1,000 approved habits (local judge).

- 0 approved habits: `habitus select --harness claude-code` on a root whose ledger holds only a
  disabled habit (what a fresh install with the hook wired in sees), and with no ledger at all;
- 1,000 approved habits: the 32 catalog habits of tests/fixtures/select plus 968 generated ones,
  inserted in bulk through the habits API (`lifecycle` insert + activate in one transaction, vectors
  with `vectors.ensure`); select considers the top 100 by confidence then id, as designed. Prompts
  rotate over a few requests and non-requests;
- in process, on the same root: retrieval alone (embed the prompt, its clauses and their plain-words
  reading where it differs, cosine against the 100 cached condition and example vectors, floor and
  top-k), the local judge (the gate), and the whole `select()`; prompts include German and Japanese;
- the cost that dominates a process: importing numpy/onnxruntime and loading the model.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

from harness import HABITUS, REPO, Row, median_ms, temp_root, time_call

sys.path.insert(0, str(REPO / "src"))

PROMPTS = [
    "write the commit message for the staged diff",
    "don't worry about the release for now",
    "delete the tmp/ directory and the old build artifacts",
    "what's the difference between a mutex and a semaphore?",
    "review PR #412 and then open one for my branch",
    "schreib bitte die Commit-Nachricht für die Änderungen",
    "このブランチでプルリクエストを作成して",
]
VERBS = [
    "writing", "reviewing", "deleting", "renaming", "deploying", "documenting", "profiling", "testing",
    "refactoring", "configuring", "migrating", "releasing", "debugging", "formatting", "benchmarking",
    "archiving", "translating", "packaging", "securing", "monitoring", "caching", "indexing", "validating",
    "scheduling", "auditing",
]  # fmt: skip
OBJECTS = [
    "the payment service", "the search index", "the login page", "the CSV importer", "the cron jobs",
    "the mobile app", "the GraphQL schema", "the billing emails", "the feature flags", "the Terraform modules",
    "the Helm charts", "the websocket gateway", "the PDF renderer", "the audit trail", "the rate limiter",
    "the image resizer", "the onboarding flow", "the plugin loader", "the metrics exporter", "the backup job",
    "the SSO integration", "the admin dashboard", "the queue workers", "the notification service",
    "the geocoder", "the report generator", "the cache layer", "the session store", "the file uploader",
    "the search ranking", "the A/B test harness", "the translation files", "the data warehouse sync",
    "the webhook relay", "the invoice numbering", "the sitemap", "the dark mode", "the CLI installer",
    "the retry policy",
]  # fmt: skip
ACTIONS = [
    "list what you changed at the end", "ask before touching shared config", "keep the diff small",
    "mention the ticket number", "run the linters first", "write down the rollback steps",
    "check the error budget", "note any new environment variables",
]  # fmt: skip


def _seed(root: str, total: int) -> None:
    """`total` approved habits: the catalog first, then generated ones, in one transaction."""
    os.environ["HABITUS_HOME"] = root
    from habitus.habits import lifecycle, load_law, vectors
    from habitus.habits.store import Ledger, habits
    from habitus.models.embedders import load_embedder
    from habitus.state.root import StateRoot

    state = StateRoot.at(root)
    catalog = [
        json.loads(line) for line in (REPO / "tests/fixtures/select/habits.jsonl").read_text().splitlines()
    ]
    wordings = [(h["condition"], h["behavior"], h["polarity"]) for h in catalog]
    for i in range(total - len(wordings)):
        verb, obj = VERBS[i % len(VERBS)], OBJECTS[(i // len(VERBS)) % len(OBJECTS)]
        wordings.append((f"When {verb} {obj}", f"Do {ACTIONS[i % len(ACTIONS)]} (rule {i}).", 1))
    law = load_law(state)
    with Ledger.open(state, wait=30) as ledger:
        with ledger.tx():
            for n, (condition, behavior, polarity) in enumerate(wordings):
                confidence = 9000 if n < len(catalog) else 8000 - (n % 500)
                habit = lifecycle._insert(
                    ledger, condition, behavior, polarity, confidence, "declared", None, law, [], "user"
                )
                lifecycle._activate(ledger, habit, law, actor="user", action="approve")
        vectors.ensure(ledger, load_embedder(state), habits(ledger.conn, ("active",)))


def _hook(root: str, runs: int, warmup: int = 2) -> list[float]:
    env = {**os.environ, "HABITUS_HOME": root}
    samples = []
    for index in range(warmup + runs):
        event = {
            "hook_event_name": "UserPromptSubmit",
            "session_id": "b",
            "prompt": PROMPTS[index % len(PROMPTS)],
        }
        started = time.perf_counter()
        done = subprocess.run(
            [HABITUS, "select", "--harness", "claude-code"],
            input=json.dumps(event).encode(),
            capture_output=True,
            env=env,
            check=False,
        )
        elapsed = time.perf_counter() - started
        if done.returncode != 0 or os.path.exists(os.path.join(root, "errors.jsonl")):
            raise RuntimeError(f"select failed (see {root}/errors.jsonl): {done.stderr[-500:]!r}")
        if index >= warmup:
            samples.append(elapsed)
    return samples


def run(runs: int) -> list[Row]:
    rows: list[Row] = []
    with temp_root() as root:
        none = median_ms(_hook(str(root), runs))
        rows.append(Row("select hook, no ledger (per process)", none, runs, "<= 150 ms", none <= 150))
        subprocess.run(
            [HABITUS, "habit", "declare", "--condition", "When writing a commit message",
             "--behavior", "Do write an imperative subject line."],
            env={**os.environ, "HABITUS_HOME": str(root)}, check=True, capture_output=True,
        )  # fmt: skip
        ids = subprocess.run(
            [HABITUS, "habit", "list", "--status", "active"],
            env={**os.environ, "HABITUS_HOME": str(root)},
            check=True,
            capture_output=True,
        )
        for item in json.loads(ids.stdout)["items"]:
            subprocess.run([HABITUS, "habit", "disable", item["id"]], env={**os.environ, "HABITUS_HOME": str(root)},
                           check=True, capture_output=True)  # fmt: skip
        zero = median_ms(_hook(str(root), runs))
        rows.append(
            Row(
                "select hook, 0 approved habits (per process)",
                zero,
                runs,
                "<= 150 ms",
                zero <= 150,
                "ledger present",
            )
        )

    with temp_root() as root:
        started = time.perf_counter()
        _seed(str(root), 1000)
        seeded = time.perf_counter() - started
        full = median_ms(_hook(str(root), runs))
        rows.append(
            Row(
                "select hook, 1,000 approved habits, local judge (per process)",
                full,
                runs,
                "<= 300 ms",
                full <= 300,
                f"seeded in {seeded:.1f} s",
            )
        )
        rows += _in_process(str(root), runs)
    return rows


def _in_process(root: str, runs: int) -> list[Row]:
    from habitus.habits import active_habits, load_law
    from habitus.habits.store import Ledger
    from habitus.habits.vectors import retrieval_matrix
    from habitus.models.embedders import load_embedder
    from habitus.select import judge, select
    from habitus.state.root import StateRoot

    state = StateRoot.at(root)
    probe = "from habitus.models.embedders import load_embedder; from habitus.state.root import StateRoot; load_embedder(StateRoot.at())"
    load = []
    for _ in range(max(5, runs // 2)):
        started = time.perf_counter()
        subprocess.run([sys.executable, "-c", probe], env={**os.environ, "HABITUS_HOME": root}, check=True)
        load.append(time.perf_counter() - started)
    embedder = load_embedder(state)
    with Ledger.open_read(state, wait=5) as ledger:  # type: ignore[union-attr]
        habits = active_habits(ledger.conn, load_law(state))
        matrix, owners, behaviors = retrieval_matrix(ledger.conn, habits, embedder.model_id, embedder.dims)
        read = median_ms(time_call(lambda: retrieval_matrix(ledger.conn, active_habits(ledger.conn, load_law(state)),
                                                            embedder.model_id, embedder.dims), runs=runs))  # fmt: skip
    queries = [judge.analyse(p) for p in PROMPTS]
    counter = iter(range(10**9))

    def retrieval() -> None:
        judge.retrieve(embedder, matrix, queries[next(counter) % len(queries)], owners, behaviors=behaviors)

    found = [judge.retrieve(embedder, matrix, q, owners, behaviors=behaviors) for q in queries]

    def judging() -> None:
        n = next(counter) % len(queries)
        judge.local_judge(embedder, habits, queries[n], found[n], limit=3)

    def whole() -> None:
        select(state, PROMPTS[next(counter) % len(PROMPTS)], wait=5)

    retrieve_ms = median_ms(time_call(retrieval, runs=runs * 2))
    return [
        Row("in process: retrieval (embed prompt, clauses and their plain reading; 100 vectors)", retrieve_ms, runs * 2, "<= 20 ms",
            retrieve_ms <= 20),
        Row("in process: local judge (after retrieval)", median_ms(time_call(judging, runs=runs * 2)), runs * 2),
        Row("in process: read 100 candidates + their vectors (verified)", read, runs),
        Row("in process: whole select(), model loaded", median_ms(time_call(whole, runs=runs)), runs),
        Row("process: import numpy/onnxruntime + load model", median_ms(load), len(load), "", None,
            "what dominates a select process"),
    ]  # fmt: skip
