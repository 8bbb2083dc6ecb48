"""How the local judge reads a prompt: quoted material out, clauses, mood, and the action verb.

Pure standard library and deterministic. The rules follow the labelling rules of
tests/fixtures/select/README.md, stated generally (no habit or case is named here):

- a habit applies when the current prompt asks, now, for the condition's action on its object;
- quoted or pasted text (quotes, backticks, code fences, `>` lines) is a mention, never a request;
- talk about the habits themselves is never a trigger;
- a negated clause ("don't ...", "no need to ...", "leave ... alone") and a hypothetical or future one
  ("if ...", "suppose ...", "we'll ...", "at some point ...") is not a request;
- a question for information ("what did ...", "which ...", "how big ...") asks about the object, it does
  not ask for the condition's action; a past-tense question never triggers;
- the same object with another action is a near miss ("remove the debug prints" is not "adding debug
  output"): both verbs are looked up in a small lexicon of software-work actions and must agree;
- an imperative after a comma is a request of its own, and one whose object is a pronoun ("the man page
  has a typo, fix it", "if the upload blows up, handle it") is a request about the words before it;
  a negated pointer back ("... but ignore them") negates them.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from functools import cache

from habitus.lang import grammar, pasted
from habitus.lang.language import language_of
from habitus.lang.words import ENGLISH_STOP_WORDS, stem, word_set
from habitus.select import moods
from habitus.select.vocab import canonical

# -- verbs ----------------------------------------------------------------------------------------

# action class -> verbs (base forms, comma-separated; multi-word verbs allowed). A verb that is not
# here is unknown and never causes a near-miss rejection: the lexicon only removes matches, except that
# an agreeing verb lets a lower similarity count (see judge.py).
_LEXICON = {
    "create": "write, create, add, make, generate, draft, compose, introduce, implement, define, scaffold, "
    "insert, cover, pull in, set up, build, design, give, declare, leave, put, document, mock, stub, "
    "record, store, save, persist, connect, hook up, wire, wire up, integrate, show, display",
    "modify": "edit, change, update, modify, rename, tweak, adjust, rewrite, refactor, reword, replace, "
    "convert, rework, restructure, reformat, format, move, extend, configure, split, extract, inline, "
    "simplify, optimize, optimise, speed up, translate, port, pin, wrap, tidy up, tidy, polish, harden, "
    "tighten, loosen, restyle, recolour, recolor",
    "fix": "fix, repair, debug, resolve, solve, sort out, handle, troubleshoot, investigate, diagnose, "
    "look into, patch, catch, trap, address, reproduce, bisect",
    "inspect": "read, go through, look at, view, cat, explain, summarise, summarize, describe, "
    "walk through, study, skim, examine, list, count, find, search, grep, locate, tell, measure, "
    "compare, show me, profile, benchmark, diff, trace, look",
    "review": "review, critique, assess, evaluate, audit, look over",
    "delete": "delete, remove, rm, drop, erase, purge, wipe, prune, clean up, get rid of, strip, tear down, "
    "uninstall, trash",
    "revert": "revert, undo, roll back, rollback, reset, restore, downgrade",
    "merge": "merge, rebase, cherry-pick",
    "commit": "commit",
    "amend": "amend, squash, fixup",
    "push": "push, force-push, upload, sync",
    "fetch": "pull, fetch, download, clone, check out, checkout, switch to",
    "run": "run, execute, apply, deploy, roll out, roll, migrate, launch, trigger, rerun, restart, regenerate, "
    "rebuild, recompile, compile, bundle, minify",
    "stop": "stop, kill, cancel, abort, shut down",
    "toggle": "disable, enable, turn off, turn on, comment out, mute, silence",
    "bump": "bump, increment",
    "upgrade": "upgrade, bring up to date",
    "install": "install, reinstall, vendor",
    "release": "release, ship, publish, tag",
    "open": "open, submit, raise",
    "close": "close, approve, reject, label, assign",
    "verify": "verify, validate, confirm, test, check that, make sure, check, lint, type-check, typecheck",
    "choose": "choose, pick, select, decide on",
    "plan": "plan, estimate, propose, suggest, brainstorm, outline, discuss, think about, consider",
    "copy": "copy, duplicate, backup, back up, dump, export, archive",
    "call": "call",
}
VERB_CLASSES: dict[str, tuple[str, ...]] = {
    cls: tuple(v.strip() for v in verbs.split(",")) for cls, verbs in _LEXICON.items()
}

# Pairs of different classes that can still be one request (an implied action): committing includes
# writing its message, editing can be done by adding, a bump is a kind of upgrade, reviewing reads.
COMPATIBLE: frozenset[frozenset[str]] = frozenset(
    frozenset(pair)
    for pair in (
        ("create", "modify"),
        ("create", "commit"),
        ("create", "amend"),
        ("create", "fix"),
        ("modify", "fix"),
        ("modify", "upgrade"),
        ("modify", "bump"),
        ("bump", "upgrade"),
        ("inspect", "review"),
        ("fix", "review"),
        ("run", "release"),
        ("release", "call"),
        ("verify", "call"),
        ("verify", "review"),
        ("choose", "create"),
        ("choose", "modify"),
    )
)

_IRREGULAR = {
    "write": ("wrote", "written", "writing"),
    "make": ("made", "making"),
    "run": ("ran", "running"),
    "give": ("gave", "given", "giving"),
    "find": ("found",),
    "tell": ("told",),
    "build": ("built",),
    "put": ("putting",),
    "set up": ("setting up",),
    "get rid of": ("got rid of", "getting rid of"),
    "rm": (),
    "cat": (),
    "leave": ("left", "leaving"),
}


def _forms(base: str) -> set[str]:
    """Inflected forms of a (possibly multi-word) verb: the head word gets -s, -ed, -ing."""
    head, _, rest = base.partition(" ")
    tail = f" {rest}" if rest else ""
    out = {base, *_IRREGULAR.get(base, ())}
    if base in _IRREGULAR and not _IRREGULAR[base]:
        return out
    if head.endswith("e") and not head.endswith("ee"):
        stems = [head[:-1] + "ing", head + "s", head + "d"]
    elif head.endswith("y") and head[-2:-1] not in "aeiou":
        stems = [head + "ing", head[:-1] + "ies", head[:-1] + "ied"]
    elif head.endswith(("s", "sh", "ch", "x", "z")):
        stems = [head + "ing", head + "es", head + "ed"]
    elif re.fullmatch(r"[^aeiou]*[aeiou][bdgmnpt]", head) and head not in ("open", "audit"):
        stems = [head + head[-1] + "ing", head + "s", head + head[-1] + "ed"]
    else:
        stems = [head + "ing", head + "s", head + "ed"]
    out.update(s + tail for s in stems)
    return out


@cache
def _verb_index() -> tuple[dict[str, str], re.Pattern[str]]:
    index: dict[str, str] = {}
    for cls, verbs in VERB_CLASSES.items():
        for verb in verbs:
            for form in _forms(verb):
                index.setdefault(form, cls)
    alternatives = sorted(index, key=len, reverse=True)
    pattern = re.compile(r"\b(" + "|".join(re.escape(a) for a in alternatives) + r")\b")
    return index, pattern


def verb_class(word: str) -> str | None:
    return _verb_index()[0].get(word.lower())


# A request whose action always includes another: committing writes the commit message.
IMPLIES: frozenset[tuple[str, str]] = frozenset({("commit", "create")})


def same_action(clause: str | None, condition: str | None) -> bool:
    """The clause asks for the condition's (known) action, or for one that always includes it."""
    if condition in (None, UNKNOWN):
        return False
    return clause == condition or (clause, condition) in IMPLIES


def compatible(a: str | None, b: str | None) -> bool:
    """True unless both actions are known and differ in a way no request combines."""
    if a is None or b is None or UNKNOWN in (a, b):
        return True
    return a == b or frozenset((a, b)) in COMPATIBLE


# -- conditions -----------------------------------------------------------------------------------

UNKNOWN = "?"  # an action condition whose verb is not in the lexicon


@dataclass(frozen=True)
class Condition:
    """A condition as the judge sees it: its action class (UNKNOWN for an action verb the lexicon does
    not know, None for an event such as "a test fails") and an imperative rewording ("writing a commit
    message" -> "write a commit message")."""

    action: str | None
    request: str

    @property
    def event(self) -> bool:
        return self.action is None

    @property
    def objects(self) -> frozenset[str]:
        return object_stems(canonical(self.request))

    @property
    def predicate(self) -> str | None:
        """An event's verb stem ("a test fails" -> "fail"): the first third-person verb after its subject."""
        if not self.event:
            return None
        words = re.findall(r"[a-z]+", self.request.lower())
        for before, word in itertools.pairwise(words):
            if word.endswith("s") and not word.endswith(("ss", "us", "is")) and before not in _DETERMINERS:
                return stem(word)
        return None


@cache
def condition(text: str) -> Condition:
    """Read a condition with the shared When/Do grammar, then name its action with the verb lexicon: an
    activity whose verb the lexicon does not know is UNKNOWN, never an event ("When about to start a
    release" asks for an action, so a plain question about releases does not trigger it)."""
    read = grammar.situation(text)
    body = read.body
    if not body.split():
        return Condition(None, text)
    index, pattern = _verb_index()
    found = pattern.match(body.lower())
    if found is None:
        return Condition(UNKNOWN if read.activity else None, body)
    form = found.group(1)
    cls = index[form]
    base = _base_form(form)
    return Condition(cls, base + body[len(form) :])


@cache
def _base_form(form: str) -> str:
    for verbs in VERB_CLASSES.values():
        for verb in verbs:
            if form in _forms(verb):
                return verb
    return form


# -- prompts --------------------------------------------------------------------------------------

_QUOTED = re.compile(
    r"```.*?(?:```|\Z)"  # fenced code (to the end if unclosed; not "$": that ends at a line's end)
    r"|`[^`\n]*`"  # inline code
    r"|\"[^\"\n]{2,}\""  # "double quotes"
    r"|“[^”\n]{2,}”|„[^“”\n]{2,}[“”]|«[^»\n]{2,}»|‘[^’\n]{2,}’"
    r"|(?<![\w'])'[^'\n]{2,}?'(?![\w'])"  # 'single quotes' (not apostrophes)
    r"|^[ \t]*>[^\n]*$",  # quoted e-mail / chat lines
    re.DOTALL | re.MULTILINE,
)

_META = re.compile(r"\b(habits?|habitus|gewohnheit(en)?|h[áa]bitos?|habitudes?)\b", re.IGNORECASE)


def unquote(text: str) -> tuple[str, int]:
    """The prompt without quoted or pasted material (each span becomes "…"), and how many spans. The
    words inside a paste (habitus.lang.pasted: logs, traces, diffs, code) are what the user shows, not
    what they ask for: a traceback naming an exception is no request about catching exceptions."""
    out, count = _QUOTED.subn(" … ", text)
    out, blocks = pasted.cut(out)
    return out, count + blocks


def is_meta(text: str) -> bool:
    """The prompt talks about habits themselves (list, approve, disable, why one was injected)."""
    return _META.search(text) is not None


_SPLIT = re.compile(
    r"(?:[.!?;]+(?=\s|$)|\n+|:\s+(?=\w)|,\s*(?=(?:so|but|and then|then|also|and after that|after that|"
    r"afterwards|plus|if|when|unless)\b))",
    re.IGNORECASE,
)
_CONJ = re.compile(
    r"^\s*(?:and\s+then|and\s+after\s+that|after\s+that|afterwards|and\s+also|also|and|but|then|so|plus|"
    r"or|aber|und|dann|y|pero|luego)\b[\s,]*",
    re.IGNORECASE,
)
_POLITE = re.compile(
    r"^\s*(?:(?:please|pls|plz|kindly|just|now|quickly|first|finally|ok|okay|alright|right|"
    r"can you|could you|would you|will you|would you mind|can u|could u|i want you to|i need you to|"
    r"i'd like you to|i would like you to|you should|you can|go ahead and|let's|lets|let us|"
    r"we should|we need to|we have to|we must|you need to|you have to|you must|"
    r"do|bitte|por favor|quick q)\b[\s,:]*)+",
    re.IGNORECASE,
)

_NEGATED = re.compile(
    r"^\s*(?:(?:please\s+)?(?:don'?t|do\s+not|dont|never|no|not|nothing|stop|skip|forget|ignore|avoid|"
    r"without|hold\s+off|nicht|kein\w*|nunca|sin)\b"
    r"|(?:we|i|you)(?:'re|\s+are|'m|\s+am)?\s+(?:not|never)\b"
    r"|(?:we|i|you)\s+(?:don'?t|do\s+not|won'?t|will\s+not|shouldn'?t|should\s+not)\b"
    r"|(?:there'?s|there\s+is)\s+no\b)"
    r"|\bleave\b.{0,60}\balone\b|\bkeep\b.{0,20}\b(?:hands|fingers)\s+off\b"
    r"|^\s*leave\s+(?:it|them|that|this|those|these)\b(?:\s+(?:be|as\s+is|as\s+it\s+is))?[\s.!]*$"
    r"|\bno\s+need\b|\bnot\s+(?:now|yet|needed|necessary|required)\b",
    re.IGNORECASE,
)
_HYPOTHETICAL = re.compile(
    r"\b(?:if|what\s+if|suppose|supposing|imagine|hypothetical(?:ly)?|would|might|someday|some\s+day|"
    r"one\s+day|at\s+some\s+point|eventually|in\s+the\s+future|ever|in\s+case|"
    r"(?:we|i|you|they)(?:'ll|\s+will|\s+shall|'d)|(?:going|gonna|planning|plan)\s+to|"
    r"wenn|falls|irgendwann|si|alg[úu]n\s+d[íi]a|alguna\s+vez|quiz[áa]s?)\b"
    r"|^\s*(?:when|once|whenever)\b",
    re.IGNORECASE,
)
_PAST = re.compile(
    r"\b(?:did|was|were|had|last\s+(?:time|week|month|year|night|release)|yesterday|ago|"
    r"used\s+to|back\s+then)\b",
    re.IGNORECASE,
)
_WH = re.compile(
    r"^\s*(?:what|which|how|why|where|who|whose|whom|was|welche\w*|wie|warum|qu[ée]|cu[áa]l\w*|"
    r"c[óo]mo|por\s+qu[ée])\b",
    re.IGNORECASE,
)
_INFO = re.compile(
    r"^\s*(?:explain|describe|tell\s+me)\s+(?:what|why|how|the\s+difference|whether)\b", re.IGNORECASE
)


# A clause that starts with a subject (not a verb) states something; it requests an action only with
# a modal of need ("should", "needs to", "I want").
_SUBJECT = re.compile(
    r"^\s*(?:the|a|an|our|my|your|his|her|their|its|this|that|these|those|it|it's|i|i'm|we|we're|you|"
    r"they|he|she|there|here|someone|somebody|everyone|nobody|all|some|each|every|one|"
    r"\S*[._/\\#0-9]\S*)\b",
    re.IGNORECASE,
)
_WANTS = re.compile(
    r"\b(?:should|shall|must|needs?|has\s+to|have\s+to|want|wants|wanna|would\s+like|'d\s+like|"
    r"make\s+sure|ought\s+to|can\s+you|could\s+you)\b",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Clause:
    """One clause of the prompt. `mood`: request (may trigger), or negated, hypothetical, question,
    past (never triggers an action condition). `action` is the class of its leading verb, if known."""

    text: str
    mood: str
    action: str | None
    about: str | None = None  # where its object words come from, when not from all of text

    @property
    def plain(self) -> str:
        """The clause in plain words (`vocab.canonical`): what a reworded request most likely means."""
        return canonical(self.text)

    @property
    def objects(self) -> frozenset[str]:
        """Object words of the clause, and its verb's own stem ("commit this" is about a commit). A
        confirmed offer takes them from the offered action only, not from the message around it."""
        return object_stems(canonical(self.about) if self.about else self.plain, keep_verb=True)


def clauses(text: str) -> list[Clause]:
    """Split the (unquoted) prompt into clauses and classify each: by the English rules, or for a prompt
    not read as English, into pieces with their mood by `moods` (negated, hypothetical or request)."""
    out = []
    for piece in _SPLIT.split(text):
        piece = piece.strip(" \t,-–—")
        if not re.search(r"\w", piece):
            continue
        for part in _split_comma(piece):
            if isinstance(part, Clause):
                out.append(part)
            else:
                out.extend(_classify(p) for p in _split_and(part))
    found = _resolve_pronouns(out)
    language = language_of(text)
    if language == "english":
        return found
    out = []
    for clause in found:
        read = moods.pieces(clause.text, language)
        if len({mood for _, mood in read}) == 1:  # one mood throughout: the clause stays whole
            out.append(Clause(clause.text, read[0][1], clause.action))
        else:
            out.extend(Clause(piece, mood, leading_action(piece)) for piece, mood in read)
    return out


_BARE = re.compile(
    r"^\s*[a-z][a-z-]*(?:\s+(?:up|out|in|into|through|at|on|with|over|down))?\s+"
    r"(?:it|that|this|them|those|these)(?:\s+(?:up|out|in|through|please|now|too|as\s+well))*[\s.!]*$",
    re.IGNORECASE,
)


def _resolve_pronouns(found: list[Clause]) -> list[Clause]:
    """A bare "<verb> it" ("sort it out", "fix that") is about the clause before it: the two become one
    request with the later verb, unless the earlier one is negated or hypothetical."""
    out: list[Clause] = []
    for clause in found:
        previous = out[-1] if out else None
        absorbs = previous is not None and (
            previous.mood in ("statement", "question")
            or (previous.mood, previous.action) == ("request", None)
        )
        if (
            absorbs
            and clause.mood == "request"
            and clause.action is not None
            and _BARE.match(canonical(clause.text))
        ):
            out[-1] = Clause(f"{previous.text}. {clause.text}", "request", clause.action)  # type: ignore[union-attr]
        elif absorbs and clause.mood == "negated" and _REFERS_BACK.search(clause.text):
            # "the CI is red. not my problem, ignore it": what "it" names is negated too
            out[-1] = Clause(f"{previous.text}. {clause.text}", "negated", clause.action)  # type: ignore[union-attr]
        else:
            out.append(clause)
    return out


# A negated clause that only points back ("ignore it", "don't fix them", "leave that")
_REFERS_BACK = re.compile(
    r"\b[a-z']+\s+(?:it|them|that|this|those|these)(?:\s+[a-z']+){0,2}[\s.!]*$", re.IGNORECASE
)


# A clause after a comma that starts with an imperative verb is a request of its own: "the man page
# has a typo, fix it", "if the upload blows up, handle it". When its object is a pronoun, the words
# before the comma say what it is about, so the whole sentence is the request.
_PRONOUN = re.compile(r"^\s*(?:it|that|this|them|those|these|one)\b", re.IGNORECASE)
_FAR_FUTURE = re.compile(
    r"\b(?:ever|someday|some\s+day|one\s+day|suppose|supposing|imagine|what\s+if|would|might|"
    r"hypothetical(?:ly)?|in\s+the\s+future|at\s+some\s+point|eventually|in\s+case|"
    r"(?:we|i|you|they)(?:'ll|\s+will|\s+shall|'d)|(?:going|gonna|planning|plan)\s+to|tomorrow|later|"
    r"next\s+(?:week|month|quarter|year|sprint|release|time))\b",
    re.IGNORECASE,
)


def _imperative_at(rest: str) -> tuple[str, str] | None:
    """(verb class, what follows the verb) when `rest` starts with a known imperative verb."""
    index, pattern = _verb_index()
    lead = _POLITE.sub("", _CONJ.sub("", rest.lower(), count=1), count=1)
    for form in (canonical(lead), lead):
        found = pattern.match(form)
        if found is None or re.match(r"\w", form[found.end() : found.end() + 1] or " "):
            continue
        if found.group(1) not in VERB_CLASSES[index[found.group(1)]]:
            return None  # an inflected form ("added", "fixes") after a comma is no imperative
        return index[found.group(1)], form[found.end() :]
    return None


def _split_comma(piece: str) -> list[str | Clause]:
    """Cut the piece before each ", <imperative verb> ..."; a tail whose object is a pronoun takes the
    words before it along (one request about them)."""
    parts: list[str | Clause] = []
    start = 0
    for match in re.finditer(r",\s+", piece):
        if match.start() < start:
            continue
        rest = piece[match.end() :]
        found = _imperative_at(rest)
        if found is None:
            continue
        action, after = found
        if _PRONOUN.match(after):
            head, tail = piece[start : match.start()], rest
            mood = _classify(tail).mood
            if mood == "request" and _FAR_FUTURE.search(head):
                mood = "hypothetical"
            parts.append(Clause(piece[start:].strip(), mood, action))
            return parts
        if piece[start : match.start()].strip():
            parts.append(piece[start : match.start()])
        start = match.end()
    if piece[start:].strip():
        parts.append(piece[start:])
    return parts


def _split_and(piece: str) -> list[str]:
    """Split "X and <verb> Y" into two clauses; a plain "A and B" list stays one clause."""
    parts, start = [], 0
    for match in re.finditer(r"\s+(?:and|but|&|\+)\s+", piece):
        rest = _POLITE.sub("", _CONJ.sub("", piece[match.end() :].lower(), count=1))
        if leading_action(rest) is not None or _NEGATED.match(rest):
            parts.append(piece[start : match.start()])
            start = match.end()
    parts.append(piece[start:])
    return [p for p in (x.strip() for x in parts) if p]


def _classify(raw: str) -> Clause:
    text = _CONJ.sub("", raw, count=1)
    lead = _POLITE.sub("", text, count=1)
    if _NEGATED.search(lead) or _NEGATED.search(text):
        mood = "negated"
    elif _HYPOTHETICAL.search(lead):
        mood = "hypothetical"
    elif (_WH.match(lead) or _INFO.match(lead)) and _PAST.search(lead):
        mood = "past"
    elif _WH.match(lead) or _INFO.match(lead):
        mood = "question"
    elif re.match(r"^\s*(?:did|was|were|had)\b", lead, re.IGNORECASE):
        mood = "past"
    elif _SUBJECT.match(lead) and not _WANTS.search(lead):
        mood = "statement"
    else:
        mood = "request"
    return Clause(lead.strip() or text.strip(), mood, leading_action(lead))


def leading_action(text: str) -> str | None:
    """The class of the verb text starts with, read as written or in plain words ("sort out" = fix)."""
    index, pattern = _verb_index()
    for form in (canonical(text).lstrip(), text.lower().lstrip()):
        found = pattern.match(form)
        if found and not re.match(r"\w", form[found.end() : found.end() + 1] or " "):
            return index[found.group(1)]
    return None


# -- follow-ups -----------------------------------------------------------------------------------
# An acceptance of the agent's offer ("yes please", "sí, adelante") is read in every language by
# `habitus.select.followup`; what stays here are the English continuations that name their own verb or
# object ("handle them", "same for the light theme") and the English rejections.

_REJECT = re.compile(
    r"^\s*(?:no|nope|nah|not\s+yet|not\s+now|don'?t|do\s+not|never\s*mind|stop|wait|hold\s+on|"
    r"leave\s+it|skip\s+it|nein|no,)\b",
    re.IGNORECASE,
)
_SAME = re.compile(
    r"^\s*(?:(?:ok|okay|great|good|now|and)[\s,]+)*(?:(?:do\s+)?the\s+same|same)\s+(?:for|with|on)\s+(.+)$",
    re.IGNORECASE,
)
_PRONOUN_REQUEST = re.compile(
    r"^\s*(?:(?:ok|okay|yes|yeah|sure|fine|great|good|alright)[\s,.!]+)*(?:please\s+)?"
    r"(?P<verb>[a-z][a-z-]+(?:\s+(?:up|out|in|through))?)\s+(?:it|them|that|those|this|these)\b[\s.!]*$",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Followup:
    """What a short follow-up prompt refers to. `kind`: confirm (an accepted offer), reject, continue,
    or none; `request` the borrowed request and `action` its verb class."""

    kind: str
    request: str = ""
    action: str | None = None
    about: str | None = None  # the offered action alone, when there was an offer

    def clause(self) -> Clause:
        return Clause(self.request, "request", self.action, self.about)


def followup(prompt: str, context: list[str]) -> Followup:
    """Resolve "handle them" / "same for X" against the prior messages (an acceptance of an offer is
    `habitus.select.followup`'s).

    Only a prompt that continues, with no content of its own beyond a pronoun, borrows its request from
    the context; a rejection or deferral never does, and a prompt with its own object is judged on its
    own.
    """
    if not context:
        return Followup("none")
    text = prompt.strip()
    if _REJECT.match(text):
        return Followup("reject")
    last = unquote(context[-1])[0]
    same = _SAME.match(text)
    if same:
        return Followup("continue", f"{last} {same.group(1)}", first_action(last))
    pron = _PRONOUN_REQUEST.match(text)
    if pron:
        verb = verb_class(pron.group("verb"))
        if verb is not None:
            return Followup("continue", f"{pron.group('verb')} {last}", verb)
    return Followup("none")


def first_action(text: str) -> str | None:
    """The class of the first known verb in text (an offer or a report of what was done)."""
    found = _verb_index()[1].search(text.lower())
    return _verb_index()[0][found.group(1)] if found else None


# -- objects --------------------------------------------------------------------------------------

_DETERMINERS = frozenset(
    "a an the this that these those its their our your my some any every each".split()  # noqa: SIM905
)
# Words that say nothing about what a condition is about.
_STOP = ENGLISH_STOP_WORDS | word_set(
    """after against another anything ask asks before code current every existing get gets given got her
    his if new now old one ones please shall shown something tell used user users using want wants
    whenever without"""
)
# Abbreviations and spellings folded to one word, so "PR" meets "pull request".
_ALIASES = {
    "pr": "pull request",
    "prs": "pull requests",
    "mr": "merge request",
    "db": "database",
    "dbs": "databases",
    "prod": "production",
    "deps": "dependencies",
    "dep": "dependency",
    "dir": "directory",
    "dirs": "directories",
    "folder": "directory",
    "folders": "directories",
    "msg": "message",
    "repo": "repository",
    "env": "environment",
    "config": "configuration",
    "colors": "colours",
    "color": "colour",
    "docs": "documentation",
    "doc": "documentation",
    "func": "function",
    "fn": "function",
    "lib": "library",
    "libs": "libraries",
    "pkg": "package",
    "ci": "ci",
    "dockerfile": "dockerfile",
    "sh": "shell",
    "bash": "shell",
    "zsh": "shell",
}
_PATHLIKE = re.compile(r"^[\w.~-]*(?:/[\w.~-]*)+/?$|^[\w-]+\.[a-z][a-z0-9]{0,5}$", re.IGNORECASE)


# Nouns too general to show that two texts are about the same object ("fix the file" vs "edit the CI
# workflow file"); they count only for a condition whose object is nothing more specific.
_GENERIC_WORDS = (
    "file",
    "files",
    "directory",
    "directories",
    "folder",
    "code",
    "thing",
    "stuff",
    "part",
    "line",
    "change",
)


@cache
def generic() -> frozenset[str]:
    """Stems of GENERIC_WORDS (computed on first use: stemming loads the Snowball stemmer)."""
    return frozenset(stem(w) for w in _GENERIC_WORDS)


def specific(objects: frozenset[str]) -> frozenset[str]:
    return objects - generic()


def object_stems(text: str, *, keep_verb: bool = False) -> frozenset[str]:
    """Content-word stems of text without its leading verb (unless keep_verb): stopwords left out; a
    path or file name counts as "file" (and a path ending in / as "directory")."""
    out: set[str] = set()
    found = _verb_index()[1].match(text.lower().lstrip())
    if found:
        if keep_verb:
            out.update(stem(w) for w in _base_form(found.group(1)).split() if w not in _STOP)
        text = text.lstrip()[found.end() :]
    for raw in re.findall(r"[\w./~-]+", text):
        token = raw.strip(".-").lower()
        if not token:
            continue
        if _PATHLIKE.match(token) and ("." in token or "/" in token):
            out.add("directory" if token.endswith("/") else "file")
            # and its folder and file names, so ".github/workflows/ci.yml" also says workflow and ci
        for word in (w for part in re.split(r"[_/.-]+", token) for w in _ALIASES.get(part, part).split()):
            if word in _STOP or len(word) < 2 or word.isdigit():
                continue
            out.add(stem(word))
    return frozenset(out)
