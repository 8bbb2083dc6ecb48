"""The mood of a clause in the other languages select reads (de es fr pt it ru ja zh ko), with its scope.

The English rules of `habitus.select.text` read a clause's grammar; a prompt not read as English got no
rule at all, so "die Datei nicht lesen, nur umbenennen" was judged whole and its first half could
select "When editing" on similarity alone. Here a non-English clause is cut where its scope ends (a
comma or a semicolon, a sentence end, a contrastive "but / instead / rather": "sondern", "pero",
"mais", "но", "但是", "けど", ...), and each piece gets a mood from closed classes of cue words:

- negated: a prohibitive or negated request ("nicht lesen", "no borres", "ne touche pas", "не делай",
  "しないで", "不要", "하지 마");
- hypothetical: a condition or a possible future ("falls", "si algún día", "un jour", "если", "もし",
  "如果", "만약");
- request otherwise (the gate judges it).

A cut is not made before a relative pronoun (", der nicht läuft" belongs to its noun), so a negation
stays within the clause it is written in. The judge (judge.candidates) vetoes a negated or hypothetical
piece for an activity condition only, never for an event ("die Tests laufen nicht durch" still reports
a failing test). Pure standard library; docs/quality.md gives the cross-validated gain.
"""

from __future__ import annotations

import re

# Where a clause's scope ends: a sentence, then a comma, then a contrastive conjunction (kept with the
# piece it opens).
_SENTENCE = re.compile(r"[.!?¿¡]+(?:\s+|$)|\n+|[。！？]\s*")
_COMMA = re.compile(r"\s*(?:[,;:]\s+|\s+[-–—]\s+)|\s*[、，,；;]\s*")
# A contrast, by language ("mais" is French "but" and Portuguese "more": "e não mais como número" is no
# contrast in Portuguese).
_CONTRAST_WORDS = {
    "german": r"sondern|aber|stattdessen",
    "spanish": r"sino|pero|en\s+vez\s+de",
    "french": r"mais|plutôt|au\s+lieu\s+de",
    "portuguese": r"mas|em\s+vez\s+de",
    "italian": r"ma|invece",
    "russian": r"но|а|вместо",
}
_CONTRAST_FORMS = r"但是|而是|可是|不过|でも|けど|けれど|하지만|대신"
_CJK_CONTRAST = re.compile(rf"(?={_CONTRAST_FORMS})|(?<=말고)\s*")
_CONTRAST = {
    language: re.compile(rf"\s+(?=(?:{words})(?!\w))", re.IGNORECASE)
    for language, words in _CONTRAST_WORDS.items()
}
_OPENS_CONTRAST = {
    language: re.compile(rf"^(?:(?:{words})(?!\w)|{_CONTRAST_FORMS})", re.IGNORECASE)
    for language, words in _CONTRAST_WORDS.items()
}
_NO_CUT = re.compile(r"(?!)")
_OPENS_CJK_CONTRAST = re.compile(rf"^(?:{_CONTRAST_FORMS})")
# A relative or a subordinate clause belongs to what is before it ("..., der nicht läuft", "..., damit
# ein Plugin nicht alles mitreißt"): no cut before it, and it does not change that piece's mood.
_RELATIVE = re.compile(
    r"^(?:der|die|das|dem|den|deren|dessen|welche[rsmn]?|wo|damit|weil|dass|sodass|"
    r"que|qui|quien|quienes|donde|dont|où|lequel|laquelle|porque|para\s+que|pour\s+que|parce\s+que|"
    r"afin\s+(?:que|de)|quem|onde|cui|che|dove|perché|affinché|котор\w+|что|где|чтобы|потому\s+что)\b",
    re.IGNORECASE,
)

# Cue words by language (`habitus.lang.language.language_of`): a negated or prohibitive request, and a
# condition or a possible future. Latin-script words match whole; CJK forms match anywhere.
_WORDS = r"(?<!\w)(?:{})(?!\w)"
_NEGATED_WORDS = {
    "german": "nicht|nichts|kein|keine|keinen|keinem|keiner|keines|nie|niemals",
    "spanish": "no|nunca|nada|ni|tampoco|ninguna?|ningún",
    "french": "ne|pas|jamais|rien|aucune?",  # "n'" always comes with one of them
    "portuguese": "não|nao|nunca|nada|nenhum|nenhuma",
    "italian": "non|mai|niente|nulla|nessun|nessuno|nessuna",
    "russian": "не|ни|ничего|никогда|нельзя",
}
_NEGATED_FORMS = {
    "japanese": "ないで|なくて|なくても|ずに|するな|いらない|要らない|禁止",
    "chinese": "不要|别|不用|不必|无需|无须|没必要|不需要|先不|暂时不|暂不|不许|勿",
    "korean": "지\\s*마|말고|말아|필요\\s*없|않아도|안\\s*해도|하지\\s*않|금지",
}
# "without ..." negates only a clause it opens ("sem mudar a API" after a request does not)
_WITHOUT = r"^(?:ohne|sin|sans|sem|senza|без)(?!\w)"
_HYPOTHETICAL_WORDS = {
    "german": "falls|irgendwann|angenommen|eines\\s+tages|wäre|wären|hätte|hätten|würde",
    "spanish": "algún\\s+día|alguna\\s+vez|quizás?|tal\\s+vez|supongamos|habría|tuviéramos",
    "french": "s['’]il|peut-être|imaginons|supposons|au\\s+cas\\s+où|faudra",
    "portuguese": "talvez|algum\\s+dia|um\\s+dia|futuramente",
    "italian": "forse|prima\\s+o\\s+poi|in\\s+futuro|supponiamo|nel\\s+caso",
    "russian": "если|когда-нибудь|может\\s+быть|возможно|допустим|предположим|теоретически|бы|"
    "будет|будем|будут|придётся|придется",
}
# What opens its clause: "if" (si / se: the reflexive "se" elsewhere is no condition), "one day"
# ("décalés d'un jour" is a date shifted by a day)
_IF = {"spanish": "si", "french": "si|un\\s+jour", "portuguese": "se", "italian": "se|un\\s+giorno"}
_HYPOTHETICAL_FORMS = {
    "japanese": "もし|仮に|いつか|将来|かもしれ",
    "chinese": "如果|假如|假设|要是|万一|哪天|将来|也许|或许",
    "korean": "만약|만일|혹시|언젠가|나중에",
}


def _cues(
    words: dict[str, str], forms: dict[str, str], first: dict[str, str], extra: str
) -> dict[str, re.Pattern[str]]:
    out = {}
    for language in {*words, *forms}:
        parts = [_WORDS.format(words[language])] if language in words else []
        parts += [forms[language]] if language in forms else []
        parts += [rf"^(?:{first[language]})(?!\w)"] if language in first else []
        parts += [extra] if extra and language in words else []
        out[language] = re.compile("|".join(parts), re.IGNORECASE)
    return out


_NEGATED = _cues(_NEGATED_WORDS, _NEGATED_FORMS, {}, _WITHOUT)
_HYPOTHETICAL = _cues(_HYPOTHETICAL_WORDS, _HYPOTHETICAL_FORMS, _IF, "")


def pieces(text: str, language: str) -> list[tuple[str, str]]:
    """The clause cut where a negation's or a condition's scope ends, each piece with its mood (see the
    module docstring). A relative clause joins the piece before it and does not change its mood; what
    follows a condition in its sentence is its consequence ("si algún día publicamos, revisa el
    empaquetado"), hypothetical too, up to a contrast ("..., pero ahora arregla el test")."""
    out: list[tuple[str, str]] = []
    contrast = _CONTRAST.get(language, _NO_CUT)
    opens = _OPENS_CONTRAST.get(language, _OPENS_CJK_CONTRAST)
    for sentence in _SENTENCE.split(text):
        conditional = False
        for part in _COMMA.split(sentence):
            for n, piece in enumerate(p for c in _CJK_CONTRAST.split(part) for p in contrast.split(c)):
                piece = piece.strip()
                if not piece:
                    continue
                if n > 0 or opens.match(piece):  # a contrast ends the condition's reach
                    conditional = False
                if out and _RELATIVE.match(piece):
                    out[-1] = (f"{out[-1][0]}, {piece}", out[-1][1])
                    continue
                found = mood(piece, language)
                if found == "request" and conditional:
                    found = "hypothetical"
                conditional = conditional or found == "hypothetical"
                out.append((piece, found))
    return out or [(text.strip(), mood(text, language))]


def mood(piece: str, language: str) -> str:
    """negated, hypothetical or request, by the cues of `language` (request in any other language)."""
    negated, hypothetical = _NEGATED.get(language), _HYPOTHETICAL.get(language)
    if negated is not None and negated.search(piece):
        return "negated"
    if hypothetical is not None and hypothetical.search(piece):
        return "hypothetical"
    return "request"
