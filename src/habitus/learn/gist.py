"""The gist of a correction: what the user wants done, for comparing corrections with each other.

Two corrections of the same habit rarely share their words ("you forgot set -euo pipefail, if pg_dump
fails we'd upload an empty file" / "where is set -euo pipefail?? same as the others"): the reasons,
markers, habitual phrases and one-off tails differ, the object stays. `gist` keeps the request and its
object in the user's wording (generalised away from files, paths and versions); `terms` gives its
distinctive word stems and code tokens. The local analyzer embeds gists (not raw sentences) and compares
them with `similarity`, the cosine of the embeddings raised by shared distinctive terms.

Pure standard library (the cosine comes from the caller).
"""

from __future__ import annotations

import re
from functools import lru_cache

from habitus.lang.words import STOP_WORDS, stem, tokens
from habitus.learn import phrasing
from habitus.learn.text import MAX_DIRECTIVE_CHARS, _strip_lead, content_words

# Clauses that give a reason or describe consequences, not the request: dropped from the gist.
_REASON = re.compile(
    r"^(?:so|so that|because|since|otherwise|as|which|if|or else|then|that way|it|it's|its|they|they're"
    r"|there|there's|we|we'd|we'll|we're|i|i'm|i'd|you|you're|he|she|this|that|that's|these|those)\b",
    re.IGNORECASE,
)
_HABITUAL_PHRASE = re.compile(
    r"\b(?:like|as|same as) (?:we|i) (?:always|usually) (?:do|have|did)\b|\bas usual\b|\bas always\b"
    r"|\blike usual\b|\bthe usual\b|\bsame (?:as|like) (?:before|last time|the others?|the rest(?: of [\w -]+)?)"
    r"|\blike (?:the|last|all the) (?:other|others|rest)\b(?: \w+)?|\blike before\b|\blike last time\b"
    r"|\bevery (?:single )?time\b|\beach time\b|\bsame style(?: of)?\b|\bas well\b",
    re.IGNORECASE,
)
_FILLER = re.compile(
    r"\b(?:please|pls|again|also|too|just|really|this time|for me|already|still|now|then|ok|okay)\b",
    re.IGNORECASE,
)
# Words too common in coding requests to say which habit a correction is about.
GENERIC = frozenset(
    [
        "use",
        "used",
        "using",
        "make",
        "made",
        "add",
        "put",
        "do",
        "does",
        "did",
        "done",
        "write",
        "get",
        "set",
        "keep",
        "give",
        "take",
        "run",
        "go",
        "let",
        "want",
        "need",
        "code",
        "file",
        "files",
        "thing",
        "things",
        "stuff",
        "way",
        "part",
        "kind",
        "new",
        "old",
        "good",
        "bad",
        "right",
        "wrong",
        "same",
        "other",
        "others",
        "rest",
        "work",
        "working",
        "change",
        "changes",
        "changed",
        "one",
        "ones",
        "lot",
        "bit",
        "sure",
        "include",
        "includ",
        "every",
        "each",
        "all",
        "any",
        "always",
        "never",
        "agent",
        "user",
        "me",
        "you",
        "it",
        "them",
        "time",
        "times",
        "line",
        "lines",
        "look",
    ]
)
_CODE_TOKEN = re.compile(r"[\w@$%*.+-]*[\w*%$][\w@$%*.+-]*")


def clauses(text: str) -> list[str]:
    return [c.strip() for c in re.split(r"[.;:!?]+\s+|,\s+|\s+-+\s+|[.;:!?]+$", text) if c and c.strip()]


@lru_cache(maxsize=65_536)  # known habits and their notes come back in every batch of a run
def gist(text: str, context: str = "") -> str:
    """The request in `text` without reasons, markers, habitual phrases and fillers, generalised; with
    `context` (what a pronoun object refers to) in front."""
    kept: list[str] = []
    for clause in clauses(phrasing.generalise(text)):
        stripped = _strip_lead(clause)[0]
        if not stripped or (_REASON.match(stripped) and kept):
            continue  # a reason after the request ("..., it freezes the notebook")
        stripped = _HABITUAL_PHRASE.sub(" ", stripped)
        stripped = _FILLER.sub(" ", stripped)
        stripped = re.sub(r"\s{2,}", " ", stripped).strip(" ,.;:-")
        if stripped:
            kept.append(stripped)
    body = ", ".join(kept) or text
    if context:
        body = f"{phrasing.generalise(context)}: {body}"
    return body.lower()[:MAX_DIRECTIVE_CHARS]


@lru_cache(maxsize=65_536)
def terms(text: str) -> frozenset[str]:
    """Distinctive word stems and code tokens ("pipefail", "%w", "--force", "table-driven")."""
    found: set[str] = set()
    for word in content_words(text):
        root = stem(word)
        if word not in GENERIC and root not in GENERIC and len(root) >= 3:
            found.add(root)
    if not text.isascii():  # other scripts and accented words: the language's own stems
        from habitus.lang.language import language_of

        language = language_of(text)
        stop = STOP_WORDS.get(language, frozenset())
        for token in tokens(text):
            if not token.isascii() and token not in stop and len(token) >= 2:
                found.add(stem(token, language))
    for token in _CODE_TOKEN.findall(text):
        if re.search(r"[*%$@]|\w-\w|_", token) and len(token) >= 2:
            found.add(token.lower().strip(".-"))
    return frozenset(found)


def shared(a: frozenset[str], b: frozenset[str]) -> float:
    """How much of the smaller term set the other shares (0..1): the overlap coefficient."""
    if not a or not b:
        return 0.0
    return len(a & b) / min(len(a), len(b))
