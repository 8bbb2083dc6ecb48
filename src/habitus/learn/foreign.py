"""Corrections in other languages than English: German, Spanish, French, Portuguese, Italian, Russian,
Japanese and Chinese.

The English sentence reader (`habitus.learn.text`) knows English grammar; a correction such as "nein,
lies immer die ganze Datei, bevor du sie änderst" or "違う、mainに直接pushしないで" would pass it by.
Here a message in another language is a correction when it carries a correction marker of its
language: a leading "no" ("nein", "non", "não", "нет", "違う", "不对"), "again" ("schon wieder",
"otra vez", "опять", "また", "又"), "I told you", or a rule word ("immer/nie", "siempre/nunca",
"toujours/jamais", "sempre/nunca", "всегда/никогда", "必ず/絶対", "总是/不要"). Its directives are
the sentences that hold a rule word or follow the marker, in the user's own words: the habit keeps
their language (the When/Do frame stays English; select compares meanings with the embedder).

Pure standard library.
"""

from __future__ import annotations

import re
from functools import lru_cache

from habitus.lang.language import is_english, language_of
from habitus.lang.words import STOP_WORDS, tokens

_FLAGS = re.IGNORECASE | re.UNICODE

# A leading interjection that says "no" / "wrong".
_NO = re.compile(
    r"^\s*(?:nein|nee|nö|no+|non|não|nao|нет|неа|не так|違う|ちがう|いや|だめ|ダメ|不对|不是|错了|不)"
    r"(?=[\s,.;:!?。、，！？；：]|$)[\s,.;:!?。、，！？；：]*",
    _FLAGS,
)
_AGAIN = re.compile(
    r"\b(?:schon wieder|wieder|nochmal|otra vez|de nuevo|encore|à nouveau|de nouveau|de novo|outra vez"
    r"|novamente|di nuovo|ancora una volta|опять|снова)\b|また|又",
    _FLAGS,
)
_TOLD = re.compile(
    r"\b(?:ich hab(?:e)? (?:dir |es )?(?:doch )?(?:schon )?gesagt|wie oft noch|te (?:lo )?dije|ya te dije"
    r"|cuántas veces|je (?:te )?l'ai (?:déjà )?dit|je t'ai dit|combien de fois|eu (?:já )?(?:te )?disse"
    r"|já te disse|quantas vezes|te l'ho (?:già )?detto|quante volte|я же говорил|я говорил|сколько раз)\b"
    r"|言ったでしょ|言ったよね|何度も|我说过|说了多少次|跟你说过",
    _FLAGS,
)
# Rule words: always, never, don't (as an imperative), must not. Polite words ("bitte", "por favor")
# and plain negation ("ça ne marche pas" reports a bug) are not among them.
_RULE = re.compile(
    r"\b(?:immer|stets|nie|niemals|auf keinen fall|siempre|nunca|jamás|jamas|toujours|jamais|sempre|nunca"
    r"|jamais|mai più|всегда|никогда|нельзя|ни в коем случае)\b"
    r"|必ず|絶対|決して|いつも|常に|しないで|ないでください|するな|总是|始终|务必|永远|绝不|不要|别再|千万别",
    _FLAGS,
)
# Words that ask for something: modals and "please". A sentence kept only because the user repeats
# themselves ("again", "I told you") must ask; otherwise it is a complaint about what went wrong ("the
# build is red again"), and quoting it as the behaviour would tell the agent to do the wrong thing.
_ASK = re.compile(
    r"\b(?:bitte|soll|sollst|sollen|sollte|solltest|muss|musst|müssen|habe? gesagt|por favor|debes|deberías"
    r"|tienes que|hay que|il faut|tu dois|vous devez|merci de|s'il te plaît|s'il vous plaît|deve|deves|devia"
    r"|tem que|tens de|precisa|per favore|devi|bisogna|пожалуйста|нужно|надо|должен|должна|следует)\b"
    r"|てください|して下さい|すること|しなさい|してね|请|应该|必须|要先",
    _FLAGS,
)
# "always" words also describe ("der Server stürzt immer ab", "la página siempre tarda"): a sentence
# that opens with an article or a subject pronoun reports what happens unless it asks (a modal, "bitte").
_ALWAYS_WORD = re.compile(
    r"\b(?:immer|stets|siempre|toujours|sempre|всегда)\b|いつも|常に|总是|始终|老是", _FLAGS
)
_SUBJECT_START = re.compile(
    r"^\s*(?:der|die|das|den|dem|ein|eine|einen|es|er|sie|ich|wir|man|mein|meine|unser|unsere|dein|deine"
    r"|el|la|los|las|un|una|unos|unas|mi|mis|su|sus|yo|él|ella|esto|este|esta|eso"
    r"|le|les|l'|une|des|il|elle|ils|elles|je|nous|on|mon|ma|mes|ce|cet|cette|ça"
    r"|o|os|as|um|uma|ele|eu|nós|meu|minha|isso|isto"
    r"|lo|gli|uno|io|lui|lei|noi|questo|questa)\b",
    _FLAGS,
)
# A sentence opening with a rule word is a rule in its language even where the guess says English
# ("nunca hagas force push a main": the tool words outnumber the Spanish ones).
_RULE_START = re.compile(
    r"^\s*(?:nie|niemals|nunca|jamás|jamais|никогда|immer|siempre|toujours|sempre|всегда)\s+\w", _FLAGS
)
_SENTENCE = re.compile(r"(?<=[.!?])\s+|(?<=[。！？])\s*|\n+|;\s+|；")  # "console.log" is one word
_TRAIL = re.compile(r"[\s,.;:!?。、，！？；：…]+$")
MIN_CHARS = 6
MAX_DIRECTIVES = 3


@lru_cache(maxsize=4096)  # each message is asked about several times in a row
def statements(text: str) -> list[str]:
    """The sentences of a text in any of these languages that are no questions, without trailing
    punctuation."""
    parts = (s.strip() for s in _SENTENCE.split(text.strip()))
    return [t for s in parts if not s.endswith(("?", "？")) and (t := _TRAIL.sub("", s))]


def is_foreign(text: str) -> bool:
    if _RULE_START.match(text) or _AGAIN.search(text) or _TOLD.search(text):
        return True  # "otra vez usaste var. usa siempre const": too few stop words to tell
    return not is_english(text)


def corrections(text: str) -> tuple[list[str], set[str]] | None:
    """(directives in the user's words, markers) of a correction in another language, or None."""
    if not text.strip() or not is_foreign(text):
        return None
    markers: set[str] = set()
    body = text.strip()
    lead = _NO.match(body)
    if lead:
        markers.add("no")
        body = body[lead.end() :]
    reminder = _FACT_START.match(body)
    if reminder:  # "merk dir: nie direkt auf main pushen"
        body = body[reminder.end() :]
    if _AGAIN.search(body):
        markers.add("again")
    if _TOLD.search(body):
        markers.add("told")
    out: list[str] = []
    for sentence in (s.strip() for s in _SENTENCE.split(body)):
        sentence = _TRAIL.sub("", _NO.sub("", sentence, count=1)).strip()
        if len(sentence) < MIN_CHARS or sentence.endswith("?") or "?" in sentence[-2:]:
            continue
        ruled = bool(_RULE.search(sentence)) and not _describes(sentence)
        if ruled:
            markers.add("always")
        # Without a rule word, only a sentence after "again" or "I told you" that asks for something.
        repeated = (
            markers & {"again", "told"}
            and _ASK.search(sentence)
            and len(content(sentence)) >= 3
            and not _REPAIR.search(sentence)
        )
        if ruled or repeated:
            out.append(sentence)
    rules = [sentence for sentence in out if _RULE.search(sentence)]
    out = rules or out
    if not out or not markers & {"always", "again", "told"}:
        return None
    return out[:MAX_DIRECTIVES], markers


# A calm request in its language, said once ("PR名は英語に", "専用のワークツリーで作業するように",
# "bitte immer auf Deutsch antworten"): the shape of a sentence that asks. Japanese and Chinese ask by
# their endings ("...ように", "...にして", "...で", "...に") or a polite word; the other languages by a
# modal or "please" (_ASK). Whether it states a standing rule or asks a one-off task is the meaning
# gate's call (habitus.learn.meaning): these only become candidates through it.
_REQUEST_END = re.compile(
    r"(?:ように(?:して|する)?(?:ください|下さい|ね)?|にして(?:ください|下さい|ね)?|して(?:ください|下さい|ほしい|欲しい|ね)?"
    r"|でお願い(?:します)?|お願い(?:します)?|すること|しろ|使って|(?<![のん])で|(?<!の)に|吧|一下)$"
)
_QUESTION_END = re.compile(r"(?:[?？]|か|かな|の|吗|呢)$")
# "once more", "this time", "for now", "first": the request is about this task.
_THIS_TIME = re.compile(r"もう(?:1|一)(?:回|度)|今回|とりあえず|一旦|まず|再度|再一次|这次|先")


def requests(text: str) -> list[str]:
    """Sentences of a calm message in another language that ask for something (at most
    MAX_DIRECTIVES), in the user's words; none from a question, a report or a repair request."""
    if not text.strip() or not is_foreign(text):
        return []
    out: list[str] = []
    for sentence in (s.strip() for s in _SENTENCE.split(text.strip())):
        sentence = _TRAIL.sub("", sentence).strip()
        if len(sentence) < MIN_CHARS - 2 or _QUESTION_END.search(sentence) or _REPAIR.search(sentence):
            continue
        if _THIS_TIME.search(sentence):
            continue
        if _REQUEST_END.search(sentence) or _ASK.search(sentence):
            out.append(sentence)
    return out[:MAX_DIRECTIVES]


# "schon wieder kaputt, bitte fix das", "otra vez falla el build, arréglalo": a report and a request to
# repair this breakage, not a behaviour; quoted as a "Do ..." it would make the complaint the habit.
_REPAIR = re.compile(
    r"\b(?:fix|fixe|fixen|repar\w*|arregl\w*|corrig\w*|consert\w*|sistem\w*|исправ\w*|почин\w*|schau|guck"
    r"|mira|regarde|olha|guarda|посмотри|kaputt|rot|falla\w*|cass\w*|quebr\w*|rott\w*|сломал\w*)\b"
    r"|直して|壊れ|見て|修|挂了|坏了|看一下",
    _FLAGS,
)


def _describes(sentence: str) -> bool:
    """ "der Server stürzt immer ab", "la app nunca muestra el error", "サーバーはいつも落ちる": a rule word
    in a report of what happens, not a rule."""
    if _ASK.search(sentence) or _TOLD.search(sentence):
        return False  # a modal, "please" or "I told you": it asks
    sentence = re.split(r"[:：]", sentence)[-1]  # "merk dir: ...", "wichtig: ..."
    if _SUBJECT_START.match(sentence):
        return not _NEVER_ASKS.search(sentence)
    # Without articles a subject cannot be seen: an "always" word alone (no "never"/"don't") reports.
    return (
        bool(_ALWAYS_WORD.search(sentence))
        and not _RULE.search(_ALWAYS_WORD.sub(" ", sentence))
        and language_of(sentence) in ("russian", "japanese", "chinese", "korean")
    )


# "nunca hagas", "ne fais jamais", "nie ... pushen": an imperative never, even after a subject.
_NEVER_ASKS = re.compile(r"\b(?:hagas|hagan|fais|faites|faut|faça|faças|mach|macht)\b", _FLAGS)


def content(text: str) -> list[str]:
    stop = STOP_WORDS.get(language_of(text), frozenset())
    return [t for t in tokens(text) if t not in stop]


def topic(texts: list[str]) -> str:
    """ "When the work involves ..." from the distinctive words: code-like and Latin words first (tool
    and branch names survive every language), then the longest content words of the language."""
    seen: list[str] = []
    for text in texts:
        language = language_of(text)
        stop = STOP_WORDS.get(language, frozenset())
        for token in tokens(text):
            if token in stop or len(token) < 2 or token in seen or _RULE.fullmatch(token):
                continue
            seen.append(token)
    ascii_words = [t for t in seen if t.isascii() and len(t) >= 2]
    others = sorted((t for t in seen if not t.isascii()), key=len, reverse=True)
    chosen = (ascii_words + others)[:2]
    if not chosen:
        return "When working on this project"
    return "When the work involves " + " and ".join(chosen)


# "fyi", "btw", "heads up", "remember that" and project statements ("we use ...") in each language.
_FACT_START = re.compile(
    r"^\s*(?:übrigens|zur info|nur zur info|fyi|btw|merk dir|wichtig|por cierto|para que sepas|ojo|recuerda que"
    r"|au fait|pour info|pour information|à savoir|rappelle-toi que|a propósito|aliás|só pra saber"
    r"|para sua informação|lembra que|lembre-se que|tieni presente che|per tua informazione|a proposito"
    r"|кстати|к сведению|для информации|имей в виду|запомни)\b[\s,:;.-]*"
    r"|^\s*(?:ちなみに|参考までに|覚えておいて|メモ|顺便说一下|顺便|仅供参考|记住|注意)[\s,:;：、，。-]*",
    _FLAGS,
)
_PROJECT = re.compile(
    r"^\s*(?:wir (?:verwenden|nutzen|benutzen|deployen|releasen)|in diesem (?:repo|projekt)|usamos|utilizamos"
    r"|en este (?:repo|proyecto)|nous utilisons|on utilise|dans ce (?:repo|projet)|nós usamos|usamos"
    r"|neste (?:repo|projeto)|usiamo|in questo (?:repo|progetto)|мы используем|в этом (?:репо|проекте)"
    r"|私たちは|このリポジトリ|このプロジェクト|我们(?:用|使用)|这个(?:仓库|项目))",
    _FLAGS,
)


def asks(text: str) -> bool:
    """A lead-in such as "merk dir" / "recuerda que" followed by a rule word: a reminder that asks."""
    lead = _FACT_START.match(text.strip())
    return lead is not None and bool(_RULE.search(text[lead.end() :]))


def fact(text: str) -> str | None:
    """A statement to remember, in another language ("übrigens, der Staging-Server wird sonntags
    zurückgesetzt"), without its lead-in; or None."""
    body = text.strip()
    if not body or not is_foreign(body) or body.endswith(("?", "？")):
        return None
    lead = _FACT_START.match(body)
    if lead:
        body = body[lead.end() :]
    elif not _PROJECT.match(body):
        return None
    body = _TRAIL.sub("", body).strip()
    if len(content(body)) < 2:
        return None
    return body[:1].upper() + body[1:]
