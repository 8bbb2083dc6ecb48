"""A code marker written without the shape a habit's example gives it.

"When you leave a TODO or FIXME in code, Do put a ticket number in it, like TODO(PAY-123)": the markers
are the condition's upper-case code words (TODO, FIXME), the example shows what must go with them (a
ticket key: letters, a dash, digits). A line a tool call writes into code with a marker and without
that shape breaks the habit, whatever language the comment is in.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from collections.abc import Iterable

    from habitus.advise.local import Unit

_MARKER = re.compile(r"\b(TODO|FIXME|HACK|XXX|NOTE|BUG|OPTIMIZE)\b")
_EXAMPLE = re.compile(
    r"\b(?:like|e\.g\.|such as|for example|as in)\s*:?\s*[`'\"]?((?:TODO|FIXME|HACK|XXX)\S*)"
)


class MarkerRule(NamedTuple):
    markers: tuple[str, ...] = ()
    shape: re.Pattern[str] | None = None  # what a marked line must hold

    def __bool__(self) -> bool:
        return bool(self.markers and self.shape)


def _shape_of(example: str, markers: tuple[str, ...]) -> re.Pattern[str] | None:
    """The example without its marker, as a pattern: runs of upper-case letters, of lower-case letters
    and of digits stand for any such run ("TODO(PAY-123)" -> "[A-Z]+-[0-9]+")."""
    core = example
    for marker in markers:
        core = core.replace(marker, "", 1)
    core = core.strip("()[]:`'\" .,;")
    if not re.search(r"\d", core) or not re.search(r"[A-Za-z]", core):
        return None
    parts = []
    for run in re.findall(r"[A-Z]+|[a-z]+|\d+|.", core):
        parts.append(
            "[A-Z]+"
            if run.isupper()
            else "[a-z]+"
            if run.isalpha()
            else "[0-9]+"
            if run.isdigit()
            else re.escape(run)
        )
    return re.compile("".join(parts))


@lru_cache(maxsize=1024)
def rule_of(condition: str, behaviour: str, polarity: int) -> MarkerRule:
    """The markers a habit's condition names and the shape its behaviour's example gives them."""
    markers = tuple(dict.fromkeys(_MARKER.findall(condition)))
    example = _EXAMPLE.search(behaviour)
    if polarity < 0 or not markers or example is None:
        return MarkerRule()
    return MarkerRule(markers, _shape_of(example.group(1), markers))


def broken_by(rule: MarkerRule, units: Iterable[Unit]) -> Unit | None:
    """The first new tool call that writes into code a line with a marker but without the shape."""
    from habitus.advise import commands

    if not rule:
        return None
    assert rule.shape is not None
    markers = re.compile(r"(?:#|//|/\*|--|;|\*)\s*(?:" + "|".join(rule.markers) + r")\b")
    for unit, line in commands.written_lines(units):
        found = markers.search(line)
        if found and not rule.shape.search(line[found.start() :]):
            return unit
    return None
