"""Identifiers that look random but are not secrets (UUIDs, commit ids, lock-file digests, module paths,
base64 of text) come through; the same shapes named by a secret word do not."""

from __future__ import annotations

import base64

import pytest

from habitus.redact import looks_sensitive, redact

UUID = "6c073d8e-2bb1-45cb-90bc-a28ce44da090"
SHA1 = "780fb4a8f1d319ba78cf6c50f229ade05b5d2dea"
SHA256 = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"


@pytest.mark.parametrize(
    "text",
    [
        f"session {UUID} started",
        f"Main session file: {UUID}.jsonl",
        "db609d23-e25f-48b0-918e",  # hex in dashed groups: an id of the UUID family
        f"commit {SHA1}",
        f"{SHA1} {SHA1[:8]} Merge pull request #653 from w0rmr1d3r/document_issue_638",  # git log %H %h %s
        f"{SHA1} refs/heads/main",  # git show-ref
        f'checksum = "{SHA256}"',  # Cargo.lock
        f"sha256:{SHA256}",
        "github.com/Masterminds/sprig/v3 v3.3.0 h1:mQh0Yrg1XPo6vjYXgtf5OtijNAKJRNcTdOOGZe3tPhs=",  # go.sum
        "golang.org/x/mod v0.0.0-20180213035817-a1ea475d72b1/go.mod h1:Q3SI9o4m/ZMnBNeIyt5eFwwo7qiLfzFZmjNmxjkiQlU=",
        '"integrity": "sha512-30iZtAPgz+LTIYoeivqYo853f02jBYSd5uGnGpkFV0M3xOt9aN73erkgYAmZU43x4VfqcnLxW9Kpg3R5LC4YYw=="',
        'icon = "data:image/svg+xml;base64,'
        + base64.b64encode(b'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24"></svg>').decode()
        + '"',
        'GREETING = "' + base64.b64encode(b"This is a test of the emergency broadcast system").decode() + '"',
        "curl -H 'X-Request-Token: ${TOKEN}' https://api.example.com/v1/items",  # the URL is not the token
        "see the token docs at https://docs.github.com/en/v3/auth2x",
        "Authorization: Bearer credential-shaped-model-output",  # words, not a credential
    ],
)
def test_identifiers_that_look_random_are_kept(text: str) -> None:
    assert redact(text) == (text, 0)


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        (f"token: {UUID}", UUID),
        (f"export HEROKU_API_KEY={UUID}", UUID),
        (f"api_key={SHA1}", SHA1),
        (f"the secret is {SHA256}", SHA256),
        (f"I found {SHA1} in the old notes", SHA1),  # 40 hex with no word saying it is a commit: a key
        (f"Authorization: Bearer {UUID}", UUID),
        ("auth ok with credentials 87654321-4321-4321-4321-CBA987654321", "CBA987654321"),  # not a version
        ("basic_auth = " + base64.b64encode(b"admin:s3cr3tP4ss").decode(), "YWRtaW46"),
        (base64.b64encode(b"admin:s3cr3tP4ss-and-more").decode(), "YWRtaW46"),  # user:password stays a secret
    ],
)
def test_the_same_shapes_named_by_a_secret_word_are_removed(text: str, secret: str) -> None:
    clean, count = redact(text)
    assert secret not in clean and count >= 1, clean
    assert not looks_sensitive(clean)
