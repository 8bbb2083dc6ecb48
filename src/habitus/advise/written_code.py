"""Two things written code does that common habits avoid, read line by line without a model:

- a SQL query built from strings ("Do not build queries with string formatting or concatenation; use
  bound parameters"): a line holding SQL in a string that is an f-string, a template literal with
  `${}`, a `+` concatenation, a `%` or `.format` / `Sprintf` formatting;
- a secret or a person's data logged ("Do not log passwords, tokens, API keys or emails"): a logging
  call whose arguments use a value named like one the habit names (`user.email`, `refresh_token`,
  `input.card.number`), not masked, and not only words inside the message.

Only what a file-writing call writes into code counts (not a document, not a line a diff removes).
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import TYPE_CHECKING

from habitus.lang.words import word_set

if TYPE_CHECKING:
    from collections.abc import Iterable

    from habitus.advise.local import Unit

_SQL_HABIT = re.compile(r"\b(?:sql|quer(?:y|ies))\b", re.IGNORECASE)
_BUILDING = re.compile(
    r"\b(?:format\w*|concatenat\w*|f-strings?|interpolat\w*|string[- ]build\w*)", re.IGNORECASE
)
_SQL = re.compile(
    r"\b(?:select\b.{0,200}?\bfrom|insert\s+into|update\s+\w+\s+set|delete\s+from|where\s+\w+\s*(?:=|like|ilike|in)|"
    r"order\s+by)\b",
    re.IGNORECASE,
)

_LOG_HABIT = re.compile(r"\blog(?:s|ged|ging)?\b|\blog (?:lines?|statements?|messages?)", re.IGNORECASE)
_LOG_CALL = re.compile(
    r"\b(?:log(?:ger)?|logging|console|slog|zap|winston|timber|log4j|self\.log(?:ger)?)\.\w+\s*\(|"
    r"\blog::\w+!\s*\(|\bfmt\.(?:print|fprint)\w*\s*\(|\blog\.(?:print|fatal|panic)\w*\s*\(",
    re.IGNORECASE,
)
# Values a habit may name, and the words an identifier uses for them.
_SENSITIVE: dict[str, frozenset[str]] = {
    "email": frozenset({"email", "emails", "mail"}),
    "password": frozenset({"password", "passwords", "passwd", "pwd"}),
    "token": frozenset({"token", "tokens"}),
    "secret": frozenset({"secret", "secrets"}),
    "key": frozenset({"apikey", "api_key", "secretkey", "accesskey"}),
    "card": frozenset({"card", "pan"}),
    "phone": frozenset({"phone", "msisdn"}),
}
_NAMES = re.compile(
    r"\b(emails?|passwords?|tokens?|secrets?|api keys?|card numbers?|cards?|phone(?: numbers?)?)\b", re.I
)
_MASKED = re.compile(
    r"mask|redact|hash|sha\d*|digest|\*\*\*|last4|\[-4:\]|truncat|obfuscat|\.split\(", re.IGNORECASE
)
_STRING = re.compile(r"(?P<q>[\"'`])(?:\\.|(?!(?P=q)).)*(?P=q)")
_INTERPOLATED = re.compile(r"\$\{([^}]*)\}|\{([^}]*)\}|#\{([^}]*)\}")


@lru_cache(maxsize=1024)
def avoids_built_sql(condition: str, behaviour: str, polarity: int) -> bool:
    """Whether a habit avoids SQL built from strings."""
    text = f"{condition} {behaviour}"
    return (
        bool(_SQL_HABIT.search(text))
        and bool(_BUILDING.search(behaviour))
        and (polarity < 0 or bool(re.search(r"\b(?:never|not|no|instead of)\b", behaviour, re.IGNORECASE)))
    )


@lru_cache(maxsize=1024)
def avoided_in_logs(condition: str, behaviour: str, polarity: int) -> frozenset[str]:
    """The identifier words of the values a habit says not to log (empty: not such a habit)."""
    if polarity > 0 or not (_LOG_HABIT.search(condition) or _LOG_HABIT.search(behaviour)):
        return frozenset()
    if not re.search(r"\blog\b", behaviour, re.IGNORECASE):
        return frozenset()
    words: set[str] = set()
    for found in _NAMES.findall(f"{condition} {behaviour}"):
        head = found.lower().split()[0].rstrip("s")
        words |= _SENSITIVE.get("key" if head == "api" else head, frozenset())
    return frozenset(words)


_LITERAL = re.compile(r"(?P<prefix>\b[fFrRbB]{1,2})?(?P<q>[\"'`])(?P<body>(?:\\.|(?!(?P=q)).)*)(?P=q)")
_AFTER_ORDER = re.compile(r"\border\s+by\b", re.IGNORECASE)


def _built(line: str) -> bool:
    """Whether a line builds a string holding SQL from values: the SQL's own literal is an f-string or
    a template literal with a placeholder before any ORDER BY (a sort column from an allow-list is the
    usual way to sort by a column, which cannot be bound), or is concatenated with `+`, formatted with
    `%` or `.format`, or is the format of a `Sprintf` / `String.format` / `format!`."""
    for literal in _LITERAL.finditer(line):
        body = literal.group("body")
        if not _SQL.search(body):
            continue
        order = _AFTER_ORDER.search(body)
        head = body[: order.start()] if order else body
        prefix = (literal.group("prefix") or "").lower()
        if ("f" in prefix and re.search(r"\{[^}]", head)) or (literal.group("q") == "`" and "${" in head):
            return True
        before, after = line[: literal.start()], line[literal.end() :]
        if (re.search(r"\+\s*$", before) and not order) or re.match(r"\s*(?:\+|%\s*[\w(]|\.format\()", after):
            return True
        if re.search(r"\b(?:sprintf|string\.format|format!)\s*\(\s*$", before, re.IGNORECASE) and re.search(
            r"%[sdv]|\{\}", head
        ):
            return True
    return False


def built_sql(units: Iterable[Unit]) -> Unit | None:
    """The first new tool call that writes a SQL query built from strings (`_built`), or None."""
    from habitus.advise import commands

    for unit, line in commands.written_lines(units):
        if _built(line):
            return unit
    return None


# Words that make a named value something else: its domain, its hash, its length, whether it exists.
_REDUCED = word_set(
    "domain hash hashed digest masked mask length len count id ids exists present valid type expires expiry "
    "exp kind last4 prefix suffix"
)


def _sensitive(code: str, words: frozenset[str]) -> bool:
    """Whether code uses a value named by `words`: an identifier ("user.email", "refresh_token",
    "customerEmail", "input.card.number") holds one and no word that reduces it ("emailDomain")."""
    for identifier in re.findall(r"[A-Za-z_][\w.]*", code):
        parts = {
            p.lower()
            for p in re.findall(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+", re.sub(r"[_.]", " ", identifier))
        }
        parts |= {segment.lower() for segment in identifier.split(".")}
        if parts & words and not parts & _REDUCED:
            return True
    return False


def _arguments(text: str, start: int) -> str:
    """The text of a call's arguments from just after its "(" to the matching ")" (a transcript joins a
    file's lines into one, so what follows the call is other code)."""
    depth, quote, i = 1, "", start
    while i < len(text):
        c = text[i]
        if quote:
            if c == "\\":
                i += 1
            elif c == quote:
                quote = ""
        elif c in "\"'`":
            quote = c
        elif c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
            if depth == 0:
                return text[start:i]
        i += 1
    return text[start:]


def logged(words: frozenset[str], units: Iterable[Unit]) -> Unit | None:
    """The first new tool call that writes a logging call whose arguments use a value named by
    `words` (`avoided_in_logs`), unmasked; words inside the message's text do not count, an
    interpolated value (`{user.email}`, `${body.password}`) does."""
    from habitus.advise import commands

    if not words:
        return None
    for unit, line in commands.written_lines(units):
        call = _LOG_CALL.search(line)
        if call is None:
            continue
        args = _arguments(line, call.end())
        if _MASKED.search(args):
            continue
        interpolated = " ".join(
            g
            for m in _INTERPOLATED.finditer(" ".join(s.group(0) for s in _STRING.finditer(args)))
            for g in m.groups()
            if g
        )
        code = _STRING.sub(" ", args) + " " + interpolated
        if _sensitive(code, words):
            return unit
    return None
