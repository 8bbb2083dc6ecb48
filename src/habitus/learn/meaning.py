"""Reading a prompt by meaning: does it state a standing rule, or correct the agent in a way that
generalises, rather than ask a one-off task, a question, report a bug, paste text or vent?

A logistic scorer over the packaged multilingual E5 embedding of the prompt's own words
(habitus.lang.pasted.own_words), trained by scripts/train_analyze_gate.py on the labelled human prompts of
the tests/fixtures/analyze* dev sets, on 188 more prompts of public entireio/cli sessions (MIT) and on 273
prompts written for it in ten languages (tests/fixtures/analyze_gate/). Its weights are data
(meaning_weights.json), one entry per E5 model fingerprint: with another embedding model there are no
weights and `Gate.load` gives None (the word rules still run).

The local analyzer (habitus.learn.local) uses it twice: a calm general instruction whose prompt reaches
`source` starts a candidate, and a new candidate none of whose cited prompts reaches `drop` is not
proposed. The same entry may carry the rule-sentence classifier (`rules`, habitus.learn.rules), which
scores single sentences of a prompt on the same embedding. numpy is imported only when a gate loads.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from typing import TYPE_CHECKING, Any

from habitus.lang.pasted import own_words

if TYPE_CHECKING:
    import numpy as np

    from habitus.embed.engine import Embedder

WEIGHTS = "meaning_weights.json"
MAX_SEEN = 20_000  # sentence vectors a gate keeps (a run's worth)
TEXT_CHARS = 600  # of the prompt's own words: a rule is said early, and E5 reads 512 tokens at most


def text_of(prompt: str) -> str:
    """What the scorer reads of a prompt: its own words, whitespace collapsed, bounded."""
    return " ".join(own_words(prompt).split())[:TEXT_CHARS]


def vectors(embedder: Embedder, prompts: list[str]) -> np.ndarray:
    return embedder.embed([text_of(p) or " " for p in prompts], batch_size=64)


@lru_cache(maxsize=1)
def _all() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(resources.files("habitus.learn").joinpath(WEIGHTS).read_text())
    return data.get("models", {})


@dataclass(frozen=True)
class Gate:
    embedder: Embedder
    weights: Any  # numpy (dims,)
    bias: float
    drop: float
    source: float
    rules: Any = None  # numpy (dims + rules.FEATURES,): the rule-sentence classifier, if trained
    rules_bias: float = 0.0
    rules_threshold: float = 1.0
    _seen: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def load(cls, embedder: Embedder) -> Gate | None:
        """The gate for this embedder (an E5 model with trained weights), else None."""
        import numpy as np

        entry = _all().get(embedder.model_id.partition("@")[2])
        if entry is None or len(entry["weights"]) != embedder.dims:
            return None
        rules = entry.get("rules")
        return cls(
            embedder,
            np.asarray(entry["weights"], dtype=np.float32),
            float(entry["bias"]),
            float(entry["drop"]),
            float(entry["source"]),
            np.asarray(rules["weights"], dtype=np.float32) if rules else None,
            float(rules["bias"]) if rules else 0.0,
            float(rules["threshold"]) if rules else 1.0,
        )

    def scores(self, prompts: list[str]) -> list[float]:
        """The probability that each prompt states a standing rule or a generalising correction."""
        import numpy as np

        if not prompts:
            return []
        z = vectors(self.embedder, prompts) @ self.weights + self.bias
        return [float(v) for v in 1.0 / (1.0 + np.exp(-z))]

    def rule_scores(self, sentences: list[tuple[str, int, int]]) -> list[float]:
        """The probability that each sentence (text, its index in the prompt, the prompt's sentence
        count) states a standing rule (habitus.learn.rules); zeros without trained rule weights. A
        sentence's vector is kept for the life of the gate: generated or templated prompts repeat."""
        import numpy as np

        from habitus.learn.rules import features

        if not sentences or self.rules is None:
            return [0.0] * len(sentences)
        todo = sorted({s for s, _, _ in sentences if s not in self._seen})
        if todo:
            if len(self._seen) > MAX_SEEN:
                self._seen.clear()
            for text, row in zip(todo, self.embedder.embed(todo, batch_size=64), strict=True):
                self._seen[text] = row
        x = np.stack(
            [
                np.concatenate([self._seen[s], np.asarray(features(s, k, n), dtype=np.float32)])
                for s, k, n in sentences
            ]
        )
        z = x @ self.rules + self.rules_bias
        return [float(v) for v in 1.0 / (1.0 + np.exp(-z))]

    def shape(self, sentence: str, index: int, count: int) -> float:
        """The part of a sentence's rule score its shape alone gives (no embedding): which sentences
        of a large batch to embed first."""
        from habitus.learn.rules import features

        if self.rules is None:
            return 0.0
        dims = len(self.rules) - len(features(sentence, index, count))
        return float(
            sum(w * f for w, f in zip(self.rules[dims:], features(sentence, index, count), strict=True))
        )
