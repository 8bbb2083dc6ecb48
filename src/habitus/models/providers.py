"""The three provider kinds: how a request is sent and where the answer text is found.

openai  OpenAI-compatible chat completions (OpenAI, Ollama, llama.cpp server, vLLM, ...).
        POST {url}/chat/completions, where url is the API base including its version path
        (default https://api.openai.com/v1; Ollama http://localhost:11434/v1; llama.cpp
        http://127.0.0.1:8080/v1). Header `Authorization: Bearer KEY` when a key is configured.
        Body: {"model", "messages": [{"role": "system", ...}, {"role": "user", ...}], "max_tokens",
        "stream": false}. Answer: choices[0].message.content (a string); choices[0].finish_reason
        "length" means the token limit cut it off, "content_filter" (or message.refusal) a refusal.
        Reference: OpenAI API reference, "Create chat completion"
        (https://platform.openai.com/docs/api-reference/chat/create); Ollama's OpenAI compatibility
        (https://ollama.com/blog/openai-compatibility). `max_tokens` is sent rather than OpenAI's newer
        `max_completion_tokens` because every compatible server accepts it. No response_format is sent
        (not every compatible server supports it); the schema is enforced here instead.
anthropic  Anthropic Messages API.
        POST {url}/v1/messages (default url https://api.anthropic.com), headers `x-api-key: KEY` and
        `anthropic-version: 2023-06-01`. Body: {"model", "max_tokens", "system", "messages":
        [{"role": "user", "content"}]}. Answer: the text of the `content` blocks of type "text";
        stop_reason "max_tokens" means cut off, "refusal" a refusal.
        Reference: Anthropic API reference, "Create a Message"
        (https://docs.anthropic.com/en/api/messages).
command  Any program (models.NAME.command = [program, args...]). It gets one JSON object on stdin:
        {"v": 1, "purpose", "model", "system", "user", "max_tokens", "schema"} and writes its answer
        (the JSON object itself) on stdout, then exits 0. Its stderr is discarded; exit 75 means
        "try again" and is retried once. It inherits habitus's environment; no key is put in the request.
preset  An agent CLI the user is logged into (claude, codex, gemini, pi), run non-interactively with
        hooks, tools, extensions and session files off, in an empty temporary folder, the request on
        stdin; its final text is the answer. See habitus.models.presets. (The ollama and llama-cpp
        presets resolve to the openai kind.)
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from habitus import __version__, codec
from habitus.models import transport
from habitus.models.call import Endpoint, ModelError

ANTHROPIC_VERSION = "2023-06-01"
_PROVIDER_CODE = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")


@dataclass(frozen=True)
class Request:
    system: str
    user: str
    schema: dict[str, Any]
    max_tokens: int
    purpose: str


def complete(endpoint: Endpoint, request: Request, *, deadline: float) -> str:
    """Send one request and return the answer text. Raises ModelError."""
    try:
        if endpoint.kind == "command":
            return _command(endpoint, request, deadline)
        if endpoint.kind == "preset":
            return _agent_cli(endpoint, request, deadline)
        if endpoint.kind == "anthropic":
            return _anthropic(endpoint, request, deadline)
        return _openai(endpoint, request, deadline)
    except transport.TransportError as exc:
        error = ModelError(
            exc.reason,
            f"models.{endpoint.name}: {exc.message}",
            model=endpoint.name,
            purpose=request.purpose,
            retry_after=exc.retry_after,
        )
        error.details.update(exc.details)  # free-form facts, never read as ModelError's own parameters
        raise error from None


def join_url(base: str, suffix: str) -> str:
    """The endpoint URL: base + suffix, unless base already ends with it (or with its version)."""
    base = base.rstrip("/")
    if base.endswith(suffix):
        return base
    version = suffix.split("/")[1]
    if suffix.startswith(f"/{version}/") and base.endswith(f"/{version}"):
        return base + suffix[len(version) + 1 :]
    return base + suffix


def _headers(extra: dict[str, str]) -> dict[str, str]:
    return {
        "Content-Type": "application/json",
        "Accept": "application/json",
        "User-Agent": f"habitus/{__version__}",
        **extra,
    }


def _openai(endpoint: Endpoint, request: Request, deadline: float) -> str:
    body = {
        "model": endpoint.model,
        "messages": [
            {"role": "system", "content": request.system},
            {"role": "user", "content": request.user},
        ],
        "max_tokens": request.max_tokens,
        "stream": False,
    }
    auth = {"Authorization": f"Bearer {endpoint.key}"} if endpoint.key else {}
    data = _post(endpoint, request, join_url(endpoint.url, "/chat/completions"), auth, body, deadline)
    fail = _failer(endpoint, request)
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise fail("bad_response", "the response has no choices[0]")
    choice = choices[0]
    message = choice.get("message")
    if not isinstance(message, dict):
        raise fail("bad_response", "the response has no choices[0].message")
    content = message.get("content")
    finish = choice.get("finish_reason")
    if message.get("refusal") or finish == "content_filter":
        raise fail("refusal", "the model declined to answer")
    if content is not None and not isinstance(content, str):
        raise fail("bad_response", "choices[0].message.content is not a string")
    if finish == "length":
        raise fail("max_tokens", "the answer was cut off at max_tokens", answer=content or "")
    if not content or not content.strip():
        raise fail("empty", "the model answered with no text")
    return content


def _anthropic(endpoint: Endpoint, request: Request, deadline: float) -> str:
    body = {
        "model": endpoint.model,
        "max_tokens": request.max_tokens,
        "system": request.system,
        "messages": [{"role": "user", "content": request.user}],
    }
    auth = {"anthropic-version": ANTHROPIC_VERSION}
    if endpoint.key:
        auth["x-api-key"] = endpoint.key
    data = _post(endpoint, request, join_url(endpoint.url, "/v1/messages"), auth, body, deadline)
    fail = _failer(endpoint, request)
    blocks = data.get("content")
    if not isinstance(blocks, list):
        raise fail("bad_response", "the response has no content list")
    texts = [b.get("text") for b in blocks if isinstance(b, dict) and b.get("type") == "text"]
    strings = [t for t in texts if isinstance(t, str)]
    if len(strings) != len(texts):
        raise fail("bad_response", "a text block of the response has no text string")
    content = "".join(strings)
    stop = data.get("stop_reason")
    if stop == "refusal":
        raise fail("refusal", "the model declined to answer")
    if stop == "max_tokens":
        raise fail("max_tokens", "the answer was cut off at max_tokens", answer=content)
    if not content.strip():
        raise fail("empty", "the model answered with no text")
    return content


def _command(endpoint: Endpoint, request: Request, deadline: float) -> str:
    payload = {
        "v": 1,
        "purpose": request.purpose,
        "model": endpoint.model,
        "system": request.system,
        "user": request.user,
        "max_tokens": request.max_tokens,
        "schema": request.schema,
    }
    out = transport.run(
        endpoint.command, codec.dumps(payload), deadline=deadline, cap=endpoint.max_response_bytes
    )
    return _answer_text(out, _failer(endpoint, request), "the program", "the model program wrote nothing")


def _agent_cli(endpoint: Endpoint, request: Request, deadline: float) -> str:
    import shutil

    from habitus.models import presets

    fail = _failer(endpoint, request)
    program = list(endpoint.command)
    if shutil.which(program[0]) is None:
        raise fail(
            "not_installed",
            f"models.{endpoint.name}: the {endpoint.preset} preset runs '{os.path.basename(program[0])}', "
            "which is not on PATH",
            hint=f"install it, or name it: habitus config set models.{endpoint.name}.command /path/to/it",
        )
    with presets.scratch() as folder:
        call = presets.invocation(
            presets.PRESETS[endpoint.preset], program, endpoint.model, system=request.system,
            user=request.user, schema=request.schema, folder=Path(folder),
        )  # fmt: skip
        out = transport.run(
            tuple(call.argv), call.stdin, deadline=deadline, cap=endpoint.max_response_bytes,
            env=call.env, cwd=str(call.cwd),
        )  # fmt: skip
        if call.answer_file is not None:
            try:
                out = call.answer_file.read_bytes()[: endpoint.max_response_bytes + 1]
            except FileNotFoundError:
                out = b""
    if len(out) > endpoint.max_response_bytes:
        raise fail("too_large", "the answer is larger than max_response_bytes")
    return _answer_text(out, fail, "the CLI", f"the {endpoint.preset} CLI wrote no answer")


def _answer_text(out: bytes, fail: Any, who: str, empty: str) -> str:
    """A model program's stdout as text: valid UTF-8 and not blank, else the reason it failed."""
    try:
        text = out.decode("utf-8")
    except UnicodeDecodeError:
        raise fail(
            "not_json", f"{who}'s answer is not valid UTF-8", answer=out.decode("utf-8", "replace")
        ) from None
    if not text.strip():
        raise fail("empty", empty)
    return text


def _post(
    endpoint: Endpoint,
    request: Request,
    url: str,
    auth: dict[str, str],
    body: dict[str, Any],
    deadline: float,
) -> dict[str, Any]:
    response = transport.post(
        url, _headers(auth), codec.dumps(body), deadline=deadline, cap=endpoint.max_response_bytes
    )
    fail = _failer(endpoint, request)
    if not 200 <= response.status <= 299:
        details: dict[str, Any] = {"status": response.status}
        code = _provider_code(response.body)
        if code:
            details["provider_error"] = code
        hint = None
        if response.status in (401, 403):
            hint = "check the key in the variable named by models.NAME.api_key_env"
        raise fail(
            "http_status",
            f"the endpoint answered HTTP {response.status}",
            hint=hint,
            retry_after=_retry_after(response.headers.get("retry-after")),
            **details,
        )
    try:
        data = codec.loads(response.body)
    except ValueError:
        raise fail("bad_response", "the response body is not JSON") from None
    if not isinstance(data, dict):
        raise fail("bad_response", "the response body is not a JSON object")
    return data


def _failer(endpoint: Endpoint, request: Request) -> Any:
    def fail(reason: str, message: str, **kwargs: Any) -> ModelError:
        return ModelError(
            reason,
            f"models.{endpoint.name}: {message}",
            model=endpoint.name,
            purpose=request.purpose,
            **kwargs,
        )

    return fail


def _provider_code(body: bytes) -> str | None:
    """The provider's machine error code ("invalid_api_key", "rate_limit_error"), never its prose."""
    try:
        data = codec.loads(body)
    except ValueError:
        return None
    error = data.get("error") if isinstance(data, dict) else None
    if not isinstance(error, dict):
        return None
    for key in ("code", "type"):
        value = error.get(key)
        if isinstance(value, str) and _PROVIDER_CODE.match(value):
            return value
    return None


def _retry_after(value: str | None) -> float | None:
    """Retry-After in seconds (the HTTP-date form is ignored: the default delay applies)."""
    try:
        seconds = float(value) if value is not None else None
    except ValueError:
        return None
    if seconds is None or seconds != seconds or seconds < 0:
        return None
    return seconds
