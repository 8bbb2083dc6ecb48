"""Serve habitus.mcp.tools over stdio with the `mcp` SDK's low-level server.

stdout carries protocol frames only: while it serves, the SDK points file descriptor 1 at stderr and
writes frames to a private duplicate, so stray output of any library (or a model program) cannot
reach the wire. Logging goes to stderr at WARNING, one line per failed call naming the tool and the
error code, never the arguments (they hold prompts and memories).

Calls run one at a time in a worker thread (the state lock and the embedding model are per process),
so the event loop keeps answering pings and cancellations while a call embeds or waits on a lock.
"""

from __future__ import annotations

import json
import logging
import sys
import threading
from typing import Any

import anyio
import mcp_types as types
from anyio import to_thread
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

from habitus import __version__
from habitus.errors import HabitusError
from habitus.mcp import tools
from habitus.state.root import StateRoot

log = logging.getLogger("habitus.mcp")

INSTRUCTIONS = (
    "habitus keeps this user's durable memory and the habits they approved. Use memory_retrieve "
    "before deciding something the user may already have decided, memory_retain when the user "
    "states a decision, preference or fact worth keeping, and habits_for_request to see which "
    "approved habits apply to a request. Habits are approved by the user only, never by a tool."
)


def _logging() -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("habitus mcp: %(levelname)s %(name)s: %(message)s"))
    top = logging.getLogger()
    top.handlers[:] = [handler]
    top.setLevel(logging.WARNING)


def _listing() -> list[types.Tool]:
    return [
        types.Tool(
            name=tool.name,
            title=tool.title,
            description=tool.description,
            input_schema=tool.schema,
            annotations=types.ToolAnnotations(
                title=tool.title,
                read_only_hint=tool.read_only,
                destructive_hint=False,  # removal is soft and reversible
                idempotent_hint=tool.read_only,
                open_world_hint=False,
            ),
        )
        for tool in tools.TOOLS.values()
    ]


def _result(body: dict[str, Any], *, error: bool = False) -> types.CallToolResult:
    text = json.dumps(body, ensure_ascii=False, sort_keys=True)
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=text)], structured_content=body, is_error=error
    )


def build(root: StateRoot, wait: float) -> Server[Any]:
    one_at_a_time = threading.Lock()

    def run_call(name: str, arguments: Any) -> types.CallToolResult:
        with one_at_a_time:
            try:
                return _result(tools.call(name, arguments, root=root, wait=wait))
            except Exception as exc:  # every failure becomes a tool error with habitus's code
                from habitus.cli import _as_error

                error = _as_error(exc) if not isinstance(exc, HabitusError) else exc
                shown = name if name in tools.TOOLS else "an unknown tool"  # the client's text stays out
                log.warning("%s failed: %s", shown, error.code)
                return _result(error.as_object(), error=True)

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=_listing())

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        return await to_thread.run_sync(run_call, params.name, params.arguments)

    return Server(
        "habitus",
        version=__version__,
        title="habitus",
        instructions=INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


def serve(root: StateRoot, wait: float) -> None:
    """Serve until the client closes stdin."""
    _logging()
    server = build(root, wait)

    async def main() -> None:
        async with stdio_server() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())

    anyio.run(main)
