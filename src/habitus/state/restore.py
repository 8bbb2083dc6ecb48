"""Restore: validate a backup completely, then swap it in under the exclusive state lock with a journal.

Steps (the journal is `<root>/.restore/journal.json`, replaced atomically, checksummed):

1. Validate (nothing in the root changes): the folder's structure and manifest (`backup.read_manifest`),
   then copies into `.restore/stage-TOKEN/` that are checked after copying (`backup.stage`).
   `--dry-run` stages into a private temporary folder outside the root and stops here.
2. Take the exclusive state lock: running commands finish first, new ones wait (see `statelock`).
3. `prepared`: the journal records, per item, which of its files exist live.
4. Move those live files (stores with their -wal/-shm/-journal) into `.restore/rollback-TOKEN/`; `moved`.
5. Move the staged files into place; `installed`.
6. Start a fresh observation generation (`inventory.start_observation_generation`).
7. `committed`; then the rollback and stage folders and the journal are removed.

Recovery (`recover`, run by the next command before it touches state, see `guard.enter`): a journal
that says `committed` is finished (cleanup only); any other phase is rolled back, file by file, to the
live files recorded at `prepared`. Both are idempotent, so a crash during recovery is recovered again.
So after a crash at any point the root holds exactly the old or exactly the new items.

Fault points (tests only, see habitus.state.faults): restore_staged, restore_prepared, restore_moving
(after the first file moved aside), restore_moved, restore_installing (after the first file installed),
restore_installed, restore_generation, restore_committed, recover_rolling_back.
"""

from __future__ import annotations

import os
import re
import secrets
import tempfile
from pathlib import Path
from typing import Any

from habitus import codec
from habitus.errors import HabitusError
from habitus.state import backup, files, inventory, locks, statelock
from habitus.state.clock import utc_now
from habitus.state.faults import fault
from habitus.state.root import StateRoot

JOURNAL_FORMAT = "habitus-restore-journal"
JOURNAL_VERSION = 1
PHASES = ("prepared", "moved", "installed", "committed")
MAX_JOURNAL_BYTES = 1024 * 1024
_TOKEN = re.compile(r"^[0-9a-f]{16}$")


def run(
    root: StateRoot, source: Path, *, dry_run: bool, wait: float, progress: backup.Progress | None = None
) -> dict[str, Any]:
    """Restore root from the backup folder source (or, with dry_run, only validate it).
    `progress(bytes done, bytes in all, step=NAME)` follows the staging copy (backup.stage)."""
    source = Path(os.path.abspath(source))
    if source == root.path or root.path in source.parents:
        raise HabitusError("usage", f"{source}: a backup inside the state root cannot be restored")
    manifest = backup.read_manifest(source)
    if dry_run:
        with tempfile.TemporaryDirectory(prefix="habitus-restore-check-") as scratch:
            backup.stage(source, manifest, Path(scratch) / "stage", wait=wait, progress=progress)
            disabled = disarm_models(Path(scratch) / "stage" / "config.toml")
        result = _result(root, source, manifest, _plan(root, manifest), dry_run=True, observations=None)
        return {**result, "models_disabled": disabled}
    with statelock.maintenance(root.path):
        root.ensure()
        with locks.hold(root, "restore", wait=wait):
            folder = files.ensure_dir(root.path / statelock.RESTORE_DIR)
            if os.path.lexists(statelock.journal_path(root.path)):
                with statelock.exclusive(root.path, wait):
                    _recover_locked(root, wait=wait)  # a restore that died after this command started
            _remove_leftovers(folder)
            token = secrets.token_hex(8)
            stage = folder / f"stage-{token}"
            try:
                backup.stage(source, manifest, stage, wait=wait, progress=progress)
                disabled = disarm_models(stage / "config.toml")
                fault("restore_staged")
                with statelock.exclusive(root.path, wait):
                    try:
                        return {
                            **_swap(root, source, manifest, token, wait=wait),
                            "models_disabled": disabled,
                        }
                    except BaseException:
                        # A failure (not a crash) rolls back at once; if even that fails, the journal
                        # stays and the next command recovers.
                        if os.path.lexists(statelock.journal_path(root.path)):
                            try:
                                _recover_locked(root, wait=wait)
                            except Exception:
                                pass
                        raise
            finally:
                if not os.path.lexists(statelock.journal_path(root.path)):
                    backup.remove_tree(stage)
                    _remove_empty(folder)


# Settings that point a feature at a [models.NAME] table, and their offline values.
_MODEL_POINTERS = {
    "analyze": ("model", ""),
    "advise": ("model", ""),
    "memory": ("model", ""),
    "select": ("judge", "local"),
}


def disarm_models(config: Path) -> list[str]:
    """A backup's config.toml may name programs to run (`command` and agent-CLI `preset` models),
    endpoints and key variables: whoever wrote the backup chooses them. Restore never brings them in:
    it drops every [models.*] table from the staged copy and points the features back at the offline
    defaults, and the result lists the names (configure them again with `habitus config preset`)."""
    import tomllib

    import tomlkit

    cap = next(i.max_bytes for i in inventory.FILES if i.name == config.name)
    try:
        text = files.read_bytes(config, cap).decode("utf-8")  # staged and validated already
    except FileNotFoundError:
        return []
    if not isinstance(tomllib.loads(text).get("models"), dict):
        return []
    document = tomlkit.parse(text)
    names = sorted(str(name) for name in document.get("models", {}))
    document.pop("models", None)
    for table, (key, offline) in _MODEL_POINTERS.items():
        section = document.get(table)
        if section is not None and key in section:
            section[key] = offline
    files.atomic_write(config, tomlkit.dumps(document).encode("utf-8"))
    return names


def recover(root: StateRoot, *, wait: float) -> None:
    """Finish or roll back an interrupted restore. Called by `guard` when a journal exists."""
    with (
        statelock.maintenance(root.path),
        locks.hold(root, "restore", wait=wait),
        statelock.exclusive(root.path, wait),
    ):
        _recover_locked(root, wait=wait)


# -- the swap -----------------------------------------------------------------------------------


def _plan(root: StateRoot, manifest: backup.Manifest) -> list[dict[str, Any]]:
    """Per item this backup manages: which of its files exist live, and whether the backup has it."""
    plan = []
    for item in inventory.items():
        if item.name not in manifest.managed:
            continue
        live = [n for n in item.names() if os.path.lexists(root.path / n)]
        plan.append({"name": item.name, "live": live, "install": manifest.entry(item.name) is not None})
    return plan


def _swap(
    root: StateRoot, source: Path, manifest: backup.Manifest, token: str, *, wait: float
) -> dict[str, Any]:
    folder = root.path / statelock.RESTORE_DIR
    stage, rollback = folder / f"stage-{token}", folder / f"rollback-{token}"
    plan = _plan(root, manifest)
    files.ensure_dir(rollback)
    journal = {
        "format": JOURNAL_FORMAT,
        "version": JOURNAL_VERSION,
        "token": token,
        "phase": "prepared",
        "items": plan,
        "created_at": utc_now(),
    }
    _write_journal(root, journal)
    fault("restore_prepared")
    for item in plan:
        for name in item["live"]:
            os.rename(root.path / name, rollback / name)
            fault("restore_moving")
    files.fsync_dir(rollback)
    files.fsync_dir(root.path)
    _write_journal(root, {**journal, "phase": "moved"})
    fault("restore_moved")
    for item in plan:
        if item["install"]:
            os.rename(stage / item["name"], root.path / item["name"])
            fault("restore_installing")
    files.fsync_dir(root.path)
    _write_journal(root, {**journal, "phase": "installed"})
    fault("restore_installed")
    observations = inventory.start_observation_generation(root, wait=wait)
    fault("restore_generation")
    _write_journal(root, {**journal, "phase": "committed"})
    fault("restore_committed")
    _finish(root, token)
    return _result(root, source, manifest, plan, dry_run=False, observations=observations)


def _result(
    root: StateRoot,
    source: Path,
    manifest: backup.Manifest,
    plan: list[dict[str, Any]],
    *,
    dry_run: bool,
    observations: dict[str, Any] | None,
) -> dict[str, Any]:
    items = []
    for item in plan:
        had = item["name"] in item["live"]
        action = {(True, True): "replaced", (True, False): "created", (False, True): "removed"}.get(
            (item["install"], had), "absent"
        )
        entry = manifest.entry(item["name"])
        items.append({"name": item["name"], "action": action, **({"size": entry.size} if entry else {})})
    planned = {item["name"] for item in plan}
    kept = [i.name for i in inventory.items() if i.name not in planned]
    return {
        "root": str(root.path),
        "backup": {"path": str(source), "created_at": manifest.created_at, "habitus": manifest.habitus},
        "dry_run": dry_run,
        "items": items,
        "kept": kept,
        "excluded": [{"name": e.name, "reason": e.reason} for e in inventory.EXCLUDED],
        "observations": observations or {"generation": "unchanged", "note": "dry run: nothing was changed"},
    }


# -- journal and recovery -----------------------------------------------------------------------


def _write_journal(root: StateRoot, body: dict[str, Any]) -> None:
    unsigned = {k: v for k, v in body.items() if k != "checksum"}
    files.atomic_write(
        statelock.journal_path(root.path), codec.dumps({**unsigned, "checksum": codec.checksum(unsigned)})
    )


def _damaged(path: Path, why: str) -> HabitusError:
    return HabitusError(
        "state_corrupt",
        f"{path}: an interrupted restore's journal {why}; nothing was changed",
        hint="see RECOVERY BY HAND in `man habitus-restore`",
    )


def _read_journal(root: StateRoot) -> dict[str, Any]:
    path = statelock.journal_path(root.path)
    try:
        data = files.read_bytes(path, MAX_JOURNAL_BYTES)
    except HabitusError as exc:
        raise _damaged(path, "is unreadable") from exc
    try:
        body = codec.loads(data)
    except ValueError:
        raise _damaged(path, "is not valid JSON") from None
    if not isinstance(body, dict) or body.get("format") != JOURNAL_FORMAT:
        raise _damaged(path, "is not a habitus restore journal")
    if body.get("version") != JOURNAL_VERSION:
        raise HabitusError(
            "schema_newer", f"{path}: written by another habitus version", hint="finish it with that version"
        )
    unsigned = {k: v for k, v in body.items() if k != "checksum"}
    if body.get("checksum") != codec.checksum(unsigned):
        raise _damaged(path, "does not match its checksum")
    if body.get("phase") not in PHASES or not _TOKEN.match(str(body.get("token"))):
        raise _damaged(path, "has an unknown phase or token")
    plan = body.get("items")
    if not isinstance(plan, list):
        raise _damaged(path, "has no item list")
    for entry in plan:
        # Only names this habitus manages may be moved: a journal can never name an arbitrary path.
        item = inventory.item(entry.get("name")) if isinstance(entry, dict) else None
        live = entry.get("live") if isinstance(entry, dict) else None
        if item is None or not isinstance(live, list) or not all(n in item.names() for n in live):
            raise _damaged(path, "names a file habitus does not manage")
    return body


def _recover_locked(root: StateRoot, *, wait: float) -> None:
    """With the restore lock and the exclusive state lock held: finish or roll back."""
    if not os.path.lexists(statelock.journal_path(root.path)):
        return  # another process recovered it while we waited for the locks
    files.refuse_symlink(root.path / statelock.RESTORE_DIR)  # never follow a planted link out of the root
    journal = _read_journal(root)
    if journal["phase"] != "committed":
        _roll_back(root, journal)
    _finish(root, journal["token"])


def _roll_back(root: StateRoot, journal: dict[str, Any]) -> None:
    rollback = root.path / statelock.RESTORE_DIR / f"rollback-{journal['token']}"
    for entry in journal["items"]:
        item = inventory.item(entry["name"])
        assert item is not None
        for name in item.names():
            live, aside = root.path / name, rollback / name
            if os.path.lexists(aside):
                _unlink(live)  # whatever is there now was installed by the restore
                os.rename(aside, live)
                fault("recover_rolling_back")
            elif name not in entry["live"]:
                _unlink(live)  # did not exist before the restore
            # else: never moved, or already moved back: the live file is the old one
    files.fsync_dir(root.path)


def _finish(root: StateRoot, token: str) -> None:
    folder = root.path / statelock.RESTORE_DIR
    backup.remove_tree(folder / f"rollback-{token}")
    backup.remove_tree(folder / f"stage-{token}")
    _unlink(statelock.journal_path(root.path))
    files.fsync_dir(folder)
    _remove_empty(folder)


def running(root: StateRoot) -> bool:
    """Whether a restore holds this root's restore lock now (its staging folder is live, not left over)."""
    path = _restore_lock_path(root)
    if not os.path.lexists(path):
        return False
    lock = _take_if_free(path)
    if lock is None:
        return True
    lock.release()
    return False


def sweep(root: StateRoot) -> None:
    """Remove what a killed restore left without a journal (its staging copies), unless a restore is
    running. Called by the first command that takes the state lock and sees `.restore/`."""
    path = _restore_lock_path(root)
    if not path.parent.is_dir():
        return
    files.create_private(path)
    lock = _take_if_free(path)
    if lock is None:
        return  # a restore is staging right now
    try:
        if not os.path.lexists(statelock.journal_path(root.path)):  # a journal is recovery's job, not ours
            folder = root.path / statelock.RESTORE_DIR
            _remove_leftovers(folder)
            _remove_empty(folder)
    finally:
        lock.release()


def _restore_lock_path(root: StateRoot) -> Path:
    return root.path / "locks" / "restore.lock"  # the file locks.hold(root, "restore") takes


def _take_if_free(path: Path) -> Any:
    """The restore lock, taken without waiting, or None when a restore holds it."""
    import fasteners

    files.refuse_unsafe(path)
    lock = fasteners.InterProcessLock(str(path))
    return lock if lock.acquire(blocking=False) else None


def _remove_leftovers(folder: Path) -> None:
    """Staging folders of restores that died before writing a journal hold only copies of a backup:
    remove them. A rollback folder is removed only when empty (it never holds anything without a
    journal; if it somehow does, it stays for a person to look at, and verify reports it)."""
    for entry in os.listdir(folder):
        if entry.startswith("stage-"):
            backup.remove_tree(folder / entry)
        elif entry.startswith("rollback-"):
            _remove_empty(folder / entry)


def _remove_empty(folder: Path) -> None:
    try:
        os.rmdir(folder)
    except OSError:
        pass
    else:
        files.fsync_dir(folder.parent)


def _unlink(path: Path) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
    except IsADirectoryError:
        backup.remove_tree(path)
