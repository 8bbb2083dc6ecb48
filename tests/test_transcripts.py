"""Transcript readers on real and synthetic files: turns, branches, outcomes, paging, bounds."""

from __future__ import annotations

import json
import os
from pathlib import Path

import orjson
import pytest

from conftest import SHARED, needs_shared
from habitus.errors import HabitusError
from habitus.harness.transcripts import (
    MAX_LINE_BYTES,
    detect_format,
    last_turn,
    read_tail,
    read_transcript,
    turns_from_pi_messages,
)
from obs_helpers import FIXTURES

REAL = SHARED / "fixtures" / "transcripts"


def test_claude_code_rejected_tool_use_is_a_kept_rejected_turn() -> None:
    chunk = read_transcript(FIXTURES / "claude-code-short.jsonl")
    assert chunk.format == "claude-code" and chunk.eof and chunk.skipped_lines == 0
    assert chunk.session_id == "55604662-cf2a-4331-851a-ec234028f8ca"
    (turn,) = chunk.turns
    assert turn.user == "mix phx.server doesnt seem to start"
    assert turn.assistant == "Let me check the project structure and try running the server to see the error."
    assert [(t.name, t.status) for t in turn.tools] == [("Bash", "rejected"), ("Glob", "rejected")]
    assert turn.outcome == "rejected" and turn.kept
    assert turn.key == "7d48cbd2-6615-4dd8-87f6-38f12b8167d6"  # the prompt record's uuid
    assert turn.user_at == "2026-02-10T21:11:56.846Z"


def test_claude_code_active_branch_compaction_sidechain_and_errors() -> None:
    turns = read_transcript(FIXTURES / "claude-code-branches.jsonl").turns
    assert [(t.user, t.outcome, t.kept) for t in turns] == [
        ("write a hello world in go", "complete", True),
        ("make it print the time, not the date", "complete", True),  # the rewound prompt wins
        ("run the tests", "error", False),  # sent again in the next prompt: the retry carries the words
        ("run the tests again", "complete", True),
    ]
    assert "ABANDONED" not in " ".join(t.assistant for t in turns)
    assert "SIDECHAIN" not in " ".join(t.assistant for t in turns)
    assert [(t.name, t.status) for t in turns[1].tools] == [("Edit", "ok")]
    assert turns[1].stop_reason == "end_turn"


def _cc_record(uuid: str, parent: str | None, kind: str, content: object, **extra: object) -> dict:
    return {
        "type": kind,
        "uuid": uuid,
        "parentUuid": parent,
        "sessionId": "s1",
        "timestamp": "2026-01-01T00:00:00Z",
        "message": {
            "role": kind,
            "content": content,
            **({"stop_reason": "end_turn"} if kind == "assistant" else {}),
        },
        **extra,
    }


def test_claude_code_1_0_compaction_root_keeps_the_prompts_before_it(tmp_path: Path) -> None:
    # Claude Code 1.0 wrote a compaction summary as a new root: no parentUuid, no logicalParentUuid.
    rows = [
        {"type": "summary", "summary": "a title", "leafUuid": "a2"},
        _cc_record("u1", None, "user", "move the cpu backend into its own folder"),
        _cc_record("a1", "u1", "assistant", [{"type": "text", "text": "Moved."}]),
        _cc_record("t1", None, "user", "Read these files", isSidechain=True),
        _cc_record("u2", "a1", "user", "please don't use cuFFT, write the convolution yourself"),
        _cc_record("a2", "u2", "assistant", [{"type": "text", "text": "Done."}]),
        _cc_record(
            "c1",
            None,
            "user",
            "This session is being continued from a previous conversation ...",
            isCompactSummary=True,
        ),
        _cc_record("u3", "c1", "user", "update STATUS.md please"),
        _cc_record("a3", "u3", "assistant", [{"type": "text", "text": "Updated."}]),
    ]
    path = tmp_path / "old.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), "utf-8")
    users = [t.user for t in read_transcript(path).turns if t.source == "user" and t.user]
    assert users == [
        "move the cpu backend into its own folder",
        "please don't use cuFFT, write the convolution yourself",
        "update STATUS.md please",
    ]
    # a rewound branch before a compaction stays abandoned: only the chain into the summary counts
    rows.insert(4, _cc_record("x1", "a1", "user", "ABANDONED prompt"))
    rows.insert(5, _cc_record("x2", "x1", "assistant", [{"type": "text", "text": "ABANDONED answer"}]))
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), "utf-8")
    turns = read_transcript(path).turns
    assert "ABANDONED" not in " ".join(t.user + t.assistant for t in turns)
    assert "update STATUS.md please" in [t.user for t in turns]


def test_pi_excerpt_outcomes_and_keys() -> None:
    chunk = read_transcript(FIXTURES / "pi-excerpt.jsonl")
    assert chunk.format == "pi" and chunk.session_id == "d703a1a9-1b7b-4fb1-b512-c9738b1fe617"
    assert [(t.outcome, t.kept) for t in chunk.turns] == [
        ("aborted", True),  # the user stopped the run: the prompt is still the user's words
        ("complete", True),
        ("complete", True),
        ("error", True),  # "... read it in full": the run failed, the user's words stand
        ("complete", True),
    ]
    assert chunk.turns[3].user.endswith("read it in full") and chunk.turns[3].tools
    correction = chunk.turns[2]
    assert correction.user.startswith("you fucked thet component up REAL fucking good")
    assert correction.key == "1763682237041" and correction.user_at == "2025-11-20T23:43:57.049Z"
    assert all(t.status in ("ok", "error") for t in chunk.turns[1].tools) and len(chunk.turns[1].tools) == 8


def test_pi_tree_entries_follow_the_active_branch(tmp_path: Path) -> None:
    rows = [
        {"type": "session", "version": 3, "id": "sess", "timestamp": "2026-01-01T00:00:00Z", "cwd": "/w"},
        {
            "type": "message",
            "id": "1",
            "parentId": None,
            "message": {"role": "user", "content": "first", "timestamp": 1},
        },
        {
            "type": "message",
            "id": "2",
            "parentId": "1",
            "message": {
                "role": "assistant",
                "content": [{"type": "text", "text": "A"}],
                "stopReason": "stop",
            },
        },
        {
            "type": "message",
            "id": "3",
            "parentId": "2",
            "message": {"role": "user", "content": "old question", "timestamp": 2},
        },
        {
            "type": "message",
            "id": "4",
            "parentId": "3",
            "message": {
                "role": "assistant",
                "content": [{"type": "text", "text": "OLD"}],
                "stopReason": "stop",
            },
        },
        {
            "type": "message",
            "id": "5",
            "parentId": "2",
            "message": {"role": "user", "content": "new question", "timestamp": 3},
        },
        {
            "type": "message",
            "id": "6",
            "parentId": "5",
            "message": {
                "role": "assistant",
                "content": [{"type": "text", "text": "NEW"}],
                "stopReason": "stop",
            },
        },
    ]
    path = tmp_path / "tree.jsonl"
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in rows))
    turns = read_transcript(path).turns
    assert [(t.user, t.assistant, t.key) for t in turns] == [
        ("first", "A", "1"),
        ("new question", "NEW", "3"),  # keys: the messages' own timestamps
    ]


def test_codex_rollout_turns() -> None:
    chunk = read_transcript(FIXTURES / "codex-rollout.jsonl")
    assert chunk.format == "codex" and chunk.session_id == "019a2d7a-41c4-78b1-b7cc-a45d62a89cd5"
    assert [(t.user, t.outcome) for t in chunk.turns] == [
        ("list the python files", "complete"),
        ("no, use ripgrep for listing files, never ls", "complete"),
        ("install it and retry", "aborted"),
        ("use brew, not apt", "complete"),
    ]
    assert [(t.name, t.status) for t in chunk.turns[1].tools] == [("shell", "error")]
    assert chunk.turns[0].assistant == "There are two: `app.py` and `util.py`."  # event and item not doubled


def test_codex_legacy_rollout_turns() -> None:
    chunk = read_transcript(FIXTURES / "codex-legacy.jsonl")
    assert chunk.format == "codex" and chunk.session_id == "5973b6c0-94b8-487b-a530-2aeb6098ae0e"
    assert [(t.user, t.assistant) for t in chunk.turns] == [
        ("rename foo to bar", "Renamed foo to bar in x.py."),
        ("also in tests", "Done in tests/test_x.py too."),
    ]


def test_turns_from_pi_agent_end_messages() -> None:
    messages = [
        {"role": "user", "content": [{"type": "text", "text": "use tabs"}], "timestamp": 1763681630791},
        {
            "role": "assistant",
            "content": [{"type": "toolCall", "id": "c1", "name": "edit"}],
            "stopReason": "toolUse",
        },
        {"role": "toolResult", "toolCallId": "c1", "toolName": "edit", "content": [], "isError": True},
        {
            "role": "assistant",
            "content": [{"type": "text", "text": "Switched to tabs."}],
            "stopReason": "stop",
        },
    ]
    (turn,) = turns_from_pi_messages(messages, session_id="s")
    assert (turn.user, turn.assistant, turn.key, turn.session_id) == (
        "use tabs",
        "Switched to tabs.",
        "1763681630791",
        "s",
    )
    assert [(t.name, t.status) for t in turn.tools] == [("edit", "error")]
    assert turn.outcome == "complete" and turn.kept


def test_paging_with_offsets_reads_only_the_new_part(tmp_path: Path) -> None:
    source = (FIXTURES / "codex-rollout.jsonl").read_bytes().splitlines(keepends=True)
    path = tmp_path / "growing.jsonl"
    path.write_bytes(b"".join(source[:11]))  # through the first task_complete
    first, end = read_transcript(path)
    assert [t.user for t in first] == ["list the python files"] and end == path.stat().st_size
    with open(path, "ab") as handle:
        handle.write(b"".join(source[11:]))
    later, end2 = read_transcript(path, start_offset=end)
    assert [t.user for t in later] == [
        "no, use ripgrep for listing files, never ls",
        "install it and retry",
        "use brew, not apt",
    ]
    assert end2 == path.stat().st_size
    assert read_transcript(path, start_offset=end2).turns == []


def test_an_unfinished_last_line_waits_for_the_next_read(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    full = (FIXTURES / "codex-legacy.jsonl").read_bytes()
    path.write_bytes(full[:-20])
    chunk = read_transcript(path)
    assert chunk.end_offset < len(full) - 20 and chunk.skipped_lines == 0
    path.write_bytes(full)
    assert (
        read_transcript(path, start_offset=chunk.end_offset).turns[-1].assistant
        == "Done in tests/test_x.py too."
    )


def test_a_mid_line_offset_moves_to_the_next_line() -> None:
    turns = read_transcript(FIXTURES / "codex-legacy.jsonl", start_offset=5).turns
    assert [t.user for t in turns] == ["rename foo to bar", "also in tests"]


def test_hold_last_keeps_a_turn_whole_across_windows() -> None:
    path = FIXTURES / "codex-rollout.jsonl"
    seen, offset, windows = [], 0, 0
    while True:
        chunk = read_transcript(path, start_offset=offset, max_bytes=2200, hold_last=True)
        windows += 1
        seen += [(t.user, t.assistant) for t in chunk.turns]
        if chunk.eof:
            break
        assert chunk.end_offset > offset
        offset = chunk.end_offset
    assert windows >= 2
    assert seen == [(t.user, t.assistant) for t in read_transcript(path).turns]


def test_a_turn_larger_than_the_window_still_advances() -> None:
    path = FIXTURES / "codex-rollout.jsonl"
    chunk = read_transcript(path, max_bytes=300, hold_last=True)
    assert chunk.end_offset > 0 and not chunk.eof  # paging never stalls on one long turn


def test_tail_reads_only_the_end_and_widens_for_the_prompt() -> None:
    path = FIXTURES / "pi-excerpt.jsonl"
    turn, _ = last_turn(path)
    assert turn is not None and turn.user.startswith("ok, i manually removed almost all chalk uses")
    assert not turn.continued
    narrow = read_tail(path, max_bytes=200)
    assert narrow.turns[-1].user == turn.user  # the window doubled until the prompt was inside


REAL_DEV = Path(__file__).parent / "fixtures" / "analyze_real_dev"


def test_a_stop_reads_claude_code_s_last_turn_from_the_end_only() -> None:
    """A 3.4 MB real session: the Stop hook's read covers the last turns, not the 4 MiB window."""
    path = REAL_DEV / "entire-cc90f6622c5b-1.jsonl"
    turn, chunk = last_turn(path, format="claude-code")
    whole = read_tail(path, format="claude-code")
    assert turn == whole.turns[-1] and turn is not None and turn.user == "commit"
    assert 2 <= len(chunk.turns) < len(whole.turns) // 4


def test_the_last_claude_code_turn_is_the_same_from_a_small_window(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Cut a real session after every assistant record (where a Stop can come) and read its last turn
    from a 16 KiB first window: the same turn as from 4 MiB, also where the window would start between
    a slash command (/pr) and the skill text it expands to, which alone reads as the prompt."""
    from habitus.harness import transcripts

    monkeypatch.setitem(transcripts.FIRST_WINDOW, "claude-code", 16 * 1024)
    data = (REAL_DEV / "entire-8e0a64736bc7-0.jsonl").read_bytes()
    cut = tmp_path / "session.jsonl"
    end = compared = 0
    for line in data.splitlines(keepends=True):
        end += len(line)
        if b'"type":"assistant"' not in line.replace(b" ", b""):
            continue
        cut.write_bytes(data[:end])
        turn, _ = last_turn(cut, format="claude-code")
        assert turn == read_tail(cut, format="claude-code").turns[-1], end
        compared += 1
    assert compared > 50


def test_missing_file_is_not_found(tmp_path: Path) -> None:
    with pytest.raises(HabitusError) as info:
        read_transcript(tmp_path / "nope.jsonl")
    assert info.value.code == "not_found"


def test_a_folder_is_a_bad_transcript(tmp_path: Path) -> None:
    with pytest.raises(HabitusError) as info:
        read_transcript(tmp_path)
    assert info.value.code == "bad_transcript"


def test_binary_and_unknown_files_are_refused(tmp_path: Path) -> None:
    binary = tmp_path / "blob.bin"
    binary.write_bytes(os.urandom(4096) + b"\x00" + os.urandom(100))
    unknown = tmp_path / "other.jsonl"
    unknown.write_text('{"hello": "world"}\n{"a": 1}\n')
    latin = tmp_path / "latin.jsonl"
    latin.write_bytes('{"type": "session", "cwd": "caf\xe9"}\n'.encode("latin-1"))
    for path in (binary, unknown, latin):
        with pytest.raises(HabitusError) as info:
            read_transcript(path)
        assert info.value.code == "bad_transcript", path
    assert detect_format(FIXTURES / "claude-code-short.jsonl") == "claude-code"


def test_a_200_mb_sparse_file_is_refused_after_reading_its_start(tmp_path: Path) -> None:
    path = tmp_path / "sparse.jsonl"
    with open(path, "wb") as handle:
        handle.truncate(200 * 1024 * 1024)
    with pytest.raises(HabitusError) as info:
        read_transcript(path)
    assert info.value.code == "bad_transcript" and "binary" in info.value.message


def test_garbage_lines_are_skipped_and_counted(tmp_path: Path) -> None:
    rows = (FIXTURES / "codex-legacy.jsonl").read_text().splitlines()
    rows.insert(3, "{not json")
    rows.insert(5, '["a list"]')
    path = tmp_path / "t.jsonl"
    path.write_text("\n".join(rows) + "\n")
    chunk = read_transcript(path)
    assert chunk.skipped_lines == 2 and len(chunk.turns) == 2


def test_an_oversized_line_is_skipped_without_holding_it(tmp_path: Path) -> None:
    rows = (FIXTURES / "codex-legacy.jsonl").read_bytes().splitlines(keepends=True)
    huge = (
        b'{"type":"message","role":"assistant","content":[{"type":"output_text","text":"'
        + b"x" * (MAX_LINE_BYTES + 100)
        + b'"}]}\n'
    )
    path = tmp_path / "t.jsonl"
    path.write_bytes(b"".join(rows[:3]) + huge + b"".join(rows[3:]))
    chunk = read_transcript(path)
    assert chunk.skipped_lines == 1
    assert [t.assistant for t in chunk.turns] == [
        "Renamed foo to bar in x.py.",
        "Done in tests/test_x.py too.",
    ]


@needs_shared
def test_real_claude_code_sessions() -> None:
    folder = REAL / "claude-code"
    big = read_transcript(folder / "258c7280-ae70-4798-800f-63464d01a85d.jsonl")
    assert big.eof and big.skipped_lines == 0
    # Background task notices are recorded as tool turns, never as the user's words.
    assert [(t.source, t.user.split("\n")[0]) for t in big.turns] == [
        ("user", "Implement spotter-gqc"),
        ("tool", "<task-notification>"),
        ("tool", "<task-notification>"),
        ("user", "did you push?"),
    ]
    assert len(big.turns[0].tools) + len(big.turns[1].tools) > 150  # before and after compaction
    assert big.turns[0].outcome == "rejected"
    heavy = read_transcript(folder / "tool_heavy.jsonl").turns
    assert [(t.source, t.outcome, t.kept) for t in heavy] == [
        ("user", "interrupted", True),  # interrupted: the prompt is still the user's
        ("meta", "complete", False),  # the local-command caveat
        ("command", "complete", False),  # /mcp: nothing happened
        ("command", "complete", False),  # its output
        ("user", "interrupted", True),
    ]
    assert heavy[2].user == "/mcp"
    sub = read_transcript(folder / "subagent.jsonl").turns
    assert sub[0].user.startswith("/handgemacht:create-beads websearch") and sub[0].source == "command"
    assert sub[1].kept and sub[1].assistant.startswith("## Beads Created") and sub[1].source == "user"


@needs_shared
def test_real_pi_session() -> None:
    chunk = read_transcript(REAL / "pi" / "large-session.jsonl")
    assert chunk.format == "pi" and chunk.eof and len(chunk.turns) == 88
    outcomes = [t.outcome for t in chunk.turns]
    assert outcomes.count("aborted") == 21 and outcomes.count("error") == 1
    # Aborted runs and the one API error keep their prompts (a correction often comes right after an
    # abort; the errored run is not sent again).
    assert sum(t.kept for t in chunk.turns) == 88
    assert {t.source for t in chunk.turns} == {"user", "command"}  # "/mode", "/model": Pi commands
    assert any("no rgb indices" in t.user for t in chunk.turns if t.kept)


def _write_big_claude_transcript(path: Path, target: int) -> list[str]:
    """Stream a Claude Code transcript of about `target` bytes: mostly big progress records, a few
    real turns spread through it, and one line longer than MAX_LINE_BYTES."""
    prompts = [f"prompt number {i}: please keep the tests green" for i in range(5)]
    pad = "p" * 20_000
    written, parent, n = 0, None, 0
    marks = {int(target * f) for f in (0.0, 0.3, 0.55, 0.8, 0.97)}
    marks = sorted(marks)
    with open(path, "wb") as out:

        def put(record: dict) -> None:
            nonlocal written
            data = orjson.dumps(record) + b"\n"
            out.write(data)
            written += len(data)

        turn = 0
        while written < target:
            n += 1
            if turn < len(marks) and written >= marks[turn]:
                uid = f"user-{turn}"
                put(
                    {
                        "type": "user",
                        "uuid": uid,
                        "parentUuid": parent,
                        "sessionId": "big",
                        "timestamp": "2026-01-01T00:00:00Z",
                        "message": {"role": "user", "content": prompts[turn]},
                    }
                )
                aid = f"assistant-{turn}"
                put(
                    {
                        "type": "assistant",
                        "uuid": aid,
                        "parentUuid": uid,
                        "sessionId": "big",
                        "timestamp": "2026-01-01T00:00:01Z",
                        "message": {
                            "role": "assistant",
                            "content": [{"type": "text", "text": f"done {turn}"}],
                        },
                    }
                )
                parent = aid
                turn += 1
                continue
            if n == 3000:
                out.write(b'{"type":"progress","data":"' + b"z" * (MAX_LINE_BYTES + 1024) + b'"}\n')
                written += MAX_LINE_BYTES + 1050
                continue
            uid = f"progress-{n}"
            put(
                {
                    "type": "progress",
                    "uuid": uid,
                    "parentUuid": parent,
                    "sessionId": "big",
                    "data": {"type": "hook_progress", "pad": pad},
                }
            )
            parent = uid
    return prompts


@pytest.mark.slow
def test_a_200_mb_transcript_imports_in_bounded_memory(tmp_path: Path, state_root: Path) -> None:
    """The real command, in its own process: every turn found, the long line skipped, memory bounded."""
    import subprocess
    import sys

    path = tmp_path / "big.jsonl"
    prompts = _write_big_claude_transcript(path, 200 * 1024 * 1024)
    assert path.stat().st_size >= 200 * 1024 * 1024
    from obs_helpers import enable, payloads

    enable(state_root)
    probe = (
        "import sys\n"
        "sys.argv = ['habitus', 'capture', '--transcript', sys.argv[1]]\n"
        "from habitus.launcher import main\n"
        "try:\n    main()\nexcept SystemExit as exc:\n    code = exc.code\n"
        # VmHWM, not ru_maxrss: ru_maxrss survives exec, so it would report the forking test worker's size
        "hwm = [l for l in open('/proc/self/status') if l.startswith('VmHWM:')][0].split()[1]\n"
        "sys.stderr.write('MAXRSS=%s\\n' % hwm)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe, str(path)],
        capture_output=True,
        timeout=600,
        env={**os.environ},
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(done.stdout)
    assert result["appended"] == 5 and result["skipped_lines"] == 1
    assert [p["user"] for p in payloads(state_root)] == prompts
    rss_kib = int(done.stderr.decode().rsplit("MAXRSS=", 1)[1].split()[0])
    assert rss_kib < 400 * 1024, f"peak memory {rss_kib} KiB"


def _cc(
    uuid: str, parent: str | None, kind: str, content: object, at: str, **more: object
) -> dict[str, object]:
    role = "assistant" if kind == "assistant" else "user"
    row: dict[str, object] = {"type": kind, "uuid": uuid, "parentUuid": parent, "timestamp": at}
    row["sessionId"] = "s-1"
    if kind in ("user", "assistant"):
        row["message"] = {"role": role, "content": content}
    return {**row, **more}


_REJECTED = (
    "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it was a "
    "file edit, the new_string was NOT written to the file). To tell you how to proceed, the user said:\n"
)


def test_claude_code_a_rejection_reason_is_the_users_next_prompt(tmp_path: Path) -> None:
    rows = [
        _cc("u1", None, "user", "fix the flaky test", "2026-01-01T10:00:00Z"),
        _cc(
            "a1",
            "u1",
            "assistant",
            [{"type": "tool_use", "id": "t1", "name": "Bash", "input": {}}],
            "2026-01-01T10:00:05Z",
        ),
        _cc(
            "r1",
            "a1",
            "user",
            [
                {
                    "type": "tool_result",
                    "tool_use_id": "t1",
                    "content": _REJECTED + "wait, let's talk about this first",
                }
            ],
            "2026-01-01T10:00:09Z",
            toolUseResult="User rejected tool use",
        ),
        _cc(
            "a2",
            "r1",
            "assistant",
            [{"type": "text", "text": "Sure, here is my plan."}],
            "2026-01-01T10:00:20Z",
        ),
    ]
    path = tmp_path / "s.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    turns = read_transcript(path).turns
    assert [(t.user, t.outcome, t.source) for t in turns] == [
        ("fix the flaky test", "rejected", "user"),
        ("wait, let's talk about this first", "complete", "user"),
    ]
    assert turns[1].assistant == "Sure, here is my plan." and turns[1].user_at == "2026-01-01T10:00:09Z"


def test_claude_code_a_lost_record_does_not_cut_the_conversation(tmp_path: Path) -> None:
    """A copy that dropped one record (entire's checkpoint excerpts drop progress lines) links to a
    record the file does not hold: the chain continues from the record before it in the file."""
    rows = [
        _cc("u1", "older", "user", "do not stash anything, read the files you need", "2026-01-01T10:00:00Z"),
        _cc("a1", "u1", "assistant", [{"type": "text", "text": "Reading them."}], "2026-01-01T10:00:05Z"),
        _cc("p1", "lost", "progress", None, "2026-01-01T10:00:06Z"),
        _cc("u2", "p1", "user", "add a test", "2026-01-01T10:01:00Z"),
        _cc("a2", "u2", "assistant", [{"type": "text", "text": "Added."}], "2026-01-01T10:01:05Z"),
    ]
    path = tmp_path / "s.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    assert [t.user for t in read_transcript(path).turns] == [
        "do not stash anything, read the files you need",
        "add a test",
    ]
    # a tail read starting after the first prompt does not reach back past its window
    start = len((json.dumps(rows[0]) + "\n").encode())
    assert [t.user for t in read_transcript(path, start_offset=start).turns if t.user] == ["add a test"]
