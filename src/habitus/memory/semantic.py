"""Embedding similarity for reflect and prune (the offline, embedding-based part of observational memory).

`EmbeddingMeasure` judges two texts alike when their words overlap enough (habitus.memory.text.Measure)
**or** their embeddings' cosine clears a threshold calibrated for all-MiniLM-L6-v2 on the real Pi
session in ../shared/fixtures (107 user statements and high observations, 5,671 pairs):

    same     cosine >= 0.92   paraphrased restatements ("created custom.json" / "custom-dark.json": 0.91
                              is a different file, not a restatement)
    related  cosine >= 0.80   one recurring topic: "create a custom theme ... open it with the code
                              command" twice in other words (0.82; word overlap 0.56), "write some
                              markdown in chat" (0.86; 0.33). Below 0.8 pairs share a theme but not a fact.
    covers   cosine >= 0.80   a low observation a reflection already holds

Superseded observations (prune's first pass) stay on word overlap: two statements close in meaning
("use the dark theme" / "use the light theme") are often both true, and pass 1 drops only clear cases.

Texts are embedded in one batch by `prime` and cached; an unprimed text is embedded on first use.
`neighbours` (reflect on a whole stream) compares the unit vectors block by block with one matrix
product; a list of more than MAX_EMBED texts is judged by words alone (embedding 100,000 observations
would take minutes), and `limited` says so.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from habitus.memory.text import Measure

if TYPE_CHECKING:
    from habitus.embed.engine import Embedder


CALIBRATED = (
    "minilm"  # the packaged model the cosines above were fitted on (used while embed.model is default)
)


class EmbeddingMeasure(Measure):
    name = "words+embeddings"
    SAME_COSINE = 0.92
    RELATED_COSINE = 0.8
    COVERS_COSINE = 0.8
    MAX_EMBED = 2000
    BLOCK = 512

    def __init__(self, embedder: Embedder) -> None:
        self.embedder = embedder
        self.model_id = embedder.model_id
        self.vectors: dict[str, Any] = {}
        self.limited = False

    def prime(self, texts: Iterable[str]) -> None:
        todo = list(dict.fromkeys(t for t in texts if t not in self.vectors))
        if todo:
            self.vectors.update(zip(todo, self.embedder.embed(todo), strict=True))

    def cosine(self, a: str, b: str) -> float:
        self.prime([a, b])
        return float(self.vectors[a] @ self.vectors[b])

    def same(self, a: str, b: str) -> bool:
        return super().same(a, b) or self.cosine(a, b) >= self.SAME_COSINE

    def related(self, a: str, b: str) -> bool:
        return super().related(a, b) or self.cosine(a, b) >= self.RELATED_COSINE

    def covers(self, reflection: str, observation: str) -> bool:
        return (
            super().covers(reflection, observation)
            or self.cosine(reflection, observation) >= self.COVERS_COSINE
        )

    def neighbours(self, texts: Sequence[str], judgement: str) -> list[set[int]]:
        import numpy as np

        out = super().neighbours(texts, judgement)
        if len(texts) > self.MAX_EMBED:
            self.limited = True
            return out
        if len(texts) < 2:
            return out
        self.prime(texts)
        matrix = np.stack([self.vectors[t] for t in texts]).astype(np.float32)
        threshold = self.SAME_COSINE if judgement == "same" else self.RELATED_COSINE
        for start in range(0, len(texts), self.BLOCK):
            scores = matrix[start : start + self.BLOCK] @ matrix.T
            for row, column in zip(*np.nonzero(scores >= threshold), strict=True):
                i, j = start + int(row), int(column)
                if i != j:
                    out[i].add(j)
        return out


def measure_for(root: Any) -> tuple[Measure, str | None]:
    """The embedding measure with the configured model, or word overlap and the error code when the
    model cannot be loaded (reflect and prune then still work, and say which measure they used)."""
    from habitus.errors import HabitusError
    from habitus.memory.text import WORDS
    from habitus.models.embedders import load_embedder

    try:
        return EmbeddingMeasure(load_embedder(root, calibrated=CALIBRATED)), None
    except HabitusError as exc:
        if exc.code not in ("model_unavailable", "checksum_mismatch"):
            raise
        return WORDS, exc.code
