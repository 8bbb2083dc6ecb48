"""Print the import graph of src/habitus, from the source alone (stdlib ast; nothing is imported).

    python scripts/import_graph.py              package-level arrows, then cycles
    python scripts/import_graph.py --modules    module-level arrows inside each package, then their cycles

A node is a subpackage (habitus.state) or a top-level module (habitus.cli). Every import counts,
including the ones inside functions (a lazy import is still a dependency); imports under
`if TYPE_CHECKING:` do not, since they never run. tests/test_layers.py reads the same graph.
"""

from __future__ import annotations

import argparse
import ast
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "src"


@dataclass(frozen=True)
class Arrow:
    source: str  # importing module, dotted
    target: str  # imported module, dotted (the longest habitus.* module the import names)
    line: int
    lazy: bool  # inside a function


def module_name(path: Path, src: Path = SRC) -> str:
    parts = list(path.relative_to(src).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _walk(node: ast.AST, in_function: bool) -> Iterator[tuple[ast.AST, bool]]:
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.If) and _type_checking(child.test):
            for other in child.orelse:
                yield from _walk_one(other, in_function)
            continue
        yield from _walk_one(child, in_function)


def _walk_one(node: ast.AST, in_function: bool) -> Iterator[tuple[ast.AST, bool]]:
    yield node, in_function
    inner = in_function or isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda)
    yield from _walk(node, inner)


def arrows(src: Path = SRC, modules: set[str] | None = None) -> list[Arrow]:
    """Every habitus → habitus import in the tree under src."""
    files = sorted((src / "habitus").rglob("*.py"))
    known = modules or {module_name(path, src) for path in files}
    found: list[Arrow] = []
    for path in files:
        name = module_name(path, src)
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        for node, lazy in _walk(tree, False):
            for target in _targets(node, package, known):
                found.append(Arrow(name, target, getattr(node, "lineno", 0), lazy))
    return found


def _targets(node: ast.AST, package: str, known: set[str]) -> Iterable[str]:
    if isinstance(node, ast.Import):
        return [_longest(alias.name, known) for alias in node.names if alias.name.startswith("habitus")]
    if not isinstance(node, ast.ImportFrom):
        return []
    base = node.module or ""
    if node.level:
        anchor = package.split(".")
        anchor = anchor[: len(anchor) - node.level + 1]
        base = ".".join([*anchor, base] if base else anchor)
    if not base.startswith("habitus"):
        return []
    # `from habitus.state import files` names the module habitus.state.files, not the package.
    return [_longest(f"{base}.{alias.name}", known) for alias in node.names]


def _longest(dotted: str, known: set[str]) -> str:
    parts = dotted.split(".")
    while len(parts) > 1 and ".".join(parts) not in known:
        parts.pop()
    return ".".join(parts)


def package_of(module: str) -> str:
    """habitus.state.db -> habitus.state; habitus.cli -> habitus.cli; habitus -> habitus."""
    parts = module.split(".")
    return ".".join(parts[:2])


def is_package(node: str, src: Path = SRC) -> bool:
    return (src / Path(*node.split(".")) / "__init__.py").exists()


def package_graph(found: Iterable[Arrow]) -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for arrow in found:
        source, target = package_of(arrow.source), package_of(arrow.target)
        graph.setdefault(source, set())
        graph.setdefault(target, set())
        if source != target and target != "habitus":
            graph[source].add(target)
    return graph


def module_graph(found: Iterable[Arrow], package: str) -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for arrow in found:
        if package_of(arrow.source) != package or package_of(arrow.target) != package:
            continue
        graph.setdefault(arrow.source, set())
        graph.setdefault(arrow.target, set())
        if arrow.source != arrow.target and arrow.target != package:
            graph[arrow.source].add(arrow.target)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one node (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for succ in sorted(graph.get(node, ())):
            if succ not in index:
                visit(succ)
                low[node] = min(low[node], low[succ])
            elif succ in on_stack:
                low[node] = min(low[node], index[succ])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10000))
    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(found)


def _short(node: str) -> str:
    return node.removeprefix("habitus.")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--modules", action="store_true", help="module-level graph inside each package")
    args = parser.parse_args(argv)
    found = arrows()
    if args.modules:
        packages = sorted({package_of(arrow.source) for arrow in found})
        for package in packages:
            graph = module_graph(found, package)
            for source in sorted(graph):
                for target in sorted(graph[source]):
                    print(f"{_short(source)} -> {_short(target)}")
            for component in cycles(graph):
                print(f"cycle: {' '.join(_short(node) for node in component)}")
        return 0
    graph = package_graph(found)
    for source in sorted(graph):
        targets = " ".join(_short(target) for target in sorted(graph[source]))
        print(f"{_short(source)} -> {targets}" if targets else _short(source))
    components = cycles(graph)
    for component in components:
        print(f"cycle: {' '.join(_short(node) for node in component)}")
    if not components:
        print("no cycle")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
