"""Local sentence embeddings: onnxruntime + tokenizers + numpy, verified model files, no network.

Pure: it embeds text with a given model and reads no config and writes nothing. Which model a state
root uses, and checking its files, is habitus.models.embedders:

    from habitus.models.embedders import load_embedder
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
- numpy, onnxruntime and tokenizers are imported only when a model loads (`engine`).
"""

from __future__ import annotations

import hashlib
import unicodedata

from habitus import codec

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
