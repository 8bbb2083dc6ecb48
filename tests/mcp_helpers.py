"""Drive `habitus mcp` as an agent's harness does: the installed console script as a subprocess, spoken
to by the MCP SDK's own stdio client (or, for the wire-level tests, by raw JSON-RPC lines)."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import tempfile
import threading
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from conftest import BIN

CALL_TIMEOUT = 120  # seconds: a first retrieve loads the embedding model on a loaded 2-core machine


def server_env(root: Path, **extra: str) -> dict[str, str]:
    return {
        "HABITUS_HOME": str(root),
        "HABITUS_WORKER": "0",
        "HOME": os.environ["HOME"],
        "PATH": os.environ.get("PATH", ""),
        **extra,
    }


@dataclass
class Answer:
    error: bool
    body: dict[str, Any]
    text: str

    @property
    def code(self) -> str:
        assert self.error, self.body
        return str(self.body["error"]["code"])


class Client:
    def __init__(self, session: Any) -> None:
        self.session = session

    async def tools(self) -> list[Any]:
        return list((await self.session.list_tools()).tools)

    async def call(self, name: str, arguments: dict[str, Any] | None = None) -> Answer:
        result = await self.session.call_tool(name, arguments or {}, read_timeout_seconds=CALL_TIMEOUT)
        (content,) = result.content
        body = json.loads(content.text)
        assert result.structured_content == body  # the same object as text and as structured content
        return Answer(bool(result.is_error), body, content.text)


def session(
    body: Callable[[Client], Awaitable[Any]],
    *,
    root: Path,
    cwd: Path,
    args: tuple[str, ...] = (),
    env: dict[str, str] | None = None,
    errlog: Any = None,
) -> Any:
    """Start `habitus mcp`, initialize, run body(client), and shut the server down."""
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    params = StdioServerParameters(
        command=str(BIN / "habitus"), args=["mcp", *args], env=env or server_env(root), cwd=str(cwd)
    )

    async def main(log: Any) -> Any:
        # errlog named always: the SDK's default is whatever sys.stderr was when it was first imported
        # (in a test process that may be a CliRunner's stand-in, which has no file descriptor).
        async with stdio_client(params, errlog=log) as (read, write), ClientSession(read, write) as client:
            info = await client.initialize()
            assert info.server_info.name == "habitus"
            return await asyncio.wait_for(body(Client(client)), timeout=10 * CALL_TIMEOUT)

    if errlog is not None:
        return asyncio.run(main(errlog))
    with tempfile.TemporaryFile("w+") as log:
        return asyncio.run(main(log))


@dataclass
class Exchange:
    returncode: int
    stdout: bytes
    stderr: bytes


def raw_exchange(
    frames: list[bytes], *, root: Path, cwd: Path, answers: set[int], env: dict[str, str] | None = None
) -> Exchange:
    """Send raw lines to `habitus mcp`, wait until every id in `answers` has a reply (stdin stays
    open meanwhile: a client that hangs up cancels what is in flight), then close stdin."""
    process = subprocess.Popen(
        [str(BIN / "habitus"), "mcp"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=cwd,
        env=env or server_env(root),
    )
    assert process.stdin is not None and process.stdout is not None and process.stderr is not None
    lines: list[bytes] = []
    done = threading.Event()

    def read() -> None:
        assert process.stdout is not None
        for line in process.stdout:
            lines.append(line)
            try:
                ident = json.loads(line).get("id")
            except ValueError:
                continue
            answers.discard(ident)
            if not answers:
                done.set()
        done.set()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        process.stdin.write(b"".join(frame + b"\n" for frame in frames))
        process.stdin.flush()
        done.wait(CALL_TIMEOUT)
        process.stdin.close()
        process.wait(CALL_TIMEOUT)
        reader.join(CALL_TIMEOUT)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    return Exchange(process.returncode, b"".join(lines), process.stderr.read())


def frame(method: str, params: dict[str, Any] | None = None, ident: int | None = None) -> bytes:
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        message["params"] = params
    if ident is not None:
        message["id"] = ident
    return json.dumps(message).encode()


INITIALIZE = frame(
    "initialize",
    {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}},
    1,
)
INITIALIZED = frame("notifications/initialized")
