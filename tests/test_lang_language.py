"""habitus.lang.language: the one guess of a text's language that select, memory and learn share."""

from __future__ import annotations

import pytest

from habitus.lang.language import is_english, language_of
from habitus.learn import foreign
from habitus.memory import hybrid
from habitus.select import gate


@pytest.mark.parametrize(
    ("text", "language"),
    [
        ("Kannst du bitte die Tests laufen lassen, bevor du pushst?", "german"),
        ("corrige le bug dans le parseur, il faut que ça marche avant ce soir", "french"),
        ("por favor arregla el error de la base de datos antes del despliegue", "spanish"),
        ("atualiza todas as dependências do projeto, tá tudo desatualizado", "portuguese"),
        ("puoi sistemare il test che fallisce? grazie", "italian"),
        ("kun je de tests draaien voordat je het naar main pusht?", "dutch"),
        ("テストを書いてからプッシュしてください", "japanese"),
        ("请先运行测试再提交", "chinese"),
        ("исправь ошибку в парсере, пожалуйста", "russian"),
        ("테스트를 먼저 실행해 주세요", "korean"),
        ("Γράψε τα τεστ πρώτα", "greek"),
    ],
)
def test_each_language_is_named(text: str, language: str) -> None:
    assert language_of(text) == language
    assert not is_english(text)


@pytest.mark.parametrize(
    "text",
    [
        "fix the bug",
        "",
        "Kubernetes",
        "User prefers tabs over spaces in every file",  # "over", "in" are Dutch words too
        "why does os.path.join drop the first part? see src/app/io.py",  # "os" is no Portuguese article
        "rename del_cache() to drop_cache and update la_config in settings.py",  # "del", "la" are code
        "the test at https://ci.example.com/de/la/el/runs/7 fails, don't retry it",  # a URL has no language
        "bump lodash to 4.17.21 and run `npm ci --no-audit` again",
        "git log shows 7c1e2a9d0b44 -> e03f91aa2c10, run them against prod now",  # hex ids are no words
        "set e.Data and e.Message in the handler before you throw",
        "ok",
    ],
)
def test_code_heavy_english_is_english(text: str) -> None:
    assert language_of(text) == "english"


@pytest.mark.parametrize(
    ("text", "language"),
    [
        ("bitte fix den bug in der config, die tests sind rot", "german"),  # English loanwords
        ("¿puedes revisar el PR #42 de auth_service.py?", "spanish"),  # a question in code words
        ("on peut livrer la 0.4 ?", "french"),
        ("precisamos gerar PDFs", "portuguese"),
        ("README.md を更新して", "japanese"),  # kana decides, whatever Latin is around it
        ("run the tests, then 修复 the parser", "chinese"),
        ("I'm sure it's fine, la la la", "english"),  # contractions outweigh a stray article
    ],
)
def test_mixed_texts(text: str, language: str) -> None:
    assert language_of(text) == language


def test_select_memory_and_learn_use_the_one_guess() -> None:
    # The rooms import the guess itself, not a copy of it.
    assert gate.is_english is is_english
    assert hybrid.is_english is is_english
    assert foreign.is_english is is_english
    assert not foreign.is_foreign("why does os.path.join drop the first part?")
    assert foreign.is_foreign("nunca hagas force push a main")  # a rule word opens it: Spanish
    assert foreign.is_foreign("atualiza todas as dependências do projeto")
