"""Helpers for the habit, dedupe and model tests: real ledger, real model, no doubles."""

from __future__ import annotations

import os
import shutil
import sqlite3
from pathlib import Path
from typing import Any

from conftest import Run, run
from habitus.embed.registry import default_folder
from habitus.habits import lifecycle
from habitus.habits.law import load_law
from habitus.habits.store import Ledger
from habitus.models.embedders import load_embedder
from habitus.state.root import StateRoot

RELEASE = ("When I ask for a release", "Run the full test suite first")
RELEASE_PARAPHRASE = ("When preparing a new release", "Execute all the tests before publishing")
GOFMT = ("When writing Go code", "Run gofmt before committing")
ERRORS = ("When a test fails", "Read the whole error message before changing code")


def declare(condition: str, behavior: str, polarity: int = 1, **extra: Any) -> Run:
    return run(
        ["habit", "declare"], {"condition": condition, "behavior": behavior, "polarity": polarity, **extra}
    )


def declared(condition: str, behavior: str, polarity: int = 1) -> dict[str, Any]:
    out = declare(condition, behavior, polarity)
    assert out.exit == 0, out.stderr
    return out.result["habit"]


def root() -> StateRoot:
    return StateRoot.at()


def ledger() -> Ledger:
    return Ledger.open(root(), wait=5)


def db() -> sqlite3.Connection:
    conn = sqlite3.connect(root().ledger)
    conn.row_factory = sqlite3.Row
    return conn


def propose(
    condition: str,
    behavior: str,
    days: list[str],
    *,
    polarity: int = 1,
    key: str | None = None,
    confidence: int = 8000,
    with_vectors: bool = False,
    start: int = 0,
    notes: list[str] | None = None,
) -> dict[str, Any]:
    """analyze's path: one proposal citing one observation per entry of days (with `notes`: the
    redacted quote of each, which also become the habit's example prompts)."""
    quotes = notes or [None] * len(days)
    proposal = lifecycle.Proposal(
        condition,
        behavior,
        polarity,
        confidence,
        tuple(lifecycle.Evidence(f"obs-1:{start + i}:ref", day, quotes[i]) for i, day in enumerate(days)),
        key,
    )
    with ledger() as led:
        embedder = load_embedder(led.root) if with_vectors else None
        prepared = lifecycle.prepare_proposal(embedder, proposal) if embedder else None
        with led.tx():
            return lifecycle.propose_candidate(
                led, proposal, law=load_law(led.root), prepared=prepared, embedder=embedder
            )


REVIEWABLE = ["2026-11-01", "2026-11-01", "2026-11-02"]


def copy_default_model(dest: Path) -> Path:
    """A model folder laid out like an export (onnx/model.onnx + external data, tokenizer.json),
    hard-linked from the packaged default when possible (read-only use)."""
    source = default_folder()
    for rel in ("onnx/model.onnx", "onnx/model.onnx_data", "tokenizer.json"):
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            os.link(source / rel, target)
        except OSError:
            shutil.copyfile(source / rel, target)
    return dest
