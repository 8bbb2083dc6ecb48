"""End-to-end tests against the real clients: the `e2e_pending` group runs only when asked for.

`bin/test` (and so CI) leaves out the tests marked `e2e_pending`: they describe what a real client still
does wrong with habitus, and fail until it is fixed. `bin/test-harnesses --pending`
(HABITUS_E2E_PENDING=1) runs them.
"""

from __future__ import annotations

import os

import pytest


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if os.environ.get("HABITUS_E2E_PENDING", "") not in ("", "0"):
        return
    kept = [item for item in items if item.get_closest_marker("e2e_pending") is None]
    if len(kept) != len(items):
        config.hook.pytest_deselected(items=[i for i in items if i not in kept])
        items[:] = kept
