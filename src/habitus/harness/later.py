"""Work a hook call may finish after its answer is out.

The warm worker answers the client first and runs what was queued here afterwards, in the same
serving process (habitus.worker.server); a hook process of its own has nobody to answer early, so
nothing is queued there and the caller does the work at once. Used for the part of a review that
cannot change the reply: a note that waits for the next prompt anyway (habitus.advise.review).
"""

from __future__ import annotations

from collections.abc import Callable

_queue: list[Callable[[], object]] | None = None


def open_queue() -> None:
    """Start queueing: this process answers before it runs what `add` is given."""
    global _queue
    _queue = []


def queueing() -> bool:
    return _queue is not None


def add(work: Callable[[], object]) -> None:
    if _queue is None:
        raise RuntimeError("later.add outside a queue")  # a caller must check queueing() first
    _queue.append(work)


def take() -> list[Callable[[], object]]:
    """What was queued since open_queue(), in order; queueing stops."""
    global _queue
    work, _queue = _queue or [], None
    return work
