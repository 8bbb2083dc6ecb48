"""Wording a candidate habit: a "When ..." situation and a "Do ..." behaviour in the user's own terms.

- `generalise` replaces file names, paths and version numbers, which tie a habit to one task;
- `behavior` words the best directive of a cluster: markers, swearing, reasons about people ("I
  shouldn't have to ask") and trailing sentences that explain rather than ask are dropped, "stop
  putting X" becomes "Do not put X", "no X" becomes "Do not use X", a noun phrase ("table-driven
  tests") becomes "Do use ..."; the situation clause that went into the condition is not repeated;
- `condition` names the situation: "when/before ..." as the user said it, else the artefact the rule
  is about ("in commit messages", "every script", "these scripts" -> "When writing ..."), else the
  action and its object without the qualifiers that are the rule itself ("read the full file" ->
  "When reading a file"), else the topic;
- `fix_typos` corrects a misspelt word only when it is unambiguous: exactly one word one typo away
  that the same batch uses more often ("conosle" -> "console").

Pure standard library.
"""

from __future__ import annotations

import re
from collections import Counter

from habitus.lang import grammar
from habitus.lang.words import stem
from habitus.learn import foreign, rules
from habitus.learn.text import (
    _NO_THING,
    STOPWORDS,
    SUBJECTS,
    _close,
    _set,
    _starts_imperative,
    content_words,
    known_verb,
    words,
)

_EXTENSIONS = (
    "py|pyi|ts|tsx|js|jsx|mjs|cjs|json|jsonl|md|rst|toml|yaml|yml|css|scss|less|html|go|rs|java|rb|sh"
    "|txt|cfg|ini|sql|lock|c|h|cc|cpp|hpp|kt|swift|php|vue|svelte|xml|csv|ipynb|env|dockerfile|tf"
)
_PATH = re.compile(r"(?<![\w/])(?:~|\.{1,2})?(?:/?[\w.@+-]+/)+[\w.@+-]*")
_FILE = re.compile(rf"(?<![\w/])[\w@+-][\w.@+-]*\.(?:{_EXTENSIONS})\b", re.IGNORECASE)
_FILE_END = re.compile(rf"\.(?:{_EXTENSIONS})$", re.IGNORECASE)
_VERSION = re.compile(r"(?<![\w.])v?\d+(?:\.\d+){1,3}(?:[-+.]?[a-z]+\d*)?(?![\w.])", re.IGNORECASE)
_QUOTED = re.compile(r"'[^']{1,60}'|\"[^\"]{1,60}\"|`[^`]{1,60}`")


def generalise(text: str, *, numbered: bool = False) -> str:
    """Replace file names, paths and version numbers, which tie a habit to one task; with
    `numbered`, also a zero-padded number such as a migration's "0032" (it names one file)."""
    text = _PATH.sub(lambda m: "the file" if _FILE_END.search(m.group(0)) else "the folder", text)
    text = _FILE.sub("the file", text)
    if numbered:
        text = re.sub(r"(?<![\w.])0\d{2,}(?![\w.])", "the file", text)
    text = _VERSION.sub("the version", text)
    text = re.sub(r"\b(the|a|an) the (file|folder|version)\b", r"the \2", text, flags=re.IGNORECASE)
    text = re.sub(r"\b(the (file|folder|version))(,? (and|or) the \2)+\b", r"\1", text)
    return re.sub(r"\s{2,}", " ", text).strip()


def _gerund(verb: str) -> str:
    irregular = {"be": "being", "see": "seeing", "lie": "lying", "die": "dying", "set": "setting"}
    if verb in irregular:
        return irregular[verb]
    if verb.endswith("ie"):
        return verb[:-2] + "ying"
    if verb.endswith("e") and not verb.endswith(("ee", "ye", "oe")):
        return verb[:-1] + "ing"
    cvc = len(verb) >= 3 and verb[-1] not in "aeiouwxy" and verb[-2] in "aeiou" and verb[-3] not in "aeiou"
    if cvc and (len(verb) == 3 or (len(verb) == 4 and verb[0] not in "aeiou")):
        return verb + verb[-1] + "ing"  # run -> running, stop -> stopping; edit -> editing
    return verb + "ing"


def _degerund(word: str) -> str | None:
    """ "putting" -> "put", "adding" -> "add", "making" -> "make" (a known verb only)."""
    if not word.endswith("ing") or len(word) < 5:
        return None
    base = word[:-3]
    for candidate in (base, base + "e", base[:-1] if len(base) > 2 and base[-1] == base[-2] else ""):
        if candidate and known_verb(candidate):
            return candidate
    return None


# Artefacts one writes: "When writing commit messages" reads better than "When working on ...".
_WRITTEN = _set(
    """code tests test docs doc documentation pages page messages message subjects subject scripts script
    queries query sql comments comment descriptions description readme changelog functions function
    modules module components component dockerfiles dockerfile notebooks notebook migrations migration
    endpoints endpoint handlers handler classes class prs pr titles title commits commit files file
    themes theme configs config templates template emails email"""
)
_MASS_NOUNS = _set(
    """code config configuration database db production prod ci documentation docs css html python
    go rust typescript javascript sql git main staging"""
)
_NOT_A_SITUATION = _set("me it them you us him her and or this that")
_OBJECT_END = _set(
    """this that these those not but before after when whenever while if so because then in on at
    for with from by to into as like instead than again just only every each always never please"""
)
# Words that are the rule itself, not the situation: "read the full file" -> "When reading a file".
_QUALIFIERS = _set(
    """full whole entire complete completely all every only just directly explicitly always never really
    properly carefully again first"""
)
# Verbs that name an outcome, not an action one takes: "never crash on invalid config" is about
# handling invalid config.
_PLACING = _set("put move add commit push copy upload send")
_OUTCOMES = _set("crash crashes fail fails break breaks hang hangs freeze freezes leak leaks")
_WHEN = re.compile(r"\bwhen(?:ever)? (?:you |we )?([^,.;]{3,80})", re.IGNORECASE)
_BEFORE = re.compile(r"\bbefore (?:you |we )?([^,.;]{3,80})", re.IGNORECASE)
_PLACE = re.compile(r"\b(?:in|for|inside|within|of|from|into) ([^,.;:!?]{2,60})", re.IGNORECASE)
_EVERY = re.compile(r"\b(?:every|each|any|all) ([a-z][a-z-]*(?: [a-z][a-z-]*)?)", re.IGNORECASE)


def _situation_ok(phrase: str) -> bool:
    found = words(phrase)
    return (
        bool(found)
        and not (set(found) & _NOT_A_SITUATION)
        and any(w not in STOPWORDS and not known_verb(w) for w in found)
    )


def _doing(place: str) -> str:
    """ "commit messages" -> "writing commit messages"; "the docs" -> "writing docs"; "the prod
    database" -> "working on the prod database"."""
    head = words(place)[-1] if words(place) else ""
    if head in _WRITTEN:
        return (
            "writing " + re.sub(r"^the (?=\w+s\b)", "", place) if head.endswith("s") else f"writing {place}"
        )
    return f"working on {place}"


def _place(text: str) -> str | None:
    """A general place named by "in/for/of/from <things>": "in commit messages", "for tests", "in
    library code", "from these scripts" (-> "scripts")."""
    for match in _PLACE.finditer(text):
        phrase: list[str] = []
        for word in match.group(1).split():
            bare = word.strip("'\"`").lower()
            if (bare in _OBJECT_END and not (not phrase and bare in ("these", "those"))) or not re.fullmatch(
                r"[a-z][a-z-]*", bare
            ):
                break
            phrase.append(bare)
        if phrase and phrase[0] in ("these", "those", "my", "your", "our"):
            phrase = phrase[1:]
        head = phrase[1:] if phrase and phrase[0] in ("the", "all", "any") else phrase
        plural = bool(head) and head[-1].endswith("s") and not head[-1].endswith("ss")
        of = match.group(0).lower().startswith(("of ", "from ", "into "))
        if 1 <= len(head) <= 4 and (plural or (head[-1] in _MASS_NOUNS and not of)):
            candidate = " ".join(phrase)
            if _situation_ok(candidate) and not (of and head[-1] not in _WRITTEN and not plural):
                return candidate
    return None


def _article(noun: str) -> str:
    return "an" if noun[:1] in "aeiou" else "a"


def condition(texts: list[str], *, phrase: bool = False) -> str:
    """A "When ..." describing the situation, from the cluster's own words (most specific rule first).
    With `phrase`, the first text is a noun phrase ("table-driven tests"), not an imperative."""
    return situation(texts, phrase=phrase)[0]


def situation(texts: list[str], *, phrase: bool = False) -> tuple[str, int | None]:
    """`condition`, and the index of the text whose own "when/before ..." clause it is (else None)."""
    texts = [generalise(t, numbered=True) for t in texts]
    for pattern in (_WHEN, _BEFORE):
        for index, text in enumerate(texts):
            match = pattern.search(text)
            if match:
                found = generalise(match.group(1)).strip(" ,")
                if _situation_ok(found):
                    first = words(found)[0]
                    if pattern is _WHEN or first.endswith("ing"):
                        return f"When {found}", index
                    if first in ("any", "every", "each"):
                        found = re.sub(r"^\w+", "a", found)  # "before any prod migration"
                        first = "a"
                    return grammar.about_to(found), index
    for text in texts:
        every = _EVERY.search(generalise(text))
        if every:
            noun = every.group(1).lower().split()
            noun = (
                noun[:1]
                if len(noun) > 1 and noun[1] in STOPWORDS | {"has", "have", "gets", "needs"}
                else noun
            )
            if noun[-1] in _WRITTEN:
                joined = " ".join(noun)
                return f"When writing {_article(joined)} {joined}", None  # "every script needs ..."
    for text in texts:
        place = _place(generalise(text))
        if place:
            return f"When {_doing(place)}", None
    if phrase and texts:
        head = words(texts[0])[-1] if words(texts[0]) else ""
        return (f"When writing {head}" if head in _WRITTEN else "When writing code"), None
    for text in texts:
        clause = re.split(r"[.,;:!?]", generalise(text), maxsplit=1)[0]
        said = words(clause)
        if said and said[0] in ("don't", "dont", "never", "do", "no", "always", "stop", "avoid"):
            said = said[2:] if said[:2] == ["do", "not"] else said[1:]
        verb = (_degerund(said[0]) or known_verb(said[0], typo=True)) if said else None
        if verb:
            rest: list[str] = []
            for word in said[1:]:
                placing = verb in _PLACING and word in ("into", "to", "in", "on")  # "put X into git"
                if (
                    word in _OBJECT_END
                    and not placing
                    and (rest or word not in ("to", "into", "on", "from", "in"))
                ):
                    break
                if word not in _QUALIFIERS:
                    rest.append(word)
            if rest and rest[0] in ("on", "with", "about") and verb in _OUTCOMES:
                rest = rest[1:]
            if (
                rest
                and rest[0] == "the"
                and len(rest) == 2
                and rest[1] in _WRITTEN
                and not rest[1].endswith("s")
            ):
                rest = [_article(rest[1]), rest[1]]  # "the file" -> "a file"
            if any(w not in STOPWORDS for w in rest):
                if verb in _OUTCOMES:
                    return f"When handling {' '.join(rest[:5])}", None  # "never crash on invalid config"
                return f"When {_gerund(verb)} {' '.join(rest[:5])}", None
    for text in texts:
        found = (
            re.split(r"[.,;:!?]| in | for ", generalise(text)[3:], maxsplit=1)[0]
            if _NO_THING.match(text)
            else ""
        )
        if found and _situation_ok(found):
            thing = found.strip()
            first = words(thing)[0]
            verb = next(
                (
                    known_verb(c)
                    for c in (first, first[:-1], first[:-2], first[:-1] if first.endswith("d") else "")
                    if c and known_verb(c)
                ),
                None,
            )  # "pushes", "mocked"
            if verb:  # "no pushes to main" -> "When pushing to main"
                return f"When {_gerund(verb)} {' '.join(thing.split()[1:])}".rstrip(), None
            return f"When adding {thing}", None  # "no console logs" -> "When adding console logs"
    topic = _topic(texts)
    return (f"When the work involves {topic}" if topic else "When working on a task like this"), None


def _topic(texts: list[str]) -> str:
    counts: dict[str, int] = {}
    for text in texts:
        for word in set(content_words(text)):
            if not known_verb(word) and not word.isdigit():
                counts[word] = counts.get(word, 0) + 1
    ranked = sorted(counts, key=lambda w: (-counts[w], w))[:2]
    return " and ".join(ranked)


_LEADING_SITUATION = re.compile(r"^(?:before|when|whenever|after|once) [^,]{3,80},\s*", re.IGNORECASE)
_TRAILING_SITUATION = re.compile(r"\s+(?:before|when|whenever) (?:you |we )?[^,.;]{3,80}$", re.IGNORECASE)
_PEOPLE_CLAUSE = re.compile(r",\s+(?:i|we|you|i'd|we'd|you'd|i'm|i've)\b[^,;]*", re.IGNORECASE)
_PRONOUN_TAIL = re.compile(r"\s+(?:for|to|on|in) (?:it|them|that|this)$", re.IGNORECASE)


def _trim(body: str) -> str:
    """Keep what asks: the first sentence and the later ones that are requests themselves; drop
    clauses about people ("I shouldn't have to ask") and a dangling "for it"."""
    parts = [p.strip() for p in re.split(r"(?<=[.!?])\s+|;\s+", body) if p.strip()]
    kept = [parts[0].rstrip(".!?")] if parts else [body]
    for part in parts[1:]:
        bare = re.sub(r"^(?:and|also|then)\s+", "", part.rstrip(".!?"), flags=re.IGNORECASE)
        if _starts_imperative(bare) or _NO_THING.match(bare):
            kept.append(bare)
    body = kept[0]
    for more in kept[1:]:  # "..., and no trailing period"; "Do not mock it; use a real one"
        body += f", and {more}" if _NO_THING.match(more) and len(more) < 60 else f"; {more}"
    body = _PEOPLE_CLAUSE.sub("", body)
    return _PRONOUN_TAIL.sub("", body).strip(" ,;")


def behavior(text: str, *, phrase: bool = False, situation: str | None = None) -> tuple[str, int]:
    """("Do ..."/"Do not ...", polarity) from one directive (its situation clause goes to the
    condition). `phrase`: the directive is a noun phrase. `situation`: the condition's "When ..." when
    it came from this directive's own "before/when ..." clause, which is then not repeated."""
    if foreign.is_foreign(text):  # kept in the user's language and words, with its own negation
        body = generalise(text, numbered=True).strip().rstrip(".!?;,。！？；，")
        return f"Do {body}.", 1
    body = _trim(generalise(text, numbered=True).strip().rstrip(".!?;,"))
    body = _LEADING_SITUATION.sub("", body) or body
    if situation and _TRAILING_SITUATION.search(body):
        shorter = _TRAILING_SITUATION.sub("", body)
        if len(content_words(shorter)) >= 1:
            body = shorter + " first" if " before " in body.lower() else shorter
    first = re.match(r"[A-Za-z]+", body)
    fixed = known_verb(first.group(0), typo=True) if first and not phrase else None
    if first and fixed and first.group(0).lower() != fixed:
        body = fixed + body[first.end() :]  # "reda the file" -> "read the file"
    lowered = body.lower()
    polarity = 1
    if phrase:
        body = "use " + body
        lowered = ""
    stop = re.match(r"^(?:stop|quit) (\w+ing)\b", lowered)
    if stop and _degerund(stop.group(1)):
        body = f"{_degerund(stop.group(1))}{body[stop.end() :]}"  # "stop putting X" -> "put X"
        polarity = -1
        lowered = ""
    for prefix, replacement in (
        ("do not ", ""),
        ("don't ", ""),
        ("dont ", ""),
        ("never ", ""),
        ("avoid ", ""),
        ("stop ", "keep "),
        ("no more ", "use more "),
    ):
        if lowered.startswith(prefix):
            body = replacement + body[len(prefix) :]
            polarity = -1
            break
    else:
        if not lowered:
            pass
        elif _NO_THING.match(body):
            body = "use " + body[3:]
            polarity = -1
        elif lowered.startswith("always "):
            body = body[len("always ") :]
        elif lowered.startswith("do ") and _starts_imperative(body[3:]):
            body = body[3:]  # "do use rgb indices" (an emphatic reversal)
        elif not _starts_imperative(body):
            if _STATEMENT.match(body):  # a rule stated, not a thing to use: quoted whole, never turned round
                return rules.stated(body)
            body = "use " + body  # "rgb hex values in themes" -> "use rgb hex values in themes"
    body = body[:1].lower() + body[1:] if body[:2] != body[:2].upper() else body
    return ("Do not " if polarity < 0 else "Do ") + body + ".", polarity


# A sentence that states its rule with a verb of its own before the first pause ("internal changes are
# never breaking changes, only ...", "the tests should hit a real database"): "Do use <it>" would be
# garbled, so it is worded as habitus.learn.rules words a stated rule.
_STATEMENT = re.compile(
    r"[^,;:]{0,60}?\b(?:is|are|was|were|should|must|shall|has to|have to|needs? to|can'?t|cannot|won'?t)\b",
    re.IGNORECASE,
)


# What "Do use <words>" never starts with when <words> is a noun phrase ("rgb hex values in themes"): a
# person, a question word or a hedge ("still reads ... as if").
_NOT_A_THING = _set(
    "i we you he she they what how why which who whom whose ideally still also even just maybe probably "
    "perhaps idk ew meh hmm honestly basically"
)


def garbled(behavior: str) -> bool:
    """Whether a "Do use ..." wording was made from a sentence that names no thing to use (a report, a
    feeling, a question): "Do use Ideally you run the bench ...", "Do use still reads for the quick
    reader as if ...". Such a proposal says nothing a reviewer could approve."""
    found = re.match(r"Do use ([A-Za-z']+)", behavior)
    if found is None:
        return False
    return found.group(1).lower() in _NOT_A_THING  # not "reads": "types", "logs" are things too


def vocabulary(texts: list[str]) -> Counter[str]:
    """Word counts of a batch (user and agent text), for `fix_typos`."""
    counts: Counter[str] = Counter()
    for text in texts:
        counts.update(w for w in words(text) if w.isalpha())
    return counts


def fix_typos(text: str, counts: Counter[str]) -> str:
    """Correct a word the batch uses once when exactly one more frequent word of the batch is one
    typo away ("conosle" -> "console"); anything ambiguous stays as the user wrote it."""
    if not counts:
        return text

    def fix(match: re.Match[str]) -> str:
        word = match.group(0)
        lower = word.lower()
        if (
            len(lower) < 5
            or counts.get(lower, 0) > 1
            or lower in STOPWORDS
            or lower in SUBJECTS
            or known_verb(lower)
        ):
            return word
        near = [
            w
            for w, n in counts.items()
            if n >= 2 and w != lower and len(w) >= 5 and _close(lower, w) and stem(w) != stem(lower)
        ]  # "label" is not a typo of "labels"
        return near[0] if len(near) == 1 else word

    return re.sub(r"[A-Za-z]+", fix, text)
