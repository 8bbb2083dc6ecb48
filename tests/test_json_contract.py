"""The JSON contract: one request object in, one result object out, one error line on failure."""

from __future__ import annotations

import io as stdio
from pathlib import Path

import orjson
import pytest

from conftest import run
from habitus import codec, io
from habitus.errors import CODES, HabitusError


def test_result_carries_version_and_one_line() -> None:
    out = run(["config", "get", "capture.enabled"])
    assert out.exit == 0
    assert out.stdout.endswith(b"\n") and out.stdout.count(b"\n") == 1
    assert out.result == {
        "v": 1,
        "key": "capture.enabled",
        "value": False,
        "default": False,
        "source": "default",
    }


def test_pretty_indents() -> None:
    out = run(["config", "get", "capture.enabled", "--pretty"])
    assert out.exit == 0
    assert out.stdout.startswith(b'{\n  "v": 1,')
    assert orjson.loads(out.stdout)["key"] == "capture.enabled"


def test_empty_stdin_is_an_empty_request(state_root: Path) -> None:
    out = run(["config", "set"], stdin=b"")
    assert out.exit == 2
    assert out.error["code"] == "bad_request"
    assert "request.key" in out.error["message"]
    assert out.stdout == b""
    assert not state_root.exists()


@pytest.mark.parametrize(
    ("stdin", "code"),
    [
        (b"{", "bad_json"),
        (b'{"key": "capture.enabled", "value": true} trailing', "bad_json"),
        (b"NaN", "bad_json"),
        (b'{"key": Infinity}', "bad_json"),
        (b"[1, 2]", "bad_request"),
        (b'"just a string"', "bad_request"),
        (b"42", "bad_request"),
        (b"null", "bad_request"),
        (b'{"key": "capture.enabled", "value": "\xff\xfe"}', "bad_utf8"),
        (b"\xc3\x28", "bad_utf8"),
        (b'{"key": 12, "value": true}', "bad_request"),
        (b'{"key": "capture.enabled", "value": "yes please"}', "invalid_value"),
        (b'{"key": "no.such.key", "value": 1}', "unknown_key"),
        (b"[" * 5000 + b"]" * 5000, "bad_json"),
    ],
)
def test_bad_stdin_exits_2_and_writes_nothing(state_root: Path, stdin: bytes, code: str) -> None:
    out = run(["config", "set"], stdin=stdin)
    assert out.exit == 2
    assert out.error["code"] == code
    assert out.stdout == b""
    assert not (state_root / "config.toml").exists()


def test_oversized_request_is_refused_without_reading_it_all(state_root: Path) -> None:
    big = (
        b'{"key": "capture.enabled", "pad": "' + b"x" * (codec.MAX_REQUEST_BYTES + 10) + b'", "value": true}'
    )
    out = run(["config", "set"], stdin=big)
    assert out.exit == 2
    assert out.error["code"] == "request_too_large"
    assert not (state_root / "config.toml").exists()


def test_unknown_request_keys_are_ignored() -> None:
    out = run(["config", "set"], {"key": "capture.enabled", "value": True, "source": "jq", "v": 1})
    assert out.exit == 0
    assert out.result["value"] is True


def test_usage_errors_are_json_with_exit_2() -> None:
    out = run(["config", "get", "--no-such-option"])
    assert out.exit == 2
    assert out.error["code"] == "usage"
    out = run(["no-such-command"])
    assert out.exit == 2
    assert out.error["code"] == "usage"


def test_error_messages_never_echo_values(state_root: Path) -> None:
    secret = "sk-live-hunter2-do-not-print"
    out = run(["config", "set", "capture.retention_days", secret])
    assert out.exit == 2
    assert out.error["code"] == "invalid_value"
    assert secret.encode() not in out.stderr


def test_nl_reads_one_request_per_line(monkeypatch: pytest.MonkeyPatch) -> None:
    data = b'{"a": 1}\n\n{"b": 2}\n'
    monkeypatch.setattr("sys.stdin", stdio.TextIOWrapper(stdio.BytesIO(data)))
    assert list(io.read_requests(nl=True)) == [{"a": 1}, {"b": 2}]


def test_nl_reports_the_bad_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("sys.stdin", stdio.TextIOWrapper(stdio.BytesIO(b'{"a": 1}\n{oops\n')))
    requests = io.read_requests(nl=True)
    assert next(requests) == {"a": 1}
    with pytest.raises(HabitusError) as caught:
        next(requests)
    assert caught.value.code == "bad_json"
    assert "line 2" in caught.value.message


def test_every_code_has_a_documented_exit() -> None:
    assert {int(exit) for exit, _ in CODES.values()} <= {0, 1, 2, 3, 75, 130}
    with pytest.raises(ValueError):
        HabitusError("made_up_code", "x")


def test_canonical_is_sorted_and_compact() -> None:
    assert codec.canonical({"b": 1, "a": {"d": 2, "c": [3]}}) == b'{"a":{"c":[3],"d":2},"b":1}'
    assert codec.checksum({"a": 1}) == codec.checksum({"a": 1})
    assert len(codec.checksum({"a": 1})) == 64
