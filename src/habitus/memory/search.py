"""Full-text search text and queries: what goes into FTS5, and how a user's query becomes a MATCH.

The FTS5 table uses the `unicode61` tokenizer with diacritics removed, so case and accents fold
(`CAFÉ` finds `café`) in every script with spaces between words. Scripts written without spaces (Han,
Hiragana, Katakana, Hangul) would otherwise index a whole run as one token; `index_text` spaces those
characters out, and queries get the same treatment as phrases, so `寿司` finds `我喜欢寿司`.

Queries use FTS5 syntax (AND, OR, NOT, "phrases", prefix*, NEAR(...)). Before it is tried, each bare
word that FTS5 could not parse as one (`node-22`, `c++`, `v1.2`, `it's`) becomes a quoted phrase, so
hyphenated terms are literal. A query FTS5 still cannot parse (`foo AND`, `(bar`) falls back to a
literal search: every word quoted, all required. Neither path ever raises.
"""

from __future__ import annotations

import re

_CJK = (
    "\u1100-\u11ff\u3040-\u30ff\u3100-\u312f\u3130-\u318f\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff"
    "\uac00-\ud7af\uf900-\ufaff\uff66-\uff9f\U00020000-\U0002fa1f"
)
_CJK_CHAR = re.compile(f"[{_CJK}]")
# What FTS5 accepts inside a bareword: ASCII letters and digits, underscore, and any non-ASCII character.
_BAREWORD = re.compile(r"^(?:[A-Za-z0-9_]|[^\x00-\x7f])+$")  # negated class: cheap to compile
_KEYWORDS = frozenset({"AND", "OR", "NOT"})
_WORDISH = re.compile(r"\w|[^\x00-\x7f]")


def index_text(content: str) -> str:
    """The text stored in the FTS table for content: CJK characters become separate tokens."""
    if not _CJK_CHAR.search(content):
        return content
    return _CJK_CHAR.sub(lambda m: f" {m.group(0)} ", content)


def _phrase(text: str) -> str:
    """text as one FTS5 string (a phrase of its tokens)."""
    return '"' + index_text(text).replace('"', '""') + '"'


def _has_token(text: str) -> bool:
    return bool(_WORDISH.search(text))


def prepare(query: str) -> str:
    """A MATCH expression for a user's query: FTS5 syntax kept, unparseable barewords quoted.

    Returns "" when the query holds nothing searchable (then nothing matches).
    """
    out: list[str] = []
    index, length = 0, len(query)
    while index < length:
        char = query[index]
        if char.isspace():
            index += 1
            continue
        if char == '"':
            end = index + 1
            while end < length:
                if query[end] == '"':
                    if end + 1 < length and query[end + 1] == '"':
                        end += 2
                        continue
                    break
                end += 1
            inner = query[index + 1 : end].replace('""', '"')
            tail = ""
            if end + 1 < length and query[end + 1] == "*":
                tail, end = "*", end + 1
            if _has_token(inner):
                out.append(_phrase(inner) + tail)
            index = end + 1
            continue
        end = index
        while end < length and not query[end].isspace() and query[end] != '"':
            end += 1
        out.append(_bare(query[index:end]))
        index = end
    return " ".join(part for part in out if part)


def _bare(chunk: str) -> str:
    """One whitespace-delimited chunk: keep FTS5 operators around a word, quote the word if needed."""
    if chunk in _KEYWORDS or chunk.startswith("NEAR("):
        return chunk
    lead = re.match(r"^[(^]*", chunk).group(0)  # type: ignore[union-attr]
    rest = chunk[len(lead) :]
    tail = re.search(r"[),*]*$", rest).group(0)  # type: ignore[union-attr]
    core = rest[: len(rest) - len(tail)]
    if not _has_token(core):
        return lead.replace("^", "") + tail.replace("*", "")  # keep only parentheses and commas
    if _BAREWORD.match(core) and not _CJK_CHAR.search(core):
        return lead + core + tail
    return lead + _phrase(core) + tail


def literal(query: str) -> str:
    """The fallback: every whitespace-separated word of query as a quoted phrase, all required."""
    words = [word for word in query.split() if _has_token(word.replace('"', ""))]
    return " ".join(_phrase(word.replace('"', " ")) for word in words)


def is_syntax_error(message: str) -> bool:
    """Whether a sqlite error message is FTS5 refusing the query (not a real database problem)."""
    text = message.lower()
    return (
        text.startswith("fts5:")
        or "syntax error" in text
        or text.startswith("no such column")
        or text.startswith("unknown special query")
        or text.startswith("unterminated string")
    )
