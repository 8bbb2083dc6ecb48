"""The one clock format habitus stores: ISO-8601 UTC with milliseconds (stdlib only, for the hook path)."""

from __future__ import annotations

import time


def utc_now() -> str:
    """ISO-8601 UTC with milliseconds, e.g. 2026-11-30T22:44:34.123Z."""
    now = time.time()
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(now)) + f".{int(now * 1000) % 1000:03d}Z"
