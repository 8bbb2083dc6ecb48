"""Options and request handling shared by the `habitus memory` subcommands."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any, TypeVar

import click

from habitus import io
from habitus.errors import HabitusError, bad_request
from habitus.state.root import StateRoot

F = TypeVar("F", bound=Callable[..., Any])

STORE_CHOICE = click.Choice(["global", "project"])


def store_option(f: F) -> F:
    return click.option(
        "--store",
        type=STORE_CHOICE,
        default=None,
        help="Which store: global (the state root, default) or project (<repo>/.habitus of the current repository).",
    )(f)


def requests(positional: Any, nl: bool = False) -> Iterator[dict[str, Any]]:
    """The request(s): none read from stdin when the positional argument was given."""
    if positional is not None:
        if nl:
            raise HabitusError("usage", "--nl reads requests from stdin; do not also pass an argument")
        yield {}
        return
    yield from io.read_requests(nl)


def merge(request: dict[str, Any], **options: Any) -> dict[str, Any]:
    merged = dict(request)
    merged.update({key: value for key, value in options.items() if value is not None})
    return merged


def open_store(
    root: StateRoot, wait: float, option: str | None, request: dict[str, Any], fallback: Any = None
) -> Any:
    from habitus.memory import stores

    name = option or request.get("store") or fallback or "global"
    if name not in stores.STORES:
        raise bad_request("store", "expected global or project")
    return stores.open_store(root, name, wait=wait)


def each_by_id(
    memory_id: str | None,
    nl: bool,
    root: StateRoot,
    wait: float,
    store: str | None,
    pretty: bool,
    action: Callable[[Any, dict[str, Any]], dict[str, Any]],
    *,
    human: str | None = None,
) -> None:
    """Run action(store, request) for each request naming an id (ID argument, or stdin), one result each."""
    for request in requests(memory_id, nl):
        merged = merge(request, id=memory_id)
        if "id" not in merged:
            raise bad_request("id", "required")
        target = open_store(root, wait, store, merged)
        try:
            result = action(target, merged)
        finally:
            target.close()
        io.write_result(result, pretty=pretty, human=human)
