"""What a user pasted into a prompt is not what they said: the analyzer reads only their own lines.

Real prompts carry stack traces, CI and linter output, terminal sessions, diffs, code and screenshot
paths under or above the user's sentence ("here's the error from CI: <log> fix it"). Read as
sentences they look like directives ("Error: Do not use `any` type" became a candidate in a dev run)
or like frustration. `own_words(text)` drops, line by line:

- fenced code blocks (```), and lines indented by a tab or at least four spaces (code, traces);
- lines that look like tool output: tracebacks and "at f (file:1:2)" frames, "Error:"/"error TS…"
  headers, "12:7  error  …" linter rows, shell prompts ("$ ", "➜ ", "PS C:\\>"), diff lines
  ("+ added", "@@ …"), log lines with a timestamp or a "[tag]", box-drawing and spinner characters;
- a line that is only a path or a URL (a dragged-in screenshot or file);
- lines with few letters (hex dumps, tables of numbers);
- a line that occurs twice ("Waiting for the debugger to disconnect..."; nobody types a line twice) and a
  bare name and version ("Node.js v23.4.0");
- the rest of a paragraph that such a line opened ("➜ npx tsx cli.ts" and the "Debugger attached."
  under it), up to the next blank line.

A one-line prompt is never cut (it is what the user typed, even "[theme] why is this blue?"). Pure
standard library.
"""

from __future__ import annotations

import re

_FENCE = re.compile(r"^\s*(```|~~~)")
_OUTPUT = re.compile(
    r"^(?:\s*(?:traceback \(most recent call last\)|file \"[^\"]+\", line \d+|at [\w.$<>\[\]]+ \(.*:\d+(?::\d+)?\)"
    r"|at .+:\d+:\d+\)?$|\w*(?:error|exception|warning|panic)(?:\[\w+\])?:\s|error(?: |\[)?ts\d+|npm (?:err|warn)"
    r"|\d+:\d+\s+(?:error|warning)\b|[$#>%] |➜|❯|ps [a-z]:\\|@@ |\+\+\+ |--- |\+\s*\d*\s|diff --git"
    r"|\[[\w :./-]{1,40}\]\s|\d{4}-\d{2}-\d{2}[ t]\d{2}:\d{2}|\d{2}:\d{2}:\d{2}[.,]?\d*\s))",
    re.IGNORECASE,
)
_DRAWING = re.compile(r"[\u2500-\u259f\u2800-\u28ff\u2190-\u21ff✓✗✔✘⚠]")
_PATH_ONLY = re.compile(
    r"^\s*['\"`]?(?:[a-z]:\\|/|~/|\./|https?://)\S*(?:\s\S+){0,3}['\"`]?\s*$", re.IGNORECASE
)
_INDENTED = re.compile(r"^(?:\t| {4,})\S")
_BANNER = re.compile(r"^[\w.+-]+ v?\d+(?:\.\d+)+\S*$")
_LETTER = re.compile(r"[^\W\d_]")


def own_words(text: str) -> str:
    """`text` without the lines the user pasted (see the module docstring); "" when nothing is left."""
    if "\n" not in text.strip():
        return text
    kept: list[str] = []
    fenced = output = False
    lines = text.splitlines()
    counts: dict[str, int] = {}
    for line in lines:
        counts[line.strip()] = counts.get(line.strip(), 0) + 1
    for line in lines:
        if line.strip() and counts[line.strip()] > 1 and len(line.strip()) >= 12:
            continue
        if _FENCE.match(line):
            fenced = not fenced
            continue
        if not line.strip():
            output = False
        elif fenced or output or _pasted(line):
            output = not fenced
            continue
        kept.append(line)
    return "\n".join(kept).strip()


def _pasted(line: str) -> bool:
    stripped = line.strip()
    if not stripped:
        return False
    if _INDENTED.match(line) or _OUTPUT.match(stripped) or _DRAWING.search(stripped):
        return True
    if _PATH_ONLY.match(stripped) or _BANNER.match(stripped):
        return True
    letters = len(_LETTER.findall(stripped))
    return len(stripped) >= 8 and letters < 0.5 * len(stripped.replace(" ", ""))
