"""The steps of `habitus demo`: the whole loop, each step a real `habitus` process on a temporary root.

`tour(work)` yields one `Step` per command, in order: the command line a user would type, its exit
status, its result shortened for reading, and `problem`, which says what the step should have produced
and did not (checked on the result, not only the exit status). The tour stops at the first problem.

The story (`sample_conversation.jsonl`, package data): four days of a coding agent working on "tally",
a small Python CLI. Twice the user says to read the whole file before editing it, three times to verify
the packed artifact before calling a release ready, once that the repo releases from main only. Days
1-3 are captured as history; day 4's last turn ("bump to 0.6.0 ... is it release ready?" answered by
"The release is ready to tag." without any check) is the new work the tour selects for and reviews.

Pure standard library: it runs `python -m habitus`, so nothing heavy loads here.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

SAMPLE = "sample_conversation.jsonl"
STRING_CHARS = 96  # longer strings are cut in the shown results (the hook's text is shown whole)
LIST_ITEMS = 3


@dataclass
class Step:
    title: str
    command: str  # as a user would type it, from the work folder
    exit: int
    seconds: float
    shown: Any  # the result, shortened; or text
    problem: str | None = None
    note: str | None = None  # a line of explanation printed after the result


def sample_turns() -> list[dict[str, Any]]:
    text = resources.files("habitus.demo").joinpath(SAMPLE).read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def shorten(value: Any, keep: tuple[str, ...] | None = None) -> Any:
    """A result cut down for reading: only `keep` keys at the top (the others counted under "…"),
    long strings cut, long lists counted."""
    if isinstance(value, dict):
        if keep is not None:
            left = [k for k in value if k not in keep and k != "v"]
            value = {k: value[k] for k in ("v", *keep) if k in value}
            if left:
                value["…"] = f"{len(left)} more key" + ("s" if len(left) > 1 else "")
        return {k: shorten(v) for k, v in value.items()}
    if isinstance(value, list):
        head = [shorten(v) for v in value[:LIST_ITEMS]]
        return head + ([f"… {len(value) - LIST_ITEMS} more"] if len(value) > LIST_ITEMS else [])
    if isinstance(value, str) and len(value) > STRING_CHARS:
        return value[: STRING_CHARS - 1] + "…"
    return value


class _Runner:
    def __init__(self, work: Path, env: dict[str, str]) -> None:
        self.work = work
        self.env = env

    def call(
        self,
        title: str,
        args: list[str],
        *,
        stdin: bytes = b"",
        typed_stdin: str = "",
        keep: tuple[str, ...] | None = None,
        nl: bool = False,
    ) -> tuple[Step, Any]:
        """Run `habitus ARGS`; returns the step and the parsed result (a list with `nl`, None when
        stdout is empty)."""
        typed = "habitus " + " ".join(shlex.quote(a) for a in args)
        command = f"{typed} {typed_stdin}" if typed_stdin.startswith("<") else typed
        if typed_stdin and not typed_stdin.startswith("<"):
            command = f"{typed_stdin} | {typed}"
        started = time.monotonic()
        done = subprocess.run(
            [sys.executable, "-m", "habitus", *args],
            input=stdin,
            capture_output=True,
            cwd=self.work,
            env=self.env,
            timeout=300,
            check=False,
        )
        seconds = time.monotonic() - started
        out = done.stdout.decode("utf-8", "replace")
        result: Any = None
        problem = None
        try:
            if nl:
                result = [json.loads(line) for line in out.splitlines() if line.strip()]
            elif out.strip():
                result = json.loads(out)
        except ValueError:
            problem = "stdout is not JSON"
        if done.returncode != 0:
            problem = f"exit status {done.returncode}: {done.stderr.decode('utf-8', 'replace').strip()[:400]}"
        shown = shorten(result, keep) if not nl else None
        return Step(title, command, done.returncode, seconds, shown, problem), result


def _expect(step: Step, ok: bool, what: str) -> None:
    if step.problem is None and not ok:
        step.problem = what


def _proposal(result: Any, test: Callable[[dict[str, Any]], bool]) -> dict[str, Any] | None:
    found = [p for p in (result or {}).get("proposals", []) if test(p)]
    return found[0] if found else None


def _about_release(item: dict[str, Any]) -> bool:
    text = f"{item.get('condition', '')} {item.get('behavior', '')}".lower()
    return "release" in text and "ready" in text


def _about_reading(item: dict[str, Any]) -> bool:
    return "whole file" in str(item.get("behavior", "")).lower()


def _turn_on(run: _Runner, feature: str, title: str) -> Step:
    key = f"{feature}.enabled"
    step, result = run.call(title, ["config", "set", key, "true"])
    _expect(step, bool(result) and result.get("value") is True, f"{key} should now be true")
    return step


def tour(work: Path) -> Iterator[Step]:
    """Run the loop in `work` (state root `work/state`); yield each step as it finishes."""
    state = work / "state"
    env = {**os.environ, "HABITUS_HOME": str(state)}
    env.pop("HABITUS_DEBUG", None)
    run = _Runner(work, env)
    turns = sample_turns()
    history, final = turns[:-1], turns[-1]
    days = sorted({t["at"][:10] for t in history})
    (work / "conversation.jsonl").write_text("".join(json.dumps(t) + "\n" for t in history))

    step = _turn_on(run, "capture", "Capture is off until you turn it on.")
    yield step
    if step.problem:
        return

    step, results = run.call(
        f"Capture {len(history)} turns of a coding-agent conversation ({days[0]} to {days[-1]}), "
        "one JSON object per line. Hooks do this after every turn.",
        ["capture", "--nl"],
        stdin=(work / "conversation.jsonl").read_bytes(),
        typed_stdin="< conversation.jsonl",
        nl=True,
    )
    appended = sum(r.get("appended", 0) for r in results or [])
    step.shown = {
        "results": len(results or []),
        "appended": appended,
        "last": shorten(results[-1]) if results else None,
    }
    _expect(step, appended == len(history), f"all {len(history)} turns should be stored")
    yield step
    if step.problem:
        return

    step, analyzed = run.call(
        "Analyze the new observations offline: repeated corrections become candidate habits, "
        "stated facts become memory suggestions. Nothing is activated.",
        ["analyze"],
        keep=("analyzer", "records", "proposals", "memory_suggestions"),
    )
    if analyzed:
        step.shown["memory_suggestions"] = [
            {k: s.get(k) for k in ("content", "kind", "day")} for s in analyzed.get("memory_suggestions", [])
        ]
        step.shown["proposals"] = [
            {k: p.get(k) for k in ("condition", "behavior", "stage", "confidence_bp")}
            | {"evidence": len(p.get("evidence", []))}
            for p in analyzed.get("proposals", [])
        ]
    release = _proposal(analyzed, _about_release)
    reading = _proposal(analyzed, _about_reading)
    facts = [s for s in (analyzed or {}).get("memory_suggestions", []) if "main" in s.get("content", "")]
    _expect(
        step,
        release is not None and reading is not None,
        "a habit about verifying a release and one about reading the whole file should be proposed",
    )
    _expect(
        step,
        all(p and p.get("stage") == "reviewable" for p in (release, reading)),
        "both habits were corrected 3 times on 3 days: they should be reviewable",
    )
    _expect(step, bool(facts), "'this repo releases from main only' should be a memory suggestion")
    yield step
    if step.problem:
        return
    assert release is not None

    step, listed = run.call(
        "Review the candidates. The numbers stay valid for 15 minutes.",
        ["habit", "list", "--status", "candidate"],
        keep=("items",),
    )
    items = (listed or {}).get("items", [])
    if listed:
        step.shown["items"] = [
            {k: i.get(k) for k in ("n", "condition", "behavior")}
            | {"checksum": str(i.get("checksum", ""))[:12] + "…", "stage": i.get("evidence", {}).get("stage")}
            for i in items
        ]
    mine = [i for i in items if i.get("id") == release.get("id")]
    _expect(step, len(mine) == 1, "the release habit should be listed")
    yield step
    if step.problem:
        return
    number, checksum = mine[0]["n"], mine[0]["checksum"]

    step, approved = run.call(
        "Approve the release habit by its number; the checksum prefix guards against a wording that changed since you "
        "read it (exit 3, stale).",
        ["habit", "approve", str(number), "--checksum", checksum[:12]],
        keep=("habit", "outcome"),
    )
    habit = (approved or {}).get("habit", {})
    if approved:
        step.shown["habit"] = {k: habit.get(k) for k in ("id", "status", "condition", "behavior", "approved")}
    _expect(
        step,
        habit.get("id") == release.get("id") and habit.get("status") == "active",
        "the habit should now be active",
    )
    yield step
    if step.problem:
        return
    habit_id = habit["id"]

    prompt = final["user"]
    step, chosen = run.call(
        "A new prompt on day 4: select the approved habits that apply to it.",
        ["select"],
        stdin=json.dumps({"prompt": prompt}).encode(),
        typed_stdin=f"echo {shlex.quote(json.dumps({'prompt': prompt}))}",
        keep=("habits", "reason", "judge"),
    )
    _expect(
        step,
        [h.get("id") for h in (chosen or {}).get("habits", [])] == [habit_id],
        "the approved release habit should be selected",
    )
    yield step
    if step.problem:
        return

    event = {
        "session_id": final["session"],
        "transcript_path": str(work / "session.jsonl"),
        "cwd": str(work),
        "hook_event_name": "UserPromptSubmit",
        "prompt": prompt,
    }
    (work / "user-prompt-submit.json").write_text(json.dumps(event) + "\n")
    step, hooked = run.call(
        "The same prompt as Claude Code's UserPromptSubmit hook sends it (`habitus hooks print` shows "
        "the settings). This is exactly what the hook prints; Claude Code adds additionalContext to "
        "the prompt:",
        ["select", "--harness", "claude-code"],
        stdin=json.dumps(event).encode(),
        typed_stdin="< user-prompt-submit.json",
    )
    output = (hooked or {}).get("hookSpecificOutput", {})
    context = output.get("additionalContext", "")
    step.shown = hooked  # whole: this is the exact text that reaches the agent
    step.note = context
    _expect(
        step,
        output.get("hookEventName") == "UserPromptSubmit" and habit["behavior"] in context,
        "the hook should inject the approved habit as additionalContext",
    )
    yield step
    if step.problem:
        return

    assert reading is not None
    others = [i for i in items if i.get("id") == reading.get("id")]
    step, second = run.call(
        "Approve the reading habit too (its number and checksum prefix from the same list).",
        ["habit", "approve", str(others[0]["n"]), "--checksum", others[0]["checksum"][:12]]
        if others
        else ["habit", "approve", str(reading.get("id"))],
        keep=("habit", "outcome"),
    )
    read_habit = (second or {}).get("habit", {})
    if second:
        step.shown["habit"] = {k: read_habit.get(k) for k in ("id", "status", "condition", "behavior")}
    _expect(step, read_habit.get("status") == "active", "the reading habit should now be active")
    yield step
    if step.problem:
        return

    for title, words, wanted, what in (
        (
            "A German prompt: the multilingual model and gate read it like any other.",
            "Lies bitte die ganze Datei src/tally/export.py, nicht nur den Anfang.",
            read_habit.get("id"),
            "the German request to read a file should select the reading habit",
        ),
        (
            "A Japanese prompt asking whether the release is ready.",
            "バージョンを0.7.0に上げました。リリースの準備はできていますか？",
            habit_id,
            "the Japanese release question should select the release habit",
        ),
    ):
        step, picked = run.call(
            title,
            ["select"],
            stdin=json.dumps({"prompt": words}).encode(),
            typed_stdin=f"echo {shlex.quote(json.dumps({'prompt': words}, ensure_ascii=False))}",
            keep=("habits", "reason"),
        )
        _expect(step, wanted in [h.get("id") for h in (picked or {}).get("habits", [])], what)
        yield step
        if step.problem:
            return

    fact = facts[0]["content"]
    step, retained = run.call(
        "Keep the fact the analyzer suggested as a durable memory (it never writes memory itself).",
        ["memory", "retain", fact, "--kind", "fact", "--tags", "release"],
        keep=("store", "created", "memory"),
    )
    memory = (retained or {}).get("memory", {})
    if retained:
        step.shown["memory"] = {k: memory.get(k) for k in ("id", "content", "kind", "tags")}
    _expect(step, memory.get("content") == fact, "the memory should be stored as given")
    yield step
    if step.problem:
        return

    question = "which branch do we release from"
    step, found = run.call(
        "Retrieve it by meaning: full-text search fused with embedding similarity.",
        ["memory", "retrieve", question, "--hybrid"],
        keep=("items", "mode"),
    )
    hits = (found or {}).get("items", [])
    if found:
        step.shown["items"] = [{k: i.get(k) for k in ("id", "content", "bm25", "similarity")} for i in hits]
    _expect(
        step,
        bool(hits) and hits[0].get("id") == memory.get("id"),
        "the retained memory should be found",
    )
    yield step
    if step.problem:
        return

    step = _turn_on(run, "advise", "Advice is off until you turn it on.")
    yield step
    if step.problem:
        return

    pair = {"user": final["user"], "assistant": final["assistant"], "session": final["session"]}
    (work / "final-turn.json").write_text(json.dumps(pair) + "\n")
    claim = final["assistant"].rsplit(". ", 1)[-1]
    step, reviewed = run.call(
        f'The agent answered "{claim}" without checking the package. Review that turn against '
        "the approved habits (as a Stop hook, a concern waits for the next prompt; here it is in the "
        "result).",
        ["advise"],
        stdin=json.dumps(pair).encode(),
        typed_stdin="< final-turn.json",
        keep=("reviewed", "note", "reviewers"),
    )
    note = (reviewed or {}).get("note") or {}
    step.note = note.get("note")
    _expect(
        step,
        note.get("habit") == habit_id and note.get("severity") == "concern",
        "the unverified release claim should be flagged against the approved habit",
    )
    yield step
    if step.problem:
        return

    step, saved = run.call(
        "Back up the state root (observations and models are excluded by design).",
        ["backup", "--out", "backup"],
        keep=("path", "files", "excluded"),
    )
    if saved:
        step.shown["files"] = [f.get("name") for f in saved.get("files", [])]
        step.shown["excluded"] = [f.get("name") for f in saved.get("excluded", [])]
    names = {f.get("name") for f in (saved or {}).get("files", [])}
    _expect(
        step,
        {"ledger.sqlite", "memory.sqlite", "config.toml"} <= names and (work / "backup").is_dir(),
        "the backup should hold the ledger, the memory store and config.toml",
    )
    yield step
    if step.problem:
        return

    step, checked = run.call(
        "Verify the state root: stores, row checksums, files and permissions (report only).",
        ["verify"],
        keep=("ok", "items", "issues"),
    )
    if checked:
        step.shown["items"] = [i.get("name") for i in checked.get("items", []) if i.get("exists")]
    _expect(step, bool(checked) and checked.get("ok") is True, "verify should find no issue")
    yield step
