"""Hostile stdin for every command in the click tree (new commands are covered without editing this file).

Every command runs on a state root that has something in every store. The contract checked on each run:

- no traceback, and never exit 1 `failed` (an internal error is a bug, whatever the input);
- a failure is exactly one JSON error object on stderr, whose `exit` is the process's exit status, and
  nothing on stdout (in hook mode: exit 0, no output, one line in errors.jsonl);
- a failure changes nothing in the state root (compared logically, store by store and byte by byte);
- input that is not one JSON object (invalid UTF-8, NaN/Infinity, nesting past 1,024, truncated, an
  array, over 8 MiB) is refused with exit 2 and the matching code by every command that reads stdin,
  while a command that does not read stdin behaves exactly as it does with empty stdin;
- any JSON object (random keys and values, wrong types, deep nesting, huge strings) is either a valid
  request (exit 0) or refused with a documented code, and the root still verifies afterwards.
"""

from __future__ import annotations

import io
import json
import os
import shutil
from pathlib import Path
from typing import Any

import orjson
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import Run, cli_root, run
from habitus.errors import CODES
from reliability_helpers import (
    REQUIRED,
    commands,
    fingerprint,
    invocations,
    option_names,
    required_params,
    rich_root,
)

INPUT_CODES = {"bad_json", "bad_utf8", "bad_request", "request_too_large"}
HOOK_LOGS = ("errors.jsonl", "errors.jsonl.1")
MiB = 1024 * 1024

# (name, stdin, code) that no command reading stdin may accept.
NOT_ONE_OBJECT: list[tuple[str, bytes, str]] = [
    ("invalid utf-8", b'{"prompt": "caf\xe9", "content": "\xff\xfe"}', "bad_utf8"),
    ("overlong utf-8", b'{"content": "\xc0\xaf"}', "bad_utf8"),
    ("utf-16", '{"content": "x"}'.encode("utf-16"), "bad_utf8"),
    ("NaN", b'{"content": "x", "importance": NaN}', "bad_json"),
    ("Infinity", b'{"confidence_bp": Infinity}', "bad_json"),
    ("-Infinity", b'{"limit": -Infinity}', "bad_json"),
    ("nesting past 1024", b'{"metadata": ' + b"[" * 3000 + b"]" * 3000 + b"}", "bad_json"),
    ("truncated", b'{"content": "half', "bad_json"),
    ("two objects", b'{"content": "a"} {"content": "b"}', "bad_json"),
    ("trailing garbage", b'{"content": "a"}x', "bad_json"),
    ("raw control character", b'{"content": "a\x00b"}', "bad_json"),
    ("array", b'[{"content": "a"}]', "bad_request"),
    ("string", b'"content"', "bad_request"),
    ("number", b"42", "bad_request"),
    ("null", b"null", "bad_request"),
    ("over 8 MiB", b'{"content": "' + b"x" * (8 * MiB) + b'"}', "request_too_large"),
]


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("rich") / "state"
    rich_root(root)
    return root


@pytest.fixture(autouse=True)
def isolated(state_root: Path, template: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the rich root as HABITUS_HOME; run from a folder outside any git repository (no
    project store), with systemd units going to a private folder."""
    shutil.copytree(template, state_root)
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    return state_root


def hook_mode(args: list[str]) -> bool:
    return "--harness" in args and args[0] != "hooks"


def logged(root: Path) -> list[dict[str, Any]]:
    path = root / "errors.jsonl"
    return [orjson.loads(line) for line in path.read_bytes().splitlines()] if path.exists() else []


def check_contract(out: Run, args: list[str]) -> None:
    """What holds for any stdin: no traceback, no internal error, one error object on failure."""
    assert b"Traceback" not in out.stderr, out.stderr[-3000:]
    if hook_mode(args):
        assert out.exit == 0 and out.stderr == b"", (out.exit, out.stderr)
        return
    if out.exit == 0:
        return
    error = out.error  # exactly one JSON object on stderr, with exit equal to the status
    assert error["code"] in CODES and error["code"] != "failed", error
    if not (args[0] == "verify" and error["code"] == "issues_found"):
        assert out.stdout == b"", out.stdout[:500]


def reads_stdin(args: list[str], root: Path) -> bool:
    """Whether the command reads stdin: it refuses invalid UTF-8 (or, in hook mode, logs that it did)."""
    before = len(logged(root))
    out = run(args, stdin=NOT_ONE_OBJECT[0][1])
    if hook_mode(args):
        return len(logged(root)) > before
    return out.exit == 2 and out.error["code"] == "bad_utf8"


class Tripwire(io.BytesIO):
    """A stdin that notes whether a command read from it (click probes it with read(0): not a read)."""

    touched = False

    def read(self, size: int | None = -1) -> bytes:
        self.touched = self.touched or size != 0
        return super().read(size)

    def read1(self, size: int = -1) -> bytes:
        self.touched = self.touched or size != 0
        return super().read1(size)

    def readinto(self, buffer: Any) -> int:
        self.touched = True
        return super().readinto(buffer)

    def readline(self, size: int | None = -1) -> bytes:
        self.touched = True
        return super().readline(size)

    def readlines(self, hint: int | None = -1) -> list[bytes]:
        self.touched = True
        return super().readlines(hint)

    def __iter__(self) -> Any:
        self.touched = True
        return super().__iter__()


def run_reading(args: list[str], stdin: io.BytesIO) -> Run:
    outcome = CliRunner().invoke(cli_root, args, input=stdin, catch_exceptions=False)
    return Run(outcome.exit_code, outcome.stdout_bytes, outcome.stderr_bytes)


def ids(invocation: list[str]) -> str:
    return " ".join(invocation)


@pytest.mark.parametrize("args", invocations(), ids=ids)
def test_input_that_is_not_one_object_is_refused_and_changes_nothing(
    state_root: Path, args: list[str]
) -> None:
    skip = ("locks", *HOOK_LOGS) if hook_mode(args) else ("locks",)
    # First with a stdin that notes reads: a command that reads not one byte is no reader, and no
    # input can change its outcome, so this run and one with empty stdin stand for every row of
    # NOT_ONE_OBJECT (demo ran its whole tour 18 times for this).
    tripwire = Tripwire(NOT_ONE_OBJECT[0][1])
    hostile = run_reading(args, tripwire)
    check_contract(hostile, args)
    if not tripwire.touched:
        baseline = run(args)
        check_contract(baseline, args)
        assert hostile.exit == baseline.exit, hostile.stderr[:300]
        if hostile.exit:
            assert hostile.error["code"] == baseline.error["code"]
        return
    readers = reads_stdin(args, state_root)
    if not readers:
        baseline = run(args)
        check_contract(baseline, args)
    for name, stdin, code in NOT_ONE_OBJECT:
        before = fingerprint(state_root, skip=skip)
        count = len(logged(state_root))
        out = run(args, stdin=stdin)
        check_contract(out, args)
        if readers and hook_mode(args):
            assert out.stdout == b"", name
            entries = logged(state_root)[count:]
            assert [e["code"] for e in entries] == [code], (name, entries)
            assert fingerprint(state_root, skip=skip) == before, name
        elif readers:
            assert out.exit == 2 and out.error["code"] == code, (name, out.exit, out.stderr[:300])
            assert fingerprint(state_root, skip=skip) == before, name
        else:  # stdin is not read: the outcome is the same as with empty stdin
            assert out.exit == baseline.exit, (name, out.stderr[:300])
            if out.exit:
                assert out.error["code"] == baseline.error["code"], name


def test_the_commands_that_read_stdin_are_found(state_root: Path) -> None:
    """Guards the test above against passing vacuously: these read a request on stdin."""
    for args in (
        ["capture"],
        ["capture", "--harness", "claude-code"],
        ["select"],
        ["analyze"],
        ["advise"],
        ["habit", "declare"],
        ["habit", "approve"],
        ["memory", "retain"],
        ["memory", "retain", "--nl"],
        ["memory", "import"],
        ["memory", "observe"],
        ["config", "set"],
        ["restore"],
        ["dedupe", "resolve"],
    ):
        assert reads_stdin(args, state_root), args
    stdin = Tripwire(b"{}")
    run_reading(["config", "set"], stdin)
    assert stdin.touched  # the shortcut for commands that read nothing sees a command that reads


def test_every_required_parameter_has_a_filler() -> None:
    for path, command in commands().items():
        if required_params(command):
            assert path in REQUIRED, f"add a filler for `habitus {' '.join(path)}` to REQUIRED"


# -- any JSON object ----------------------------------------------------------------------------

KEYS = sorted(
    {
        *(name for command in commands().values() for name in option_names(command)),
        *[
            "id",
            "content",
            "kind",
            "scope",
            "namespace",
            "tags",
            "importance",
            "confidence",
            "relevance",
            "expires_at",
            "metadata",
            "store",
        ],
        *[
            "query",
            "limit",
            "offset",
            "order_by",
            "order",
            "stream",
            "messages",
            "role",
            "text",
            "at",
            "tool",
            "error",
            "transcript",
            "format",
        ],
        *[
            "condition",
            "behavior",
            "polarity",
            "confidence_bp",
            "checksum",
            "action",
            "keep",
            "key",
            "value",
            "path",
            "prompt",
            "context",
        ],
        *[
            "user",
            "assistant",
            "session",
            "cwd",
            "tools",
            "hook_event_name",
            "transcript_path",
            "session_id",
            "stop_hook_active",
        ],
        *[
            "last_assistant_message",
            "type",
            "turn_id",
            "timestamp",
            "model",
            "input-messages",
            "last-assistant-message",
        ],
    }
)

scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**64 - 1)
    | st.integers(min_value=2**64, max_value=10**60)  # orjson reads these as floats
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=40)
    | st.sampled_from(["", " ", "..", "/", ".", "-1", "0", "2030-01-01T00:00:00.000Z", "critical", "project"])
)
json_values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=5)
        | st.dictionaries(st.sampled_from(KEYS) | st.text(max_size=8), inner, max_size=5)
    ),
    max_leaves=25,
)


def deep(depth: int, leaf: Any) -> Any:
    for i in range(depth):
        leaf = [leaf] if i % 2 else {"k": leaf}
    return leaf


awkward = st.one_of(
    json_values,
    st.integers(min_value=200, max_value=1000).map(lambda d: deep(d, "x")),  # deep, but under 1,024
    st.integers(min_value=1, max_value=6).map(lambda n: "word " * (n * 40_000)),  # up to ~1.2 MB
    st.text(alphabet=st.characters(codec="utf-8"), min_size=1, max_size=300),  # any code point, no surrogates
)
requests = st.dictionaries(st.sampled_from(KEYS), awkward, max_size=6)


def readers() -> list[list[str]]:
    """Invocations known to read a request (the JSON-object fuzz is pointless for the others)."""
    quiet = {"mute", "unmute", "mutes", "resume", "describe", "show", "unset", "list", "scan", "recheck"}
    return [
        args
        for args in invocations()
        if args[0]
        in {"advise", "analyze", "capture", "config", "dedupe", "habit", "memory", "restore", "select"}
        and not (len(args) > 1 and args[1] in quiet)
    ]


def seeds(root: Path, work: Path) -> dict[str, list[dict[str, Any]]]:
    """Valid requests per command (and per harness in hook mode), for the mutations to start from, so
    that the fuzz reaches past the first validation into the domain code."""
    from memory_helpers import claude_transcript, full_record

    habits = run(["habit", "list", "--all", "--root", str(root)]).result["items"]
    habit = {"id": habits[0]["id"], "checksum": habits[0]["checksum"]}
    memory_id = run(["memory", "retrieve", "--root", str(root)]).result["items"][0]["id"]
    transcript = claude_transcript(work / "session.jsonl", [("use tabs", "done"), ("no, tabs!", "fixed")])
    pair = {"user": "no, use tabs not spaces", "assistant": "I pushed to main", "session": "s9"}
    stop = {
        "hook_event_name": "Stop",
        "session_id": "s9",
        "cwd": str(work),
        "transcript_path": str(transcript),
    }
    prompt = {
        "hook_event_name": "UserPromptSubmit",
        "session_id": "s9",
        "prompt": "write Go code",
        "cwd": "/w",
    }
    messages = [{"role": "user", "text": "I prefer tabs", "at": "2030-01-01T00:00:00.000Z"}]
    return {
        "advise": [{**pair, "cwd": str(work)}],
        "analyze": [{}],
        "capture": [{**pair, "at": "2026-01-01T00:00:00Z", "tools": [{"name": "edit", "status": "ok"}]}],
        "config get": [{"key": "capture.enabled"}],
        "config set": [
            {"key": "capture.retention_days", "value": 14},
            {"key": "select.max_habits", "value": 2},
        ],
        "dedupe resolve": [{"id": "r-0123456789ab", "action": "keep_both", "checksum": "ab" * 32}],
        "habit approve": [habit],
        "habit archive": [habit],
        "habit disable": [habit],
        "habit enable": [habit],
        "habit reject": [habit],
        "habit declare": [{"condition": "When editing SQL", "behavior": "Use bind params", "polarity": -1}],
        "memory export": [{"store": "global"}],
        "memory import": [full_record(id="0b6f1c7e-4a6b-4c1d-8e2f-0123456789ac", content="imported")],
        "memory index": [{"budget": 200, "per_store": 3}],
        "memory index-vectors": [{"limit": 2}],
        "memory observe": [{"stream": "s2", "messages": messages}],
        "memory pin": [{"id": memory_id}],
        "memory unpin": [{"id": memory_id}],
        "memory recall": [{"id": memory_id}],
        "memory remove": [{"id": memory_id, "purge": False}],
        "memory prune": [{"stream": "s1", "budget": 10, "dry_run": True}],
        "memory reflect": [{"stream": "s1"}],
        "memory repair": [{}],
        "memory verify": [{}],
        "memory retain": [
            {
                "content": "Deploys happen on Fridays",
                "kind": "fact",
                "tags": ["deploy"],
                "importance": 0.5,
                "namespace": "ops",
                "metadata": {"source": "fuzz"},
                "expires_at": "2040-01-01T00:00:00.000Z",
            },
            {"id": memory_id, "content": "patched"},
        ],
        "memory retrieve": [
            {"query": "database", "kind": "fact", "limit": 5, "order_by": "importance", "tags": ["python"]},
            {"query": "uv OR pip", "hybrid": True},
        ],
        "restore": [{"path": str(work / "no-backup")}],
        "select": [{"prompt": "write some Go code", "context": ["earlier message"]}],
        "hook claude-code": [prompt, stop, {"hook_event_name": "SessionStart", "session_id": "s9"}],
        "hook codex": [
            prompt,
            stop,
            {"type": "agent-turn-complete", "input-messages": ["hi"], "thread-id": "t"},
        ],
        "hook gemini": [
            {"hook_event_name": "BeforeAgent", "prompt": "write Go code", "session_id": "g"},
            {"hook_event_name": "AfterAgent", "prompt": "x", "prompt_response": "y", "session_id": "g"},
        ],
        "hook pi": [
            {"type": "before_agent_start", "prompt": "write Go code"},
            {
                "type": "agent_end",
                "messages": [{"role": "user", "content": [{"type": "text", "text": "hi"}]}],
            },
        ],
        "hook generic": [pair, {"user": "write Go code"}],
    }


def seed_key(args: list[str]) -> str:
    if hook_mode(args):
        return "hook " + args[args.index("--harness") + 1]
    return " ".join(a for a in args if not a.startswith("-") and a not in ("--nl",))


@st.composite
def mutated(draw: st.DrawFn, seed: Any) -> Any:
    """The seed with some values replaced by awkward ones, some keys dropped and some added."""

    def walk(value: Any) -> Any:
        if draw(st.integers(0, 7)) == 0:
            return draw(awkward)
        if isinstance(value, dict):
            out = {k: walk(v) for k, v in value.items() if draw(st.integers(0, 9))}
            for _ in range(draw(st.integers(0, 2))):
                out[draw(st.sampled_from(KEYS))] = draw(awkward)
            return out
        if isinstance(value, list):
            return [walk(v) for v in value] + draw(st.lists(awkward, max_size=2))
        return value

    out = walk(seed)
    return out if isinstance(out, dict) else {"value": out}


@pytest.mark.slow
@pytest.mark.parametrize("args", readers(), ids=ids)
def test_any_json_object_is_a_request_or_a_clean_refusal(
    state_root: Path, args: list[str], tmp_path: Path
) -> None:
    skip = ("locks", *HOOK_LOGS) if hook_mode(args) else ("locks",)
    known = seeds(state_root, tmp_path / "work").get(seed_key(args), [])
    strategy = st.one_of(requests, *(mutated(seed) for seed in known))

    @settings(
        max_examples=int(os.environ.get("HABITUS_FUZZ_EXAMPLES", "15")),
        deadline=None,
        database=None,
        print_blob=True,  # a failure prints @reproduce_failure(...) to replay it exactly
        suppress_health_check=list(HealthCheck),
    )
    @given(request=strategy)
    def one(request: dict[str, Any]) -> None:
        stdin = json.dumps(request).encode()
        before = fingerprint(state_root, skip=skip)
        count = len(logged(state_root))
        out = run(args, stdin=stdin)
        check_contract(out, args)
        failed_in_hook = hook_mode(args) and len(logged(state_root)) > count
        if out.exit or failed_in_hook:
            assert fingerprint(state_root, skip=skip) == before, (
                out.stderr[:300],
                logged(state_root)[count:],
            )
        if failed_in_hook:
            assert out.stdout == b""
            assert all(e["code"] != "failed" for e in logged(state_root)[count:]), logged(state_root)[count:]
        elif out.exit == 0 and out.stdout:
            for line in out.stdout.splitlines():
                assert isinstance(orjson.loads(line), dict)

    one()
    report = run(["verify"])
    assert report.exit == 0, report.stdout


@pytest.mark.slow
@pytest.mark.parametrize("args", readers(), ids=ids)
def test_nesting_past_the_json_encoders_limit_is_refused_cleanly(
    state_root: Path, args: list[str], tmp_path: Path
) -> None:
    """orjson stops encoding at 255 levels: a valid request whose object or array field is nested deeper
    gets a clean answer, never an internal error (the fuzzer above found one in `memory retain`)."""
    skip = ("locks", "models", *HOOK_LOGS) if hook_mode(args) else ("locks", "models")
    for request in seeds(state_root, tmp_path / "work").get(seed_key(args), [])[:1]:
        for key, value in request.items():
            if not isinstance(value, dict | list):
                continue
            nested = deep(301, "x") if isinstance(value, dict) else deep(300, "x")  # same outer type
            before = fingerprint(state_root, skip=skip)
            out = run(args, stdin=json.dumps({**request, key: nested}).encode())
            check_contract(out, args)
            if out.exit:
                assert fingerprint(state_root, skip=skip) == before, (key, out.stderr[:300])


NUL_PATHS = [
    (["restore"], {"path": "backup\x00folder"}),
    (["capture", "--harness", "claude-code"], {"hook_event_name": "Stop", "transcript_path": "a\x00b"}),
    (
        ["memory", "observe", "--harness", "claude-code"],
        {"hook_event_name": "Stop", "transcript_path": "a\x00b"},
    ),
    (["memory", "observe", "--harness", "pi"], {"type": "agent_end", "session_file": "a\x00b"}),
    (
        ["select", "--harness", "codex"],
        {"hook_event_name": "UserPromptSubmit", "prompt": "x", "cwd": "a\x00b"},
    ),
    (["config", "set"], {"key": "models.m.command", "value": ["prog\x00ram"]}),
]


@pytest.mark.parametrize(("args", "request_"), NUL_PATHS, ids=[ids(a) for a, _ in NUL_PATHS])
def test_a_nul_character_in_a_path_is_a_bad_request(
    state_root: Path, args: list[str], request_: dict
) -> None:
    """Found by fuzzing: the OS cannot take a path with NUL, and these were exit 1 `failed` (ValueError)."""
    if args[:2] == ["memory", "observe"]:
        assert (
            run(["config", "set", "memory.observe_enabled", "true"]).exit == 0
        )  # hooks observe only when on
    skip = ("locks", *HOOK_LOGS)
    before = fingerprint(state_root, skip=skip)
    count = len(logged(state_root))
    out = run(args, request_)
    check_contract(out, args)
    code = logged(state_root)[count]["code"] if hook_mode(args) else out.error["code"]
    assert code in ("bad_request", "invalid_value")
    assert fingerprint(state_root, skip=skip) == before
