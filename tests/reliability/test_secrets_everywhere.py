"""No secret is stored anywhere: the redaction corpora through every command that stores text, then a
byte search of the whole state root (databases with their -wal and -shm, FTS vocabulary, the observation
log and its archive, pending prompts, errors.jsonl) and of a backup taken afterwards.

Two corpora: tests/fixtures/redaction/secrets.jsonl (habitus's own, one text per kind), and the
third-party one of tests/redaction_corpus.py (samples of every detect-secrets pattern and the families
issue reports named, each in nine contexts: bare in prose, `export X=`, a custom header, a JSON field,
YAML, a URL, a code assignment, a log line, an Authorization header). The first goes through every path
text by text; the second through each path in bulk (a stream, a transcript, an import, an observe
request, a model's answers, error messages), and a sample of it through the hook paths one by one.

Memory's own write paths (patch, import, project store, reflect/prune with a model) are covered in depth
by tests/test_memory_redaction.py; here every other writer is fed the same corpus: capture in each mode
and for each harness, habit declare, analyze with a model double that echoes the secrets back (valid
and invalid answers), advise on a slice holding secrets with a model reviewer that echoes them, select,
and hook-mode failures.
"""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path
from typing import Any

import orjson
import pytest

from advise_helpers import Transcript
from conftest import run
from memory_helpers import claude_transcript, full_record, outside_any_repo
from model_doubles import ModelServer, Reply, configure
from redaction_corpus import corpus, texts
from test_memory_redaction import ROWS, UNCLEANABLE, fts_terms, secret_pieces
from test_memory_redaction import leaks as memory_leaks

__all__ = ["outside_any_repo"]  # autouse fixture: no project store in the checkout

# Pieces of the corpus's secrets that are also ordinary words of habitus's own data ("habits" is in
# jane.doe+habits@example.com, and a table name): the whole secret is still searched for.
ORDINARY = {"habits"}


def leaks(folders: list[Path]) -> list[str]:
    return [found for found in memory_leaks(folders) if found.split(": piece ")[-1] not in ORDINARY]


TEXTS = [row["text"] for row in ROWS] + UNCLEANABLE
ONE_LINE = [t for t in TEXTS if "\n" not in t]
THIRD_PARTY = corpus()
PLACED = texts(THIRD_PARTY)
PLACED_TEXTS = [row["text"] for row in PLACED]
_RUN = re.compile(r"[A-Za-z0-9]{8,}")


def third_party_leaks(folders: list[Path]) -> list[str]:
    """Where a third-party secret (whole, or any 8+ character alphanumeric run of it: a PEM body's line,
    a token's random half) appears in the files under folders."""
    wanted = {row["secret"] for row in THIRD_PARTY}
    pieces = {p for secret in wanted for p in _RUN.findall(secret)} - _ORDINARY_RUNS
    found = []
    for folder in folders:
        for path in sorted(p for p in folder.rglob("*") if p.is_file()):
            data = path.read_bytes()
            found += [f"{path.name}: {s[:12]}..." for s in wanted if s.encode() in data]
            found += [f"{path.name}: piece {p}" for p in pieces if p.encode() in data]
    return found


# Runs of the corpus's secrets that are ordinary text of the contexts themselves (none, today; a
# generated sample could in principle spell a word the state holds).
_ORDINARY_RUNS: set[str] = set()


@pytest.fixture(autouse=True)
def quick_retry(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("habitus.models.call.RETRY_DELAY_S", 0.01)


def ok(args: list[str], request: Any = None, *, stdin: bytes | None = None) -> dict[str, Any] | None:
    out = run(args, request, stdin=stdin)
    assert out.exit == 0, (args, out.stderr[-2000:])
    assert not any(row["secret"].encode() in out.stderr for row in ROWS)
    return orjson.loads(out.stdout.splitlines()[0]) if out.stdout.strip() else None


def hook(args: list[str], event: dict[str, Any]) -> None:
    out = run([*args], event)
    assert out.exit == 0 and out.stderr == b"", (args, out.stderr)


def capture_everything(root: Path, tmp: Path) -> None:
    for i, text in enumerate(TEXTS):
        ok(["capture"], {"user": f"please keep {text}", "assistant": f"kept {text}", "session": f"p{i}"})
    stream = b"".join(
        orjson.dumps({"user": f"again: {t}", "assistant": t, "session": t}) + b"\n" for t in TEXTS
    )
    ok(["capture", "--nl"], stdin=stream)
    turns = [(f"remember {t}", f"noted {t}") for t in TEXTS]
    ok(["capture", "--transcript", str(claude_transcript(tmp / "import.jsonl", turns, session="imp"))])
    for n, text in enumerate(TEXTS):
        session = f"cc-{n}"
        transcript = claude_transcript(
            tmp / f"{session}.jsonl", [(f"deploy with {text}", text)], session=session
        )
        base = {"session_id": session, "transcript_path": str(transcript), "cwd": str(tmp)}
        hook(
            ["capture", "--harness", "claude-code"],
            {**base, "hook_event_name": "UserPromptSubmit", "prompt": text},
        )
        hook(["capture", "--harness", "claude-code"], {**base, "hook_event_name": "Stop"})
        codex = {"session_id": f"cx-{n}", "cwd": str(tmp), "transcript_path": None}
        hook(
            ["capture", "--harness", "codex"],
            {**codex, "hook_event_name": "UserPromptSubmit", "prompt": text},
        )
        hook(
            ["capture", "--harness", "codex"],
            {**codex, "hook_event_name": "Stop", "last_assistant_message": text},
        )
        gemini = {
            "hook_event_name": "AfterAgent",
            "session_id": f"g-{n}",
            "prompt": text,
            "prompt_response": text,
        }
        hook(["capture", "--harness", "gemini"], gemini)
        pi_messages = [
            {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": 1763685465041},
            {"role": "assistant", "content": [{"type": "text", "text": text}], "stopReason": "stop"},
        ]
        hook(
            ["capture", "--harness", "pi"],
            {"type": "agent_end", "session_id": f"pi-{n}", "messages": pi_messages},
        )
        hook(["capture", "--harness", "generic"], {"user": text, "assistant": text, "session": f"gen-{n}"})
    # hook-mode failures are logged to errors.jsonl: with a secret in the request
    for text in TEXTS[:5]:
        hook(["capture", "--harness", "claude-code"], {"hook_event_name": 7, "prompt": text})
        hook(
            ["select", "--harness", "claude-code"], {"hook_event_name": "UserPromptSubmit", "prompt": [text]}
        )
    assert (root / "errors.jsonl").exists()


def capture_the_third_party_corpus(tmp: Path) -> None:
    """In bulk: a --nl stream of pairs, a transcript import; a sample through the hooks one by one."""
    stream = b"".join(
        orjson.dumps({"user": f"note {t}", "assistant": t, "session": f"tp{n}", "at": t}) + b"\n"
        for n, t in enumerate(PLACED_TEXTS)
    )
    ok(["capture", "--nl"], stdin=stream)
    turns = [(f"remember {t}", f"noted {t}") for t in PLACED_TEXTS]
    ok(
        [
            "capture",
            "--transcript",
            str(claude_transcript(tmp / "third-party.jsonl", turns, session="tp-imp")),
        ]
    )
    for n, text in enumerate(PLACED_TEXTS[::25]):
        session = f"tp-cc-{n}"
        transcript = claude_transcript(tmp / f"{session}.jsonl", [(text, text)], session=session)
        base = {"session_id": session, "transcript_path": str(transcript), "cwd": str(tmp)}
        hook(
            ["capture", "--harness", "claude-code"],
            {**base, "hook_event_name": "UserPromptSubmit", "prompt": text},
        )
        hook(["capture", "--harness", "claude-code"], {**base, "hook_event_name": "Stop"})
        codex = {"session_id": f"tp-cx-{n}", "cwd": str(tmp), "transcript_path": None, "turn_id": text}
        hook(
            ["capture", "--harness", "codex"],
            {**codex, "hook_event_name": "UserPromptSubmit", "prompt": text},
        )
        hook(
            ["capture", "--harness", "codex"],
            {**codex, "hook_event_name": "Stop", "last_assistant_message": text},
        )
    # hook-mode failures whose message quotes the input (an unknown option is named in the message)
    for row in THIRD_PARTY[::10]:
        if "\n" not in row["secret"] and not row["secret"].startswith("-"):
            hook(["config", "get", "--harness=pi", f"--{row['secret']}"], {})


def memory_the_third_party_corpus() -> None:
    """In bulk: one import of every text (content and metadata), one observe request; a sample retained."""
    lines = [
        orjson.dumps(
            full_record(
                id=f"1c6f1c7e-4a6b-4c1d-8e2f-{n:012x}", content=t, metadata={"source": "import", "at": t}
            )
        )
        for n, t in enumerate(PLACED_TEXTS)
    ]
    out = run(["memory", "import"], stdin=b"\n".join(lines))
    assert out.exit in (0, 2), out.stderr  # all or nothing: refused when one still looks sensitive
    for text in PLACED_TEXTS[::20]:
        retained = run(["memory", "retain"], {"content": f"fact: {text}", "metadata": {"why": text}})
        assert retained.exit in (0, 2), retained.stderr
    messages = [{"role": "user", "text": f"I prefer {t}"} for t in PLACED_TEXTS]
    ok(["memory", "observe"], {"stream": "tp-obs", "messages": messages})


def memory_everything() -> None:
    for text in TEXTS:
        out = run(["memory", "retain"], {"content": f"fact: {text}", "metadata": {"why": text}})
        assert out.exit in (0, 2), out.stderr
    messages = [{"role": "user", "text": f"I prefer {t}"} for t in TEXTS]
    ok(["memory", "observe"], {"stream": "obs", "messages": messages})


def declare_everything() -> None:
    for text in ONE_LINE:
        out = run(
            ["habit", "declare"], {"condition": f"When using {text[:200]}", "behavior": f"Use {text[:200]}"}
        )
        assert out.exit == 3 and out.error["code"] == "refused", (text, out.stdout, out.stderr)


def analyze_with_an_echoing_model(root: Path) -> None:
    proposals = [
        {
            "condition": f"When deploying with {text[:150]}",
            "behavior": f"Always pass {text[:150]}",
            "polarity": 1,
            "confidence_bp": 8000,
            "source_refs": [1, 2, 3],
            "evidence_summary": f"The user said {text[:150]}",
        }
        for text in ONE_LINE[:20]
    ]
    valid = {
        "schema_version": 1,
        "proposals": proposals,
        "memory_suggestions": [
            {"content": f"The key is {t[:200]}", "kind": "fact", "source_refs": [1]}
            for t in ONE_LINE + [p for p in PLACED_TEXTS if "\n" not in p][::3]
        ],
    }
    invalid = {
        "schema_version": 1,
        "proposals": [{"condition": t, "secret": t} for t in TEXTS + PLACED_TEXTS[::4]],
    }  # quarantined
    with ModelServer([Reply.answer("openai", valid), Reply.answer("openai", invalid)]) as server:
        configure(root, "m", kind="openai", url=server.url("/v1"), model="test-model")
        ok(["config", "set", "analyze.model", "m"])
        ok(["config", "set", "analyze.batch_max_records", "60"])
        for _ in range(6):
            out = run(["analyze"])
            assert out.exit in (0, 1), out.stderr  # a quarantined answer is model_error
            if out.exit == 0 and not out.result["batches"]:
                break
        sent = b"".join(r.body for r in server.requests)
    assert server.requests
    assert not [row["kind"] for row in ROWS if row["secret"].encode() in sent]  # never sent a secret


def advise_with_an_echoing_model(root: Path, tmp: Path) -> None:
    ok(["config", "set", "advise.enabled", "true"])
    ok(["config", "set", "analyze.model", ""])
    notes = [
        {
            "schema_version": 1,
            "advice": {"note": f"You leaked {t[:500]}", "severity": "concern", "findingKey": t[:60]},
        }
        for t in ONE_LINE + [p for p in PLACED_TEXTS if "\n" not in p][::40]
    ]
    with ModelServer([Reply.answer("openai", n) for n in notes]) as server:
        configure(root, "m", kind="openai", url=server.url("/v1"), model="test-model")
        ok(["config", "set", "advise.model", "m"])
        ok(["config", "set", "advise.min_interval_s", "0"])
        for n, text in enumerate(TEXTS[:12]):
            out = run(
                ["advise"], {"user": f"ship it {text}", "assistant": f"I used {text}", "session": f"a{n}"}
            )
            assert out.exit in (0, 1), out.stderr
        transcript = Transcript(tmp / "advise.jsonl")
        for text in TEXTS[12:24]:
            transcript.prompt(f"configure {text}").tool("Bash", {"command": f"export TOKEN={text}"}).say(text)
        ok(["advise", "--transcript", str(transcript.path)])
        event = {
            "hook_event_name": "Stop",
            "session_id": transcript.session,
            "transcript_path": str(transcript.path),
        }
        transcript.prompt(TEXTS[30]).say(TEXTS[31])
        hook(["advise", "--harness", "claude-code"], {**event, "cwd": str(tmp)})
        sent = b"".join(r.body for r in server.requests)
    assert not [row["kind"] for row in ROWS if row["secret"].encode() in sent]


def select_with_secrets() -> None:
    for text in TEXTS[:10]:
        ok(["select"], {"prompt": f"deploy with {text}", "context": [text]})
        hook(
            ["select", "--harness", "claude-code"],
            {"hook_event_name": "UserPromptSubmit", "prompt": text, "session_id": "x"},
        )


@pytest.mark.slow
def test_no_secret_is_stored_anywhere(state_root: Path, tmp_path: Path) -> None:
    ok(["config", "set", "capture.enabled", "true"])
    capture_everything(state_root, tmp_path)
    capture_the_third_party_corpus(tmp_path)
    memory_everything()
    memory_the_third_party_corpus()
    declare_everything()
    analyze_with_an_echoing_model(state_root)
    advise_with_an_echoing_model(state_root, tmp_path)
    select_with_secrets()
    backup = tmp_path / "backup"
    ok(["backup", "--out", str(backup)])
    # Every writer really wrote (the search below is not vacuous).
    conn = sqlite3.connect(f"file:{state_root / 'ledger.sqlite'}?mode=ro", uri=True)
    tables = ("analyze_quarantine", "advise_findings", "select_log")
    counts = {t: conn.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0] for t in tables}
    conn.close()
    assert all(counts.values()), counts
    assert len((state_root / "errors.jsonl").read_bytes().splitlines()) >= 10
    assert run(["status"]).result["observations"]["records"] > 3 * len(TEXTS), run(["status"]).stdout

    assert len(THIRD_PARTY) >= 120 and len(PLACED) >= 1000, (len(THIRD_PARTY), len(PLACED))
    assert leaks([state_root, backup]) == []  # before any checkpoint: -wal and -shm included
    found = third_party_leaks([state_root, backup])
    assert found == [], "\n".join(found)
    for database in (state_root / "memory.sqlite", backup / "memory.sqlite"):
        terms = fts_terms(database)
        assert terms and not [t for t in terms if any(p in t for p in secret_pieces())]
        runs = {p.lower() for row in THIRD_PARTY for p in _RUN.findall(row["secret"])}
        assert not [t for t in terms if len(t) >= 8 and any(t in r or r in t for r in runs)]
    report = run(["verify"])
    assert report.exit == 0, report.stdout
