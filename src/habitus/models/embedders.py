"""Embedding models in a state root: which one is configured, which were added under `<root>/models/`
(found, added and removed here), and checking their files before use.

`load_embedder(root)` is what analyze, select, memory, advise and dedupe call: the model the
`embed.model` setting names, verified and loaded once per process (habitus.embed does the embedding).

Verification: Verify model files (size and SHA-256) before first use, remembering success across processes.

The stamp `<root>/models/verified.json` maps each verified file's absolute path to the stat identity
it had when hashed (size, mtime_ns, ctime_ns, inode, device) and the digest it matched. A later
process skips hashing only when all of these still match exactly and the digest is the one expected
now; anything else re-hashes. The stamp is a cache: unreadable or tampered stamps are ignored
(re-hash), never trusted, and it is written only into a state root that already exists.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from habitus import codec
from habitus.embed import registry
from habitus.embed.registry import (
    EXTERNAL_DATA_SUFFIXES,
    MANIFEST,
    MAX_MANIFEST_BYTES,
    MAX_MODEL_BYTES,
    FileSpec,
    ModelSpec,
)
from habitus.errors import HabitusError
from habitus.state import config, files, locks
from habitus.state.clock import utc_now
from habitus.state.root import StateRoot
from habitus.state.settings import NAME_RE

if TYPE_CHECKING:
    from habitus.embed.engine import Embedder


def load_embedder(
    root: StateRoot, name: str | None = None, *, threads: int | None = None, calibrated: str | None = None
) -> Embedder:
    """The embedder for model `name` (default: the `embed.model` setting), verified and loaded once
    per process. `calibrated` names the packaged model a caller's thresholds were fitted on ("minilm"):
    while the setting is "default", that caller gets that model, since its cosines mean something else
    under another one. Raises `not_found` for an unknown explicit name; `model_unavailable` (exit 3)
    when the configured model is gone or its files do not load; `checksum_mismatch` (exit 3) when they
    do not verify."""
    from habitus.embed import engine

    current = config.load(root)
    if name is None and calibrated is not None and current.get("embed.model") == registry.DEFAULT_NAME:
        name = calibrated
    try:
        spec = resolve(root, name or current.get("embed.model"))
    except HabitusError as exc:
        if name is not None or exc.code != "not_found":
            raise
        raise HabitusError(
            "model_unavailable",
            f"the configured embedding model {current.get('embed.model')} is not installed",
            hint="`habitus model list`; `habitus model use default`",
        ) from None
    return engine.get(
        spec,
        threads=threads or current.get("embed.threads"),
        check=lambda s: verify(root, s.files, label=s.name),
    )


def current_model_name(root: StateRoot) -> str:
    """The configured model name (`embed.model`), without loading anything."""
    return str(config.load(root).get("embed.model"))


def listing(root: StateRoot, *, in_use: str, memory: list[str], check: bool = False) -> dict[str, Any]:
    """The `model list` result: every packaged and added model (a broken one with its error code), which
    one is in use and which `memory` (habitus.memory.embedding.describe) takes its vectors from; with
    `check`, every file's size and SHA-256 verified too."""
    items = []
    packaged = [n for n in registry.PACKAGED_NAMES if n != registry.E5_NAME or registry.e5_available()]
    for name in [*packaged, *added_names(root)]:
        try:
            spec = resolve(root, name)
            item = registry.describe(spec, in_use)
            if check:
                verify(root, spec.files, label=name)
                item["verified"] = True
        except HabitusError as exc:
            item = {"name": name, "in_use": name == in_use, "error": exc.code}
        item["memory"] = name in memory
        items.append(item)
    return {"items": items, "in_use": in_use, "memory": memory}


def check_name(name: str) -> str:
    if not isinstance(name, str) or not NAME_RE.match(name):
        raise HabitusError(
            "usage", "model name: expected lowercase letters, digits, '-' or '_' (at most 32, letter first)"
        )
    return name


def resolve(root: StateRoot, name: str) -> ModelSpec:
    """The spec of a model by name; not_found when no such model was added."""
    check_name(name)
    if name == registry.DEFAULT_NAME:
        return registry.default_spec()
    if name == registry.E5_NAME:
        return registry.e5_spec()
    if name == registry.MINILM_NAME:
        return registry.minilm_spec()
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
    if name in registry.PACKAGED_NAMES:
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
    if name in registry.PACKAGED_NAMES:
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


# -- verification ---------------------------------------------------------------------------------

STAMP = "verified.json"
MAX_STAMP_BYTES = 256 * 1024


def _identity(st: os.stat_result) -> list[int]:
    return [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_dev]


def _hash(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def _stamp_path(root: StateRoot) -> Path:
    return root.models / STAMP


def _read_stamp(root: StateRoot) -> dict[str, Any]:
    try:
        data = codec.loads(files.read_bytes(_stamp_path(root), MAX_STAMP_BYTES))
        entries = data["entries"]
        if data.get("checksum") != codec.checksum(entries) or not isinstance(entries, dict):
            return {}
        return entries
    except (OSError, HabitusError, ValueError, KeyError, TypeError):
        return {}


def _write_stamp(root: StateRoot, entries: dict[str, Any]) -> None:
    if not root.exists():
        return  # never create a state root just to cache a hash
    try:
        root.ensure_sub("models")
        body = {"v": 1, "entries": entries, "checksum": codec.checksum(entries)}
        files.atomic_write(_stamp_path(root), codec.canonical(body))
    except (OSError, HabitusError):
        pass  # a cache that cannot be written only costs a re-hash next time


def verify(root: StateRoot, specs: tuple[FileSpec, ...], *, label: str) -> int:
    """Check every file's size and SHA-256; returns how many files were actually hashed.

    Raises `model_unavailable` for a missing or symlinked file and `checksum_mismatch` for a file
    whose size or digest differs from what was pinned or recorded."""
    stamp = _read_stamp(root)
    changed = False
    hashed = 0
    for spec in specs:
        key = str(spec.path)
        try:
            st = os.stat(spec.path, follow_symlinks=False)
        except FileNotFoundError:
            raise HabitusError(
                "model_unavailable", f"{spec.path}: missing file of embedding model {label}"
            ) from None
        if os.path.islink(spec.path):
            raise HabitusError("symlink_refused", f"{spec.path} is a symbolic link")
        if st.st_size != spec.size:
            raise HabitusError(
                "checksum_mismatch",
                f"{spec.path}: size differs from the one recorded for embedding model {label}",
                hint="reinstall the package or re-add the model",
            )
        entry = stamp.get(key)
        if entry == {"stat": _identity(st), "sha256": spec.sha256}:
            continue
        hashed += 1
        if _hash(spec.path) != spec.sha256:
            raise HabitusError(
                "checksum_mismatch",
                f"{spec.path}: SHA-256 differs from the one recorded for embedding model {label}",
                hint="the file was changed or damaged; reinstall the package or re-add the model",
            )
        if _identity(os.stat(spec.path, follow_symlinks=False)) == _identity(st):  # unchanged meanwhile
            stamp[key] = {"stat": _identity(st), "sha256": spec.sha256}
            changed = True
    if changed:
        # Bounded: keep the entries of files that still exist.
        stamp = {k: v for k, v in stamp.items() if os.path.exists(k)}
        _write_stamp(root, stamp)
    return hashed
