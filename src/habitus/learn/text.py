"""Reading one user message: friction markers, directives, facts, and generalised When/Do wording.

Pure standard library (regular expressions and word lists), so that it costs nothing to import. The
local analyzer (`habitus.learn.local`) calls `read_message` on every observation and, for each cluster
of similar directives, `wording` to turn the user's own words into a candidate habit.

What a message can hold (DESIGN.md section 5, issue 5):

- friction markers: a leading "no, ...", "nope", "again ...", "stop ...", "don't ...", "never ...",
  "I said / I told you / I keep telling you ...", frustration ("wtf", swearing, "?!", "!!"), a
  contrast inside a directive ("X, not Y", "not just ..."), or a rejected tool use (Claude Code's
  rejection text, or a capture record whose outcome is "rejected");
- directives: sentences that ask for a behaviour (imperative, "always/never ...", "no <thing>",
  "X must/should ..." inside a friction message). A directive may start a candidate habit only when it
  is general: not a question, not about "this file" or "the other one", not naming one thing
  ("call it fetch_forecast"), not a command whose object is a bare pronoun ("run it again",
  "reword it"), and with at least two content words;
- facts: sentences introduced by "fyi", "btw", "heads up", "for the record", "remember that",
  project statements ("we use ...", "this repo publishes ...") and statements the agent acknowledged
  with "Noted"; they become memory suggestions, never habits;
- loose friction: a friction message with no directive ("again a mock db??") may add evidence to a
  habit seeded elsewhere but never seeds one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

MAX_DIRECTIVE_CHARS = 300


def _set(text: str) -> frozenset[str]:
    return frozenset(text.split())


MAX_FACT_CHARS = 400

REJECTION = re.compile(
    r"the user doesn'?t want to (proceed|take this action)|tool use was rejected|user rejected tool use",
    re.IGNORECASE,
)
_REJECTION_REASON = re.compile(
    r"(?:reason for the rejection|the user said)\s*:\s*(.+)$", re.IGNORECASE | re.S
)

STOPWORDS = _set(
    """a an the and or but if then so to of in on at for with from by as into onto about over under
    up down out off again also too very just only really still even ever not no nor is are was
    were be been being am do does did done doing have has had having will would shall should can
    could may might must need needs this that these those it its it's i me my mine we us our
    ours you your yours he him his she her they them their there here what which who whom whose
    when where why how all any both each every few more most other some such own same than s t
    don't dont didn't isn't aren't wasn't won't can't cannot let's ok okay please pls thanks
    thank yes yeah hmm well now first one ones thing things lot bit little way time times
    already always never sure like before after while until because since without within"""
)

# Verbs that start an imperative sentence in coding conversations. Not complete: a sentence after an
# explicit correction marker counts as a directive without it.
VERBS = _set(
    """use read write add run build install verify check take make keep put give return open squash
    fall report fix test move remove delete create update change edit rename call name print log
    show explain ask wait stop start commit push pull merge rebase tag release deploy ship
    snapshot backup back follow prefer avoid skip include exclude document describe mention list
    sort format lint refactor split wrap handle catch raise throw validate sanitize sanitise
    escape quote comment cite link look search grep find inspect review compare measure profile
    benchmark cache store save load import export convert port migrate replace rewrite reword
    revert restore reset clean clear close kill restart retry try do go let leave stay get set
    pass send pick choose stick mock stub patch pin bump lock declare define type annotate
    respond reply answer say tell think plan summarize summarise confirm ensure respect reuse
    share group batch limit bound cap trim strip drop ignore prefix indent align render plot
    style paint highlight poll watch notify apply append prepend insert generate split keep
    verify double-check read cut copy paste upload download publish package sign encrypt decrypt
    hash crash break fail hardcode hard-code print prompt reload"""
)

PRONOUN_OBJECTS = _set("it that this them these those both one everything something")
SUBJECTS = _set(
    """i you we he she they it that this there it's that's there's i'm you're we're they're i've
    you've we've i'd you'd i'll you'll we'll he's she's what's who's"""
)
DETERMINERS = _set("the a an my our your his her their its some")
# Sentences that clarify the current task rather than correct a behaviour.
NARROW = re.compile(
    r"\b(this|that|the same) (file|function|method|class|line|one|test|chart|page|component|module|folder)\b"
    r"|\bthe other\b|\bthe one\b|\b(today|tonight|for now|right now|this time only|just this once)\b"
    r"|^(call|name|rename) (it|this|that|them)\b",
    re.IGNORECASE,
)
HABITUAL = re.compile(
    r"\b(as usual|as always|like usual|the usual|same (style|as before|as the others?|as last time)"
    r"|like (the|last) \w+ ones?|like before|like last time|every (single )?time|each time|whenever)\b",
    re.IGNORECASE,
)

# -- markers ---------------------------------------------------------------------------------------

_NO_INTERJECTION = re.compile(r"^(no+|nope|nah|wrong|incorrect)(?=[\s]*[,.!:;?-]|\s*$)", re.IGNORECASE)
_AGAIN = re.compile(r"^(once again|again)\b", re.IGNORECASE)
_TOLD = re.compile(
    r"\b(i|we) (already )?(said|told you|keep telling you|asked you|mentioned)\b|\bhow many times\b"
    r"|\b(as|like) i said\b|\btold you\b",
    re.IGNORECASE,
)
_STOP = re.compile(r"^stop\b", re.IGNORECASE)
_NEGATIVE = re.compile(r"^(don'?t|do not|never|no more|avoid|quit|stop)\b", re.IGNORECASE)
_NO_THING = re.compile(r"^no\s+(?!(?:one|way|problem|worries|idea|need)\b)[a-z0-9]", re.IGNORECASE)
_GENERAL = re.compile(r"\b(always|never|any|every|each|whenever|all)\b", re.IGNORECASE)
_CONTRAST = re.compile(r",\s*not\b|\bnot just\b|\bnot only\b|\binstead of\b|\brather than\b", re.IGNORECASE)
_CONTRAST_FRICTION = re.compile(r",\s*not\b|\bnot just\b|\bnot only\b", re.IGNORECASE)
_BLAME = re.compile(
    r"\byou (only|just|forgot|missed|broke|didn'?t|did not|never|keep|kept|still|ignored|skipped|again)\b",
    re.IGNORECASE,
)
_QUESTION = re.compile(r"\?[!?]*\s*$")
_ALWAYS = re.compile(r"\b(always|never)\b", re.IGNORECASE)
_QUOTATION = re.compile(r"^\s*(['\"`“‘]).*(['\"`”’])\s*[.!]?\s*$", re.S)
_MODAL = re.compile(r"\b(must|should|needs? to|has to|have to|ought to)\b", re.IGNORECASE)
_FRUSTRATION = re.compile(
    r"\b(wtf|w\.t\.f|omg|omfg|ffs|fu+ck\w*|shit\w*|damn\w*|ugh+|jeez|stupid|idiot\w*|seriously|come on)\b"
    r"|[?!]{2,}",
    re.IGNORECASE,
)
_PROFANITY = re.compile(
    r"\b(fu+ck\w*|shit\w*|damn\w*|wtf|omfg|omg|ffs)\b(\s+hell\b)?[\s,.!]*|^\s*hell\b[\s,.!]*", re.IGNORECASE
)

# Interjections and markers stripped from the front of a sentence before it is read.
_LEAD = re.compile(
    r"^(?:ok(?:ay)?|hmm+|hm|well|so|also|and|but|then|now|please|pls|dude|man|yeah|yes|oh|ah|lol"
    r"|wtf|w\.t\.f|omg|omfg|ffs|ugh+|seriously|(?:no+|nope|nah|wrong|incorrect)(?=\s*[,.:;!?-]|\s*$)"
    r"|once again|again(?: with)?"
    r"|(?:i|we) (?:already )?(?:said|told you|keep telling you|asked you|mentioned)"
    r"(?: (?:already|before|twice|thrice|again|today|yesterday|so|many|times|\d+|one|two|three|several"
    r"|that|this|it))*"
    r"|(?:as|like) i said|how many times(?: do i have to say (?:it|this))?)(?=[\s,.:;!?-]|$)[\s,.:;!?-]*",
    re.IGNORECASE,
)
_TRAIL = re.compile(
    r"[\s,;:-]*\b(please|pls|thanks|thank you|this time|again|already|for me|btw|fyi|as usual|as always"
    r"|every single time|every time|each time|ok|okay|too|then)\s*[.!?]*\s*$",
    re.IGNORECASE,
)

_FACT_START = re.compile(
    r"^(?:fyi|btw|by the way|heads[ -]up|for the record|note that|just so you know|for your information"
    r"|keep in mind(?: that)?|good to know|remember(?: that| this)?(?: one)?)\b[\s,:;-]*",
    re.IGNORECASE,
)
_FACT_ANYWHERE = re.compile(r"[\s,]*\b(btw|fyi)\b[\s,]*", re.IGNORECASE)
_PROJECT_STATEMENT = re.compile(
    r"^(?:we|our (?:team|repo|project|app|company|ci)|this (?:repo|repository|project|codebase|package|app"
    r"|team)|in this (?:repo|repository|project|codebase))\b(?:\s+\w+){0,3}?\s+"
    r"(?:use|uses|deploy|deploys|publish|publishes|release|releases|run|runs|ship|ships|host|hosts"
    r"|prefer|prefers|support|supports|follow|follows|target|targets|only|require|requires|are|is)\b",
    re.IGNORECASE,
)
_PREFERENCE = re.compile(r"\b(i|we) (prefer|like|'d rather|would rather)\b", re.IGNORECASE)
_DECISION = re.compile(
    r"\bwe (use|decided|chose|went with|don'?t use|do not use|standardi[sz]ed on)\b", re.IGNORECASE
)
_ACK = re.compile(
    r"^\s*(noted|good to know|i'?ll (keep that in mind|remember)|will remember)\b", re.IGNORECASE
)

_WORD = re.compile(r"[a-z][a-z'’-]*|\d+", re.IGNORECASE)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+|;\s+")
_ABBREVIATION = re.compile(r"\b(e\.g|i\.e|etc|vs|cf)\.\s", re.IGNORECASE)


# -- data ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Directive:
    """A sentence asking for a behaviour, in the user's words with markers stripped."""

    text: str
    seed: bool  # general enough to start a candidate on its own
    score: int  # how good a representative wording it makes (higher is better)
    habitual: bool = False  # says "as usual", "same style", ...
    marked: bool = False  # carries its own correction marker; an unmarked one elaborates the one before


@dataclass(frozen=True)
class Fact:
    content: str
    kind: str  # fact | preference | decision


@dataclass
class Reading:
    """What one observation's user message says."""

    friction: bool = False
    rejection: bool = False
    markers: set[str] = field(default_factory=set)
    directives: list[Directive] = field(default_factory=list)  # from a friction message
    instructions: list[Directive] = field(default_factory=list)  # friction-free directives
    facts: list[Fact] = field(default_factory=list)
    loose: str = ""  # friction text without a directive: may join a cluster, never seeds one
    lead: str = ""  # friction text before the first directive: compared along with it


# -- helpers ---------------------------------------------------------------------------------------


def words(text: str) -> list[str]:
    return [w.lower().replace("’", "'") for w in _WORD.findall(text)]


def content_words(text: str) -> list[str]:
    return [w for w in words(text) if w not in STOPWORDS and len(w) > 1]


def sentences(text: str) -> list[str]:
    protected = _ABBREVIATION.sub(lambda m: m.group(0).replace(". ", ".\u0000"), text)
    parts = [p.replace("\u0000", " ").strip() for p in _SENTENCE_END.split(protected)]
    out: list[str] = []
    for part in parts:
        if not part:
            continue
        # A fragment too short to stand alone ("and no trailing period", "PR please", "fix both")
        # continues the sentence before it.
        stripped = _strip_lead(part)[0]
        if not stripped and out:
            continue  # only a marker ("I said that before", "again!"): already counted as friction
        short = len(content_words(stripped)) <= 2 and not _FACT_START.match(part)
        if out and short and not _QUESTION.search(out[-1]):  # a question stays a question
            out[-1] = f"{out[-1].rstrip()} {part}"
        else:
            out.append(part)
    return out


def _strip_lead(sentence: str) -> tuple[str, set[str]]:
    """The sentence without leading interjections and correction markers, and the markers seen."""
    markers: set[str] = set()
    text = sentence.strip()
    for _ in range(6):
        if _NO_INTERJECTION.match(text):
            markers.add("no")
        elif _AGAIN.match(text):
            markers.add("again")
        elif _TOLD.match(text):
            markers.add("told")
        match = _LEAD.match(text)
        if not match or not match.group(0):
            break
        lead = match.group(0).lower()
        if _FRUSTRATION.search(lead):
            markers.add("frustration")
        text = text[match.end() :]
    return text.strip(), markers


def _close(word: str, verb: str) -> bool:
    """One typo apart (substitution, insertion, deletion or swap of neighbours): "reda" ~ "read"."""
    if word == verb:
        return True
    if len(verb) < 4 or abs(len(word) - len(verb)) > 1 or word[0] != verb[0]:
        return False
    if len(word) == len(verb):
        diff = [i for i, (a, b) in enumerate(zip(word, verb, strict=True)) if a != b]
        if len(diff) == 1:
            return True
        return (
            len(diff) == 2
            and diff[1] == diff[0] + 1
            and word[diff[0]] == verb[diff[1]]
            and (word[diff[1]] == verb[diff[0]])
        )
    short, long = (word, verb) if len(word) < len(verb) else (verb, word)
    return any(long[:i] + long[i + 1 :] == short for i in range(len(long)))


def _verb(word: str, *, typo: bool = False) -> str | None:
    """The verb `word` is (with `typo`, also a verb one typo away: "reda" -> "read")."""
    word = word.lower()
    if word in VERBS:
        return word
    if typo and len(word) >= 4 and word not in STOPWORDS:
        for verb in VERBS:
            if _close(word, verb):
                return verb
    return None


def _starts_imperative(text: str) -> bool:
    found = words(text)
    if not found:
        return False
    first = found[0]
    if _NEGATIVE.match(text) or _NO_THING.match(text) or first in ("always", "only", "make"):
        return True
    if first in ("can", "could", "would", "will"):
        return False
    return _verb(first, typo=True) is not None


def _verb_led(text: str) -> bool:
    """Starts with a verb, or with don't/never and a verb: the clearest wording of a behaviour."""
    found = words(text)
    if found[:1] in (["don't"], ["dont"], ["never"], ["always"]):
        found = found[1:]
    elif found[:2] == ["do", "not"]:
        found = found[2:]
    return bool(found) and _verb(found[0]) is not None


def _starts_descriptive(text: str) -> bool:
    found = words(text)
    return bool(found) and (found[0] in SUBJECTS or found[0] in DETERMINERS)


def _object_is_pronoun(text: str) -> bool:
    found = [w for w in words(text) if w not in ("always", "never", "please", "just")]
    if len(found) < 2:
        return True
    if found[0] in ("don't", "dont", "do", "never", "not"):
        found = found[2:] if found[:2] == ["do", "not"] else found[1:]
    return len(found) >= 2 and found[1] in PRONOUN_OBJECTS


_TAIL_CLAUSE = re.compile(r"[.,;:!]\s*([^.,;:!]*)$")


def clean(text: str) -> str:
    """The directive as the user put it, minus swearing, interjections, fillers and a trailing
    one-off command ("... reword it", "..., then fix both")."""
    text = _PROFANITY.sub("", text)
    text, _ = _strip_lead(text)
    text = re.sub(r"\s*\b(please|this time)\b", "", text, flags=re.IGNORECASE)
    text = re.sub(r",\s*always\s*(?=[.!]|$)", "", text, flags=re.IGNORECASE)
    for _ in range(3):
        tail = _TAIL_CLAUSE.search(text.rstrip(" .!?"))
        if not tail or len(content_words(text[: tail.start()])) < 2:
            break
        clause = _strip_lead(tail.group(1))[0]
        one_off = _starts_imperative(clause) and (
            _object_is_pronoun(clause) or len(content_words(clause)) <= 1
        )
        if clause and not one_off:
            break
        text = text[: tail.start()]
    for _ in range(3):
        stripped = _TRAIL.sub("", text).strip()
        if stripped == text:
            break
        text = stripped
    text = re.sub(r"\s{2,}", " ", text).strip(" ,;:-")
    text = re.sub(r"[!?]+$", "", text).strip()
    if len(text) > MAX_DIRECTIVE_CHARS:
        text = text[:MAX_DIRECTIVE_CHARS].rsplit(" ", 1)[0]
    return text


# -- one message -----------------------------------------------------------------------------------


def read_message(user: str, *, outcome: str = "complete", assistant: str = "") -> Reading:
    """Friction markers, directives and facts in one user message (see the module docstring)."""
    reading = Reading()
    text = user.strip()
    if outcome == "rejected" or REJECTION.search(text):
        reading.rejection = reading.friction = True
        reading.markers.add("rejected")
        reason = _REJECTION_REASON.search(text)
        if not REJECTION.search(text):
            pass  # a prompt whose tool use was rejected: the prompt itself is read below
        elif reason:
            text = reason.group(1).strip()
        else:
            return reading
    if _FRUSTRATION.search(text):
        reading.markers.add("frustration")
    if _TOLD.search(text):
        reading.markers.add("told")
    if _BLAME.search(text):
        reading.markers.add("blame")
    if _ALWAYS.search(text):
        reading.markers.add("always")
    acknowledged = bool(_ACK.match(assistant or "")) and not any(
        _FACT_START.match(s) or _FACT_ANYWHERE.search(s) for s in sentences(text)
    )
    candidates: list[tuple[str, set[str], bool]] = []  # (stripped sentence, markers, question)
    for sentence in sentences(text):
        fact = _fact(sentence, acknowledged)
        if fact is not None:
            reading.facts.append(fact)
            continue
        stripped, markers = _strip_lead(sentence)
        if _NEGATIVE.match(stripped) or _NO_THING.match(stripped):
            markers.add("negative")
        if _STOP.match(stripped):
            markers.add("stop")
        if _FRUSTRATION.search(sentence):
            markers.add("frustration")
        reading.markers |= markers
        question = bool(_QUESTION.search(sentence))
        candidates.append((stripped, markers, question))
    friction_markers = {
        "no",
        "again",
        "told",
        "stop",
        "negative",
        "frustration",
        "rejected",
        "blame",
        "always",
    }
    reading.friction = bool(reading.markers & friction_markers)
    loose: list[str] = []
    lead: list[str] = []
    for stripped, markers, question in candidates:
        directive = _directive(stripped, markers, question, friction=reading.friction)
        if directive is None:
            marked = bool(markers & {"no", "again", "told", "frustration"})
            if reading.friction and len(content_words(stripped)) >= 2:
                if not question or marked:
                    loose.append(clean(stripped))
                if not reading.directives and marked:
                    lead.append(clean(stripped))  # "again printing from library code?!": what it is about
            continue
        if reading.friction:
            reading.directives.append(directive)
        else:
            reading.instructions.append(directive)
    if not reading.friction and any(_CONTRAST_FRICTION.search(d.text) for d in reading.instructions):
        # "read the full file, not just the top of it" corrects even without a "no".
        reading.friction = True
        reading.markers.add("contrast")
        reading.directives, reading.instructions = reading.instructions, []
    reading.lead = " ".join(lead)[:MAX_DIRECTIVE_CHARS]
    if reading.friction and not reading.directives:
        reading.loose = " ".join(x for x in loose if x)[:MAX_DIRECTIVE_CHARS]
    return reading


def _directive(stripped: str, markers: set[str], question: bool, *, friction: bool) -> Directive | None:
    if question or not stripped or _QUOTATION.match(stripped):
        return None
    text = clean(stripped)
    if len(content_words(text)) < 2:
        return None
    imperative = _starts_imperative(text)
    general = bool(_GENERAL.search(stripped))
    descriptive = _starts_descriptive(text)
    corrected = bool(markers & {"no", "again", "told"})
    accepted = (
        imperative
        or (general and not descriptive)  # "rgb hex values in themes, always"
        or (bool(_MODAL.search(text)) and general)  # "invalid config must never crash the app"
        or (corrected and not descriptive and not _MODAL.search(text))  # "I told you, snapshot before ..."
        or (bool(HABITUAL.search(stripped)) and not descriptive)  # "same style of tests, table-driven"
    )
    if not accepted:
        return None
    narrow = bool(NARROW.search(text)) or _object_is_pronoun(text)
    score = (
        3 * imperative
        + 2 * general
        + 2 * bool(_NEGATIVE.match(text) or _NO_THING.match(text))
        + bool(_CONTRAST.search(text))
        + _verb_led(text)
        - 2 * narrow
        - len(text) // 120
    )
    marked = bool(markers & {"no", "again", "told", "negative", "stop"} or _ALWAYS.search(stripped))
    return Directive(
        text, seed=not narrow, score=score, habitual=bool(HABITUAL.search(stripped)), marked=marked
    )


def _fact(sentence: str, acknowledged: bool) -> Fact | None:
    body = sentence.strip()
    marked = _FACT_START.match(body)
    if marked:
        body = body[marked.end() :]
    elif _FACT_ANYWHERE.search(body) and not body.rstrip().endswith("?"):
        body = _FACT_ANYWHERE.sub(" ", body)
    elif _PROJECT_STATEMENT.match(_strip_lead(body)[0]) or (
        acknowledged
        and words(_strip_lead(body)[0])[:1] in (["the"], ["our"], ["we"])
        and not body.rstrip().endswith("?")
    ):
        body = _strip_lead(body)[0]
    else:
        return None
    body = re.sub(r"\s{2,}", " ", body).strip(" ,;:-")
    if len(content_words(body)) < 2:
        return None
    if len(body) > MAX_FACT_CHARS:
        body = body[:MAX_FACT_CHARS].rsplit(" ", 1)[0]
    kind = "preference" if _PREFERENCE.search(body) else "decision" if _DECISION.search(body) else "fact"
    return Fact(body[0].upper() + body[1:], kind)


# -- generalising and wording ----------------------------------------------------------------------

_EXTENSIONS = (
    "py|pyi|ts|tsx|js|jsx|mjs|cjs|json|jsonl|md|rst|toml|yaml|yml|css|scss|less|html|go|rs|java|rb|sh"
    "|txt|cfg|ini|sql|lock|c|h|cc|cpp|hpp|kt|swift|php|vue|svelte|xml|csv|ipynb|env|dockerfile|tf"
)
_PATH = re.compile(r"(?<![\w/])(?:~|\.{1,2})?(?:/?[\w.@+-]+/)+[\w.@+-]*")
_FILE = re.compile(rf"(?<![\w/])[\w@+-][\w.@+-]*\.(?:{_EXTENSIONS})\b", re.IGNORECASE)
_FILE_END = re.compile(rf"\.(?:{_EXTENSIONS})$", re.IGNORECASE)
_VERSION = re.compile(r"(?<![\w.])v?\d+(?:\.\d+){1,3}(?:[-+.]?[a-z]+\d*)?(?![\w.])", re.IGNORECASE)
_QUOTED = re.compile(r"'[^']{1,60}'|\"[^\"]{1,60}\"|`[^`]{1,60}`")


def generalise(text: str) -> str:
    """Replace file names, paths and version numbers, which tie a habit to one task."""
    text = _PATH.sub(lambda m: "the file" if _FILE_END.search(m.group(0)) else "the folder", text)
    text = _FILE.sub("the file", text)
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


_WHEN = re.compile(r"\bwhen(?:ever)? (?:you |we )?([^,.;]{3,80})", re.IGNORECASE)
_BEFORE = re.compile(r"\bbefore (?:you |we )?([^,.;]{3,80})", re.IGNORECASE)
_PLACE = re.compile(r"\b(?:in|for|inside|within) ([^,.;:!?]{2,60})", re.IGNORECASE)
_MASS_NOUNS = _set(
    """code config configuration database db production prod ci documentation docs css html python
    go rust typescript javascript sql git main staging"""
)
_NOT_A_SITUATION = _set("me it them you us him her and or this that")
_OBJECT_END = _set(
    """this that these those not but before after when whenever while if so because then in on at
    for with from by to into as like instead than again just only every each always never please"""
)


def _situation_ok(phrase: str) -> bool:
    found = words(phrase)
    return (
        bool(found)
        and not (set(found) & _NOT_A_SITUATION)
        and any(w not in STOPWORDS and not _verb(w) for w in found)
    )


def _place(text: str) -> str | None:
    """A general place named by "in/for <things>": "in commit messages", "for tests", "in library code"."""
    for match in _PLACE.finditer(text):
        phrase: list[str] = []
        for word in match.group(1).split():
            bare = word.strip("'\"`").lower()
            if bare in _OBJECT_END or not re.fullmatch(r"[a-z][a-z-]*", bare):
                break
            phrase.append(bare)
        head = phrase[1:] if phrase and phrase[0] in ("the", "our", "all", "any") else phrase
        if 1 <= len(head) <= 4 and (head[-1].endswith("s") or head[-1] in _MASS_NOUNS):
            candidate = " ".join(phrase)
            if _situation_ok(candidate):
                return candidate
    return None


def condition(texts: list[str]) -> str:
    """A "When ..." describing the situation, from the cluster's own words (most specific rule first)."""
    for pattern in (_WHEN, _BEFORE):
        for text in texts:
            match = pattern.search(text)
            if match:
                phrase = generalise(match.group(1)).strip(" ,")
                if _situation_ok(phrase):
                    first = words(phrase)[0]
                    if pattern is _WHEN or first.endswith("ing"):
                        return f"When {phrase}"
                    if first in DETERMINERS or first in ("any", "every", "each"):
                        return f"When about to start {phrase}"  # "before any prod migration"
                    return f"When about to {phrase}"
    for text in texts:
        place = _place(generalise(text))
        if place:
            return f"When working on {place}"
    for text in texts:
        clause = re.split(r"[.,;:!?]", generalise(text), maxsplit=1)[0]
        found = words(clause)
        if found and found[0] in ("don't", "dont", "never", "do", "no", "always", "stop", "avoid"):
            found = found[2:] if found[:2] == ["do", "not"] else found[1:]
        if found and _verb(found[0], typo=True):
            verb = _verb(found[0], typo=True) or found[0]
            rest: list[str] = []
            for word in found[1:]:
                if word in _OBJECT_END and (rest or word not in ("to", "into", "on", "from", "in")):
                    break
                rest.append(word)
            if any(w not in STOPWORDS for w in rest):
                return f"When {_gerund(verb)} {' '.join(rest[:5])}"
    for text in texts:
        found = (
            _NO_THING.match(text) and re.split(r"[.,;:!?]| in | for ", generalise(text)[3:], maxsplit=1)[0]
        )
        if found and _situation_ok(found):
            return f"When about to use {found.strip()}"  # "no emoji" -> "When about to use emoji"
    topic = _topic(texts)
    return f"When the work involves {topic}" if topic else "When working on a task like this"


def _topic(texts: list[str]) -> str:
    counts: dict[str, int] = {}
    for text in texts:
        for word in set(content_words(text)):
            if not _verb(word) and not word.isdigit():
                counts[word] = counts.get(word, 0) + 1
    ranked = sorted(counts, key=lambda w: (-counts[w], w))[:2]
    return " and ".join(ranked)


_LEADING_SITUATION = re.compile(r"^(?:before|when|whenever|after|once) [^,]{3,80},\s*", re.IGNORECASE)


def behavior(text: str) -> tuple[str, int]:
    """("Do ..."/"Do not ...", polarity) from one directive (its situation clause goes to the condition)."""
    body = generalise(text).strip().rstrip(".!?;,")
    body = _LEADING_SITUATION.sub("", body) or body
    first = re.match(r"[A-Za-z]+", body)
    fixed = _verb(first.group(0), typo=True) if first else None
    if first and fixed and first.group(0).lower() != fixed:
        body = fixed + body[first.end() :]  # "reda the file" -> "read the file"
    lowered = body.lower()
    polarity = 1
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
        if _NO_THING.match(body):
            body = "use " + body[3:]
            polarity = -1
        elif lowered.startswith("always "):
            body = body[len("always ") :]
        elif not _starts_imperative(body):
            body = "use " + body  # "rgb hex values in themes" -> "use rgb hex values in themes"
    body = body[:1].lower() + body[1:] if body[:2] != body[:2].upper() else body
    return ("Do not " if polarity < 0 else "Do ") + body + ".", polarity
