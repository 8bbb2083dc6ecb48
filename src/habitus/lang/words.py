"""Tokens, stems and stop words, for every language habitus reads.

`stem(word, language)` is the Snowball stemmer of that language (English also folds common irregular
verbs first: "wrote" -> "write"); it is cached per word. Which language a text is in is
habitus.lang.language's guess.
"""

from __future__ import annotations

import re
from functools import cache, lru_cache


def word_set(text: str) -> frozenset[str]:
    return frozenset(text.split())


# English function words every room treats as carrying no content. Each room adds its own domain words
# (learn: markers such as "please", "thanks"; select: "user", "code"; advise: "per", "via").
ENGLISH_STOP_WORDS = word_set(
    """a about all also an and any are as at be been being but by can could did do does done each for
    from had has have he here i in into is it its just may me might must my no not of on onto or other
    our own same she should some such than that the their them then there these they this those to was
    we were when while will with would you your"""
)

DETERMINERS = word_set("the a an my our your his her their its some")

# Small lists of function words (articles, pronouns, auxiliaries, prepositions, conjunctions) of the
# other languages select and memory read; they guess a text's language and drop its stop words.
STOP_WORDS: dict[str, frozenset[str]] = {
    "english": ENGLISH_STOP_WORDS,
    "german": word_set(
        """der die das den dem des ein eine einen einem einer eines und oder aber ich du er sie es wir ihr
        mich mir dich dir uns euch sich mein meine dein deine sein seine unser ist sind war waren bin bist
        hat haben habe hast wird werden wurde kann können soll sollte muss müssen nicht kein keine keinen
        mit von zu zum zur bei für auf aus an am im in ins um über unter nach vor wie was wer wo wenn dass
        ob so auch noch schon nur doch mal bitte dann denn jetzt hier da diese dieser dieses diesen"""
    ),
    "spanish": word_set(
        """el la los las un una unos unas y o pero yo tú él ella nosotros vosotros ellos ellas me te se nos
        mi mis tu tus su sus es son era eran soy está están estoy ha han he hay ser estar no ni con de del
        al a en por para sin sobre entre como qué que quién dónde cuando si también ya muy más este esta
        estos estas ese esa eso lo le les favor"""
    ),
    "french": word_set(
        """le la les un une des du de d l et ou mais je tu il elle nous vous ils elles me te se moi toi lui
        leur mon ma mes ton ta tes son sa ses notre votre est sont était suis es a ont ai as avons avez
        être avoir ne pas plus avec sans pour par sur sous dans en au aux ce cet cette ces qui que quoi
        où quand si aussi déjà très y s'il stp svp"""
    ),
    "portuguese": word_set(
        """o a os as um uma uns umas e ou mas eu tu ele ela nós vós eles elas me te se nos meu minha seu sua
        é são era eram sou está estão estou há ser estar não nem com de do da dos das no na nos nas em por
        para sem sobre como que quem onde quando se também já muito mais este esta isto esse essa isso
        favor"""
    ),
    "russian": word_set(
        """и или но а я ты он она оно мы вы они меня мне тебя тебе его ее её нас нам вас вам их мой моя мое
        твой наш ваш это этот эта эти тот та те не ни нет да в во на с со к ко по за из от до для без о об
        при про как что кто где когда если ли же бы уже еще ещё очень так тоже пожалуйста"""
    ),
    "italian": word_set(
        """il lo la i gli le un uno una e o ma io tu lui lei noi voi loro mi ti si ci vi mio mia tuo suo è
        sono era ho hai ha abbiamo non né con di del della dei da dal in nel nella su per tra fra come che
        chi dove quando se anche già molto più questo questa quello quella favore"""
    ),
    "dutch": word_set(
        """de het een en of maar ik jij je hij zij ze wij we jullie mij me mijn jouw zijn haar ons onze is
        was ben bent heb hebt heeft hebben wordt worden kan kunnen moet moeten niet geen met van te tot bij
        voor op uit aan in om over onder na als wat wie waar wanneer dat dit die deze ook nog al alsjeblieft"""
    ),
}

# Snowball stemmer module and class per language (loaded on first use).
_STEMMERS = {
    "english": "english",
    "german": "german",
    "spanish": "spanish",
    "french": "french",
    "portuguese": "portuguese",
    "russian": "russian",
    "italian": "italian",
    "dutch": "dutch",
}

# English irregular verb forms, folded to the base form before stemming ("wrote" ~ "write").
IRREGULAR = {
    "wrote": "write",
    "written": "write",
    "ran": "run",
    "made": "make",
    "built": "build",
    "took": "take",
    "taken": "take",
    "chose": "choose",
    "chosen": "choose",
    "found": "find",
    "got": "get",
    "gotten": "get",
    "kept": "keep",
    "sent": "send",
    "told": "tell",
    "went": "go",
    "gone": "go",
    "broke": "break",
    "broken": "break",
    "began": "begin",
    "begun": "begin",
    "brought": "bring",
    "bought": "buy",
    "caught": "catch",
    "thought": "think",
    "saw": "see",
    "seen": "see",
    "gave": "give",
    "given": "give",
    "knew": "know",
    "known": "know",
    "shown": "show",
    "led": "lead",
    "left": "leave",
    "lost": "lose",
    "met": "meet",
    "paid": "pay",
    "spent": "spend",
    "stood": "stand",
    "understood": "understand",
    "won": "win",
    "threw": "throw",
    "thrown": "throw",
    "drew": "draw",
    "drawn": "draw",
    "fell": "fall",
    "fallen": "fall",
    "hid": "hide",
    "hidden": "hide",
    "rewrote": "rewrite",
    "rewritten": "rewrite",
    "rebuilt": "rebuild",
    "reran": "rerun",
}

# Latin-script words (with apostrophes and inner hyphens) and numbers: the English rooms' words.
LATIN_WORD = re.compile(r"[a-z][a-z'’-]*|\d+", re.IGNORECASE)
# Letters of any script; Chinese, Japanese and Korean runs are cut into character bigrams by `tokens`.
_TOKEN = re.compile(r"[^\W\d_]+(?:['’-][^\W\d_]+)*|\d+")
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]+")


def words(text: str) -> list[str]:
    """Lower-cased Latin-script words and numbers ("don’t" -> "don't")."""
    return [w.lower().replace("’", "'") for w in LATIN_WORD.findall(text)]


def tokens(text: str) -> list[str]:
    """Lower-cased words of any script; a run of Chinese, Japanese or Korean characters becomes its
    character bigrams (a single character stays whole), since those scripts do not space words."""
    out: list[str] = []
    for raw in _TOKEN.findall(text):
        word = raw.lower().replace("’", "'")
        position = 0
        for run in _CJK.finditer(word):
            if run.start() > position:
                out.append(word[position : run.start()])
            chars = run.group(0)
            out.extend([chars] if len(chars) == 1 else [chars[i : i + 2] for i in range(len(chars) - 1)])
            position = run.end()
        if position < len(word):
            out.append(word[position:])
    return out


@cache
def _stemmer(language: str):
    import importlib

    name = _STEMMERS.get(language)
    if name is None:
        return None
    module = importlib.import_module(f"snowballstemmer.{name}_stemmer")
    return getattr(module, f"{name.title()}Stemmer")()


@lru_cache(maxsize=65_536)
def stem(word: str, language: str = "english") -> str:
    """The Snowball stem of a lower-case word ("dependencies" and "dependency" -> "depend"); a word of a
    language without a stemmer (or of another script) stays as it is."""
    word = word.lower().strip("'’-")
    if language == "english":
        if word.endswith("'s"):
            word = word[:-2]
        word = IRREGULAR.get(word, word)
        if not word.isascii():
            return word
    stemmer = _stemmer(language)
    return stemmer.stemWord(word) if stemmer is not None and word else word
