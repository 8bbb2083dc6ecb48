"""What `habitus status` reports: where the state is, which versions, what is enabled, how much is
stored. Read-only: nothing is created or migrated."""

from __future__ import annotations

import platform
import sqlite3
from typing import Any

from habitus import __version__
from habitus.state import config, errorlog, ledger, memory_store, observations
from habitus.state.db import Store
from habitus.state.root import StateRoot


def status(root: StateRoot, *, wait: float) -> dict[str, Any]:
    """The `habitus status` result (without "v")."""
    settings = config.load(root)
    return {
        "root": str(root.path),
        "exists": root.exists(),
        "versions": {
            "habitus": __version__,
            "python": platform.python_version(),
            "sqlite": sqlite3.sqlite_version,
        },
        "config": {
            "path": str(root.config),
            "exists": settings.exists,
            "unknown_keys": sorted(settings.unknown),
        },
        "enabled": {
            "capture": settings.get("capture.enabled"),
            "select": settings.get("select.enabled"),
            "advise": settings.get("advise.enabled"),
            "analyzer": f"model:{settings.get('analyze.model')}"
            if settings.get("analyze.model")
            else "local",
            "select_judge": settings.get("select.judge"),
        },
        "models": configured_models(settings),
        "stores": {
            "ledger": store_status(ledger.store(root, wait=wait)),
            "memory": store_status(memory_store.store(root.memory, label="global", wait=wait)),
        },
        "habits": habit_counts(root, wait=wait),
        "select": select_counts(root, wait=wait),
        "observations": observations.status(root),
        "analyze": analyze_status(root, wait=wait, analyzer=settings.get("analyze.model")),
        "advise": advise_health(root, wait=wait),
        "errors": {"path": str(root.errors), "logged": errorlog.count(root)},
        "embeddings": embedding_status(root, settings),
    }


def embedding_status(root: StateRoot, settings: Any) -> dict[str, Any]:
    """The embedding model in use and the models memory's vectors come from (nothing is loaded)."""
    from habitus.memory import embedding

    return {"model": settings.get("embed.model"), "memory": embedding.describe(root)}


def configured_models(settings: Any) -> list[dict[str, Any]]:
    """Each [models.NAME] (kind, preset, what uses it): a configured preset is named here."""
    from habitus.models.presets import configured

    return configured(settings)


def advise_health(root: StateRoot, *, wait: float) -> dict[str, Any]:
    """Reviews run, notes delivered/suppressed/muted, failures and pause, mutes.json state (read-only)."""
    from habitus.advise import health

    return health.report(root, wait=wait)


def habit_counts(root: StateRoot, *, wait: float) -> dict[str, int] | None:
    """Habits by status, read-only (never creates the ledger); null without an up-to-date ledger."""
    from habitus.habits.store import status_counts

    return status_counts(root, wait=wait)


def select_counts(root: StateRoot, *, wait: float) -> dict[str, Any] | None:
    """Selection-log counts, read-only; null without an up-to-date ledger."""
    from habitus.select import log

    return log.status(root, wait=wait)


def analyze_status(root: StateRoot, *, wait: float, analyzer: str) -> dict[str, Any]:
    """Unread observations per generation, the last run and quarantined answers (read-only)."""
    from habitus.learn import queue

    return {"analyzer": f"model:{analyzer}" if analyzer else "local", **queue.status(root, wait=wait)}


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
