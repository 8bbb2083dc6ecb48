"""Start-up stays light: help and version paths import click and the stdlib, not the heavy stack."""

from __future__ import annotations

import subprocess
import sys

import pytest

from habitus.cli import COMMANDS

# rich draws tables and progress bars for a terminal only (habitus.render); tests/test_render.py checks
# that hooks and pipes never load it.
HEAVY = (
    "numpy",
    "onnxruntime",
    "tokenizers",
    "jsonschema",
    "tomlkit",
    "fasteners",
    "rich",
    "mcp",
    "mcp_types",
)

PROBE = f"""
import sys
sys.argv = ["habitus", *sys.argv[1:]]
from habitus.launcher import main
try:
    main()
except SystemExit:
    pass
heavy = sorted({{m.split(".")[0] for m in sys.modules}} & set({HEAVY!r}))
sys.stderr.write("HEAVY=" + ",".join(heavy) + "\\n")
"""


def loaded(args: list[str]) -> list[str]:
    done = subprocess.run([sys.executable, "-c", PROBE, *args], capture_output=True, text=True, timeout=60)
    line = [x for x in done.stderr.splitlines() if x.startswith("HEAVY=")][-1]
    return [m for m in line[len("HEAVY=") :].split(",") if m]


@pytest.mark.parametrize("args", [["--help"], ["--version"], ["status", "--help"], ["config", "--help"]])
def test_top_level_paths_are_light(args: list[str]) -> None:
    assert loaded(args) == []


def test_every_command_help_is_light() -> None:
    for name in COMMANDS:
        assert loaded([name, "--help"]) == [], name
