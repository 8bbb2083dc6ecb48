"""Follow-ups: a reply that only accepts the agent's last offer is a request for the offered action.

"yes please", "ok go ahead", "sí, adelante", "はい、お願いします" after "Fixed. Want me to write the commit
message too?" asks, now, for the commit message: the habit for writing one applies. The reply has no
words of its own to retrieve with, so the judge reads the offer in its place (judge.analyse).

- `reply(prompt)` reads the reply: accept, decline or neither, and what follows an acceptance ("yes, and
  open a PR too": a request of its own, judged beside the offer). Assent is a closed class of words in
  every language, so it is read with a compact word list (ASSENT, DECLINE, FILLER, below) rather than by
  embedding: the multilingual model puts "yes please" as close to "no thanks" (cosine 0.87) as to "ok go
  ahead" (0.87), so similarity to exemplars cannot tell them apart. A decline, a deferral ("yes, but
  first ...") or anything else the list does not know is never resolved to the offer.
- `offer(message)` finds the action the agent's last message offers: the last sentence with an offer
  marker ("want me to", "soll ich", "quieres que", "ましょうか", "要我", ...), without the marker; when that
  sentence is bare ("Shall I?"), the sentence before it says what.

Pure standard library, deterministic, and bounded: a reply longer than MAX_REPLY characters is never a
follow-up, and an offer is read from the last MAX_MESSAGE characters of the message.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import cache

MAX_REPLY = 80  # characters: a longer prompt says something of its own
MAX_MESSAGE = 600  # characters of the agent's message searched for its offer (its end)
MAX_OFFER = 240  # characters of the offered action the judge reads

# Phrases, lowercase, by language (comma-separated; several words allowed). A reply is an acceptance when
# it is made only of ASSENT and FILLER phrases (at least one ASSENT); any DECLINE phrase declines.
ASSENT = {
    "en": "yes, yeah, yea, yep, yup, ya, yas, sure, sure thing, ok, okay, okey, k, kk, okie, alright, all right, "
    "fine, great, good, perfect, cool, nice, excellent, awesome, correct, absolutely, definitely, certainly, "
    "of course, please, pls, plz, please do, do it, do that, do so, do this, do them, do those, go, go ahead, "
    "go for it, go on, proceed, continue, carry on, sounds good, sounds great, sounds fine, lgtm, ship it, "
    "makes sense, that works, works for me, let's do it, let's do that, lets do it, let's go, that'd be great, "
    "that would be great, that'd be nice, i'd like that, why not, agreed, deal, approved, confirmed, "
    "affirmative, y, 👍, ✅, 👌",
    "de": "ja, ja bitte, jawohl, jo, jep, jap, klar, na klar, sicher, gerne, gern, gerne doch, passt, gut, sehr gut, super, "
    "prima, perfekt, genau, richtig, einverstanden, mach, mach das, mach es, mach mal, mach ruhig, machs, "
    "mach's, leg los, los, nur zu, bitte, bitte schön, weiter, mach weiter, auf jeden fall, unbedingt, "
    "klingt gut, in ordnung, alles klar, geht klar, tu das, tu es, gerne doch",
    "es": "sí, si, claro, claro que sí, vale, va, dale, adelante, hazlo, haz eso, hágalo, perfecto, bien, "
    "muy bien, de acuerdo, okey, por favor, porfa, procede, sigue, genial, venga, bueno, sale, órale, "
    "por supuesto, me parece bien, está bien, listo, exacto, correcto",
    "fr": "oui, ouais, d'accord, dac, vas-y, vas y, allez-y, allez y, fais-le, fais le, faites-le, bien sûr, "
    "parfait, très bien, bien, génial, volontiers, s'il te plaît, s'il vous plaît, stp, svp, c'est bon, "
    "ça marche, ça me va, carrément, exactement, continue",
    "pt": "sim, pode, pode sim, pode fazer, faça, faz, faz isso, manda ver, manda bala, beleza, blz, certo, "
    "perfeito, ótimo, otimo, bom, combinado, isso, isso mesmo, vai, vai lá, bora, com certeza, show, "
    "fechado, de acordo, tá bom, ta bom, tá, siga",
    "it": "sì, certo, certamente, va bene, procedi, vai, fallo, fai pure, perfetto, d'accordo, ottimo, "
    "benissimo, per favore, esatto, sicuro, volentieri",
    "nl": "jawel, oké, doe maar, graag, ga je gang, goed, top, ja graag",
    "ru": "да, ага, угу, давай, давайте, ок, окей, хорошо, ладно, конечно, делай, сделай, сделай это, валяй, "
    "вперёд, вперед, пожалуйста, отлично, супер, согласен, согласна, можно, норм, годится, идёт, идет, "
    "поехали",
    "ja": "はい, うん, ええ, いいよ, いいですよ, いいね, お願いします, お願い, おねがい, よろしく, "
    "よろしくお願いします, どうぞ, やって, やってください, やって下さい, 進めて, 進めてください, 了解, 了解です, "
    "オッケー, 頼む, 頼みます, それで, そうして, そうしてください, もちろん, ぜひ, 是非",
    "zh": "好, 好的, 好啊, 好吧, 行, 可以, 嗯, 对, 是, 是的, 没问题, 当然, 请, 麻烦了, 做吧, 去做吧, 来吧, "
    "继续, 开始吧, 弄吧, 搞吧, 同意, 就这样, 要, 需要",
    "ko": "네, 예, 응, 좋아요, 좋아, 그래요, 그래, 해주세요, 해 주세요, 해줘, 부탁해요, 부탁합니다, 진행해 주세요, "
    "진행해, 알겠어요, 오케이",
    "other": "evet, tamam, olur, tak, dobrze, jasne, śmiało, gärna, kör",
}
DECLINE = {
    "en": "no, nope, nah, not now, not yet, not really, don't, do not, dont, never mind, nevermind, stop, wait, "
    "hold on, hold off, skip, skip it, leave it, no thanks, no need, cancel, later, negative, no way, "
    "not needed, i'm good, im good, rather not, let's not, pass, but, first, instead",
    "de": "nein, nee, ne, nö, noch nicht, nicht, lieber nicht, nicht nötig, lass, lass es, lass das, lass mal, "
    "stopp, halt, warte, später, kein, keine, aber, zuerst, erst, stattdessen",
    "es": "todavía no, aún no, ahora no, no hace falta, déjalo, espera, para, mejor no, más tarde, nada, "
    "ni hablar, pero, primero, mejor",
    "fr": "non, pas encore, pas maintenant, pas besoin, laisse, laisse tomber, attends, arrête, plus tard, "
    "surtout pas, c'est tout, ça ira, mais, d'abord",
    "pt": "não, nao, ainda não, agora não, deixa, deixa pra lá, espera, não precisa, depois, mais tarde, mas, "
    "primeiro",
    "it": "non ancora, lascia, lascia stare, aspetta, fermati, dopo, più tardi, non serve, ma, prima",
    "nl": "nee, niet, nog niet, laat maar, maar, eerst",
    "ru": "нет, не, не надо, не нужно, не сейчас, пока нет, потом, позже, стоп, подожди, погоди, оставь, "
    "не стоит, но, сначала",
    "ja": "いいえ, いや, いえ, だめ, ダメ, やめて, やめ, 結構です, 結構, 大丈夫です, 大丈夫, 要らない, いらない, "
    "不要, まだ, 後で, あとで, 待って, 止めて, しないで, やらないで, でも, 先に",
    "zh": "不, 不用, 不用了, 不要, 别, 不行, 算了, 等等, 先不, 暂时不, 不需要, 没必要, 停, 以后再说, 但是, 先",
    "ko": "아니, 아니요, 아뇨, 괜찮아요, 괜찮습니다, 하지 마, 잠깐, 나중에, 하지만, 먼저",
    "other": "hayır, yok, nie, nej",
}
FILLER = {
    "thanks, thank you, thx, ty, danke, danke schön, gracias, merci, obrigado, obrigada, grazie, спасибо, "
    "ありがとう, ありがとうございます, 谢谢, 감사합니다, bedankt, then, now, just, dann, jetzt, entonces, "
    "ahora, alors, maintenant, então, agora, allora, ora, тогда, сейчас, じゃあ, では, それじゃ, 那, 那就, 现在, "
    "吧, 啊, 呀, ね, よ, 😊, 🙏, 🚀, lol, mate, man"
}
# What joins a request of the user's own to an acceptance ("yes, and open a PR too").
AND = (
    "and, also, and also, plus, too, und, auch, und auch, y, también, y también, et, aussi, et aussi, e, "
    "também, anche, en, ook, и, также, ещё, еще, а также, それと, あと, それから, 还有, 然后, 并且, 也, 그리고, 또"
)

_SEPARATORS = " \t\n,.;:!?¡¿…~-–—()[]\"'、。，．！？；：「」『』（）・"
_OFFER_MARKERS = (
    # English: the offered action follows the marker
    r"(?:do\s+you\s+)?want\s+me\s+to|would\s+you\s+like\s+me\s+to|shall\s+i|should\s+i|may\s+i|"
    r"ok(?:ay)?\s+to|can\s+i|i\s+could(?:\s+also)?|i\s+can(?:\s+also)?|(?:do\s+you\s+)?want\s+that|"
    # German, Spanish, French, Portuguese, Italian, Russian
    r"soll\s+ich|(?:möchtest|willst)\s+du,?\s+dass\s+ich|ich\s+kann(?:\s+auch)?|"
    r"(?:quieres|quiere|prefieres)\s+que|puedo|te\s+parece\s+si|"
    r"(?:voulez-vous|veux-tu|tu\s+veux|vous\s+voulez)\s+que\s+j[e'’]|je\s+peux|dois-je|"
    r"quer\s+que\s+eu|posso|devo|vuoi\s+che|posso|"
    r"хочешь,?\s+я|хотите,?\s+я|могу|давай\s+я|^(?=[а-яё]+(?:ть|ти)\s)|"
    # Japanese, Chinese, Korean: the action comes before the marker, so the whole sentence is kept
    r"ましょうか|しようか|ますか|要我|需要我|我可以|我来|是否|할까요|드릴까요|까요"
)
_OFFER = re.compile(_OFFER_MARKERS, re.IGNORECASE)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|(?<=[。！？])|\n+")
_TRAILING = re.compile(
    r"[\s,]*(?:if\s+you\s+(?:like|want|prefer)|as\s+well|too|now|for\s+you|next|"
    r"si\s+quieres|wenn\s+du\s+willst|si\s+tu\s+veux)?\s*[?.!？。！\s]*$",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Reply:
    """How a prompt answers an offer: `kind` accept, decline or none; `rest` the request of its own that
    follows an acceptance ("" when the reply only accepts)."""

    kind: str
    rest: str = ""


def _phrases(groups: dict[str, str] | set[str] | str) -> frozenset[str]:
    texts = groups.values() if isinstance(groups, dict) else groups if isinstance(groups, set) else {groups}
    return frozenset(p.strip() for text in texts for p in text.split(",") if p.strip())


@cache
def _lexicon() -> tuple[tuple[str, str], ...]:
    """(phrase, role) longest first, role one of assent, decline, filler, and."""
    table: dict[str, str] = {}
    for role, groups in (("filler", FILLER), ("assent", ASSENT), ("and", AND), ("decline", DECLINE)):
        for phrase in _phrases(groups):
            table[_normal(phrase)] = role  # a later role wins: "ma" is Italian "but" before a filler
    return tuple(sorted(table.items(), key=lambda item: -len(item[0])))


def _normal(text: str) -> str:
    return unicodedata.normalize("NFKC", text).lower().replace("’", "'").strip()


def _wordlike(char: str) -> bool:
    """A character that continues a space-separated word (so "no" is not read inside "note")."""
    return char.isalnum() and not _unspaced(char)


def _unspaced(char: str) -> bool:
    """Scripts written without spaces between words (CJK, kana, hangul): phrases match anywhere."""
    return bool(re.match(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]", char))


def _words(text: str) -> list[tuple[str, int, int]]:
    """The reply as known phrases (role, start, end), longest first at each position; a stretch the list
    does not know is ("other", start, end) and ends the reading."""
    out: list[tuple[str, int, int]] = []
    i = 0
    while i < len(text):
        if text[i] in _SEPARATORS or text[i].isspace():
            i += 1
            continue
        for phrase, role in _lexicon():
            end = i + len(phrase)
            if text.startswith(phrase, i) and (
                end == len(text) or not (_wordlike(text[end]) and _wordlike(phrase[-1]))
            ):
                out.append((role, i, end))
                i = end
                break
        else:
            out.append(("other", i, len(text)))
            return out
    return out


def bare_decline(prompt: str) -> bool:
    """The prompt only declines ("nein", "no thanks", "not yet"): decline and filler phrases, nothing of
    its own ("nope, fix the tests instead" has a request)."""
    text = _normal(prompt)
    if not text or len(text) > MAX_REPLY:
        return False
    roles = {role for role, _, _ in _words(text)}
    return "decline" in roles and roles <= {"decline", "filler"}


def reply(prompt: str) -> Reply:
    """Read a prompt as an answer to an offer (see the module docstring)."""
    text = _normal(prompt)
    if not text or len(text) > MAX_REPLY:
        return Reply("none")
    words = _words(text)
    roles = [role for role, _, _ in words]
    if "decline" in roles:
        return Reply("decline")
    if not roles or roles[0] not in ("assent", "filler"):
        return Reply("none")
    for n, (role, _, _) in enumerate(words):
        if role == "other":
            # an acceptance, then a request of its own after "and"/"also"
            before = roles[:n]
            if "assent" in before and before[-1] == "and":
                return Reply("accept", prompt.strip()[_offset(prompt, words[n][1]) :].strip())
            return Reply("none")
    return Reply("accept") if "assent" in roles else Reply("none")


def _offset(prompt: str, normal_index: int) -> int:
    """Where the normalised text's index falls in the prompt (NFKC can change lengths: walk to it)."""
    stripped = prompt.strip()
    if len(_normal(stripped)) == len(stripped):
        return normal_index
    for i in range(len(stripped) + 1):
        if len(_normal(stripped[:i])) >= normal_index:
            return i
    return len(stripped)


def may_be_reply(prompt: str) -> bool:
    """Whether a prompt is short enough to be an answer to an offer (cheap: a hook reads prior turns
    only then)."""
    return 0 < len(prompt.strip()) <= MAX_REPLY


@dataclass(frozen=True)
class Offer:
    """What the agent offered: `action` as worded ("write the commit message"), and `referent`, the
    sentence before it when the action points back at it ("fix it" after "The crash comes from ...")."""

    action: str
    referent: str = ""

    @property
    def text(self) -> str:
        return f"{self.action} ({self.referent})" if self.referent else self.action

    @property
    def bare(self) -> str:
        """The action without an object that only points back ("commit these changes" -> "commit"):
        what the offer asks for, when its object says nothing more than "what I just did"."""
        return re.sub(r"\s+", " ", _POINTING_OBJECT.sub(" ", self.action)).strip()


# An offered action's object that only names the work just done ("these changes", "it all"), not a
# pronoun that names something in the sentence before ("remove them": the debug prints).
_POINTING_OBJECT = re.compile(
    r"(?<!\w)(?:(?:all\s+(?:of\s+)?)?(?:these|those|the|my|your|our)\s+(?:changes|edits|fixes|updates)|"
    r"everything|it\s+all|all\s+of\s+(?:it|this|that)|all\s+that|all\s+this)\s*$",
    re.IGNORECASE,
)


def offer(message: str) -> Offer | None:
    """The action the agent's message offers, or None (see the module docstring)."""
    tail = message.strip()[-MAX_MESSAGE:]
    sentences = [s.strip() for s in _SENTENCE_END.split(tail) if s.strip()]
    for n in range(len(sentences) - 1, -1, -1):
        act = _offered(sentences[n])
        if act is None:
            continue
        if len(re.sub(r"\W", "", act)) < 4 or reply(act).kind == "accept":
            # "Shall I?", "Should I go ahead?": the sentence before says what
            if n == 0:
                return None
            n -= 1
            act = _offered(sentences[n]) or _TRAILING.sub("", sentences[n])
        act = _plain(act)[:MAX_OFFER]
        if not act:
            return None
        short = len(act.split()) < 4 and not any(_unspaced(c) for c in act)
        if n > 0 and (short or _POINTER.search(act)):  # what "it" / "them" / "le" names
            return Offer(act, _plain(sentences[n - 1])[:MAX_OFFER])
        return Offer(act)
    return None


def _plain(text: str) -> str:
    """Without quote marks and backticks: in an offer they name the object ("add `httpx`"), they do
    not quote someone."""
    return re.sub(r"[`\"“”„«»]", "", text).strip()


def _offered(sentence: str) -> str | None:
    """The sentence's offered action without its marker ("Want me to fix it?" -> "fix it"); a marker
    that follows its action (Japanese, Korean) keeps the whole sentence; None without a marker."""
    found = None
    for found in _OFFER.finditer(sentence):  # noqa: B007 (the last marker)
        pass
    if found is None:
        return None
    after = _TRAILING.sub("", sentence[found.end() :]).strip(" ,:")
    if found.end() == found.start():  # a marker that is the sentence's own shape: all of it
        return _TRAILING.sub("", sentence).strip()
    if re.search(r"\w{2}", after):
        return _QUESTION.sub("", after)
    before = sentence[: found.start()].strip(" ,:")
    return _QUESTION.sub("", _TRAILING.sub("", sentence).strip()) if re.search(r"\w", before) else ""


# A question particle that ends an offer written action-first ("書きましょうか" -> "書きましょう",
# "写提交信息吗" -> "写提交信息"): without it the offer reads as the request the user accepted.
_QUESTION = re.compile(r"(?:(?<=しょう)|(?<=ます))か$|[吗呢]$")


# Words that point back at what the sentence before named.
_POINTER = re.compile(
    r"(?<!\w)(?:it|them|that|this|those|these|es|sie|ihn|das|lo|la|los|las|le|les|l['’]|o|os|as|"
    r"его|её|ее|их|это|それ|これ|它|这个|那个)(?!\w)",
    re.IGNORECASE,
)
