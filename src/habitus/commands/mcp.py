"""habitus mcp: serve memory and read-only habit tools to an agent over MCP (stdio)."""

from __future__ import annotations

import click

from habitus.errors import HabitusError
from habitus.options import root_option, wait_option
from habitus.state.root import StateRoot

MAN = {
    "stdin": "Model Context Protocol frames (JSON-RPC 2.0, one per line) from an MCP client: the "
    "agent's harness starts `habitus mcp` and speaks to it. Tools: memory_retrieve {query, store, kind, "
    "tags, limit}, memory_recall {id, store}, memory_retain {content, kind, tags, namespace, importance, "
    "expires_at, store}, memory_remove {id, store} (soft), habits_for_request {prompt, context}, "
    "habits_candidates {limit}; each tool's inputSchema (tools/list) is the contract, and unknown or "
    "oversized arguments are refused.",
    "stdout": "Protocol frames only. A tool's result is its command's JSON object (\"v\": 1) as text "
    "and as structuredContent; a failure is a tool error (isError) carrying habitus's error object "
    '{"error": {"code", "message", "exit", "hint"}}. Nothing else is ever written to stdout; '
    "diagnostics (one line per failed call: tool and code, never the arguments) go to stderr.",
    "files": "The state root as for habitus-memory(1) and habitus-select(1): memory.sqlite, the project "
    "store of the current repository, ledger.sqlite (read-only), config.toml (mcp.memory_enabled). The "
    "shared state lock is held only during a call, never between calls.",
}

INSTALL_HINT = "install the extra: `pipx install 'habitus[mcp]'` (or `pipx inject habitus mcp`, `pip install 'habitus[mcp]'`)"


@click.command()
@wait_option("Seconds a call waits for a lock held by another process before it answers state_locked.")
@root_option(resolve=False)
def cli(wait: float, root: str | None) -> None:
    """Serve memory and read-only habit tools to an agent over MCP (stdio).

    A Model Context Protocol server for the agent's harness to start: the agent
    retrieves memories by meaning, recalls, retains (redacted, marked as the
    agent's) and soft-removes them, asks which approved habits apply to a
    request, and lists candidate habits with their evidence. No tool approves,
    rejects, edits or declares a habit, purges a memory or changes settings.
    Memory tools answer `disabled` while mcp.memory_enabled is false. Needs the
    habitus[mcp] extra (exit 1, not_installed, without it).

    \b
    Examples:
      claude mcp add habitus -- habitus mcp
      habitus config set mcp.memory_enabled false   # the agent's memory tools off
    """
    try:
        import mcp.server.lowlevel  # noqa: F401  (the optional SDK, imported only by this command)
    except ImportError:
        raise HabitusError(
            "not_installed",
            "habitus mcp needs the Model Context Protocol SDK (the mcp package)",
            hint=INSTALL_HINT,
        ) from None
    from habitus.mcp.server import serve

    serve(StateRoot.at(root), wait)
