"""Everyday software-work vocabulary folded to plain words, so that a reworded request meets its condition.

`canonical(text)` rewrites idioms and synonyms the way a colleague would read them: "pull in a library"
-> "add a dependency", "sort it out" -> "fix it", "the build went red" -> "the build fails",
"containerise the API" -> "write a dockerfile for the API". The local judge embeds this rewording next
to the prompt itself and reads object words from it; the prompt the user wrote is never changed.

The lists are general English of software work, written once for this purpose: no habit, case or
condition is named here, and a word with two common senses ("build", "open", "package") is left alone.
Pure standard library.
"""

from __future__ import annotations

import re
from functools import cache

# Idioms -> a plain verb the verb lexicon of `text` knows (longest first; whole words only).
_IDIOMS = {
    "have a read of": "read",
    "have a read through": "read through",
    "give it a read": "read it",
    "put up a": "open a",
    "take a look at": "look at",
    "have a look at": "look at",
    "take a look": "look",
    "have a look": "look",
    "give a once-over": "review",
    "a once-over": "a review",
    "once-over": "review",
    "look over": "review",
    "go over": "review",
    "sanity check": "check",
    "sanity-check": "check",
    "double check": "check",
    "double-check": "check",
    "proofread": "review",
    "pull in": "add",
    "bring in": "add",
    "put in": "add",
    "throw in": "add",
    "put together": "write",
    "throw together": "write",
    "whip up": "write",
    "come up with": "write",
    "jot down": "write",
    "sort out": "fix",
    "sort that out": "fix that",
    "sort it out": "fix it",
    "sort them out": "fix them",
    "straighten out": "fix",
    "deal with": "handle",
    "figure out": "investigate",
    "get to the bottom of": "investigate",
    "track down": "investigate",
    "chase down": "investigate",
    "dig into": "investigate",
    "unbreak": "fix",
    "bring up to date": "upgrade",
    "bring it up to date": "upgrade it",
    "bring them up to date": "upgrade them",
    "get rid of": "delete",
    "nuke": "delete",
    "ditch": "delete",
    "scrap": "delete",
    "throw away": "delete",
    "clear out": "delete",
    "rip out": "delete",
    "cut a release": "release",
    "go live": "release",
    "ship it": "release it",
    "spin off": "create",
    "branch off": "create a branch",
    "containerise": "write a dockerfile for",
    "containerize": "write a dockerfile for",
    "dockerise": "write a dockerfile for",
    "dockerize": "write a dockerfile for",
    "tell the user": "show the user",
    "tell users": "show users",
    "tell people": "show people",
    "git commit": "commit",
    "git branch": "branch",
    "git checkout -b": "create a branch",
    "git switch -c": "create a branch",
}

# Phrases -> the noun a condition would use.
_PHRASES = {
    "npm package": "dependency",
    "npm packages": "dependencies",
    "pip package": "dependency",
    "pip packages": "dependencies",
    "third-party package": "dependency",
    "third-party packages": "dependencies",
    "outdated package": "outdated dependency",
    "outdated packages": "outdated dependencies",
    "race condition": "bug",
    "memory leak": "bug",
    "off-by-one": "bug",
    "null pointer": "bug",
    "merge request": "pull request",
    "merge requests": "pull requests",
    "github actions": "ci",
    "gitlab ci": "ci",
    "ci/cd": "ci",
    "build pipeline": "ci pipeline",
    "commit msg": "commit message",
    "api key": "secret",
    "api keys": "secrets",
    "access token": "secret",
    "print statements": "debug output",
    "print statement": "debug output",
    "trace statements": "debug output",
    "debug prints": "debug output",
    "console.log": "debug output",
    "log lines": "logging",
    "log messages": "logging",
    "schema change": "migration",
    "schema changes": "migrations",
    "alembic revision": "migration",
    "live database": "production database",
    "live db": "production database",
    "live site": "production",
    "live server": "production",
    "test suite": "tests",
    "unit tests": "tests",
    "unit test": "test",
    "both sides modified": "merge conflict",
    "docker image": "dockerfile",
    "container image": "dockerfile",
    "bash script": "shell script",
    "sh script": "shell script",
    "zsh script": "shell script",
    "version number": "version",
    "date and time": "timestamp",
    "notes in the code": "code comments",
    "try/except": "catch exceptions",
    "try/catch": "catch exceptions",
    "try-except": "catch exceptions",
    "try-catch": "catch exceptions",
    "blows up": "throws an exception",
    "blow up": "throw an exception",
    "went red": "fails",
    "goes red": "fails",
    "turned red": "fails",
    "turns red": "fails",
    "red again": "failing again",
    "is red": "fails",
    "are red": "fail",
}

_COLOURS = "red green blue yellow orange purple pink grey gray amber teal cyan magenta violet brown"
_WIDGETS = "button toast banner chip badge modal dialog navbar sidebar tooltip dropdown"

# Single words -> the word a condition would use; a colour name is a colour, a widget a UI component.
_WORDS = {
    "library": "dependency",
    "libraries": "dependencies",
    "lib": "dependency",
    "libs": "dependencies",
    "dep": "dependency",
    "deps": "dependencies",
    "gems": "dependencies",
    "crates": "dependencies",
    "pr": "pull request",
    "prs": "pull requests",
    "mr": "pull request",
    "mrs": "pull requests",
    "pipeline": "ci pipeline",
    "jenkins": "ci",
    "circleci": "ci",
    "travis": "ci",
    "spec": "test",
    "specs": "tests",
    "pytest": "the test run",
    "jest": "the test run",
    "vitest": "the test run",
    "unittest": "the test run",
    "rspec": "the test run",
    "deadlock": "bug",
    "segfault": "bug",
    "defect": "bug",
    "defects": "bugs",
    "regression": "bug",
    "glitch": "bug",
    "db": "database",
    "postgres": "database",
    "postgresql": "database",
    "mysql": "database",
    "mariadb": "database",
    "sqlite": "database",
    "prod": "production",
    "logs": "logging",
    "logger": "logging",
    "docstring": "comment",
    "docstrings": "comments",
    "color": "colour",
    "colors": "colours",
    "palette": "colours",
    "tty": "terminal",
    "tui": "terminal",
    "xterm": "terminal",
    "token": "secret",
    "tokens": "secrets",
    "credential": "secret",
    "credentials": "secrets",
    "password": "secret",
    "passwords": "secrets",
    "datetime": "timestamp",
    "datetimes": "timestamps",
    "docker": "dockerfile",
    "clash": "conflict",
    "clashes": "conflicts",
    "bash": "shell",
    "zsh": "shell",
    "semver": "version",
    "crash": "exception",
    "crashes": "exceptions",
    "crashing": "exception",
    "throws": "raises an exception",
    "traceback": "exception",
}


_WORDS.update({name: f"{name} colour" for name in _COLOURS.split()})
_WORDS.update({name: f"{name} component" for name in _WIDGETS.split()})
_WORDS.update({f"{name}s": f"{name}s components" for name in _WIDGETS.split()})


@cache
def _pattern() -> tuple[re.Pattern[str], dict[str, str]]:
    table = {**_WORDS, **_PHRASES, **_IDIOMS}
    keys = sorted(table, key=len, reverse=True)
    body = "|".join(re.escape(k) for k in keys)
    return re.compile(rf"(?<![\w/.-])(?:{body})(?![\w-])", re.IGNORECASE), table


# "update X to the latest version" -> "upgrade X to the latest version"
_TO_LATEST = re.compile(
    r"\bupdate\b(?=.{0,60}?\bto\s+(?:the\s+)?(?:latest|newest|new|current)\b)", re.IGNORECASE
)
# "give X a review/once-over/look" -> "review X"
_GIVE = re.compile(r"\bgive\s+(.{1,60}?)\s+an?\s+(?:\w+\s+)?(once-over|review|look)\b", re.IGNORECASE)


def canonical(text: str) -> str:
    """Text with idioms and synonyms folded to plain words (lowercase)."""
    pattern, table = _pattern()
    text = _TO_LATEST.sub("upgrade", text)
    text = _GIVE.sub(
        lambda m: f"{'look at' if m.group(2).lower() == 'look' else 'review'} {m.group(1)}", text
    )
    return pattern.sub(lambda m: table[m.group(0).lower()], text.lower())
