"""Helpers for the backup, restore and verify tests: real state, logical snapshots, crafted backups."""

from __future__ import annotations

import hashlib
import os
import sqlite3
import stat
import subprocess
import sys
import urllib.parse
from pathlib import Path
from typing import Any

import orjson

from habitus import codec
from habitus.state import files, inventory, ledger
from habitus.state.root import StateRoot

PY = sys.executable


def write_rows(root: Path, prefix: str, count: int) -> None:
    """Commit `count` rows into the ledger's meta table (creating and migrating the ledger)."""
    store = ledger.store(StateRoot(root))
    conn = store.open_write()
    try:
        with store.write(conn):
            conn.executemany(
                "INSERT INTO meta (key, value) VALUES (?, ?)",
                [(f"{prefix}-{i:05d}", f"value {prefix} {i}") for i in range(count)],
            )
    finally:
        conn.close()


def make_state(root: Path, tag: str, *, rows: int = 5, law: bool = True, mutes: bool = False) -> None:
    """A state root with ledger rows, config.toml, and optionally law.md and mutes.json, all marked tag."""
    StateRoot(root).ensure()
    write_rows(root, tag, rows)
    files.atomic_write(root / "config.toml", f"# state {tag}\n[capture]\nenabled = true\n".encode())
    for name, wanted, data in (
        ("law.md", law, f"Never push to main ({tag}).\n".encode()),
        (
            "mutes.json",
            mutes,
            orjson.dumps({"version": 1, "mutes": [{"id": "ab" * 32, "label": tag, "at": ""}]}),
        ),
    ):
        if wanted:
            files.atomic_write(root / name, data)
        elif (root / name).exists():
            os.unlink(root / name)


def store_dump(path: Path) -> list[str] | None:
    """The logical content of a SQLite file (schema and rows), read without changing it."""
    if not path.exists():
        return None
    uri = "file:" + urllib.parse.quote(str(path)) + "?mode=ro"
    conn = sqlite3.connect(uri, uri=True)
    try:
        return sorted(conn.iterdump())
    finally:
        conn.close()


def snapshot(root: Path) -> dict[str, Any]:
    """What a restore replaces, logically: each store's dump and each file's bytes (None when absent)."""
    state: dict[str, Any] = {}
    for item in inventory.STORES:
        state[item.name] = store_dump(root / item.name)
    for file_item in inventory.FILES:
        path = root / file_item.name
        state[file_item.name] = path.read_bytes() if path.exists() else None
    return state


def tree(root: Path, skip: tuple[str, ...] = ("locks",)) -> dict[str, tuple[int, bytes | None]]:
    """Every path under root (but the skipped top-level names) with its mode and bytes: byte identity."""
    found: dict[str, tuple[int, bytes | None]] = {}
    if not root.exists():
        return found
    for folder, dirs, names in os.walk(root):
        rel = Path(folder).relative_to(root)
        if rel.parts and rel.parts[0] in skip:
            continue
        for name in dirs + names:
            if not rel.parts and name in skip:
                continue
            path = Path(folder) / name
            st = os.lstat(path)
            data = path.read_bytes() if stat.S_ISREG(st.st_mode) else None
            found[str(path.relative_to(root))] = (st.st_mode, data)
    return found


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def load_manifest(folder: Path) -> dict[str, Any]:
    return orjson.loads((folder / "manifest.json").read_bytes())


def save_manifest(folder: Path, body: dict[str, Any], *, sign: bool = True) -> None:
    """Rewrite a backup's manifest, with a checksum that matches (unless sign=False)."""
    body = {k: v for k, v in body.items() if k != "checksum"}
    if sign:
        body["checksum"] = codec.checksum(body)
    path = folder / "manifest.json"
    path.unlink()
    path.write_bytes(orjson.dumps(body))


def rehash(folder: Path, name: str) -> None:
    """After changing a backed-up file on purpose, make the manifest agree with it (an attacker would)."""
    body = load_manifest(folder)
    for entry in body["files"]:
        if entry["name"] == name:
            entry["size"] = (folder / name).stat().st_size
            entry["sha256"] = sha256(folder / name)
    save_manifest(folder, body)


def killed_writer(root: Path, prefix: str, count: int) -> None:
    """Commit rows in a child process that then dies by SIGKILL: committed data is left in the -wal."""
    code = (
        "import os, signal, sys\n"
        "from habitus.state import ledger\n"
        "from habitus.state.root import StateRoot\n"
        "store = ledger.store(StateRoot.at(sys.argv[1]))\n"
        "conn = store.open_write()\n"
        "conn.execute('PRAGMA wal_autocheckpoint=0')\n"
        "with store.write(conn):\n"
        "    conn.executemany('INSERT INTO meta VALUES (?, ?)',"
        " [(f'{sys.argv[2]}-{i:05d}', 'v') for i in range(int(sys.argv[3]))])\n"
        "os.kill(os.getpid(), signal.SIGKILL)\n"
    )
    done = subprocess.run([PY, "-c", code, str(root), prefix, str(count)], capture_output=True, timeout=60)
    assert done.returncode == -9, done.stderr
    assert (root / "ledger.sqlite-wal").stat().st_size > 0


def damage_index(path: Path) -> None:
    """Scribble over the ledger's index page: the file still opens, but integrity_check finds damage."""
    conn = sqlite3.connect(path)
    try:
        page_size = conn.execute("PRAGMA page_size").fetchone()[0]
        root_page = conn.execute(
            "SELECT rootpage FROM sqlite_master WHERE name = 'sqlite_autoindex_meta_1'"
        ).fetchone()[0]
        conn.execute("PRAGMA journal_mode=DELETE")
    finally:
        conn.close()
    data = bytearray(path.read_bytes())
    offset = (root_page - 1) * page_size
    data[offset + 8 : offset + 40] = b"\xff" * 32
    path.write_bytes(bytes(data))


def flag_bad_rows(check: inventory.Check) -> list[dict[str, Any]]:
    """A domain verifier as an owner would register it: one issue per meta row whose key is 'bad-*'."""
    assert check.conn is not None
    bad = [row[0] for row in check.conn.execute("SELECT key FROM meta WHERE key GLOB 'bad-*' ORDER BY key")]
    return (
        [
            {
                "code": "row_checksum",
                "message": "rows do not match their checksum",
                "count": len(bad),
                "ids": bad,
            }
        ]
        if bad
        else []
    )


def folder_verifier(check: inventory.Check) -> list[dict[str, Any]]:
    """A verifier for a folder item (like the observation chain): no connection, just the path."""
    assert check.conn is None
    return (
        [{"code": "chain_broken", "message": "the chain is broken"}]
        if (check.path / "broken").exists()
        else []
    )


def failing_verifier(check: inventory.Check) -> list[dict[str, Any]]:
    from habitus.errors import HabitusError

    raise HabitusError("state_corrupt", "the verifier could not read its data")
