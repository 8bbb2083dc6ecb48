"""README's Guarantees section names real tests: every reference must point at an existing test function."""

from __future__ import annotations

import re

from conftest import REPO


def test_every_guarantee_names_existing_tests() -> None:
    readme = (REPO / "README.md").read_text()
    section = readme.split("\n## Guarantees\n", 1)[1].split("\n## ", 1)[0]
    rows = [
        line for line in section.splitlines() if line.startswith("| ") and not line.startswith("| guarantee")
    ]
    assert len(rows) >= 10
    for row in rows:
        refs = re.findall(r"`(tests/[\w/]+\.py)::(\w+)`", row)
        assert refs, f"a guarantee without a test: {row}"
        for path, name in refs:
            source = (REPO / path).read_text()
            assert re.search(rf"^def {name}\(", source, re.M), f"{path}::{name} does not exist"
