"""Memory records: the canonical fields, their strict validation, and conversion to and from rows.

A record is exactly these fields (export writes them, import requires them all):

    id          UUID v4, lowercase, assigned by habitus on creation
    content     non-empty text, trimmed, at most MAX_CONTENT_BYTES of UTF-8, redacted before storing
    kind        note | decision | preference | fact | instruction | observation | reflection
    scope       project | global
    namespace   slug (lowercase kebab-case, e.g. `node-22`), default `default`
    tags        sorted, de-duplicated list of slugs
    importance  number in 0..1 (default 0.5)
    confidence  number in 0..1 (default 1)
    relevance   low | medium | high | critical for observations (default medium), else null
    created_at, updated_at   ISO-8601 UTC with milliseconds, `2026-11-30T22:44:34.123Z`
    expires_at  such a timestamp or null
    removed_at  such a timestamp (soft-removed) or null
    metadata    JSON object (at most MAX_METADATA_BYTES canonical); `metadata.source`, when present,
                is a string naming who wrote the record

Error messages name the field, never its value.
"""

from __future__ import annotations

import functools
import math
import re
import uuid
from collections.abc import Mapping
from typing import Any

from habitus import codec
from habitus.errors import HabitusError, bad_request
from habitus.state.memory_store import KINDS, RELEVANCES, SCOPES

FIELDS = (
    "id",
    "content",
    "kind",
    "scope",
    "namespace",
    "tags",
    "importance",
    "confidence",
    "relevance",
    "created_at",
    "updated_at",
    "expires_at",
    "removed_at",
    "metadata",
)

MAX_CONTENT_BYTES = 32 * 1024  # a record always fits a 50 KiB result whole (see habitus.memory.bound)
MAX_METADATA_BYTES = 8 * 1024
# Results nest metadata a few levels down, and orjson refuses more than 254 levels: bound it well below.
MAX_METADATA_DEPTH = 32
MAX_SLUG_CHARS = 64
MAX_TAGS = 32
MAX_SOURCE_CHARS = 64

SLUG_RE = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")  # "2fa", "1password", "k8s" are tags people write
UUID4_RE = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$")
TIMESTAMP_RE = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$")
TIMESTAMP_FORM = "an ISO-8601 UTC timestamp with milliseconds, like 2030-01-01T00:00:00.000Z"


# -- redaction ------------------------------------------------------------------------------------


def sensitive(field: str) -> HabitusError:
    return HabitusError(
        "sensitive_content",
        f"request.{field}: still looks like a secret after redaction; nothing was stored",
        hint="remove the secret (key, token, password) from the text and retry",
    )


def instruction_like(field: str) -> HabitusError:
    return HabitusError(
        "refused",
        f"request.{field}: looks like an instruction to an agent (an injection marker); nothing was stored",
        hint="state the fact in plain words; memories reach an agent's context verbatim",
        reason="injection",
    )


def check_instructions(text: str, field: str = "content") -> str:
    """Refuse text holding an instruction-injection marker ("ignore previous instructions", chat-template
    tokens, `curl … | sh`): the same list habit wording is checked against (habitus.habits.wording).
    Every write path calls it through `check_content`: retain and import refuse, observe and reflect
    skip such text and count it."""
    from habitus.habits.wording import looks_like_injection

    if looks_like_injection(text):
        raise instruction_like(field)
    return text


def redact_content(text: str, field: str = "content") -> str:
    """THE single place where memory text is redacted before it is stored (DESIGN.md section 10).

    Every write path (retain, patch, import, observe, reflect, prune notes) reaches stored text through
    `check_content`, `check_metadata` or `check_slug(..., stored=True)`, which call this or
    `redact_metadata`. Text that still looks sensitive after redaction is refused (`sensitive_content`):
    retain and import fail, observe and reflect skip it and count it.
    """
    from habitus.redact import looks_sensitive, redact

    clean, _ = redact(text)
    if looks_sensitive(clean):
        raise sensitive(field)
    return clean


def redact_metadata(value: dict[str, Any], field: str = "metadata") -> dict[str, Any]:
    """metadata with every string value redacted (and secret-named keys' values replaced); refused when
    a key or value still looks sensitive afterwards."""
    from habitus.redact import looks_sensitive, redact_obj

    clean, _ = redact_obj(value)

    def check(node: Any, where: str) -> None:
        if isinstance(node, str):
            if looks_sensitive(node):
                raise sensitive(where)
        elif isinstance(node, list):
            for index, item in enumerate(node):
                check(item, f"{where}[{index}]")
        elif isinstance(node, dict):
            for key, item in node.items():
                if looks_sensitive(str(key)):
                    raise sensitive(f"{where} (a key)")
                check(item, f"{where}.{key}")

    check(clean, field)
    return clean  # type: ignore[no-any-return]


def is_clean(record: Mapping[str, Any]) -> bool:
    """Whether a stored record is exactly what redaction would store (verify: `memory_sensitive`)."""
    try:
        return (
            redact_content(record["content"]) == record["content"]
            and redact_metadata(record["metadata"]) == record["metadata"]
            and all(check_slug(t, "tags", stored=True) for t in [record["namespace"], *record["tags"]])
        )
    except HabitusError:
        return False


def is_plain(record: Mapping[str, Any]) -> bool:
    """Whether a stored record is free of instruction-injection markers (verify: `memory_instruction`)."""
    from habitus.habits.wording import looks_like_injection

    source = record["metadata"].get("source")
    return not looks_like_injection(record["content"]) and not (
        isinstance(source, str) and looks_like_injection(source)
    )


# -- single fields ---------------------------------------------------------------------------------


def new_id() -> str:
    return str(uuid.uuid4())


def check_id(value: Any, field: str = "id") -> str:
    if not isinstance(value, str) or not UUID4_RE.match(value):
        raise bad_request(field, "expected a lowercase UUID v4 (as returned by retain)")
    return value


def check_content(value: Any, field: str = "content", *, redact: bool = True) -> str:
    if not isinstance(value, str):
        raise bad_request(field, "expected a string")
    text = value.strip()
    if not text:
        raise bad_request(field, "expected non-whitespace text")
    if "\x00" in text:
        raise bad_request(field, "must not contain NUL characters")
    try:
        size = len(text.encode("utf-8"))
    except UnicodeEncodeError:
        raise bad_request(field, "expected valid Unicode text (no lone surrogates)") from None
    if size > MAX_CONTENT_BYTES:
        raise bad_request(field, f"expected at most {MAX_CONTENT_BYTES} bytes of UTF-8")
    if redact:
        text = check_instructions(redact_content(text, field).strip(), field)
    if not text:
        raise bad_request(field, "nothing left after redaction")
    return text


def check_choice(value: Any, field: str, choices: tuple[str, ...]) -> str:
    if not isinstance(value, str) or value not in choices:
        raise bad_request(field, "expected one of " + ", ".join(choices))
    return value


def check_slug(value: Any, field: str, *, stored: bool = False) -> str:
    """A slug; one to be stored must not look like a secret (a slug cannot be redacted, only refused)."""
    if not isinstance(value, str) or len(value) > MAX_SLUG_CHARS or not SLUG_RE.match(value):
        raise bad_request(
            field, f"expected a lowercase kebab-case slug like node-22 (<= {MAX_SLUG_CHARS} chars)"
        )
    if stored and _slug_sensitive(value):
        raise sensitive(field)
    return value


@functools.lru_cache(maxsize=4096)
def _slug_sensitive(value: str) -> bool:
    """Whether a slug looks like a secret (cached: the same few tags and namespaces recur)."""
    from habitus.redact import looks_sensitive

    return looks_sensitive(value)


def check_tags(value: Any, field: str = "tags", *, text: bool = True, stored: bool = True) -> list[str]:
    """A list of slugs (or, with text, one comma-separated string), sorted and de-duplicated."""
    if text and isinstance(value, str):
        value = [part.strip() for part in value.split(",") if part.strip()]
    if not isinstance(value, list):
        raise bad_request(field, "expected a list of slugs")
    tags = sorted({check_slug(tag, f"{field}[{index}]", stored=stored) for index, tag in enumerate(value)})
    if len(tags) > MAX_TAGS:
        raise bad_request(field, f"expected at most {MAX_TAGS} tags")
    return tags


def check_unit(value: Any, field: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise bad_request(field, "expected a number from 0 to 1")
    number = float(value)
    if not math.isfinite(number) or not 0.0 <= number <= 1.0:
        raise bad_request(field, "expected a number from 0 to 1")
    return number


def check_timestamp(value: Any, field: str, *, nullable: bool = False) -> str | None:
    if value is None and nullable:
        return None
    if not isinstance(value, str) or not TIMESTAMP_RE.match(value):
        raise bad_request(field, f"expected {TIMESTAMP_FORM}" + (" or null" if nullable else ""))
    import datetime  # here, not at import: read paths (index hooks) never need it

    try:
        datetime.datetime.strptime(value, "%Y-%m-%dT%H:%M:%S.%fZ")
    except ValueError:
        raise bad_request(field, "expected a calendar-valid timestamp") from None
    return value


def _depth(value: Any) -> int:
    """How deeply lists and objects nest in `value` (a scalar is 0), without recursion."""
    deepest, stack = 0, [(value, 0)]
    while stack:
        item, level = stack.pop()
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list) else None
        if children is None:
            deepest = max(deepest, level)
            continue
        deepest = max(deepest, level + 1)
        stack.extend((child, level + 1) for child in children)
    return deepest


def check_metadata(
    value: Any, field: str = "metadata", *, nullable: bool = True, redact: bool = True
) -> dict[str, Any]:
    if value is None and nullable:
        return {}
    if not isinstance(value, dict):
        raise bad_request(field, "expected a JSON object")
    # Depth first: orjson refuses to encode past 254 levels, so the size check must not meet such a value.
    if _depth(value) > MAX_METADATA_DEPTH:
        raise bad_request(field, f"expected at most {MAX_METADATA_DEPTH} levels of nesting")
    if len(codec.canonical(value)) > MAX_METADATA_BYTES:
        raise bad_request(field, f"expected at most {MAX_METADATA_BYTES} bytes of canonical JSON")
    if redact:
        value = redact_metadata(value, field)
        if len(codec.canonical(value)) > MAX_METADATA_BYTES:
            raise bad_request(field, f"expected at most {MAX_METADATA_BYTES} bytes of canonical JSON")
    source = value.get("source")
    if "source" in value and (not isinstance(source, str) or not source or len(source) > MAX_SOURCE_CHARS):
        raise bad_request(f"{field}.source", f"expected a non-empty string (<= {MAX_SOURCE_CHARS} chars)")
    if redact and isinstance(source, str):
        check_instructions(source, f"{field}.source")  # the index shows it beside the content
    return value


def check_relevance(kind: str, relevance: Any, field: str = "relevance") -> str | None:
    if kind == "observation":
        return check_choice(relevance, field, RELEVANCES)
    if relevance is not None:
        raise bad_request(field, "only observations have a relevance; expected null")
    return None


# -- timestamps ------------------------------------------------------------------------------------


def to_ms(timestamp: str) -> int:
    import datetime

    moment = datetime.datetime.strptime(timestamp, "%Y-%m-%dT%H:%M:%S.%fZ")
    return int(moment.replace(tzinfo=datetime.UTC).timestamp() * 1000 + 0.5)


def from_ms(ms: int) -> str:
    import datetime

    moment = datetime.datetime.fromtimestamp(ms / 1000, tz=datetime.UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"


def after(previous: str, now: str) -> str:
    """`now`, or 1 ms past `previous` when the clock went backwards: updated_at only ever grows."""
    return now if now > previous else from_ms(to_ms(previous) + 1)


# -- whole records ---------------------------------------------------------------------------------


def create(request: Mapping[str, Any], *, scope: str, now: str) -> dict[str, Any]:
    """A new record from a retain request (defaults filled in; `id` and timestamps assigned here)."""
    if "content" not in request:
        raise bad_request("content", "required to create a memory")
    if "scope" in request and check_choice(request["scope"], "scope", SCOPES) != scope:
        raise bad_request("scope", f"the {scope} store holds {scope} records; pick the store with --store")
    kind = check_choice(request.get("kind", "note"), "kind", KINDS)
    relevance = request.get("relevance", "medium" if kind == "observation" else None)
    return {
        "id": new_id(),
        "content": check_content(request["content"]),
        "kind": kind,
        "scope": scope,
        "namespace": check_slug(request.get("namespace", "default"), "namespace", stored=True),
        "tags": check_tags(request.get("tags", [])),
        "importance": check_unit(request.get("importance", 0.5), "importance"),
        "confidence": check_unit(request.get("confidence", 1.0), "confidence"),
        "relevance": check_relevance(kind, relevance),
        "created_at": now,
        "updated_at": now,
        "expires_at": check_timestamp(request.get("expires_at"), "expires_at", nullable=True),
        "removed_at": None,
        "metadata": check_metadata(request.get("metadata")),
    }


def patch_fields(request: Mapping[str, Any]) -> dict[str, Any]:
    """The validated fields a retain-by-id request changes (checked before any store is opened)."""
    fields: dict[str, Any] = {}
    if "content" in request:
        fields["content"] = check_content(request["content"])
    if "kind" in request:
        fields["kind"] = check_choice(request["kind"], "kind", KINDS)
    if "scope" in request:
        fields["scope"] = check_choice(request["scope"], "scope", SCOPES)
    if "namespace" in request:
        fields["namespace"] = check_slug(request["namespace"], "namespace", stored=True)
    if "tags" in request:
        fields["tags"] = check_tags(request["tags"])
    for field in ("importance", "confidence"):
        if field in request:
            fields[field] = check_unit(request[field], field)
    if "expires_at" in request:
        fields["expires_at"] = check_timestamp(request["expires_at"], "expires_at", nullable=True)
    if "metadata" in request:
        fields["metadata"] = check_metadata(request["metadata"])
    if "relevance" in request:
        relevance = request["relevance"]
        fields["relevance"] = None if relevance is None else check_choice(relevance, "relevance", RELEVANCES)
    return fields


def patch(record: Mapping[str, Any], fields: Mapping[str, Any], *, now: str) -> dict[str, Any]:
    """record with `fields` replaced (tags and metadata replace, never merge), and restored if removed.

    A patch never moves a record: `scope`, when given, must be the record's own.
    """
    if "scope" in fields and fields["scope"] != record["scope"]:
        raise bad_request("scope", "a patch cannot change scope (records never move between stores)")
    new = {**record, **fields}
    if "relevance" in fields:
        new["relevance"] = check_relevance(new["kind"], fields["relevance"])
    elif new["kind"] != "observation":
        new["relevance"] = None
    elif new["relevance"] is None:
        new["relevance"] = "medium"
    new["removed_at"] = None
    new["updated_at"] = after(record["updated_at"], now)
    return new


def full(obj: Any, where: str = "record", *, redact: bool = True) -> dict[str, Any]:
    """A complete record as export writes it (import): every field required and valid; others ignored.

    Text is redacted like on every write path; verify passes redact=False to check the fields alone."""
    if not isinstance(obj, dict):
        raise bad_request(where, "expected a JSON object")
    missing = [field for field in FIELDS if field not in obj]
    if missing:
        raise bad_request(f"{where}.{missing[0]}", "required (import needs complete records)")
    kind = check_choice(obj["kind"], f"{where}.kind", KINDS)
    return {
        "id": check_id(obj["id"], f"{where}.id"),
        "content": check_content(obj["content"], f"{where}.content", redact=redact),
        "kind": kind,
        "scope": check_choice(obj["scope"], f"{where}.scope", SCOPES),
        "namespace": check_slug(obj["namespace"], f"{where}.namespace", stored=redact),
        "tags": check_tags(obj["tags"], f"{where}.tags", text=False, stored=redact),
        "importance": check_unit(obj["importance"], f"{where}.importance"),
        "confidence": check_unit(obj["confidence"], f"{where}.confidence"),
        "relevance": check_relevance(kind, obj["relevance"], f"{where}.relevance"),
        "created_at": check_timestamp(obj["created_at"], f"{where}.created_at"),
        "updated_at": check_timestamp(obj["updated_at"], f"{where}.updated_at"),
        "expires_at": check_timestamp(obj["expires_at"], f"{where}.expires_at", nullable=True),
        "removed_at": check_timestamp(obj["removed_at"], f"{where}.removed_at", nullable=True),
        "metadata": check_metadata(obj["metadata"], f"{where}.metadata", nullable=False, redact=redact),
    }


# -- rows ------------------------------------------------------------------------------------------

COLUMNS = ", ".join(FIELDS)
# Stored columns: the fields plus `source`, a copy of metadata.source kept for filtering.
ROW_FIELDS = (*FIELDS, "source")
ROW_COLUMNS = ", ".join(ROW_FIELDS)


def from_row(row: Mapping[str, Any]) -> dict[str, Any]:
    record = {field: row[field] for field in FIELDS}
    record["tags"] = codec.loads(row["tags"])
    record["metadata"] = codec.loads(row["metadata"])
    return record


def to_row(record: Mapping[str, Any]) -> tuple[Any, ...]:
    """Values for ROW_FIELDS."""
    values = dict(record)
    values["tags"] = codec.canonical(record["tags"]).decode()
    values["metadata"] = codec.canonical(record["metadata"]).decode()
    values["source"] = record["metadata"].get("source")
    return tuple(values[field] for field in ROW_FIELDS)


def stored_form(record: Mapping[str, Any]) -> dict[str, Any]:
    """The record as it reads back from the database (what export prints), for comparisons."""
    return from_row(dict(zip(ROW_FIELDS, to_row(record), strict=True)))
