"""memory reflect over 25,000 and 100,000 observations: one whole run of the real command.

The observations are synthetic and deterministic (seeded), shaped like `memory observe` writes them:
user statements (corrections, preferences, decisions, plain assertions and requests), assistant
plans, decisions and completions, tool failures, with their relevance and metadata. One in twenty
repeats an earlier statement with a word changed (a recurring topic). They are inserted through the
memory store's own insert (records, tags, FTS rows) in one transaction, then `habitus memory reflect`
runs once as a process with the packaged embedding model. Over 2,000 candidate texts reflect judges
by word overlap alone (see habitus.memory.semantic), so this is the cost of the rules, the stores and
the watermark on a catch-up run.
"""

from __future__ import annotations

import random
import time

from harness import HABITUS, Row, temp_root, time_command

SIZES = (25_000, 100_000)
TARGET_S = 60.0
SEED = 11


def _words(rng: random.Random, vocabulary: list[str], weights: list[float], k: int) -> str:
    return " ".join(rng.choices(vocabulary, cum_weights=weights, k=k))


def observations(n: int) -> list[tuple[str, str, str, bool, bool, list[str]]]:
    """(role, content, relevance, assertion, completion, signals) for n observations."""
    rng = random.Random(SEED)
    syllables = [c + v for c in "bdfgklmnprstvz" for v in "aeiou"]
    vocabulary = sorted(
        {"".join(rng.choice(syllables) for _ in range(rng.randint(2, 3))) for _ in range(8000)}
    )
    rng.shuffle(vocabulary)
    weights, total = [], 0.0
    for rank in range(len(vocabulary)):
        total += 1 / (rank + 1)
        weights.append(total)
    # (weight, shape): about 40% user statements, one in four of them a correction, preference or
    # decision; the agent's plans, decisions and completions; tool results, mostly routine.
    shapes = [
        (4, ("user", "User: no, {w} is wrong, use {w}", "critical", True, False, ["correction"])),
        (3, ("user", "User: I prefer {w} over {w}", "critical", True, False, ["preference"])),
        (3, ("user", "User: we decided to use {w} for {w}", "high", True, False, ["decision"])),
        (10, ("user", "User: the {w} lives in {w}", "medium", True, False, [])),
        (20, ("user", "User: please fix {w} in {w}", "medium", False, False, ["request"])),
        (15, ("assistant", "Assistant: I'll look at {w} next", "medium", False, False, ["plan"])),
        (5, ("assistant", "Assistant: going with {w} instead of {w}", "high", False, False, ["decision"])),
        (10, ("assistant", "Assistant completed: fixed {w} in {w}", "critical", False, True, ["completion"])),
        (5, ("tool", "Tool bash failed: error {w} not found", "high", False, False, ["blocker"])),
        (25, ("tool", "Tool read: {w}", "low", False, False, [])),
    ]
    out: list[tuple[str, str, str, bool, bool, list[str]]] = []
    for _ in range(n):
        if out and rng.random() < 0.05:
            role, content, relevance, assertion, completion, signals = rng.choice(out)
            parts = content.split()
            parts[-1] = rng.choice(vocabulary)
            out.append((role, " ".join(parts), relevance, assertion, completion, signals))
            continue
        role, form, relevance, assertion, completion, signals = rng.choices(
            [shape for _, shape in shapes], weights=[w for w, _ in shapes]
        )[0]
        content = form
        while "{w}" in content:
            content = content.replace("{w}", _words(rng, vocabulary, weights, rng.randint(2, 5)), 1)
        out.append((role, content, relevance, assertion, completion, signals))
    return out


def seed(root, n: int) -> None:  # type: ignore[no-untyped-def]
    from habitus.memory import core, observe, records
    from habitus.memory.stores import MemoryStore
    from habitus.state.clock import utc_now

    store = MemoryStore("global", root / "memory.sqlite", wait=30.0)
    conn = store.writer()
    now = utc_now()
    with store.db.write(conn):
        for position, (role, content, relevance, assertion, completion, signals) in enumerate(
            observations(n)
        ):
            proposal = observe.Proposal(
                content, relevance, now, role, position, assertion, completion, signals
            )
            record = records.create(observe._request(proposal, "bench", "rules"), scope="global", now=now)
            core.insert(conn, record)
    store.close()


def run(runs: int) -> list[Row]:
    rows = []
    for n in SIZES:
        with temp_root() as root:
            started = time.perf_counter()
            seed(root, n)
            seeded = time.perf_counter() - started
            samples = time_command(
                [HABITUS, "memory", "reflect", "--stream", "bench"],
                runs=1,
                warmup=0,
                env={"HABITUS_HOME": str(root)},
            )
            seconds = samples[0]
            rows.append(
                Row(
                    f"memory reflect ({n // 1000}k observations, one run)",
                    seconds * 1000,
                    1,
                    f"<= {TARGET_S:.0f} s",
                    seconds <= TARGET_S,
                    f"seeding the store took {seeded:.0f} s",
                )
            )
    return rows
