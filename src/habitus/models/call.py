"""One call to a configured language model that must answer one JSON object valid against a schema.

`call_json` is the only entry point the commands use. It resolves `[models.NAME]`, reads the API key
from the environment variable the config names, sends one request (at most one retry, only for a
connection failure, a cut-off body, HTTP 429 or 5xx, or a command exiting 75), extracts the answer text,
parses it as strict JSON (a single ```json fence is tolerated, nothing else), rejects instruction-like
text, and validates it against the schema. Every failure is a `ModelError`: error code `model_error`
(exit 1) with a `reason` from `REASONS` in the error object.

Nothing here logs, prints or stores a prompt, an answer or a key. Error messages name settings, variables
and JSON paths, never their values. An answer that arrived but is unusable rides on the exception
(`ModelError.answer`, at most `QUARANTINE_MAX_CHARS`) so that the caller can quarantine it; it never
appears in the error object.
"""

from __future__ import annotations

import ipaddress
import os
import re
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from habitus.errors import HabitusError

if TYPE_CHECKING:
    from habitus.state.config import Config

# reason -> what it means. Documented in README ("Language models"); append, never rename.
REASONS: dict[str, str] = {
    "not_configured": "the [models.NAME] table, its model name, URL or program is missing or unusable",
    "missing_key": "the environment variable named by api_key_env is unset, empty or not a valid header",
    "bad_url": "the URL is not https:// (or http:// to a loopback host), or it carries credentials",
    "connection": "the endpoint could not be reached, or the connection failed mid-way",
    "timeout": "no complete answer within models.NAME.timeout_s",
    "http_status": "the endpoint answered with an HTTP status other than 2xx (`status` in the details)",
    "too_large": "the answer is larger than models.NAME.max_response_bytes",
    "truncated": "the response body ended before its declared length",
    "bad_response": "the body is not the provider's response shape (no choices / content to read)",
    "max_tokens": "the model stopped at its token limit, so the answer is cut off",
    "refusal": "the model declined to answer",
    "empty": "the model answered with no text",
    "command_failed": "the model program exited with a non-zero status (`exit_status` in the details)",
    "not_installed": "the agent CLI a preset runs is not on PATH (or models.NAME.command names no program)",
    "not_json": "the answer is not one JSON object (one surrounding json code fence is tolerated)",
    "schema_invalid": "the answer does not match the schema (`path` and `keyword` in the details)",
    "injection": "the answer contains instruction-like text or control characters (`pattern`, `path`)",
}
# Answers that arrived but must not be used: the caller stores ModelError.answer in its quarantine.
QUARANTINE_REASONS = frozenset({"max_tokens", "not_json", "schema_invalid", "injection"})
QUARANTINE_MAX_CHARS = 24_000
RETRY_DELAY_S = 1.0  # before the one retry, unless the server sent Retry-After
MAX_RETRY_AFTER_S = 10.0

_PURPOSE = re.compile(r"^[a-z][a-z0-9_-]{0,31}$")
_HEADER_SAFE = re.compile(r"^[\x21-\x7e]{1,4096}$")  # visible ASCII: no spaces, CR, LF or controls


class ModelError(HabitusError):
    """A model call failed. `reason` is one of REASONS; `answer` is the unusable answer, if one came."""

    def __init__(
        self,
        reason: str,
        message: str,
        *,
        model: str,
        purpose: str,
        hint: str | None = None,
        answer: str | None = None,
        retry_after: float | None = None,
        **details: object,
    ) -> None:
        if reason not in REASONS:
            raise ValueError(f"undocumented model error reason {reason!r}")
        super().__init__("model_error", message, hint, reason=reason, model=model, purpose=purpose, **details)
        self.reason = reason
        self.answer = None if answer is None else answer[:QUARANTINE_MAX_CHARS]
        self.answer_truncated = answer is not None and len(answer) > QUARANTINE_MAX_CHARS
        self.retry_after = retry_after

    @property
    def quarantine(self) -> bool:
        """True when an answer arrived but was rejected: store `answer` in quarantine, change nothing."""
        return self.reason in QUARANTINE_REASONS and self.answer is not None

    @property
    def retryable(self) -> bool:
        if self.reason in ("connection", "truncated"):
            return True
        if self.reason == "http_status":
            status = self.details.get("status")
            return isinstance(status, int) and (status == 429 or 500 <= status <= 599)
        return self.reason == "command_failed" and self.details.get("exit_status") == 75  # EX_TEMPFAIL


@dataclass(frozen=True)
class Endpoint:
    """A resolved `[models.NAME]` table. `key` is the API key itself: never log or print an Endpoint."""

    name: str
    kind: str
    url: str
    model: str
    command: tuple[str, ...]
    timeout_s: int
    max_response_bytes: int
    max_tokens: int
    key: str | None = field(default=None, repr=False)
    preset: str = ""  # kind "preset": the agent CLI (habitus.models.presets)


DEFAULT_URLS = {"openai": "https://api.openai.com/v1", "anthropic": "https://api.anthropic.com"}


def resolve(config: Config, name: str, *, purpose: str) -> Endpoint:
    """Read `[models.NAME]` and the API key; refuse what cannot be called safely."""

    def fail(reason: str, message: str, hint: str | None = None) -> ModelError:
        return ModelError(reason, message, model=name, purpose=purpose, hint=hint)

    try:
        table = config.model(name)
    except HabitusError:
        raise fail(
            "not_configured",
            f"models.{name}: no such model in config.toml",
            hint=f"configure it: habitus config set models.{name}.kind openai|anthropic|command",
        ) from None
    kind = table["kind"]
    if kind == "preset":
        from habitus.models import presets

        preset = presets.PRESETS.get(table["preset"])
        if preset is None:
            raise fail(
                "not_configured",
                f"models.{name}.preset: unset; kind=preset needs one of " + ", ".join(presets.NAMES),
                hint=f"habitus config preset claude --name {name}",
            )
        if preset.family == "openai":
            # A local server: the openai kind with the server's usual URL and model filled in.
            table = {**table, "url": table["url"] or preset.url, "model": table["model"] or preset.model}
            kind = "openai"
            if not table["model"]:
                raise fail(
                    "not_configured",
                    f"models.{name}.model: empty; name the model the {preset.name} server runs",
                    hint=f"habitus config set models.{name}.model qwen2.5-coder:7b",
                )
        else:
            program = tuple(table["command"]) or (preset.program,)
            if not program[0]:
                raise fail("not_configured", f"models.{name}.command: the program name is empty")
            return Endpoint(
                name, "preset", "", table["model"], program, table["timeout_s"], table["max_response_bytes"],
                table["max_tokens"], preset=preset.name,
            )  # fmt: skip
    if kind == "command":
        argv = tuple(table["command"])
        if not argv or not argv[0]:
            raise fail("not_configured", f"models.{name}.command: empty; kind=command needs a program")
        return Endpoint(
            name, kind, "", table["model"], argv, table["timeout_s"], table["max_response_bytes"],
            table["max_tokens"],
        )  # fmt: skip
    if not table["model"]:
        raise fail("not_configured", f"models.{name}.model: empty; the endpoint needs a model name")
    url = table["url"] or DEFAULT_URLS[kind]
    problem = url_problem(url, allow_insecure_http=table["allow_insecure_http"])
    if problem:
        raise fail("bad_url", f"models.{name}.url: {problem}")
    key = None
    variable = table["api_key_env"]
    if variable:
        key = os.environ.get(variable, "")
        if not key:
            raise fail(
                "missing_key",
                f"the environment variable {variable} (models.{name}.api_key_env) is unset or empty",
                hint=f"export {variable}=... in the environment that runs habitus",
            )
        if not _HEADER_SAFE.match(key):
            raise fail(
                "missing_key",
                f"the environment variable {variable} (models.{name}.api_key_env) holds spaces, "
                "line breaks or non-ASCII characters; it cannot be sent as a header",
            )
    return Endpoint(
        name, kind, url, table["model"], (), table["timeout_s"], table["max_response_bytes"],
        table["max_tokens"], key,
    )  # fmt: skip


def url_problem(url: str, *, allow_insecure_http: bool = False) -> str | None:
    """None when url may be called; else why not (never quoting the URL, which may hold a token).

    https:// anywhere; http:// only to a loopback host (localhost, 127.0.0.0/8, ::1), where a local
    server (Ollama, llama.cpp, vLLM) usually listens, unless allow_insecure_http is set.
    """
    try:
        parts = urlsplit(url)
        host = parts.hostname
        parts.port  # noqa: B018 - raises ValueError on a bad port
    except ValueError:
        return "not a valid URL"
    if parts.scheme not in ("https", "http"):
        return "expected an https:// URL (or http:// to a loopback host)"
    if not host:
        return "the URL has no host"
    if parts.username is not None or parts.password is not None:
        return "the URL carries credentials; put the key in the variable named by api_key_env"
    if parts.fragment:
        return "the URL has a #fragment"
    if parts.scheme == "http" and not allow_insecure_http and not is_loopback(host):
        return (
            "plain http:// is allowed only to a loopback host; use https:// "
            "(or set allow_insecure_http = true if you accept the risk)"
        )
    return None


def is_loopback(host: str) -> bool:
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False  # a DNS name other than localhost is never trusted to be local


def call_json(
    config: Config,
    name: str,
    *,
    system: str,
    user: str | dict[str, Any] | list[Any],
    schema: dict[str, Any] | str,
    max_tokens: int,
    purpose: str,
) -> dict[str, Any]:
    """Ask model `name` and return its answer: one JSON object valid against `schema`.

    system     the instructions (sent as the system prompt / system message)
    user       the task: text, or a JSON-able object sent as compact JSON; redact it before calling
    schema     a JSON Schema dict, or the name of a published one in habitus/schemas ("model-envelope.v1")
    max_tokens what this call needs; the smaller of it and models.NAME.max_tokens is requested
    purpose    a short identifier ("analyze", "select", "advise") reported in errors and to programs

    Raises ModelError (code model_error, exit 1) for every failure; see REASONS and
    ModelError.quarantine. Takes at most models.NAME.timeout_s seconds, retry included.
    """
    from habitus import codec
    from habitus.models import answer, providers

    if not _PURPOSE.match(purpose):
        raise ValueError(f"bad purpose {purpose!r}")
    if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 1:
        raise ValueError("max_tokens must be a positive integer")
    if isinstance(schema, str):
        from habitus import schemas

        schema_name, schema = schema, schemas.load(schema)
    else:
        schema_name = str(schema.get("$id") or schema.get("title") or "the given schema")
    endpoint = resolve(config, name, purpose=purpose)
    user_text = user if isinstance(user, str) else codec.canonical(user).decode("utf-8")
    request = providers.Request(
        system=system,
        user=user_text,
        schema=schema,
        max_tokens=min(max_tokens, endpoint.max_tokens),
        purpose=purpose,
    )
    deadline = time.monotonic() + endpoint.timeout_s
    try:
        text = providers.complete(endpoint, request, deadline=deadline)
    except ModelError as error:
        if not error.retryable:
            raise
        delay = RETRY_DELAY_S if error.retry_after is None else min(error.retry_after, MAX_RETRY_AFTER_S)
        if time.monotonic() + delay >= deadline:
            raise
        time.sleep(delay)
        text = providers.complete(endpoint, request, deadline=deadline)
    return answer.accept(text, schema, schema_name=schema_name, model=name, purpose=purpose)
