"""Redaction: remove secrets and personal data from text before habitus stores it.

    redact(text) -> (clean_text, count)      replace every finding with a [REDACTED:kind] marker
    looks_sensitive(text) -> bool            the post-check: does anything still look like a secret?
    redact_obj(value) -> (clean_value, count) the same over a JSON value; secret-named keys lose their value

What is found (DESIGN.md section 10): PEM private keys; AWS, GitHub, GitLab, Slack, OpenAI, Anthropic,
Stripe, Google, Hugging Face and npm tokens; JWTs; Bearer/Basic/Token credentials and Authorization
headers; credentials inside URLs; `password=` / `token: "..."` style assignments; e-mail addresses;
phone numbers; and home folders (`/home/NAME/...` becomes `~/...`).

Precision matters as much as recall: ordinary prose ("skip the token budget", "the risk on disk",
"Basic authentication", "a keyboard shortcut") must come through unchanged, so every pattern is anchored
on word boundaries and on the shape of a real credential rather than on loose substrings. The corpus in
tests/fixtures/redaction/ pins both directions.

Patterns compile on first use, so importing this module costs nothing.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

Replacement = str | Callable[[re.Match[str]], str]

# JSON keys whose values are replaced wholesale by redact_obj (matched on the lowercased key).
_SECRET_KEY = re.compile(
    r"(^|[_\-.])(password|passwd|passphrase|secret|token|api[_-]?key|apikey|authorization|auth|cookie|"
    r"private[_-]?key|credentials?|client[_-]?secret|access[_-]?key|session[_-]?key)($|[_\-.])"
)
_SECRET_KEY_EXACT = frozenset({"pwd", "pass", "bearer", "x-api-key", "set-cookie"})

_compiled: list[tuple[str, re.Pattern[str], Replacement]] | None = None
_BASE64 = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=")
_post: list[re.Pattern[str]] | None = None


def _credential_like(value: str) -> bool:
    """Does a bare word look like a credential rather than an English word?

    A digit, a symbol used by tokens and base64, or an upper-case letter after the first character
    (base64 of "user:pass" is "dXNlcjpwYXNz"); "Authentication" and "usage" fail all three.
    """
    if any(c.isdigit() for c in value) or any(c in "+/=_.~-" for c in value):
        return True
    return any(c.isupper() for c in value[1:]) and any(c.islower() for c in value)


def _scheme_credential(match: re.Match[str]) -> str:
    if not _credential_like(match.group("cred")):
        return match.group(0)
    return f"{match.group('scheme')} [REDACTED:credential]"


_SECRET_NAME = re.compile(
    r"(?:^|[_\-.])(?:api[_-]?key|apikey|secret(?:[_-]?key)?|client[_-]?secret|password|passwd|passphrase|"
    r"pwd|access[_-]?token|refresh[_-]?token|auth[_-]?token|id[_-]?token|bearer[_-]?token|token|"
    r"private[_-]?key|access[_-]?key(?:[_-]?id)?|secret[_-]?access[_-]?key|session[_-]?token|credentials?)$"
)
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


def _secret_name(key: str) -> bool:
    """Does an identifier name a secret? `DB_PASSWORD`, `apiKey`, `stripe.api_key`; not `max_tokens`."""
    return bool(_SECRET_NAME.search(_CAMEL.sub("_", key).lower()))


def _assignment(match: re.Match[str]) -> str:
    if not _secret_name(match.group("key")):
        return match.group(0)
    value = match.group("value")
    quoted = match.group("quote") is not None
    if not quoted and match.group("sep").strip() == ":" and not _credential_like(value):
        return match.group(0)  # "Password: make sure it is long" is prose, not a secret
    if value.startswith("[REDACTED"):
        return match.group(0)
    return f"{match.group('key')}{match.group('kq')}{match.group('sep')}{match.group('quote') or ''}[REDACTED:secret]"


def _auth_header(match: re.Match[str]) -> str:
    if match.group("scheme") is None and not _credential_like(match.group("cred")):
        return match.group(0)  # "Authorization: required" is prose
    return f"{match.group('name')}{match.group('sep')}[REDACTED:auth_header]"


def _redact_key_tails(text: str, end_line: re.Pattern[str]) -> tuple[str, int]:
    """Redact each END line together with the base64 lines right before it (a key whose BEGIN line
    was cut off). A bare END line is left for looks_sensitive to flag, so such a pair is dropped."""
    out, position, count = [], 0, 0
    for match in end_line.finditer(text):
        start = match.start()
        while start > position:
            line_start = text.rfind("\n", position, max(position, start - 1)) + 1
            line_start = max(line_start, position)
            line = text[line_start : start - 1].rstrip("\r")
            if len(line) < 16 or not set(line) <= _BASE64:
                break
            start = line_start
        if start == match.start():
            continue
        out.append(text[position:start])
        out.append("[REDACTED:private_key]")
        position = match.end()
        count += 1
    if not count:
        return text, 0
    out.append(text[position:])
    return "".join(out), count


_VALUE_REST = {True: re.compile(r"[^\"'\n]*"), False: re.compile(r"[^\s\"',;)}\]]*")}


def _sub_assignments(pattern: re.Pattern[str], text: str, *, first_only: bool = False) -> tuple[str, int]:
    """Replace the secret assignments (`password=...`, `api_key: "..."`) in text.

    Unlike re.sub, a match that is not a secret (`note: password=x` matches `note: password...` first)
    lets the search resume at its value, so an assignment inside it is still found. The pattern matches
    at most 256 characters of a value (linear time); a secret's value is then extended to its end.
    With first_only, stop at the first secret (for looks_sensitive)."""
    out: list[str] = []
    position = search = count = 0
    while True:
        match = pattern.search(text, search)
        if match is None:
            break
        new = _assignment(match)
        if new == match.group(0):
            search = match.start("value")
            continue
        end = _VALUE_REST[match.group("quote") is not None].match(text, match.end()).end()  # type: ignore[union-attr]
        out += [text[position : match.start()], new]
        position = search = end
        count += 1
        if first_only:
            break
    if not count:
        return text, 0
    out.append(text[position:])
    return "".join(out), count


def _url_credentials(match: re.Match[str]) -> str:
    return f"{match.group('scheme')}://[REDACTED:credential]@"


def _patterns() -> list[tuple[str, re.Pattern[str], Replacement]]:
    global _compiled
    if _compiled is not None:
        return _compiled
    table: list[tuple[str, str, Replacement, int]] = [
        (
            "private_key",
            r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----[\s\S]*?(?:-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|\Z)",
            "[REDACTED:private_key]",
            0,
        ),
        (
            # The end of a key whose BEGIN line was cut off: the base64 lines before END are found by
            # _key_tail walking backwards (a regex doing it would backtrack quadratically on base64).
            "private_key_tail",
            r"-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----",
            "",  # handled by _redact_key_tails
            0,
        ),
        ("anthropic_key", r"\bsk-ant-[A-Za-z0-9_\-]{20,}", "[REDACTED:anthropic_key]", 0),
        (
            "openai_key",
            r"\bsk-(?:proj-|svcacct-|admin-|None-)?[A-Za-z0-9_\-]{20,}",
            "[REDACTED:openai_key]",
            0,
        ),
        ("stripe_key", r"\b(?:sk|pk|rk)_(?:live|test)_[A-Za-z0-9]{10,}", "[REDACTED:stripe_key]", 0),
        ("stripe_webhook", r"\bwhsec_[A-Za-z0-9]{20,}", "[REDACTED:stripe_key]", 0),
        ("github_token", r"\bgh[pousr]_[A-Za-z0-9]{30,255}\b", "[REDACTED:github_token]", 0),
        ("github_pat", r"\bgithub_pat_[A-Za-z0-9_]{22,255}\b", "[REDACTED:github_token]", 0),
        ("gitlab_token", r"\bglpat-[A-Za-z0-9_\-]{20,}", "[REDACTED:gitlab_token]", 0),
        ("slack_token", r"\bxox[abposr]-[A-Za-z0-9\-]{10,}", "[REDACTED:slack_token]", 0),
        (
            "slack_webhook",
            r"https://hooks\.slack\.com/services/[A-Za-z0-9_/\-]+",
            "[REDACTED:slack_webhook]",
            0,
        ),
        ("aws_access_key", r"\b(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\b", "[REDACTED:aws_key]", 0),
        ("google_api_key", r"\bAIza[0-9A-Za-z_\-]{35}\b", "[REDACTED:google_key]", 0),
        ("google_oauth", r"\bya29\.[0-9A-Za-z_\-]{20,}", "[REDACTED:google_token]", 0),
        ("huggingface_token", r"\bhf_[A-Za-z0-9]{30,}\b", "[REDACTED:hf_token]", 0),
        ("npm_token", r"\bnpm_[A-Za-z0-9]{36}\b", "[REDACTED:npm_token]", 0),
        (
            "jwt",
            # Starts only where a token run starts, and never backtracks (possessive): linear time.
            r"(?<![A-Za-z0-9_\-])eyJ[A-Za-z0-9_\-]{8,}+\.eyJ[A-Za-z0-9_\-]{8,}+\.[A-Za-z0-9_\-]{8,}+",
            "[REDACTED:jwt]",
            0,
        ),
        (
            "url_credentials",
            r"\b(?P<scheme>[A-Za-z][A-Za-z0-9+.\-]{1,20})://[^\s/:@\"'<>]*:[^\s/@\"'<>]+@",
            _url_credentials,
            0,
        ),
        (
            "auth_header",
            r"(?i)\b(?P<name>authorization|proxy-authorization|x-api-key|api-key)(?P<sep>\s*:\s*)(?!\[REDACTED)"
            r"(?P<scheme>(?:bearer|basic|token|digest)\s+)?(?!\[REDACTED)(?P<cred>[^\s\"',;]{8,})",
            _auth_header,
            0,
        ),
        (
            "scheme_credential",
            r"\b(?P<scheme>Bearer|Basic|Token|bearer|basic|BEARER|BASIC)\s+(?P<cred>[A-Za-z0-9._~+/\-]{8,}=*)",
            _scheme_credential,
            0,
        ),
        (
            # Any identifier followed by = / := / : ; _assignment keeps only those whose name ends in a
            # secret word. (Matching the name inside the regex backtracked quadratically on "a-a-a-...".)
            "assignment",
            # The value is matched up to VALUE_WINDOW characters and extended in _sub_assignments.
            r"(?<![A-Za-z0-9_\-.])(?P<key>[A-Za-z0-9_\-.]{1,80})(?P<kq>[\"']?)(?P<sep>\s*(?:=|:=|:)\s*)"
            r"(?P<quote>[\"'])?(?P<value>(?(quote)[^\"'\n]{3,256}|[^\s\"',;)}\]]{3,256}))",
            _assignment,
            0,
        ),
        (
            "email",
            r"\b(?!git@)[A-Za-z0-9][A-Za-z0-9._%+\-]{0,63}@[A-Za-z0-9](?:[A-Za-z0-9\-]{0,61}[A-Za-z0-9])?"
            r"(?:\.[A-Za-z0-9](?:[A-Za-z0-9\-]{0,61}[A-Za-z0-9])?)*\.[A-Za-z]{2,24}\b",
            "[REDACTED:email]",
            0,
        ),
        (
            "phone",
            r"(?<![\w.+\-/:])(?:\+\d{1,3}[ .\-]?)?(?:\(\d{3}\)\s?|\d{3}[ .\-])\d{3}[ .\-]\d{4}(?![\w.\-/:])"
            r"|(?<![\w.+\-/:])\+\d{1,3}[ .\-]\d{2,4}[ .\-]\d{3,4}[ .\-]?\d{2,4}(?![\w.\-/:])",
            "[REDACTED:phone]",
            0,
        ),
        # Home folders: keep the path, drop the user name.
        ("home_path", r"(?<![\w.:/~\-])(?:/home|/Users)/(?!USER\b)[A-Za-z0-9._\-]+(?=/|\b)", "~", 0),
        ("home_path_windows", r"(?i)\b[A-Z]:\\Users\\[^\\\s\"']+", "~", 0),
        (
            "home_path_encoded",
            r"(?<=-)(?:home|Users)-(?!USER-)[A-Za-z0-9._]+(?=-)",
            "home-USER",
            0,
        ),
    ]
    _compiled = [(name, re.compile(pattern, flags), repl) for name, pattern, repl, flags in table]
    return _compiled


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


def redact(text: str) -> tuple[str, int]:
    """Return text with every finding replaced, and how many findings were replaced."""
    if not text:
        return text, 0
    total = 0
    for name, pattern, replacement in _patterns():
        if name == "private_key_tail":
            text, n = _redact_key_tails(text, pattern)
            total += n
            continue
        if name.startswith("home_path"):
            new, n = pattern.subn(replacement, text)
            if n:
                text = new  # a home folder is rewritten, not counted as a secret
            continue
        if name == "assignment":
            text, n = _sub_assignments(pattern, text)
            total += n
            continue
        if callable(replacement):
            count = 0

            def counted(match: re.Match[str], fn: Callable[[re.Match[str]], str] = replacement) -> str:
                nonlocal count
                out = fn(match)
                if out != match.group(0):
                    count += 1
                return out

            text = pattern.sub(counted, text)
            total += count
        else:
            text, n = pattern.subn(replacement, text)
            total += n
    return text, total


def looks_sensitive(text: str) -> bool:
    """True when text still contains anything redact() would change, or a remnant of a secret
    (half a private key, a token prefix). Used after redaction as a fail-closed check."""
    if not text:
        return False
    for name, pattern, replacement in _patterns():
        if name == "private_key_tail":
            continue  # any END line left over is caught by the post patterns below
        if name.startswith("home_path"):
            if pattern.search(text):
                return True
            continue
        if name == "assignment":
            if _sub_assignments(pattern, text, first_only=True)[1]:
                return True
            continue
        for match in pattern.finditer(text):
            if not callable(replacement) or replacement(match) != match.group(0):
                return True
    return any(p.search(text) for p in _post_patterns())


def _secret_key(key: str) -> bool:
    lowered = key.lower()
    if lowered in _SECRET_KEY_EXACT:
        return True
    if lowered in ("tokens", "token_count", "tokens_used", "max_tokens", "input_tokens", "output_tokens"):
        return False
    return bool(_SECRET_KEY.search(lowered))


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
