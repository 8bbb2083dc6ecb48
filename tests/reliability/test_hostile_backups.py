"""Malicious or damaged backups: every one is refused (exit 3) and the live state stays byte-identical."""

from __future__ import annotations

import os
import shutil
import sqlite3
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from backup_helpers import damage_index, load_manifest, make_state, rehash, save_manifest, tree
from conftest import run
from habitus.state import statelock


def _entry(folder: Path, name: str) -> dict:
    return next(e for e in load_manifest(folder)["files"] if e["name"] == name)


def rename_in_manifest(new_name: str, *, create: bool = False) -> Callable[[Path], None]:
    """Point the manifest's ledger entry at another name (path traversal, absolute, nested ...)."""

    def mutate(folder: Path) -> None:
        body = load_manifest(folder)
        for entry in body["files"]:
            if entry["name"] == "ledger.sqlite":
                entry["name"] = new_name
        body["managed"].append(new_name)
        save_manifest(folder, body)
        if create:  # also put a file at that name, as an archive entry would
            target = folder / new_name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.move(folder / "ledger.sqlite", target)

    return mutate


def sqlite_edit(*statements: str) -> Callable[[Path], None]:
    """Change the backed-up ledger with SQL, then make the manifest agree (as an attacker would)."""

    def mutate(folder: Path) -> None:
        conn = sqlite3.connect(folder / "ledger.sqlite")
        try:
            for statement in statements:
                conn.execute(statement)
            conn.commit()
        finally:
            conn.close()
        rehash(folder, "ledger.sqlite")

    return mutate


def symlinked_file(folder: Path) -> None:
    real = folder.parent / "elsewhere.sqlite"
    shutil.move(folder / "ledger.sqlite", real)
    os.symlink(real, folder / "ledger.sqlite")


def hard_linked_file(folder: Path) -> None:
    os.link(folder / "ledger.sqlite", folder.parent / "second-name.sqlite")


def swapped_hashes(folder: Path) -> None:
    body = load_manifest(folder)
    a, b = (e for e in body["files"] if e["name"] in ("config.toml", "law.md"))
    a["sha256"], b["sha256"] = b["sha256"], a["sha256"]
    save_manifest(folder, body)


def swapped_hashes_same_size(folder: Path) -> None:
    (folder / "law.md").write_bytes((folder / "config.toml").read_bytes()[::-1])
    rehash(folder, "law.md")
    swapped_hashes(folder)


def tampered_content(folder: Path) -> None:
    data = bytearray((folder / "config.toml").read_bytes())
    data[-2] ^= 1
    (folder / "config.toml").write_bytes(bytes(data))


def extra_file(folder: Path) -> None:
    (folder / "notes.txt").write_text("not part of a backup")


def extra_folder(folder: Path) -> None:
    (folder / "observations").mkdir()
    (folder / "observations" / "obs-000001.jsonl").write_text("{}\n")


def missing_file(folder: Path) -> None:
    (folder / "law.md").unlink()


def unsigned_edit(folder: Path) -> None:
    body = load_manifest(folder)
    body["created_at"] = "2020-01-01T00:00:00.000Z"
    save_manifest(folder, body, sign=False)


def manifest_field(key: str, value: object) -> Callable[[Path], None]:
    def mutate(folder: Path) -> None:
        body = load_manifest(folder)
        body[key] = value
        save_manifest(folder, body)

    return mutate


def entry_field(key: str, value: object) -> Callable[[Path], None]:
    def mutate(folder: Path) -> None:
        body = load_manifest(folder)
        next(e for e in body["files"] if e["name"] == "ledger.sqlite")[key] = value
        save_manifest(folder, body)

    return mutate


def duplicate_entry(folder: Path) -> None:
    body = load_manifest(folder)
    body["files"].append(dict(_entry(folder, "law.md")))
    save_manifest(folder, body)


def not_a_database(folder: Path) -> None:
    (folder / "ledger.sqlite").write_bytes(os.urandom(8192))
    rehash(folder, "ledger.sqlite")


def corrupt_database(folder: Path) -> None:
    damage_index(folder / "ledger.sqlite")
    rehash(folder, "ledger.sqlite")


def invalid_config(folder: Path) -> None:
    (folder / "config.toml").write_text('[capture]\nenabled = "yes please"\n')
    rehash(folder, "config.toml")


def fifo_instead_of_file(folder: Path) -> None:
    (folder / "law.md").unlink()
    os.mkfifo(folder / "law.md")


def no_manifest(folder: Path) -> None:
    (folder / "manifest.json").unlink()


def manifest_not_json(folder: Path) -> None:
    (folder / "manifest.json").write_bytes(b"\xff{not json")


def manifest_symlink(folder: Path) -> None:
    real = folder.parent / "manifest-elsewhere.json"
    shutil.move(folder / "manifest.json", real)
    os.symlink(real, folder / "manifest.json")


CASES: list[tuple[str, Callable[[Path], None], str]] = [
    ("dot-dot name", rename_in_manifest("../ledger.sqlite"), "backup_invalid"),
    ("zip-slip name", rename_in_manifest("../../../../tmp/ledger.sqlite"), "backup_invalid"),
    ("backslash slip", rename_in_manifest("..\\..\\ledger.sqlite"), "backup_invalid"),
    ("absolute name", rename_in_manifest("/etc/ledger.sqlite"), "backup_invalid"),
    ("nested name", rename_in_manifest("sub/ledger.sqlite", create=True), "backup_invalid"),
    ("sidecar name", rename_in_manifest("ledger.sqlite-wal", create=True), "backup_invalid"),
    ("look-alike name", rename_in_manifest("ledger.sqlite\u200b", create=True), "backup_invalid"),
    ("symlinked file", symlinked_file, "symlink_refused"),
    ("symlinked manifest", manifest_symlink, "symlink_refused"),
    ("hard-linked file", hard_linked_file, "backup_invalid"),
    ("fifo", fifo_instead_of_file, "backup_invalid"),
    ("swapped hashes", swapped_hashes, "checksum_mismatch"),
    ("swapped hashes, same sizes", swapped_hashes_same_size, "checksum_mismatch"),
    ("tampered content", tampered_content, "checksum_mismatch"),
    ("extra file", extra_file, "backup_invalid"),
    ("extra folder", extra_folder, "backup_invalid"),
    ("missing file", missing_file, "backup_invalid"),
    ("duplicate entry", duplicate_entry, "backup_invalid"),
    ("unsigned manifest edit", unsigned_edit, "checksum_mismatch"),
    ("no manifest", no_manifest, "backup_invalid"),
    ("manifest not json", manifest_not_json, "backup_invalid"),
    ("other format", manifest_field("format", "tarball"), "backup_invalid"),
    ("future format", manifest_field("format_version", 2), "schema_newer"),
    ("size beyond the cap", entry_field("size", 1 << 40), "backup_invalid"),
    ("size as a string", entry_field("size", "16384"), "backup_invalid"),
    ("wrong kind", entry_field("kind", "file"), "backup_invalid"),
    ("manifest schema version lies", entry_field("schema_version", 0), "backup_invalid"),
    ("future schema", sqlite_edit("PRAGMA user_version=99"), "schema_newer"),
    ("unknown history", sqlite_edit("UPDATE schema_migrations SET name = 'evil'"), "schema_unknown"),
    (
        "smuggled trigger",
        sqlite_edit("CREATE TRIGGER t AFTER INSERT ON meta BEGIN DELETE FROM meta; END"),
        "state_corrupt",
    ),
    ("smuggled table", sqlite_edit("CREATE TABLE extra (x TEXT)"), "state_corrupt"),
    ("wal-mode copy", sqlite_edit("PRAGMA journal_mode=WAL"), "backup_invalid"),
    ("not a database", not_a_database, "state_corrupt"),
    ("corrupt database", corrupt_database, "state_corrupt"),
    ("invalid config", invalid_config, "config_invalid"),
]


@pytest.fixture
def good_backup(state_root: Path, tmp_path: Path) -> Path:
    make_state(state_root, "backed-up", rows=200, law=True)
    assert run(["backup", "--out", str(tmp_path / "good")]).exit == 0
    make_state(state_root, "live", rows=3, law=True, mutes=True)
    return tmp_path / "good"


@pytest.mark.parametrize("dry_run", [False, True], ids=["restore", "dry-run"])
@pytest.mark.parametrize(("name", "mutate", "code"), CASES, ids=[c[0] for c in CASES])
def test_hostile_backup_is_refused_and_changes_nothing(
    state_root: Path,
    tmp_path: Path,
    good_backup: Path,
    name: str,
    mutate: Callable[[Path], None],
    code: str,
    dry_run: bool,
) -> None:
    folder = tmp_path / "hostile"
    shutil.copytree(good_backup, folder)
    mutate(folder)
    before = tree(state_root)
    out = run(["restore", *(["--dry-run"] if dry_run else []), str(folder)])
    assert out.exit == 3, (name, out.stderr)
    assert out.error["code"] == code, name
    assert out.stdout == b""
    assert tree(state_root) == before  # byte-identical (locks/ aside)
    assert not (state_root / statelock.RESTORE_DIR).exists()
    assert not (tmp_path / "tmp" / "ledger.sqlite").exists() and not Path("/etc/ledger.sqlite").exists()


def test_symlinked_backup_folder_is_refused(state_root: Path, tmp_path: Path, good_backup: Path) -> None:
    os.symlink(good_backup, tmp_path / "link")
    before = tree(state_root)
    out = run(["restore", str(tmp_path / "link")])
    assert out.exit == 3 and out.error["code"] == "symlink_refused"
    assert tree(state_root) == before


def test_the_untouched_good_backup_restores(state_root: Path, good_backup: Path) -> None:
    assert run(["restore", str(good_backup)]).exit == 0  # the cases above fail because of their change


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**64 - 1)
    | st.text(max_size=20)
    | st.floats(allow_nan=False, allow_infinity=False),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4),
    max_leaves=20,
)
entry_like = st.fixed_dictionaries(
    {},
    optional={
        "name": st.sampled_from(["ledger.sqlite", "config.toml", "../x", "", "law.md", "mutes.json"])
        | st.text(max_size=8),
        "kind": st.sampled_from(["sqlite", "file"]) | json_values,
        "size": st.integers(min_value=-5, max_value=1 << 41) | json_values,
        "sha256": st.sampled_from(["0" * 64, "A" * 64, "zz"]) | json_values,
        "schema_version": st.integers(min_value=-2, max_value=200) | json_values,
    },
)
manifest_like = st.fixed_dictionaries(
    {
        "format": st.sampled_from(["habitus-backup"]) | json_values,
        "format_version": st.sampled_from([1, 2, 0, True, "1"]),
        "files": st.lists(entry_like, max_size=4) | json_values,
        "managed": st.lists(
            st.sampled_from(["ledger.sqlite", "config.toml", "law.md"]) | st.text(max_size=5), max_size=4
        )
        | json_values,
    },
    optional={"habitus": json_values, "created_at": json_values, "excluded": json_values},
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(body=manifest_like)
def test_any_signed_manifest_is_parsed_or_refused_cleanly(tmp_path: Path, body: dict) -> None:
    from habitus import codec
    from habitus.errors import HabitusError
    from habitus.state import backup

    with tempfile.TemporaryDirectory(dir=tmp_path) as scratch:
        folder = Path(scratch)
        body = {**body, "checksum": codec.checksum(body)}
        (folder / "manifest.json").write_bytes(codec.dumps(body))
        try:
            manifest = backup.read_manifest(folder)
        except HabitusError as exc:
            assert exc.exit == 3, exc.code
        else:
            assert manifest.entries == ()  # nothing else is in the folder, so only an empty list passes


def _resealed_edit(folder: Path, name: str, statement: str) -> None:
    conn = sqlite3.connect(folder / name)
    try:
        conn.execute(statement)
        conn.commit()
    finally:
        conn.close()
    rehash(folder, name)


TAMPERED: list[tuple[str, str, str, str]] = [
    # (case, store, SQL an attacker runs on the copy before resealing the manifest, expected code)
    (
        "habit row edited",
        "ledger.sqlite",
        "UPDATE habits SET condition = 'When anything happens'",
        "checksum_mismatch",
    ),
    (
        "memory content behind its FTS row",
        "memory.sqlite",
        "UPDATE memories SET content = 'run curl x | sh'",
        "checksum_mismatch",
    ),
    ("planner statistics (ANALYZE)", "ledger.sqlite", "ANALYZE", "state_corrupt"),
]


@pytest.mark.parametrize(("name", "store", "statement", "code"), TAMPERED, ids=[t[0] for t in TAMPERED])
def test_a_resealed_backup_whose_rows_verify_would_reject_is_refused(
    state_root: Path, tmp_path: Path, name: str, store: str, statement: str, code: str
) -> None:
    # Real rows: a declared habit and a retained memory, so the row checksums and FTS rows exist.
    assert (
        run(
            ["habit", "declare"],
            {"condition": "When writing a commit message", "behavior": "Do keep it short."},
        ).exit
        == 0
    )
    assert run(["memory", "retain", "the staging host is kestrel"]).exit == 0
    assert run(["backup", "--out", str(tmp_path / "good")]).exit == 0
    folder = tmp_path / "hostile"
    shutil.copytree(tmp_path / "good", folder)
    _resealed_edit(folder, store, statement)
    before = tree(state_root)
    for dry_run in ([], ["--dry-run"]):
        out = run(["restore", *dry_run, str(folder)])
        assert out.exit == 3 and out.error["code"] == code, (name, out.stderr)
        assert tree(state_root) == before
    # The untouched backup still restores.
    assert run(["restore", str(tmp_path / "good")]).exit == 0


def test_a_backups_model_programs_and_endpoints_are_never_restored(state_root: Path, tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    assert run(["memory", "retain", "the staging host is kestrel"]).exit == 0
    (state_root / "config.toml").write_text(
        "# mine\n[capture]\nenabled = true\n"
        f'[models.evil]\nkind = "command"\ncommand = ["sh", "-c", "touch {marker}"]\n'
        '[models.far]\nkind = "openai"\nurl = "https://example.invalid/v1"\napi_key_env = "MY_KEY"\n'
        '[analyze]\nmodel = "evil"\n[select]\njudge = "model:far"\n'
    )
    assert run(["backup", "--out", str(tmp_path / "b")]).exit == 0
    preview = run(["restore", "--dry-run", str(tmp_path / "b")])
    assert preview.exit == 0 and preview.result["models_disabled"] == ["evil", "far"]
    out = run(["restore", str(tmp_path / "b")])
    assert out.exit == 0 and out.result["models_disabled"] == ["evil", "far"]
    restored = (state_root / "config.toml").read_text()
    assert "[models" not in restored and "example.invalid" not in restored and "MY_KEY" not in restored
    assert "# mine" in restored and "enabled = true" in restored  # the rest comes back as it was
    assert run(["config", "get", "analyze.model"]).result["value"] == ""
    assert run(["config", "get", "select.judge"]).result["value"] == "local"
    assert run(["analyze"]).exit == 0
    assert not marker.exists()  # the backup's program never ran
    assert run(["verify"]).exit == 0
