"""Which language a text is written in: the one guess select, memory and learn share.

`language_of(text)` names the language ("english", "german", ..., "japanese", "korean", "chinese",
"russian"; another script by its name, e.g. "greek"); `is_english(text)` is whether English-only rules
and models may read it. The guess never refuses a text; it picks stop words, a stemmer, rules.

- What a person typed votes, what a machine wrote does not: pasted lines (habitus.lang.pasted: logs,
  traces, code) are left out first, while anything else is left.
- Scripts next: kana is Japanese, Hangul Korean, Han characters Chinese, Cyrillic Russian.
- Latin script: code spans, URLs, paths, dotted, snake_case and camelCase names, hashes, flags and
  e-mail addresses are removed ("os" of os.path is no Portuguese article, "del" of del_cache no
  Spanish one).
  Then each language scores its function words (habitus.lang.words.STOP_WORDS, English with a few
  more: "over", "so", "am" are English words too), an English contraction ("don't", "it's") scores
  two for English, and a word with letters English does not use (ä ß ñ ç ã é ...) scores one for each
  language that writes them. English wins a tie: a text of tool names and numbers is English.

Pure standard library; the guess is cached per text (a prompt is asked about several times).
"""

from __future__ import annotations

import re
from functools import lru_cache

from habitus.lang import pasted
from habitus.lang.words import STOP_WORDS, stem, tokens, word_set

ENGLISH = "english"

# Scripts that decide alone, in this order (Japanese mixes kana with Han characters).
_SCRIPTS = (
    ("japanese", re.compile(r"[\u3040-\u30ff\u31f0-\u31ff\uff66-\uff9f]")),
    ("korean", re.compile(r"[\u1100-\u11ff\u3130-\u318f\uac00-\ud7af]")),
    ("chinese", re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")),
    ("russian", re.compile(r"[\u0400-\u04ff]")),
    ("greek", re.compile(r"[\u0370-\u03ff]")),
    ("hebrew", re.compile(r"[\u0590-\u05ff]")),
    ("arabic", re.compile(r"[\u0600-\u06ff]")),
    ("hindi", re.compile(r"[\u0900-\u097f]")),
    ("thai", re.compile(r"[\u0e00-\u0e7f]")),
)

# What a machine wrote inside a sentence: its words are no one's language.
_MACHINE = re.compile(
    r"`[^`\n]*`"  # inline code
    r"|\b[a-z][a-z0-9+.-]*://\S+"  # URLs
    r"|[\w.~-]*[/\\][\w./\\~:-]*"  # paths (a/b, ./x, C:\dir)
    r"|[\w-]+@[\w-]+(?:\.[\w-]+)+"  # e-mail addresses, user@host
    r"|(?<![\w-])--?[a-z][\w-]*"  # flags
    r"|\b\w+(?:\.\w+)+(?:\(\))?"  # dotted names, file names, versions: os.path, a.py, 1.2.3
    r"|\b\w*_\w*"  # snake_case and __dunder__
    r"|\b\w*\d\w*"  # hashes, versions, ids: 7c1e2a9d0b44, v2, k6
    r"|\b\w+\(\)",  # calls: parse()
    re.IGNORECASE,
)
_MACHINE_CASED = re.compile(r"\b[a-z]+[A-Z]\w*")  # camelCase needs case (the pattern above ignores it)

# Words the guess counts beside each language's stop words: English function words the shared list
# lacks (without them "tabs over spaces in every file" reads as Dutch), and for the other languages
# frequent verbs, adverbs and pronouns that English never writes ("peut", "precisamos", "kannst").
_MORE = {
    ENGLISH: word_set(
        """over under after before so am up out off again only very how what where why who which if
        because until once both few more most nor too yes please let"""
    ),
    "german": word_set(
        """kannst könnte könntest mach machen macht alle alles immer nie warum gibt geht danke heute
        morgen gerade bevor nachdem wieder etwas nichts"""
    ),
    "french": word_set(
        """peut peux veux dois faut fait faire c'est merci pourquoi comment quel quelle voici voilà
        encore toujours jamais rien tout tous toutes avant après aujourd'hui"""
    ),
    "spanish": word_set(
        """puedes puede podemos hay hacer haz todo todos todas ahora aquí gracias porque siempre nunca
        necesito necesitamos antes después hoy otra vez"""
    ),
    "portuguese": word_set(
        """pode podemos precisa precisamos preciso faz fazer tudo todos todas isso aqui você vocês
        obrigado porque agora ainda sempre nunca antes depois hoje"""
    ),
    "italian": word_set(
        """puoi possiamo fare fai tutto tutti sempre mai perché grazie adesso ancora c'è prima dopo oggi
        bisogna"""
    ),
    "dutch": word_set(
        """kun kunnen maak maken alle altijd nooit waarom nu bedankt graag even eerst daarna vandaag
        moet"""
    ),
}
_CONTRACTION = re.compile(
    r"\b(?:don't|doesn't|didn't|can't|couldn't|isn't|aren't|won't|wouldn't|wasn't|shouldn't|haven't"
    r"|hasn't|it's|i'm|you're|that's|let's|i've|we're|they're|there's|what's|i'll|we'll|i'd)\b",
    re.IGNORECASE,
)
# Letters English does not write, and the languages that do.
_LETTERS = {
    "german": "äöüß",
    "spanish": "ñáéíóúü¿¡",
    "french": "àâæçéèêëîïôœùûüÿ",
    "portuguese": "ãõçáâàéêíóôú",
    "italian": "àèéìíòóù",
    "dutch": "ëïéèöü",
}
_ACCENTED = re.compile("[" + "".join(sorted(set("".join(_LETTERS.values())))) + "]")


@lru_cache(maxsize=4096)
def language_of(text: str) -> str:
    """The text's language (see the module docstring): English when nothing says otherwise."""
    typed = pasted.cut(text)[0]
    for name, script in _SCRIPTS:
        if script.search(typed):
            return name
    prose = _MACHINE.sub(" ", _MACHINE_CASED.sub(" ", typed))
    found = tokens(prose)
    scores = {
        name: sum(1 for w in found if w in stop or w in _MORE.get(name, ()))
        for name, stop in STOP_WORDS.items()
    }
    scores[ENGLISH] += 2 * len(_CONTRACTION.findall(prose))
    for word in found:
        letters = set(_ACCENTED.findall(word))
        for name, own in _LETTERS.items():
            if letters and letters <= set(own):
                scores[name] += 1
    best = max(scores, key=lambda name: (scores[name], name == ENGLISH))
    return best if scores[best] > scores[ENGLISH] else ENGLISH


def is_english(text: str) -> bool:
    """Whether English rules and English-only models may read the text."""
    return language_of(text) == ENGLISH


def content_stems(text: str, language: str | None = None) -> list[str]:
    """Stems of the text's words that are not stop words of its language (guessed when not given)."""
    language = language or language_of(text)
    stop = STOP_WORDS.get(language, frozenset())
    return [stem(w, language) for w in tokens(text) if w not in stop]
