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
proposed. numpy is imported only when a gate loads.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import TYPE_CHECKING, Any

from habitus.lang.pasted import own_words

if TYPE_CHECKING:
    import numpy as np

    from habitus.embed.engine import Embedder

WEIGHTS = "meaning_weights.json"
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

    @classmethod
    def load(cls, embedder: Embedder) -> Gate | None:
        """The gate for this embedder (an E5 model with trained weights), else None."""
        import numpy as np

        entry = _all().get(embedder.model_id.partition("@")[2])
        if entry is None or len(entry["weights"]) != embedder.dims:
            return None
        return cls(
            embedder,
            np.asarray(entry["weights"], dtype=np.float32),
            float(entry["bias"]),
            float(entry["drop"]),
            float(entry["source"]),
        )

    def scores(self, prompts: list[str]) -> list[float]:
        """The probability that each prompt states a standing rule or a generalising correction."""
        import numpy as np

        if not prompts:
            return []
        z = vectors(self.embedder, prompts) @ self.weights + self.bias
        return [float(v) for v in 1.0 / (1.0 + np.exp(-z))]
