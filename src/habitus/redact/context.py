"""Keyword in context: a value is a secret because of the name it is given, whatever its shape.

    password = "hunter2"            PASSWORD-named: any literal value is a secret
    export STRIPE_TOKEN=abc…        TOKEN-named: a literal that looks like a credential
    X-Api-Token: abc…               a header is a key with a ":" separator
    {"client_secret": "…"}          JSON and YAML fields (escaped quotes inside a JSON string too)
    ?access_token=…&                URL query parameters
    --password hunter2              command-line flags
    auth ok with credentials abc…   a credential-looking token right after a secret-naming word

What is never a secret, however it is named: code that computes the value (`getpass.getpass()`,
`os.environ["API_KEY"]`, `request.headers.get("X")`, `self.token`, a variable passed on
`f(password=password)`), type annotations (`token: str`), templates (`${TOKEN}`, `{{ secrets.X }}`,
`f"{token}"`), placeholders (`<your-api-key>`, `***`) and prose ("Password: make sure it is long").

Secret-named keys are found from the secret word outwards (the word first, then the identifier around
it), so the scan is linear in the text whatever it holds.
"""

from __future__ import annotations

import re

from habitus.redact.entropy import credential_value, random_token, segments_are_words
from habitus.redact.lazy import Lazy

SECRET = "[REDACTED:secret]"

# The same words in German, Spanish, French, Portuguese, Japanese, Chinese and Russian (lowercase; "pass"
# and "token" already find passwort, mot de passe, Zugangstoken).
_FOREIGN_HITS = ("kennwort", "schlüssel", "schluessel", "contrase", "clave", "senha", "chave", "jeton", "clé",
                 "пароль", "парол", "токен", "ключ", "секрет", "パスワード", "トークン", "キー", "暗証", "密码",
                 "密碼", "令牌", "密钥", "秘钥", "口令", "凭证", "憑證", "zugangsdaten")  # fmt: skip

# The words a secret's name is built from, searched one literal at a time in the lowercased text (a
# literal search runs at memory speed; one case-insensitive alternation was the redactor's slowest step).
_HIT_WORDS = ("pass", "pwd", "pw", "secret", "token", "key", "auth", "cred", "cookie", "sig", "bearer", "jwt", "dsn",
              "pat", "sas", *_FOREIGN_HITS)  # fmt: skip
_WHOLE_WORDS = frozenset({"pat", "sas", "pw"})
_NEAR_WORDS = ("pass", "pwd", "secret", "token", "key", "cred", "auth", "bearer", "pat", "api",
               *_FOREIGN_HITS)  # fmt: skip
_IDCHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-.$@")
_CAMEL = Lazy(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_SPLIT = Lazy(r"[_\-.$@]+")
_SEP = Lazy(r"(?P<close>\\?[\"'`])?(?P<ann>[ \t]*:[ \t]*[A-Za-z_][\w.\[\], |]{0,40}?(?=[ \t]+=[^=]))?"
                  r"(?P<sep>[ \t]*\??(?:=>|:=|\?=|=(?!=)|:(?![:/])|：)[ \t]*)")  # fmt: skip
_FLAG_SEP = Lazy(r"[ \t]+|=")

PASSWORD, TOKEN, WEAK = "password", "token", "weak"
_PASSWORD_WORDS = frozenset({"password", "passwd", "passphrase", "pwd", "pass", "secret", "passcode", "pw",
                             "passwort", "kennwort", "contraseña", "contrasena", "passe", "senha", "пароль",
                             "パスワード", "密码", "密碼", "口令", "暗証番号"})  # fmt: skip
_TOKEN_WORDS = frozenset({"token", "apikey", "credential", "credentials", "creds", "authorization", "auth",
                          "bearer", "jwt", "cookie", "dsn", "sas", "pat", "authtoken", "accesstoken",
                          "secretkey", "privatekey", "clientsecret", "apitoken", "refreshtoken", "authkey",
                          "accesskey", "sessiontoken", "apisecret", "secrettoken", "jeton", "токен", "トークン",
                          "令牌", "密钥", "秘钥", "zugangstoken", "zugangsdaten", "凭证", "憑證"})  # fmt: skip
_KEY_QUALIFIERS = frozenset({"api", "secret", "private", "access", "auth", "client", "master", "encryption",
                             "signing", "license", "licence", "account", "service", "app", "consumer",
                             "subscription", "storage", "shared", "webhook", "deploy", "sk", "x", "admin",
                             "session", "write", "read", "ingest", "management", "org", "project", "user",
                             "live", "test", "prod", "personal", "server", "sdk", "rest", "mgmt", "dev"})  # fmt: skip
_WEAK_WORDS = frozenset({"key", "sig", "signature", "salt", "hmac", "schlüssel", "schluessel", "clave", "chave",
                         "clé", "cle", "ключ", "キー"})  # fmt: skip
_CODE_WORDS = frozenset(
    {
        "none",
        "null",
        "nil",
        "true",
        "false",
        "undefined",
        "self",
        "this",
        "cls",
        "str",
        "string",
        "bytes",
        "int",
        "bool",
        "boolean",
        "any",
        "object",
        "optional",
        "required",
        "text",
        "number",
        "char",
        "varchar",
        "list",
        "dict",
        "tuple",
        "unknown",
        "void",
        "never",
        "type",
        "secretstr",
        "secret",
        "password",
        "token",
        "env",
        "environ",
        "default",
        "value",
        "os",
        "process",
        "config",
        "settings",
        "getenv",
        "input",
        "prompt",
        "sensitive",
        "hidden",
        "masked",
        "redacted",
        "empty",
        "nullable",
        "uuid",
    }
)  # fmt: skip
_TEMPLATE = Lazy(r"\$\{|\{\{|%\(|%s\b|<%|#\{|^\$|^%\w+%$|\$\(")
_PLACEHOLDER = Lazy(r"(?i)^<[^>]*>$|^\*+$|^x{3,}$|^\.{3,}$|^\[redacted|your[_\- ]?\w*(key|token|secret|password)|"
                          r"^(?:changeme|placeholder|example|dummy|redacted|hidden|masked|secret|password)$")  # fmt: skip
_DOTTED = Lazy(r"^[A-Za-z_$][\w$]*(?:(?:\.|::|->)[A-Za-z_$][\w$]*)+$")
_IDENT = Lazy(r"^[A-Za-z_$][\w$]*$")
_UNQUOTED_STOP = frozenset(" \t\r\n\"'`,;&<>|")
_SCHEMES = frozenset({"bearer", "basic", "token", "digest", "negotiate", "apikey", "sso-key", "key", "otp"})
_NEAR = Lazy(
    r"(?<![A-Za-z0-9_.])(?i:passwords?|passwd|passphrase|pwd|secret|tokens?|api[ _-]?key|key|credentials?|"
    r"creds|auth|bearer|apikey|pat|passwort|kennwort|zugangs(?:token|daten|schlüssel)|schl(?:ü|ue)ssel|"
    r"contrase(?:ñ|n)a|clave|senha|chave|passe|jeton|clé|парол[ьяеюи]\w*|токен\w*|ключ\w*|секрет\w*)"
    r"(?=[ \t]|[:=：][ \t]*[^ \t=])"
    # Japanese and Chinese: no space before the value, often a particle ("パスワードは…", "密码是…")
    r"|(?:パスワード|トークン|キー|暗証番号|密码|密碼|令牌|密钥|秘钥|口令|凭证|憑證)"
)
_LINKING = frozenset({"ist", "lautet", "war", "mein", "meine", "der", "die", "das", "es", "el", "la", "mi", "de",
                      "del", "acceso", "est", "le", "mon", "ma", "d", "l", "du", "accès", "é", "o", "meu", "minha",
                      "da", "do", "acesso", "api", "—", "–", "мой", "это", "доступа", "は", "が", "を", "の", "是",
                      "为", "為", "：",
                      "is", "was", "are", "were", "be", "to", "of", "for", "the", "a", "an", "my", "our", "your", "this",
                      "that", "it", "now", "still", "here", "there", "as"})  # fmt: skip
# a word after the keyword: it may hold "=" or ":" inside ("user:pass", "abc=def=="), not start with one
_SHORT_KEY = Lazy(r"^(?=[A-Za-z0-9]*[0-9])(?=[A-Za-z0-9]*[A-Za-z])[A-Za-z0-9]{8,}$")
_WORD_AND_NUMBER = Lazy(r"^[A-Za-z][a-z]+\d{1,4}$|^\d{1,4}[a-z]+$|^v\d")  # "version2", "2fast", "v1beta1"
# (a word with accents is one word, "accès"; a run of another script is a word of its own: "パスワードは
# Xk9…です" is は, Xk9…, です; a value is ASCII)
_NEAR_SPLIT = Lazy(
    r"[A-Za-z\u00c0-\u024f]*[\u00c0-\u024f][A-Za-z\u00c0-\u024f]*"
    r"|[^\x00-\x7f\s：，。、「」]+"
    r"|[^\s:=,;()\[\]{}'\"<>`|\x80-\U0010ffff][^\s,;()\[\]{}'\"<>`|\x80-\U0010ffff]*"
)


def lower_text(text: str) -> str:
    """text in lower case, position for position (str.lower can lengthen a few characters)."""
    low = text.lower()
    return low if len(low) == len(text) else text.translate(_ASCII_LOWER)


_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


_SPLIT_VOCABULARY: dict[tuple[str, ...], tuple[tuple[str, ...], tuple[str, ...]]] = {}


def hits(low: str, vocabulary: tuple[str, ...]) -> list[tuple[int, int]]:
    """(start, end) of every occurrence of the vocabulary's words in low, in order."""
    split = _SPLIT_VOCABULARY.get(vocabulary)
    if split is None:
        split = _SPLIT_VOCABULARY[vocabulary] = (
            tuple(w for w in vocabulary if w.isascii()),
            tuple(w for w in vocabulary if not w.isascii()),
        )
    found: list[tuple[int, int]] = []
    # most text is ASCII: the words of other scripts are searched only where they can occur
    for word in split[0] if low.isascii() else vocabulary:
        whole = word in _WHOLE_WORDS
        start = low.find(word)
        while start >= 0:
            end = start + len(word)
            if not whole or not (
                (start and low[start - 1].isalnum()) or (end < len(low) and low[end].isalnum())
            ):
                found.append((start, end))
            start = low.find(word, end)
    found.sort()
    return found


def words(key: str) -> list[str]:
    return [w for w in _SPLIT.split(_CAMEL.sub("_", key.lstrip("-$@"))) if w]


def family(key: str) -> str | None:
    """Which kind of secret a key names (PASSWORD, TOKEN, WEAK), or None: `DB_PASSWORD`, `apiKey`,
    `X-Api-Token`, `aws_secret_access_key`; not `max_tokens`, `password_hash`, `monkey`."""
    parts = [w.lower() for w in words(key)]
    if not parts:
        return None
    last = parts[-1]
    previous = parts[-2] if len(parts) > 1 else ""
    if last in _PASSWORD_WORDS or last.endswith(("password", "passwd")):
        return PASSWORD
    if last in _TOKEN_WORDS or (last.endswith("token") and len(last) > 5):
        return TOKEN
    if last == "key":
        return (
            TOKEN
            if previous in _KEY_QUALIFIERS or previous.endswith(("secret", "private", "access"))
            else WEAK
        )
    if last.endswith("key") and last[:-3] in _KEY_QUALIFIERS:
        return TOKEN
    if last.endswith("secret") and len(last) > 6:
        return PASSWORD
    if last in _WEAK_WORDS:
        return WEAK
    return None


_RIGHT = Lazy(r"[\w\-.$@]{0,81}")


def _key_end(text: str, end: int) -> int | None:
    right = _RIGHT.match(text, end).end()  # type: ignore[union-attr]
    return None if right - end > 80 else right


def _key_start(text: str, start: int) -> int | None:
    """Where the identifier that ends at start begins (walking back over identifier characters)."""
    before = text[max(0, start - 81) : start][::-1]
    size = _RIGHT.match(before).end()  # type: ignore[union-attr]
    return None if size > 80 else start - size


def _quoted_value(text: str, start: int) -> tuple[int, int, str] | None:
    """(content start, content end, quote) of a quoted literal at start, or None."""
    quote = text[start]
    prefix = ""
    if quote == "\\" and text[start + 1 : start + 2] in ('"', "'"):
        quote = text[start : start + 2]
    elif quote in "rbfuRBFU" and text[start + 1 : start + 2] in ('"', "'"):
        prefix, quote = quote, text[start + 1]
        start += 1
    elif quote not in "\"'`":
        return None
    content = start + len(quote)
    limit = min(len(text), content + 4096)
    position = content
    while position < limit:
        char = text[position]
        if char == "\n":
            return None
        if text.startswith(quote, position) and (len(quote) == 2 or text[position - 1] != "\\"):
            return content, position, prefix + quote
        position += 1
    return None


def _unquoted_value(text: str, start: int) -> tuple[int, int]:
    end = start
    limit = min(len(text), start + 4096)
    while end < limit and text[end] not in _UNQUOTED_STOP:
        end += 1
    while end > start and text[end - 1] in ").:]}":  # "f(token=abc)", "token=abc." end the value
        end -= 1
    return start, end


def _is_code(value: str, following: str, separator: str) -> bool:
    """Unquoted text that computes a value rather than being one."""
    if "(" in value or "[" in value or "{" in value or value.startswith(("-", "!", "&", "*", "@")):
        return True
    if _DOTTED.match(value):
        return True
    after = following.lstrip(" \t")
    if following[:1] in ("(", "[", ".") or (after[:1] == "=" and after[1:2] != "="):
        return True  # a call, an index, an attribute, a chained assignment
    if _IDENT.match(value):
        lowered = value.lower()
        if lowered in _CODE_WORDS or any(
            w in lowered for w in ("pass", "token", "secret", "key", "auth", "cred")
        ):
            return True
        if not any(c.isdigit() for c in value):
            # `password = default` is a variable; `PASSWORD=changeme` (env, ini, URL) and
            # `password: changeme` (YAML, a header) are literals.
            if following[:1] in (",", ")", "}", ";"):
                return True
            return separator.strip() not in (":", "?:") and separator != separator.strip()
    return False


def _is_prose(value: str) -> bool:
    pieces = value.split()
    if len(pieces) >= 3:
        return True
    return len(pieces) == 2 and all(p.isalpha() for p in pieces)


def secret_value(
    value: str, kind: str, *, quoted: bool, following: str, prose_sep: bool, separator: str = "="
) -> bool:
    """Is value (the right-hand side of a secret-named key) a secret?"""
    if len(value) < 3 or value.startswith("[REDACTED"):
        return False
    if _TEMPLATE.search(value) or _PLACEHOLDER.search(value):
        return False
    if quoted:
        if _is_prose(value) or value.lower() in _CODE_WORDS:
            return False
    else:
        if _is_code(value, following, separator):
            return False
        if value.isdigit() and (kind == WEAK or len(value) < 16) and kind != PASSWORD:
            return False
        if prose_sep and re.match(r"[ \t]+[^\W\d_]", following):
            # "Password: make sure it is long", "token: the budget" — a sentence, not a value
            return credential_value(value, min_len=8)
    if kind == PASSWORD:
        return len(value) >= 4 or any(c.isdigit() for c in value)
    if kind == TOKEN:
        if value.isdigit():
            return len(value) >= 16
        if _SHORT_KEY.match(value) and not _WORD_AND_NUMBER.match(value):
            return True  # `api_key: mlm9iqkm`: letters and digits mixed, under a name that says key
        return credential_value(value, min_len=8) or (
            len(value) >= 16
            and not _IDENT.match(value)
            and any(c.isalpha() for c in value)
            and not _is_prose(value)
            and not _DOTTED.match(value)
            and "/" not in value
            and " " not in value
        )
    return credential_value(value, min_len=12)


def _authorization(text: str, start: int) -> tuple[int, int] | None:
    """The credential after `Authorization:` (with or without a scheme), to the end of the value."""
    value_start, value_end = _unquoted_value(text, start)
    first = text[value_start:value_end]
    if first.startswith("[REDACTED") or _is_code(first, text[value_end : value_end + 8], ":"):
        return None
    if first.lower() in _SCHEMES and value_end < len(text) and text[value_end] == " ":
        cred_start, cred_end = _unquoted_value(text, value_end + 1)
        cred = text[cred_start:cred_end]
        usable = len(cred) >= 8 and not cred.startswith("[REDACTED") and not _TEMPLATE.search(cred)
        if usable and (credential_value(cred, min_len=8) or not (cred.isalpha() or segments_are_words(cred))):
            return value_start, cred_end
        return None
    if credential_value(first, min_len=8) and not _TEMPLATE.search(first):
        return value_start, value_end
    return None


_ENV_VALUE = Lazy(r"[^\s\"'`]*")
_COOKIE_PAIR = Lazy(r"([A-Za-z0-9_\-.]+)=([^;\s\"'\\]+)")


def separator_of(sep: re.Match[str]) -> str:
    return sep.group("sep") if "sep" in sep.re.groupindex else sep.group(0)


def redact_assignments(text: str) -> tuple[str, int]:
    """Replace the values of secret-named keys, fields, headers and flags."""
    spans: list[tuple[int, int, str]] = []
    cursor = 0
    for hit_start, hit_end in hits(lower_text(text), _HIT_WORDS):
        if hit_start < cursor:
            continue
        key_end = _key_end(text, hit_end)
        if key_end is None:
            cursor = hit_end
            continue
        cursor = key_end
        # most hits ("passed", "author", "keys()") have no separator after them: test that first
        sep = _SEP.match(text, key_end)
        if sep is None and not (key_end < len(text) and text[key_end] in " \t="):
            continue
        key_start = _key_start(text, hit_start)
        if key_start is None:
            continue
        key = text[key_start:key_end]
        kind = family(key)
        if kind is None:
            continue
        flag = key.startswith("-")
        if sep is None and flag:
            sep = _FLAG_SEP.match(text, key_end)
        if sep is None:
            continue
        position = sep.end()
        if position >= len(text):
            continue
        lowered = key.lower().lstrip("-")
        if lowered in ("authorization", "proxy-authorization"):
            found = _authorization(text, position)
            if found:
                spans.append((found[0], found[1], "[REDACTED:auth_header]"))
                cursor = found[1]
            continue
        quoted = _quoted_value(text, position)
        if quoted is not None:
            start, end, quote = quoted
            value = text[start:end]
            if "f" in quote.lower() and "{" in value:
                continue
            if quote == "`" and not credential_value(value, min_len=8):
                continue  # `get_token()`: inline code in Markdown
            following = text[end + len(quote.lstrip("rbfuRBFU")) : end + 8]
            if secret_value(value, kind, quoted=True, following=following, prose_sep=False):
                spans.append((start, end, SECRET))
                cursor = end
            continue
        start, end = _unquoted_value(text, position)
        if key.isupper() and separator_of(sep) == "=" and not flag:
            # KEY=value in a shell or an env file: the value is everything up to the next blank
            end = _ENV_VALUE.match(text, start).end()  # type: ignore[union-attr]
            while end > start and text[end - 1] in ".,;:)":
                end -= 1
            value = text[start:end]
            ordinary = value.lower() in _CODE_WORDS or (value.isdigit() and len(value) < 16) or len(value) < 3
            literal = not ordinary and not _TEMPLATE.search(value) and not _PLACEHOLDER.search(value)
            if (
                literal
                and "[REDACTED" not in value
                and (kind != WEAK or credential_value(value, min_len=12) or len(value) >= 16)
            ):
                spans.append((start, end, SECRET))
                cursor = end
            continue
        if "cookie" in lowered and separator_of(sep).strip() == ":":
            # a Cookie / Set-Cookie header: each name=value pair on the line is judged on its own
            line_end = text.find("\n", start)
            line_end = len(text) if line_end < 0 else line_end
            for pair in _COOKIE_PAIR.finditer(text, start, line_end):
                if credential_value(pair.group(2), min_len=8):
                    spans.append((pair.start(2), pair.end(2), SECRET))
            cursor = line_end
            continue
        value = text[start:end]
        separator = separator_of(sep)
        prose_sep = separator.strip() in (":", "?:") or (flag and not separator.strip())
        following = text[end : end + 8]
        if secret_value(
            value, kind, quoted=False, following=following, prose_sep=prose_sep, separator=separator
        ):
            spans.append((start, end, SECRET))
            cursor = end
    return _apply(text, spans)


def redact_near_keywords(text: str) -> tuple[str, int]:
    """Replace a credential-looking token within a few words after a secret-naming word:
    "auth ok with credentials abc123…", "the token is 7f3a…", "password hunter2"."""
    spans: list[tuple[int, int, str]] = []
    cursor = 0
    for hit_start, _ in hits(lower_text(text), _NEAR_WORDS):
        if hit_start < cursor:
            continue
        hit = _NEAR.match(text, hit_start)
        if hit is None:
            continue
        word = hit.group(0).lower()
        password = word.startswith("pass") or word == "pwd"
        strong = not word.startswith(("key", "auth", "pat", "api"))  # a word that names nothing but a secret
        line_end = text.find("\n", hit.end(), hit.end() + 64)
        window_end = min(len(text), hit.end() + 56) if line_end < 0 else line_end
        position = 0  # the how-manyth word after the keyword, linking words ("is", "was") not counted
        for index, started in enumerate(_NEAR_SPLIT.finditer(text, hit.end(), window_end)):
            if index >= 5:
                break
            if started.group(0).lower() in _LINKING:
                continue
            position += 1
            if started.end() - started.start() < 6 and started.end() < window_end:
                continue  # a short word: never a credential
            token = _NEAR_SPLIT.match(text, started.start())  # whole, though it runs past the window
            assert token is not None
            value = token.group(0).rstrip(".!?-:")
            if "REDACTED" in value:
                break
            if len(value) < 6:
                continue
            following = text[token.start() + len(value) : token.start() + len(value) + 1]
            if following in ("(", "[", ".") or _DOTTED.match(value) or _TEMPLATE.search(value):
                continue
            if value[:1] in "._$/~" or text[token.start() - 1 : token.start()] == ".":
                continue
            if "://" in value or value.startswith("//"):
                continue  # a URL near the word ("the token docs at https://…"); its credentials have own rules
            if position == 1:
                # right after the word: "password hunter2", "token 7f3a9c01e2"
                mixed = any(c.isdigit() for c in value) and any(c.isalpha() for c in value)
                short_key = strong and _SHORT_KEY.match(value) and not _WORD_AND_NUMBER.match(value)
                found = credential_value(value, min_len=8) or (mixed and bool(password or short_key))
            else:  # further on ("password hash with argon2id"): only what is plainly random
                found = credential_value(value, min_len=12) and (len(value) >= 16 or random_token(value))
            if found:
                spans.append((token.start(), token.start() + len(value), SECRET))
                cursor = token.start() + len(value)
    return _apply(text, spans)


def _apply(text: str, spans: list[tuple[int, int, str]]) -> tuple[str, int]:
    if not spans:
        return text, 0
    out: list[str] = []
    position = 0
    for start, end, marker in spans:
        if start < position:
            continue
        out += [text[position:start], marker]
        position = end
    out.append(text[position:])
    return "".join(out), len(spans)
