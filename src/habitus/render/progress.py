"""A progress bar on stderr for long work, when stderr is a terminal (never in a pipe or a hook).

Domain loops take a plain callback, `progress(done, total)`; a command passes the one `bar()` yields.
The callback costs a clock read per call: the bar is redrawn at most every REDRAW_S seconds, and
rich loads only when a terminal is there to draw on.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from habitus.render import for_people

REDRAW_S = 0.1

Report = Callable[..., None]  # report(done, total=None, **facts shown after the count)


@contextmanager
def bar(label: str, unit: str = "records") -> Iterator[Report | None]:
    """Yield a progress callback drawing on stderr, or None when nobody is watching."""
    if not for_people(sys.stderr):
        yield None
        return
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from habitus.render.terminal import console

    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn(unit + "{task.fields[facts]}"),
        TimeElapsedColumn(),
    )
    with Progress(*columns, console=console(stderr=True), auto_refresh=False, transient=False) as shown:
        task = shown.add_task(label, total=None, facts="")
        last = 0.0
        latest: tuple[int, int | None, dict[str, object]] | None = None

        def draw() -> None:
            assert latest is not None
            done, total, facts = latest
            extra = "".join(f", {value} {name}" for name, value in facts.items())
            shown.update(task, completed=done, total=total, facts=extra)
            shown.refresh()

        def report(done: int, total: int | None = None, **facts: object) -> None:
            nonlocal last, latest
            latest = (done, total, facts)
            now = time.monotonic()
            if now - last >= REDRAW_S:
                last = now
                draw()

        try:
            yield report
        finally:
            if latest is not None:
                draw()  # the last count, even when it came too soon after the previous redraw
