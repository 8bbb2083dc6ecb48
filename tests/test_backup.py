"""habitus backup: consistent copies, a manifest written last, atomic appearance, exclusions, permissions."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import time
from pathlib import Path

import orjson
import pytest

from backup_helpers import PY, load_manifest, make_state, sha256, store_dump
from conftest import run, run_process
from habitus import __version__, codec
from habitus.state import backup
from habitus.state import ledger as ledger_migrations


def test_backup_copies_every_item_with_a_manifest(state_root: Path, tmp_path: Path) -> None:
    make_state(state_root, "a", rows=20, mutes=True)
    out = run(["backup", "--out", str(tmp_path / "b")])
    assert out.exit == 0, out.stderr
    folder = Path(out.result["path"])
    assert folder == tmp_path / "b"
    assert sorted(os.listdir(folder)) == [
        "config.toml",
        "law.md",
        "ledger.sqlite",
        "manifest.json",
        "mutes.json",
    ]
    manifest = load_manifest(folder)
    assert manifest["format"] == "habitus-backup" and manifest["format_version"] == 1
    assert manifest["habitus"] == __version__
    assert manifest["checksum"] == codec.checksum({k: v for k, v in manifest.items() if k != "checksum"})
    assert manifest["files"] == out.result["files"]
    for entry in manifest["files"]:
        assert entry["size"] == (folder / entry["name"]).stat().st_size
        assert entry["sha256"] == sha256(folder / entry["name"])
    ledger = next(e for e in manifest["files"] if e["name"] == "ledger.sqlite")
    assert ledger["kind"] == "sqlite" and ledger["schema_version"] == len(ledger_migrations.MIGRATIONS)
    assert store_dump(folder / "ledger.sqlite") == store_dump(state_root / "ledger.sqlite")
    assert (folder / "ledger.sqlite").read_bytes()[18:20] == b"\x01\x01"  # one self-contained file
    for name in ("config.toml", "law.md", "mutes.json"):
        assert (folder / name).read_bytes() == (state_root / name).read_bytes()


def test_observations_models_errors_and_locks_are_excluded(state_root: Path, tmp_path: Path) -> None:
    make_state(state_root, "a")
    secret = b"the user said: my password is hunter2"
    (state_root / "observations" / "archive").mkdir(parents=True)
    (state_root / "observations" / "obs-000001.jsonl").write_bytes(secret + b"\n")
    (state_root / "observations" / "archive" / "obs-000000.jsonl").write_bytes(secret + b"\n")
    (state_root / "models").mkdir()
    (state_root / "models" / "model.onnx").write_bytes(b"weights")
    (state_root / "errors.jsonl").write_bytes(b'{"code":"x"}\n')
    out = run(["backup", "--out", str(tmp_path / "b")])
    assert out.exit == 0, out.stderr
    excluded = {e["name"]: e["reason"] for e in out.result["excluded"]}
    assert {"observations", "models", "errors.jsonl", "locks"} <= set(excluded)
    assert "never backed up" in excluded["observations"]
    assert load_manifest(tmp_path / "b")["excluded"] == out.result["excluded"]
    for path in (tmp_path / "b").iterdir():
        assert b"hunter2" not in path.read_bytes() and b"weights" not in path.read_bytes()
    man = Path(__file__).resolve().parent.parent / "man" / "habitus-backup.1"
    assert "observations/ (raw observation text" in man.read_text().replace("\\-", "-")


def test_default_out_is_a_new_folder_next_to_the_root(state_root: Path) -> None:
    make_state(state_root, "a")
    first = run(["backup"])
    second = run(["backup"])
    assert first.exit == 0 and second.exit == 0, (first.stderr, second.stderr)
    paths = {Path(first.result["path"]), Path(second.result["path"])}
    assert len(paths) == 2
    for path in paths:
        assert path.parent == state_root.parent / "state-backups"
        assert (path / "manifest.json").is_file()
    assert not any(p.name.startswith(".") for p in (state_root.parent / "state-backups").iterdir())


def test_existing_out_is_never_overwritten(state_root: Path, tmp_path: Path) -> None:
    make_state(state_root, "a")
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "keep.txt").write_text("mine")
    out = run(["backup", "--out", str(tmp_path / "b")])
    assert out.exit == 2 and out.error["code"] == "usage"
    assert os.listdir(tmp_path / "b") == ["keep.txt"]
    empty = tmp_path / "empty"
    empty.mkdir()
    assert run(["backup", "--out", str(empty)]).exit == 2
    assert os.listdir(empty) == []


def test_out_must_be_outside_the_root_and_have_a_parent(state_root: Path, tmp_path: Path) -> None:
    make_state(state_root, "a")
    assert run(["backup", "--out", str(state_root / "b")]).error["code"] == "usage"
    assert run(["backup", "--out", str(tmp_path / "no" / "such" / "b")]).error["code"] == "usage"
    assert not (state_root / "b").exists()


def test_missing_root_is_not_found_and_creates_nothing(state_root: Path, tmp_path: Path) -> None:
    out = run(["backup", "--out", str(tmp_path / "b")])
    assert out.exit == 1 and out.error["code"] == "not_found"
    assert not state_root.exists() and not (tmp_path / "b").exists()


def test_permissions_are_private_even_with_a_permissive_umask(state_root: Path, tmp_path: Path) -> None:
    make_state(state_root, "a", mutes=True)
    old = os.umask(0)
    try:
        out = run(["backup"])
    finally:
        os.umask(old)
    assert out.exit == 0, out.stderr
    folder = Path(out.result["path"])
    for path in (folder.parent, folder):
        assert path.stat().st_mode & 0o777 == 0o700, path
    for path in folder.iterdir():
        assert path.stat().st_mode & 0o777 == 0o600, path


@pytest.mark.parametrize(("damage", "code"), [("newer", "schema_newer"), ("garbage", "state_corrupt")])
def test_a_store_we_cannot_vouch_for_is_refused(
    state_root: Path, tmp_path: Path, damage: str, code: str
) -> None:
    make_state(state_root, "a")
    ledger = state_root / "ledger.sqlite"
    if damage == "newer":
        conn = sqlite3.connect(ledger)
        conn.execute("PRAGMA user_version=99")
        conn.close()
    else:
        ledger.write_bytes(b"this is not a database" * 500)
        for sidecar in ("-wal", "-shm"):
            Path(str(ledger) + sidecar).unlink(missing_ok=True)
    out = run(["backup", "--out", str(tmp_path / "b")])
    assert out.exit == 3 and out.error["code"] == code
    assert os.listdir(tmp_path) == ["state"]  # no backup, no partial folder


def test_a_damaged_store_is_refused_not_copied(state_root: Path, tmp_path: Path) -> None:
    from backup_helpers import damage_index

    make_state(state_root, "a", rows=200)
    damage_index(state_root / "ledger.sqlite")
    out = run(["backup", "--out", str(tmp_path / "b")])
    assert out.exit == 3 and out.error["code"] == "state_corrupt"
    assert not (tmp_path / "b").exists()


@pytest.mark.parametrize("point", ["backup_before_manifest", "backup_before_rename"])
def test_a_killed_backup_never_looks_complete(state_root: Path, tmp_path: Path, point: str) -> None:
    make_state(state_root, "a")
    out = run_process(["backup", "--out", str(tmp_path / "b")], env={"HABITUS_TEST_FAULT": f"{point}:kill"})
    assert out.exit == -9
    assert not (tmp_path / "b").exists()
    partial = [p for p in tmp_path.iterdir() if p.name.startswith(".b.partial-")]
    assert len(partial) == 1  # hidden, and named as partial
    if point == "backup_before_manifest":
        refused = run(["restore", str(partial[0])])
        assert refused.exit == 3 and refused.error["code"] == "backup_invalid"
    # The next backup to the same place works, and removes the dead backup's hidden copy.
    assert run(["backup", "--out", str(tmp_path / "b")]).exit == 0
    assert not any(p.name.startswith(".b.partial-") for p in tmp_path.iterdir())


WRITER = """
import sys, time
from pathlib import Path
from habitus.state import ledger
from habitus.state.root import StateRoot
store = ledger.store(StateRoot.at(sys.argv[1]))
conn = store.open_write()
n = 0
print("writing", flush=True)
while not Path(sys.argv[2]).exists():
    with store.write(conn):  # each transaction: a pair of rows and a 4 KiB value, so a torn copy shows
        conn.execute("INSERT INTO meta VALUES (?, ?)", (f"pair-{n:06d}-a", "x" * 4096))
        conn.execute("INSERT INTO meta VALUES (?, ?)", (f"pair-{n:06d}-b", "y" * 4096))
    n += 1
print(n, flush=True)
"""


def test_backup_while_another_process_writes_is_a_consistent_snapshot(
    state_root: Path, tmp_path: Path
) -> None:
    make_state(state_root, "a")
    stop = tmp_path / "stop"
    writer = subprocess.Popen([PY, "-c", WRITER, str(state_root), str(stop)], stdout=subprocess.PIPE)
    try:
        assert writer.stdout is not None and writer.stdout.readline().strip() == b"writing"
        copies = []
        for index in range(3):
            time.sleep(0.05 * index)
            out = run(["backup", "--out", str(tmp_path / f"b{index}"), "--wait", "30"])
            assert out.exit == 0, out.stderr
            assert writer.poll() is None  # still writing while the backup ran
            copies.append(tmp_path / f"b{index}" / "ledger.sqlite")
        first = len(store_dump(copies[0]) or [])
        deadline = time.monotonic() + 60
        while len(store_dump(state_root / "ledger.sqlite") or []) <= first:  # it writes on after a copy
            assert time.monotonic() < deadline
            time.sleep(0.01)
    finally:
        stop.touch()
        written = int(writer.communicate(timeout=60)[0].strip())
    counts = []
    for copy in copies:
        conn = sqlite3.connect(copy)
        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        keys = [k for (k,) in conn.execute("SELECT key FROM meta WHERE key GLOB 'pair-*' ORDER BY key")]
        conn.close()
        pairs = len(keys) // 2
        # Whole transactions only, and a prefix of them: a snapshot, never a torn copy.
        assert keys == [f"pair-{n:06d}-{s}" for n in range(pairs) for s in "ab"]
        counts.append(pairs)
    assert counts == sorted(counts) and counts[-1] <= written
    assert written > counts[0]  # the writer went on after the first copy


def test_result_matches_the_manifest_on_disk(state_root: Path, tmp_path: Path) -> None:
    make_state(state_root, "a")
    out = run(["backup", "--out", str(tmp_path / "b"), "--pretty"])
    assert out.exit == 0
    assert orjson.loads(out.stdout)["created_at"] == load_manifest(tmp_path / "b")["created_at"]
    manifest = backup.read_manifest(tmp_path / "b")
    assert {e.name for e in manifest.entries} == {"ledger.sqlite", "config.toml", "law.md"}


def test_the_manifest_matches_the_published_schema(state_root: Path, tmp_path: Path) -> None:
    from habitus import schemas

    make_state(state_root, "a", mutes=True)
    assert run(["backup", "--out", str(tmp_path / "b")]).exit == 0
    assert schemas.problems("backup-manifest.v1", load_manifest(tmp_path / "b")) == []
