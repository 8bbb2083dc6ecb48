"""Rule sentences: one sentence of a human prompt that states a standing rule, said once, often inside a
task request and without any friction marker ("dont forget to branch off main and not the current
branch.", "full schema should not be updated ever, it is a point in time snapshot.", "PR命は英語に").

The local analyzer (habitus.learn.local) splits each prompt's own words (habitus.lang.pasted.own_words)
into sentences in any language (CJK punctuation too), scores them with a logistic classifier over the
packaged multilingual E5 embedding plus a few shape features (`features`), and a sentence at or above the
classifier's threshold starts a candidate worded from that sentence (`directive`). The weights are data
(the "rules" part of habitus.learn.meaning's weights, per E5 fingerprint), trained by
scripts/train_analyze_rules.py on the sentences of the labelled dev sets' prompts.
"""

from __future__ import annotations

import math
import re

from habitus.lang.pasted import own_words
from habitus.learn import foreign
from habitus.learn.text import known_verb

MAX_SENTENCES = 16  # of one prompt: each is embedded, so a long prompt costs a bounded number
MAX_CHARS = 300  # of one sentence: longer is a paragraph of a task, not a rule
_SPLIT = re.compile(r"(?<=[.!?])\s+|(?<=[。！？])\s*|\n+|;\s+|；|(?<=\w)\.{2,}(?=\s*\w)")
_ABBREVIATION = re.compile(r"\b(e\.g|i\.e|etc|vs|cf)\.\s", re.IGNORECASE)
_BULLET = re.compile(r"^\s*(?:[-*•>]+|\d{1,2}[.)])\s+")
_MARKUP = re.compile(r"</?[A-Za-z][\w-]*>")  # "<input>...</input>": a pasted template, not the user's words
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")
_WORD = re.compile(r"\w+")


def sentences(prompt: str) -> list[str]:
    """The prompt's own sentences (pasted text cut off), bullets stripped, at most MAX_SENTENCES."""
    text = _ABBREVIATION.sub(lambda m: m.group(0).replace(". ", ".\u0000"), own_words(prompt))
    out: list[str] = []
    for part in _SPLIT.split(text):
        sentence = _BULLET.sub("", part.replace("\u0000", " ")).strip()
        if not sentence or len(sentence) > MAX_CHARS or _MARKUP.search(sentence):
            continue
        if len(_CJK.findall(sentence)) < 4 and len(_WORD.findall(sentence)) < 2:
            continue
        out.append(sentence)
        if len(out) == MAX_SENTENCES:
            break
    return out


# What a request opens with that is no part of the rule ("ok please", "dont forget to", "make sure to").
# "don't forget to X" asks for X: removing it never inverts, while a bare "don't" stays.
_ASKING = re.compile(
    r"^(?:(?:ok(?:ay)?|yeah|yes|so|and|also|then|but|hmm+|ah|oh|right|great|cool|now|please|pls|btw"
    r"|can you|could you|would you|will you|can we|could we|let'?s|lets|i'?d like you to|i want you to"
    r"|you should|you must|you need to|make sure (?:to |that )?(?:you )?|do ?n'?t forget to|dont forget to"
    r"|remember to|be sure to|ensure (?:that )?(?:you )?)(?=[\s,!.:]|$)[\s,!.:]*)+",
    re.IGNORECASE,
)
_ASKING_TAIL = re.compile(r"[\s,]*\b(?:please|pls|thanks|thank you)\s*[.!?]*\s*$", re.IGNORECASE)
_NEGATION = re.compile(r"^(?:don'?t|dont|do not|never|avoid|no)\b", re.IGNORECASE)
_GENERAL = re.compile(
    r"\b(?:always|never|ever|every|each|whenever|all|any|from now on|in general|going forward|in future)\b",
    re.IGNORECASE,
)
_QUESTION = re.compile(r"[?？]\s*$")
_REPORT = re.compile(
    r"\b(?:i think|i feel|i guess|i'?m|i was|i have|i see|it seems|seems like|looks like|there (?:is|are|was)"
    r"|it (?:is|was)|this is|that is|thats|it'?s)\b",
    re.IGNORECASE,
)
_DEICTIC = re.compile(r"\b(?:this|that|it|these|those|here|above|below)\b", re.IGNORECASE)
_MODAL = re.compile(r"\b(?:should|must|need to|needs to|has to|have to|ought)\b", re.IGNORECASE)
_ASKS = re.compile(
    r"\b(?:please|make sure|dont forget|don'?t forget|remember|be sure|ensure)\b", re.IGNORECASE
)
_CODE = re.compile(r"[`/\\]|\w\.\w|\d")
FEATURES = 13


def features(sentence: str, index: int, count: int) -> list[float]:
    """The sentence's shape beside its embedding: whether it asks (an imperative, a negation, "please"),
    says it holds in general, asks a question, reports ("I think", "it is"), points at the task at hand
    ("this", "that", "it"), names code, is CJK; its length and where it stands in a prompt of `count`."""
    s = sentence.strip()
    bare = _ASKING.sub("", s)
    said = _WORD.findall(bare.lower())
    return [
        1.0 if said and known_verb(said[0]) else 0.0,
        1.0 if _NEGATION.match(bare) else 0.0,
        1.0 if _GENERAL.search(s) else 0.0,
        1.0 if _QUESTION.search(s) else 0.0,
        1.0 if _REPORT.search(s) else 0.0,
        min(3, len(_DEICTIC.findall(s))) / 3,
        1.0 if _MODAL.search(s) else 0.0,
        1.0 if _ASKS.search(s) else 0.0,
        1.0 if _CODE.search(s) else 0.0,
        1.0 if _CJK.search(s) else 0.0,
        math.log1p(len(_WORD.findall(s))),
        1.0 if count == 1 else 0.0,
        index / max(1, count - 1),
    ]


def directive(sentence: str) -> str:
    """The rule in the user's words, for wording: the request's opening ("ok please", "can you", "dont
    forget to") and a closing "please" cut off, the object kept."""
    bare = _ASKING_TAIL.sub("", _ASKING.sub("", sentence.strip())).strip(" ,")
    return bare or sentence.strip()


# A question typed without its mark ("how often do I have to ask for pinned tags"); "when you ..., do ..."
# and "can we ..." ask for something.
_ASKED = re.compile(
    r"^(?:how|why|what|where|who|which|whose|did|does|do (?:you|we|i)|are (?:you|we)|is (?:there|it|this|that)"
    r"|isn'?t|aren'?t|wasn'?t|didn'?t|doesn'?t)\b",
    re.IGNORECASE,
)


def question(sentence: str) -> bool:
    return (
        _QUESTION.search(sentence) is not None or _ASKED.match(_ASKING.sub("", sentence.strip())) is not None
    )


_NEGATED = re.compile(r"^(?:don'?t|dont|do not|never)\s+", re.IGNORECASE)


def wording(sentence: str) -> tuple[str, int]:
    """("Do ..."/"Do not ...", polarity) in the user's words, the whole sentence kept (a label's, a
    reviewer's and select's words are its content words): "dont forget to branch off main and not the
    current branch." -> "Do branch off main and not the current branch."; "never X" -> "Do not X"; a rule
    stated rather than asked ("full schema should not be updated ever", "no verify") is quoted after
    "Do follow this rule:", never turned around."""
    bare = directive(sentence).rstrip(".!;,。！ ")
    negated = _NEGATED.match(bare)
    if negated:
        return f"Do not {bare[negated.end() :]}.", -1
    said = _WORD.findall(bare.lower())
    if len(said) > 1 and said[0] == "always" and _verb(said[1]):  # "always branch off main" asks for it
        bare, said = bare.split(None, 1)[1], said[1:]
    if said and said[0] != "no" and _verb(said[0]):
        return f"Do {bare[:1].lower()}{bare[1:]}.", 1
    return stated(bare)


def stated(rule: str) -> tuple[str, int]:
    """The wording of a rule stated rather than asked, quoted whole so that it is never turned round."""
    return f"Do follow this rule: {rule}.", 1


# Verbs of rules that habitus.learn.text's list (verbs of corrections) lacks.
_RULE_VERBS = frozenset(
    [
        "be",
        "consider",
        "ground",
        "escalate",
        "research",
        "explore",
        "request",
        "evaluate",
        "omit",
        "prefer",
        "avoid",
        "verify",
        "confirm",
        "double-check",
        "reference",
        "cite",
        "compare",
        "match",
        "respect",
        "follow",
        "stick",
        "branch",
        "rebase",
        "squash",
    ]
)
_ASKS_ANYWHERE = re.compile(
    r"\b(?:should|shouldn'?t|must|mustn'?t|need to|needs to|has to|have to|(?:is|are) to|ought to|please"
    r"|(?:i|we) (?:prefer|want|would like|'?d like|do ?n'?t (?:like|want)|never|always|hate|dislike|can'?t stand)"
    r"|make sure|dont forget|don'?t forget|remember to)\b",
    re.IGNORECASE,
)


def asks(sentence: str) -> bool:
    """Whether a sentence is said as a rule is said: it asks (an imperative, "don't", "never", "no X",
    "please", "make sure"), obliges ("should", "must", "are to") or states a wish ("I prefer", "I don't
    like"), or it is in another language (whose moods the embedding reads). A report ("the registry
    basically has a list of types"), an observation ("still reviewing.") or a story is no rule, however
    like one it reads; only such sentences are scored."""
    bare = directive(sentence)
    if foreign.is_foreign(bare):
        return True
    said = _WORD.findall(bare.lower())
    if not said:
        return False
    first = said[0]
    return (
        _verb(first)
        or first in ("no", "never", "always", "dont", "don")
        or _NEGATION.match(bare) is not None
        or _ASKS_ANYWHERE.search(sentence) is not None
    )


def _verb(word: str) -> bool:
    return word in _RULE_VERBS or known_verb(word) is not None
