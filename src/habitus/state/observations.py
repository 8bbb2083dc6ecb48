"""The observation log: append-only, hash-chained JSONL in generations, crash-safe, cheap to append to.

Layout under `<root>/observations/` (DESIGN.md section 3):

    obs-000001.jsonl   one record per line (canonical JSON, at most MAX_RECORD_BYTES with its newline)
    obs-000001.idx     fixed width: the 8-byte big-endian END offset of record seq N at byte (N-1)*8
    obs-000001.fp      fixed width: the 16-byte event fingerprint of record seq N at byte (N-1)*16
    tail.json          the manifest: what is committed (generation, last seq and checksum, file sizes),
                       checksummed, replaced atomically after every append
    archive/           rotated generations: obs-G.jsonl/.idx/.fp plus obs-G.json (their final manifest)
    recovered-tails/   torn bytes found past the manifest after a crash, redacted, kept for inspection
    pending/           (capture) the last prompt per session, for harnesses whose stop event lacks it

A record is `{"v":1,"gen","seq","id","at","origin","fp","prev","payload","checksum"}`; `checksum` is the
SHA-256 of the canonical JSON of the record without it, and `prev` is `"<seq>:<checksum>"` of the record
before it (`GENESIS` for seq 1), so the records of a generation form a hash chain.

Appending is serialised by the `observations` lock and touches only the bounded tail: the manifest, the
last index entry and the last record are checked, never the history, so the cost of an append does not
grow with the log. A record is committed once the manifest names it. After a crash, bytes past the
manifest are examined (bounded): complete records that continue the chain are adopted, anything else is
redacted and moved to `recovered-tails/`, and the files are truncated back. Files shorter than the
manifest, a manifest whose checksum does not match, or a tail record that does not match the manifest
fail closed (exit 3); nothing is repaired by guessing.

Generations rotate into `archive/` only when a reader (analyze) reports them consumed to their last seq
(`rotate`), and archived generations expire `capture.retention_days` after rotation (`expire`).

Readers (`read`, `generations`, `status`, `verify`) take no lock, never create anything and read only the
committed part of each file.

Fault injection (tests only, `habitus.state.faults`): when HABITUS_TEST_FAULT is `POINT:ACTION`, the
process stops at that point: `kill` sends itself SIGKILL, `pause` touches $HABITUS_TEST_FAULT_READY and
sleeps, `raise` raises an I/O error. Points: before_write, mid_line, after_jsonl, after_idx, after_fp,
after_manifest, rotate_after_archive_manifest, rotate_after_move. Unset (always, outside tests) it is inert.
"""

from __future__ import annotations

import calendar
import hashlib
import os
import re
import secrets
import struct
import time
import uuid
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from habitus import codec
from habitus.errors import HabitusError
from habitus.state import files, locks
from habitus.state.clock import utc_now
from habitus.state.faults import fault
from habitus.state.root import StateRoot

if TYPE_CHECKING:
    from habitus.state.inventory import Check

SCHEMA_VERSION = 1
RECORD_VERSION = 1
MAX_RECORD_BYTES = 64 * 1024  # one record line, newline included
IDX_WIDTH = 8
FP_WIDTH = 16
TAIL_KIND = "habitus_observation_tail"
ARCHIVE_KIND = "habitus_observation_archive"
GENESIS = "0:" + "0" * 64
DEDUPE_TAIL = 1024  # fingerprints a single (hook) append compares against
MAX_RECOVERY_BYTES = 16 * 1024 * 1024  # uncommitted bytes past the manifest we are willing to examine
MAX_MANIFEST_BYTES = 64 * 1024
WRITE_CHUNK = 1024 * 1024
_NAME = re.compile(r"^obs-(\d{6,})\.(jsonl|idx|fp|json)$")


# -- paths --------------------------------------------------------------------------------------


def _stem(generation: int) -> str:
    return f"obs-{generation:06d}"


@dataclass(frozen=True)
class _Paths:
    folder: Path

    @property
    def tail(self) -> Path:
        return self.folder / "tail.json"

    @property
    def archive(self) -> Path:
        return self.folder / "archive"

    @property
    def recovered(self) -> Path:
        return self.folder / "recovered-tails"

    def data(self, generation: int, *, archived: bool = False) -> tuple[Path, Path, Path]:
        base = (self.archive if archived else self.folder) / _stem(generation)
        return base.with_suffix(".jsonl"), base.with_suffix(".idx"), base.with_suffix(".fp")

    def archive_manifest(self, generation: int) -> Path:
        return self.archive / f"{_stem(generation)}.json"


def _paths(root: StateRoot) -> _Paths:
    return _Paths(root.observations)


# -- fault injection (tests only) ---------------------------------------------------------------


# -- manifests ----------------------------------------------------------------------------------


def _epoch(stamp: str) -> float | None:
    try:
        return float(calendar.timegm(time.strptime(stamp[:19], "%Y-%m-%dT%H:%M:%S")))
    except (ValueError, TypeError):
        return None


@dataclass
class GenerationManifest:
    """What is committed in one generation."""

    generation: int
    last_seq: int = 0
    last_checksum: str = ""
    jsonl_bytes: int = 0
    created_at: str = ""
    updated_at: str = ""
    rotated_at: str | None = None  # archive manifests only

    @property
    def index_bytes(self) -> int:
        return self.last_seq * IDX_WIDTH

    @property
    def fp_bytes(self) -> int:
        return self.last_seq * FP_WIDTH

    @property
    def last_ref(self) -> str:
        return f"{self.last_seq}:{self.last_checksum}" if self.last_seq else GENESIS

    def encode(self, kind: str) -> bytes:
        body: dict[str, Any] = {
            "kind": kind,
            "schema_version": SCHEMA_VERSION,
            "generation": self.generation,
            "last_seq": self.last_seq,
            "last_checksum": self.last_checksum,
            "jsonl_bytes": self.jsonl_bytes,
            "index_bytes": self.index_bytes,
            "fp_bytes": self.fp_bytes,
            "created_at": self.created_at,
            "updated_at": self.updated_at,
        }
        if kind == ARCHIVE_KIND:
            body["rotated_at"] = self.rotated_at
        body["checksum"] = codec.checksum(body)
        return codec.canonical(body) + b"\n"


def _load_manifest(path: Path, kind: str) -> GenerationManifest | None:
    """The manifest at path, or None when absent. Anything doubtful fails closed (exit 3)."""
    try:
        data = files.read_bytes(path, MAX_MANIFEST_BYTES)
    except FileNotFoundError:
        return None
    except HabitusError:
        raise
    except OSError as exc:
        raise HabitusError("io_error", f"{path}: {exc.strerror}") from None
    try:
        body = codec.loads(data)
    except Exception:
        raise HabitusError("state_corrupt", f"{path}: not valid JSON", hint="run habitus verify") from None
    if not isinstance(body, dict) or body.get("kind") != kind:
        raise HabitusError("state_corrupt", f"{path}: not an observation manifest")
    version = body.get("schema_version")
    if isinstance(version, int) and not isinstance(version, bool) and version > SCHEMA_VERSION:
        raise HabitusError(
            "schema_newer", f"{path}: written by a newer habitus (schema {version}); left untouched"
        )
    if version != SCHEMA_VERSION:
        raise HabitusError("schema_unknown", f"{path}: unknown schema_version")
    stored = body.pop("checksum", None)
    if stored != codec.checksum(body):
        raise HabitusError("checksum_mismatch", f"{path}: manifest checksum does not match its content")
    ints = ("generation", "last_seq", "jsonl_bytes", "index_bytes", "fp_bytes")
    for name in ints:
        value = body.get(name)
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise HabitusError("state_corrupt", f"{path}: field {name} is not a non-negative integer")
    manifest = GenerationManifest(
        generation=body["generation"],
        last_seq=body["last_seq"],
        last_checksum=str(body.get("last_checksum") or ""),
        jsonl_bytes=body["jsonl_bytes"],
        created_at=str(body.get("created_at") or ""),
        updated_at=str(body.get("updated_at") or ""),
        rotated_at=body.get("rotated_at"),
    )
    if (
        manifest.generation < 1
        or body["index_bytes"] != manifest.index_bytes
        or body["fp_bytes"] != manifest.fp_bytes
        or (manifest.last_seq > 0) != bool(manifest.last_checksum)
    ):
        raise HabitusError("state_corrupt", f"{path}: manifest fields are inconsistent")
    return manifest


def _write_manifest(path: Path, manifest: GenerationManifest, kind: str = TAIL_KIND) -> None:
    files.atomic_write(path, manifest.encode(kind))


# -- records ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class NewObservation:
    """One observation to append: its payload, where it came from, and its 16-byte event fingerprint."""

    payload: dict[str, Any]
    origin: dict[str, Any]
    fingerprint: bytes

    def __post_init__(self) -> None:
        if len(self.fingerprint) != FP_WIDTH:
            raise ValueError("fingerprint must be 16 bytes")


def fingerprint(*parts: object) -> bytes:
    """A stable 16-byte fingerprint of an event from its identifying parts (canonical JSON, SHA-256)."""
    return hashlib.sha256(codec.canonical(list(parts))).digest()[:FP_WIDTH]


def _record(generation: int, seq: int, prev: str, entry: NewObservation) -> tuple[dict[str, Any], bytes]:
    record: dict[str, Any] = {
        "v": RECORD_VERSION,
        "gen": generation,
        "seq": seq,
        "id": uuid.uuid4().hex,
        "at": utc_now(),
        "origin": entry.origin,
        "fp": entry.fingerprint.hex(),
        "prev": prev,
        "payload": entry.payload,
    }
    record["checksum"] = hashlib.sha256(codec.canonical(record)).hexdigest()
    line = codec.canonical(record) + b"\n"
    if len(line) > MAX_RECORD_BYTES:
        raise HabitusError("failed", f"an observation record is larger than {MAX_RECORD_BYTES} bytes")
    return record, line


def record_size(payload: dict[str, Any], origin: dict[str, Any]) -> int:
    """Bytes the record line for this payload will take (within a few bytes: seq digits may vary)."""
    probe = {
        "v": RECORD_VERSION,
        "gen": 999999,
        "seq": 999999999,
        "id": "0" * 32,
        "at": "2026-01-01T00:00:00.000Z",
        "origin": origin,
        "fp": "0" * 32,
        "prev": "999999999:" + "0" * 64,
        "payload": payload,
        "checksum": "0" * 64,
    }
    return len(codec.canonical(probe)) + 1


def check_record(line: bytes, *, generation: int, seq: int, prev: str | None) -> dict[str, Any]:
    """Parse and verify one record line; raise checksum_mismatch / state_corrupt naming the seq."""
    where = f"observation {generation}:{seq}"
    if not line.endswith(b"\n"):
        raise HabitusError("state_corrupt", f"{where}: record is not terminated by a newline")
    try:
        record = codec.loads(line)
    except Exception:
        raise HabitusError("state_corrupt", f"{where}: record is not valid JSON") from None
    if not isinstance(record, dict) or "checksum" not in record:
        raise HabitusError("state_corrupt", f"{where}: not an observation record")
    stored = record.pop("checksum")
    if stored != hashlib.sha256(codec.canonical(record)).hexdigest():
        raise HabitusError("checksum_mismatch", f"{where}: record checksum does not match (tampered?)")
    record["checksum"] = stored
    if record.get("gen") != generation or record.get("seq") != seq:
        raise HabitusError("state_corrupt", f"{where}: record carries another generation or seq")
    if prev is not None and record.get("prev") != prev:
        raise HabitusError("checksum_mismatch", f"{where}: hash chain broken (prev does not match)")
    return record


# -- low-level file access ----------------------------------------------------------------------


def _size(path: Path) -> int | None:
    files.refuse_symlink(path)
    try:
        return os.stat(path, follow_symlinks=False).st_size
    except FileNotFoundError:
        return None


def _pread(path: Path, offset: int, length: int) -> bytes:
    fd = files.open_private(path, os.O_RDONLY)
    try:
        return os.pread(fd, length, offset)
    finally:
        os.close(fd)


def _append_bytes(path: Path, data: bytes, *, point: str | None = None) -> None:
    fd = files.open_private(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
    try:
        view = memoryview(data)
        if point == "mid_line" and os.environ.get("HABITUS_TEST_FAULT", "").startswith("mid_line:"):
            half = max(1, len(view) // 2)
            os.write(fd, view[:half])
            os.fsync(fd)
            fault("mid_line")
            view = view[half:]
        while view:
            written = os.write(fd, view[:WRITE_CHUNK])
            view = view[written:]
        os.fdatasync(fd)
    finally:
        os.close(fd)


def _truncate(path: Path, size: int) -> None:
    fd = files.open_private(path, os.O_WRONLY)
    try:
        os.ftruncate(fd, size)
        os.fsync(fd)
    finally:
        os.close(fd)


def _offset(idx: Path, seq: int) -> int:
    """End offset of record seq (0 for seq 0)."""
    if seq <= 0:
        return 0
    raw = _pread(idx, (seq - 1) * IDX_WIDTH, IDX_WIDTH)
    if len(raw) != IDX_WIDTH:
        raise HabitusError("state_corrupt", f"{idx}: index entry {seq} is missing")
    return int(struct.unpack(">Q", raw)[0])


# -- the writer -----------------------------------------------------------------------------------


@dataclass
class AppendResult:
    generation: int
    seqs: list[int] = field(default_factory=list)
    duplicates: int = 0

    @property
    def appended(self) -> int:
        return len(self.seqs)


class _Writer:
    """The log opened for writing; only ever used while the observations lock is held."""

    def __init__(self, root: StateRoot) -> None:
        self.root = root
        self.paths = _paths(root)
        self.manifest = self._open()

    # opening, recovery, tail check

    def _open(self) -> GenerationManifest:
        folder = self.paths.folder
        files.ensure_dir(folder)
        manifest = _load_manifest(self.paths.tail, TAIL_KIND)
        if manifest is None:
            if any(_NAME.match(p.name) for p in _listdir(folder)) or any(
                _NAME.match(p.name) for p in _listdir(self.paths.archive)
            ):
                raise HabitusError(
                    "state_corrupt",
                    f"{self.paths.tail} is missing but observation files exist",
                    hint="run habitus verify; restore tail.json from a backup",
                )
            now = utc_now()
            manifest = GenerationManifest(generation=1, created_at=now, updated_at=now)
            _write_manifest(self.paths.tail, manifest)
        if self.paths.archive_manifest(manifest.generation).exists():
            manifest = self._finish_rotation(manifest)
        self._check_sizes(manifest)
        manifest = self._recover(manifest)
        self._check_tail(manifest)
        return manifest

    def _check_sizes(self, manifest: GenerationManifest) -> None:
        for path, committed in zip(
            self.paths.data(manifest.generation),
            (manifest.jsonl_bytes, manifest.index_bytes, manifest.fp_bytes),
            strict=True,
        ):
            size = _size(path)
            if size is None:
                if committed:
                    raise HabitusError(
                        "state_corrupt", f"{path} is missing but the manifest commits {committed} bytes"
                    )
                files.create_private(path)
            elif size < committed:
                raise HabitusError(
                    "state_corrupt",
                    f"{path} is shorter than its committed size ({size} < {committed})",
                    hint="run habitus verify; the log was truncated outside habitus",
                )

    def _recover(self, manifest: GenerationManifest) -> GenerationManifest:
        """Adopt complete records past the manifest; move a torn remainder aside; truncate back."""
        jsonl, idx, fpf = self.paths.data(manifest.generation)
        size = _size(jsonl) or 0
        extra_len = size - manifest.jsonl_bytes
        if extra_len == 0:
            if (_size(idx) or 0) > manifest.index_bytes:
                _truncate(idx, manifest.index_bytes)
            if (_size(fpf) or 0) > manifest.fp_bytes:
                _truncate(fpf, manifest.fp_bytes)
            return manifest
        if extra_len > MAX_RECOVERY_BYTES:
            raise HabitusError(
                "state_corrupt",
                f"{jsonl} has {extra_len} uncommitted bytes past its manifest (more than a crash leaves)",
                hint="run habitus verify",
            )
        extra = _pread(jsonl, manifest.jsonl_bytes, extra_len)
        adopted: list[tuple[dict[str, Any], int]] = []
        position, seq, prev = 0, manifest.last_seq, manifest.last_ref
        while position < len(extra):
            newline = extra.find(b"\n", position)
            if newline < 0 or newline + 1 - position > MAX_RECORD_BYTES:
                break
            line = extra[position : newline + 1]
            try:
                record = check_record(line, generation=manifest.generation, seq=seq + 1, prev=prev)
            except HabitusError:
                break
            position = newline + 1
            seq += 1
            prev = f"{seq}:{record['checksum']}"
            adopted.append((record, manifest.jsonl_bytes + position))
        torn = extra[position:]
        if torn:
            self._set_aside(manifest.generation, torn)
            _truncate(jsonl, manifest.jsonl_bytes + position)
        _truncate(idx, manifest.index_bytes)
        _truncate(fpf, manifest.fp_bytes)
        if adopted:
            _append_bytes(idx, b"".join(struct.pack(">Q", end) for _, end in adopted))
            _append_bytes(fpf, b"".join(bytes.fromhex(r["fp"]) for r, _ in adopted))
            last = adopted[-1][0]
            manifest = GenerationManifest(
                generation=manifest.generation,
                last_seq=last["seq"],
                last_checksum=last["checksum"],
                jsonl_bytes=adopted[-1][1],
                created_at=manifest.created_at,
                updated_at=utc_now(),
            )
            _write_manifest(self.paths.tail, manifest)
        return manifest

    def _set_aside(self, generation: int, torn: bytes) -> None:
        from habitus.redact import redact

        folder = files.ensure_dir(self.paths.recovered)
        stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
        path = folder / f"{stamp}-{_stem(generation)}-{secrets.token_hex(4)}.partial"
        text, _ = redact(torn.decode("utf-8", errors="replace"))
        fd = files.open_private(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL)
        try:
            os.write(fd, text.encode("utf-8"))
            os.fsync(fd)
        finally:
            os.close(fd)
        files.fsync_dir(folder)

    def _check_tail(self, manifest: GenerationManifest) -> None:
        """The bounded tail check: last index entry, last record and last fingerprint match the manifest."""
        if manifest.last_seq == 0:
            return
        jsonl, idx, fpf = self.paths.data(manifest.generation)
        end = _offset(idx, manifest.last_seq)
        start = _offset(idx, manifest.last_seq - 1)
        if end != manifest.jsonl_bytes or not 0 <= start < end or end - start > MAX_RECORD_BYTES:
            raise HabitusError("state_corrupt", f"{idx}: last index entry does not match the manifest")
        record = check_record(
            _pread(jsonl, start, end - start),
            generation=manifest.generation,
            seq=manifest.last_seq,
            prev=None,
        )
        if record["checksum"] != manifest.last_checksum:
            raise HabitusError("checksum_mismatch", f"{jsonl}: last record does not match the manifest")
        if _pread(fpf, manifest.fp_bytes - FP_WIDTH, FP_WIDTH).hex() != record.get("fp"):
            raise HabitusError("state_corrupt", f"{fpf}: last fingerprint does not match the last record")

    # dedupe

    def known_fingerprints(self, *, full: bool) -> set[bytes]:
        manifest = self.manifest
        _, _, fpf = self.paths.data(manifest.generation)
        if full:
            known = _fingerprints(fpf, 0, manifest.fp_bytes)
            for info in generations(self.root):
                if info.archived:
                    known |= _fingerprints(
                        self.paths.data(info.generation, archived=True)[2], 0, info.last_seq * FP_WIDTH
                    )
            return known
        start = max(0, manifest.fp_bytes - DEDUPE_TAIL * FP_WIDTH)
        return _fingerprints(fpf, start, manifest.fp_bytes - start)

    # appending

    def append(self, entries: Iterable[NewObservation], *, full_dedupe: bool) -> AppendResult:
        manifest = self.manifest
        result = AppendResult(generation=manifest.generation)
        known = self.known_fingerprints(full=full_dedupe)
        lines: list[bytes] = []
        ends: list[int] = []
        fps: list[bytes] = []
        seq, prev, end = manifest.last_seq, manifest.last_ref, manifest.jsonl_bytes
        last_checksum = manifest.last_checksum
        for entry in entries:
            if entry.fingerprint in known:
                result.duplicates += 1
                continue
            known.add(entry.fingerprint)
            seq += 1
            record, line = _record(manifest.generation, seq, prev, entry)
            prev = f"{seq}:{record['checksum']}"
            last_checksum = record["checksum"]
            end += len(line)
            lines.append(line)
            ends.append(end)
            fps.append(entry.fingerprint)
            result.seqs.append(seq)
        if not lines:
            return result
        jsonl, idx, fpf = self.paths.data(manifest.generation)
        fault("before_write")
        _append_bytes(jsonl, b"".join(lines), point="mid_line")
        fault("after_jsonl")
        _append_bytes(idx, b"".join(struct.pack(">Q", e) for e in ends))
        fault("after_idx")
        _append_bytes(fpf, b"".join(fps))
        fault("after_fp")
        self.manifest = GenerationManifest(
            generation=manifest.generation,
            last_seq=seq,
            last_checksum=last_checksum,
            jsonl_bytes=end,
            created_at=manifest.created_at,
            updated_at=utc_now(),
        )
        _write_manifest(self.paths.tail, self.manifest)
        fault("after_manifest")
        return result

    # rotation and expiry

    def rotate(self) -> int:
        """Move the current generation into archive/ and start the next one. Returns the new generation."""
        manifest = self.manifest
        files.ensure_dir(self.paths.archive)
        archived = GenerationManifest(**{**manifest.__dict__, "rotated_at": utc_now()})
        _write_manifest(self.paths.archive_manifest(manifest.generation), archived, ARCHIVE_KIND)
        fault("rotate_after_archive_manifest")
        self.manifest = self._finish_rotation(manifest)
        return self.manifest.generation

    def _finish_rotation(self, manifest: GenerationManifest) -> GenerationManifest:
        """Roll a rotation forward: move the data files into archive/, then commit the next generation."""
        archived = _load_manifest(self.paths.archive_manifest(manifest.generation), ARCHIVE_KIND)
        if archived is None or archived.last_seq != manifest.last_seq:
            raise HabitusError("state_corrupt", "an interrupted rotation does not match the manifest")
        committed = (archived.jsonl_bytes, archived.index_bytes, archived.fp_bytes)
        sources = self.paths.data(manifest.generation)
        targets = self.paths.data(manifest.generation, archived=True)
        for source, target, size in zip(sources, targets, committed, strict=True):
            current = _size(source)
            if current is not None:
                if current > size:
                    _truncate(source, size)  # never archive uncommitted bytes
                os.replace(source, target)
            elif _size(target) is None:
                files.create_private(target)
        files.fsync_dir(self.paths.archive)
        files.fsync_dir(self.paths.folder)
        fault("rotate_after_move")
        now = utc_now()
        fresh = GenerationManifest(generation=manifest.generation + 1, created_at=now, updated_at=now)
        _write_manifest(self.paths.tail, fresh)
        for path in self.paths.data(fresh.generation):
            files.create_private(path)
        return fresh

    def expire(self, retention_days: int, now: float | None = None) -> list[int]:
        """Delete archived generations rotated more than retention_days ago. Returns their numbers."""
        cutoff = (time.time() if now is None else now) - retention_days * 86400
        removed = []
        for info in generations(self.root):
            if not info.archived or info.rotated_at is None:
                continue
            rotated = _epoch(info.rotated_at)
            if rotated is None or rotated > cutoff:
                continue
            for path in self.paths.data(info.generation, archived=True):
                try:
                    path.unlink()
                except FileNotFoundError:
                    pass
            self.paths.archive_manifest(info.generation).unlink()
            removed.append(info.generation)
        if removed:
            files.fsync_dir(self.paths.archive)
        return removed


def _listdir(folder: Path) -> list[Path]:
    try:
        return list(folder.iterdir())
    except (FileNotFoundError, NotADirectoryError):
        return []


def _fingerprints(path: Path, start: int, length: int) -> set[bytes]:
    if length <= 0:
        return set()
    raw = _pread(path, start, length)
    return {raw[i : i + FP_WIDTH] for i in range(0, len(raw) - FP_WIDTH + 1, FP_WIDTH)}


@contextmanager
def writer(root: StateRoot, *, wait: float) -> Iterator[_Writer]:
    """Hold the observations lock and yield the log opened (and, after a crash, recovered) for writing."""
    with locks.hold(root, "observations", wait=wait):
        yield _Writer(root)


def append(
    root: StateRoot,
    entries: Iterable[NewObservation],
    *,
    wait: float,
    full_dedupe: bool = False,
    retention_days: int | None = None,
) -> AppendResult:
    """Append entries whose fingerprint is not yet known; return the seqs given and duplicates skipped.

    Dedupe compares against the last DEDUPE_TAIL records of the current generation (constant cost,
    enough for hooks that fire twice), or, with full_dedupe, against every record of the current and the
    archived generations (what a transcript import needs). With retention_days, archived generations past
    it are expired in the same lock hold (a directory listing; cheap).
    """
    with writer(root, wait=wait) as log:
        result = log.append(entries, full_dedupe=full_dedupe)
        if retention_days is not None:
            log.expire(retention_days)
        return result


def rotate(
    root: StateRoot, generation: int, through_seq: int, *, wait: float, retention_days: int | None = None
) -> dict[str, Any]:
    """Report that `generation` has been consumed up to `through_seq` (analyze calls this).

    When that is the current generation and `through_seq` reaches its last committed seq, the generation
    moves into archive/ and the next one starts. Anything else changes nothing. Returns
    `{"rotated": bool, "generation": current generation afterwards, "expired": [...]}`.
    """
    with writer(root, wait=wait) as log:
        rotated = False
        current = log.manifest
        if generation == current.generation and current.last_seq > 0 and through_seq >= current.last_seq:
            log.rotate()
            rotated = True
        expired = log.expire(retention_days) if retention_days is not None else []
        return {"rotated": rotated, "generation": log.manifest.generation, "expired": expired}


def start_new_generation(root: StateRoot, *, wait: float) -> dict[str, Any]:
    """Archive the current generation even if it is not fully analysed, and start the next one.

    Restore calls this so that a restored ledger's watermarks never point into records written after
    the backup. The archived generation stays readable until it expires. An absent or empty log is left
    as it is, so calling this twice is harmless.
    """
    if not root.observations.is_dir():
        return {"started": False, "generation": None}
    with writer(root, wait=wait) as log:
        if log.manifest.last_seq == 0:
            return {"started": False, "generation": log.manifest.generation}
        archived = log.manifest.generation
        return {"started": True, "generation": log.rotate(), "archived": archived}


def expire(root: StateRoot, retention_days: int, *, wait: float, now: float | None = None) -> list[int]:
    """Delete archived generations rotated more than retention_days ago."""
    if not root.observations.is_dir():
        return []
    with writer(root, wait=wait) as log:
        return log.expire(retention_days, now=now)


# -- readers ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class GenerationInfo:
    generation: int
    archived: bool
    last_seq: int
    jsonl_bytes: int
    rotated_at: str | None


def generations(root: StateRoot) -> list[GenerationInfo]:
    """Every readable generation, oldest first (archived ones, then the current one). Creates nothing."""
    paths = _paths(root)
    found: list[GenerationInfo] = []
    for path in sorted(_listdir(paths.archive)):
        match = _NAME.match(path.name)
        if not match or match.group(2) != "json":
            continue
        manifest = _load_manifest(path, ARCHIVE_KIND)
        if manifest is None:
            continue
        found.append(
            GenerationInfo(
                manifest.generation, True, manifest.last_seq, manifest.jsonl_bytes, manifest.rotated_at
            )
        )
    current = _load_manifest(paths.tail, TAIL_KIND)
    if current is not None and not any(g.generation == current.generation for g in found):
        found.append(GenerationInfo(current.generation, False, current.last_seq, current.jsonl_bytes, None))
    return sorted(found, key=lambda g: g.generation)


@dataclass
class Batch:
    """Records of one generation after a given seq, bounded by count and bytes."""

    generation: int
    archived: bool
    after_seq: int
    committed_seq: int  # last committed seq of the generation when read
    records: list[dict[str, Any]] = field(default_factory=list)
    bytes: int = 0

    @property
    def last_seq(self) -> int:
        """Seq of the last record returned (after_seq when none): pass it back as the next after_seq."""
        return self.records[-1]["seq"] if self.records else self.after_seq

    @property
    def exhausted(self) -> bool:
        """True when nothing committed remains after this batch."""
        return self.last_seq >= self.committed_seq


def _locate(root: StateRoot, generation: int | None) -> tuple[GenerationManifest, bool] | None:
    paths = _paths(root)
    current = _load_manifest(paths.tail, TAIL_KIND)
    if current is not None and (generation is None or generation == current.generation):
        return current, False
    if generation is None:
        return None
    archived = _load_manifest(paths.archive_manifest(generation), ARCHIVE_KIND)
    return (archived, True) if archived is not None else None


def read(
    root: StateRoot,
    generation: int | None = None,
    *,
    after_seq: int = 0,
    max_records: int = 200,
    max_bytes: int = 80_000,
) -> Batch:
    """Committed records of `generation` (default: the current one) with seq > after_seq.

    At most max_records records and max_bytes bytes of record lines, but always at least one record when
    any remains (a record is at most MAX_RECORD_BYTES). Every record's checksum and its link to the record
    before it are verified (checksum_mismatch, exit 3, otherwise). An unknown generation is not_found.
    Takes no lock and creates nothing; a generation rotated while being read is found in archive/.
    """
    if after_seq < 0 or max_records < 1 or max_bytes < 1:
        raise ValueError("after_seq >= 0, max_records >= 1 and max_bytes >= 1")
    for _attempt in range(2):
        located = _locate(root, generation)
        if located is None:
            if generation is None:
                return Batch(generation=1, archived=False, after_seq=after_seq, committed_seq=0)
            raise HabitusError("not_found", f"observation generation {generation} does not exist")
        manifest, archived = located
        try:
            return _read_batch(root, manifest, archived, after_seq, max_records, max_bytes)
        except FileNotFoundError:
            continue  # rotated between reading the manifest and opening the files
    raise HabitusError("io_error", "the observation log changed while it was being read; retry")


def _read_batch(
    root: StateRoot,
    manifest: GenerationManifest,
    archived: bool,
    after_seq: int,
    max_records: int,
    max_bytes: int,
) -> Batch:
    batch = Batch(manifest.generation, archived, after_seq, manifest.last_seq)
    if after_seq >= manifest.last_seq:
        return batch
    jsonl, idx, _ = _paths(root).data(manifest.generation, archived=archived)
    last = min(manifest.last_seq, after_seq + max_records)
    # The record before the batch is read too, so that the batch's first link is verified.
    prev_start, start = _offset(idx, after_seq - 1), _offset(idx, after_seq)
    raw = _pread(idx, after_seq * IDX_WIDTH, (last - after_seq) * IDX_WIDTH)
    if len(raw) != (last - after_seq) * IDX_WIDTH:
        raise HabitusError("state_corrupt", f"{idx}: shorter than its committed size")
    ends = list(struct.unpack(f">{len(raw) // IDX_WIDTH}Q", raw))
    count = 1
    while count < len(ends) and ends[count] - start <= max_bytes:
        count += 1
    data = _pread(jsonl, prev_start, ends[count - 1] - prev_start)
    if len(data) != ends[count - 1] - prev_start:
        raise HabitusError("state_corrupt", f"{jsonl}: shorter than its committed size")
    prev = GENESIS
    if after_seq > 0:
        before = check_record(
            data[: start - prev_start], generation=manifest.generation, seq=after_seq, prev=None
        )
        prev = f"{after_seq}:{before['checksum']}"
    position = start - prev_start
    for offset, seq in zip(ends[:count], range(after_seq + 1, after_seq + count + 1), strict=True):
        line = data[position : offset - prev_start]
        record = check_record(line, generation=manifest.generation, seq=seq, prev=prev)
        prev = f"{seq}:{record['checksum']}"
        position = offset - prev_start
        batch.records.append(record)
        batch.bytes += len(line)
    return batch


def status(root: StateRoot) -> dict[str, Any]:
    """Counts for `habitus status`: reads manifests only; never creates or repairs anything."""
    paths = _paths(root)
    gens = generations(root) if paths.folder.is_dir() else []
    current = next((g for g in gens if not g.archived), None)
    archived = [g for g in gens if g.archived]
    return {
        "path": str(paths.folder),
        "exists": current is not None,
        "generation": current.generation if current else None,
        "records": current.last_seq if current else 0,
        "last_seq": current.last_seq if current else 0,
        "bytes": current.jsonl_bytes if current else 0,
        "archived_generations": len(archived),
        "archived_records": sum(g.last_seq for g in archived),
    }


# -- verify -----------------------------------------------------------------------------------


def verify(root: StateRoot) -> dict[str, Any]:
    """Check every generation in full: manifests, sizes, every record, the chain, index and fingerprints.

    Reads line by line (bounded memory), changes nothing, takes no lock. Returns
    `{"ok": bool, "generations": [...], "issues": [{"code", "generation", "seq", "message"}]}` with stable
    issue codes: manifest_invalid, missing_file, size_mismatch, uncommitted_tail, bad_record,
    chain_broken, index_mismatch, fingerprint_mismatch, orphan_file.
    """
    paths = _paths(root)
    issues: list[dict[str, Any]] = []
    report: list[dict[str, Any]] = []

    def issue(code: str, generation: int | None, seq: int | None, message: str) -> None:
        issues.append({"code": code, "generation": generation, "seq": seq, "message": message})

    manifests: list[tuple[GenerationManifest, bool]] = []
    try:
        current = _load_manifest(paths.tail, TAIL_KIND)
        if current is not None:
            manifests.append((current, False))
    except HabitusError as exc:
        issue("manifest_invalid", None, None, exc.message)
    for path in sorted(_listdir(paths.archive)):
        match = _NAME.match(path.name)
        if not match:
            continue
        generation = int(match.group(1))
        if match.group(2) != "json":
            if not paths.archive_manifest(generation).exists():
                issue("orphan_file", generation, None, f"{path} has no archive manifest")
            continue
        try:
            manifest = _load_manifest(path, ARCHIVE_KIND)
        except HabitusError as exc:
            issue("manifest_invalid", generation, None, exc.message)
            continue
        if manifest is not None and not any(m.generation == manifest.generation for m, _ in manifests):
            manifests.append((manifest, True))
    live = {m.generation for m, archived in manifests if not archived}
    for path in sorted(_listdir(paths.folder)):
        match = _NAME.match(path.name)
        if match and int(match.group(1)) not in live:
            issue("orphan_file", int(match.group(1)), None, f"{path} belongs to no current generation")
    for manifest, archived in sorted(manifests, key=lambda m: m[0].generation):
        report.append({"generation": manifest.generation, "archived": archived, "records": manifest.last_seq})
        _verify_generation(paths, manifest, archived, issue)
    hard = [i for i in issues if i["code"] != "uncommitted_tail"]
    return {"ok": not hard, "generations": report, "issues": issues}


def verifier(check: Check) -> Iterator[dict[str, Any]]:
    """The log's chain, sizes, index and fingerprints in full, as `habitus verify`'s issues. A torn tail
    past the last commit (uncommitted_tail) is left out: the next append recovers it by design."""
    if not check.path.is_dir():
        return
    for issue in verify(check.root)["issues"]:
        if issue["code"] == "uncommitted_tail":
            continue
        yield {
            "code": issue["code"],
            "message": issue["message"],
            "generation": issue["generation"],
            "seq": issue["seq"],
        }


def _verify_generation(paths: _Paths, manifest: GenerationManifest, archived: bool, issue: Any) -> None:
    gen = manifest.generation
    jsonl, idx, fpf = paths.data(gen, archived=archived)
    for path, committed in zip(
        (jsonl, idx, fpf), (manifest.jsonl_bytes, manifest.index_bytes, manifest.fp_bytes), strict=True
    ):
        try:
            size = _size(path)
        except HabitusError as exc:
            issue("bad_record", gen, None, exc.message)
            return
        if size is None:
            if committed:
                issue("missing_file", gen, None, f"{path} is missing")
                return
            size = 0
        if size < committed:
            issue("size_mismatch", gen, None, f"{path} is shorter than the manifest says")
            return
        if size > committed:
            issue("uncommitted_tail", gen, None, f"{path} has {size - committed} bytes past the manifest")
    if manifest.last_seq == 0:
        return
    prev, offset, seq = GENESIS, 0, 0
    with open(jsonl, "rb") as data, open(idx, "rb") as index, open(fpf, "rb") as prints:
        while offset < manifest.jsonl_bytes:
            line = data.readline(MAX_RECORD_BYTES + 1)
            seq += 1
            if not line:
                break
            offset += len(line)
            try:
                record = check_record(line, generation=gen, seq=seq, prev=None)
            except HabitusError as exc:
                issue("bad_record", gen, seq, exc.message)
                return
            if record.get("prev") != prev:
                issue("chain_broken", gen, seq, f"observation {gen}:{seq}: prev does not match")
            prev = f"{seq}:{record['checksum']}"
            entry = index.read(IDX_WIDTH)
            if len(entry) != IDX_WIDTH or struct.unpack(">Q", entry)[0] != offset:
                issue("index_mismatch", gen, seq, f"{idx}: entry {seq} does not match the record")
                return
            if prints.read(FP_WIDTH).hex() != record.get("fp"):
                issue("fingerprint_mismatch", gen, seq, f"{fpf}: entry {seq} does not match the record")
    if seq != manifest.last_seq or offset != manifest.jsonl_bytes:
        issue("size_mismatch", gen, None, f"{jsonl}: record count does not match the manifest")
    elif prev != manifest.last_ref:
        issue("chain_broken", gen, seq, "the last record does not match the manifest")


# -- activity -----------------------------------------------------------------------------------

_AT_PREFIX = b'{"at":"'
_AT_BYTES = len(_AT_PREFIX) + len("2026-01-01T00:00:00.000Z")


def records_per_day(root: StateRoot, days: list[str]) -> dict[str, int]:
    """Committed records per UTC day (`YYYY-MM-DD`, ascending, consecutive) over every readable
    generation, for `habitus status` and `habitus report`. Reads manifests and, per generation, a
    binary search over the index for each day boundary: only each probed record's leading `at`
    stamp (canonical JSON sorts it first), never a payload, so the cost is O(days x log records).
    Records are appended in time order; a wall clock stepped back only blurs a boundary.
    Takes no lock and creates nothing; corrupt manifests or index entries fail closed."""
    counts = dict.fromkeys(days, 0)
    if not days or not _paths(root).folder.is_dir():
        return counts
    bounds = [*days, _next_day(days[-1])]
    for info in generations(root):
        if info.last_seq == 0:
            continue
        jsonl, idx, _ = _paths(root).data(info.generation, archived=info.archived)
        try:
            firsts = _first_seqs(jsonl, idx, info, bounds)
        except FileNotFoundError:
            continue  # rotated or expired while being read: its records are counted where they went
        for day, start, end in zip(days, firsts, firsts[1:], strict=False):
            counts[day] += end - start
    return counts


def _next_day(day: str) -> str:
    return time.strftime("%Y-%m-%d", time.gmtime(calendar.timegm(time.strptime(day, "%Y-%m-%d")) + 86400))


def _first_seqs(jsonl: Path, idx: Path, info: GenerationInfo, bounds: list[str]) -> list[int]:
    """For each boundary day, the first seq whose record is stamped on or after it (last_seq + 1 if none)."""
    idx_fd = files.open_private(idx, os.O_RDONLY)
    try:
        log_fd = files.open_private(jsonl, os.O_RDONLY)
        try:

            def stamp(seq: int) -> str:
                start = 0
                if seq > 1:
                    raw = os.pread(idx_fd, IDX_WIDTH, (seq - 2) * IDX_WIDTH)
                    if len(raw) != IDX_WIDTH:
                        raise HabitusError("state_corrupt", f"{idx}: index entry {seq - 1} is missing")
                    start = int(struct.unpack(">Q", raw)[0])
                head = os.pread(log_fd, _AT_BYTES, start)
                if not head.startswith(_AT_PREFIX) or len(head) != _AT_BYTES:
                    raise HabitusError(
                        "state_corrupt",
                        f"{jsonl}: record {seq} does not start with its timestamp",
                        hint="run habitus verify",
                    )
                return head[len(_AT_PREFIX) : len(_AT_PREFIX) + 10].decode("ascii", "replace")

            found = []
            for bound in bounds:
                low, high = 1, info.last_seq + 1
                while low < high:
                    middle = (low + high) // 2
                    if stamp(middle) < bound:
                        low = middle + 1
                    else:
                        high = middle
                found.append(low)
            return found
        finally:
            os.close(log_fd)
    finally:
        os.close(idx_fd)
