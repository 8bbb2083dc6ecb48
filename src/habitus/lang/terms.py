"""Full-text index terms: what the memory FTS index holds for a text (`index_text` for its `body`,
`stem_text` for its `stems`), and what a query's words become. Here, not in habitus.memory, because the
memory store's migrations (habitus.state.memory_store) rebuild the index with the same functions.

A memory's language is not known, and a query of two words says too little to guess it, so every word
is stemmed by each Snowball stemmer of its script and all distinct stems are kept: Latin letters by
the English, German, French, Spanish, Portuguese, Italian and Dutch stemmers, Cyrillic by the Russian
one. "releases", "released" and "releasing" all give `releas`; "Datenbanken" gives `datenbank`. The
same function runs on stored text and on queries, so both sides always agree. Words of other scripts
stay as they are; a run of Chinese, Japanese or Korean characters becomes its character bigrams.

Stemmers load on first use (`snowballstemmer`, running on PyStemmer's C build where it is installed);
stems are cached per word for bulk writes.
"""

from __future__ import annotations

import re
from functools import cache

STEM_VERSION = 1  # bump when `stem_text` changes: `memory verify` then reports fts_mismatch until repair
LATIN = ("english", "german", "french", "spanish", "portuguese", "italian", "dutch")
CYRILLIC = ("russian",)
_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)*")
_CJK = re.compile(r"[\u1100-\u11ff\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]+")
_CYRILLIC = re.compile(r"[\u0400-\u04ff]")
_LATIN = re.compile(r"[A-Za-z\u00c0-\u024f]")
# Characters of scripts written without spaces: the FTS body spaces each out into its own token.
_SPACELESS = (
    "\u1100-\u11ff\u3040-\u30ff\u3100-\u312f\u3130-\u318f\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff"
    "\uac00-\ud7af\uf900-\ufaff\uff66-\uff9f\U00020000-\U0002fa1f"
)
SPACELESS_CHAR = re.compile(f"[{_SPACELESS}]")
_CACHE: dict[str, tuple[str, ...]] = {}
_CACHE_MAX = 200_000


@cache
def _stemmer(language: str):  # type: ignore[no-untyped-def]
    import snowballstemmer

    return snowballstemmer.stemmer(language)


def index_text(content: str) -> str:
    """The text stored in the FTS table for content: CJK characters become separate tokens."""
    if not SPACELESS_CHAR.search(content):
        return content
    return SPACELESS_CHAR.sub(lambda m: f" {m.group(0)} ", content)


def words(text: str) -> list[str]:
    """Lower-cased words of any script (apostrophes inside a word kept); CJK runs as bigrams."""
    out: list[str] = []
    for raw in _WORD.findall(text.lower().replace("’", "'")):
        position = 0
        for run in _CJK.finditer(raw):
            if run.start() > position:
                out.append(raw[position : run.start()])
            chars = run.group(0)
            out.extend([chars] if len(chars) == 1 else [chars[i : i + 2] for i in range(len(chars) - 1)])
            position = run.end()
        if position < len(raw):
            out.append(raw[position:])
    return out


def stems(word: str) -> tuple[str, ...]:
    """The distinct stems of one lower-cased word (see the module doc); the word itself for others."""
    found = _CACHE.get(word)
    if found is not None:
        return found
    base = word[:-2] if word.endswith("'s") else word
    languages = LATIN if _LATIN.search(base) else CYRILLIC if _CYRILLIC.search(base) else ()
    if base.isdigit() or not languages:
        found = (base,)
    else:
        found = tuple(dict.fromkeys(_stemmer(language).stemWord(base) or base for language in languages))
    if len(_CACHE) >= _CACHE_MAX:
        _CACHE.clear()
    _CACHE[word] = found
    return found


def stem_text(content: str) -> str:
    """The `stems` column for content: every word's stems, space-separated, in order."""
    return " ".join(stem for word in words(content) for stem in stems(word))
