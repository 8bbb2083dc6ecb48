"""Standing rules that the word rules of habitus.learn.text cannot read from one sentence.

Two shapes of real sessions (blind set analyze_real_e, where a user building a game said them again and
again and never as an imperative):

- **Repeated**: a hold-off ("dont make any changes yet", "what are your ideas before you make any
  changes", "lets decide on the things first") or a complaint about one quality of what the agent
  shows or writes ("17px is too small still", "way too many words in the feedback", "it just feels
  like too much"). Said once, each is about this task; said in two prompts or more of a batch, the user
  has a standing preference, worded for the quality (`KINDS`) since the complaint names no behaviour.
- **A style rule about written output**: "no emdashes", "i dont like the staccato short sentences",
  "it shouldnt sound so AI generated". A ban on a feature of prose (`_PROSE`) is general by what it
  names, said once; the meaning gate, trained on how rules about code are said, scores these like
  chat (0.08-0.45), so they pass it as a rule for the instruction file does.

Each kind of repeated prompt is recognised in English and by a few words in German, French, Spanish,
Portuguese, Italian, Japanese and Chinese. Matching a kind never reads the prompt as friction by itself:
the local analyzer (habitus.learn.local) counts the prompts of each kind in a batch.
"""

from __future__ import annotations

import re

_F = re.IGNORECASE | re.UNICODE

# Hold off now: change nothing yet, this message is for talking.
_HOLD_NOW = re.compile(
    r"\b(?:don'?t|dont|do not|pls don'?t)\s+(?:make|do|implement|change|add|edit|touch|write|code|start|build)\b"
    r"[^.?!\n]{0,40}?\b(?:yet|for now|until)\b"
    r"|\b(?:don'?t|dont|do not)\s+(?:implement|make any changes|change anything|edit anything)\b"
    r"|\bnoch nicht (?:ändern|implementieren|umsetzen|anfassen)\b"
    r"|\bne (?:change|modifie|touche|code|implémente) (?:rien|pas)\b[^.?!\n]{0,30}\b(?:encore|pour l'instant)\b"
    r"|\bno (?:cambies|toques|implementes|modifiques|mude|altere|cambiare|toccare)\b[^.?!\n]{0,30}"
    r"\b(?:todavía|aún|ainda|ancora|por ahora)\b"
    r"|まだ(?:変更|実装|修正|編集|コード)(?:し|は)|先别(?:改|动|写|实现)",
    _F,
)
# Hold off: change nothing until the approach is agreed (now, or before changes in general).
_HOLD = re.compile(
    _HOLD_NOW.pattern
    # "what are your ideas before you make any changes"; not "read the whole file before you change it"
    + r"|\b(?:discuss\w*|talk|ask|ideas?|options?|propos\w+|plan|explain|tell me|show me|check with me)\b"
    r"[^.?!\n]{0,60}\bbefore (?:you |we )?(?:make|making|implement|implementing|change|changing|edit|editing"
    r"|start coding)\b"
    r"|\b(?:discuss|decide|talk|agree|align)\b[^.?!\n]{0,40}\bfirst\b"
    r"|\bwithout (?:deciding|discussing|agreeing|talking|checking) (?:it |this )?(?:with|to) me\b"
    r"|\berst (?:besprechen|klären|diskutieren)\b|\b(?:discutons|décidons|parlons)[^.?!\n]{0,30}\bd'abord\b"
    r"|\bprimero (?:discutamos|decidamos|hablemos)\b|\bprimeiro (?:vamos )?(?:discutir|decidir)\b"
    r"|(?:まず|先に)(?:相談|話し合|決め)|先(?:讨论|商量)",
    _F,
)
# Too small to read.
_SMALL = re.compile(
    r"\btoo (?:small|tiny)\b|\b(?:needs?|has|have) (?:it |them |those |this |these )?to be "
    r"(?:a (?:little|bit|lot) |much |way )?(?:bigger|larger)\b"
    r"|\bzu klein\b|\btrop petit|\bdemasiado pequeñ|\bmuito pequen|\btroppo piccol|小さすぎ|太小",
    _F,
)
# Too long, too many words.
_LONG = re.compile(
    r"\btoo (?:long|wordy|verbose)\b(?![^.?!\n]{0,20}\b(?:to|takes?|took|taking|running|wait|build|load))"
    r"|\btoo (?:many|much) (?:words|text|lines|sentences|paragraphs)\b|\btoo much to read\b"
    r"|\bzu lang\b|\bzu viel text\b|\btrop long|\btrop de texte\b|\bdemasiado largo|\bmuito longo"
    r"|\btroppo lung|長すぎ|文字が多すぎ|太长",
    _F,
)
# Too complicated.
_COMPLEX = re.compile(
    r"\btoo (?:complicated|complex|convoluted|confusing|hard|difficult)\b"
    r"|\btoo much to (?:understand|consume|grasp|take in|follow)\b"
    r"|\btoo many (?:details|things|steps|concepts|variables|ideas|options)\b"
    r"|\b(?:feels?(?: like)?|is|are|it'?s|its|that'?s|thats) (?:just |way |far |a bit |a little )?too much\b"
    r"(?! (?:to read|words|text)\b)"
    r"|\bzu kompliziert\b|\btrop compliqué|\bdemasiado complicad|\bmuito complicad|\btroppo complicat"
    r"|複雑すぎ|难懂|太复杂",
    _F,
)

# kind -> (pattern, the standing rule in words the phrasing reads: "<do> when/before <situation>")
KINDS: dict[str, tuple[re.Pattern[str], str]] = {
    "hold": (_HOLD, "discuss the approach with the user before making changes"),
    "small": (_SMALL, "make text and labels big enough to read when writing text the user reads"),
    "long": (_LONG, "keep it short and use few words when writing text the user reads"),
    "complex": (_COMPLEX, "keep it simple and use plain words when designing what the user sees"),
}
MIN_PROMPTS = 2  # prompts of one kind in a batch that make it a standing preference


def holds(text: str) -> bool:
    """Whether the prompt asks the agent to change nothing yet ("dont implement yet"), so that what else
    it asks belongs to the discussion; "ask me before you change the public api" is a rule, no hold."""
    return _HOLD_NOW.search(text) is not None


_ASKED = re.compile(r"[^.?!\n？]*[?？]")  # "too long? too short?" asks the user's opinion of a choice


def kinds(text: str) -> set[str]:
    """The kinds of repeated prompt this prompt is one of (usually none); its questions are not read."""
    said = _ASKED.sub(" ", text)
    return {kind for kind, (pattern, _) in KINDS.items() if pattern.search(said)}


# Features of prose the agent writes: named in a ban, they make the ban general ("no emdashes").
_PROSE = (
    r"em[- ]?dash(?:es)?|en[- ]?dash(?:es)?|emojis?|exclamation (?:marks?|points?)|semicolons?"
    r"|bullet(?: points?|ed lists?)?|buzzwords?|jargon|filler(?: words| lines)?"
    r"|staccato(?: short)?(?: sentences)?|staccatto|choppy (?:short )?sentences|short choppy sentences"
    r"|marketing (?:speak|language)|corporate speak|passive voice|title case"
)
_BAN = re.compile(
    r"(?:^|[.,;:+&]\s*|\s[-–—]\s*|\b(?:and|but|also)\s+)(?:(?:and|also|but|please|pls)\s+)*(?P<ban>(?:no+|no more|don'?t use|dont use|do not use|never use|avoid"
    r"|(?:i|we) (?:don'?t|dont|do not) (?:like|want|use)|(?:i|we) hate)\s+(?:the\s+|any\s+|those\s+)?"
    r"(?:" + _PROSE + r"))\b(?=\s*(?:$|[.,;:!)+&]|please|pls|anywhere|ever|in\b|at all))",
    _F,
)
_BANNING = re.compile(
    r"^(?:no+|no more|don'?t use|dont use|do not use|never use|avoid|(?:i|we) (?:don'?t|dont|do not) (?:like|want|use)"
    r"|(?:i|we) hate)\s+(?:(?:the|any|those)\s+)?",
    _F,
)
_PLACE = re.compile(
    r"\s+in (?!(?:it|them|this|that|there|here)\b)(?:the |your |our |any )?[\w -]{2,40}?(?=\s*(?:$|[.,;:!]|please|pls))",
    _F,
)
_SOUNDS = re.compile(
    r"\b(?:it|this|that|the (?:\w+ ){0,2}\w+|they|these|those)\s+(?:shouldn'?t|shouldnt|should not|must not|mustn'?t)\s+sound"
    r"\s+(?:so\s+|too\s+|like\s+)?(?P<x>(?:ai|a\.i\.|robot|machine|chatgpt|llm)[\w -]{0,20}?)\s*(?:[.,!;]|$)",
    _F,
)


def prose_rule(sentence: str) -> str | None:
    """A ban on a feature of the prose the agent writes, as a directive in the user's words, else None.
    "no emdashes" -> "no emdashes in text you write"; "it shouldnt sound so AI generated" -> "do not
    write text that sounds AI generated"."""
    text = sentence.strip().rstrip(".!")
    ban = _BAN.search(text)
    if ban is not None:
        thing = _BANNING.sub("", ban["ban"])
        place = _PLACE.match(text[ban.end() :])  # "no emoji in commit messages": where the user said
        return f"no {thing} {place[0].strip() if place else 'in text you write'}"
    sounds = _SOUNDS.search(text)
    if sounds is not None:
        return f"do not write text that sounds {sounds['x'].strip()}"
    return None


# The same in other languages: a ban word and a feature of prose in one sentence, kept in the user's
# words as foreign corrections are (habitus.learn.foreign).
_PROSE_FOREIGN = (
    r"gedankenstrich\w*|emojis?|ausrufezeichen|tirets? cadratins?|points? d'exclamation|guion(?:es)? largos?"
    r"|travess(?:ão|ões)|trattin[oi] lung[oh]i?|emoji|ダッシュ|絵文字|感嘆符|破折号|表情符号|感叹号|emoji"
)
_BAN_FOREIGN = re.compile(
    r"(?:(?:\b(?:keine?|ohne|pas de|sans|sin|sem|nada de|niente|senza)\s+|\bpas d')(?:\w+\s+){0,2}?(?:"
    + _PROSE_FOREIGN
    + r"))|(?:(?:"
    + _PROSE_FOREIGN
    + r")\S{0,4}(?:使わない|使用しない|なし|禁止|はやめ))|(?:(?:不要|别|不用|禁止)(?:用|使用|加)?\S{0,3}(?:"
    + _PROSE_FOREIGN
    + r"))"
    r"|\bnach (?:ki|ai) klingen|\bsonner comme (?:une )?(?:ia|ai)\b|\bsonar (?:a|como) (?:una )?(?:ia|ai)\b"
    r"|\bsoar como (?:uma )?(?:ia|ai)\b|(?:ai|ＡＩ)っぽ|ai味|像ai",
    _F,
)


def foreign_prose(sentences: list[str]) -> list[str]:
    """The sentences of a message in another language that ban a feature of prose ("keine
    Gedankenstriche bitte", "絵文字は使わないで", "不要用破折号", "der Text darf nicht nach KI klingen")."""
    return [s for s in sentences if _BAN_FOREIGN.search(s)]
