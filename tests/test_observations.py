"""The observation log: chain, index, manifest, bounded reads, tail checks, recovery, rotation, expiry."""

from __future__ import annotations

import itertools
import os
import struct
import time
from pathlib import Path

import orjson
import pytest

from habitus.errors import HabitusError
from habitus.state import observations as obs
from habitus.state.root import StateRoot
from obs_helpers import entry, lines


@pytest.fixture
def root(state_root: Path) -> StateRoot:
    return StateRoot(state_root)


def folder(root: StateRoot) -> Path:
    return root.observations


def test_append_writes_a_hash_chain_an_index_and_fingerprints(root: StateRoot) -> None:
    result = obs.append(root, [entry(i) for i in range(5)], wait=5)
    assert result.seqs == [1, 2, 3, 4, 5] and result.duplicates == 0 and result.generation == 1
    records = lines(root.path)
    assert [r["seq"] for r in records] == [1, 2, 3, 4, 5]
    assert records[0]["prev"] == obs.GENESIS
    for before, after in itertools.pairwise(records):
        assert after["prev"] == f"{before['seq']}:{before['checksum']}"
    data = (folder(root) / "obs-000001.jsonl").read_bytes()
    index = (folder(root) / "obs-000001.idx").read_bytes()
    ends = struct.unpack(">5Q", index)
    assert ends[-1] == len(data)
    assert data[ends[1] : ends[2]].endswith(b"\n") and orjson.loads(data[ends[1] : ends[2]])["seq"] == 3
    prints = (folder(root) / "obs-000001.fp").read_bytes()
    assert [prints[i : i + 16].hex() for i in range(0, 80, 16)] == [r["fp"] for r in records]
    assert obs.verify(root)["ok"]


def test_files_are_private(root: StateRoot) -> None:
    obs.append(root, [entry(1)], wait=5)
    for path in folder(root).iterdir():
        mode = path.stat().st_mode & 0o777
        assert mode == (0o700 if path.is_dir() else 0o600), path
    assert folder(root).stat().st_mode & 0o777 == 0o700


def test_manifest_commits_sizes_and_checksum(root: StateRoot) -> None:
    obs.append(root, [entry(i) for i in range(3)], wait=5)
    manifest = orjson.loads((folder(root) / "tail.json").read_bytes())
    assert manifest["generation"] == 1 and manifest["last_seq"] == 3
    assert manifest["jsonl_bytes"] == (folder(root) / "obs-000001.jsonl").stat().st_size
    assert manifest["index_bytes"] == 24 and manifest["fp_bytes"] == 48
    assert manifest["last_checksum"] == lines(root.path)[-1]["checksum"]


def test_duplicates_are_skipped_within_a_batch_and_across_calls(root: StateRoot) -> None:
    first = obs.append(root, [entry(1), entry(2), entry(1)], wait=5)
    assert first.seqs == [1, 2] and first.duplicates == 1
    again = obs.append(root, [entry(2), entry(3)], wait=5)
    assert again.seqs == [3] and again.duplicates == 1


def test_tail_dedupe_is_bounded_but_full_dedupe_sees_everything(root: StateRoot) -> None:
    obs.append(root, [entry(i) for i in range(obs.DEDUPE_TAIL + 10)], wait=5)
    assert obs.append(root, [entry(0)], wait=5).appended == 1  # beyond the tail window
    assert obs.append(root, [entry(1)], wait=5, full_dedupe=True).duplicates == 1


def test_read_is_bounded_by_records_and_bytes_and_pages(root: StateRoot) -> None:
    obs.append(root, [entry(i, text="x" * 500) for i in range(30)], wait=5)
    batch = obs.read(root, after_seq=0, max_records=7)
    assert [r["seq"] for r in batch.records] == list(range(1, 8))
    assert batch.last_seq == 7 and not batch.exhausted
    size = len(orjson.dumps(batch.records[0])) + 1
    small = obs.read(root, after_seq=7, max_records=100, max_bytes=size * 3 + 10)
    assert [r["seq"] for r in small.records] == [8, 9, 10]
    assert small.bytes <= size * 3 + 10
    tiny = obs.read(root, after_seq=10, max_bytes=1)
    assert [r["seq"] for r in tiny.records] == [11]  # always at least one record
    seqs, after = [], 0
    while True:
        page = obs.read(root, after_seq=after, max_records=4)
        seqs += [r["seq"] for r in page.records]
        after = page.last_seq
        if page.exhausted:
            break
    assert seqs == list(range(1, 31))
    assert obs.read(root, after_seq=30).records == []


def test_read_on_a_fresh_root_creates_nothing(root: StateRoot) -> None:
    batch = obs.read(root)
    assert batch.records == [] and batch.exhausted
    assert obs.generations(root) == []
    assert obs.status(root)["exists"] is False
    assert not root.path.exists()
    with pytest.raises(HabitusError) as info:
        obs.read(root, 5)
    assert info.value.code == "not_found"


def test_read_detects_a_tampered_record(root: StateRoot) -> None:
    obs.append(root, [entry(i) for i in range(4)], wait=5)
    path = folder(root) / "obs-000001.jsonl"
    data = path.read_bytes()
    path.write_bytes(data.replace(b"answer 1", b"answer X"))  # same length, different content
    with pytest.raises(HabitusError) as info:
        obs.read(root)
    assert info.value.code == "checksum_mismatch"
    report = obs.verify(root)
    assert (
        not report["ok"] and report["issues"][0]["code"] == "bad_record" and report["issues"][0]["seq"] == 2
    )


def test_append_checks_only_the_tail(root: StateRoot) -> None:
    """Damage deep in history is verify's job; append stays O(1) and succeeds."""
    obs.append(root, [entry(i) for i in range(10)], wait=5)
    path = folder(root) / "obs-000001.jsonl"
    path.write_bytes(path.read_bytes().replace(b"answer 1", b"answer Y", 1))
    assert obs.append(root, [entry(99)], wait=5).seqs == [11]
    assert not obs.verify(root)["ok"]


def test_a_tampered_last_record_refuses_appends(root: StateRoot) -> None:
    obs.append(root, [entry(i) for i in range(3)], wait=5)
    path = folder(root) / "obs-000001.jsonl"
    path.write_bytes(path.read_bytes()[:-12] + b'answer Z"}}\n'[-12:])
    before = path.read_bytes()
    with pytest.raises(HabitusError) as info:
        obs.append(root, [entry(7)], wait=5)
    assert info.value.exit == 3
    assert path.read_bytes() == before


def test_a_tampered_manifest_fails_closed(root: StateRoot) -> None:
    obs.append(root, [entry(1)], wait=5)
    tail = folder(root) / "tail.json"
    body = orjson.loads(tail.read_bytes())
    body["last_seq"] = 5
    tail.write_bytes(orjson.dumps(body))
    with pytest.raises(HabitusError) as info:
        obs.append(root, [entry(2)], wait=5)
    assert info.value.code == "checksum_mismatch"
    with pytest.raises(HabitusError):
        obs.status(root)


def test_a_manifest_from_a_newer_habitus_is_left_alone(root: StateRoot) -> None:
    obs.append(root, [entry(1)], wait=5)
    tail = folder(root) / "tail.json"
    body = orjson.loads(tail.read_bytes())
    body["schema_version"] = 2
    body.pop("checksum")
    from habitus import codec

    body["checksum"] = codec.checksum(body)
    tail.write_bytes(orjson.dumps(body))
    before = {p.name: p.read_bytes() for p in folder(root).iterdir() if p.is_file()}
    with pytest.raises(HabitusError) as info:
        obs.append(root, [entry(2)], wait=5)
    assert info.value.code == "schema_newer" and info.value.exit == 3
    assert {p.name: p.read_bytes() for p in folder(root).iterdir() if p.is_file()} == before


def test_files_shorter_than_the_manifest_fail_closed(root: StateRoot) -> None:
    obs.append(root, [entry(i) for i in range(3)], wait=5)
    path = folder(root) / "obs-000001.jsonl"
    path.write_bytes(path.read_bytes()[:-40])
    with pytest.raises(HabitusError) as info:
        obs.append(root, [entry(9)], wait=5)
    assert info.value.code == "state_corrupt"
    assert obs.verify(root)["issues"][0]["code"] == "size_mismatch"


def test_a_missing_manifest_with_data_fails_closed(root: StateRoot) -> None:
    obs.append(root, [entry(1)], wait=5)
    (folder(root) / "tail.json").unlink()
    with pytest.raises(HabitusError) as info:
        obs.append(root, [entry(2)], wait=5)
    assert info.value.code == "state_corrupt"


def test_a_symlinked_log_is_refused(root: StateRoot, tmp_path: Path) -> None:
    obs.append(root, [entry(1)], wait=5)
    path = folder(root) / "obs-000001.jsonl"
    target = tmp_path / "elsewhere.jsonl"
    target.write_bytes(path.read_bytes())
    path.unlink()
    path.symlink_to(target)
    with pytest.raises(HabitusError) as info:
        obs.append(root, [entry(2)], wait=5)
    assert info.value.code == "symlink_refused"


def test_a_torn_last_line_is_moved_aside_and_truncated(root: StateRoot) -> None:
    obs.append(root, [entry(i) for i in range(3)], wait=5)
    path = folder(root) / "obs-000001.jsonl"
    committed = path.read_bytes()
    with open(path, "ab") as handle:
        handle.write(b'{"v":1,"gen":1,"seq":4,"payload":{"user":"half a line with a key AKIAIOSFODNN7EXAMPLE')
    with open(folder(root) / "obs-000001.idx", "ab") as handle:
        handle.write(struct.pack(">Q", len(committed) + 50))
    result = obs.append(root, [entry(10)], wait=5)
    assert result.seqs == [4]
    assert path.read_bytes().startswith(committed)
    assert [r["seq"] for r in lines(root.path)] == [1, 2, 3, 4]
    aside = list((folder(root) / "recovered-tails").iterdir())
    assert len(aside) == 1
    kept = aside[0].read_text()
    assert "half a line" in kept and "AKIAIOSFODNN7EXAMPLE" not in kept  # set aside, redacted
    assert aside[0].stat().st_mode & 0o777 == 0o600
    assert obs.verify(root)["ok"]


def test_a_complete_uncommitted_record_is_adopted(root: StateRoot) -> None:
    """A crash after the record was written but before the manifest: the record is kept."""
    obs.append(root, [entry(1), entry(2)], wait=5)
    tail = folder(root) / "tail.json"
    manifest_before = tail.read_bytes()
    idx_before = (folder(root) / "obs-000001.idx").read_bytes()
    fp_before = (folder(root) / "obs-000001.fp").read_bytes()
    obs.append(root, [entry(3)], wait=5)
    tail.write_bytes(manifest_before)  # the manifest of before the third append
    (folder(root) / "obs-000001.idx").write_bytes(idx_before)
    (folder(root) / "obs-000001.fp").write_bytes(fp_before)
    assert obs.read(root).committed_seq == 2  # readers see only what is committed
    result = obs.append(root, [entry(3), entry(4)], wait=5)
    assert result.seqs == [4] and result.duplicates == 1  # 3 was adopted, not written twice
    assert [r["seq"] for r in lines(root.path)] == [1, 2, 3, 4]
    assert obs.verify(root)["ok"]


def test_rotation_archives_a_consumed_generation_and_starts_the_next(root: StateRoot) -> None:
    obs.append(root, [entry(i) for i in range(4)], wait=5)
    assert obs.rotate(root, 1, 3, wait=5) == {"rotated": False, "generation": 1, "expired": []}
    assert obs.rotate(root, 2, 99, wait=5)["rotated"] is False
    assert obs.rotate(root, 1, 4, wait=5) == {"rotated": True, "generation": 2, "expired": []}
    assert lines(root.path, 1, archived=True)[-1]["seq"] == 4
    assert [g.generation for g in obs.generations(root)] == [1, 2]
    assert obs.read(root, 1, after_seq=2).records[0]["seq"] == 3  # archived generations stay readable
    after = obs.append(root, [entry(10)], wait=5)
    assert after.generation == 2 and after.seqs == [1]
    assert lines(root.path, 2)[0]["prev"] == obs.GENESIS
    assert obs.append(root, [entry(1)], wait=5, full_dedupe=True).duplicates == 1
    status = obs.status(root)
    assert status["generation"] == 2 and status["records"] == 1 and status["archived_generations"] == 1
    assert obs.verify(root)["ok"]


def test_an_empty_generation_never_rotates(root: StateRoot) -> None:
    obs.append(root, [entry(1)], wait=5)
    obs.rotate(root, 1, 1, wait=5)
    assert obs.rotate(root, 2, 0, wait=5)["rotated"] is False


def test_archives_expire_after_the_retention_period(root: StateRoot) -> None:
    obs.append(root, [entry(1)], wait=5)
    obs.rotate(root, 1, 1, wait=5)
    archive = folder(root) / "archive"
    assert obs.expire(root, 7, wait=5) == []
    assert obs.expire(root, 7, wait=5, now=time.time() + 6 * 86400) == []
    assert obs.expire(root, 7, wait=5, now=time.time() + 8 * 86400) == [1]
    assert list(archive.iterdir()) == []
    assert obs.verify(root)["ok"]


@pytest.mark.parametrize("point", ["rotate_after_archive_manifest", "rotate_after_move"])
def test_an_interrupted_rotation_is_rolled_forward(
    root: StateRoot, point: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    obs.append(root, [entry(i) for i in range(3)], wait=5)
    monkeypatch.setenv("HABITUS_TEST_FAULT", f"{point}:raise")
    with pytest.raises(OSError):
        obs.rotate(root, 1, 3, wait=5)
    monkeypatch.delenv("HABITUS_TEST_FAULT")
    result = obs.append(root, [entry(50)], wait=5)
    assert result.generation == 2 and result.seqs == [1]
    assert [r["seq"] for r in lines(root.path, 1, archived=True)] == [1, 2, 3]
    assert obs.verify(root)["ok"]


def test_verify_reports_orphans_and_uncommitted_bytes(root: StateRoot) -> None:
    obs.append(root, [entry(1)], wait=5)
    (folder(root) / "obs-000009.jsonl").write_bytes(b"")
    with open(folder(root) / "obs-000001.jsonl", "ab") as handle:
        handle.write(b"{partial")
    report = obs.verify(root)
    codes = {i["code"] for i in report["issues"]}
    assert codes == {"orphan_file", "uncommitted_tail"}
    assert not report["ok"]


def test_oversized_records_are_refused_by_the_log(root: StateRoot) -> None:
    big = obs.NewObservation({"user": "x" * obs.MAX_RECORD_BYTES}, {}, obs.fingerprint("big"))
    with pytest.raises(HabitusError):
        obs.append(root, [big], wait=5)
    assert obs.status(root)["records"] == 0


def test_record_size_predicts_the_line_length(root: StateRoot) -> None:
    payload = {"user": "héllo " * 50, "assistant": 'quote " and \n newline'}
    predicted = obs.record_size(payload, {"harness": "generic"})
    obs.append(root, [obs.NewObservation(payload, {"harness": "generic"}, obs.fingerprint("p"))], wait=5)
    actual = os.path.getsize(folder(root) / "obs-000001.jsonl")
    assert actual <= predicted < actual + 64
