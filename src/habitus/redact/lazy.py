"""A regular expression compiled on first use: a hook that never needs a pattern never pays for it
(compiling the redactor's patterns up front was most of its import time)."""

from __future__ import annotations

import re
from typing import Any


class Lazy:
    __slots__ = ("_compiled", "_flags", "_source")

    def __init__(self, source: str, flags: int = 0) -> None:
        self._source = source
        self._flags = flags
        self._compiled: re.Pattern[str] | None = None

    @property
    def pattern(self) -> re.Pattern[str]:
        if self._compiled is None:
            self._compiled = re.compile(self._source, self._flags)
        return self._compiled

    def __getattr__(self, name: str) -> Any:  # match, search, finditer, sub, ...
        return getattr(self.pattern, name)
