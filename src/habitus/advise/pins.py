"""A dependency added without an exact version, against a habit that asks to pin one.

"Do pin it to an exact version (no ^ or ~)" is among the commonest habits, and its breaking is plain in
what a tool call ran or wrote, in any language of the prose around it: the package managers write a
range unless told otherwise (`npm install x` saves "^1.2.3", `poetry add x` "^1.2.3", `uv add x`
">=1.2.3", `cargo add x` "1.2.3", a caret), and a requirements file's line without `==` pins nothing.
(A written `^` / `~` range is the avoided-phrase reader's: habitus.advise.local.phrase_in.)
"""

from __future__ import annotations

import re
import shlex
from functools import lru_cache
from typing import TYPE_CHECKING

from habitus.lang.words import word_set

if TYPE_CHECKING:
    from collections.abc import Iterable

    from habitus.advise.local import Unit

# A habit that asks for exact versions: "pin it to an exact version", "pinned versions only".
_PINNING = re.compile(
    r"\b(?:exact(?:ly)?\s+(?:version|pin)|pin(?:s|ned|ning)?\b[^.;]*\bversions?\b|--save-exact|-E\b)", re.I
)
_DEPENDENCY = re.compile(
    r"\b(?:dependenc|package|librar|module|crate|gem|requirement|npm|pip|pnpm|yarn|poetry)", re.I
)
# Package managers that add to a manifest: (program, subcommands, flags that pin exactly)
_ADDERS: dict[str, tuple[frozenset[str], frozenset[str]]] = {
    "npm": (frozenset({"install", "i", "add"}), frozenset({"-E", "--save-exact"})),
    "pnpm": (frozenset({"add", "install", "i"}), frozenset({"-E", "--save-exact"})),
    "yarn": (frozenset({"add"}), frozenset({"-E", "--exact"})),
    "bun": (frozenset({"add", "install", "i"}), frozenset({"--exact", "-E"})),
    "poetry": (frozenset({"add"}), frozenset()),
    "uv": (frozenset({"add"}), frozenset()),
    "cargo": (frozenset({"add"}), frozenset()),
}
# Options of those commands that take a value (its value is not a package).
_VALUED = word_set(
    "--group -G --optional --extra --source -p --package --registry --filter --features -F --rename --path "
    "--git --branch --tag --rev --target"
)
# The ecosystem a habit names, if it names one: only that ecosystem's managers count.
_ECOSYSTEMS: tuple[tuple[re.Pattern[str], frozenset[str]], ...] = (
    (
        re.compile(r"\b(?:npm|pnpm|yarn|bun|node|javascript|typescript|package\.json)\b", re.I),
        frozenset({"npm", "pnpm", "yarn", "bun"}),
    ),
    (
        re.compile(r"\b(?:pip|python|poetry|uv|pypi|requirements|pyproject)\b", re.I),
        frozenset({"poetry", "uv", "requirements"}),
    ),
    (re.compile(r"\b(?:cargo|rust|crates?)\b", re.I), frozenset({"cargo"})),
)
_MANIFEST = re.compile(r"(?:^|/)(?:package\.json|pyproject\.toml|cargo\.toml)$")
_SOURCES = word_set("file link portal workspace git git+https git+ssh github gitlab npm http https")
_REQUIREMENTS = re.compile(r"(?:^|/)(?:requirements[\w.-]*|constraints[\w.-]*)\.(?:txt|in)$")


@lru_cache(maxsize=1024)
def managers(condition: str, behaviour: str, polarity: int) -> frozenset[str]:
    """The package managers whose adds a pinning habit covers (empty: not a pinning habit): those of
    the ecosystems it names ("When you add an npm dependency"), or all."""
    text = f"{condition} {behaviour}"
    if polarity < 0 or not _PINNING.search(behaviour) or not _DEPENDENCY.search(text):
        return frozenset()
    named = frozenset().union(*(found for pattern, found in _ECOSYSTEMS if pattern.search(text)))
    return named or frozenset({*_ADDERS, "requirements"})


def _exact(program: str, spec: str) -> bool:
    """Whether a package spec names an exact version for this manager ("x@1.2.3", "x==1.2.3")."""
    if program == "cargo":
        return "@=" in spec
    if program in ("poetry", "uv"):
        return "==" in spec or bool(re.search(r"@\d", spec))
    _name, at, version = spec.rpartition("@") if spec.count("@") > (spec.startswith("@")) else ("", "", "")
    return bool(at) and bool(re.fullmatch(r"\d+\.\d+\.\d+[\w.+-]*", version))


def _ranged_add(command: str, covered: frozenset[str]) -> bool:
    """Whether a command adds a package of a `covered` manager without an exact version (what ran:
    its first line)."""
    from habitus.advise import commands

    for part in commands.executed(command).split(" ; "):
        try:
            words = shlex.split(part)
        except ValueError:
            continue
        if len(words) < 3 or words[0] not in _ADDERS or words[0] not in covered:
            continue
        subcommands, exact_flags = _ADDERS[words[0]]
        if words[1] not in subcommands or any(w in exact_flags for w in words[2:]):
            continue
        specs, skip = [], False
        for word in words[2:]:
            if skip:
                skip = False
            elif word in _VALUED:
                skip = True
            elif not word.startswith("-"):
                specs.append(word)
        # a local or a git source ("./pkg", "file:../pkg", "git+https://...", "workspace:*") has no range
        registry = [s for s in specs if not s.startswith((".", "/")) and s.partition(":")[0] not in _SOURCES]
        if any(not _exact(words[0], spec) for spec in registry):
            return True
    return False


def _bare_requirement(body: str) -> bool:
    """Whether a file-writing call writes a requirements file line that pins nothing ("httpx",
    "httpx>=0.27")."""
    from habitus.advise import commands

    path = commands.written_path(body)
    if not _REQUIREMENTS.search(path.lower()) or commands.is_patch(body):
        return False
    text = body[body.find(path) + len(path) :]
    # one line where a transcript joined the file's lines: a requirement is a word then
    for line in text.splitlines() if "\n" in text.strip() else text.split():
        line = line.strip()
        if line.startswith("+") and not line.startswith("++"):
            line = line[1:].strip()
        elif line.startswith("-"):
            continue
        if not line or line.startswith(("#", "-")) or "==" in line or "@" in line:
            continue
        if re.fullmatch(r"[A-Za-z0-9][\w.\-\[\],]*\s*(?:(?:>=|>|~=|<|<=|!=)[^;#]*)?(?:;.*)?", line):
            return True
    return False


def unpinned(units: Iterable[Unit], covered: frozenset[str]) -> Unit | None:
    """The first new tool call that adds a dependency of a `covered` manager (`managers`) without an
    exact version, unless a later call of the turn writes the manifest (the range pinned by hand)."""
    from habitus.advise import commands

    found: Unit | None = None
    for unit in units:
        if unit.role != "tool" or not unit.new or unit.status in ("refused", "rejected", "error"):
            continue
        name, body = commands.split_call(unit.text)
        kind = commands.kind(name)
        if kind == "write" and found is not None and _MANIFEST.search(commands.written_path(body).lower()):
            found = None
        if found is None and kind == "shell" and _ranged_add(body.split("\n", 1)[0], covered):
            found = unit
        if found is None and kind == "write" and "requirements" in covered and _bare_requirement(body):
            found = unit
    return found
