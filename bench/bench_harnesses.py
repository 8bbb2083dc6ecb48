"""A real client's turn with and without habitus's hooks, side by side: `claude -p`, `codex exec`,
`gemini -p`, `pi -p`, each installed from npm (tests/e2e/clients.py, the pinned versions; a cache in
~/.cache/habitus-e2e) and pointed at the loopback fake model (tests/e2e/fake_model.py).

The state root holds 100 approved habits (bench_select's catalog and generated ones, with vectors) and
10,000 memories (bench_memory's corpus), with capture and advise on: every hook `hooks install` writes
does its work. The prompt asks for a release check and a file read, so select injects guidance and the
turn has a tool call. Each round runs the client once with hooks and once without (a second home with
nothing installed), alternating, after warm-up rounds, each turn once the worker has finished what
the turn before queued after its answer (harness.settle: a person's next prompt comes later than that);
each figure is the median. The note gives both
medians and the difference, which is what the target bounds (+150 ms per turn once warm).

Claude Code, Codex and Gemini also run, in the same rounds, a third home with the hooks laid out as
`hooks install` wrote them before 2026-12-07 (one process per habitus command, the commands of one
event side by side) instead of one `habitus hook` per event: the note gives what that layout adds,
measured under the same load.

A warm worker (when this habitus has `habitus worker`) is started by the warm-up turns like any other
cache; a further row per client then measures a cold turn (`habitus worker stop` before each one).
Without the worker those rows are left out. A client that cannot be installed (npm or the registry
unreachable) gives a NO row that says so, and the others still run.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from harness import HABITUS, REPO, Row, settle

sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO / "src"))

CLIENTS = ("claude", "codex", "gemini", "pi")
COMMAND = {"claude": "claude -p", "codex": "codex exec", "gemini": "gemini -p", "pi": "pi -p"}
HABITS = 100
MEMORIES = 10_000
ROUNDS = 7  # interleaved pairs per client (a turn takes seconds; the figures are medians of 7)
WARMUP = 2
TARGET_MS = 150.0


def _state(root: Path) -> None:
    import bench_memory
    import bench_select

    from habitus.state import config
    from habitus.state.root import StateRoot

    bench_select._seed(str(root), HABITS)
    bench_memory.load(root, bench_memory.corpus(MEMORIES))
    state = StateRoot(root)
    config.set_value(state, "capture.enabled", True, wait=30)
    config.set_value(state, "advise.enabled", True, wait=30)


def _has_worker(env: dict[str, str]) -> bool:
    done = subprocess.run([HABITUS, "worker", "--help"], capture_output=True, env=env, check=False)
    return done.returncode == 0


def _stop_worker(env: dict[str, str]) -> None:
    subprocess.run([HABITUS, "worker", "stop"], capture_output=True, env=env, check=False)


def _per_command(session: object, name: str) -> None:
    """Write the hooks as `hooks install` laid them out before 2026-12-07: one entry per command."""
    from habitus.harness import plan, settings

    harness = {"claude": "claude-code", "codex": "codex", "gemini": "gemini"}[name]
    wanted = {
        "hooks": {
            event: [
                {
                    "hooks": [
                        _waited(plan.entry(harness, args, None, event))
                        for args in plan.commands_for(harness, event)
                    ]
                }
            ]
            for event in plan.events(harness)
        }
    }
    path = {
        "claude": lambda s: s.claude_config / "settings.json",
        "codex": lambda s: s.codex_home / "hooks.json",
        "gemini": lambda s: s.home / ".gemini" / "settings.json",
    }[name](session)
    settings.install(path, wanted)


def _waited(handler: dict[str, object]) -> dict[str, object]:
    """A handler as it was before 2026-12-07: waited for (Claude Code's SessionEnd was not async)."""
    return {k: v for k, v in handler.items() if k != "async"}


def _turn(session: object, prompt: str) -> float:
    turn = session.run(prompt)  # type: ignore[attr-defined]
    if turn.exit != 0:
        raise RuntimeError(f"{session.name} exited {turn.exit}: {turn.stderr[-400:]!r}")  # type: ignore[attr-defined]
    return float(turn.seconds)


def run(runs: int) -> list[Row]:
    from e2e import clients
    from e2e.fake_model import FakeModel

    rounds = max(ROUNDS, runs // 2)
    rows: list[Row] = []
    with tempfile.TemporaryDirectory(prefix="habitus-bench-harnesses-") as folder:
        base = Path(folder)
        root = base / "state"
        _state(root)
        env = {**os.environ, "HABITUS_HOME": str(root)}
        worker = _has_worker(env)
        with FakeModel() as model:
            for name in CLIENTS:
                label = f"`{COMMAND[name]}` turn with habitus hooks ({HABITS} habits, {MEMORIES:,} memories)"
                try:
                    hooked = clients.Session(name, base / f"{name}-hooks", model.url, root)
                    plain = clients.Session(name, base / f"{name}-plain", model.url, root, hooks=False)
                except clients.Unavailable as why:
                    rows.append(Row(label, 0.0, 0, f"<= +{TARGET_MS:.0f} ms", False, f"not installed: {why}"))
                    continue
                legacy = None
                if name != "pi":
                    legacy = clients.Session(name, base / f"{name}-per-command", model.url, root, hooks=False)
                    _per_command(legacy, name)
                for s in (hooked, plain, legacy):
                    if s is not None:
                        (s.cwd / "notes.txt").write_text("The build is green.\n")
                with_hooks: list[float] = []
                without: list[float] = []
                per_command: list[float] = []
                for index in range(WARMUP + rounds):
                    # each turn starts with no review of an earlier one still running, as a person's does
                    settle(root)
                    first = _turn(hooked, clients.PROMPT)
                    settle(root)
                    pair = (first, _turn(plain, clients.PROMPT))
                    settle(root)
                    old = _turn(legacy, clients.PROMPT) if legacy is not None else None
                    if index >= WARMUP:
                        with_hooks.append(pair[0])
                        without.append(pair[1])
                        if old is not None:
                            per_command.append(old)
                warm, bare = statistics.median(with_hooks) * 1000, statistics.median(without) * 1000
                added = warm - bare
                note = f"without hooks {bare:.0f} ms; habitus adds {added:+.0f} ms"
                if per_command:
                    before = statistics.median(per_command) * 1000 - bare
                    note += f" (one process per command, as before 2026-12-07: {before:+.0f} ms)"
                if not worker:
                    note += " (no warm worker in this habitus)"
                rows.append(Row(label, warm, rounds, f"<= +{TARGET_MS:.0f} ms", added <= TARGET_MS, note))
                if worker:
                    cold = []
                    for _ in range(max(3, rounds // 2)):
                        settle(root)
                        _stop_worker(env)
                        cold.append(_turn(hooked, clients.PROMPT))
                    cold_ms = statistics.median(cold) * 1000
                    rows.append(
                        Row(
                            f"`{COMMAND[name]}` turn, cold start (worker stopped before each)",
                            cold_ms,
                            len(cold),
                            "<= +1000 ms",
                            cold_ms - bare <= 1000,
                            f"habitus adds {cold_ms - bare:+.0f} ms",
                        )
                    )
    return rows


if __name__ == "__main__":
    from run import table

    print(table([("harnesses", row) for row in run(ROUNDS)]))
