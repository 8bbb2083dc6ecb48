"""Keyword in context beyond English: a secret named in German, Spanish, French, Portuguese, Japanese,
Chinese or Russian is removed (in prose, a field, an env file), and ordinary sentences in those
languages about passwords and keys come through unchanged."""

from __future__ import annotations

import json

import pytest

from habitus.redact import looks_sensitive, redact, redact_obj

PW = "Xk9mPq2vLw"  # a password-shaped value: letters and digits, 10 characters
KEY = "7f3a9c01e2b44d5f8a6bc"  # 21 hex characters: too plain to be taken bare, a key once named
TOKEN = "q8Zr2KfL0xT"  # 11 characters: a token only next to a word that names one


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        # German
        (f"Mein Passwort ist {PW}, bitte nicht weitergeben.", PW),
        (f"Passwort: {PW}", PW),
        (f"Das Kennwort lautet {PW}", PW),
        (f"Der API-Schlüssel lautet {KEY}", KEY),
        (f"Zugangstoken: {TOKEN}", TOKEN),
        (f"export DB_PASSWORT={PW}", PW),
        # Spanish
        (f"mi contraseña es {PW}", PW),
        (f"contraseña: {PW}", PW),
        (f"la clave de la API es {KEY}", KEY),
        (f"el token de acceso es {TOKEN}", TOKEN),
        # French
        (f"le mot de passe est {PW}", PW),
        (f"mot de passe : {PW}", PW),
        (f"la clé API : {KEY}", KEY),
        (f"le jeton d'accès est {TOKEN}", TOKEN),
        # Portuguese
        (f"a senha é {PW}", PW),
        (f"senha: {PW}", PW),
        (f"a chave da API é {KEY}", KEY),
        (f"o token de acesso é {TOKEN}", TOKEN),
        # Japanese (no spaces, full-width colon)
        (f"パスワードは{PW}です", PW),
        (f"パスワード：{PW}", PW),
        (f"APIキー：{KEY}", KEY),
        (f"アクセストークン: {TOKEN}", TOKEN),
        # Chinese
        (f"密码是{PW}", PW),
        (f"密码：{PW}", PW),
        (f"API密钥：{KEY}", KEY),
        (f"访问令牌: {TOKEN}", TOKEN),
        # Russian
        (f"пароль: {PW}", PW),
        (f"мой пароль {PW}", PW),
        (f"Пароль — {PW}", PW),
        (f"ключ API: {KEY}", KEY),
        (f"токен доступа: {TOKEN}", TOKEN),
    ],
)
def test_a_secret_named_in_another_language_is_removed(text: str, secret: str) -> None:
    clean, count = redact(text)
    assert secret not in clean, clean
    assert count >= 1
    assert not looks_sensitive(clean)


@pytest.mark.parametrize(
    ("value", "key"),
    [
        ({"passwort": PW}, "passwort"),
        ({"contraseña": PW}, "contraseña"),
        ({"mot_de_passe": PW}, "mot_de_passe"),
        ({"senha": PW}, "senha"),
        ({"пароль": PW}, "пароль"),
        ({"パスワード": PW}, "パスワード"),
        ({"密码": PW}, "密码"),
    ],
)
def test_a_field_named_in_another_language_loses_its_value(value: dict[str, str], key: str) -> None:
    clean, count = redact_obj(value)
    assert clean[key] == "[REDACTED:secret]" and count == 1
    # the same field as JSON text, YAML and TOML
    for text in (json.dumps(value, ensure_ascii=False), f"{key}: {PW}", f'{key} = "{PW}"'):
        assert PW not in redact(text)[0], text


@pytest.mark.parametrize(
    "text",
    [
        "Das Passwort muss mindestens 12 Zeichen lang sein.",
        "Passwort: mindestens zwölf Zeichen, davon zwei Ziffern.",
        "Der Schlüssel: der Name der Spalte, nach der sortiert wird.",
        "Introduzca su contraseña para continuar.",
        "contraseña: debe tener al menos 8 caracteres",
        "Le mot de passe a expiré, réinitialisez-le depuis la page de connexion.",
        "clé : le nom de la colonne",
        "A senha deve ter pelo menos 8 caracteres e um número.",
        "パスワードを忘れた場合は、リセットしてください。",
        "APIキーの有効期限は90日です。",
        "密码必须至少包含8个字符。",
        "请在设置页面重新生成API密钥。",
        "Пароль должен содержать не менее 8 символов.",
        "Пароль: должен быть длинным и сложным",
        "ключ: имя столбца для сортировки",
        "Токен истёк, войдите снова.",
        "Die Funktion get_token() gibt den Schlüssel zurück: self.schluessel",
    ],
)
def test_ordinary_sentences_about_secrets_are_left_alone(text: str) -> None:
    assert redact(text) == (text, 0)
