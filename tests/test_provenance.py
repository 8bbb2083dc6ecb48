"""Capture keeps what a human said apart from what only looks like it: teammate messages, pasted plans,
commands and their output, isMeta records, hook feedback, tool results and subagent prompts are stored
with their source and never read as the user's words; interrupted and aborted turns keep theirs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from analyze_helpers import FRICTION
from conftest import SHARED, needs_shared, run
from habitus.harness.transcripts import read_transcript
from habitus.learn.local import observation
from obs_helpers import enable, payloads

REAL = SHARED / "fixtures" / "transcripts"


class Session:
    """A Claude Code session file written record by record, linked by uuid/parentUuid."""

    def __init__(self, path: Path) -> None:
        self.path, self.parent, self.n = path, None, 0

    def add(self, kind: str, content: Any, at: str, **extra: Any) -> None:
        self.n += 1
        uid = f"r{self.n}"
        record = {
            "parentUuid": self.parent,
            "isSidechain": False,
            "type": kind,
            "uuid": uid,
            "sessionId": "team-1",
            "timestamp": at,
            "message": {"role": kind, "content": content},
            **extra,
        }
        with self.path.open("a") as out:
            out.write(json.dumps(record) + "\n")
        self.parent = uid

    def turn(self, prompt: str, answer: str, at: str, **extra: Any) -> None:
        self.add("user", prompt, at, **extra)
        self.add("assistant", [{"type": "text", "text": answer}], at)


@pytest.mark.parametrize(
    ("text", "source"),
    [
        (
            '<teammate-message teammate_id="reviewer">no, never print from library code</teammate-message>',
            "teammate",
        ),
        ("Implement the following plan:\n\n# Plan: add a cache\n1. ...", "plan"),
        ("<command-message>review</command-message>\n<command-name>/review</command-name>", "command"),
        ("<local-command-stdout>Reconnected to tidewave.</local-command-stdout>", "command"),
        ("<task-notification>\n<task-id>b0</task-id>\n<status>completed</status>", "tool"),
        ("Stop hook feedback:\n[habitus advise: blocker 1] run the tests", "hook"),
        ('<hook_prompt hook_run_id="stop:5">Check the tests.</hook_prompt>', "hook"),
        ("<system-reminder>The user opened a file</system-reminder>", "meta"),
        ("/compact keep the API notes", "command"),
        (  # Codex's /review rubric, as Codex Desktop 0.142 writes it into the rollout
            "## Code review guidelines:\n# Review Guidelines\n\nYou are acting as a reviewer for a proposed code "
            "change made by another engineer.\n\nDo not return JSON.",
            "command",
        ),
        (
            "# Review guidelines:\n\nYou are acting as a reviewer for a proposed code change made by another "
            "engineer.",
            "command",
        ),
        (  # a skill the user named, which Codex sends as a user message of its own (Codex Desktop 0.141)
            "<skill>\n<name>worktree</name>\n<path>~/.agents/skills/worktree/SKILL.md</path>\n---\n"
            "name: worktree\n---\n\n**HARD RULE:** Do NOT investigate the problem.\n\n</skill>",
            "command",
        ),
        ("the skill> section of the docs is wrong, never edit it by hand", "user"),
        ("review guidelines: keep every review under ten comments", "user"),
        ("can you review my change? act as a reviewer for a proposed code change", "user"),
        ("no, never print from library code", "user"),
        ("/home/me/app is the wrong folder, use ~/work/app", "user"),
        ("please implement the following plan of yours only after the tests pass", "user"),
    ],
)
def test_who_wrote_a_prompt(text: str, source: str) -> None:
    from habitus.harness.provenance import source_of

    assert source_of(text)[0] == source


def test_a_team_session_stores_every_prompt_with_its_source(state_root: Path, tmp_path: Path) -> None:
    enable(state_root)
    session = Session(tmp_path / "team.jsonl")
    session.turn("add a config loader", "Added load_config().", "2026-05-04T09:00:00Z")
    session.turn(
        '<teammate-message teammate_id="reviewer" summary="review">no, don\'t print from library code. '
        "return the message to the caller</teammate-message>",
        "Done.",
        "2026-05-04T09:05:00Z",
    )
    session.turn(
        "Implement the following plan:\n\n1. never print from library code", "Done.", "2026-05-04T09:10:00Z"
    )
    session.add(
        "user",
        "<command-message>review</command-message>\n<command-name>/review</command-name>\n<command-args>"
        "</command-args>",
        "2026-05-04T09:20:00Z",
    )
    session.add("user", "Review the diff and list the problems.", "2026-05-04T09:20:00Z", isMeta=True)
    session.add(
        "assistant",
        [{"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "git diff"}}],
        "2026-05-04T09:20:01Z",
    )
    session.add(
        "user",
        [{"type": "tool_result", "tool_use_id": "t1", "content": "diff --git a/x b/x"}],
        "2026-05-04T09:20:02Z",
    )
    session.add("assistant", [{"type": "text", "text": "Two problems."}], "2026-05-04T09:20:03Z")
    session.turn(
        "again printing from library code?! return errors to the caller", "Fixed.", "2026-05-04T09:30:00Z"
    )
    session.add("user", "[Request interrupted by user]", "2026-05-04T09:30:05Z")
    session.turn(
        "Stop hook feedback:\n[habitus advise: concern 2] the tests were not run",
        "Ran them.",
        "2026-05-04T09:31:00Z",
        isMeta=True,
    )
    session.add("user", "no, read the whole file first", "2026-05-04T09:40:00Z")
    session.add("user", "[Request interrupted by user for tool use]", "2026-05-04T09:40:02Z")
    assert run(["capture", "--transcript", str(session.path)]).result["appended"] == 7
    stored = [(p["source"], p["outcome"], p["user"][:24]) for p in payloads(state_root)]
    assert (
        stored
        == [
            ("user", "complete", "add a config loader"),
            ("teammate", "complete", "<teammate-message teamma"),
            ("plan", "complete", "Implement the following "),
            ("command", "complete", "/review"),  # its expanded isMeta text belongs to the command
            ("user", "interrupted", "again printing from libr"),  # an interrupted turn keeps its words
            ("hook", "complete", "Stop hook feedback:\n[hab"),
            ("user", "interrupted", "no, read the whole file f"[:24]),  # interrupted before any answer
        ]
    )
    assert [t["status"] for t in payloads(state_root)[3]["tools"]] == ["ok"]  # a tool result is no prompt


def test_analyze_never_reads_another_source_as_the_users_words(state_root: Path, tmp_path: Path) -> None:
    """The corrections that make a reviewable candidate when the user writes them (test_analyze_run)
    make nothing when a teammate, a plan, a hook or a subagent wrote them."""
    enable(state_root)
    session = Session(tmp_path / "team.jsonl")
    wrappers = [
        lambda t: f'<teammate-message teammate_id="lead">{t}</teammate-message>',
        lambda t: f"Implement the following plan:\n\n{t}",
        lambda t: f"Stop hook feedback:\n{t}",
    ]
    for i, (user, assistant, at) in enumerate(FRICTION):
        session.turn(wrappers[i % len(wrappers)](user), assistant, at)
    assert run(["capture", "--transcript", str(session.path)]).result["appended"] == len(FRICTION)
    assert {p["source"] for p in payloads(state_root)} == {"teammate", "plan", "hook"}
    out = run(["analyze"])
    assert out.exit == 0, out.stderr
    assert out.result["records"] == len(FRICTION) and out.result["proposals"] == []


def test_an_observation_of_another_source_reads_as_no_words() -> None:
    record = {"gen": 1, "seq": 1, "checksum": "c", "payload": {"user": "no, use tabs", "source": "teammate"}}
    assert observation(0, record).user == "" and observation(0, record).source == "teammate"
    older = {"gen": 1, "seq": 2, "checksum": "c", "payload": {"user": "no, use tabs"}}  # before sources
    assert observation(0, older).user == "no, use tabs" and observation(0, older).source == "user"


def test_a_pi_abort_keeps_the_prompt_and_a_correction_after_it(state_root: Path) -> None:
    enable(state_root)
    messages = [
        {
            "role": "user",
            "content": [{"type": "text", "text": "read the full file, not the first 50 lines"}],
            "timestamp": 1,
        },
        {"role": "assistant", "content": [], "stopReason": "aborted", "timestamp": 2},
    ]
    out = run(
        ["capture", "--harness", "pi"],
        {"hook_event_name": "agent_end", "session_id": "p", "messages": messages},
    )
    assert out.exit == 0
    (stored,) = payloads(state_root)
    assert (stored["user"], stored["outcome"], stored["source"]) == (
        "read the full file, not the first 50 lines",
        "aborted",
        "user",
    )


@needs_shared
def test_the_real_pi_session_keeps_the_corrections_of_its_aborted_runs() -> None:
    turns = read_transcript(REAL / "pi" / "large-session.jsonl").turns
    aborted = [t for t in turns if t.outcome == "aborted" and t.kept]
    assert len(aborted) == 21 and all(t.source in ("user", "command") for t in aborted)
    assert any("invalid themes must NEVER explode" in t.user for t in aborted if t.source == "user")


@needs_shared
def test_the_real_claude_code_sessions_hold_no_false_user_words() -> None:
    for name in (
        "258c7280-ae70-4798-800f-63464d01a85d.jsonl",
        "tool_heavy.jsonl",
        "subagent.jsonl",
        "short.jsonl",
    ):
        for turn in read_transcript(REAL / "claude-code" / name).turns:
            if turn.source == "user":
                assert not turn.user.startswith(("<", "[Request interrupted")), (name, turn.user[:80])
