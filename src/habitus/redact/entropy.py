"""Does a token look random (a key) rather than written (a word, an identifier, a path, a number)?

Two bars. `random_token` is the strict one, for a token standing alone in prose or code: long, of mixed
character classes that switch often (random base62 switches class every two or three characters, an
identifier like `getHTTPResponseCode2` at its word boundaries only), high Shannon entropy, and not made
of words. `credential_value` is the relaxed one, for a token right after a secret-naming word
(`token …`, `password …`), where a shorter value of mixed classes is already telling.
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Callable

from habitus.redact.lazy import Lazy

_UUID = Lazy(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")
_HEX = Lazy(r"^[0-9a-fA-F]+$")
_UUID_SHAPE = Lazy(r"^[0-9A-Za-z]{8}-[0-9A-Za-z]{4}-[0-9A-Za-z]{4}-[0-9A-Za-z]{4}-[0-9A-Za-z]{12}$")
_VERSION = Lazy(r"^v?\d+(?:[._\-]\d+)*(?:[._\-]?[A-Za-z]{0,8}\d{0,4})?$")
_DIGITS = Lazy(r"\d+")
_EXTENSION = Lazy(r"(?:\.[a-z][a-z0-9]{0,4})+$")
# a digest in Subresource Integrity or a content address: its algorithm, then base64 or hex
_DIGEST = Lazy(r"^(?:sha(?:1|224|256|384|512)|md5|blake2b?|h1)[-:][A-Za-z0-9+/=]{20,}$")
_KEY_GROUPS = Lazy(r"^[A-Z0-9]{4,10}(?:-[A-Z0-9]{4,10}){3,}$")
_WORDY = Lazy(r"[A-Za-z][a-z]{3,}")  # a run that reads like a word: "Response", "token"
_VOWELS = frozenset("aeiouyAEIOUY")
_CLUSTER = Lazy(r"[^aeiouyAEIOUY]{5,}")
# Letter pairs that no English word contains: random letters hit one every five pairs or so.
_PAIRS = (
    "bqbzcfcjcvcxdxfkfqfvfxfzgqgvgxhkhvhxhzjbjcjdjfjgjhjkjljmjnjpjqjrjsjtjvjwjxjyjzkqkvkxkzlqlxmqmxmz"
    "pqpvpxqbqcqdqeqfqgqhqjqkqlqmqnqoqpqrqsqtqvqwqxqyqzsxtqtxvbvcvdvfvgvhvjvkvmvnvpvqvtvwvxvzwqwvwxwz"
    "xbxdxgxjxkxrxzyqyvyjzbzczdzfzgzjzkzmznzpzqzrzsztzvzxpjdqgzhjkjmjsjtjvlwjfppzxvxfbxcbcgdzfjgjhq"
)
_NEVER_PAIRED = frozenset(_PAIRS[i : i + 2] for i in range(0, len(_PAIRS), 2))


def shannon(text: str) -> float:
    """Bits per character."""
    if not text:
        return 0.0
    counts: dict[str, int] = {}
    for char in text:
        counts[char] = counts.get(char, 0) + 1
    size = len(text)
    return -sum(n / size * math.log2(n / size) for n in counts.values())


def _classes(token: str) -> tuple[int, int, int, int]:
    upper = lower = digit = other = 0
    for char in token:
        if "A" <= char <= "Z":
            upper += 1
        elif "a" <= char <= "z":
            lower += 1
        elif "0" <= char <= "9":
            digit += 1
        else:
            other += 1
    return upper, lower, digit, other


def _switches(token: str) -> int:
    """How often the character class changes along the token."""
    previous = ""
    count = 0
    for char in token:
        kind = "u" if char.isupper() else "l" if char.islower() else "d" if char.isdigit() else "o"
        if previous and kind != previous:
            count += 1
        previous = kind
    return count


def unpaired(token: str) -> int:
    """How many of the token's letter pairs no English word has ("zq", "jx")."""
    low = token.lower()
    return sum(1 for pair in map("".join, itertools.pairwise(low)) if pair in _NEVER_PAIRED)


def pronounceable(run: str) -> bool:
    """A run of letters that reads like a word: vowels in proportion, no long consonant cluster
    ("Response", "strength"), unlike random letters ("xdbfwjvij")."""
    vowels = sum(1 for c in run if c in _VOWELS)
    if vowels < len(run) * 0.25:
        return False
    return _CLUSTER.search(run) is None and not unpaired(run)


def _wordiness(token: str) -> float:
    """Share of the token in word-like runs ("Response", "test"): high for identifiers."""
    covered = sum(len(m) for m in _WORDY.findall(token) if pronounceable(m))
    return covered / len(token)


def segments_are_words(token: str) -> bool:
    """`test_case_2024_report`, `my-app-v2.3`: every piece a word or a short number."""
    pieces = [p for p in re.split(r"[_\-./+=]+", token) if p]
    if len(pieces) < 2:
        return False
    return all(
        (p.isalpha() and (p.islower() or p.isupper() or p.istitle())) or (p.isdigit() and len(p) <= 4)
        for p in pieces
    )


def _random_piece(piece: str) -> bool:
    """A piece between separators that carries the randomness: long, letters and digits mixed."""
    if len(piece) < 8 or (len(piece) < 32 and _HEX.match(piece)):
        return False  # short hex in a name is a commit or an id (`v0.0.0-20180213035817-a1ea475d72b1`)
    upper, lower, digit, _ = _classes(piece)
    if not digit or upper + lower < 3:
        return False
    if _switches(piece) / len(piece) >= 0.3 and shannon(piece) >= 2.8:
        return True
    return len(piece) >= 12 and shannon(piece) >= 3.0 and unpaired(piece) >= 2


_MIXED_PIECE = Lazy(r"[A-Za-z]\d+[A-Za-z]|^\d+[A-Za-z]{2}")


def _folder_name(piece: str) -> bool:
    letters = "".join(c for c in piece if c.isalpha())
    return letters.islower() or letters.isupper() or letters.istitle() or _wordiness(piece) >= 0.6


def _built_of_names(token: str) -> bool:
    """`HTTPStatus.BAD_REQUEST`, `self.enable_SMTPUTF8`, `rfc2109_as_netscape`, `github.com/Masterminds/
    sprig/v3`: dotted, snake or slashed names,
    no piece of which is random (a token with separators carries its randomness in a long piece), and
    not mostly pieces with digits inside their letters (`y8ohpS-N2vlXE`, `5QCXUYE-B9LNS58-X62XLXO`):
    a name puts its number at the end (`utf8`, `sha256`, `v2`)."""
    # a path's "/" separates names too, unlike base64's: each folder in one case, Title or CamelCase words
    path = "/" in token and "+" not in token and all(_folder_name(p) for p in token.split("/") if p)
    if not any(c in "._-" for c in token) and not path:
        return False
    pieces = [p for p in re.split(r"[._\-/]+" if path else r"[._\-]+", token) if p]
    if any(_random_piece(p) for p in pieces):
        return False
    mixed = sum(1 for p in pieces if len(p) >= 4 and _MIXED_PIECE.search(p))
    return not (len(pieces) >= 2 and mixed * 2 >= len(pieces) and mixed >= 2)


def _sequential(token: str) -> bool:
    """An alphabet written out ("0123456789ABCDEF", "abcdefghijklmnop"), not a key."""
    steps = sum(1 for a, b in itertools.pairwise(token) if ord(b) - ord(a) == 1)
    return steps >= len(token) / 2


def random_token(token: str, *, hash_context: Callable[[], bool] | None = None) -> bool:
    """The strict bar, for a token with no secret-naming word near it."""
    extension = _EXTENSION.search(token)
    if extension and extension.start() >= 16:
        token = token[: extension.start()]  # `6c073d8e-….jsonl`, `zfY6….png`: judge the name, not its suffix
    size = len(token)
    if size < 16 or token[0] in "/~.":
        return False
    if _DIGEST.match(token):
        return False  # `sha512-…`, `sha256:…`: a digest says what it is
    if _UUID_SHAPE.match(token):
        # 8-4-4-4-12: a real UUID (hex) is an identifier; the same shape in other letters is a key
        return not _HEX.match(token.replace("-", ""))
    upper, lower, digit, other = _classes(token)
    letters = upper + lower
    if digit == 0 and other == 0 and (upper == 0 or lower == 0):
        # one case, letters only: a word, unless its letter pairs are ones no word has
        return size >= 20 and shannon(token) >= 3.5 and not _sequential(token) and unpaired(token) >= 2
    if letters < 4:
        return False
    if digit == 0 and (upper == 0 or lower == 0):
        return False  # CONSTANT_NAME, some-kebab-name
    if _UUID.match(token) or _VERSION.match(token) or _sequential(token):
        return False
    if "-" in token and _HEX.match(token.replace("-", "")) and all(len(g) <= 16 for g in token.split("-")):
        return False  # hex in short dashed groups is an id of the UUID family (`db609d23-e25f-48b0-918e`)
    if _HEX.match(token):
        if size < 20:
            return False
        # 20+ hex digits: an API key, or a digest (sha256 of a file, a commit). A digest named as such
        # (the caller's hash_context: "commit", "sha256", "integrity", git's short id beside it) is
        # kept; a bare one is not, since many providers' keys are 32, 40 or 64 hex digits.
        return digit >= 4 and letters >= 4 and shannon(token) >= 3.0 and not (hash_context and hash_context())
    wordiness = _wordiness(token)
    one_case = not (upper and lower)
    # base36 with digits scattered through the letters (three runs or more), or with letter pairs no word
    # has, whatever the pronounceable runs between them ("xq7aagk6tteaprndoi4347enk")
    base36 = one_case and digit and other == token.count("-") <= 2 and size >= 20 and letters >= size * 0.15
    if base36 and shannon(token) >= 3.8:
        scattered = len(_DIGITS.findall(token)) >= 3 and wordiness < 0.6
        if scattered or (unpaired(token) >= 2 and wordiness < 0.3):
            return True
    # a licence-key shape, `5QCXUYE-B9LNS58-X62XLXO-CHZJZDO`: digits in two groups or more
    if _KEY_GROUPS.match(token) and shannon(token) >= 3.5:
        return sum(1 for p in token.split("-") if not p.isalpha() and not p.isdigit()) >= 2
    if segments_are_words(token) or wordiness >= 0.55 or _built_of_names(token):
        return False
    switches = _switches(token) / size
    entropy = shannon(token)
    if size < 20:
        # 16 to 19 characters: only a run with no separator whose classes switch often
        return not other and bool(digit) and switches >= 0.35 and entropy >= 3.3 and wordiness < 0.3
    if upper and lower and (digit or other):
        # a short key has a lower entropy ceiling (log2 of its length): 20 random characters give ~4.0;
        # the lower bar only for one unbroken run (a piece of a path like `zfY6lL7eFa-3000x3000` is an id)
        lower_bar = not other and switches >= 0.25 and entropy >= 3.3 and wordiness < 0.2
        return switches >= 0.2 and (entropy >= 3.6 or lower_bar)
    if upper and lower:  # letters only: needs many case switches ("wJalrXUtnFEMIbPxRfiCY")
        if size >= 24 and switches >= 0.3 and entropy >= 3.8:
            return True
        return switches >= 0.25 and wordiness < 0.2 and entropy >= 4.0  # 20 to 23: near their ceiling
    # one case and digits: "a1b2c3...", "K7MDENG..."
    return (
        size >= 20 and digit >= size * 0.12 and letters >= size * 0.15 and switches >= 0.2 and entropy >= 3.4
    )


def credential_value(token: str, *, min_len: int = 8) -> bool:
    """The relaxed bar, for a token right after a secret-naming word or in a secret-named field."""
    size = len(token)
    if size < min_len or _VERSION.match(token) or token.isdigit():
        return False
    upper, lower, digit, _ = _classes(token)
    letters = upper + lower
    if letters == 0 or segments_are_words(token):
        return False
    if size >= 20 and (random_token(token) or (_HEX.match(token) and digit and letters)):
        return True
    if digit and letters:
        word_and_number = token[:-digit].isalpha() and token[-digit:].isdigit() and digit <= 2 and size < 12
        return shannon(token) >= 2.5 and not word_and_number
    if upper and lower and size >= 12:
        return _switches(token) / size >= 0.25 and _wordiness(token) < 0.5
    if size >= 16 and _wordiness(token) < 0.3:  # random letters: "hf_catxdbfwjvijxcgotzira"
        return True
    if size >= 12 and token.isalpha() and shannon(token) >= 3.0 and unpaired(token) >= 2:
        return True
    symbols = sum(1 for c in token if c in "+/=!@#$%^&*~")
    if symbols and letters >= 6:
        return shannon(token) >= 3.0 and _wordiness(token) < 0.5
    return False
