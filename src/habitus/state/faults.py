"""Fault injection for tests: stop the process at a named point. Inert unless HABITUS_TEST_FAULT is set.

`HABITUS_TEST_FAULT=POINT:ACTION` makes the process stop when it reaches POINT: `kill` sends itself
SIGKILL (a crash: no cleanup, no finally blocks), `pause` writes its pid to $HABITUS_TEST_FAULT_READY
and sleeps (so a test can act while it waits, then kill it), `raise` raises an I/O error. Outside tests
the variable is unset and `fault()` is one dictionary lookup.
"""

from __future__ import annotations

import errno
import os
import time
from pathlib import Path

ENV = "HABITUS_TEST_FAULT"
READY_ENV = "HABITUS_TEST_FAULT_READY"


def fault(point: str) -> None:
    spec = os.environ.get(ENV)
    if not spec:
        return
    name, _, action = spec.partition(":")
    if name != point:
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
