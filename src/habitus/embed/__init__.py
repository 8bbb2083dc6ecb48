"""Local sentence embeddings: onnxruntime + tokenizers + numpy, verified model files, no network.

Public API (what `analyze`, `select`, `memory --hybrid`, `advise` and `dedupe` call):

    from habitus.embed import load_embedder
    embedder = load_embedder(root)          # the model named by `embed.model` (default: "default")
    embedder.model_id                        # e.g. "default@9b1c…": name + fingerprint of its files
    embedder.dims                            # 384 for the packaged E5 and MiniLM
    vectors = embedder.embed(["When …", …])  # numpy float32 (n, dims), rows L2-normalised

- Cosine similarity of two rows is their dot product. Store a vector only together with
  `embedder.model_id`, `embedder.dims` and `input_checksum(text)`; never compare vectors whose model
  ids differ (a different file under the same name gets a different fingerprint, hence a new id).
- Model files are checked (size and SHA-256, pinned in code for the default, recorded at
  `habitus model add` for the others) before first use; a mismatch raises `checksum_mismatch` and a
  missing or unloadable file `model_unavailable` (both exit 3). A verified result is remembered in
  `<root>/models/verified.json`, keyed on each file's path, size, mtime, ctime, inode and device, so
  later processes do not hash ~90 MB again; any change to a file forces a full re-hash.
- One process-wide `Embedder` per model: loading twice returns the same object.
- numpy, onnxruntime and tokenizers are imported only inside `load_embedder`/`embed`.
"""

from __future__ import annotations

import hashlib
import unicodedata
from typing import TYPE_CHECKING

from habitus import codec
from habitus.errors import HabitusError

if TYPE_CHECKING:
    from habitus.embed.engine import Embedder
    from habitus.state.root import StateRoot

INPUT_VERSION = 1  # bump when `embedding_input` changes: every cached vector then counts as stale


def embedding_input(text: str) -> str:
    """The exact string that gets embedded for `text`: NFKC, whitespace collapsed, trimmed.

    Case is kept (the default tokenizer lowercases; cased models may care)."""
    return " ".join(unicodedata.normalize("NFKC", text).split())


def input_checksum(text: str) -> str:
    """SHA-256 identifying what a stored vector was computed from (input version + normalised text)."""
    return codec.checksum({"embed_input": INPUT_VERSION, "text": embedding_input(text)})


def vector_checksum(blob: bytes) -> str:
    return hashlib.sha256(blob).hexdigest()


def load_embedder(
    root: StateRoot, name: str | None = None, *, threads: int | None = None, calibrated: str | None = None
) -> Embedder:
    """The embedder for model `name` (default: the `embed.model` setting), verified and loaded once
    per process. `calibrated` names the packaged model a caller's thresholds were fitted on ("minilm"):
    while the setting is "default", that caller gets that model, since its cosines mean something else
    under another one. Raises `not_found` for an unknown explicit name; `model_unavailable` (exit 3)
    when the configured model is gone or its files do not load; `checksum_mismatch` (exit 3) when they
    do not verify."""
    from habitus.embed import engine, registry
    from habitus.state import config as configuration

    config = configuration.load(root)
    if name is None and calibrated is not None and config.get("embed.model") == registry.DEFAULT_NAME:
        name = calibrated
    try:
        spec = registry.resolve(root, name or config.get("embed.model"))
    except HabitusError as exc:
        if name is not None or exc.code != "not_found":
            raise
        raise HabitusError(
            "model_unavailable",
            f"the configured embedding model {config.get('embed.model')} is not installed",
            hint="`habitus model list`; `habitus model use default`",
        ) from None
    return engine.get(root, spec, threads=threads or config.get("embed.threads"))


def current_model_name(root: StateRoot) -> str:
    """The configured model name (`embed.model`), without loading anything."""
    from habitus.state import config as configuration

    return str(configuration.load(root).get("embed.model"))
