"""The layers of src/habitus, read from the source (scripts/import_graph.py): each room has one job.

    foundation   errors, codec, redact, lang, schemas: imported by anyone, import only each other
    state        storage: imports the foundation only, never a domain
    domains      habits, memory, advise, learn, select, ...: never the command-line face
    front        cli, io, options, hookmode, commands, worker, ...: the only code that talks to a person

Every import counts, also one inside a function; `if TYPE_CHECKING:` imports do not.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))

import import_graph

FOUNDATION = {"errors", "codec", "redact", "lang", "schemas"}
STATE = {"state"}
DOMAINS = {
    "advise",
    "capture",
    "demo",
    "embed",
    "habits",
    "harness",
    "learn",
    "memory",
    "models",
    "report",  # what habitus did lately (activity), and its HTML and terminal views: reads stores only
    "schedule",
    "select",
}
FRONT = {
    "__main__",
    "checks",
    "cli",
    "commands",
    "dispatch",  # where a parsed command enters its state root (the shared state lock)
    "hookmode",
    "io",
    "launcher",
    "lazygroup",  # the click group that imports a subcommand only when it runs (habitus, habitus eval)
    "mcp",  # the agent's face: an MCP server beside the command line
    "options",
    "render",  # terminal rendering
    "tui",  # habitus review's screen
    "worker",
}

# Arrows that break a rule but live in files this round leaves alone (other work is moving them);
# each is "importing module -> imported module". The list only shrinks.
ALLOWED: set[str] = set()


def node(module: str) -> str:
    return import_graph.package_of(module).removeprefix("habitus.") or "habitus"


def layer(module: str) -> str:
    name = node(module)
    for label, members in (
        ("foundation", FOUNDATION),
        ("state", STATE),
        ("domain", DOMAINS),
        ("front", FRONT),
    ):
        if name in members:
            return label
    return "unknown"


@pytest.fixture(scope="module")
def arrows() -> list[import_graph.Arrow]:
    return import_graph.arrows()


def broken(arrows: list[import_graph.Arrow], source_layer: str, allowed_targets: set[str]) -> list[str]:
    found = []
    for arrow in arrows:
        if layer(arrow.source) != source_layer or node(arrow.target) == "habitus":
            continue
        if layer(arrow.target) not in allowed_targets:
            spelled = f"{arrow.source} -> {arrow.target}"
            if spelled not in ALLOWED:
                found.append(f"{spelled} (line {arrow.line})")
    return sorted(set(found))


def test_every_package_has_a_layer(arrows: list[import_graph.Arrow]) -> None:
    nodes = {node(a.source) for a in arrows} | {node(a.target) for a in arrows}
    assert sorted(n for n in nodes - {"habitus"} if layer(f"habitus.{n}") == "unknown") == []


def test_the_foundation_imports_only_the_foundation(arrows: list[import_graph.Arrow]) -> None:
    assert broken(arrows, "foundation", {"foundation"}) == []


def test_state_imports_no_domain_and_no_command(arrows: list[import_graph.Arrow]) -> None:
    assert broken(arrows, "state", {"foundation", "state"}) == []


def test_no_domain_imports_the_command_line_face(arrows: list[import_graph.Arrow]) -> None:
    assert broken(arrows, "domain", {"foundation", "state", "domain"}) == []


def test_no_package_level_cycle(arrows: list[import_graph.Arrow]) -> None:
    assert import_graph.cycles(import_graph.package_graph(arrows)) == []


def test_no_cycle_among_the_state_modules(arrows: list[import_graph.Arrow]) -> None:
    assert import_graph.cycles(import_graph.module_graph(arrows, "habitus.state")) == []


def test_the_graph_sees_lazy_imports_and_skips_type_checking_ones(tmp_path: Path) -> None:
    """The checks above are only as good as the reader: a lazy import is an arrow, a typing one is not,
    and a cycle through a lazy import is found."""
    package = tmp_path / "habitus"
    (package / "state").mkdir(parents=True)
    (package / "habits").mkdir()
    (package / "__init__.py").write_text("")
    (package / "state" / "__init__.py").write_text("")
    (package / "habits" / "__init__.py").write_text("")
    (package / "state" / "db.py").write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from habitus.habits import rows\n"
        "def f():\n    from habitus.habits import rows\n"
    )
    (package / "habits" / "rows.py").write_text("from habitus.state import db\n")
    found = import_graph.arrows(tmp_path)
    assert {(a.source, a.target, a.lazy) for a in found} == {
        ("habitus.state.db", "habitus.habits.rows", True),
        ("habitus.habits.rows", "habitus.state.db", False),
    }
    assert import_graph.cycles(import_graph.package_graph(found)) == [["habitus.habits", "habitus.state"]]


def test_every_sqlite_connection_is_opened_by_state_db() -> None:
    """One place opens SQLite connections (with their pragmas) and builds `file:` URIs: state/db.py."""
    import re

    source = Path(import_graph.SRC) / "habitus"
    pattern = re.compile(r"sqlite3\.connect\(|[\"']file:[\"']|\?mode=r[ow]")
    found = [
        f"{path.relative_to(source)}:{number}"
        for path in sorted(source.rglob("*.py"))
        if path != source / "state" / "db.py"
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
        if pattern.search(line)
    ]
    assert found == []


def test_embed_is_pure(arrows: list[import_graph.Arrow]) -> None:
    """embed/ embeds text with a given model: which model a root configures, and checking its copies
    under the root, are habitus.models.embedders'."""
    assert sorted({node(a.target) for a in arrows if node(a.source) == "embed"} - {"embed"}) == [
        "codec",
        "errors",
    ]


def _commands() -> list[tuple[str, click.Command]]:
    """Every command and group under `habitus`, by its full name (lazy groups are loaded)."""
    from habitus.cli import root

    found: list[tuple[str, click.Command]] = []

    def walk(command: click.Command, name: str) -> None:
        found.append((name, command))
        if isinstance(command, click.Group):
            ctx = click.Context(command)
            for sub in command.list_commands(ctx):
                child = command.get_command(ctx, sub)
                assert child is not None
                walk(child, f"{name} {sub}")

    walk(root, "habitus")
    return found


def test_every_command_with_a_root_enters_it_where_it_begins() -> None:
    """A command with --root (options.state_options) holds the shared state lock for its run: the
    lock is taken by its class (habitus.dispatch) once its options are parsed. A command added without
    that class would run unlocked under a restore; this test names it."""
    from habitus import dispatch, options

    rooted = [
        (name, command)
        for name, command in _commands()
        if any(p.name == "root" and p.callback is options._root for p in command.params)
    ]
    assert len(rooted) > 50
    assert [name for name, command in rooted if not isinstance(command, dispatch.StateCommand)] == []
    verify = [name for name, command in rooted if isinstance(command, dispatch.ReportCommand)]
    assert verify == ["habitus memory verify", "habitus verify"]


def test_option_decorators_take_no_lock(arrows: list[import_graph.Arrow]) -> None:
    """Option parsing is option parsing: the decorators declare options and wrap nothing."""
    from habitus import options

    def command(**kwargs: object) -> None:
        pass

    for decorator in (options.state_options, options.output_options, options.harness_option):
        assert decorator(command) is command
    imported = {a.target for a in arrows if a.source == "habitus.options"}
    assert imported <= {"habitus.state.root"}


def test_no_command_module_works_on_a_connection_itself() -> None:
    """Commands parse, call domain code and print: no command module imports sqlite3 or the SQLite
    layer, or holds a store's connection (`.conn`, a `conn`); the domain functions do that."""
    import ast

    commands = Path(import_graph.SRC) / "habitus" / "commands"
    found = []
    for path in sorted(commands.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = [f"{node.module}.{alias.name}" for alias in node.names]
            if any(n.split(".")[0] == "sqlite3" or n.startswith("habitus.state.db") for n in names):
                found.append(f"{path.name}:{node.lineno} imports {names}")
            if (isinstance(node, ast.Attribute) and node.attr == "conn") or (
                isinstance(node, ast.Name) and node.id == "conn"
            ):
                found.append(f"{path.name}:{node.lineno} conn")
    assert found == []
