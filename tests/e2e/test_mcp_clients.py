"""`habitus mcp` registered in a real client: the client starts the server, lists its tools, and offers
them to the model (seen at the loopback FakeModel), and none of them can approve a habit.

Claude Code takes the server from `--mcp-config` and names the tools `mcp__habitus__NAME` (deferred
behind its ToolSearch, so the names reach the model in its prompt); Gemini CLI takes it from
settings.json `mcpServers` and declares `mcp_habitus_NAME` functions (in `-p` mode only for a server
marked `"trust": true`: untrusted servers' tools would need a confirmation nobody can give).
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from e2e import clients
from e2e.fake_model import ANSWER, FakeModel

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

TOOLS = (
    "memory_retrieve",
    "memory_recall",
    "memory_retain",
    "memory_remove",
    "habits_for_request",
    "habits_candidates",
)
PREFIX = {"claude": "mcp__habitus__", "gemini": "mcp_habitus_"}


def _server(root: Path) -> dict[str, object]:
    return {"command": str(clients.HABITUS), "args": ["mcp"], "env": {"HABITUS_HOME": str(root)}}


@pytest.mark.parametrize("client", ["claude", "gemini"])
def test_the_client_offers_habitus_tools_to_the_model(client: str, tmp_path: Path) -> None:
    try:
        clients.install(client)
    except clients.Unavailable as why:
        pytest.skip(f"{client}: {why}")
    root = tmp_path / "state"
    clients.prepare(root)
    with FakeModel() as model:
        session = clients.Session(client, tmp_path, model.url, root, hooks=False)
        if client == "claude":
            config = tmp_path / "mcp.json"
            config.write_text(json.dumps({"mcpServers": {"habitus": _server(root)}}))
            command = [*session.argv, "-p", "hello", "--mcp-config", str(config), "--strict-mcp-config"]
        else:
            settings = session.home / ".gemini" / "settings.json"
            body = json.loads(settings.read_text())
            body["mcpServers"] = {"habitus": {**_server(root), "trust": True}}
            settings.write_text(json.dumps(body))
            command = session.command("hello")
        done = subprocess.run(
            command, cwd=session.cwd, env=session.env(), stdin=subprocess.DEVNULL,
            capture_output=True, timeout=240, check=False,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr.decode("utf-8", "replace")[-2000:]
        assert ANSWER in done.stdout.decode()
        seen = "\n".join(turn.text for turn in model.turns())
    prefix = PREFIX[client]
    offered = set(re.findall(re.escape(prefix) + r"(\w+)", seen))
    assert offered == set(TOOLS)  # all six, and nothing that approves, edits or configures
