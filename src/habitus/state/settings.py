"""Every setting habitus reads, its type, default, bounds and meaning: the one place defaults live.

`config.toml` holds only what the user changed. A key whose table is `models.*` is a wildcard: any
`[models.NAME]` table is validated against the `models.*.FIELD` entries.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

NAME_RE = re.compile(r"^[a-z][a-z0-9_-]{0,31}$")
ENV_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,127}$")


@dataclass(frozen=True)
class Setting:
    key: str
    kind: type  # bool, int, str or list (of str)
    default: Any
    help: str
    choices: tuple[Any, ...] | None = None
    minimum: int | None = None
    maximum: int | None = None
    pattern: re.Pattern[str] | None = None

    def check(self, value: Any) -> str | None:
        """None when value is valid, else a description of what is expected (never echoing value)."""
        if self.kind is bool:
            if not isinstance(value, bool):
                return "expected true or false"
        elif self.kind is int:
            if isinstance(value, bool) or not isinstance(value, int):
                return "expected an integer"
            if self.minimum is not None and value < self.minimum:
                return f"expected an integer >= {self.minimum}"
            if self.maximum is not None and value > self.maximum:
                return f"expected an integer <= {self.maximum}"
        elif self.kind is str:
            if not isinstance(value, str):
                return "expected a string"
            if self.pattern is not None and value and not self.pattern.match(value):
                return f"expected a string matching {self.pattern.pattern}"
        elif self.kind is list and (
            not isinstance(value, list) or not all(isinstance(v, str) for v in value)
        ):
            return "expected a list of strings"
        if self.kind in (str, list) and any("\x00" in v for v in ([value] if self.kind is str else value)):
            return "expected text without NUL characters"  # paths, programs, names: the OS refuses NUL
        if self.choices is not None and value not in self.choices:
            return "expected one of " + ", ".join(_show(c) for c in self.choices)
        return None


def _show(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


SETTINGS: tuple[Setting, ...] = (
    # capture
    Setting(
        "capture.enabled", bool, False, "Store observations from hooks and transcripts (off until enabled)."
    ),
    Setting(
        "capture.retention_days",
        int,
        7,
        "Days an analysed observation generation is kept in archive/ before it expires.",
        choices=(7, 14, 30),
    ),
    # analyze
    Setting(
        "analyze.model",
        str,
        "",
        "Name of a [models.NAME] table to analyze with; empty means the local, offline analyzer.",
        pattern=NAME_RE,
    ),
    Setting(
        "analyze.batch_max_records", int, 200, "Most observations per analyze batch.", minimum=1, maximum=500
    ),
    Setting(
        "analyze.batch_max_bytes",
        int,
        80_000,
        "Most bytes of observations per analyze batch.",
        minimum=65_537,
        maximum=2_000_000,
    ),
    # embeddings
    Setting(
        "embed.model",
        str,
        "default",
        "Embedding model id: 'default' or a name added with `habitus model add`.",
        pattern=NAME_RE,
    ),
    Setting(
        "embed.threads",
        int,
        1,
        "onnxruntime intra-op threads for embeddings (1 keeps hooks from competing for cores).",
        minimum=1,
        maximum=16,
    ),
    # select
    Setting("select.enabled", bool, True, "Answer select calls (false: select always returns no habits)."),
    Setting(
        "select.judge",
        str,
        "local",
        "'local' for the offline judge, or 'model:NAME' for a configured language model.",
        pattern=re.compile(r"^(local|model:[a-z][a-z0-9_-]{0,31})$"),
    ),
    Setting("select.max_habits", int, 3, "Most habits injected for one prompt.", minimum=0, maximum=3),
    # dedupe
    Setting(
        "dedupe.review_bp",
        int,
        0,
        "Similarity (bp) from which two habits are a possible duplicate; 0 = calibrated default.",
        minimum=0,
        maximum=10_000,
    ),
    Setting(
        "dedupe.strong_bp",
        int,
        0,
        "Similarity (bp) from which two habits are a strong duplicate; 0 = calibrated default.",
        minimum=0,
        maximum=10_000,
    ),
    # memory
    Setting(
        "memory.index_budget",
        int,
        2000,
        "Characters of memory index injected into a session.",
        minimum=0,
        maximum=100_000,
    ),
    Setting(
        "memory.observe_enabled",
        bool,
        False,
        "Let hooks run `memory observe` on the session (off until enabled; explicit calls always run).",
    ),
    Setting(
        "memory.observe_chunk_chars",
        int,
        60_000,
        "Most characters of new transcript one `memory observe` run reads (the rest waits for the next run).",
        minimum=1_000,
        maximum=2_000_000,
    ),
    Setting(
        "memory.model",
        str,
        "",
        "Name of a [models.NAME] table that observe, reflect and prune ask; empty = the offline rules.",
        pattern=NAME_RE,
    ),
    Setting(
        "memory.prune_budget",
        int,
        10_000,
        "Token budget `memory prune` prunes a stream's observations toward when --budget is not given.",
        minimum=0,
        maximum=10_000_000,
    ),
    # mcp
    Setting(
        "mcp.memory_enabled",
        bool,
        True,
        "Let `habitus mcp` tools read and write memory (false: they answer `disabled` and touch nothing).",
    ),
    # advise
    Setting("advise.enabled", bool, False, "Run advise reviews from hooks (off until enabled)."),
    Setting(
        "advise.model",
        str,
        "",
        "Name of a [models.NAME] table used as the model reviewer; empty = local reviewer only.",
        pattern=NAME_RE,
    ),
    Setting(
        "advise.max_slice_chars",
        int,
        24_000,
        "Most characters of recent, redacted agent work one review reads (and a model receives).",
        minimum=1_000,
        maximum=24_000,
    ),
    Setting(
        "advise.max_note_chars",
        int,
        2_000,
        "Longest note delivered (longer ones are cut).",
        minimum=80,
        maximum=8_000,
    ),
    Setting(
        "advise.max_note_tokens",
        int,
        512,
        "Most tokens the model reviewer may spend on its answer.",
        minimum=16,
        maximum=2_048,
    ),
    Setting(
        "advise.min_interval_s",
        int,
        0,
        "Seconds that must pass between two reviews of one session (new work waits for the next one).",
        minimum=0,
        maximum=86_400,
    ),
    Setting(
        "advise.similarity_threshold_bp",
        int,
        5_000,
        "A repeated finding whose note is less similar (SimHash, bp) than this to its last delivery is "
        "delivered again as a possible duplicate; 0 never does.",
        minimum=0,
        maximum=10_000,
    ),
    Setting(
        "advise.reraise_min_turns",
        int,
        4,
        "Turns after its last delivery from which a finding whose severity rose is re-raised; 0 never does.",
        minimum=0,
        maximum=64,
    ),
    Setting(
        "advise.protected_paths",
        list,
        [],
        "More paths (and everything under them) that never reach a model or a note, besides the built-in "
        ".env*, .ssh, keys, credentials, ...",
    ),
    Setting(
        "advise.protected_exceptions",
        list,
        [],
        "Exact paths exempt from the built-in protected paths (user config only; descendants stay protected).",
    ),
    Setting(
        "advise.instructions",
        str,
        "",
        "Your review focus for the model reviewer (at most 12,000 characters are sent, redacted).",
    ),
    Setting("advise.block", bool, True, "Let a blocker note keep a Claude Code or Codex agent working once."),
    Setting(
        "advise.pending_hours",
        int,
        24,
        "Hours a note waiting for the next prompt is kept before it expires undelivered.",
        minimum=0,
        maximum=168,
    ),
    # hook mode and the warm worker (read by habitus.hookmode with tomllib alone, before click loads)
    Setting(
        "hooks.budget_ms",
        int,
        30_000,
        "Total time a hook call may take; past it the hook exits 0, injects nothing and logs why.",
        minimum=100,
        maximum=600_000,
    ),
    Setting(
        "hooks.lock_wait_ms",
        int,
        200,
        "Longest wait for any lock in hook mode (a held lock is logged, never waited out).",
        minimum=0,
        maximum=5_000,
    ),
    Setting(
        "worker.enabled",
        bool,
        True,
        "Answer hook calls from a warm per-root worker (false: every hook works in its own process).",
    ),
    Setting(
        "worker.idle_minutes",
        int,
        10,
        "Minutes without a request after which the warm worker exits.",
        minimum=1,
        maximum=1_440,
    ),
    # language models: [models.NAME]
    Setting(
        "models.*.kind",
        str,
        "openai",
        "Provider kind: openai (any OpenAI-compatible chat endpoint), anthropic, command, or preset.",
        choices=("openai", "anthropic", "command", "preset"),
    ),
    Setting(
        "models.*.preset",
        str,
        "",
        "For kind=preset: claude, codex, gemini or pi (the agent CLI you are logged into), "
        "ollama or llama-cpp (a local OpenAI-compatible server).",
        pattern=re.compile(r"^(claude|codex|gemini|pi|ollama|llama-cpp)$"),
    ),
    Setting("models.*.url", str, "", "Endpoint base URL (openai, anthropic)."),
    Setting("models.*.model", str, "", "Model name sent to the endpoint."),
    Setting(
        "models.*.api_key_env",
        str,
        "",
        "Name of the environment variable that holds the API key (the key itself never goes in this file).",
        pattern=ENV_NAME_RE,
    ),
    Setting(
        "models.*.command",
        list,
        [],
        "Program and arguments for kind=command (request JSON on stdin); for an agent CLI preset, the "
        "program to run instead of the one on PATH.",
    ),
    Setting(
        "models.*.timeout_s", int, 60, "Seconds before a model call is abandoned.", minimum=1, maximum=600
    ),
    Setting(
        "models.*.max_response_bytes",
        int,
        200_000,
        "Largest model answer accepted.",
        minimum=1_024,
        maximum=10_000_000,
    ),
    Setting(
        "models.*.max_tokens",
        int,
        4096,
        "Most tokens any one answer may use; a call asks for the smaller of this and its own need.",
        minimum=16,
        maximum=200_000,
    ),
    Setting(
        "models.*.context_tokens",
        int,
        32_000,
        "The model's context window in tokens; callers send a bounded share of it (memory observe: 20%).",
        minimum=2_000,
        maximum=10_000_000,
    ),
    Setting(
        "models.*.allow_insecure_http",
        bool,
        False,
        "Allow plain http:// to a host that is not loopback (prompts and the key would travel unencrypted).",
    ),
)

BY_KEY: dict[str, Setting] = {s.key: s for s in SETTINGS}


def lookup(key: str) -> Setting | None:
    """The setting for a dotted key, resolving `models.NAME.FIELD` through the `models.*` wildcard."""
    if key in BY_KEY:
        return BY_KEY[key]
    parts = key.split(".")
    if len(parts) == 3 and parts[0] == "models" and NAME_RE.match(parts[1]):
        return BY_KEY.get(f"models.*.{parts[2]}")
    return None
