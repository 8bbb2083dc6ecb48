"""Redaction: remove secrets and personal data from text before habitus stores it.

    redact(text) -> (clean_text, count)       replace every finding with a [REDACTED:kind] marker
    looks_sensitive(text) -> bool             the post-check: does anything still look like a secret?
    redact_obj(value) -> (clean_value, count) the same over a JSON value; secret-named keys lose their value
    clean_stamp(value) -> str | None          a timestamp field: kept when it is one, dropped otherwise

Four layers, in this order (DESIGN.md section 10):

1. private keys: PEM blocks, a block cut before its BEGIN line, a bare PEM body (habitus.redact.pem);
2. provider rules: tokens whose shape names their issuer, about a hundred families, each behind a
   keyword prefilter (habitus.redact.rules);
3. keyword in context: the value of a secret-named key, field, header, flag or URL parameter, and a
   credential-looking token right after a secret-naming word (habitus.redact.context), plus
   Authorization headers, Bearer/Basic credentials and credentials inside URLs;
4. randomness: a long token of mixed character classes that reads like no word, anywhere
   (habitus.redact.entropy); then e-mail addresses, phone numbers and home folders
   (`/home/NAME/...` becomes `~/...`).

Precision matters as much as recall: prose ("skip the token budget", "This is a basic example.") and
code that names a secret without holding one (`password = getpass.getpass()`,
`api_key = os.environ["API_KEY"]`) must come through unchanged. tests/fixtures/redaction/ pins both
directions, with a precision corpus of real code and prose and a third-party secrets corpus.

Patterns compile on first use, so importing this module costs nothing.
"""

from __future__ import annotations

import re
from functools import partial
from typing import Any

from habitus.redact import context, entropy, pem
from habitus.redact.lazy import Lazy

_keywords: tuple[list[tuple[str, int]], list[tuple[str, str]]] | None = None
_compiled: dict[int, re.Pattern[str]] = {}
_fixed: dict[str, Lazy] | None = None
_post: list[re.Pattern[str]] | None = None

_TOKEN_CHARS = "A-Za-z0-9+/=_\\-.~"
_HASH_WORDS = ("sha", "hash", "digest", "checksum", "md5", "commit", "revision", "rev ", "blob", "etag",
               "fingerprint", "integrity", "object", "tree ", "oid", "@", "#")  # fmt: skip
_STAMP = Lazy(r"\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d{1,9})?)?(?:Z|[+-]\d{2}(?::?\d{2})?)?)?")


_DIGIT = Lazy(r"\d")
_HOME_HINTS = (
    ("home_path", ("/home/", "/Users/")),
    ("home_path_windows", ("\\Users\\", "\\users\\", "\\USERS\\")),
    ("home_path_encoded", ("-home-", "-Users-")),
)


def _rules() -> tuple[list[tuple[str, int]], list[tuple[str, str]]]:
    """(keyword, rule index) pairs and the rules' (kind, pattern source); a rule compiles on first use."""
    global _keywords
    if _keywords is None:
        from habitus.redact.rules import RULES

        pairs = [(keyword, index) for index, (_, keywords, _) in enumerate(RULES) for keyword in keywords]
        _keywords = (pairs, [(kind, pattern) for kind, _, pattern in RULES])
    return _keywords


def _rule(index: int) -> re.Pattern[str]:
    """The rule's pattern, extended to the end of the token it matched: a key longer than its issuer's
    documented shape (or with an unexpected tail) is replaced whole, not cut where the shape ends."""
    pattern = _compiled.get(index)
    if pattern is None:
        source = _rules()[1][index][1]
        flags = source[: source.index(")") + 1] if source.startswith("(?i)") else ""
        body = source[len(flags) :]
        pattern = _compiled[index] = re.compile(f"{flags}(?:{body})[A-Za-z0-9+/=_\\-~\\\\]*")
    return pattern


def _patterns() -> dict[str, Lazy]:
    global _fixed
    if _fixed is not None:
        return _fixed
    table = {
        "url_credentials": r"\b(?P<scheme>[A-Za-z][A-Za-z0-9+.\-]{1,20})://(?!\[REDACTED)[^\s/:@\"'<>]*:[^\s/@\"'<>]+@",
        "scheme_credential": r"\b(?P<scheme>Bearer|Basic|Token|bearer|basic|BEARER|BASIC)[ \t]+"
        r"(?P<cred>[A-Za-z0-9._~+/\-]{8,}=*)",
        # a maximal run of token characters (finditer starts a match only where a run starts)
        "candidate": rf"[{_TOKEN_CHARS}]{{16,}}",
        "long_token": r"[^\s\"'`<>(){}\[\],;|\\]{16,}",
        "email": r"\b(?!git@)[A-Za-z0-9][A-Za-z0-9._%+\-]{0,63}@[A-Za-z0-9](?:[A-Za-z0-9\-]{0,61}[A-Za-z0-9])?"
        r"(?:\.[A-Za-z0-9](?:[A-Za-z0-9\-]{0,61}[A-Za-z0-9])?)*\.[A-Za-z]{2,24}\b",
        "phone": r"(?<![\w.+\-/:])(?:\+\d{1,3}[ .\-]?)?(?:\(\d{3}\)\s?|\d{3}[ .\-])\d{3}[ .\-]\d{4}(?![\w.\-/:])"
        r"|(?<![\w.+\-/:])\+\d{1,3}[ .\-]\d{2,4}[ .\-]\d{3,4}[ .\-]?\d{2,4}(?![\w.\-/:])",
        "phone_hint": r"\d{3}[ .\-)]\s?\d{3}[ .\-]\d|\+\d{1,3}[ .\-]\d{2}",
        # Home folders: keep the path, drop the user name.
        "home_path": r"(?<![\w.:/~\-])(?:/home|/Users)/(?!USER\b)[A-Za-z0-9._\-]+(?=/|\b)",
        "home_path_windows": r"(?i)\b[A-Z]:\\Users\\[^\\\s\"']+",
        "home_path_encoded": r"(?<=-)(?:home|Users)-(?!USER-)[A-Za-z0-9._]+(?=-)",
    }
    _fixed = {name: Lazy(pattern) for name, pattern in table.items()}
    return _fixed


def _post_patterns() -> list[re.Pattern[str]]:
    """Extra detectors for the post-check only: remnants a partial redaction could leave behind."""
    global _post
    if _post is None:
        _post = [
            re.compile(r"-----(?:BEGIN|END) [A-Z0-9 ]*PRIVATE KEY"),
            re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{12,}"),
            re.compile(r"\bgh[pousr]_[A-Za-z0-9]{20,}"),
            re.compile(r"\bsk-(?:ant-|proj-)?[A-Za-z0-9]{24,}"),
            re.compile(r"\bxox[abposr]-\d{6,}"),
        ]
    return _post


def _provider_rules(text: str) -> tuple[str, int]:
    """Run the rules whose keywords occur in the text's long tokens (every provider token is one)."""
    # Every provider token is 16+ characters with a digit or both cases: gating on such runs keeps the
    # keyword search off the bulk of ordinary code and prose (snake_case names, words, paths).
    runs = set(_patterns()["long_token"].findall(text))
    tokens = [t for t in runs if len(t) >= 28 or _DIGIT.search(t) or not (t.islower() or t.isupper())]
    if not tokens:
        return text, 0
    runs_text = "\n".join(tokens)
    haystack = runs_text.lower()
    pairs, table = _rules()
    indexes = sorted({index for keyword, index in pairs if keyword in haystack})
    total = 0
    for index in indexes:
        pattern = _rule(index)
        if pattern.search(runs_text) is None:  # a match lies within one run
            continue
        text, n = pattern.subn(f"[REDACTED:{table[index][0]}]", text)
        total += n
    return text, total


def _scheme_credential(match: re.Match[str]) -> str:
    cred = match.group("cred").rstrip(".")
    scheme = match.group("scheme")
    if scheme.lower() == "basic":
        ok = re.fullmatch(r"[A-Za-z0-9+/]{8,}={0,2}", cred) is not None and (
            any(c.isdigit() or c in "+/=" for c in cred) or any(c.isupper() for c in cred[1:])
        )
    else:
        ok = entropy.credential_value(cred, min_len=8) or (
            len(cred) >= 16 and not cred.isalpha() and not entropy.segments_are_words(cred)
        )
    if not ok or cred.startswith("[REDACTED"):
        return match.group(0)
    return f"{scheme} [REDACTED:credential]" + match.group("cred")[len(cred) :]


def _hash_context(text: str, start: int) -> bool:
    """Does a word near the digest at start say what it is? Before it ("commit", "sha256", "integrity"),
    or after it: a ref (`<sha> refs/heads/main`) or git log's short id of the same commit (`%H %h`)."""
    before = text[max(0, start - 48) : start].lower()
    if any(word in before for word in _HASH_WORDS):
        return True
    end = start
    while end < len(text) and text[end] in "0123456789abcdefABCDEF":
        end += 1
    after = text[end : end + 16]
    return after.startswith((" refs/", "\trefs/")) or (
        end - start >= 40 and after[:1] in " \t" and after[1:8].lower() == text[start : start + 7].lower()
    )


_DIGEST_LABEL = Lazy(r"(?:\bh1|\bsha(?:1|224|256|384|512)|\bmd5)[:=-]$")
_DIGEST_SIZES = frozenset({27, 28, 43, 44, 64, 86, 88})  # base64 of SHA-1, SHA-256, SHA-384, SHA-512


def _labelled_digest(text: str, start: int, token: str) -> bool:
    """A base64 digest that says what it is: `h1:…=` (go.sum), `sha256:…`, or a digest's length after a
    hash word ("integrity", "checksum")."""
    if len(token) not in _DIGEST_SIZES or not all(c.isalnum() or c in "+/=" for c in token):
        return False
    return bool(_DIGEST_LABEL.search(text, max(0, start - 8), start)) or _hash_context(text, start)


_BASE64 = Lazy(r"[A-Za-z0-9+/]+={0,2}|[A-Za-z0-9_\-]+={0,2}")
_USER_PASS = Lazy(r"[^\s:]+:\S+")


def _encoded_text(token: str) -> bool:
    """Base64 of readable text (an SVG, a sentence, a JSON header): written, not random. A key decodes to
    random bytes; `user:password` (Basic credentials) is text but still a secret."""
    if len(token) < 16 or not _BASE64.fullmatch(token):
        return False
    import base64
    import binascii

    try:
        raw = base64.b64decode(
            token.replace("-", "+").replace("_", "/") + "=" * (-len(token) % 4), validate=True
        )
        decoded = raw.decode()
    except (binascii.Error, ValueError):
        return False
    printable = sum(1 for c in decoded if c.isprintable() or c in "\n\t")
    text_like = any(c in decoded for c in " <{\n")
    return printable == len(decoded) and text_like and not _USER_PASS.fullmatch(decoded.strip())


def _random_tokens(text: str, candidate: Lazy) -> tuple[str, int]:
    """Bare high-entropy tokens, and high-entropy pieces of a URL or of a `name=value` run."""
    out: list[str] = []
    position = count = 0
    for match in candidate.finditer(text):
        token = match.group(0)
        start = match.start()
        if "REDACTED" in token:
            continue
        if start and text[start - 1] == "\\":  # "\nMIIE...": an escape, then the token
            token, start = token[1:], start + 1
        trimmed = token.rstrip(".-~")
        if _labelled_digest(text, start, trimmed) or _encoded_text(trimmed):
            continue
        if entropy.random_token(trimmed, hash_context=partial(_hash_context, text, start)):
            start, end = _glued(text, start, start + len(trimmed), position)
            out += [text[position:start], "[REDACTED:high_entropy]"]
            position = end
            count += 1
            continue
        url = token.startswith("//")
        inner = trimmed.rstrip("=")
        if not url and "=" not in inner:
            continue  # a file path's folders are not secrets; only a URL's pieces and name=value runs
        offset = start
        for piece in _PIECES[url].split(trimmed):
            # a hex piece of a URL's path is a commit, a gist, an object id; a key travels in the query
            hex_piece = url and all(c in "0123456789abcdefABCDEF" for c in piece)
            if len(piece) >= 16 and not hex_piece and entropy.random_token(piece):
                out += [text[position:offset], "[REDACTED:high_entropy]"]
                position = offset + len(piece)
                count += 1
            offset += len(piece)
    if not count:
        return text, 0
    out.append(text[position:])
    return "".join(out), count


_PIECES = {True: Lazy(r"([/.=])"), False: Lazy(r"(=)")}
_GLUE = frozenset("!?%:^*|#$&]")
_RUN_AFTER = Lazy(rf"[{_TOKEN_CHARS}]+")
_RUN_BEFORE = Lazy(rf"[{_TOKEN_CHARS}]+$")


def _glued(text: str, start: int, end: int, floor: int) -> tuple[int, int]:
    """A random token's span widened over what punctuation glues to it without a space: a key's other
    half after `!`, `?`, `%`, `:` (`00D…!AQ…`, `…ERd?stTj…`, `KEY:SECRET`), when that half is not a
    plain word or number."""
    while end + 1 < len(text) and text[end] in _GLUE:
        run = _RUN_AFTER.match(text, end + 1)
        if run is None or not _glued_piece(run.group(0).rstrip(".-~")):
            break
        end = run.start() + len(run.group(0).rstrip(".-~"))
    while start - 1 > floor and text[start - 1] in _GLUE:
        run = _RUN_BEFORE.search(text, max(floor, start - 257), start - 1)
        if run is None or not _glued_piece(run.group(0)):
            break
        start = run.start()
    return start, end


def _glued_piece(piece: str) -> bool:
    return len(piece) >= 4 and entropy.credential_value(piece, min_len=4) and not piece.isdigit()


def _redact(text: str) -> tuple[str, int, bool]:
    """(clean text, findings, whether anything at all changed: a home folder is rewritten, not counted)."""
    patterns = _patterns()
    total = 0
    text, n = pem.redact_blocks(text)
    total += n
    text, n = _provider_rules(text)
    total += n
    if "://" in text:
        text, n = patterns["url_credentials"].subn(
            lambda m: f"{m.group('scheme')}://[REDACTED:credential]@", text
        )
        total += n
    text, n = context.redact_assignments(text)
    total += n
    if any(s in text for s in ("earer", "asic", "Token", "EARER", "ASIC")):
        new = patterns["scheme_credential"].sub(_scheme_credential, text)
        if new != text:
            total += new.count("[REDACTED:credential]") - text.count("[REDACTED:credential]")
            text = new
    text, n = context.redact_near_keywords(text)
    total += n
    text, n = pem.redact_bodies(text)
    total += n
    text, n = _random_tokens(text, patterns["candidate"])
    total += n
    if "@" in text:
        text, n = patterns["email"].subn("[REDACTED:email]", text)
        total += n
    if patterns["phone_hint"].search(text):
        text, n = patterns["phone"].subn("[REDACTED:phone]", text)
        total += n
    moved = False
    for name, hint in _HOME_HINTS:
        if any(h in text for h in hint):
            new, n = patterns[name].subn("home-USER" if name == "home_path_encoded" else "~", text)
            if n:
                text, moved = new, True
    return text, total, moved


def redact(text: str) -> tuple[str, int]:
    """Return text with every finding replaced, and how many findings were replaced."""
    if not text:
        return text, 0
    clean, count, _ = _redact(text)
    return clean, count


def looks_sensitive(text: str) -> bool:
    """True when text still contains anything redact() would change, or a remnant of a secret
    (half a private key, a token prefix). Used after redaction as a fail-closed check."""
    if not text:
        return False
    clean, count, moved = _redact(text)
    if count or moved or clean != text:
        return True
    return any(p.search(text) for p in _post_patterns())


def clean_stamp(value: Any) -> str | None:
    """A timestamp field as stored: an ISO-8601 date or time is kept; anything else (which could be a
    pasted secret) is dropped, since a timestamp cannot be redacted into something still useful."""
    if not isinstance(value, str) or len(value) > 40 or not _STAMP.fullmatch(value.strip()):
        return None
    return value.strip()


_SECRET_KEY_EXACT = frozenset({"pwd", "pass", "bearer", "x-api-key", "set-cookie", "cookie", "auth"})
_NOT_SECRET_KEYS = frozenset({"tokens", "token_count", "tokens_used", "max_tokens", "input_tokens",
                              "output_tokens", "total_tokens", "token_type", "key", "keys"})  # fmt: skip


def _secret_key(key: str) -> bool:
    lowered = key.lower()
    if lowered in _SECRET_KEY_EXACT:
        return True
    if lowered in _NOT_SECRET_KEYS:
        return False
    return context.family(key) in (context.PASSWORD, context.TOKEN)


def redact_obj(value: Any) -> tuple[Any, int]:
    """Redact every string inside a JSON value (dicts, lists, scalars).

    The value of a key that names a secret (password, token, api_key, authorization, cookie,
    private_key, credential, ...) is replaced wholesale when it is a non-empty string or number,
    whatever it looks like. Keys themselves are kept. Returns (new value, findings).
    """
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, list):
        total = 0
        out_list = []
        for item in value:
            new, n = redact_obj(item)
            out_list.append(new)
            total += n
        return out_list, total
    if isinstance(value, dict):
        total = 0
        out_dict: dict[Any, Any] = {}
        for key, item in value.items():
            if (
                isinstance(key, str)
                and _secret_key(key)
                and not isinstance(item, bool)
                and isinstance(item, (str, int, float))
                and item not in ("", 0)
            ):
                out_dict[key] = "[REDACTED:secret]"
                total += 1
                continue
            new, n = redact_obj(item)
            out_dict[key] = new
            total += n
        return out_dict, total
    return value, 0
