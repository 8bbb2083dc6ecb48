"""The provider rules (habitus.redact.rules): each compiles, matches a sample generated from its own
pattern, and that sample is redacted wherever it is placed; the keyword prefilter never hides a match."""

from __future__ import annotations

import random
import re

import pytest

from habitus.redact import looks_sensitive, redact
from habitus.redact.rules import RULES, RULES_VERSION
from redaction_corpus import CONTEXTS, sample

IDS = [f"{n}-{kind}" for n, (kind, _, _) in enumerate(RULES)]


def example(pattern: str, seed: int) -> str:
    """A string the rule matches, generated from its pattern (retried past lookaround failures)."""
    rng = random.Random(seed)
    compiled = re.compile(pattern)
    for _ in range(200):
        found = compiled.search("https://x.example/?" + sample(pattern, rng))  # "?" for query rules
        if found:
            return found.group(0)
    raise AssertionError(f"no sample of {pattern!r} matches it")


def test_the_rule_set_is_versioned_and_its_kinds_are_marker_safe() -> None:
    assert isinstance(RULES_VERSION, int) and RULES_VERSION >= 2
    assert len(RULES) >= 100
    for kind, keywords, _ in RULES:
        assert re.fullmatch(r"[a-z0-9_]+", kind)
        assert keywords and all(k == k.lower() for k in keywords)


@pytest.mark.parametrize(("index", "rule"), list(enumerate(RULES)), ids=IDS)
def test_each_rule_compiles_and_its_own_sample_is_redacted(
    index: int, rule: tuple[str, tuple[str, ...], str]
) -> None:
    kind, keywords, pattern = rule
    re.compile(pattern)
    secret = example(pattern, index)
    assert any(k in secret.lower() for k in keywords), "the prefilter would hide this match"
    for place in (CONTEXTS["prose"], CONTEXTS["code"], CONTEXTS["log"]):
        text = place("SERVICE", secret)
        clean, count = redact(text)
        assert secret not in clean or looks_sensitive(clean), (kind, text, clean)
        assert count >= 1
