"""Small text measures shared by observational memory: one-line forms, tokens, overlap, identifiers.

`similarity` is word-set overlap (Jaccard). `Measure` turns a similarity into the three judgements
reflect and prune make, each with a threshold calibrated for that similarity:

    same(a, b)      a restatement (reflect skips a reflection that restates an existing one)
    related(a, b)   one topic (reflect groups recurring observations into a reflection)
    covers(r, o)    reflection r covers observation o (prune's second pass)

`WORDS` is the word-overlap measure. `habitus.memory.semantic.EmbeddingMeasure` adds the embedding
model's cosine: a pair counts when either the words or the meaning agree.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Iterable, Sequence

_SPACE = re.compile(r"\s+")
_WORD = re.compile(r"[\w']+", re.UNICODE)
# Things a summary must not lose: paths, hashes, error codes, versions, URLs, issue numbers.
_IDENTIFIER = re.compile(
    r"(?:[\w.-]*/[\w./-]+|\b[0-9a-f]{7,40}\b|\b[A-Z]{2,}[-_]?\d+\b|\bv?\d+\.\d+(?:\.\d+)?\b|https?://\S+|#\d+\b)"
)

Similarity = Callable[[str, str], float]
COMMON = 64  # a word in more sets than this proposes no pairs (see similar_pairs)


def one_line(text: str) -> str:
    return _SPACE.sub(" ", text).strip()


def clip(text: str, limit: int) -> str:
    """text cut at a word boundary to at most limit characters, with an ellipsis when cut."""
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    space = cut.rfind(" ")
    if space > limit // 2:
        cut = cut[:space]
    return cut.rstrip(" ,;:") + "…"


def normal(text: str) -> str:
    """The comparison form: lowercase words joined by single spaces."""
    return " ".join(_WORD.findall(text.lower()))


def words(text: str) -> set[str]:
    return set(_WORD.findall(text.lower()))


def similarity(a: str, b: str) -> float:
    left, right = words(a), words(b)
    if not left or not right:
        return 0.0
    return len(left & right) / len(left | right)


def tokens(text: str) -> int:
    """Estimated model tokens of text (ceil(chars / 4), the usual rule of thumb)."""
    return math.ceil(len(text) / 4)


def has_identifier(text: str) -> bool:
    return bool(_IDENTIFIER.search(text))


def similar_pairs(sets: Sequence[set[str]], threshold: float) -> list[set[int]]:
    """For each i, the j != i whose word sets overlap by at least threshold (Jaccard), without comparing
    every pair: two sets that similar share a word among the rarest `n - ceil(threshold * n) + 1` of
    each (prefix filtering), so only sets sharing such a word are compared. Words found in more than
    COMMON sets propose no pairs, so the work stays linear in the number of sets: a pair whose shared
    prefix words are all that common is missed, unless the two sets are equal (an exact repeat is
    paired with the first set of its words, which is all that grouping and deduplication need)."""
    frequency = Counter(word for words_ in sets for word in words_)
    index: dict[str, list[int]] = {}
    first: dict[frozenset[str], int] = {}
    out: list[set[int]] = [set() for _ in sets]
    for i, words_ in enumerate(sets):
        if not words_:
            continue
        head = first.setdefault(frozenset(words_), i)
        if head != i:
            out[i].add(head)
            out[head].add(i)
        ordered = sorted(words_, key=lambda w: (frequency[w], w))
        prefix = ordered[: len(ordered) - math.ceil(threshold * len(ordered) - 1e-9) + 1]
        prefix = [word for word in prefix if frequency[word] <= COMMON]
        candidates = {j for word in prefix for j in index.get(word, ())} - out[i]
        low, high = threshold * len(words_), len(words_) / threshold if threshold else float("inf")
        for j in candidates:
            if not low - 1e-9 <= len(sets[j]) <= high + 1e-9:
                continue  # sizes too far apart for the overlap to reach the threshold
            shared = len(words_ & sets[j])
            if shared >= threshold * (len(words_) + len(sets[j]) - shared) - 1e-9:
                out[i].add(j)
                out[j].add(i)
        for word in prefix:
            index.setdefault(word, []).append(i)
    return out


class Measure:
    """Word overlap with its thresholds; subclasses may add a similarity (see the module doc).

    `neighbours(texts, judgement)` answers `same` or `related` for every pair of a list at once, in
    time near-linear in the list (reflect's grouping and deduplication use it on large streams)."""

    name = "words"
    SAME = 0.8
    RELATED = 0.6
    COVERS = 0.5

    def prime(self, texts: Iterable[str]) -> None:
        """Prepare for comparing these texts (an embedding measure embeds them in one batch)."""

    def same(self, a: str, b: str) -> bool:
        return similarity(a, b) >= self.SAME

    def related(self, a: str, b: str) -> bool:
        return similarity(a, b) >= self.RELATED

    def covers(self, reflection: str, observation: str) -> bool:
        return similarity(reflection, observation) >= self.COVERS

    def neighbours(self, texts: Sequence[str], judgement: str) -> list[set[int]]:
        """For each text, the indexes of the other texts it is `judgement` (same / related) to."""
        threshold = self.SAME if judgement == "same" else self.RELATED
        return similar_pairs([words(t) for t in texts], threshold)


WORDS = Measure()
