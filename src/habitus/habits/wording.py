"""Wording of a habit: the limits every condition and behaviour must meet, and its review identity.

- non-empty after trimming, at most 1,000 characters per field;
- no control characters (newlines included), no bidirectional overrides or line separators;
- no instruction-injection markers (`</system>`, "ignore previous instructions", chat-template tokens,
  `curl … | sh`…);
- no credentials or secrets (private keys, provider tokens, JWTs, bearer headers, credential URLs,
  `password=…` assignments, long random-looking strings), nor anything else the redactor that guards
  every stored text would change (e-mail addresses, phone numbers, home folders).

Length, emptiness and control characters are request errors (`bad_request`, exit 2); injection
markers and secrets are refused by policy (`refused`, exit 3). Messages name the field, never the text.

The review identity (`wording_checksum`) is SHA-256 over the canonical JSON of the normalised
condition and behaviour (NFKC, whitespace collapsed, case-folded) and the polarity: changing only
case or spacing is not material; changing anything else means the habit must be approved again.
"""

from __future__ import annotations

import re
import unicodedata

from habitus import codec
from habitus.errors import HabitusError, bad_request

MAX_CHARS = 1000
MAX_NOTE_CHARS = 500

_FORBIDDEN_CHARS = re.compile(
    "[\u0000-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]"
)

INJECTION = re.compile(
    r"</?\s*(system|assistant|user|tool|instructions?)\s*>"
    r"|<\|[a-z_]+\|>|\[/?inst\]|<<\s*/?sys\s*>>"
    r"|\b(ignore|disregard|forget)\s+(all\s+|any\s+|the\s+)?(previous|prior|above|earlier|preceding)\s+"
    r"(instructions?|messages?|prompts?|rules)"
    r"|\btool output says\b|\bsystem prompt\s*:|\bnew instructions\s*:|\byou are now\b"
    # a downloaded script piped into a shell: `curl … | sh`, `wget -O- … | sudo bash`, `bash <(curl …)`
    r"|\b(?:curl|wget)\b[^|\n]{0,300}\|\s*(?:sudo\s+)?(?:ba|z|da|k)?sh\b|\b(?:ba|z)?sh\s+<\(\s*(?:curl|wget)\b",
    re.IGNORECASE,
)


def looks_like_injection(text: str) -> bool:
    """Whether text holds an instruction-injection marker (the one list every stored text is checked
    against: habit wording here, memory records in habitus.memory.records)."""
    return bool(INJECTION.search(text))


SECRETS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("private_key", re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----")),
    ("aws_key", re.compile(r"\b(AKIA|ASIA)[0-9A-Z]{16}\b")),
    ("github_token", re.compile(r"\b(gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})")),
    ("slack_token", re.compile(r"\bxox[baprs]-[A-Za-z0-9-]{10,}")),
    ("provider_key", re.compile(r"\bsk-(ant-|proj-)?[A-Za-z0-9_-]{20,}")),
    ("stripe_key", re.compile(r"\b[rsp]k_(live|test)_[A-Za-z0-9]{10,}")),
    ("google_key", re.compile(r"\b(AIza[0-9A-Za-z_-]{35}|ya29\.[0-9A-Za-z_-]{20,})")),
    ("jwt", re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}")),
    ("auth_header", re.compile(r"\b(bearer|basic)\s+[A-Za-z0-9._~+/=-]{16,}", re.IGNORECASE)),
    ("credential_url", re.compile(r"[a-z][a-z0-9+.-]*://[^\s/:@]+:[^\s/@]+@", re.IGNORECASE)),
    (
        "secret_assignment",
        re.compile(
            r"\b(password|passwd|pwd|secret|api[_-]?key|access[_-]?key|auth[_-]?token|token|private[_-]?key)"
            r"\s*[=:]\s*['\"]?[^\s'\"]{6,}",
            re.IGNORECASE,
        ),
    ),
)
# A long unbroken run of letters and digits that mixes both looks like a key, not a word.
_LONG_TOKEN = re.compile(r"[A-Za-z0-9+/_=-]{32,}")


def _looks_random(token: str) -> bool:
    digits = sum(c.isdigit() for c in token)
    letters = sum(c.isalpha() for c in token)
    return digits >= 4 and letters >= 8 and not token.replace("-", "").replace("_", "").isalpha()


_MARKER = re.compile(r"\[REDACTED:([a-z0-9_]+)\]")


def secret_kinds(text: str) -> list[str]:
    """Which secret patterns occur in text (names only, never the match): the habit patterns above, then
    anything the redactor that guards every other stored text would change (its token kinds, e-mail
    addresses, phone numbers, home folders) or still flags."""
    from habitus.redact import looks_sensitive, redact

    found = [name for name, pattern in SECRETS if pattern.search(text)]
    if any(_looks_random(m.group(0)) for m in _LONG_TOKEN.finditer(text)):
        found.append("random_token")
    clean, count = redact(text)
    if count:
        markers = set(_MARKER.findall(clean)) - set(_MARKER.findall(text))
        found += sorted(markers - set(found)) or ["personal_data"]
    elif looks_sensitive(text):
        found.append("sensitive")
    return found


def clean_field(name: str, value: object, *, limit: int = MAX_CHARS) -> str:
    """Validate one text field and return it trimmed (the exact wording otherwise kept)."""
    if not isinstance(value, str):
        raise bad_request(name, "expected a string")
    text = value.strip()
    if not text:
        raise bad_request(name, "must not be empty")
    if len(text) > limit:
        raise bad_request(name, f"at most {limit} characters")
    if _FORBIDDEN_CHARS.search(text):
        raise bad_request(name, "must not contain control characters, line breaks or direction overrides")
    if looks_like_injection(text):
        raise HabitusError(
            "refused",
            f"request.{name}: looks like an instruction-injection marker",
            hint="state the habit in plain words",
            reason="injection",
        )
    kinds = secret_kinds(text)
    if kinds:
        raise HabitusError(
            "refused",
            f"request.{name}: contains what looks like a credential, secret or personal data ({', '.join(kinds)})",
            hint="habits must never hold credentials or personal data; describe the behaviour instead",
            reason="secret",
        )
    return text


def check_polarity(value: object) -> int:
    if isinstance(value, bool) or value not in (1, -1):
        raise bad_request("polarity", "expected 1 (do) or -1 (avoid)")
    return int(value)  # type: ignore[call-overload]


def check_bp(name: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 10_000:
        raise bad_request(name, "expected an integer from 0 to 10000 (basis points)")
    return value


def normalize(text: str) -> str:
    """NFKC, whitespace collapsed, trimmed, case-folded: the form compared for material changes."""
    return " ".join(unicodedata.normalize("NFKC", text).split()).casefold()


def wording_checksum(condition: str, behavior: str, polarity: int) -> str:
    return codec.checksum(
        {"condition": normalize(condition), "behavior": normalize(behavior), "polarity": polarity}
    )
