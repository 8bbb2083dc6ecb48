"""Presets: the model the user already has, as `[models.NAME] kind = "preset"`, `preset = "..."`.

Two families, each built on a kind that already exists:

- **agent CLIs** the user runs and is logged into (`claude -p`, `codex exec`, `gemini -p`, `pi -p`):
  a `command`-like call, except that habitus writes the CLI's own arguments. `models.NAME.command`
  (optional) replaces the program, e.g. ["/opt/bin/claude"]; `models.NAME.model` (optional) is passed
  as the CLI's model option. The CLI's login, keys and provider settings are its own; habitus sees none.
- **local OpenAI-compatible servers** (Ollama, llama.cpp server): the `openai` kind with the server's
  usual loopback URL filled in (`models.NAME.url` overrides it).

An agent CLI is run so that it cannot reach back into habitus or into the user's files:

- `HABITUS_NO_HOOKS=1` in its environment: habitus in hook mode checks it before anything else and
  exits 0 silently, so whatever hooks the CLI fires (its own, a plugin's, Pi's extension) do nothing;
- each CLI's own switch for hooks, extensions, tools and session files is turned off too (below);
- the working folder is a fresh empty temporary folder (no project instructions, no files to read);
- the request (system text, the redacted bounded task, the schema) goes on stdin, never in argv, where
  other users could read it with `ps`; the answer is the CLI's final text on stdout.
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from habitus.state.config import Config

# Set in the environment of every model call habitus starts; hook mode exits 0 at once when it is set.
NO_HOOKS_ENV = "HABITUS_NO_HOOKS"


@dataclass(frozen=True)
class Preset:
    name: str
    family: str  # "cli" or "openai"
    program: str = ""  # cli: the program's usual name on PATH
    url: str = ""  # openai: the server's usual base URL
    model: str = ""  # openai: the model name sent when none is configured
    about: str = ""


PRESETS: dict[str, Preset] = {
    p.name: p
    for p in (
        Preset("claude", "cli", program="claude", about="Claude Code, `claude -p`"),
        Preset("codex", "cli", program="codex", about="Codex CLI, `codex exec`"),
        Preset("gemini", "cli", program="gemini", about="Gemini CLI, `gemini -p`"),
        Preset("pi", "cli", program="pi", about="Pi, `pi -p`"),
        Preset("ollama", "openai", url="http://127.0.0.1:11434/v1", about="Ollama's OpenAI-compatible API"),
        Preset(
            "llama-cpp",
            "openai",
            url="http://127.0.0.1:8080/v1",
            model="local",
            about="llama.cpp `llama-server`",
        ),
    )
}
NAMES = tuple(PRESETS)


@dataclass(frozen=True)
class Invocation:
    """How to run an agent CLI for one request: argv, stdin, environment, and where the answer is."""

    argv: list[str]
    stdin: bytes
    env: dict[str, str]
    cwd: Path
    answer_file: Path | None = None  # read this instead of stdout (Codex's --output-last-message)


# The only system prompt put in argv (Claude Code, Pi): it replaces the agent's own, which is written
# for coding work, and holds nothing of the request.
CLI_SYSTEM = "You answer one request with one JSON object. You have no tools and no files."


def prompt_text(system: str, user: str, schema: dict[str, object]) -> str:
    """The one message an agent CLI gets on stdin: the instructions, the contract of the answer, the task."""
    parts = [
        system,
        "Answer with exactly one JSON object and nothing else (no prose, no code fence), valid against "
        "this JSON Schema:",
        json.dumps(schema, separators=(",", ":"), sort_keys=True),
        "The task:",
        user,
    ]
    return "\n\n".join(parts)


def invocation(
    preset: Preset,
    program: list[str],
    model: str,
    *,
    system: str,
    user: str,
    schema: dict[str, object],
    folder: Path,
) -> Invocation:
    """The invocation of `preset` inside `folder` (an empty private temporary folder)."""
    env = {**os.environ, NO_HOOKS_ENV: "1"}
    cwd = folder / "work"
    cwd.mkdir(mode=0o700)
    model_args: list[str] = []
    if preset.name == "claude":
        if model:
            model_args = ["--model", model]
        text = prompt_text(system, user, schema)
        argv = [
            *program, "-p", "--output-format", "text", "--system-prompt", CLI_SYSTEM, "--tools", "",
            "--settings", json.dumps({"disableAllHooks": True}), "--strict-mcp-config",
            "--no-session-persistence", *model_args,
        ]  # fmt: skip
        return Invocation(argv, text.encode(), env, cwd)
    if preset.name == "codex":
        if model:
            model_args = ["--model", model]
        answer = folder / "answer.txt"
        text = prompt_text(system, user, schema)
        argv = [
            *program, "exec", "--ephemeral", "--skip-git-repo-check", "--disable", "hooks",
            "--sandbox", "read-only", "--ignore-rules", "--output-last-message", str(answer),
            *model_args, "-",
        ]  # fmt: skip
        return Invocation(argv, text.encode(), env, cwd, answer)
    if preset.name == "gemini":
        if model:
            model_args = ["--model", model]
        # System settings outrank the user's: hooks off for this run only, the user's file untouched.
        settings = folder / "gemini-system-settings.json"
        settings.write_text(json.dumps({"hooksConfig": {"enabled": False}, "hooks": {}}))
        env["GEMINI_CLI_SYSTEM_SETTINGS_PATH"] = str(settings)
        text = prompt_text(system, user, schema)
        argv = [
            *program, "--skip-trust", "--approval-mode", "plan", "--extensions", "none",
            "--output-format", "text", *model_args, "-p", "Answer the request above.",
        ]  # fmt: skip
        return Invocation(argv, text.encode(), env, cwd)
    if preset.name == "pi":
        if model:
            model_args = ["--model", model]
        text = prompt_text(system, user, schema)
        argv = [
            *program, "-p", "--no-session", "--no-tools", "--no-extensions", "--no-skills",
            "--no-prompt-templates", "--no-context-files", "--system-prompt", CLI_SYSTEM, *model_args,
        ]  # fmt: skip
        return Invocation(argv, text.encode(), env, cwd)
    raise ValueError(f"not an agent CLI preset: {preset.name}")


def scratch() -> tempfile.TemporaryDirectory[str]:
    """A private (0700) temporary folder for one call, removed afterwards."""
    return tempfile.TemporaryDirectory(prefix="habitus-model-")


# purpose -> (setting, value written for model NAME)
USES = {
    "analyze": ("analyze.model", "{name}"),
    "advise": ("advise.model", "{name}"),
    "select": ("select.judge", "model:{name}"),
    "memory": ("memory.model", "{name}"),
}
DEFAULT_USES = ("analyze", "advise")


def settings_for(
    preset: str, *, name: str, model: str = "", url: str = "", program: str = "", uses: tuple[str, ...]
) -> dict[str, object]:
    """The settings `habitus config preset` writes: the [models.NAME] table and each use's pointer to it."""
    chosen = PRESETS[preset]
    values: dict[str, object] = {f"models.{name}.kind": "preset", f"models.{name}.preset": preset}
    if model:
        values[f"models.{name}.model"] = model
    if url:
        values[f"models.{name}.url"] = url
    if program:
        values[f"models.{name}.command"] = [program]
    if chosen.family == "cli":
        values[f"models.{name}.timeout_s"] = 120  # an agent CLI starts slowly; a local server does not
    for use in uses:
        key, template = USES[use]
        values[key] = template.format(name=name)
    return values


def configured(config: Config) -> list[dict[str, object]]:
    """Every [models.NAME] table and what uses it, for `habitus status` and the demo."""
    pointers = {use: config.get(key) for use, (key, _) in USES.items()}
    items = []
    for name in config.model_names():
        table = config.model(name)
        used_for = [use for use, value in pointers.items() if value == USES[use][1].format(name=name)]
        entry: dict[str, object] = {"name": name, "kind": table["kind"], "used_for": used_for}
        if table["kind"] == "preset":
            entry["preset"] = table["preset"]
            known = PRESETS.get(table["preset"])
            entry["about"] = known.about if known else ""
        items.append(entry)
    return items


def summary(config: Config, *, on_path: dict[str, bool]) -> str:
    """One sentence for people (the demo): the models this root uses, else the one command to add one."""
    used = [m for m in configured(config) if m["used_for"]]
    if used:
        parts = []
        for m in used:
            what = (
                f"the model preset {m['name']} ({m['about']})"
                if m["kind"] == "preset"
                else (f"the model {m['name']} (kind {m['kind']})")
            )
            parts.append(f"{what} for {' and '.join(str(u) for u in m['used_for'])}")  # type: ignore[attr-defined]
        return "Your habitus uses " + "; ".join(parts) + "."
    found = [name for name in ("claude", "codex", "gemini", "pi") if on_path.get(name)]
    if found:
        return (
            f"No model is configured (everything above ran offline). `{PRESETS[found[0]].program}` is on "
            f"your PATH: `habitus config preset {found[0]}` lets analyze and advise ask it, with your login."
        )
    return (
        "No model is configured (everything above ran offline). `habitus config preset NAME` uses an agent "
        "CLI you are logged into (claude, codex, gemini, pi) or a local server (ollama, llama-cpp)."
    )
