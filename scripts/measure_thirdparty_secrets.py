"""Measure redaction on the larger third-party secrets sample that may not be committed.

gitleaks' rules (MIT) and trufflehog's detector tests (AGPL-3.0) are read from a local git snapshot of
each project and never copied into this repository; this script rebuilds the sample from them and
pushes every secret through the nine contexts of tests/redaction_corpus.py:

    .venv/bin/python scripts/measure_thirdparty_secrets.py \
        --gitleaks /path/to/gitleaks.git --trufflehog /path/to/trufflehog.git [--out stored.jsonl]

- gitleaks `config/gitleaks.toml` at GITLEAKS_REV: one sample generated from each rule's regex (its
  secret group when it names one, else its first group, else the whole match);
- trufflehog `pkg/detectors/*/*_test.go` at TRUFFLEHOG_REV: the string literals of `valid*` variables,
  split on " / " and whitespace, leaving out what is not a secret (variables named for an id, a URL, a
  domain, a host, a user, an e-mail, ...; pieces that are URLs, e-mail addresses or host names).

A secret counts as stored when it, or any 8-character alphanumeric run of it, survives redaction and
the post-check (the test's own criterion). --out writes the stored ones (they are secret-shaped: keep
the file out of the repository).
"""

from __future__ import annotations

import argparse
import json
import random
import re
import subprocess
import sys
import tomllib
import warnings
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from habitus.redact import looks_sensitive, redact
from redaction_corpus import CONTEXTS, sample

GITLEAKS_REV = "b58d3f10"
TRUFFLEHOG_REV = "3ab759fe"
_NOT_SECRET_NAME = re.compile(  # the name after "valid"
    r"(?i)(?:id|url|uri|domain|host|name|user|username|email|endpoint|sub|subdomain|account|server|region|"
    r"org|workspace|tenant|env|instance|project|app|client|cluster|team|zone|location|base|site|path|error)"
    r"(?:pattern)?\d*$"
)
_LITERAL = re.compile(r'\b(valid[A-Za-z0-9_]*)\s*(?::?=)\s*(?:"((?:[^"\\]|\\.)*)"|`([^`]*)`)')
_RUN = re.compile(r"[A-Za-z0-9]{8,}")
_MARKER = re.compile(r"\[REDACTED:[a-z_]+\]")
_POSIX = {"[:alnum:]": "A-Za-z0-9", "[:alpha:]": "A-Za-z", "[:digit:]": "0-9", "[:upper:]": "A-Z",
          "[:lower:]": "a-z", "[:xdigit:]": "0-9A-Fa-f", "[:punct:]": "!-/:-@\\[-`{-~"}  # fmt: skip
# gitleaks rules that find an identifier, not a secret (a client id, an access id: a user name's role)
_ID_RULE = re.compile(r"-(?:client|access|app|account|user)?-?id$")


def _git(repo: str, *args: str) -> str:
    return subprocess.run(
        ["git", "--git-dir", repo, *args], capture_output=True, text=True, check=True
    ).stdout


def _python_regex(go: str) -> re.Pattern[str]:
    """A gitleaks RE2 pattern in Python's dialect: a global (?i) past the start applies to the whole."""
    text = go.replace(r"\z", r"\Z")
    for posix, chars in _POSIX.items():
        text = text.replace(posix, chars)
    flags = 0
    if "(?i)" in text[1:]:
        text, flags = text.replace("(?i)", ""), re.I
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # "possible nested set": RE2 has none
        return re.compile(text, flags)


def gitleaks(repo: str, rng: random.Random) -> list[dict[str, str]]:
    config = tomllib.loads(_git(repo, "show", f"{GITLEAKS_REV}:config/gitleaks.toml"))
    rows = []
    for rule in config["rules"]:
        source = rule.get("regex")
        if not source or _ID_RULE.search(rule["id"]):
            continue
        try:
            pattern = _python_regex(source)
        except re.error as error:
            print(f"gitleaks {rule['id']}: not a Python regex ({error})", file=sys.stderr)
            continue
        group = rule.get("secretGroup") or (1 if pattern.groups else 0)
        for _ in range(200):
            found = pattern.search(sample(pattern.pattern, rng))
            if found is None or not found.group(group):
                continue
            secret = found.group(group).strip(" \t\"'`=:")
            if len(secret) >= 8 and "\n" not in secret and secret.isprintable():
                rows.append({"source": "gitleaks", "rule": rule["id"], "secret": secret})
                break
        else:
            print(f"gitleaks {rule['id']}: no sample", file=sys.stderr)
    return rows


def _pieces(value: str) -> list[str]:
    out = []
    for piece in re.split(r"\s+/\s+|\s+", value):
        piece = piece.strip(" \t\"'`,;")
        if len(piece) < 6 or "@" in piece or "://" in piece or "=" == piece[-1:] == piece:
            continue
        if re.fullmatch(r"[a-z0-9\-]+(?:\.[a-z0-9\-]+)+", piece) and not re.search(r"\d{6}", piece):
            continue  # a host name
        if re.fullmatch(r"[A-Z]?[a-z_]+", piece) or "(" in piece or ";" in piece:
            continue  # a keyword the detector looks for ("gocanvasemail"), a word, a piece of code
        out.append(piece)
    return out


def trufflehog(repo: str) -> list[dict[str, str]]:
    lines = _git(repo, "grep", "-E", r"\bvalid[A-Za-z0-9_]*\s*:?=\s*[\"`]", TRUFFLEHOG_REV, "--",
                 "pkg/detectors/*/*_test.go")  # fmt: skip
    rows = []
    for line in lines.splitlines():
        _, path, code = line.split(":", 2)
        for match in _LITERAL.finditer(code):
            var, value = match.group(1), match.group(2) if match.group(2) is not None else match.group(3)
            if _NOT_SECRET_NAME.search(var[5:]) and not re.search(r"(?i)secret|token|key|pass", var[5:]):
                continue
            value = value.encode().decode("unicode_escape") if "\\" in value else value
            for piece in _pieces(value):
                rows.append({"source": "trufflehog", "rule": f"{path.split('/')[2]}/{var}", "secret": piece})
    return rows


def _name(rule: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "_", rule.split("/")[0]).strip("_").upper()[:24] or "SERVICE"


def stored(rows: list[dict[str, str]]) -> list[dict[str, str]]:
    found = []
    for row in rows:
        for context, place in CONTEXTS.items():
            text = place(_name(row["rule"]), row["secret"])
            clean, _ = redact(text)
            if looks_sensitive(clean):
                continue
            # "[REDACTED:rubygems_key]" and a context that names its service ("rubygems_secret") hold
            # no piece of the secret
            clean = _MARKER.sub(" ", clean)
            named = place(_name(row["rule"]), "")
            runs = [run for run in _RUN.findall(row["secret"]) if run.lower() not in named.lower()]
            if row["secret"] in clean or any(run in clean for run in runs):
                found.append({**row, "context": context, "clean": clean})
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--gitleaks", required=True, help="git directory of gitleaks")
    parser.add_argument("--trufflehog", required=True, help="git directory of trufflehog")
    parser.add_argument("--out", type=Path, help="write the stored secrets here (JSON lines)")
    args = parser.parse_args()
    rng = random.Random(15)
    seen: set[str] = set()
    rows = []
    for row in [*gitleaks(args.gitleaks, rng), *trufflehog(args.trufflehog)]:
        if row["secret"] not in seen:
            seen.add(row["secret"])
            rows.append(row)
    found = stored(rows)
    secrets = {r["secret"] for r in found}
    by_context = Counter(r["context"] for r in found)
    sources = Counter(r["source"] for r in rows)
    print(f"{len(rows)} secrets ({dict(sources)}), {len(rows) * len(CONTEXTS)} texts")
    print(f"stored somewhere: {len(secrets)} of {len(rows)}")
    print("by context: " + ", ".join(f"{c} {by_context.get(c, 0)}" for c in CONTEXTS))
    if args.out:
        with args.out.open("w") as handle:
            for row in found:
                handle.write(json.dumps(row) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
