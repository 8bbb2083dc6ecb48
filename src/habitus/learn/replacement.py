"""Corrections that swap one thing for another: "ugh, yarn again. bun.", "not npm, pnpm", "pytest
statt unittest", "またyarn。bunを使って".

Such a correction names what the user does not want (X, usually what the agent just did) and what
they want instead (Y), often without a verb and in any language. Read word by word it is easy to turn
around ("yarn again" -> "Do use yarn again"), so it is recognised as a whole, before the sentence
reader sees it, and always worded "use Y, not X": the wanted thing first, the unwanted one negated.

Shapes, with the marker words of English, German, Spanish, French, Portuguese, Italian, Russian,
Japanese and Chinese:

    X again[?!.] [use] Y          again X[?!.] [use] Y        (X named in the agent's last reply)
    no/not X, [use] Y             Y, not X        Y instead of X        X じゃなくて Y     不要X，用Y

X and Y are short (a tool, a library, a style: at most four words each); a longer clause is a sentence
for the ordinary reader. Pure standard library.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_TERM = r"[^\s,.;:!?。、，！？；：][^,.;:!?。、，！？；：]{0,40}?"
_END = r"[\s,.;:!?。、，！？；：…]*"
_SEP = r"(?:[\s]*[,.;:!?。、，！？；：…]+[\s]*|\s+-+\s+)"
_SPACE = r"(?:[\s]*[,.;:!?。、，！？；：…]+[\s]*|\s+-+\s+|\s+)"  # also a bare space

AGAIN = (
    r"again|once again|yet again|wieder|schon wieder|nochmal|otra vez|de nuevo|encore|à nouveau|de nouveau"
    r"|de novo|outra vez|novamente|di nuovo|ancora|опять|снова|又是|又|また"
)
NOT = r"not|no|nicht|kein|keine|keinen|nein|pas|non|não|nao|нет|не|别|不要|不用|不是"
INSTEAD = (
    r"instead of|rather than|in place of|statt|anstatt|anstelle von|en lugar de|en vez de|au lieu de"
    r"|plutôt que|em vez de|ao invés de|em lugar de|invece di|вместо"
)
USE = (
    r"use|switch to|go with|with|nimm|benutze|benutz|verwende|nutze|usa|utiliza|usar|utilise|utilisez"
    r"|prends|passe à|utilize|uses|используй|возьми|бери|用|使用|改用|换成|换用"
)
_POLITE = (
    r"please|pls|bitte|por favor|s'il te plaît|s'il vous plaît|stp|svp|per favore|пожалуйста|ください"
    r"|お願い|お願いします|请|吧|thanks|danke|gracias|merci|obrigado|obrigada|спасибо"
)
_INTERJECTIONS = (
    r"ugh+|argh+|omg|omfg|wtf|ffs|dude|man|oh|ah|hmm+|seriously|sigh|come on|mein gott|mon dieu"
    r"|nossa|блин|はぁ|哎|唉|ok(?:ay)?|so|well|no+|nope|nah|wrong|nein|non|não|нет|いや|違う|不对|不"
)
_LEAD = r"(?:(?:" + _INTERJECTIONS + r")" + _SEP + r")*"
_JA_USE = r"(?:を|で)?(?:使って|使う|使え|にして|にしろ)"
_ZH_USE = r"(?:用|使用|改用|换成|换用)"

_FLAGS = re.IGNORECASE | re.UNICODE


def _compile(pattern: str) -> re.Pattern[str]:
    return re.compile(r"^\s*" + _LEAD + pattern + _END + r"$", _FLAGS)


_TAIL = rf"(?:{_SPACE}(?:{_POLITE}))?"
_SHAPES: list[tuple[re.Pattern[str], bool | None]] = [
    # (pattern with groups x and y; True: X must be something the agent's last reply named; None: named,
    # or Y introduced by a verb of use; False: the shape says it all)
    (
        _compile(
            rf"(?P<x>{_TERM})\s*(?:{AGAIN}){_SEP}(?:(?:{USE})\s+)?(?P<y>{_TERM})(?:\s*{_JA_USE})?{_TAIL}"
        ),
        True,
    ),
    (
        _compile(
            rf"(?:{AGAIN})\s*(?P<x>{_TERM}){_SEP}(?:(?:{USE})\s*)?(?P<y>{_TERM})(?:\s*{_JA_USE})?{_TAIL}"
        ),
        True,
    ),
    # "no X, Y" is also "no funciona, arreglalo" ("it does not work, fix it"): hence None.
    (_compile(rf"(?:{NOT})\s+(?P<x>{_TERM}){_SEP}(?:(?P<use>{USE})\s+)?(?P<y>{_TERM}){_TAIL}"), None),
    (_compile(rf"(?P<x>{_TERM})\s+(?:{NOT}){_SEP}(?:(?P<use>{USE})\s+)?(?P<y>{_TERM}){_TAIL}"), None),
    (
        _compile(
            rf"(?:(?:{USE})\s+)?(?P<y>{_TERM}){_SEP}(?:{_POLITE}{_SPACE})?(?:and\s+|und\s+|y\s+|et\s+|e\s+|и\s+)?"
            rf"(?:{NOT})\s+(?P<x>{_TERM}){_TAIL}"
        ),
        False,
    ),
    (_compile(rf"(?:(?:{USE})\s+)?(?P<y>{_TERM})\s+(?:{INSTEAD})\s+(?P<x>{_TERM}){_TAIL}"), False),
    (_compile(rf"(?:{INSTEAD})\s+(?P<x>{_TERM}){_SEP}(?:(?:{USE})\s+)?(?P<y>{_TERM}){_TAIL}"), False),
    # Japanese and Chinese: "yarnじゃなくてbun", "yarnではなくbunを使って", "不要用yarn，用bun", "用bun，不要用yarn"
    (
        _compile(
            rf"(?P<x>{_TERM})\s*(?:じゃなくて|ではなく|じゃなく|の代わりに)\s*(?P<y>{_TERM})(?:\s*{_JA_USE})?{_TAIL}"
        ),
        False,
    ),
    (
        _compile(
            rf"(?:{_ZH_USE})?(?P<y>{_TERM})\s*(?:，|,)?\s*(?:而不是|不要用|不要|别用|不用)\s*(?P<x>{_TERM})"
        ),
        False,
    ),
    (
        _compile(
            rf"(?:不要|别|不用|不是)(?:{_ZH_USE})?\s*(?P<x>{_TERM}){_SEP}(?:{_ZH_USE}|是)\s*(?P<y>{_TERM}){_TAIL}"
        ),
        False,
    ),
]

_MARKER_WORDS = re.compile(rf"^(?:{AGAIN}|{NOT}|{INSTEAD}|{USE}|{_POLITE})$", _FLAGS)
_ARTICLE = re.compile(
    r"^(?:the|a|an|der|die|das|den|el|la|los|las|le|les|un|une|o|os|as|il|lo)\s+", re.IGNORECASE
)
MAX_TERM_WORDS = 4
MAX_MESSAGE_CHARS = 120


@dataclass(frozen=True)
class Replacement:
    wanted: str
    unwanted: str
    again: bool  # "X again": the agent repeated something unwanted

    @property
    def text(self) -> str:
        return f"use {self.wanted}, not {self.unwanted}"


_BUT = re.compile(r"^(?:but|aber|sondern|pero|sino|mais|mas|ma|а|но)\s+", re.IGNORECASE)
_POLITE_WORD = re.compile(rf"(?:^|\s+)(?:{_POLITE})(?=\s|$)", _FLAGS)
# Words that name no thing: "not sure, maybe later", "not now, later", "no idea, you pick".
_NOTHING = frozenset(
    [
        "sure",
        "really",
        "yet",
        "now",
        "later",
        "maybe",
        "idea",
        "problem",
        "worries",
        "way",
        "need",
        "it",
        "this",
        "that",
        "them",
        "those",
        "these",
        "one",
        "ones",
        "all",
        "everything",
        "something",
        "anything",
        "nothing",
        "here",
        "there",
        "so",
        "too",
        "just",
        "only",
        "ok",
        "okay",
        "yes",
    ]
)


_INTERJECTION = re.compile(r"^(?:" + _INTERJECTIONS + r")$", _FLAGS)


def _term(raw: str) -> str | None:
    term = _ARTICLE.sub("", _BUT.sub("", raw.strip(" \t'\"`“”‘’「」（）()")))
    term = _POLITE_WORD.sub("", term)
    term = re.sub(rf"\s*{_JA_USE}$", "", term)
    term = re.sub(r"^(?:を|で)|(?:を|で)$", "", term).strip()
    words = term.split()
    if not term or len(words) > MAX_TERM_WORDS or _MARKER_WORDS.match(term):
        return None
    if _MARKER_WORDS.match(words[0]) or words[0].lower() in _NOTHING or words[-1].lower() in _NOTHING:
        return None  # "no need", "not sure", "just the top": not a thing
    if _INTERJECTION.match(term) or re.search(r"直接|不要|别|必ず|絶対|しないで", term):
        return None  # "不对" is "wrong", "直接推送到main" a request: for the sentence readers
    if not re.search(r"[^\W\d_]", term):
        return None  # a number or punctuation names nothing
    return term


def _named(term: str, before: str) -> bool:
    return bool(before) and term.lower() in before.lower()


def _verb_led(term: str) -> bool:
    from habitus.learn.text import known_verb, words

    found = words(term)
    return bool(found) and found[0] != "use" and known_verb(found[0]) is not None and len(found) > 1


def find(message: str, before: str = "") -> Replacement | None:
    """The swap a short correction asks for, or None. `before` is the agent's previous reply: an
    "X again" names something it just did."""
    text = re.sub(r"\s+", " ", message).strip()
    if not text or len(text) > MAX_MESSAGE_CHARS:
        return None
    for pattern, needs_before in _SHAPES:
        match = pattern.match(text)
        if match is None:
            continue
        wanted, unwanted = _term(match["y"]), _term(match["x"])
        if wanted is None or unwanted is None or wanted.lower() == unwanted.lower():
            continue
        if needs_before and not _named(unwanted, before):
            continue
        if needs_before is None and not (_named(unwanted, before) or match.groupdict().get("use")):
            continue
        if _verb_led(wanted):
            continue  # "read the full file, not just the top": a request for the sentence reader
        return Replacement(wanted, unwanted, again=bool(needs_before))
    return None
