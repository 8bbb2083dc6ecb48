"""What every command does before it touches state: recover an interrupted restore, then hold the
shared state lock (the lock itself is `habitus.state.statelock`).

Every command that takes `--root` calls `enter()` first, once its options are parsed (see
`habitus.dispatch`):

1. If `<root>/.restore/journal.json` exists, a restore was interrupted: `habitus.state.restore` is
   imported (only then) and rolls it back or forward before anything else reads or writes.
   With nothing to recover this is one `lstat`.
2. The command then holds the state lock SHARED for its whole run, so that restore never swaps a file
   under it (see `statelock`).

This is the one module below the commands that knows both the lock and restore: restore uses the lock,
and the lock calls back into restore only through the function `enter` hands it.
"""

from __future__ import annotations

import os
from pathlib import Path

from habitus.errors import HabitusError
from habitus.state import statelock

# The face commands and cli.py use: what this process holds, and letting go when a command ends.
holds = statelock.holds
release_all = statelock.release_all


def enter(root: Path, wait: float, *, sweep: bool = True) -> None:
    """Recover an interrupted restore if there is one, then hold the shared state lock (if it exists).
    With `sweep`, also remove the staging copies of a restore that died before its journal."""
    root = Path(root)
    statelock.enter(root, wait, recover=_recover)
    if (
        sweep
        and os.path.lexists(root / statelock.RESTORE_DIR)
        and not os.path.lexists(statelock.journal_path(root))
    ):
        from habitus.state import restore
        from habitus.state.root import StateRoot

        try:
            restore.sweep(StateRoot(root))
        except (OSError, HabitusError):
            pass  # best effort: verify reports what stays


def _recover(root: Path, wait: float) -> None:
    from habitus.state import restore  # the heavy path, only when a journal exists
    from habitus.state.root import StateRoot

    restore.recover(StateRoot(root), wait=wait)
