"""Law: a deterministic safety check that habits can never override.

Two sources, both checked on every activation:

- built-in rules (always on): a habit must not tell the agent to disable tests or safety checks,
  exfiltrate secrets, override instructions or the law, deceive the user, or run destructive commands
  without confirmation;
- `<root>/law.md` (optional, private): free Markdown for people and reviewers, plus machine-checked
  lines of the form `deny: PHRASE`. A habit whose condition or behaviour contains PHRASE (whole
  words, case- and spacing-insensitive) is blocked.

A match preceded in its clause by a negation ("never", "do not", "avoid", "without", "instead of",
…) is not a violation: "Never disable tests" is a fine habit. Write avoidance into the words; the
checker reads text, not polarity. This is a denylist, not a semantic judge: see README.

Every check records the law *fingerprint* (built-in rule version + SHA-256 of law.md, or its absence).
A habit checked against another fingerprint is not law-valid: it cannot activate and `select` skips
it until `habitus habit recheck` checks it against the current law.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from typing import Any

from habitus import codec
from habitus.errors import HabitusError
from habitus.state import files
from habitus.state.root import StateRoot

RULES_VERSION = 1
MAX_LAW_BYTES = 256 * 1024
MAX_DENY_RULES = 500

_NEGATION = re.compile(
    r"\b(not|never|no|nor|don'?t|doesn'?t|won'?t|can'?t|cannot|shouldn'?t|mustn'?t|avoid\w*|refrain\w*|"
    r"stop|without|instead of|rather than|prevent\w*|forbid\w*|refus\w*)\b"
)
_CLAUSE = re.compile(r"[.;:!?]|,\s*(?:but|then|and then|so)\b")

_DISABLE_VERBS = (
    r"disabl\w*|bypass\w*|turn\w* off|comment\w* out|delet\w*|remov\w*|silenc\w*|suppress\w*|mute\w*|"
    r"weaken\w*|circumvent\w*|xfail|neuter\w*|rip\w* out"
)
_CHECK_OBJECTS = (
    r"tests?|test suites?|test cases?|checks?|linters?|linting|type.?check\w*|ci|hooks?|assertions?|"
    r"validations?|safety|security|guardrails?|sandbox\w*|verification|code reviews?|protections?"
)
_SECRET_VERBS = (
    r"send\w*|upload\w*|post\w*|shar\w*|past\w*|print\w*|echo\w*|log\w*|email\w*|exfiltrat\w*|leak\w*|"
    r"expos\w*|publish\w*|commit\w*|push\w*|reveal\w*|display\w*|transmit\w*|forward\w*|copy\w*|includ\w*"
)
_SECRETS = (
    r"secrets?|credentials?|api.?keys?|access.?keys?|access.?tokens?|auth.?tokens?|api.?tokens?|"
    r"bearer.?tokens?|passwords?|passphrases?|private.?keys?|ssh.?keys?|\.env|env files?|keychains?|"
    r"session cookies?"
)

_OVERRIDE = re.compile(
    r"\b(ignor\w*|disregard\w*|overrid\w*|overrul\w*|bypass\w*|forget)\s+(?:\S+\s+){0,3}?"
    r"(instructions?|the law|law\.md|rules|system prompt|guidelines|polic(?:y|ies)|what the user (?:says|said))\b"
    r"|\bjailbreak\w*|\bpretend (?:to be|you are)\b"
    r"|\b(?:do not|don'?t|never) (?:tell|inform|show) the user\b|\bwithout telling the user\b"
    r"|\bhid\w* (?:\S+ ){0,3}from the user\b|\blie to the user\b|\bdeceiv\w* the user\b"
)

BUILTIN: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "disable_tests_or_checks",
        re.compile(
            rf"\b({_DISABLE_VERBS})\s+(?:\S+\s+){{0,3}}?({_CHECK_OBJECTS})\b"
            r"|\bskip\w*\s+(?:\S+\s+){0,2}?(hooks?|checks?|safety|security|verification|code reviews?)\b"
            r"|--no-verify\b|\bpytest\.mark\.skip\b|\b(?:it|describe|test)\.skip\b"
        ),
    ),
    (
        "exfiltrate_secrets",
        re.compile(rf"\b({_SECRET_VERBS})\s+(?:\S+\s+){{0,4}}?({_SECRETS})(?![\w-])"),
    ),
    ("override_instructions", _OVERRIDE),
)

_DESTRUCTIVE = re.compile(
    r"\brm\s+-[a-z]*[rf][a-z]*\b|\bgit\s+push\s+(?:\S+\s+){0,2}?(--force\b|-f\b)|\bforce[- ]push\w*"
    r"|\bgit\s+reset\s+--hard\b|\bgit\s+clean\s+-[a-z]*f|\bgit\s+checkout\s+--\s+\."
    r"|\bdrop\s+(table|database|schema)\b|\btruncate\s+table\b|\bmkfs\b|\bdd\s+if="
    r"|\bchmod\s+-r\s+777\b"
    r"|\b(wip\w*|eras\w*|purg\w*|delet\w*|remov\w*|destroy\w*)\s+(?:\S+\s+){0,2}?(databases?|db|repo\w*|"
    r"branch\w*|git history|backups?|production|prod|volumes?|disks?|everything|all (?:files|data))\b"
)
_SAFEGUARD = re.compile(
    r"\b(ask\w*|confirm\w*|permission|approv\w*|check with|dry[- ]run|back\w* ?up|backups? first)\b"
)
_NO_CONFIRM = re.compile(
    r"\bwithout\s+(?:\S+\s+){0,2}?(ask\w*|confirm\w*|permission|approv\w*|check\w*|prompt\w*)"
    r"|\bno need to (ask|confirm|check)|\b(don'?t|do not|never|no)\s+(ask|confirm|prompt|check)\w*"
    r"|\bskip\w*\s+(?:the\s+)?(confirmation|prompt)s?|--yes\b|(?<!\S)-y\b|\bautomatically\b|\bsilently\b"
    r"|\bunattended\b"
)


@dataclass(frozen=True)
class DenyRule:
    line: int
    phrase: str
    pattern: re.Pattern[str]


@dataclass(frozen=True)
class Law:
    """The law in force: built-in rules plus the deny rules of law.md, and their fingerprint."""

    fingerprint: str
    present: bool
    deny: tuple[DenyRule, ...] = field(default=())

    def describe(self) -> dict[str, Any]:
        return {
            "fingerprint": self.fingerprint,
            "law_md": self.present,
            "deny_rules": len(self.deny),
            "builtin_rules": [name for name, _ in BUILTIN] + ["destructive_without_confirmation"],
        }


def fingerprint_of(data: bytes | None) -> str:
    return codec.checksum(
        {"rules": RULES_VERSION, "law_md": None if data is None else hashlib.sha256(data).hexdigest()}
    )


def parse(data: bytes | None, origin: str = "law.md") -> Law:
    if data is None:
        return Law(fingerprint_of(None), False)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise HabitusError("state_corrupt", f"{origin}: not valid UTF-8") from None
    rules: list[DenyRule] = []
    for number, line in enumerate(text.splitlines(), start=1):
        match = re.match(r"^\s*(?:[-*]\s+)?deny\s*:\s*(.+?)\s*$", line, re.IGNORECASE)
        if not match:
            continue
        words = _normal(match.group(1)).split()
        if not words:
            continue
        body = r"\s+".join(re.escape(w) for w in words)
        rules.append(DenyRule(number, " ".join(words), re.compile(rf"(?<![\w-]){body}(?![\w-])")))
    if len(rules) > MAX_DENY_RULES:
        raise HabitusError("state_corrupt", f"{origin}: more than {MAX_DENY_RULES} deny rules")
    return Law(fingerprint_of(data), True, tuple(rules))


def load_law(root: StateRoot) -> Law:
    """The current law of this state root (law.md is optional). Never creates anything."""
    path = root.law
    files.refuse_symlink(path)
    try:
        data = files.read_bytes(path, MAX_LAW_BYTES)
    except FileNotFoundError:
        data = None
    except HabitusError as exc:
        if exc.code == "state_corrupt":
            raise HabitusError("state_corrupt", f"{path}: larger than {MAX_LAW_BYTES} bytes") from None
        raise
    return parse(data, origin=str(path))


def _normal(text: str) -> str:
    return " ".join(text.replace("\u2019", "'").lower().split())


def _negated(text: str, start: int) -> bool:
    clause = _CLAUSE.split(text[:start])[-1]
    return bool(_NEGATION.search(" ".join(clause.split()[-6:])))


def _hits(pattern: re.Pattern[str], text: str) -> list[int]:
    return [m.start() for m in pattern.finditer(text)]


def check_law(condition: str, behavior: str, law: Law) -> list[dict[str, Any]]:
    """The law findings for a habit (empty = law-valid). Each names a rule and where it comes from."""
    findings: list[dict[str, Any]] = []
    fields = {"condition": _normal(condition), "behavior": _normal(behavior)}
    behavior_text = fields["behavior"]
    for name, pattern in BUILTIN:
        checked = fields.items() if name == "override_instructions" else [("behavior", behavior_text)]
        for field_name, text in checked:
            if any(not _negated(text, at) for at in _hits(pattern, text)):
                findings.append({"rule": name, "source": "builtin", "field": field_name})
                break
    destructive = [at for at in _hits(_DESTRUCTIVE, behavior_text) if not _negated(behavior_text, at)]
    if destructive:
        safeguarded = any(not _negated(behavior_text, at) for at in _hits(_SAFEGUARD, behavior_text))
        if _NO_CONFIRM.search(behavior_text) or not safeguarded:
            findings.append(
                {"rule": "destructive_without_confirmation", "source": "builtin", "field": "behavior"}
            )
    for rule in law.deny:
        for field_name, text in fields.items():
            if any(not _negated(text, at) for at in _hits(rule.pattern, text)):
                findings.append({"rule": "deny", "source": "law.md", "line": rule.line, "field": field_name})
                break
    return findings
