"""What a do-habit asks for by name, and whether a turn shows it.

Many habits ask for a named thing: a file to update in the same change ("Do add an entry to
CHANGELOG.md", "update api/openapi.yaml", "put the string in src/locales/*.json"), a command to run
("Do run ruff check and mypy", "run gofmt and go vet") or a line to write ("start it with set -euo
pipefail"). Whether the turn holds that thing can be read without a model, in any language of the
prose around it, because files, commands and code are not translated:

- shown: a tool call of the turn touches the file (its path, or a command naming it), runs the command
  or writes the line;
- mentioned: only the agent's prose names it ("CHANGELOG.md already has this entry"), or a tool call
  that could hold it was cut short: unknown;
- absent: nothing of the agent's work names it.

The reviewer uses this twice (habitus.advise.local.review): a shown thing means the behaviour was done,
so no note; an absent one means the behaviour is missing, so the habit's situation alone decides.
"""

from __future__ import annotations

import re
from fnmatch import fnmatchcase
from functools import lru_cache
from typing import TYPE_CHECKING, NamedTuple

from habitus.lang.words import word_set

if TYPE_CHECKING:
    from collections.abc import Iterable

    from habitus.advise.local import Unit

SHOWN, MENTIONED, ABSENT = "shown", "mentioned", "absent"

# The clause of a do-habit that says what to avoid starts here; what it names is not asked for.
_AVOIDED = re.compile(r"\b(?:never|instead of|rather than|not|no|without|unless|except)\b", re.IGNORECASE)
# A file: a path ("api/openapi.yaml", "src/locales/*.json") or a name with an extension
# ("CHANGELOG.md", ".env.example", "Component.stories.tsx"); not a call ("t()", "datetime.now()"),
# "e.g." or a version ("3.1.0").
_FILE = re.compile(
    r"(?<![\w/.*-])((?:[\w*-]+/)*[\w*-]*\.[A-Za-z][\w-]{0,11}(?:\.[A-Za-z]\w{0,7})?)(?![\w(/-])"
)
_NOT_FILES = frozenset({"e.g", "i.e", "etc"})
# A command after "run" / "execute": up to where the sentence goes on about something else.
_RUN = re.compile(r"\b(?:run|execute)\s+(.+?)(?=[.;:!?]|$|\b(?:before|after|on|against|over|to|in|for|"
                  r"then|until|when|once|so|and (?:report|say|tell|show|fix|give|paste|include|mention)))",
                  re.IGNORECASE)  # fmt: skip
_COMMAND_SPLIT = re.compile(r",|\band\b|\bor\b|/|\bplus\b", re.IGNORECASE)
# Programs whose first word alone says little ("go vet", not "go"; "npm audit", not "npm").
_RUNNERS = word_set(
    "go npm pnpm yarn npx bun deno cargo uv uvx poetry pipenv pip python python3 dotnet mix bundle make "
    "terraform docker kubectl git gradle mvn swift flutter dart php composer"
)
# Words after "run" that are not a program ("run the full test suite", "run it", "run them all").
_NOT_PROGRAMS = word_set(
    "the a an it them this that those these all every each full whole entire test tests suite linter "
    "linters formatter formatters checks check lint build builds migrations migration script scripts "
    "command commands tool tools locally again something anything everything"
)
# A line to write: a run of words holding a flag ("set -euo pipefail").
_LINE = re.compile(r"\b([a-z]\w*\s+-[a-z]{2,}\b(?:\s+[a-z]\w*)?)")


class Asked(NamedTuple):
    """What a do-habit names as its behaviour."""

    files: tuple[str, ...] = ()  # lower-case paths or patterns
    commands: tuple[str, ...] = ()  # lower-case, one or two words
    lines: tuple[str, ...] = ()  # lower-case code to write

    def __bool__(self) -> bool:
        return bool(self.files or self.commands or self.lines)


@lru_cache(maxsize=1024)
def asked(behaviour: str, polarity: int) -> Asked:
    """The files, commands and lines a do-habit's behaviour asks for, read from the clause before any
    "never" / "instead of" / "not" (an avoid-habit asks for nothing by name here)."""
    if polarity < 0:
        return Asked()
    body = re.sub(r"^\s*do\b", "", behaviour.strip(), flags=re.IGNORECASE)
    head = _AVOIDED.split(body, maxsplit=1)[0]
    files = []
    for match in _FILE.finditer(head):
        name = match.group(1).rstrip(".")
        if name.lower().strip(".") in _NOT_FILES or re.fullmatch(r"[\d.]+", name) or "." not in name:
            continue
        base = name.rsplit("/", 1)[-1]
        if base.startswith("."):  # ".env.example", ".stories.tsx": that name or that ending
            name = name[: len(name) - len(base)] + "*" + base
        elif base[:1].isupper() and base.count(".") >= 2:  # "Component.stories.tsx": a placeholder
            name = name[: len(name) - len(base)] + "*." + base.partition(".")[2]
        files.append(name.lower())
    commands = []
    for run in _RUN.finditer(head):
        for piece in _COMMAND_SPLIT.split(run.group(1)):
            words = [w for w in re.findall(r"[\w.+-]+", piece.lower()) if not w.startswith("-")]
            if not words or words[0] in _NOT_PROGRAMS or not any(c.isalpha() for c in words[0]):
                continue
            commands.append(" ".join(words[:2]) if words[0] in _RUNNERS and len(words) > 1 else words[0])
    lines = [m.group(1).lower() for m in _LINE.finditer(head.lower())]
    return Asked(tuple(dict.fromkeys(files)), tuple(dict.fromkeys(commands)), tuple(dict.fromkeys(lines)))


def _names_file(text: str, pattern: str) -> bool:
    """Whether `text` names a file matching `pattern`: the same path or name, or, for a pattern with a
    placeholder name ("Component.stories.tsx") or a glob ("src/locales/*.json"), a matching one."""
    for token in re.findall(r"[\w./*@~+-]+", text):
        token = token.rstrip(".").lower()
        if not token:
            continue
        if "*" in pattern:
            if fnmatchcase(token, pattern) or fnmatchcase(token, "*/" + pattern.lstrip("/")):
                return True
            continue
        if token == pattern or token.endswith("/" + pattern.lstrip("/")):
            return True
        if "/" not in pattern and token.rsplit("/", 1)[-1] == pattern:
            return True
    return False


def _has_command(text: str, command: str) -> bool:
    return re.search(rf"(?<![\w-]){re.escape(command)}(?![\w-])", text) is not None


_REDIRECT = re.compile(r">>?\s*([\w./~-]+)|\btee\s+(?:-a\s+)?([\w./~-]+)")


def state(thing: Asked, units: Iterable[Unit]) -> str:
    """SHOWN when a tool call of the turn (new or earlier) touches a named file, runs a named command or
    writes a named line; MENTIONED when only the agent's prose or a file's text names one, or a call that
    could hold one was cut short; ABSENT otherwise. A call the user rejected or refused never ran."""
    from habitus.advise import commands
    from habitus.advise.local import cut_short

    mentioned = False
    for unit in units:
        if unit.role == "user":
            continue
        if unit.role == "tool" and unit.status in ("refused", "rejected"):
            continue  # it never ran
        text = unit.lowered or unit.text.lower()
        if unit.role == "tool":
            name, body = commands.split_call(unit.text)
            shell = commands.kind(name) == "shell"
            # A call cut short (a long command, a long file) may hold the thing past the cut: unknown.
            # A written file's path comes first, so a cut file still shows which file it is.
            if cut_short(unit.text) and (
                (shell and (thing.commands or thing.files)) or (not shell and thing.lines)
            ):
                mentioned = True
            acted = commands.executed(body.split("\n", 1)[0]).lower() if shell else ""
            # what a call touched: the file it writes, or what its command runs
            first = body.split("\n", 1)[0]
            redirected = [target for pair in _REDIRECT.findall(first) for target in pair if target]
            touched = (
                " ".join([acted, *redirected])
                if shell
                else " ".join(commands.written_paths(body))
                if commands.kind(name) == "write"
                else ""
            )
            if any(_names_file(touched, f) for f in thing.files):
                return SHOWN
            if shell and any(_has_command(acted, c) for c in thing.commands):
                return SHOWN
            if not shell and any(line in text for line in thing.lines):
                return SHOWN
        if (
            any(_names_file(text, f) for f in thing.files)
            or any(_has_command(text, c) for c in thing.commands)
            or any(line in text for line in thing.lines)
        ):
            mentioned = True
    return MENTIONED if mentioned else ABSENT


# Where a condition says the work happens, read as files: a language or kind of file ("Go code",
# "a new bash script", "a Dockerfile") and a folder ("under backend/", "in packages/ui").
_KINDS: tuple[tuple[re.Pattern[str], tuple[str, ...]], ...] = tuple(
    (re.compile(rf"\b(?:{words})\b", re.IGNORECASE), suffixes)
    for words, suffixes in (
        (r"go code|go files?|golang", (".go",)),
        (r"python code|python files?|python modules?", (".py",)),
        (r"(?:bash|shell|sh) scripts?", (".sh", ".bash")),
        (r"dockerfiles?", ("dockerfile",)),
        (r"react components?", (".tsx", ".jsx")),
        (r"typescript code|typescript files?", (".ts", ".tsx")),
        (r"javascript code|javascript files?", (".js", ".jsx", ".mjs", ".cjs")),
        (r"rust code|rust files?", (".rs",)),
        (r"java code|java files?|java classes", (".java",)),
        (r"kotlin code|kotlin files?", (".kt", ".kts")),
        (r"swift code|swift files?", (".swift",)),
        (r"ruby code|ruby files?", (".rb",)),
        (r"php code|php files?", (".php",)),
        (r"c# code|\.net code", (".cs",)),
        (r"terraform code|terraform files?", (".tf",)),
        (r"sql files?", (".sql",)),
        (r"\.proto files?", (".proto",)),
        (r"(?:ci|github actions?) workflows?|workflow files?", (".github/workflows/",)),
    )
)
_FOLDER = re.compile(r"(?<![\w./-])((?:[\w-]+/)+[\w-]*)")
_NEW = re.compile(r"\b(?:new|create|creating|created|add|adding|added)\b", re.IGNORECASE)
# Tools that create a file (a Claude Code `Write` also overwrites one: the caller asks for a new path
# only where the condition says "new").
_CREATING = frozenset({"write", "create_file", "write_file", "create"})


class Where(NamedTuple):
    """Where a condition's work happens, as files (`where`)."""

    kinds: tuple[tuple[str, ...], ...] = ()  # suffixes per kind named ((".sh", ".bash"),)
    folders: tuple[str, ...] = ()  # lower-case folders ("backend/", "packages/ui/")
    new: bool = False  # the condition is about a new file ("a new bash script")

    def __bool__(self) -> bool:
        return bool(self.kinds or self.folders)


@lru_cache(maxsize=1024)
def where(condition: str) -> Where:
    """The kinds of file and the folders a condition names ("When you've changed Python code under
    backend/" -> .py files under backend/)."""
    kinds = tuple(suffixes for pattern, suffixes in _KINDS if pattern.search(condition))
    folders = tuple(
        dict.fromkeys(
            m.group(1).lower().rstrip("/") + "/"
            for m in _FOLDER.finditer(condition)
            if not m.group(1).lower().startswith(("e.g", "i.e", "and/", "or/"))
        )
    )
    return Where(kinds, folders, bool(kinds) and bool(_NEW.search(condition)))


def _path_matches(path: str, place: Where) -> bool:
    path = path.lower().strip("`'\",:")
    name = path.rsplit("/", 1)[-1]
    if place.kinds and not any(
        (name == suffix or name.startswith(suffix + ".") or name.endswith(suffix))
        if not suffix.endswith("/")
        else suffix in path
        for suffixes in place.kinds
        for suffix in suffixes
    ):
        return False
    return not place.folders or any(("/" + path).find("/" + folder) >= 0 for folder in place.folders)


def edited_in(place: Where, units: Iterable[Unit], creating: bool = False) -> Unit | None:
    """The newest new tool call that writes a file of the condition's kind and folder (a tool that
    creates one where the condition says "new", or with `creating`), or None."""
    from habitus.advise import commands

    found = None
    for unit, name, body in commands.new_calls(units, "write"):
        if (place.new or creating) and name.lower().rsplit("__", 1)[-1] not in _CREATING:
            continue
        if any(_path_matches(path, place) for path in commands.written_paths(body)):
            found = unit
    return found


# An avoided edit: "Do not edit the vendored files", "Do not hand-edit it", "instead of editing schema.sql".
_EDITING = re.compile(r"\b(?:hand[- ]?edit|edit|modify|touch|patch|change)\w*", re.IGNORECASE)
_AVOIDING = re.compile(r"^\s*(?:do\s+not|don't|never|avoid)\b", re.IGNORECASE)


@lru_cache(maxsize=1024)
def avoided_paths(condition: str, behaviour: str, polarity: int) -> tuple[str, ...]:
    """The files and folders a habit says not to edit (lower-case; a folder ends with "/", a pattern
    holds "*"): named in its condition or its avoided clause, when that clause avoids editing."""
    body = behaviour.strip()
    if polarity < 0:
        clause = re.split(r"[;:]|\binstead\b|\brather\b", _AVOIDING.sub("", body), maxsplit=1)[0]
        named_in = f"{condition} {clause}"
    else:
        split = re.search(r"\b(?:never|instead of|rather than)\b", body, re.IGNORECASE)
        clause = body[split.end() :] if split else ""
        named_in = clause
    if not _EDITING.search(clause):
        return ()
    found = [m.group(1).lower() for m in _FILE.finditer(named_in) if not re.fullmatch(r"[\d.]+", m.group(1))]
    found += [m.group(1).lower().rstrip("/") + "/" for m in _FOLDER.finditer(named_in)]
    return tuple(dict.fromkeys(f for f in found if f.strip(".").lower() not in _NOT_FILES))


def _in_place(path: str, pattern: str) -> bool:
    path = path.lower().strip("`'\",:")
    if pattern.endswith("/"):
        return ("/" + path).find("/" + pattern) >= 0
    name = path.rsplit("/", 1)[-1]
    if "*" in pattern:
        return fnmatchcase(name, pattern.rsplit("/", 1)[-1]) and (
            "/" not in pattern or fnmatchcase(path, "*" + pattern) or fnmatchcase(path, pattern)
        )
    return path == pattern or path.endswith("/" + pattern) or ("/" not in pattern and name == pattern)


def edit_to(patterns: tuple[str, ...], units: Iterable[Unit]) -> Unit | None:
    """The first new tool call that writes a file in one of `patterns` (`avoided_paths`), or None."""
    from habitus.advise import commands

    for unit, _, body in commands.new_calls(units, "write"):
        if any(_in_place(path, p) for path in commands.written_paths(body) for p in patterns):
            return unit
    return None
