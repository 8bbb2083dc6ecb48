"""advise: a local review of a 24,000-character slice against 100 approved habits, per process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from harness import HABITUS, REPO, Row, median_ms, temp_root, time_call, time_command

CATALOG = REPO / "tests" / "fixtures" / "select" / "habits.jsonl"
TEXTS = [
    REPO / "src" / "habitus" / "demo" / "sample_conversation.jsonl",
    *sorted((REPO / "tests" / "fixtures" / "analyze").glob("*.jsonl")),
]
OBJECTS = [
    "the payment service", "the search index", "a feature flag", "the onboarding flow", "the cache layer",
    "an HTTP handler", "the billing report", "a cron job", "the mobile build", "the audit log",
    "a GraphQL resolver", "the deploy pipeline", "an S3 bucket policy", "the rate limiter", "a Kafka consumer",
    "the settings page", "a database index", "the CSV importer", "the websocket server", "a Terraform module",
]  # fmt: skip
ACTIONS = [
    "write down the rollback plan", "measure it before and after", "name the owner in the ticket",
    "link the design note", "keep the old path working for one release",
]  # fmt: skip


def _habits() -> list[dict[str, object]]:
    """The 32 labelled catalog habits plus 68 more of the same shape: 100 approved habits."""
    habits = [json.loads(line) for line in CATALOG.read_text().splitlines()]
    for i in range(100 - len(habits)):
        obj, action = OBJECTS[i % len(OBJECTS)], ACTIONS[i % len(ACTIONS)]
        habits.append(
            {"condition": f"When changing {obj} (area {i})", "behavior": f"Do {action}.", "polarity": 1}
        )
    return habits


def _seed(root: Path) -> None:
    """100 approved habits (the production row sealing, via tests/habit_seed.py) and advise enabled."""
    os.environ["HABITUS_HOME"] = str(root)
    sys.path.insert(0, str(REPO / "tests"))
    from habit_seed import seed_habits
    from habitus.state import config
    from habitus.state.root import StateRoot

    state = StateRoot.at(root)
    config.set_value(state, "advise.enabled", True, wait=5)
    seed_habits(state, _habits())


def slice_request(chars: int = 24_000) -> bytes:
    """A pair whose agent text is `chars` characters of ordinary agent replies, ending in a release-ready
    claim (so a habit triggers and the embedding model must load: the slow path)."""
    replies = [
        json.loads(line)["assistant"] for path in TEXTS for line in path.read_text().splitlines() if line
    ]
    body, i = [], 0
    while sum(len(r) + 2 for r in body) < chars - 200:
        body.append(replies[i % len(replies)])
        i += 1
    text = "\n\n".join(body)[: chars - 60] + "\n\nAll tests pass. The release is ready to ship."
    return json.dumps({"user": "get the release out", "assistant": text, "session": "bench"}).encode()


def run(runs: int) -> list[Row]:
    rows: list[Row] = []
    with temp_root() as root:
        _seed(root)
        env = {"HABITUS_HOME": str(root)}
        # Approval stores each habit's vectors; recheck builds them for the habits seeded directly.
        subprocess.run(
            [HABITUS, "habit", "recheck"], capture_output=True, env={**os.environ, **env}, check=True
        )
        request = slice_request()
        first = subprocess.run(
            [HABITUS, "advise"], input=request, capture_output=True, env={**os.environ, **env}
        )
        result = json.loads(first.stdout)
        assert result["slice"]["chars"] >= 23_000 and result["reviewers"]["local"]["habits"] == 100, result
        review = median_ms(time_command([HABITUS, "advise"], runs=runs, stdin=request, env=env))
        rows.append(
            Row(
                "advise: local review, 24,000-char slice, 100 habits (per process, model load included)",
                review,
                runs,
                "<= 1000 ms",
                review <= 1000,
                f"{result['slice']['chars']} chars reviewed",
            )
        )
        rows.append(_in_process(root, request, runs))
        quiet = json.dumps({"user": "thanks", "assistant": "You are welcome.", "session": "bench"}).encode()
        nothing = median_ms(time_command([HABITUS, "advise"], runs=runs, stdin=quiet, env=env))
        rows.append(Row("advise: a review where no habit's words appear (no model load)", nothing, runs))
        prompt = json.dumps(
            {"hook_event_name": "UserPromptSubmit", "session_id": "s", "prompt": "hi"}
        ).encode()
        hook = median_ms(
            time_command([HABITUS, "advise", "--harness", "claude-code"], runs=runs, stdin=prompt, env=env)
        )
        rows.append(
            Row(
                "advise --harness claude-code, UserPromptSubmit, nothing pending",
                hook,
                runs,
                "<= 150 ms",
                hook <= 150,
            )
        )
    return rows


def _in_process(root: Path, request: bytes, runs: int) -> Row:
    """The same review called in process with the model already loaded (a warm worker, or the second
    review of one process): what the semantic judge and the word rules cost on their own."""
    from habitus.advise import review
    from habitus.harness.transcripts import Turn
    from habitus.state.root import StateRoot

    data = json.loads(request)
    state = StateRoot.at(root)
    counter = iter(range(1_000_000))

    def once() -> None:
        source = review.Source(
            f"bench-{next(counter)}", turns=[Turn(user=data["user"], assistant=data["assistant"])]
        )
        review.run(state, source, wait=5, route=lambda _: "result")

    median = median_ms(time_call(once, runs=runs))
    return Row(
        "advise: the same review in process, model loaded (semantic judge + word rules)",
        median,
        runs,
        "<= 600 ms",
        median <= 600,
    )
