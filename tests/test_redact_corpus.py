"""Redaction against corpora it was not written from: third-party secret shapes in every context, and a
precision corpus of real code and prose that must come through (almost) unchanged.

The figures these tests pin are tuned/dev figures: the redactor was adjusted while looking at them.
"""

from __future__ import annotations

import difflib
import gzip
import json
import re
from collections import Counter

import pytest

from conftest import REPO
from habitus.redact import looks_sensitive, redact
from redaction_corpus import CONTEXTS, corpus, families, texts, third_party

PRECISION = REPO / "tests" / "fixtures" / "redaction" / "precision"
_EMAIL = re.compile(r"[A-Za-z0-9._%+\-]+@[A-Za-z0-9.\-]+\.[A-Za-z]{2,}")
# personal data, redacted on purpose: an e-mail address, a home folder (its user name goes)
_PERSONAL = re.compile(_EMAIL.pattern + r"|/home/\w|/Users/\w|\\Users\\|-home-\w|-Users-\w")

# The precision corpus's code lines that change, and why: each holds a secret-shaped literal.
CODE_WITH_A_SECRET = {
    "                      passwd='geheim$parole')",  # smtplib docstring: a password in an example
    "    'Drmhze6EPcv0fN_81Bj-nA'",  # secrets.token_urlsafe's documented output: a token
}
# identifiers.txt.gz: lock files, commit ids and UUIDs, all kept; one test string shaped like a UUID in
# letters no UUID has, which is how a key looks
IDENTIFIER_WITH_A_SECRET_SHAPE = {'            "zz609d23-e25f-48b0-918e-6d1e390a7cb7", // non-hex'}
PROSE_WITH_A_SECRET = {
    "    password: 's00pers3cret'",  # axios README: auth options with a literal password
    "      password: 'rapunz3l'",
    "// multipZZZrt/form-dZZZtZZZ; boundZZZry=Asrf456BGe4h",  # a random multipart boundary
}


_RUN = re.compile(r"[A-Za-z0-9]{8,}")


def leaks(rows: list[dict[str, str]]) -> list[tuple[str, str, str]]:
    """(rule, context, secret) for every text whose secret, or any 8+ character alphanumeric run of it,
    survives redaction and the post-check."""
    found = []
    for row in texts(rows):
        clean, _ = redact(row["text"])
        if looks_sensitive(clean):
            continue  # dropped, not stored
        if row["secret"] in clean or any(run in clean for run in _RUN.findall(row["secret"])):
            found.append((row["rule"], row["context"], row["secret"]))
    return found


def test_the_families_are_removed_in_every_context() -> None:
    rows = families()
    assert {"gitlab_runner", "slack_app", "slack_refresh", "hf_org", "google_oauth_secret", "aws_secret_key",
            "aws_session_token", "pem_body"} <= {r["rule"] for r in rows}  # fmt: skip
    assert leaks(rows) == []


def test_detect_secrets_samples_are_removed_in_every_context() -> None:
    pytest.importorskip("detect_secrets")
    rows = third_party()
    kinds = Counter(r["rule"].split("/")[0] for r in rows)
    assert len(rows) >= 90 and len(kinds) >= 20, kinds
    assert leaks(rows) == []


def test_the_corpus_has_every_context_and_its_texts_really_hold_the_secret() -> None:
    rows = corpus()
    placed = texts(rows)
    assert {t["context"] for t in placed} == {*CONTEXTS, "block"}
    assert all(t["secret"] in t["text"] or t["context"] == "json" for t in placed)
    assert all(t["secret"] in json.loads(t["text"]).values() for t in placed if t["context"] == "json")
    assert len({r["secret"] for r in rows}) == len(rows)


def _files(name: str) -> list[str]:
    text = gzip.decompress((PRECISION / name).read_bytes()).decode()
    return [body for body in re.split(r"^### .*$\n?", text, flags=re.M) if body]


def _changed_lines(body: str) -> list[str]:
    clean, _ = redact(body)
    before, after = body.splitlines(), clean.splitlines()
    changed = []
    for tag, i1, i2, _, _ in difflib.SequenceMatcher(None, before, after, autojunk=False).get_opcodes():
        if tag != "equal":
            changed += before[i1:i2]
    return changed


@pytest.mark.parametrize(
    ("name", "allowed"),
    [
        ("code-python.txt.gz", CODE_WITH_A_SECRET),
        ("code-js.txt.gz", set()),
        ("prose.txt.gz", PROSE_WITH_A_SECRET),
        ("identifiers.txt.gz", IDENTIFIER_WITH_A_SECRET_SHAPE),
    ],
)
def test_the_precision_corpus_is_left_alone(name: str, allowed: set[str]) -> None:
    """Whole source files, redacted as capture would redact a pasted file: at most 1 % of lines change,
    and a changed line is one with personal data (an e-mail address, a home folder) or a pinned
    secret-shaped literal; never a line of code that merely names a secret (`password = getpass.getpass()`,
    `token = self.token`), nor a lock file's hash, a commit id or a UUID."""
    files = _files(name)
    lines = sum(len(body.splitlines()) for body in files)
    changed = [line for body in files for line in _changed_lines(body)]
    assert lines > 10_000
    assert len(changed) <= lines // 100
    unexplained = [line for line in changed if not _PERSONAL.search(line) and line not in allowed]
    assert unexplained == []
    assert set(allowed) <= set(changed)  # the pins stay meaningful


def test_the_precision_corpus_names_secrets_without_holding_them() -> None:
    """The corpus really exercises the hard case: code full of secret-named variables."""
    text = "".join(_files("code-python.txt.gz") + _files("code-js.txt.gz"))
    for needle in ("passwd = ", "password = ", "token = ", "Authorization", "cookie", "secret = "):
        assert needle in text
