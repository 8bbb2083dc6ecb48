"""What a person pasted into a message, told apart from what they typed: one detector, two views.

Real prompts carry stack traces, CI and linter output, terminal sessions, diffs, git logs, code and
dragged-in paths above or below the user's own sentence ("here's the error from CI: <log> fix it").
A pasted line is recognised by its shape, not its words, so this works whatever the language around
it. `machine(line)` says whether one line looks written by a machine:

- indented by a tab or two spaces or more (code, stack frames, wrapped log fields);
- tracebacks and "at f (file:1:2)" frames, "TypeError: …"/"error TS…"/"npm ERR!" headers, log-level
  words (INFO, WARN, FAIL) and timestamps, "12:7  error  …" linter rows, "file.py:12" locations;
- shell prompts ("$ ", "➜ ", "PS C:\\>"), diffs ("+ added", "@@ …", "diff --git"), git log headers;
- code: keywords opening a line (def, class, import, const, SELECT, FROM in a Dockerfile), braces and
  semicolons ending one; rules of dashes or equal signs, test-runner dots and "[ 50%]";
- box-drawing and spinner characters; a line that is only a path or a URL; a bare name and version
  ("Node.js v23.4.0"); a line with few letters or many symbols (hex dumps, tables of numbers).

`marks(text)` gives each line's verdict, with what a single line cannot show: a fenced block
(```), a line that occurs twice (nobody types a line twice: "Waiting for the debugger..."), and, between
two pasted lines, a blank or a short line of digits or symbols ("collected 214 items"), never a sentence.

The two views differ in how sure they must be, because a mistake costs them differently:

- select (`cut`): a block counts as pasted only with two or more machine lines; a single
  machine-looking line is the user's own words ("the build fails with TypeError: x is undefined"),
  since cutting it could hide the request itself. Each block becomes "…".
- learn (`own_words`): every pasted line goes, and with it the rest of the paragraph it opened
  ("➜ npx tsx cli.ts" and the "Debugger attached." under it), since a pasted line read as the user's
  words can become a habit ("Error: Do not use `any` type" did once). A one-line message is never cut:
  it is what the user typed, even "[theme] why is this blue?".

Pure standard library.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_MACHINE = re.compile(
    r"^(?:[ \t]{2,}\S|\t)"  # indented: code, a stack frame, a wrapped log field
    r"|^\s*(?:\[?\d{4}-\d\d-\d\d[T ]\d\d:\d\d|\[?\d\d:\d\d:\d\d)"  # timestamped log lines
    r"|\b(?:TRACE|DEBUG|INFO|WARN|WARNING|ERROR|FATAL|CRITICAL|FAIL|FAILED|PASS|PASSED)\b"
    r"|^\s*(?:Traceback \(most recent call last\)|File \"[^\"]+\", line \d+|at [\w$.<>/]+ ?\(.*\)\s*$)"
    r"|^\s*[\w.]*(?:Error|Exception|Warning)\b:"  # "TypeError: ...", "AssertionError: ..."
    r"|^(?:diff --git |index [0-9a-f]{6,}|@@ .* @@|\+\+\+ |--- a/|[+-]\s{2,}\S|[+](?![ +])\S)"  # a diff
    r"|^(?:commit [0-9a-f]{7,40}\b|Author: |Date: )"  # git log
    r"|^\s*(?:def |class |import |from [\w.]+ import |function |const |let |var |return\b|func |"
    r"package |#include|public |private |SELECT |INSERT |UPDATE |DELETE FROM |ALTER TABLE |"
    r"CREATE TABLE |(?:FROM|RUN|COPY|WORKDIR|CMD|ENV|EXPOSE|ENTRYPOINT) \S)"
    r"|[{};]\s*$|^\s*[})\]]"  # braces and semicolons end or open code lines
    r"|^\s*[=_~^*-]{4,}|\S+\.\w+:\d+(?::\d+)?\b|^\s*\$ \S|^\s*\w+@[\w.]+ \w+"  # rules, file:line, shell
    r"|\.{4,}|\[\s*\d+%\]|^\s*…\s*$"  # test runner progress; a quoted span on a line of its own
)
_MACHINE_ANY_CASE = re.compile(
    r"^(?:traceback \(most recent call last\)|file \"[^\"]+\", line \d+|at [\w.$<>\[\]]+ \(.*:\d+(?::\d+)?\)"
    r"|at .+:\d+:\d+\)?$|\w*(?:error|exception|warning|panic)(?:\[\w+\])?:\s|error(?: |\[)?ts\d+|npm (?:err|warn)"
    r"|\d+:\d+\s+(?:error|warning)\b|[$#>%] |➜|❯|ps [a-z]:\\|@@ |\+\+\+ |--- |\+\s*\d*\s|diff --git"
    r"|\[[\w :./-]{1,40}\]\s|\d{4}-\d{2}-\d{2}[ t]\d{2}:\d{2}|\d{2}:\d{2}:\d{2}[.,]?\d*\s)",
    re.IGNORECASE,
)
_DRAWING = re.compile(r"[\u2500-\u259f\u2800-\u28ff\u2190-\u21ff✓✗✔✘⚠]")
_PATH_ONLY = re.compile(
    r"^\s*['\"`]?(?:[a-z]:\\|/|~/|\./|https?://)\S*(?:\s\S+){0,3}['\"`]?\s*$", re.IGNORECASE
)
_BANNER = re.compile(r"^[\w.+-]+ v?\d+(?:\.\d+)+\S*$")
_LETTER = re.compile(r"[^\W\d_]")
_SYMBOLS = re.compile(r"[{}()\[\]<>=;:/\\_|#$*\"'`@%&+~^0-9]")
_SENTENCE_END = re.compile(r"[.!?。？！:：]\s*$")  # a sentence, or a line introducing what follows
# A code fence as Markdown has it: indented at most three spaces (tsc's "~~~~~~" under a column is none)
_FENCE = re.compile(r"^ {0,3}(?:```|~~~)")
REPEATED_MIN_CHARS = 12  # a repeated short line ("ok", "yes") may well be typed twice


def machine(line: str) -> bool:
    """The line looks written by a machine (see the module docstring)."""
    stripped = line.strip()
    if not stripped:
        return False
    if _MACHINE.search(line) or _MACHINE_ANY_CASE.match(stripped) or _DRAWING.search(stripped):
        return True
    if _PATH_ONLY.match(stripped) or _BANNER.match(stripped):
        return True
    if len(stripped) >= 12 and len(_SYMBOLS.findall(stripped)) > 0.3 * len(stripped):
        return True
    letters = len(_LETTER.findall(stripped))
    return len(stripped) >= 8 and letters < 0.5 * len(stripped.replace(" ", ""))


@dataclass(frozen=True)
class Line:
    text: str
    shape: bool  # looks written by a machine (`machine`)
    machine: bool  # that, or it sits in a fence, or it occurs twice
    pasted: bool  # part of a pasted block: a machine line, or a blank or short line between two


def marks(text: str) -> list[Line]:
    """Each line of the text with its verdict (see the module docstring)."""
    lines = text.split("\n")
    counts: dict[str, int] = {}
    for line in lines:
        counts[line.strip()] = counts.get(line.strip(), 0) + 1
    shapes = [machine(line) for line in lines]
    flags: list[bool] = []
    fenced = False
    for i, line in enumerate(lines):
        if _FENCE.match(line) or fenced:
            flags.append(True)
            shapes[i] = False  # fenced code is quoted: it does not open a pasted paragraph
            fenced = fenced != bool(_FENCE.match(line))
            continue
        repeated = counts[line.strip()] > 1 and len(line.strip()) >= REPEATED_MIN_CHARS
        flags.append(repeated or shapes[i])
    after = [False] * len(lines)  # is the next non-blank line a machine line (one pass from the end)
    following = False
    for i in range(len(lines) - 1, -1, -1):
        after[i] = following
        if lines[i].strip():
            following = flags[i]
    out: list[Line] = []
    before = False  # is the previous non-blank line part of a paste
    for i, line in enumerate(lines):
        pasted = flags[i]
        if not pasted:  # blank, or a short line with digits or symbols ("collected 214 items")
            short = len(line) <= 40 and bool(_SYMBOLS.search(line)) and not _SENTENCE_END.search(line)
            pasted = before and after[i] and (not line.strip() or short)
        if line.strip():
            before = pasted
        out.append(Line(line, shapes[i], flags[i], pasted))
    return out


def cut(text: str) -> tuple[str, int]:
    """select's view: the text with each pasted block of two or more machine lines replaced by "…",
    and how many blocks went."""
    if text.count("\n") < 2:
        return text, 0
    lines = marks(text)
    out: list[str] = []
    blocks, i = 0, 0
    while i < len(lines):
        if not lines[i].pasted:
            out.append(lines[i].text)
            i += 1
            continue
        j = i
        while j < len(lines) and lines[j].pasted:
            j += 1
        if sum(line.machine for line in lines[i:j]) >= 2:
            out.append("…")
            blocks += 1
        else:
            out.extend(line.text for line in lines[i:j])
        i = j
    return "\n".join(out), blocks


def own_words(text: str) -> str:
    """learn's view: the text without its pasted lines and the rest of each paragraph one opened;
    "" when nothing is left."""
    if "\n" not in text.strip():
        return text
    kept: list[str] = []
    opened = False  # a machine-looking line opened this paragraph
    for line in marks(text):
        if not line.text.strip():
            opened = False
        elif line.pasted or opened:
            opened = opened or line.shape
            continue
        kept.append(line.text)
    return "\n".join(kept).strip()
