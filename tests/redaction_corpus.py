"""The secrets corpus for redaction tests: third-party rules' samples and habitus's own families, each
placed in the contexts a secret travels in.

- third party: a sample generated from every pattern of detect-secrets' plugins (Yelp/detect-secrets,
  Apache-2.0, installed from PyPI as a test extra), three per pattern, from a fixed seed;
- families: the formats issue reports named (GitLab glrt-/gldt-/glcbt-, Slack xapp-/xoxe-1-, Hugging Face
  api_org_, Google GOCSPX-, AWS secret access keys and session tokens, a PEM body without its armour)
  and the common providers, generated from their published shapes.

Nothing here is a real credential, and nothing secret-shaped is stored in the repository: every value is
generated at test time, so secret scanners have nothing to flag. tests/fixtures/redaction/README.md
records the sources and licences.
"""

from __future__ import annotations

import json
import random
import re
from typing import Any

try:  # Python 3.11+: the regex parser behind re
    import re._constants as sre_constants  # type: ignore[import-not-found]
    import re._parser as sre_parse  # type: ignore[import-not-found]
except ImportError:  # pragma: no cover
    import sre_constants  # type: ignore[no-redef]
    import sre_parse  # type: ignore[no-redef]

ALNUM = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
B64 = ALNUM + "+/"
C = sre_constants


def sample(pattern: str, rng: random.Random) -> str:
    """A string the pattern matches (assertions and anchors are ignored; the caller checks the match)."""
    return _emit(sre_parse.parse(pattern), rng, {})


def _emit(parsed: Any, rng: random.Random, groups: dict[int, str]) -> str:
    out: list[str] = []
    for op, av in parsed:
        if op is C.LITERAL:
            out.append(chr(av))
        elif op is C.NOT_LITERAL:
            out.append(next(c for c in rng.sample(ALNUM, 3) if ord(c) != av))
        elif op is C.ANY:
            out.append(rng.choice(ALNUM))
        elif op is C.IN:
            out.append(_pick(av, rng))
        elif op in (C.MAX_REPEAT, C.MIN_REPEAT, getattr(C, "POSSESSIVE_REPEAT", None)):
            low, high, sub = av
            # an open-ended run gets a credential's length (16 to 40), not its pattern's minimum
            high = max(low, 16) + rng.randint(0, 24) if high == C.MAXREPEAT else min(high, low + 8)
            low = max(low, 16) if high > low + 8 and av[1] == C.MAXREPEAT else low
            out += [_emit(sub, rng, groups) for _ in range(rng.randint(low, max(low, high)))]
        elif op is C.SUBPATTERN:
            text = _emit(av[-1], rng, groups)
            if av[0]:
                groups[av[0]] = text
            out.append(text)
        elif op is C.BRANCH:
            out.append(_emit(rng.choice(av[1]), rng, groups))
        elif op is C.GROUPREF:
            out.append(groups.get(av, ""))
        elif op is C.CATEGORY:
            out.append(
                {C.CATEGORY_DIGIT: rng.choice("0123456789"), C.CATEGORY_SPACE: " "}.get(av, rng.choice(ALNUM))
            )
        # AT, ASSERT, ASSERT_NOT: nothing to emit
    return "".join(out)


def _pick(items: Any, rng: random.Random) -> str:
    chars: list[str] = []
    negate = False
    for op, av in items:
        if op is C.NEGATE:
            negate = True
        elif op is C.LITERAL:
            chars.append(chr(av))
        elif op is C.RANGE:
            chars += [chr(c) for c in range(av[0], min(av[1], av[0] + 200) + 1)]
        elif op is C.CATEGORY:
            chars += {C.CATEGORY_DIGIT: list("0123456789"), C.CATEGORY_WORD: list(ALNUM + "_")}.get(av, [" "])
    if negate:
        return rng.choice([c for c in ALNUM if c not in chars] or ["x"])
    return rng.choice([c for c in chars if c.isprintable()] or ["x"])


def _rand(rng: random.Random, alphabet: str, size: int) -> str:
    return "".join(rng.choice(alphabet) for _ in range(size))


def families(seed: int = 15) -> list[dict[str, str]]:
    """habitus's own family list: the formats the third-party set lacks, each from its published shape."""
    rng = random.Random(seed)
    hexd = "0123456789abcdef"
    b62, b64, url = ALNUM, B64, ALNUM + "_-"
    body = "\n".join(_rand(rng, b64, 64) for _ in range(6)) + "\n" + _rand(rng, b64, 20) + "=="
    made = {
        "gitlab_runner": "glrt-" + _rand(rng, url, 20),
        "gitlab_deploy": "gldt-" + _rand(rng, url, 20),
        "gitlab_ci_job": "glcbt-" + _rand(rng, b62, 5) + "_" + _rand(rng, url, 20),
        "gitlab_pat": "glpat-" + _rand(rng, url, 20),
        "slack_app": "xapp-1-A"
        + _rand(rng, "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ", 10)
        + "-"
        + _rand(rng, "0123456789", 13)
        + "-"
        + _rand(rng, hexd, 64),
        "slack_refresh": "xoxe-1-" + _rand(rng, b62, 120),
        "slack_bot": "xoxb-"
        + _rand(rng, "0123456789", 12)
        + "-"
        + _rand(rng, "0123456789", 13)
        + "-"
        + _rand(rng, b62, 24),
        "hf_org": "api_org_" + _rand(rng, b62, 34),
        "hf_user": "hf_" + _rand(rng, b62, 34),
        "google_oauth_secret": "GOCSPX-" + _rand(rng, url, 28),
        "google_api": "AIza" + _rand(rng, url, 35),
        "aws_access_key": "AKIA" + _rand(rng, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 16),
        "aws_secret_key": _rand(rng, b64, 40),
        "aws_session_token": "IQoJb3JpZ2luX2VjE" + _rand(rng, b64, 300),
        "github_pat": "ghp_" + _rand(rng, b62, 36),
        "github_fine": "github_pat_" + _rand(rng, b62, 22) + "_" + _rand(rng, b62, 59),
        "openai_project": "sk-proj-" + _rand(rng, url, 48),
        "anthropic": "sk-ant-api03-" + _rand(rng, url, 95),
        "stripe_live": "sk_live_" + _rand(rng, b62, 24),
        "npm": "npm_" + _rand(rng, b62, 36),
        "pypi": "pypi-AgEIcHlwaS5vcmc" + _rand(rng, url, 70),
        "digitalocean": "dop_v1_" + _rand(rng, hexd, 64),
        "sendgrid": "SG." + _rand(rng, url, 22) + "." + _rand(rng, url, 43),
        "twilio": "SK" + _rand(rng, hexd, 32),
        "hex_api_key": _rand(rng, hexd, 32),
        "base62_api_key": _rand(rng, b62, 32),
        "lower_api_key": _rand(rng, "abcdefghijklmnopqrstuvwxyz0123456789", 32),
        "jwt": "eyJhbGciOiJIUzI1NiJ9.eyJ" + _rand(rng, url, 40) + "." + _rand(rng, url, 43),
        "pem_body": body,
        # shapes gitleaks and trufflehog know that the first families lacked (issue 15's larger sample)
        "gitlab_routable": "glpat-"
        + _rand(rng, url, 27)
        + ".01."
        + _rand(rng, "0123456789abcdefghijklmnopqrstuvwxyz", 9),
        "newrelic_insert": "NRII-" + _rand(rng, "abcdefghijklmnopqrstuvwxyz0123456789-", 32),
        "salesforce": "00D" + _rand(rng, b62, 12) + "!AQ" + _rand(rng, b62 + "._", 94),
        "facebook_app": _rand(rng, "123456789", 16) + "%7C" + _rand(rng, url, 32),
        "plaid": "access-sandbox-" + "-".join(_rand(rng, hexd, n) for n in (8, 4, 4, 4, 12)),
        "settlemint": "sm_pat_" + _rand(rng, b62, 16),
        "licence_key": "-".join(
            _rand(rng, "ABCDEFGHJKLMNPQRSTUVWXYZ", 3)
            + _rand(rng, "23456789", 1)
            + _rand(rng, "ABCDEFGHJKLMNPQRSTUVWXYZ23456789", 3)
            for _ in range(4)
        ),
        "glued_key": _rand(rng, b62, 40) + "?" + _rand(rng, b62, 12),
        "mixed_case_20": _rand(rng, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ", 20),
    }
    return [{"source": "habitus", "rule": name, "secret": value} for name, value in made.items()]


# Patterns of detect-secrets that find no secret of their own (an IP address; a key's BEGIN line).
_SKIP = ("Public IP", "Private Key")


def third_party(per_pattern: int = 3, seed: int = 15) -> list[dict[str, str]]:
    """Samples of every detect-secrets plugin pattern (empty when detect-secrets is not installed)."""
    try:
        from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
    except ImportError:
        return []
    rng = random.Random(seed)
    rows: list[dict[str, str]] = []
    for kind, plugin in sorted(get_mapping_from_secret_type_to_class().items()):
        if kind.startswith(_SKIP):
            continue
        for number, pattern in enumerate(getattr(plugin, "denylist", ()) or ()):
            for _ in range(per_pattern):
                secret = _secret_of(pattern, rng)
                if secret:
                    rows.append({"source": "detect-secrets", "rule": f"{kind}/{number}", "secret": secret})
    return rows


def _secret_of(pattern: re.Pattern[str], rng: random.Random) -> str | None:
    """A sample's secret: the pattern's first group when it has one, else the whole match."""
    for _ in range(50):
        text = sample(pattern.pattern, rng)
        found = pattern.search(text)
        if found is None:
            continue
        secret = (found.group(1) if pattern.groups and found.group(1) else found.group(0)).strip(" \"'=:")
        if len(secret) >= 12 and "\n" not in secret and secret.isprintable():
            return secret
    return None


def _name(rule: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "_", rule.split("/")[0]).strip("_").upper()[:24] or "SERVICE"


CONTEXTS = {
    "prose": lambda n, s: f"I found {s} in the old notes, can you check it?",
    "export": lambda n, s: f"export {n}_KEY={s}",
    "header": lambda n, s: (
        f"curl -H 'X-{n.title().replace('_', '-')}-Token: {s}' https://api.example.com/v1/items"
    ),
    "json": lambda n, s: json.dumps({"service": n.lower(), f"{n.lower()}_secret": s, "region": "eu-west-1"}),
    "yaml": lambda n, s: f"{n.lower()}:\n  api_key: {s}\n  timeout: 30",
    "url": lambda n, s: f"GET https://api.example.com/v2/data?access_token={s}&page=2",
    "code": lambda n, s: f'client = {n.title().replace("_", "")}Client(api_key="{s}", timeout=10)',
    "log": lambda n, s: f"2026-11-30T10:00:00Z DEBUG {n.lower()}: auth ok with credentials {s}",
    "bearer": lambda n, s: f"Authorization: Bearer {s}",
}


def corpus() -> list[dict[str, str]]:
    """Every distinct secret: the third-party samples and the families."""
    seen: set[str] = set()
    rows = []
    for row in [*third_party(), *families()]:
        if row["secret"] not in seen:
            seen.add(row["secret"])
            rows.append(row)
    return rows


def texts(rows: list[dict[str, str]]) -> list[dict[str, str]]:
    """Each secret in each context: {"rule", "context", "secret", "text"}. A multi-line secret (a PEM
    body) goes in as its own text, whole, since it never sits on one line."""
    out = []
    for row in rows:
        if "\n" in row["secret"]:
            out.append({**row, "context": "block", "text": f"the key was:\n{row['secret']}\nend"})
            continue
        for context, place in CONTEXTS.items():
            out.append({**row, "context": context, "text": place(_name(row["rule"]), row["secret"])})
    return out
