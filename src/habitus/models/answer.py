"""Turning a model's answer text into a trusted object: strict JSON, no instructions, valid schema.

The answer must be exactly one JSON object, optionally inside one Markdown code fence (```json ... ```);
prose around it is refused rather than searched for JSON, because a model that chats around its answer
is not following the contract. Every string in the object (keys too) is then scanned for text that
tries to steer an agent ("ignore previous instructions", chat-template role markers, "tool output
says", ...) or hides in control characters; a match is refused even when the schema would accept it.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from habitus.models.call import ModelError

_UNSAFE_PATH = re.compile(r"[^A-Za-z0-9_.$\[\]-]")
_FENCE = re.compile(r"\A```[ \t]*(?:json|JSON)?[ \t]*\r?\n(.*?)\r?\n?```\Z", re.S)

# (pattern id, regex). Ids are stable: they appear in error details and quarantine rows.
INJECTION_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (name, re.compile(regex, re.I | re.M))
    for name, regex in (
        (
            "override_instructions",
            r"\b(ignore|disregard|forget|override)\b[^.\n]{0,40}?\b(previous|prior|above|earlier|"
            r"preceding|all|system|original|your)\b[^.\n]{0,30}?\b(instructions?|rules|prompts?|"
            r"messages|directions|guidelines)\b",
        ),
        ("role_tag", r"</?\s*(system|assistant|user|developer|human|instructions?|tool|im_start|im_end)\s*>"),
        ("chat_template", r"<\|[a-z_]{0,20}\|>|\[/?INST\]|<</?SYS>>|^#{2,}\s*(instruction|system)\b"),
        ("role_line", r"^\s*(system|assistant|developer|human)\s*:"),
        ("tool_output_claim", r"\btool (output|result|response)s? (says|said|instructs?|requires?)\b"),
        (
            "role_play",
            r"\byou are now\b|\bnew instructions\s*:|\bdeveloper mode\b|\bjailbr(eak|oken)\b|"
            r"\bpretend (that )?you are\b|\bdo anything now\b",
        ),
        ("control_character", r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\u202a-\u202e\u2066-\u2069]"),
    )
)


def accept(
    text: str, schema: dict[str, Any], *, schema_name: str, model: str, purpose: str
) -> dict[str, Any]:
    """The answer as an object, or ModelError (not_json, injection, schema_invalid) carrying the text."""

    def fail(reason: str, message: str, **details: str) -> ModelError:
        error = ModelError(reason, f"models.{model}: {message}", model=model, purpose=purpose, answer=text)
        error.details.update(details)  # free-form facts, never read as ModelError's own parameters
        return error

    obj = parse(text)
    if obj is None:
        raise fail("not_json", "the answer is not one JSON object")
    found = scan(obj)
    if found is not None:
        pattern, path = found
        raise fail(
            "injection", f"the answer holds instruction-like text at {path}", pattern=pattern, path=path
        )
    from habitus import schemas

    problems = schemas.problems(schema, obj)
    if problems:
        path, keyword = safe_path(problems[0][0]), problems[0][1]
        raise fail(
            "schema_invalid",
            f"the answer does not match {schema_name}: {path} fails '{keyword}'",
            path=path,
            keyword=keyword,
        )
    return obj


def parse(text: str) -> dict[str, Any] | None:
    """The JSON object in text (whole text, or one fenced block that is the whole text), else None."""
    from habitus import codec

    body = text.strip()
    fenced = _FENCE.match(body)
    if fenced:
        body = fenced.group(1).strip()
    try:
        obj = codec.loads(body)
    except ValueError:
        return None
    return obj if isinstance(obj, dict) else None


def scan(obj: Any) -> tuple[str, str] | None:
    """(pattern id, JSON path) of the first instruction-like string in obj (keys included), else None."""
    for path, value in _strings(obj, "$"):
        for name, pattern in INJECTION_PATTERNS:
            if pattern.search(value):
                return name, path
    return None


def safe_path(path: str) -> str:
    """A JSON path fit for an error message: object keys are model text, so odd characters become '?'."""
    return _UNSAFE_PATH.sub("?", path)[:200]


def _strings(obj: Any, path: str) -> Iterator[tuple[str, str]]:
    if isinstance(obj, str):
        yield path, obj
    elif isinstance(obj, dict):
        for key, value in obj.items():
            child = f"{path}.{safe_path(key)[:40]}"
            yield path, key
            yield from _strings(value, child)
    elif isinstance(obj, list):
        for index, value in enumerate(obj):
            yield from _strings(value, f"{path}[{index}]")
