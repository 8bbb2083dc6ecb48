"""`habitus mcp`: server start to the initialize answer, and warm tool calls in one session (the SDK's
own stdio client, as a harness runs it). Needs the habitus[mcp] extra; without it one row says so.

The warm calls are what an agent pays mid-task: memory_retain (redaction, one write transaction,
the state lock taken and released), memory_retrieve (hybrid: the embedding model is loaded once per
server, so only the query is embedded), habits_for_request with one approved habit.
"""

from __future__ import annotations

import asyncio
import os
import time

from harness import HABITUS, Row, median_ms, temp_root

TARGETS = {"start": 3000.0, "memory_retain": 100.0, "memory_retrieve": 150.0, "habits_for_request": 150.0}


def run(runs: int) -> list[Row]:
    try:
        from mcp.client.session import ClientSession
        from mcp.client.stdio import StdioServerParameters, stdio_client
    except ImportError:
        return [Row("mcp extra not installed", 0.0, 0, "", None, "pip install 'habitus[mcp]' to time it")]

    with temp_root() as root:
        params = StdioServerParameters(
            command=HABITUS,
            args=["mcp"],
            env={"HABITUS_HOME": str(root / "state"), "HABITUS_WORKER": "0", "PATH": os.environ["PATH"]},
            cwd=str(root),
        )
        import subprocess

        subprocess.run(
            [HABITUS, "habit", "declare", "--condition", "When writing a commit message",
             "--behavior", "Do write an imperative subject line"],
            env={**os.environ, "HABITUS_HOME": str(root / "state")}, capture_output=True, check=True,
        )  # fmt: skip

        async def session(calls: int) -> dict[str, list[float]]:
            samples: dict[str, list[float]] = {name: [] for name in TARGETS}
            started = time.perf_counter()
            async with stdio_client(params) as (read, write), ClientSession(read, write) as client:
                await client.initialize()
                samples["start"].append(time.perf_counter() - started)
                for index in range(calls):
                    for name, arguments in (
                        ("memory_retain", {"content": f"Decision {index}: deploy on Tuesdays"}),
                        ("memory_retrieve", {"query": "when do we release"}),
                        ("habits_for_request", {"prompt": "commit the staged changes"}),
                    ):
                        began = time.perf_counter()
                        result = await client.call_tool(name, arguments)
                        assert not result.is_error, result
                        if index >= 2:  # the first calls load the model and open the stores
                            samples[name].append(time.perf_counter() - began)
            return samples

        merged: dict[str, list[float]] = {name: [] for name in TARGETS}
        for found in (
            asyncio.run(session(runs + 2)),
            *(asyncio.run(session(0)) for _ in range(min(runs, 10))),
        ):
            for name, values in found.items():
                merged[name] += values
    rows = []
    for name, target in TARGETS.items():
        median = median_ms(merged[name])
        label = "server start to initialize" if name == "start" else f"warm {name}"
        rows.append(Row(label, median, len(merged[name]), f"<= {target:.0f} ms", median <= target))
    return rows
