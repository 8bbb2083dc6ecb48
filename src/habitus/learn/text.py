"""Reading one user message: friction markers, directives, facts, rules and reversals.

Pure standard library (regular expressions and word lists), so that it costs nothing to import. The
local analyzer (`habitus.learn.local`) calls `read_message` on every observation; `habitus.learn.
phrasing` turns a cluster of directives into the When/Do wording of a candidate habit.

What a message can hold (DESIGN.md section 5):

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
- loose friction: a friction sentence with no directive ("again a mock db??") may add evidence to a
  habit seeded elsewhere but never seeds one;
- requests worded from what the user said, read against the agent's previous reply (`before`):
  "you forgot X" (-> include X), "where is X??" / "why do they have no X?" (-> include X, a question:
  never starts a habit), "why is there X?" (-> no X), "again no X" when the reply never mentioned X
  (X is missing, not unwanted), "again X" when the reply did X (X is unwanted), "drop/remove X" right
  after the agent added X (a correction, not a new task);
- rules stated as statements: "X never goes into git", "X must never ...", "every X needs Y" are
  prohibitions or requirements (friction of their own); "we always/never ..." is a rule only in a
  message with other friction (or right after a rejected tool use), else a memory suggestion;
  descriptions that merely say "always" ("the nightly job always starts at 2") stay facts;
- reversals: "actually, do X now", "X is fine now", "you don't need to X anymore" lift or reverse an
  earlier rule (`Reversal`); the local analyzer decides whether one contradicts an active habit.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field
from functools import lru_cache

import habitus.lang.words
from habitus.lang import pasted
from habitus.lang.words import DETERMINERS, ENGLISH_STOP_WORDS, stem, word_set
from habitus.learn import foreign, replacement
from habitus.learn.standing import foreign_prose, holds, prose_rule

MAX_DIRECTIVE_CHARS = 300


_set = word_set


MAX_FACT_CHARS = 400

REJECTION = re.compile(
    r"the user doesn'?t want to (proceed|take this action)|tool use was rejected|user rejected tool use",
    re.IGNORECASE,
)
_REJECTION_REASON = re.compile(
    r"(?:reason for the rejection|the user said)\s*:\s*(.+)$", re.IGNORECASE | re.S
)

STOPWORDS = ENGLISH_STOP_WORDS | _set(
    """after again already always am aren't because before bit both can't cannot didn't doing don't dont
    down even ever every few first having her him his hmm how if isn't it's let's like little lot
    mine more most need needs never nor now off ok okay one ones only ours out over please pls
    really s shall since so still sure t thank thanks thing things time times too under until up us
    very wasn't way well what where which who whom whose why within without won't yeah yes yours"""
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
    hash crash break fail hardcode hard-code print prompt reload dump unwrap expose hide leak explode
    hang freeze label hold seed evaluate train plot wire guard paginate translate localize scope bundle
    minify compress assert await resolve reject queue schedule serve mount route query index talk
    discuss"""
)

PRONOUN_OBJECTS = _set("it that this them these those both one everything something")
SUBJECTS = _set(
    """i you we he she they it that this there it's that's there's i'm you're we're they're i've
    you've we've i'd you'd i'll you'll we'll he's she's what's who's"""
)
# Sentences that clarify the current task rather than correct a behaviour.
NARROW = re.compile(
    r"\b(this|that|the same) (file|function|method|class|line|one|test|chart|page|component|module|folder"
    r"|message|text|button|screen|card|section|part|bit|thing|step|paragraph|sentence|label)\b"
    r"|\bthe other\b|\bthe one\b|\b(today|tonight|for now|right now|this time only|just this once)\b"
    # "not the invoice template, the credit note one": which thing this task is about
    r"|^not (?:the|this|that|my|your)\b|\b(?:the|this|that) (?:[\w-]+ ){1,3}ones?\b(?! (?:of|per|at)\b)"
    r"|\bfor (?:this|that) (?:one|task|pr|change|ticket|fix)\b|\bfor (?:this|that|now)(?=\s*(?:[,.;:!?]|$))|\byet\b"
    r"|\bwhile you'?re (?:at it|there)\b"
    r"|^(call|name|rename) (it|this|that|them)\b",
    re.IGNORECASE,
)
HABITUAL = re.compile(
    r"\b(as usual|as always|like usual|the usual|(?:like|as) (?:we|i) (?:always|usually) do"
    r"|same (style|as before|as the others?|as the rest|as last time)|like the (?:rest|others)"
    r"|like (the|last) \w+ ones?|like before|like last time|every (single )?time|each time|whenever)\b",
    re.IGNORECASE,
)

# -- markers ---------------------------------------------------------------------------------------

_NO_INTERJECTION = re.compile(
    r"^(no+|nope|nah|wrong|incorrect)(?=[\s]*[,.!:;?-]|\s*$|\s+(?:that'?s|it'?s|this is|i|you|we|it|that|this)\b)",
    re.IGNORECASE,
)
_AGAIN = re.compile(r"^(once again|again)\b", re.IGNORECASE)
_TOLD = re.compile(
    r"\b(i|we) (already )?(said|told you|keep telling you|asked you|mentioned)\b|\bhow many times\b"
    r"|\b(as|like) i said\b|\btold you\b",
    re.IGNORECASE,
)
_STOP = re.compile(r"^stop\b", re.IGNORECASE)
_HALT = re.compile(r"^stop(?=\s*[,.:;!?-]|\s*$)", re.IGNORECASE)
_NEGATIVE = re.compile(
    r"^(don'?t|do not|never|no more|avoid|quit|stop)\b(?! (?:worry|bother|hesitate|stress|panic|mind|rush)\b)",
    re.IGNORECASE,
)
_NO_THING = re.compile(
    r"^no\s+(?!(?:one|way|problem|problems|worries|idea|need|rush|hurry|pressure|stress)\b)[a-z0-9]",
    re.IGNORECASE,
)
_GENERAL = re.compile(r"\b(always|never|any|every|each|whenever|all)\b", re.IGNORECASE)
_CONTRAST = re.compile(r",\s*not\b|\bnot just\b|\bnot only\b|\binstead of\b|\brather than\b", re.IGNORECASE)
_CONTRAST_FRICTION = re.compile(r",\s*not\b|\bnot just\b|\bnot only\b", re.IGNORECASE)
_BLAME = re.compile(
    r"\byou (only|just|forgot|missed|broke|didn'?t|did not|never|keep|kept|still|ignored|skipped|again)\b",
    re.IGNORECASE,
)
_QUESTION = re.compile(r"\?[!?]*\s*$")
# "what are your ideas before you make any changes": a question typed without its question mark
_ASKS_UNMARKED = re.compile(
    r"^(?:what|how|why|which|where|who)\s+(?:are|is|was|were|do|does|did|would|should|could|can|will)\b",
    re.IGNORECASE,
)
# A verdict on what the agent did, or the norm it broke, said without "no" or "again": "bare errors are
# useless in the logs", "node:20 isn't pinned either", "we dont do default exports here", "same problem as
# yesterday", "I still see a naked return". Friction for the directive beside it; never a directive.
_JUDGEMENT = re.compile(
    r"\b(?:useless|pointless|unreadable|unusable|meaningless|unacceptable|not (?:ok|okay|acceptable|allowed)"
    r"|(?:is|are|was|were|does|do|did)n'?t (?:[\w-]+ ){0,3}either|not what i asked"
    r"|that'?s not (?:what i|how (?:we|it|this|that)|right|correct|the way)"
    r"|(?:that|this|it) (?:should|must) never happen"
    r"|we (?:don'?t|dont|do not|never) (?:do|use|write|want|allow|ship|commit|keep|put|add)\b"
    r"|same (?:problem|mistake|thing|issue|error|bug) (?:as|like) (?:yesterday|before|last time|earlier|the others?)"
    r"|i (?:still|again) see\b|i asked for\b)",
    re.IGNORECASE,
)
_AGAIN_TAIL = re.compile(r"\bagain\s*[.!?]*\s*$", re.IGNORECASE)
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
    r"^(?:ok(?:ay)?|hmm+|hm|well|so|also|and|but|then|now|please|pls|dude|man|yeah|yes|oh|ah|lol|wait|sigh|actually"
    r"|ew+|meh|ideally|preferably|instead(?! of\b)"
    r"|wtf|w\.t\.f|omg|omfg|ffs|ugh+|seriously|never ?mind|nvm"
    r"|(?:no+|nope|nah|wrong|incorrect|stop)(?=\s*[,.:;!?-]|\s*$)"
    r"|no+(?=\s+(?:that'?s|it'?s|this is|i|you|we|it|that|this)\b)"
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
    r"^\s*(noted|good to know|i'?ll (keep that in mind|remember)|will remember|got it|understood|thanks"
    r"|thank you|makes sense|will do|ok(?:ay)?, noted)\b",
    re.IGNORECASE,
)
# A statement the agent acknowledged is a fact unless it reports a problem ("the build takes forever").
_PROBLEM = re.compile(
    r"\b(?:broken|break\w*|crash\w*|fail\w*|errors?|bugs?|buggy|slow|wrong|again|still|weird|flaky|forever"
    r"|(?:does|do|did|is|are|was|were|wo|ca)n'?t|not|no longer|never mind|nevermind|missing|works?)\b",
    re.IGNORECASE,
)
_STATES = re.compile(
    r"\b(?:is|are|was|were|has|have|needs?|lives?|runs?|goes|uses?|gets?|must|only|always|never|requires?"
    r"|points?|deploys?|publishes|belongs?)\b",
    re.IGNORECASE,
)

# ".." between words ("no emdashes..let's discuss options") separates sentences as a full stop does.
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+|;\s+|(?<=\w)\.{2,}(?=[A-Za-z])")
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
    context: str = ""  # what a pronoun object refers to ("the lines are hard wrapped, don't do that")
    phrase: bool = False  # a noun phrase ("type hints on everything"), not an imperative
    sure: bool = False  # general by what it names ("no emdashes"): the meaning gate does not judge it


@dataclass(frozen=True)
class Reversal:
    """The user explicitly lifts or reverses an earlier rule ("actually, do use rgb indices now").

    `text` is the behaviour concerned; `polarity` +1 when it is now wanted or allowed, -1 when it is no
    longer wanted or required; `lifting` when the user only lifts a requirement or prohibition ("you
    don't need to ... anymore", "... is fine now") rather than asking for the opposite."""

    text: str
    polarity: int
    lifting: bool


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
    loose: list[str] = field(default_factory=list)  # friction sentences without a directive: may join
    lead: str = ""  # friction text before the first directive: compared along with it
    reversals: list[Reversal] = field(default_factory=list)


# -- helpers ---------------------------------------------------------------------------------------


def words(text: str) -> list[str]:
    return list(_words(text))


@lru_cache(maxsize=16_384)  # the reader asks for the words of the same clause many times
def _words(text: str) -> tuple[str, ...]:
    return tuple(habitus.lang.words.words(text))


def content_words(text: str) -> list[str]:
    return list(_content_words(text))


@lru_cache(maxsize=16_384)
def _content_words(text: str) -> tuple[str, ...]:
    return tuple(w for w in _words(text) if w not in STOPWORDS and len(w) > 1)


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
        # ... but a request of its own ("and label the axes, always") stands alone.
        alone = len(content_words(stripped)) == 2 and (
            _ALWAYS.search(stripped) is not None
            or (known_verb(words(stripped)[0]) is not None and not _NO_THING.match(stripped))
        )
        short = len(content_words(stripped)) <= 2 and not _FACT_START.match(part) and not alone
        # "no emdashes" is a rule of its own; merged, the next fragment would hide its end
        short = short and not (prose_rule(part) or (out and prose_rule(out[-1])))
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
        elif _HALT.match(text):
            markers.add("stop")  # "stop, you're going in circles": halts this run, asks for no habit
        match = _LEAD.match(text)
        if not match or not match.group(0):
            break
        lead = match.group(0).lower()
        if _FRUSTRATION.search(lead):
            markers.add("frustration")
        text = text[match.end() :]
    return text.strip(), markers


# Neighbouring keys of a QWERTY keyboard (the rows' stagger ignored): a typo swaps a letter for one beside
# it ("tesr" ~ "test"); a letter far away makes another word ("real" is not a typo of "read").
_ROWS = ("qwertyuiop", "asdfghjkl", "zxcvbnm")
_NEAR = {
    c: {r[j] for r in _ROWS[max(0, k - 1) : k + 2] for j in range(max(0, i - 1), min(len(r), i + 2))} - {c}
    for k, row in enumerate(_ROWS)
    for i, c in enumerate(row)
}


def _close(word: str, verb: str, *, keyboard: bool = False) -> bool:
    """One typo apart (substitution, insertion, deletion or swap of neighbours): "reda" ~ "read"; with
    `keyboard`, a substitution only by a neighbouring key ("tesr" ~ "test", not "real" ~ "read")."""
    if word == verb:
        return True
    if len(verb) < 4 or abs(len(word) - len(verb)) > 1 or word[0] != verb[0]:
        return False
    if len(word) == len(verb):
        diff = [i for i, (a, b) in enumerate(zip(word, verb, strict=True)) if a != b]
        if len(diff) == 1:
            return not keyboard or verb[diff[0]] in _NEAR.get(word[diff[0]], ())
        return (
            len(diff) == 2
            and diff[1] == diff[0] + 1
            and word[diff[0]] == verb[diff[1]]
            and (word[diff[1]] == verb[diff[0]])
        )
    short, long = (word, verb) if len(word) < len(verb) else (verb, word)
    return any(long[:i] + long[i + 1 :] == short for i in range(len(long)))


def known_verb(word: str, *, typo: bool = False) -> str | None:
    """The verb of VERBS that `word` is, or None (with `typo`, also a verb one typo away: "reda" ->
    "read"; by a neighbouring key only, since nothing else in the text says which word was meant)."""
    word = word.lower()
    if word in VERBS:
        return word
    if typo and len(word) >= 4 and word not in STOPWORDS:
        for verb in VERBS:
            if _close(word, verb, keyboard=True):
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
    return known_verb(first, typo=True) is not None


def _verb_led(text: str) -> bool:
    """Starts with a verb, or with don't/never and a verb: the clearest wording of a behaviour."""
    found = words(text)
    if found[:1] in (["don't"], ["dont"], ["never"], ["always"]):
        found = found[1:]
    elif found[:2] == ["do", "not"]:
        found = found[2:]
    return bool(found) and known_verb(found[0]) is not None


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
_SITUATED = re.compile(r"\b(?:before|when|whenever)\b", re.IGNORECASE)


def clean(text: str) -> str:
    """The directive as the user put it, minus swearing, interjections, fillers and a trailing
    one-off command ("... reword it", "..., then fix both")."""
    text = _PROFANITY.sub("", text)
    text, _ = _strip_lead(text)
    text = re.sub(r"\s*\b(please|this time)\b", "", text, flags=re.IGNORECASE)
    text = re.sub(r",\s*always\s*(?=[.!]|$)", "", text, flags=re.IGNORECASE)
    # A directive that names when it applies ("before you call a release ready") is a rule, so a
    # step in it that points back with a pronoun ("build the wheel, install it and run it") belongs
    # to the rule; without that, "..., reword it" is a one-off command about this task.
    situated = _SITUATED.search(text) is not None
    for _ in range(3):
        tail = _TAIL_CLAUSE.search(text.rstrip(" .!?"))
        if not tail or len(content_words(text[: tail.start()])) < 2:
            break
        clause = _strip_lead(tail.group(1))[0]
        one_off = _starts_imperative(clause) and (
            (_object_is_pronoun(clause) and not (situated and len(content_words(clause)) >= 2))
            or len(content_words(clause)) <= 1
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


_CLAUSE_BREAK = re.compile(
    r",\s+|\s+-+\s+|\s+and\s+(?=(?:please\s+)?(?:don'?t|do not|never|no)\b)", re.IGNORECASE
)
_RHETORIC = re.compile(r"^(?:what|why|how|are you|did you|do you|seriously|really)\b", re.IGNORECASE)
_JUSTIFICATION = re.compile(
    r"^(?:we (?:don'?t|dont|do not|never|always)|that'?s (?:how|what) we|this (?:repo|codebase|project) "
    r"(?:uses|has))\b",
    re.IGNORECASE,
)
_DIRECTIVE_START = re.compile(
    r"^(?:please\s+)?(?:don'?t|do not|never|always|stop|avoid|no\s+(?!(?:one|way|problem|problems|worries|idea|need|rush|hurry|pressure|stress)\b)\w)",
    re.IGNORECASE,
)


def _clauses(sentence: str) -> list[str]:
    """A sentence that describes before it asks ("the lines are hard wrapped at 80 columns, please don't
    do that in markdown") is read as its description and its request."""
    stripped = _strip_lead(sentence)[0]
    if _QUOTATION.match(stripped):
        return [sentence]
    for match in _CLAUSE_BREAK.finditer(sentence):
        rest = sentence[match.end() :]
        # "named export pls, we dont do default exports here": the request and its reason;
        # "pin the image and don't run it as root": two requests.
        if content_words(sentence[: match.start()]) and (
            _JUSTIFICATION.match(rest) or (match.group(0).strip().lower() == "and" and _NEGATIVE.match(rest))
        ):
            return [sentence[: match.start()], rest]
    if _starts_imperative(stripped):
        return [sentence]
    for match in _CLAUSE_BREAK.finditer(sentence):
        rest, head = sentence[match.end() :], _strip_lead(sentence[: match.start()])[0]
        # "wtf are you doing, read the docs first": a rhetorical head, then the request
        if _RHETORIC.match(head) and _starts_imperative(rest) and len(content_words(rest)) >= 2:
            return [sentence[: match.start()], rest]
    for match in _CLAUSE_BREAK.finditer(sentence):
        rest = sentence[match.end() :]
        head = sentence[: match.start()]
        first = re.split(r"[.,;:!?]", rest, maxsplit=1)[0]
        described = _starts_descriptive(_strip_lead(head)[0])
        if described and content_words(head) and _DIRECTIVE_START.match(rest) and content_words(first):
            return [head, rest]
    return [sentence]


# "you forgot set -euo pipefail", "you missed the compact render path": what was left out is wanted.
_FORGOT = re.compile(
    r"^you (?:forgot|missed|skipped|left out|dropped|didn'?t (?:add|include|put in|use))(?: to)?\s+(.+)$",
    re.IGNORECASE,
)
# "you missed half of parser.py": how much was done, not a thing to include.
_PORTION = re.compile(
    r"^(?:half|part|most|some|parts|the rest|a few|a lot|a bunch|a couple)\b", re.IGNORECASE
)
# Questions that complain: "where is set -euo pipefail??" (wanted), "why is there a select * in here?"
# (unwanted), "why do the buttons have no label?" (wanted).
_WHERE = re.compile(
    r"^(?:so\s+)?(?:where(?:'s| is| are)|what about|what happened to)\s+(?:the\s+|my\s+|our\s+)?(.{2,80}?)[\s?!.]*$",
    re.IGNORECASE,
)
_WHY_THERE = re.compile(
    r"^why (?:is|are) there (?:still |again )?(.{2,80}?)(?:\s+(?:in here|here|again|still))*[\s?!.]*$",
    re.IGNORECASE,
)
# "why are you mocking the mailer?", "why did you delete the config file??": what the agent does is unwanted.
_WHY_DOING = re.compile(
    r"^why (?:are|do|did|would|have) you (?:keep |still |even |always )*(?P<x>[a-z][\w'-]* .{2,80}?)[\s?!.]*$",
    re.IGNORECASE,
)
_WHY_NO = re.compile(
    r"^why (?:do|does|is|are|did) .{1,60}? (?:have |get |with )?(?:no|without)\s+(.{2,60}?)[\s?!.]*$",
    re.IGNORECASE,
)
# "again no strict mode", "no testing section again", "still no tests": something wanted is missing.
_STILL_NO = re.compile(r"^still\s+(?=no\b)", re.IGNORECASE)
_ABSENT_TAIL = re.compile(r"\s+(?:again|yet|still)\s*[.!?]*$", re.IGNORECASE)

# Statements that set a rule rather than describe: "the data folder never goes into git",
# "invalid config must never crash the app", "every script needs set -euo pipefail", "we always run
# make lint before committing". They are habits when they come with friction, else memory.
_PLACEMENT = re.compile(
    r"^(?P<subject>.{2,80}?) (?:never|must not|mustn't|should not|shouldn't|may not|doesn'?t|don'?t|do not"
    r"|does not|can'?t|cannot) (?:ever )?(?:go|goes|get|gets|belong|belongs|end up|ends up)"
    r"(?: (?:committed|pushed|checked|put))? (?P<into>into|in|to|inside|onto) (?P<place>.{2,80})$",
    re.IGNORECASE,
)
_MODAL_RULE = re.compile(
    r"^(?P<subject>.{2,80}?) (?:must|should|may|can|shall) ?(?P<neg>never|not|n't)? (?P<rest>\w.{2,160})$",
    re.IGNORECASE,
)
_EVERY_NEEDS = re.compile(
    r"^(?P<subject>(?:every|each|all|any) .{2,60}?) (?:needs?|gets?|has to have|have to have|must have"
    r"|should have|requires?) (?P<object>.{2,120})$",
    re.IGNORECASE,
)
# "icon buttons need an aria-label", "migrations should have a down step": a need of a kind of thing (a
# bare plural), a rule when the message also complains, else a fact.
_KIND_NEEDS = re.compile(
    r"^(?P<subject>(?:[a-z][\w-]* ){0,3}[a-z][\w-]*s) (?:need|require|should have|must have|should get|must get)"
    r" (?P<object>.{2,120})$",
    re.IGNORECASE,
)
_WE_HAVE = re.compile(
    r"^(?:but )?we (?:already )?(?:have|got) (?:a |an |the |our )?(?P<x>[\w -]{2,40}?) (?:for (?:that|this|it)|already)"
    r"(?:,? (?:use|try) (?:it|that|them))?$",
    re.IGNORECASE,
)
# "we aren't to use cufft", "these tests are to use the generic interface ...": "be to" states an
# obligation (British English), as "must" does.
_ARE_TO = re.compile(
    r"(?:^|,\s+)(?P<subject>we|(?:these|the|all|our) (?:[\w-]+ ){0,2}[\w-]+s) (?P<neg>are not|aren'?t|are) to"
    r" (?P<rest>\w.{2,160})$",
    re.IGNORECASE,
)
_WE_ALWAYS = re.compile(
    r"^(?:we|i)(?: here| in this \w+)? (?P<how>always|never|don'?t|do not|usually|only) (?P<rest>.{3,200})$",
    re.IGNORECASE,
)

_REVERSAL_MARK = re.compile(
    r"\b(actually|from now on|going forward|any ?more|no longer|changed my mind|scratch that|after all)\b",
    re.IGNORECASE,
)
_LIFT_MARK = re.compile(r"\b(now|these days)\b", re.IGNORECASE)
_LIFT_REQUIRED = re.compile(
    r"^(?:you |we )?(?:no longer need to|don'?t need to|do not need to|don'?t have to|do not have to"
    r"|no need to|needn'?t|can stop|may stop)\s+(?P<x>.{3,160}?)(?:\s+(?:any ?more|now|from now on))*$",
    re.IGNORECASE,
)
_LIFT_BANNED = re.compile(
    r"^(?:(?:it'?s|it is) (?:fine|ok|okay|allowed) to|you (?:can|may) (?:now |go ahead and )?|feel free to"
    r"|go ahead and)\s+(?P<x>.{3,160}?)(?:\s+(?:now|again|from now on|after all))*$"
    r"|^(?P<y>.{3,120}?) (?:is|are) (?:fine|ok|okay|allowed)(?:\s+(?:now|again|from now on|after all))*$",
    re.IGNORECASE,
)
_REVERSAL_FILLER = re.compile(
    r"\b(actually|from now on|going forward|any ?more|after all|these days|now|changed my mind|scratch that)\b[\s,.;:!-]*",
    re.IGNORECASE,
)


def _normative(sentence: str) -> tuple[str, bool] | None:
    """A rule stated as a statement, worded as a directive, and whether it needs other friction in the
    message to count as one (a "we always ..." on its own may just describe how a team works)."""
    body = sentence.strip().rstrip(".!")
    if body.endswith("?") or _HEDGE.match(body):
        return None
    placed = _PLACEMENT.match(body)
    if placed and content_words(placed["subject"]):
        into = "into" if placed["into"].lower() in ("into", "to", "onto") else "in"
        return f"don't put {placed['subject']} {into} {placed['place']}", False
    every = _EVERY_NEEDS.match(body)
    if every:
        return f"make sure {every['subject']} has {every['object']}", False
    have = _WE_HAVE.match(body)
    if have and content_words(have["x"]):
        return f"use {have['x']}", True  # "we have a test inbox for that": a convention, with friction
    kind = _KIND_NEEDS.match(body)
    if kind and words(kind["subject"])[0] not in DETERMINERS | SUBJECTS and content_words(kind["subject"]):
        return f"make sure {kind['subject']} have {kind['object']}", True
    modal = _MODAL_RULE.match(body)
    if modal and not _starts_imperative(modal["subject"]) and words(modal["subject"])[:1] != ["you"]:
        general = bool(_GENERAL.search(modal["subject"]) or (modal["neg"] or "").lower() == "never")
        if modal["neg"] and general and known_verb(words(modal["rest"])[0] if words(modal["rest"]) else ""):
            return f"don't let {modal['subject']} {modal['rest']}", False
    bound = _ARE_TO.search(body)
    if bound and known_verb(words(bound["rest"])[0]):
        we, banned = bound["subject"].lower() == "we", bound["neg"].lower() != "are"
        if we and banned:  # "these tests are to use ..." specifies the task at hand
            return f"don't {bound['rest']}", False
    ours = _WE_ALWAYS.match(body)
    if ours and known_verb(words(ours["rest"])[0] if words(ours["rest"]) else "", typo=True):
        how = ours["how"].lower()
        negative = how in ("never", "don't", "dont", "do not")
        return ("don't " if negative else "always " if how == "always" else "") + ours["rest"], True
    return None


def _reversal(stripped: str, sentence: str) -> Reversal | None:
    """An explicit lifting or reversal of a rule; needs a marker such as "now", "actually", "anymore"."""
    strong = bool(_REVERSAL_MARK.search(sentence))
    if not (strong or _LIFT_MARK.search(sentence)) or _QUESTION.search(sentence):
        return None
    body = _REVERSAL_FILLER.sub(" ", stripped)
    body = re.sub(r"\s{2,}", " ", body).strip(" ,.;:!-")
    required = _LIFT_REQUIRED.match(body)
    if required:
        return Reversal(clean(required["x"]), -1, True)
    banned = _LIFT_BANNED.match(body)
    if banned:
        return Reversal(clean(banned["x"] or banned["y"]), 1, True)
    if (
        strong
        and _starts_imperative(body)
        and len(content_words(body)) >= 2
        and not _object_is_pronoun(clean(body))
    ):
        text = clean(body)
        negative = bool(_NEGATIVE.match(text) or _NO_THING.match(text))
        return Reversal(text, -1 if negative else 1, False)
    return None


def _absent(stripped: str, markers: set[str], before: str) -> str | None:
    """ "again no strict mode": a "no X" complaining that X is missing, not asking to avoid it. X must be
    unmentioned in the agent's previous reply (which did the thing otherwise)."""
    body = _STILL_NO.sub("", stripped)
    if not _NO_THING.match(body):
        return None
    if not ("again" in markers or body != stripped or _ABSENT_TAIL.search(body)):
        return None
    thing = _ABSENT_TAIL.sub("", body)[3:].strip(" .!?")
    thing = re.split(r"[,;:]| in | for | on ", thing, maxsplit=1)[0].strip()
    if not thing or not before:
        return None
    said = {stem(w) for w in content_words(before)}
    if any(stem(w) in said for w in content_words(thing)):
        return None
    return thing


_UNDO = re.compile(
    r"^(?:drop|remove|lose|get rid of|take out|leave out|strip)\s+(?:the |that |those |these |all )?(.+)$",
    re.IGNORECASE,
)


def _undoes(stripped: str, before: str) -> bool:
    """A calm request to remove what the agent's previous reply just added corrects it."""
    found = _UNDO.match(stripped)
    if not found or not before:
        return False
    thing = re.split(r"[,;:.]", found[1], maxsplit=1)[0]
    said = {stem(w) for w in content_words(before)}
    return any(stem(w) in said for w in content_words(thing))


def preference(text: str) -> str:
    """The habitual part of an instruction: "add pagination to it, type hints on everything like we
    always do" -> "type hints on everything"; "write a helper, typed as usual" -> "typed";
    "same style of tests please, table-driven" -> "table-driven tests"."""
    parts = [p.strip() for p in re.split(r",\s+|\s+and\s+|[.;:!]\s+", text) if p.strip()]
    for index, part in enumerate(parts):
        if not HABITUAL.search(part):
            continue
        rest = re.sub(r"\s{2,}", " ", HABITUAL.sub(" ", part)).strip(" ,.;:-")
        rest = re.sub(r"^(?:and|also|please|with)\s+|\s+(?:please|too)$", "", rest, flags=re.IGNORECASE)
        topic = re.match(r"^(?:of|for|in)\s+(.+)$", rest, re.IGNORECASE)
        if content_words(rest) and not topic and len(parts) > 1:
            return rest
        if topic and index + 1 < len(parts):
            return f"{_TRAIL.sub('', parts[index + 1])} {_TRAIL.sub('', topic[1])}".strip()
        if (topic or not content_words(rest)) and index > 0:
            return re.sub(r"^(?:and|also|with)\s+", "", parts[index - 1], flags=re.IGNORECASE)
        return rest or text
    return text


def _again_unwanted(stripped: str, markers: set[str], before: str) -> bool:
    """ "again console in library code", "again a mock db": a bare thing after "again" that the agent's
    previous reply did is unwanted ("again: imperative subjects", not in the reply, is wanted)."""
    if "again" not in markers or not before or _starts_imperative(stripped) or _NO_THING.match(stripped):
        return False
    found = words(stripped)
    if not found or found[0] in SUBJECTS or _MODAL.search(stripped) or len(content_words(stripped)) > 6:
        return False
    said = {stem(w) for w in content_words(before)}
    return any(stem(w) in said for w in content_words(stripped))


# A forwarded review finding ("The comment on line 779 states ... However, this is not accurate.
# Looking at handlePostTask (lines 899-917), ..."): long, about code locations and identifiers, and
# nobody in it speaks (no I/we/you, no "please", no "let's"). The user passes it on to be dealt with;
# its "never", "not" and "should" are the reviewer's description of this change, not a rule for the
# agent.
_SPEAKER = re.compile(
    r"\b(?:i|i'm|im|i've|i'd|i'll|me|my|we|we're|we've|we'll|us|our|you|you're|your|let's|lets|"
    r"please|pls|plz|here's)\b",
    re.IGNORECASE,
)
_CODE_PLACE = re.compile(
    r"\blines? \d+|\b\w+\.(?:go|py|ts|tsx|js|jsx|rs|java|rb|kt|swift|c|cc|cpp|h|cs|php|sh):\d+|"
    r"\b[a-z]+[A-Z]\w*\(|\b[A-Z][a-z]+[A-Z]\w+"
)
_QUOTED = re.compile(r'"[^"\n]{1,400}"|“[^”\n]{1,400}”')
MIN_FORWARDED_CHARS = 200


def forwarded(text: str) -> bool:
    """Whether a message reads as a forwarded review finding rather than the user's own words."""
    body = text.strip()
    spoken = _QUOTED.sub(" ", body)  # a quoted comment the reviewer proposes has its own "we"
    return (
        len(body) >= MIN_FORWARDED_CHARS
        and not _SPEAKER.search(spoken)
        and len(_CODE_PLACE.findall(body)) >= 2
    )


_DISCUSS_FIRST = re.compile(
    r"^\W*(?P<halt>(?:wait|hold on|hang on|stop|whoa|woah|pause)\b[\s,.!-]*)?(?:please\s+|ok(?:ay)?,?\s+)*"
    r"(?:(?:can|could|shall) we|let'?s|lets|we should|we need to|i'?d like to|i want to)\s+"
    r"(?:first\s+)?(?P<verb>talk|discuss|chat)\b[^.?!\n]{0,80}[.?!]*\s*$",
    re.IGNORECASE,
)


# "... dont add it yet..lets talk about it": asking to talk beside a hold-off (habitus.learn.standing)
_TALK_NOW = re.compile(
    r"(?:^|[\s.,;!?])(?P<halt>)(?:let'?s|lets|can we|could we|we should|we need to|i'?d like to)\s+(?:first\s+)?"
    r"(?P<verb>talk|discuss|chat)\b",
    re.IGNORECASE,
)


# The agent's instruction file: a rule the user asks to have written there is meant to last.
INSTRUCTION_FILE = re.compile(
    r"(?<![\w-])(?:claude|agents|gemini)[./]md\b|copilot-instructions\.md|\.cursorrules|\.windsurfrules",
    re.IGNORECASE,
)
# "yeah let's update CLAUDE.md but make sure ...", "add this to AGENTS.md: ...": the request to edit the
# file, before the rule to write into it.
_MEMO_LEAD = re.compile(
    r"^(?:(?:yeah|yes|ok(?:ay)?|sure|great|cool|good)[,.!]*\s+)?(?:let'?s|please|can you|could you|go ahead and)?"
    r"\s*(?:update|edit|add (?:this|that|it|a (?:note|rule|line)) to|put (?:this|that|it) (?:in|into)"
    r"|write (?:this|that|it) (?:in|into|down in)|note (?:this|that|it) in|document (?:this|that|it) in)"
    r"\s+(?:the\s+|our\s+)?(?:" + INSTRUCTION_FILE.pattern + r")(?:\s+file)?[\s,:;.-]*"
    r"(?!(?:and\s+)?(?:then|also|after|afterwards)\b)(?:(?:but|and|so|that|saying|to say)\s+)?(?=\w)",
    re.IGNORECASE,
)
# "... ように. claude.md", "..., add it to AGENTS.md": the file named after the rule, as its destination.
_MEMO_TAIL = re.compile(
    r"[.。、,;]\s*(?:(?:and\s+)?(?:add|put|write|note) (?:this|that|it) (?:to|in|into)\s+(?:the\s+)?)?"
    r"(?:" + INSTRUCTION_FILE.pattern + r")\s*(?:(?:に|へ)(?:追記|追加|書いて|記載)\S*)?[\s.!。]*$",
    re.IGNORECASE,
)


def read_message(
    user: str,
    *,
    outcome: str = "complete",
    assistant: str = "",
    before: str = "",
    recent: str = "",
    after_rejection: bool = False,
    opening: bool = False,
) -> Reading:
    """Friction markers, directives and facts in one user message (see the module docstring).

    `before` is the agent's previous reply (what the user reacts to), `recent` its last few replies;
    `after_rejection` says that the message follows a rejected tool use (a rule stated as a fact is
    then its reason); `opening` that it opens a session: the agent has done nothing yet to correct, so
    a "don't ..." or "always ..." there specifies the task unless the message also complains."""
    reading = Reading()
    text = user.strip()
    if outcome == "rejected" and not REJECTION.search(text):
        # The user rejected a tool use the agent made for this prompt: the rejection is evidence for
        # the correction that follows it, but the prompt was said before it ("I'd like two things:
        # ..." is a task, not a correction), so the prompt is read as any other.
        reading.rejection = True
    elif REJECTION.search(text):
        reading.rejection = reading.friction = True
        reading.markers.add("rejected")
        reason = _REJECTION_REASON.search(text)
        if reason:
            text = reason.group(1).strip()
        else:
            return reading
    text = pasted.own_words(text)  # a pasted log or diff is not what the user said
    if not text or forwarded(text):
        return reading
    memo = False
    if INSTRUCTION_FILE.search(text) and not _QUESTION.search(text):
        opened, named = _MEMO_LEAD.match(text), _MEMO_TAIL.search(text)
        memo = bool(opened or named)
        text = text[opened.end() if opened else 0 : named.start() if named else len(text)]
    talk = _DISCUSS_FIRST.match(text)
    held = talk is None and holds(text)
    if held:
        talk = _TALK_NOW.search(text)
    if talk is not None and (after_rejection or held or talk["halt"]):
        # "wait please let's talk about this" right after a rejected tool use, "hold on, can we
        # discuss what we're doing first?", "dont add it yet..lets talk about it": the user stops the
        # agent until the approach is agreed.
        verb = "discuss" if talk["verb"].lower().startswith("discuss") else "talk through"
        reading.friction = True
        reading.markers |= {"halt", "rejected"} if after_rejection else {"halt"}
        wanted = f"{verb} the approach with the user before making changes"
        # worded by the reader, as a repeated hold-off is: the gate scores such chat low (0.28)
        reading.directives.append(Directive(wanted, seed=True, score=5, marked=True, sure=held))
        return reading
    banned = foreign_prose(foreign.statements(text)) if foreign.is_foreign(text) else []
    # "better. no em dashes" bans a feature of prose; read as a swap it asks for "better" instead
    swap = replacement.find(text, before) if prose_rule(text) is None and not banned else None
    if swap is not None:  # read whole: word by word it inverts ("yarn again. bun." is not "use yarn")
        reading.friction = True
        reading.markers |= {"again" if swap.again else "no", "replacement"}
        if _FRUSTRATION.search(text):
            reading.markers.add("frustration")
        reading.directives.append(Directive(swap.text, seed=True, score=6, marked=True))
        return reading
    if banned:
        reading.friction = True  # "keine Gedankenstriche bitte": as "no em dashes", said once
        reading.markers |= {"prose", "foreign"}
        for sentence in banned[: foreign.MAX_DIRECTIVES]:
            reading.directives.append(
                Directive(sentence[:MAX_DIRECTIVE_CHARS], True, 4, marked=True, sure=True)
            )
        return reading
    other = foreign.corrections(text)
    remembered = foreign.fact(text) if foreign.is_foreign(text) else None
    # "übrigens, ...", "ちなみに...", "wir verwenden ..." inform; "merk dir: nie auf main pushen" asks, and
    # "wir pushen nie auf main" is a rule only with other friction (as in English).
    if remembered is not None and (other is None or not (other[1] - {"always"} or foreign.asks(text))):
        reading.facts.append(Fact(remembered[:MAX_FACT_CHARS], "fact"))
        return reading
    if other is not None:  # another language: its own markers, the user's own words
        found, marks = other
        reading.friction = True
        reading.markers |= marks | {"foreign"}
        for index, sentence in enumerate(found):
            reading.directives.append(Directive(sentence[:MAX_DIRECTIVE_CHARS], True, 4, marked=index == 0))
        return reading
    if _FRUSTRATION.search(text):
        reading.markers.add("frustration")
    if _TOLD.search(text):
        reading.markers.add("told")
    if _BLAME.search(text):
        reading.markers.add("blame")
    acknowledged = bool(_ACK.match(assistant or "")) and not any(
        _FACT_START.match(s) or _FACT_ANYWHERE.search(s) for s in sentences(text)
    )
    # (stripped clause, markers, question, directive made from a statement, rule needing friction, fact)
    candidates: list[tuple[str, set[str], bool, str | None, bool, Fact | None]] = []
    for sentence in sentences(text):
        fact = _fact(sentence, acknowledged)
        stripped_sentence = _strip_lead(sentence)[0]
        rule = _normative(_FACT_START.sub("", stripped_sentence) if fact else stripped_sentence)
        told = _FACT_START.match(sentence.strip())
        asked = told is not None and _starts_imperative(re.sub(r"^to\s+", "", sentence.strip()[told.end() :]))
        standing = _addressed(stripped_sentence)
        if fact is not None and rule is None and not asked and not (standing and "standing" in standing[1]):
            reading.facts.append(fact)
            continue
        if asked and told is not None:  # "remember: never push to main" asks, it does not inform
            sentence = re.sub(r"^to\s+", "", sentence.strip()[told.end() :])
            stripped_sentence = _strip_lead(sentence)[0]
        reversal = _reversal(stripped_sentence, sentence)
        if reversal is not None:
            reading.reversals.append(reversal)
            reading.markers.add("reversal")
            if reversal.lifting:
                continue  # "you don't need to ... anymore" asks for nothing new
        for clause in _clauses(sentence) if rule is None else [sentence]:
            stripped, markers = _strip_lead(clause)
            question = bool(_QUESTION.search(clause) or _ASKS_UNMARKED.match(stripped))
            addressed = _addressed(stripped)
            if addressed is not None:  # "you need to read X", "can you stop X", "from now on X"
                stripped, said, asks = addressed
                if "obliged" in said and not _reacts(stripped, recent or before):
                    said = said - {"obliged"}  # "you need to restart the server": advice for this task
                markers |= said
                question = question and not asks
            made: str | None = None
            needs_friction = False
            if rule is None and (prose := prose_rule(stripped)) is not None:
                made = prose  # "no emdashes", "it shouldnt sound so AI generated": how to write, always
                markers.add("prose")
            elif rule is not None:
                made, needs_friction = rule
                if not needs_friction:
                    markers.add("rule")  # "X never goes into git", "X must never ...": prohibitive
            elif (forgot := _FORGOT.match(stripped)) and not _PORTION.match(forgot[1]):
                missing = forgot[1]
                made = missing if _starts_imperative(missing) else f"include {missing}"
                markers.add("blame")
            elif question and (place := _WHERE.match(stripped) or _WHY_NO.match(stripped)):
                made = f"include {place[1]}"
                markers |= {"missing", "asked"}
            elif question and (unwanted := _WHY_THERE.match(stripped)):
                made = f"no {unwanted[1]}"
                markers |= {"unwanted", "asked"}
            elif question and (doing := _WHY_DOING.match(stripped)):
                made = f"don't {doing['x']}"
                markers |= {"unwanted", "asked"}
            elif _again_unwanted(stripped, markers, before):
                made = f"no {stripped}"  # "again console in library code" after the agent logged again
                markers |= {"unwanted", "asked"}
            else:
                missing = _absent(stripped, markers, before)
                if missing is not None:
                    made = f"include {missing}"
                    markers |= {"missing", "asked"}  # inferred: may join a habit, never starts one
            if made is None and (_NEGATIVE.match(stripped) or _NO_THING.match(stripped)):
                markers.add("negative")
            if made is None and _STOP.match(stripped):
                markers.add("stop")
            if _FRUSTRATION.search(clause):
                markers.add("frustration")
            if made is None and rule is None and _JUDGEMENT.search(clause):
                markers.add("judgement")
            if (
                made is None
                and _AGAIN_TAIL.search(stripped)
                and len(words(stripped)) <= 5
                and not _starts_imperative(stripped)
                and (not _starts_descriptive(stripped) or words(stripped)[0] == "you")
            ):
                markers.add("again")  # "root again.", "default exports again?!"; not "run it again"
            if (
                made is None
                and _ALWAYS.search(HABITUAL.sub(" ", stripped))
                and not _starts_descriptive(stripped)
            ):
                markers.add("always")  # "never log from library code"; not "like we always do"
            if made is None and not markers and _undoes(stripped, recent or before):
                markers.add("undo")  # "drop the summary at the end" right after the agent added one
            reading.markers |= markers
            candidates.append((stripped, markers, question, made, needs_friction, fact))
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
        "missing",
        "unwanted",
        "rule",
        "undo",
        "judgement",
        "obliged",
        "standing",
        "prose",
    }
    reading.friction = bool(reading.markers & friction_markers)
    if opening and not reading.markers & (friction_markers - {"negative", "always", "stop", "obliged"}):
        reading.friction = False  # "implement the login page. don't use external libraries"
    if not reading.friction and any(
        _CONTRAST_FRICTION.search(made or stripped) and _against(made or stripped, recent or before)
        for stripped, _, q, made, _, _ in candidates
        if not q and not (made is None and (_IF_REPORT.match(stripped) or _HEDGE.match(stripped)))
    ):
        # "read the full file, not just the top of it" corrects even without a "no".
        reading.friction = True
        reading.markers.add("contrast")
    if after_rejection and any(c[3] is not None for c in candidates):
        reading.friction = True
        reading.markers.add("rejected")
    loose: list[str] = []
    marked_loose: list[str] = []
    lead: list[str] = []
    context = ""
    for stripped, markers, question, made, needs_friction, fact in candidates:
        if made is not None and needs_friction and not reading.friction:
            if fact is None:
                fact = _fact_of(stripped)
            if fact is not None:
                reading.facts.append(fact)  # "we always deploy on fridays", said calmly: memory
            continue
        if made is not None:
            directive = _directive(made, markers | {"made"}, False, friction=reading.friction)
            if directive is not None and "prose" in markers:
                directive = dataclasses.replace(directive, sure=True)
        else:
            verdict = "judgement" in reading.markers
            directive = _directive(stripped, markers, question, friction=reading.friction, verdict=verdict)
        if directive is None:
            marked = bool(markers & {"no", "again", "told", "frustration"})
            if reading.friction and len(content_words(stripped)) >= 2:
                if not question or marked:
                    loose.append(_unsworn(stripped))
                    if marked:
                        marked_loose.append(_unsworn(stripped))
                if not reading.directives and marked:
                    lead.append(clean(stripped))  # "again printing from library code?!": what it is about
            if not question and content_words(stripped):
                context = clean(stripped)
            continue
        referent = bool(context or reading.directives or reading.instructions)  # what a pronoun can name
        if _object_is_pronoun(directive.text) and referent:
            about = context
            # "bare errors are useless. wrap them with context", "pin the image and don't run it as
            # root": the pronoun names what the message already said, the rest is general.
            seed = directive.seed or (_qualified(directive.text) and not NARROW.search(directive.text))
            directive = Directive(
                directive.text, seed, directive.score, directive.habitual, directive.marked, about
            )
        if reading.friction:
            reading.directives.append(directive)
        else:
            reading.instructions.append(directive)
    if holds(text):
        # "dont make any changes yet..lets just analyze", "any other naming ideas..dont change anything
        # just yet": the user wants to talk before the agent acts, so the message's requests are this
        # discussion's (habitus.learn.local counts the holds themselves); a ban on a feature of prose
        # or a correction with its own marker said beside one still stands.
        reading.directives = [d for d in reading.directives if d.sure or (d.marked and not holds(d.text))]
        reading.instructions = [d for d in reading.instructions if d.sure]
        return reading
    if not reading.friction and not reading.instructions and not reading.facts:
        # A calm request in another language, which the English reader above cannot parse: an
        # instruction that may start a candidate only through the meaning gate (habitus.learn.local).
        reading.instructions = [Directive(s[:MAX_DIRECTIVE_CHARS], True, 4) for s in foreign.requests(text)]
    if memo and any(
        d.seed and not INSTRUCTION_FILE.search(d.text) for d in reading.directives + reading.instructions
    ):
        # A rule the user asks to have written into the agent's instruction file ("yeah let's update
        # CLAUDE.md but make sure claude asks before running the e2e tests", "...ように. claude.md"):
        # said calmly and once, it is meant as a standing rule (not "add a code map to AGENTS.md").
        reading.markers.add("memo")
    reading.lead = " ".join(lead)[:MAX_DIRECTIVE_CHARS]
    if reading.friction:  # with directives, only the sentences that carry their own marker
        reading.loose = [
            x[:MAX_DIRECTIVE_CHARS] for x in (loose if not reading.directives else marked_loose) if x
        ]
    return reading


_PREPOSITION = _set("as with like using via without before after into in on for from to when")
_PLAIN = re.compile(r"^[a-z][a-z'-]*$")
# "wrap it like the others": points at earlier work, it does not say what the rule is.
_ELSEWHERE = _set("other others rest before usual last previous ones earlier")


_PRONOUN_TAIL = re.compile(
    r"^(?:(?:don'?t|dont|do not|never|always|please|just)\s+)*[\w-]+\s+(?:it|them|this|that|these|those)\s+"
    r"(?P<prep>[a-z]+)\s+(?P<rest>[^,.;:!?()]+)",
    re.IGNORECASE,
)


def _qualified(text: str) -> bool:
    """A pronoun object followed by a general qualifier: "wrap them with context", "don't run it as
    root"; not "run it again", "put it in coding-agent/test", "open it for me"."""
    found = _PRONOUN_TAIL.match(text.strip())
    if not found or found["prep"].lower() not in _PREPOSITION:
        return False
    phrase: list[str] = []
    for token in found["rest"].split():
        if token.lower() in _PREPOSITION:
            break
        phrase.append(token)
    general = [w for w in phrase if w.lower() not in STOPWORDS | PRONOUN_OBJECTS | _ELSEWHERE]
    return bool(general) and all(_PLAIN.match(w) for w in phrase)


_NEGATED_TAIL = re.compile(r",\s*not\s+(?:just\s+|only\s+)?([^,.;!?]+)", re.IGNORECASE)


def _against(text: str, before: str) -> bool:
    """ "X, not Y" corrects when it rules out what the agent just did (Y is in its reply), says "not
    just/only", or states a rule ("always ... here, not after"); else it specifies a task ("make the api
    return 404 for missing users, not 500")."""
    if re.search(r"\bnot (?:just|only)\b", text, re.IGNORECASE) or _GENERAL.search(text):
        return True
    if re.search(r"\b(?:here|in this (?:repo|codebase|project))\b", text, re.IGNORECASE):
        return True
    negated = _NEGATED_TAIL.search(text)
    if not negated or not before:
        return False
    said = {stem(w) for w in content_words(before)} | set(before.lower().split())
    return any(stem(w) in said or w in said for w in content_words(negated[1]))


_OBLIGED = re.compile(
    r"^(?:you (?:really |always |just )?(?:need to|have to|must|should|gotta|ought to|are supposed to|'re supposed to)"
    r"|you're supposed to|i (?:want|need|'d like|would like) you to|i'd like you to|make sure (?:that )?you)"
    r"\s+(?P<x>.+)$",
    re.IGNORECASE,
)
_OBLIGED_NOT = re.compile(
    r"^(?:you (?:really |just )?(?:shouldn'?t|should not|should never|must not|mustn'?t|must never|are not supposed to"
    r"|aren'?t supposed to|'re not supposed to)|you're not supposed to|i don'?t want you to|i do not want you to)"
    r"\s+(?P<x>.+)$",
    re.IGNORECASE,
)
_POLITE_ASK = re.compile(r"^(?:can|could|would|will) you (?:please |pls )?(?P<x>.+?)[\s?]*$", re.IGNORECASE)
_FUTURE = re.compile(
    r"^(?:from now on|going forward|moving forward|in the future|next time|for the future|for future reference)"
    r"[\s,:;-]+(?:please\s+)?(?P<x>.+)$",
    re.IGNORECASE,
)


_RULE_WORDS = re.compile(r"\b(?:always|never|every|each|whenever|before|first|any|all)\b", re.IGNORECASE)


def _reacts(text: str, before: str) -> bool:
    """A request that states a rule ("... before editing it") or names what the agent just did."""
    if _RULE_WORDS.search(text):
        return True
    said = {stem(w) for w in content_words(before)}
    return any(stem(w) in said for w in content_words(text) if known_verb(w) is None)


# A rule's scope that makes it standing rather than part of one task. "everywhere" and "across the
# codebase" only with a verb of habit (`_HABIT_VERBS`): "rename foo to bar everywhere" is one task.
_STANDING_SCOPE = re.compile(
    r"\b(?:wherever|whenever)\s+(?:we|you|it|possible|appropriate|applicable|feasible)\b|\bgoing forward\b|"
    r"\bfrom now on\b|\bas a rule\b|\b(?:everywhere|across the (?:whole |entire )?(?:codebase|code base|"
    r"repo|repository|project))\b",
    re.IGNORECASE,
)
_PART = re.compile(r"\s[-–—]\s+|;\s*")
_WIDE_SCOPE = re.compile(r"\beverywhere\b|\bacross the\b", re.IGNORECASE)
_HABIT_VERBS = _set("use prefer stick follow keep write spell name stay")
_WE_DO = re.compile(
    r"^(?:(?:let'?s|lets)\s+)?(?:(?:make sure|ensure)\s+)?(?:that\s+)?we(?:'re|\s+are|\s+should(?:\s+be)?|"
    r"\s+must(?:\s+be)?|\s+need\s+to(?:\s+be)?|\s+have\s+to(?:\s+be)?|\s+always)?\s+(?P<x>[a-z][\w-]*\b.*)$",
    re.IGNORECASE,
)


def _base_verb(word: str) -> str | None:
    """ "using" -> "use", "use" -> "use"; None for a word that is not a known verb."""
    if word in VERBS:
        return word
    if word.endswith("ing") and len(word) >= 5:
        base = word[:-3]
        for candidate in (base, base + "e", base[:-1] if len(base) > 2 and base[-1] == base[-2] else ""):
            if candidate in VERBS:
                return candidate
    return None


def _addressed(stripped: str) -> tuple[str, set[str], bool] | None:
    """A request put to the agent in other words: (the imperative it asks for, markers, whether a
    question form is a request). "you need to read the whole file" -> "read the whole file";
    "you're not supposed to edit generated files" -> "don't edit generated files"; "can you stop
    adding docstrings?" -> "stop adding docstrings" (a request, not a question); "next time, run the
    linter" -> "run the linter" (a rule for the future)."""
    if found := _OBLIGED_NOT.match(stripped):
        return f"don't {found['x']}", {"obliged"}, True
    if (found := _OBLIGED.match(stripped)) and _starts_imperative(found["x"]):
        return found["x"], {"obliged"}, True
    if (found := _FUTURE.match(stripped)) and _starts_imperative(found["x"]):
        return found["x"], {"always"}, True
    for part in _PART.split(stripped) if _STANDING_SCOPE.search(stripped) else ():
        # "we should be using the strong types instead of string wherever we can", "let's make sure
        # we're using US English everywhere": a standing rule stated for the team, not one task.
        found = _WE_DO.match(part)
        if found is None or not (scopes := _STANDING_SCOPE.findall(part)):
            continue
        first, _, rest = found["x"].partition(" ")
        verb = _base_verb(first.lower())
        wide_only = all(_WIDE_SCOPE.match(scope) for scope in scopes)
        if verb is not None and (verb in _HABIT_VERBS or not wide_only):
            return f"{verb} {rest}".strip(), {"standing"}, True
    if (found := _POLITE_ASK.match(stripped)) and (
        _NEGATIVE.match(found["x"]) or _ALWAYS.match(found["x"]) or _STOP.match(found["x"])
    ):
        return found["x"], set(), True
    return None


def _unsworn(text: str) -> str:
    """Loose friction as the user said it, minus swearing and markers: unlike a directive it keeps a
    trailing "wrap them" (what it is about, when it joins a habit; it never words one)."""
    text = _strip_lead(_PROFANITY.sub("", text))[0]
    return re.sub(r"\s{2,}", " ", text).strip(" ,;:-")[:MAX_DIRECTIVE_CHARS]


def _fact_of(sentence: str) -> Fact | None:
    body = re.sub(r"\s{2,}", " ", sentence).strip(" ,;:-")
    if len(content_words(body)) < 2:
        return None
    body = body[:MAX_FACT_CHARS]
    kind = "preference" if _PREFERENCE.search(body) else "decision" if _DECISION.search(body) else "fact"
    return Fact(body[0].upper() + body[1:], kind)


_NEGATED_CLAUSE = re.compile(r",\s*(?:no|not|never)\s+\w", re.IGNORECASE)


# "i think the queued messages component doesn't adhere to ...", "i don't think invalidate works": a
# hedged opinion reports a problem, it does not ask for a behaviour.
_HEDGE = re.compile(
    r"^(?:i|we)\s+(?:do\s*n[o']?t\s+|don'?t\s+)?(?:think|tink|thinkg|believe|guess|suppose|feel|reckon|assume"
    r"|doubt|wonder|understand|hate|love)\b",
    re.IGNORECASE,
)


_IF_REPORT = re.compile(r"^(?:if|when|whenever)\s+(?:i|we|you|it|the|they|someone)\b", re.IGNORECASE)
# "ideally every time you run the bench it saves a report to /bench/reports": what the program does each
# time, a requirement on the product (its main clause's subject is the program), not on the agent.
_PRODUCT_DOES = re.compile(
    r"^(?:ideally|preferably|basically|so)?,?\s*(?:every (?:single )?time|each time|whenever|when) (?:you|we|i|someone"
    r"|people|users?|the user)\b[^,.;]{1,80}?,?\s+(?:it|this|that|the (?:\w+ ){0,2}?\w+)\s+"
    r"(?!(?:has|is|was|does)\b)[a-z]+s\b",
    re.IGNORECASE,
)


_NOT_THE_AGENT = re.compile(r"\bnot (?:you|me)\b", re.IGNORECASE)
_ANSWERS = _set("sure yes yeah yep ok okay right fine")
_ONE_COMMAND = re.compile(r"^(?:just\s+)?(?:run|execute|type|call)\s+`[^`]{3,}`", re.IGNORECASE)


def _directive(
    stripped: str, markers: set[str], question: bool, *, friction: bool, verdict: bool = False
) -> Directive | None:
    """`verdict`: the message judges what the agent did ("... are useless"), so a bare noun phrase
    beside it ("named exports only") asks for the alternative."""
    if question or not stripped or _QUOTATION.match(stripped) or _HEDGE.match(stripped):
        return None
    if "judgement" in markers:
        return None  # the verdict itself ("bare errors are useless") asks for nothing
    if _IF_REPORT.match(stripped) and not _MODAL.search(stripped):
        return None  # "if i change the theme, not everything updates": what happens, not a request
    if _PRODUCT_DOES.match(stripped):
        return None
    made = "made" in markers  # worded by the reader from a statement, a question or "you forgot ..."
    habitual = bool(HABITUAL.search(stripped))
    phrase = False
    if habitual and not (friction or made):
        kept = preference(stripped)
        phrase = kept != stripped  # an appendix to a request: "add pagination, type hints like always"
        stripped = kept  # "add pagination, type hints like we always do" -> "type hints"
    text = clean(stripped)
    if len(content_words(text)) < (1 if habitual else 2):
        return None
    imperative = _starts_imperative(text)
    general = bool(_GENERAL.search(stripped))
    descriptive = _starts_descriptive(text)
    # beside a verdict only a short phrase asks ("named exports only"), not a line of output
    corrected = bool(markers & {"no", "again", "told", "obliged"}) or (verdict and len(words(text)) <= 6)
    accepted = (
        made
        or imperative
        or (general and not descriptive)  # "rgb hex values in themes, always"
        or (bool(_MODAL.search(text)) and general)  # "invalid config must never crash the app"
        or (corrected and not descriptive and not _MODAL.search(text))  # "I told you, snapshot before ..."
        or (habitual and not descriptive)  # "same style of tests, table-driven"
        # "one sentence per line, no hard wrapping" in a correction: a wanted thing against an unwanted one
        or (friction and not descriptive and bool(_NEGATED_CLAUSE.search(text)) and not _MODAL.search(text))
        # "the tests should hit a real database, not mocks": a norm against what was done
        or (
            friction
            and bool(_MODAL.search(text) and _CONTRAST_FRICTION.search(text))
            and words(text)[0] not in SUBJECTS
            # "sure, but the cli should handle that for the user, not you": who does the work, no rule
            and not _NOT_THE_AGENT.search(text)
            and words(text)[0] not in _ANSWERS
        )
    )
    if not accepted:
        return None
    # "run `entire enable --telemetry false --agent claude`, that will set up everything": one exact
    # command for this task, unless the sentence says when it applies ("always run `make lint` first")
    narrow = (
        bool(NARROW.search(text))
        or _object_is_pronoun(text)
        or bool(_ONE_COMMAND.match(text) and not general)
    )
    score = (
        3 * imperative
        + 2 * general
        + 2 * bool(_NEGATIVE.match(text) or _NO_THING.match(text))
        + bool(_CONTRAST.search(text))
        + _verb_led(text)
        - 2 * narrow
        - len(text) // 120
    )
    marked = made or bool(
        markers & {"no", "again", "told", "negative", "stop", "judgement"} or _ALWAYS.search(stripped)
    )
    if made:
        score -= 2  # the user's own imperative words, when there are any, make the better wording
    return Directive(
        text,
        seed=not narrow and not markers & {"asked", "undo"},  # these alone never start a habit
        score=score,
        habitual=habitual,
        marked=marked,
        phrase=phrase,
    )


def _stated(body: str) -> bool:
    """A plain statement about the project ("main is protected, merges need two approvals", "the staging
    db is reset every night"): not a question, a request, a report of a problem or about the speakers."""
    found = words(body)
    if not found or body.rstrip().endswith("?") or _starts_imperative(body) or _PROBLEM.search(body):
        return False
    if not re.match(r"^[A-Za-z]+\b(?![\d_./:-])", body.strip()):
        return False  # "81a2be is what link text is": a value read off the screen, not a fact
    if found[0] in SUBJECTS - {"we", "this", "there", "it"} or found[0] in ("so", "ok", "okay", "cool"):
        return False
    return (found[0] in ("the", "our", "we") or len(content_words(body)) >= 3) and bool(_STATES.search(body))


def _fact(sentence: str, acknowledged: bool) -> Fact | None:
    body = sentence.strip()
    marked = _FACT_START.match(body)
    if marked:
        body = body[marked.end() :]
    elif _FACT_ANYWHERE.search(body) and not body.rstrip().endswith("?"):
        body = _FACT_ANYWHERE.sub(" ", body)
    elif _PROJECT_STATEMENT.match(_strip_lead(body)[0]) or (acknowledged and _stated(_strip_lead(body)[0])):
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
