"""Results over 50 KiB come back as a valid, bounded summary with `truncated: true`.

The summary keeps the counts and paging of the full result and, per item, its identity (store, id),
kind, namespace, tags, timestamps, score and a preview of at most PREVIEW_CHARS characters. If even
the previews would not fit, trailing items are left out and counted in `omitted`. Stored memories are
never changed; `--full` asks for the whole result instead.
"""

from __future__ import annotations

import re
from typing import Any

from habitus import codec

MAX_RESULT_BYTES = 51_200
PREVIEW_CHARS = 240
_SPACE = re.compile(r"\s+")


def preview(text: str, limit: int = PREVIEW_CHARS) -> str:
    """text on one line (runs of whitespace collapsed), cut to limit characters with an ellipsis."""
    flat = _SPACE.sub(" ", text).strip()
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def _size(obj: Any) -> int:
    return len(codec.dumps(obj)) + 8  # room for "v":1 and the newline


def bound(result: dict[str, Any], *, limit: int = MAX_RESULT_BYTES) -> dict[str, Any]:
    """result unchanged when it fits in limit bytes, else its summary (see the module doc)."""
    size = _size(result)
    if size <= limit:
        return result
    summary = {key: value for key, value in result.items() if key != "items"}
    summary.update(
        {
            "truncated": True,
            "bytes": size,
            "max_bytes": limit,
            "returned": len(result.get("items", [])),
            "hint": "narrow the query or lower --limit, recall single ids, or pass --full",
        }
    )
    items = [_brief(item) for item in result.get("items", [])]
    summary["items"] = items
    summary["omitted"] = 0
    while items and _size(summary) > limit:
        # Drop from the end in chunks so that huge pages stay linear.
        cut = max(1, len(items) // 10) if _size(summary) > 2 * limit else 1
        del items[-cut:]
        summary["omitted"] += cut
    return summary


def _brief(item: dict[str, Any]) -> dict[str, Any]:
    brief = {
        key: item[key]
        for key in (
            "store",
            "id",
            "kind",
            "namespace",
            "tags",
            "relevance",
            "updated_at",
            "expires_at",
            "score",
        )
        if key in item
    }
    content = item.get("content", "")
    brief["preview"] = preview(content)
    brief["content_chars"] = len(content)
    return brief
