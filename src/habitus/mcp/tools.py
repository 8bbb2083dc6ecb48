"""The tools `habitus mcp` offers an agent: their JSON Schemas and what each one runs.

Every tool calls the same domain functions as the command line (`memory retrieve|recall|retain|remove`,
`select`, and a read-only view of `habit list --status candidate`), so redaction, validation, trust of
project stores and fail-closed checks are the ones the CLI applies. What no tool can do, by design:
approve, reject, edit, declare, disable or enable a habit, purge a memory, or change config.toml.
Approval stays a person's act (`habitus habit approve`).

A call validates its arguments against the tool's schema (refusals name the field, never its value),
then holds the shared state lock only for the call itself (habitus.state.guard), so a long-running
server never keeps a restore waiting between calls. Memory tools answer `disabled` when
`mcp.memory_enabled` is false, before any store is opened.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from habitus.errors import HabitusError, bad_request
from habitus.state.root import StateRoot

# metadata.source of every memory an agent retains here: `memory index` shows it beside the record,
# and `memory retrieve --source agent-mcp` finds (or a person reviews) what the agent wrote.
SOURCE = "agent-mcp"
RESULT_VERSION = 1

_UUID = "^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$"
_SLUG = {"type": "string", "minLength": 1, "maxLength": 64}
# An agent saves notes, decisions, preferences and facts. Not instructions: a memory of that kind
# speaks to every later session, and an agent misled by what it read must not plant one.
_RETAIN_KINDS = ["note", "decision", "preference", "fact"]
_ALL_KINDS = [*_RETAIN_KINDS, "instruction", "observation", "reflection"]


@dataclass(frozen=True)
class Tool:
    name: str
    title: str
    description: str
    schema: dict[str, Any]
    run: Callable[[StateRoot, float, dict[str, Any]], dict[str, Any]]
    read_only: bool
    memory: bool  # refused while mcp.memory_enabled is false


def _object(properties: dict[str, Any], required: list[str] | None = None) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "object", "properties": properties, "additionalProperties": False}
    if required:
        schema["required"] = required
    return schema


def _store(default: str, *, both: bool = False) -> dict[str, Any]:
    choices = ["both", "global", "project"] if both else ["global", "project"]
    return {
        "type": "string",
        "enum": choices,
        "default": default,
        "description": "global: this user's store; project: the current git repository's store"
        + ("; both: project (when trusted) then global" if both else ""),
    }


# -- memory ----------------------------------------------------------------------------------------


def _with_store(
    root: StateRoot, wait: float, name: str, action: Callable[[Any], dict[str, Any]]
) -> dict[str, Any]:
    from habitus.memory import stores

    target = stores.open_store(root, name, wait=wait)
    try:
        return action(target)
    finally:
        target.close()


def memory_retrieve(root: StateRoot, wait: float, args: dict[str, Any]) -> dict[str, Any]:
    from habitus.memory import bound, hybrid
    from habitus.state.db import utc_now

    store = args.get("store", "both")
    request: dict[str, Any] = {"query": args["query"], "limit": args.get("limit", 10)}
    for key in ("kind", "tags"):
        if key in args:
            request[key] = args[key]
    named = None if store == "both" else store
    return bound.bound(hybrid.retrieve_stores(root, request, store=named, wait=wait, now=utc_now()))


def memory_recall(root: StateRoot, wait: float, args: dict[str, Any]) -> dict[str, Any]:
    from habitus.memory import core

    return _with_store(root, wait, args.get("store", "global"), lambda s: core.recall(s, args["id"]))


def memory_retain(root: StateRoot, wait: float, args: dict[str, Any]) -> dict[str, Any]:
    from habitus.memory import core

    keys = ("content", "kind", "tags", "namespace", "importance", "expires_at")
    request = {key: args[key] for key in keys if key in args}
    request["metadata"] = {"source": SOURCE}  # who wrote it; the agent cannot claim another source
    return _with_store(root, wait, args.get("store", "global"), lambda s: core.retain(s, request))


def memory_remove(root: StateRoot, wait: float, args: dict[str, Any]) -> dict[str, Any]:
    from habitus.memory import core

    # Soft only: a person restores it with `habitus memory retain --id ID`; purge is not offered.
    return _with_store(root, wait, args.get("store", "global"), lambda s: core.remove(s, args["id"]))


# -- habits (read-only) ----------------------------------------------------------------------------


def habits_for_request(root: StateRoot, wait: float, args: dict[str, Any]) -> dict[str, Any]:
    from habitus.select import check_request, select

    prompt, context = check_request({"prompt": args["prompt"], "context": args.get("context", [])})
    return select(root, prompt, context, wait=wait, mode="cli").as_dict()


def habits_candidates(root: StateRoot, wait: float, args: dict[str, Any]) -> dict[str, Any]:
    from habitus.habits.candidates import candidates

    found = candidates(root, wait=wait, limit=args.get("limit", 20))
    return {
        **found,
        "hint": "only the user approves a candidate: `habitus habit show ID`, then `habitus habit approve ID`",
    }


_MEMORY_ID = {"type": "string", "pattern": _UUID, "maxLength": 36, "description": "the memory's id"}

TOOLS: dict[str, Tool] = {
    tool.name: tool
    for tool in (
        Tool(
            "memory_retrieve",
            "Search memory",
            "Search this user's durable memories by meaning and words (the same hybrid retrieval as "
            "`habitus memory retrieve`): decisions, preferences and facts saved in earlier sessions. "
            "Ask in plain words; results are ranked best first.",
            _object(
                {
                    "query": {"type": "string", "minLength": 1, "maxLength": 4096},
                    "store": _store("both", both=True),
                    "kind": {
                        "type": "array",
                        "items": {"enum": _ALL_KINDS},
                        "maxItems": len(_ALL_KINDS),
                        "description": "only these kinds",
                    },
                    "tags": {
                        "type": "array",
                        "items": _SLUG,
                        "maxItems": 32,
                        "description": "only records carrying all of these tags",
                    },
                    "limit": {"type": "integer", "minimum": 1, "maximum": 50, "default": 10},
                },
                ["query"],
            ),
            memory_retrieve,
            read_only=True,
            memory=True,
        ),
        Tool(
            "memory_recall",
            "Recall a memory",
            "Read one active memory by its id (as memory_retrieve or memory_retain returned it); "
            "memory is null when it is absent, removed or expired.",
            _object({"id": _MEMORY_ID, "store": _store("global")}, ["id"]),
            memory_recall,
            read_only=True,
            memory=True,
        ),
        Tool(
            "memory_retain",
            "Remember",
            "Save a durable memory for later sessions: a decision, preference or fact worth keeping "
            "(one statement, in plain words). Secrets are redacted before storing, and text that still "
            "looks secret is refused; the record is marked as written by the agent.",
            _object(
                {
                    "content": {"type": "string", "minLength": 1, "maxLength": 32768},
                    "kind": {"enum": _RETAIN_KINDS, "default": "note"},
                    "tags": {"type": "array", "items": _SLUG, "maxItems": 32},
                    "namespace": _SLUG,
                    "importance": {"type": "number", "minimum": 0, "maximum": 1, "default": 0.5},
                    "expires_at": {
                        "type": "string",
                        "maxLength": 40,
                        "description": "UTC timestamp like 2030-01-01T00:00:00.000Z",
                    },
                    "store": _store("global"),
                },
                ["content"],
            ),
            memory_retain,
            read_only=False,
            memory=True,
        ),
        Tool(
            "memory_remove",
            "Forget a memory",
            "Remove a memory that is wrong or outdated. Removal is soft: the user can restore it "
            "with `habitus memory retain --id ID`.",
            _object({"id": _MEMORY_ID, "store": _store("global")}, ["id"]),
            memory_remove,
            read_only=False,
            memory=True,
        ),
        Tool(
            "habits_for_request",
            "Habits for this request",
            "Which of the user's approved habits apply to this request (the same choice the prompt "
            "hook makes). Returns each habit's condition and behaviour and the guidance text.",
            _object(
                {
                    "prompt": {"type": "string", "minLength": 1, "maxLength": 100_000},
                    "context": {
                        "type": "array",
                        "items": {"type": "string", "maxLength": 100_000},
                        "maxItems": 4,
                        "description": "up to 4 prior messages, oldest first",
                    },
                },
                ["prompt"],
            ),
            habits_for_request,
            read_only=True,
            memory=False,
        ),
        Tool(
            "habits_candidates",
            "Candidate habits",
            "List candidate habits awaiting the user's review, with their evidence. Read-only: only "
            "the user approves a habit (`habitus habit approve`).",
            _object({"limit": {"type": "integer", "minimum": 1, "maximum": 100, "default": 20}}),
            habits_candidates,
            read_only=True,
            memory=False,
        ),
    )
}


# -- calling ---------------------------------------------------------------------------------------


def call(name: str, arguments: Any, *, root: StateRoot, wait: float) -> dict[str, Any]:
    """Run one tool call: its result object (with "v": 1), or a HabitusError."""
    tool = TOOLS.get(name)
    if tool is None:
        raise HabitusError(
            "usage",
            f"no tool named {name[:64]!r}; habitus mcp offers {', '.join(TOOLS)}",
            hint="habits are approved, rejected or changed by a person with `habitus habit`",
        )
    args = check(tool, {} if arguments is None else arguments)
    from habitus.state import guard

    guard.enter(root.path, wait)  # recover an interrupted restore; hold the state lock for this call only
    try:
        if tool.memory:
            _require_memory(root)
        return {"v": RESULT_VERSION, **tool.run(root, wait, args)}
    finally:
        guard.release_all()


def _require_memory(root: StateRoot) -> None:
    from habitus.state import config

    if not config.load(root).get("mcp.memory_enabled"):
        raise HabitusError(
            "disabled",
            f"{root.config}: mcp.memory_enabled is false, so the agent's memory tools are off",
            hint="`habitus config set mcp.memory_enabled true` turns them on",
        )


def check(tool: Tool, arguments: Any) -> dict[str, Any]:
    """The arguments, validated against the tool's schema; bad_request names the field, not the value."""
    if not isinstance(arguments, dict):
        raise bad_request("arguments", "expected an object")
    _refuse_surrogates(arguments, "")
    import jsonschema

    validator = jsonschema.Draft202012Validator(tool.schema)
    errors = sorted(
        validator.iter_errors(arguments),
        key=lambda e: (len(e.absolute_path), list(map(str, e.absolute_path))),
    )
    if errors:
        raise _describe(errors[0])
    return arguments


def _refuse_surrogates(value: Any, path: str) -> None:
    """JSON's \\ud800 escapes decode to lone surrogates, which are no UTF-8 text: refuse them here
    rather than deep in SQLite or redaction."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise bad_request(path or "arguments", "not valid UTF-8 text (a lone surrogate)") from None
    elif isinstance(value, dict):
        for key, item in value.items():
            _refuse_surrogates(key, path or "arguments")
            _refuse_surrogates(item, f"{path}.{key}" if path else str(key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            _refuse_surrogates(item, f"{path}[{index}]")


def _describe(error: Any) -> HabitusError:
    """A jsonschema error as bad_request, worded from the schema (jsonschema's own text quotes values)."""
    field = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error.absolute_path).lstrip(".")
    rule, expected = error.validator, error.validator_value
    if rule == "required":
        missing = [name for name in expected if name not in error.instance]
        return bad_request(".".join(filter(None, [field, *missing[:1]])), "required")
    if rule == "additionalProperties":
        extra = sorted(k for k in error.instance if k not in error.schema.get("properties", {}))
        names = ", ".join(k[:40] for k in extra[:5])
        return bad_request(field or "arguments", f"unexpected field(s): {names}")
    if rule == "enum":
        return bad_request(field or "arguments", "expected one of " + ", ".join(map(str, expected)))
    messages = {
        "type": f"expected {'an' if str(expected)[0] in 'aeiou' else 'a'} {expected}",
        "maxLength": f"expected at most {expected} characters",
        "minLength": f"expected at least {expected} character(s)",
        "maxItems": f"expected at most {expected} items",
        "minimum": f"expected at least {expected}",
        "maximum": f"expected at most {expected}",
        "pattern": "expected a lowercase UUID v4 (as memory_retain or memory_retrieve returned it)",
    }
    return bad_request(field or "arguments", messages.get(rule, f"does not match the schema ({rule})"))
