"""habitus status: where the state is, which versions, what is enabled, how much is stored."""

from __future__ import annotations

import platform
import sqlite3
from typing import Any

import click

from habitus import __version__, io
from habitus.options import output_options, state_options
from habitus.state import config as configuration
from habitus.state import errorlog, ledger, memory_store, observations
from habitus.state.db import Store
from habitus.state.root import StateRoot

MAN = {
    "stdin": "Not read.",
    "stdout": 'One object: {"v":1,"root","exists","versions","config","enabled","stores","habits",'
    '"observations","advise","errors"}. Each store reports path, exists, schema_version and schema_current; habits '
    "counts habits by status (null when there is no up-to-date ledger); observations reports the current "
    "generation, its record count and last seq, and the archived generations; advise reports reviews, failures, "
    "consecutive_failures, notes (delivered, suppressed, muted, dropped, held, expired, pending), paused "
    "(null or since and reason) and mutes (ok, count).",
    "files": "Reads config.toml, ledger.sqlite, memory.sqlite, observations/ (manifests only) and "
    "errors.jsonl; never creates or migrates anything.",
}


@click.command()
@state_options
@output_options
def cli(root: StateRoot, wait: float, pretty: bool) -> None:
    """Report the state root, versions, settings and counts.

    Never creates state: on a fresh machine it reports what would be used.
    A store from a newer habitus, or a corrupt one, is refused (exit 3).

    \b
    Example:  habitus status --pretty
    """
    io.write_result(report(root, wait=wait), pretty=pretty)


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
        "stores": {
            "ledger": store_status(ledger.store(root, wait=wait)),
            "memory": store_status(memory_store.store(root.memory, label="global", wait=wait)),
        },
        "habits": habit_counts(root, wait=wait),
        "observations": observations.status(root),
        "advise": advise_health(root, wait=wait),
        "errors": {"path": str(root.errors), "logged": errorlog.count(root)},
    }


def advise_health(root: StateRoot, *, wait: float) -> dict[str, Any]:
    """Reviews run, notes delivered/suppressed/muted, failures and pause, mutes.json state (read-only)."""
    from habitus.advise.health import report as advise_report

    return advise_report(root, wait=wait)


def habit_counts(root: StateRoot, *, wait: float) -> dict[str, int] | None:
    """Habits by status, read-only (never creates the ledger); null without an up-to-date ledger."""
    from habitus.habits.store import status_counts

    return status_counts(root, wait=wait)


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
