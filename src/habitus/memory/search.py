"""Full-text search text and queries: what goes into FTS5, and how a user's query becomes a MATCH.

The FTS5 table uses the `unicode61` tokenizer with diacritics removed, so case and accents fold
(`CAFÉ` finds `café`) in every script with spaces between words. Scripts written without spaces (Han,
Hiragana, Katakana, Hangul) would otherwise index a whole run as one token; `index_text` spaces those
characters out, and queries get the same treatment as phrases, so `寿司` finds `我喜欢寿司`.

A query as a person types it (`words`): its words are OR-ed and BM25 ranks the records, so a record
that holds more of the rarer words comes first and one missing word never hides a record. Each word
matches its exact form in `body`, and its stems (habitus.lang.terms) in `stems`: "release" finds
"releases", "Datenbank" finds "Datenbanken". A lowercase "or", "and" or "not" is a word like any other.
A word that occurs in no record is also tried as its closest spellings in the store's vocabulary (one
edit for short words, two for long ones: "databse" finds "database"). A chunk that joins words by
punctuation (`node-22`, `v1.2`) also counts as its phrase.

A query that uses FTS5 syntax (upper-case AND, OR, NOT, with parentheses to group them; "phrases";
prefix*; NEAR(...); outside `backticks`) runs as that syntax (`prepare`): each bare word that FTS5
could not parse as one (`node-22`, `c++`, `it's`) becomes a quoted phrase. A query of several lines
is pasted text, searched as plain words whatever it holds. When FTS5 still cannot parse it (`foo
AND`, `(bar OR`), it falls back to the literal search: its words, as above. Neither path ever raises.
"""

from __future__ import annotations

import re
import sqlite3
import unicodedata

from habitus.lang.terms import SPACELESS_CHAR, index_text

# What FTS5 accepts inside a bareword: ASCII letters and digits, underscore, and any non-ASCII character.
_BAREWORD = re.compile(r"^(?:[A-Za-z0-9_]|[^\x00-\x7f])+$")  # negated class: cheap to compile
_KEYWORDS = frozenset({"AND", "OR", "NOT"})
_WORDISH = re.compile(r"\w|[^\x00-\x7f]")


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
    if _BAREWORD.match(core) and not SPACELESS_CHAR.search(core):
        return lead + core + tail
    return lead + _phrase(core) + tail


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


# -- a query as a person types it ------------------------------------------------------------------

_SYNTAX_WORDS = frozenset({"AND", "OR", "NOT"})
_SYNTAX_CHARS = re.compile(r'"|\*(?=\s|$)|(?:^|\s)\^|NEAR\(')
_CODE = re.compile(r"`[^`\n]*`")
MAX_WORDS = 64  # a pasted paragraph is still one bounded query
MAX_FIXES = 2  # closest spellings tried per unknown word


def is_syntax(query: str) -> bool:
    """Whether the query uses FTS5 syntax (see the module doc) rather than plain words: an upper-case
    operator, a "phrase", a prefix* or NEAR(...). A query of more than one line is pasted text (an
    error message with its quotes, a log), never syntax: as syntax its quoted parts would have to occur
    verbatim, and a pasted error never does."""
    if "\n" in query.strip():
        return False
    # Code in backticks is quoted text, and parentheses group only around an operator: a person's aside
    # "(strict mode or something?)" or `malloc(len)` is prose, searched as words and by meaning.
    prose = _CODE.sub(" ", query)
    return bool(_SYNTAX_CHARS.search(prose)) or any(
        chunk.strip("()") in _SYNTAX_WORDS for chunk in prose.split()
    )


def _quoted(token: str) -> str:
    return '"' + token.replace('"', '""') + '"'


def words_match(query: str, conn: sqlite3.Connection | None = None, *, stemmed: bool = True) -> str:
    """The MATCH expression for a plain query (see the module doc); "" when nothing is searchable.
    With a connection, words found nowhere in the store also bring their closest spellings."""
    from habitus.lang import terms

    exact: list[str] = []
    stems: list[str] = []
    tokens: list[str] = []
    for chunk in query.split():
        found = terms.words(chunk)
        if len(found) > 1 and not SPACELESS_CHAR.search(chunk):
            exact.append(_phrase(" ".join(found)))
        tokens += found
    tokens = list(dict.fromkeys(tokens))[:MAX_WORDS]
    if conn is not None:
        tokens += [fix for token in tokens for fix in _spellings(conn, token, stemmed)]
    for token in dict.fromkeys(tokens):
        exact.append(_phrase(token) if SPACELESS_CHAR.search(token) else _quoted(token))
        stems += [_quoted(stem) for stem in terms.stems(token)]
    exact = list(dict.fromkeys(exact))
    if not exact:
        return ""
    if not stemmed:
        return " OR ".join(exact)
    return f"{{body}} : ({' OR '.join(exact)}) OR {{stems}} : ({' OR '.join(dict.fromkeys(stems))})"


def _folded(token: str) -> str:
    """The token as the FTS tokenizer stores it (diacritics removed)."""
    return "".join(c for c in unicodedata.normalize("NFKD", token) if not unicodedata.combining(c))


def _vocabulary(conn: sqlite3.Connection) -> str:
    conn.execute(
        "CREATE VIRTUAL TABLE IF NOT EXISTS temp.memory_terms USING fts5vocab(main, memories_fts, 'col')"
    )
    return "temp.memory_terms"


def _spellings(conn: sqlite3.Connection, token: str, stemmed: bool) -> list[str]:
    """The closest words of the store's vocabulary to a word found nowhere in it (at most MAX_FIXES,
    most frequent first); none for short words, numbers and words the store holds."""
    from habitus.lang import terms

    word = _folded(token)
    if len(word) < 4 or not word.isalpha() or SPACELESS_CHAR.search(word):
        return []
    table = _vocabulary(conn)
    known = conn.execute(f"SELECT 1 FROM {table} WHERE term = ? AND col = 'body' LIMIT 1", (word,)).fetchone()
    if known is None and stemmed:
        probes = [_folded(s) for s in terms.stems(token)]
        known = conn.execute(
            f"SELECT 1 FROM {table} WHERE col = 'stems' AND term IN ({', '.join('?' for _ in probes)}) LIMIT 1",
            probes,
        ).fetchone()
    if known is not None:
        return []
    limit = 1 if len(word) <= 6 else 2
    first = word[0]
    rows = conn.execute(
        f"SELECT term, doc FROM {table} WHERE term >= ? AND term < ? AND col = 'body' "
        "AND length(term) BETWEEN ? AND ?",
        (first, chr(ord(first) + 1), len(word) - limit, len(word) + limit),
    ).fetchall()
    close = [(d, -int(doc), term) for term, doc in rows if (d := _distance(word, term, limit)) <= limit]
    return [term for _, _, term in sorted(close)[:MAX_FIXES]]


def _distance(a: str, b: str, limit: int) -> int:
    """Optimal-string-alignment edit distance (a transposition counts as one edit), or limit + 1 as
    soon as it must exceed limit."""
    if abs(len(a) - len(b)) > limit:
        return limit + 1
    previous2: list[int] = []
    previous = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        current = [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            cost = 0 if a[i - 1] == b[j - 1] else 1
            current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                current[j] = min(current[j], previous2[j - 2] + 1)
        if min(current) > limit:
            return limit + 1
        previous2, previous = previous, current
    return previous[-1]
