"""Fault injection for tests: stop the process at a named point. Inert unless HABITUS_TEST_FAULT is set.

`HABITUS_TEST_FAULT=POINT:ACTION` makes the process stop when it reaches POINT: `kill` sends itself
SIGKILL (a crash: no cleanup, no finally blocks), `pause` writes its pid to $HABITUS_TEST_FAULT_READY
and sleeps (so a test can act while it waits, then kill it), `raise` raises an I/O error. Outside tests
the variable is unset and `fault()` is one dictionary lookup.

Points (grep `fault(` for the exact places):

- every SQLite write transaction (`db.Store.write`): `<stem>_commit` just before COMMIT (a kill there
  leaves nothing of the transaction) and `<stem>_committed` just after it, where stem is the store's
  file name without `.sqlite`: `ledger_commit`, `memory_commit`, ...;
- the observation log (`observations`): before_write, mid_line, after_jsonl, after_idx, after_fp,
  after_manifest, rotate_after_archive_manifest, rotate_after_move;
- analyze: analyze_commit_N (inside batch N's transaction); advise: advise_commit;
- backup: backup_before_manifest, backup_before_rename;
- restore: restore_staged, restore_prepared, restore_moving, restore_moved, restore_installing,
  restore_installed, restore_generation, restore_committed, recover_rolling_back.

`POINT#N:ACTION` acts on the N-th time the process reaches POINT (counted from 1) instead of the first,
for commands that pass the same point more than once (several transactions on one store).
"""

from __future__ import annotations

import errno
import os
import time
from pathlib import Path

ENV = "HABITUS_TEST_FAULT"
READY_ENV = "HABITUS_TEST_FAULT_READY"
_hits: dict[str, int] = {}  # point -> times reached in this process (for POINT#N)


def fault(point: str) -> None:
    spec = os.environ.get(ENV)
    if not spec:
        return
    name, _, action = spec.partition(":")
    name, _, nth = name.partition("#")
    if name != point:
        return
    _hits[point] = _hits.get(point, 0) + 1
    if nth and _hits[point] != int(nth):
        return
    if action == "kill":
        import signal

        os.kill(os.getpid(), signal.SIGKILL)
    elif action == "pause":
        ready = os.environ.get(READY_ENV)
        if ready:
            Path(ready).write_text(str(os.getpid()))
        time.sleep(3600)
    elif action == "raise":
        raise OSError(errno.EIO, f"injected fault at {point}")
