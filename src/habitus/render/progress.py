"""A progress bar on stderr for long work, when stderr is a terminal (never in a pipe or a hook).

Domain loops take a plain callback, `progress(done, total, **facts)`; a command passes the one `bar()`
yields (None when nobody watches, so the loop skips the call). A call costs a clock read: the bar is
redrawn at most every REDRAW_S seconds (and once more at the end), and rich loads only when a
terminal is there to draw on.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from habitus.render import for_people

REDRAW_S = 0.1

Report = Callable[..., None]  # report(done, total=None, *, step=None, **facts shown after the count)


@contextmanager
def bar(label: str, unit: str = "records") -> Iterator[Report | None]:
    """Yield a progress callback drawing on stderr, or None when nobody is watching.

    `unit` names what done and total count; "bytes" shows them as sizes. A `step` keyword names the
    phase the work is in; any other keyword is shown after the count (`batches=3`: ", 3 batches").
    """
    if not for_people(sys.stderr):
        yield None
        return
    from rich.progress import (
        BarColumn,
        DownloadColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
    )

    from habitus.render.terminal import console

    count = DownloadColumn() if unit == "bytes" else MofNCompleteColumn()
    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        count,
        TextColumn(("" if unit == "bytes" else unit) + "{task.fields[facts]}"),
        TimeElapsedColumn(),
    )
    # The streams stay as they are: results go to stdout.buffer, which rich's redirection would miss.
    with Progress(
        *columns,
        console=console(stderr=True),
        auto_refresh=False,
        transient=False,
        redirect_stdout=False,
        redirect_stderr=False,
    ) as shown:
        task = shown.add_task(label, total=None, facts="")
        last = 0.0
        latest: tuple[int, int | None, str | None, dict[str, object]] | None = None

        def draw() -> None:
            assert latest is not None
            done, total, step, facts = latest
            extra = "".join(f", {value} {name}" for name, value in facts.items())
            description = label if step is None else f"{label}: {step}"
            shown.update(task, completed=done, total=total, facts=extra, description=description)
            shown.refresh()

        def report(done: int, total: int | None = None, *, step: str | None = None, **facts: object) -> None:
            nonlocal last, latest
            latest = (done, total, step, facts)
            now = time.monotonic()
            if now - last >= REDRAW_S:
                last = now
                draw()

        try:
            yield report
        finally:
            if latest is not None:
                draw()  # the last count, even when it came too soon after the previous redraw
