"""The JSON Schemas habitus publishes (package data), and validation against them.

Each schema is a `*.json` file in this folder with an `$id` under `https://schemas.habitus.invalid/`
(the `.invalid` top-level domain can never resolve, so nothing is ever fetched). Schemas refer to each
other with relative `$ref`s (`"common.v1.json#/$defs/text"`), resolved from this folder only.

    from habitus import schemas
    schemas.load("model-envelope.v1")          # the schema as a dict
    schemas.problems("model-envelope.v1", obj)  # [] when obj is valid, else [(json_path, keyword)]

jsonschema is imported only inside `problems()` and `validator()`; `load()` needs only the stdlib.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any

BASE = "https://schemas.habitus.invalid/"


def names() -> list[str]:
    """Every published schema, by file name without `.json`."""
    folder = resources.files(__name__)
    return sorted(p.name[: -len(".json")] for p in folder.iterdir() if p.name.endswith(".json"))


@cache
def _load_text(name: str) -> str:
    if "/" in name or name.startswith("."):
        raise ValueError(f"bad schema name {name!r}")
    try:
        return resources.files(__name__).joinpath(f"{name}.json").read_text("utf-8")
    except FileNotFoundError:
        raise ValueError(f"no published schema {name!r}") from None


def load(name: str) -> dict[str, Any]:
    """A fresh copy of the named schema (callers may modify it)."""
    schema: dict[str, Any] = json.loads(_load_text(name))
    return schema


@cache
def _registry() -> Any:
    from referencing import Registry, Resource

    return Registry().with_resources(
        (BASE + f"{name}.json", Resource.from_contents(load(name))) for name in names()
    )


def validator(schema: dict[str, Any] | str) -> Any:
    """A Draft 2020-12 validator for a schema (a dict, or the name of a published one)."""
    from jsonschema import Draft202012Validator

    if isinstance(schema, str):
        return _named_validator(schema)
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema, registry=_registry())


@cache
def _named_validator(name: str) -> Any:
    from jsonschema import Draft202012Validator

    schema = load(name)
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema, registry=_registry())


def problems(schema: dict[str, Any] | str, instance: Any, limit: int = 5) -> list[tuple[str, str]]:
    """Where instance breaks the schema: up to `limit` (json_path, keyword) pairs, most relevant first.

    Only paths and keywords come back, never the offending values (they may be anything a model wrote).
    """
    from jsonschema.exceptions import relevance

    errors = sorted(validator(schema).iter_errors(instance), key=relevance, reverse=True)
    return [(error.json_path, str(error.validator)) for error in errors[:limit]]
