"""The advise policy: a project file can only narrow the user's config (every field, both directions)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from advise_helpers import enable, pair, review, setting
from habitus.advise import policy as policymod
from habitus.state import config as configuration
from habitus.state.root import StateRoot

USER: dict[str, Any] = {
    "enabled": True,
    "model": "reviewer",
    "block": True,
    "max_slice_chars": 20_000,
    "max_note_chars": 2_000,
    "max_note_tokens": 512,
    "pending_hours": 24,
    "similarity_threshold_bp": 5_000,
    "min_interval_s": 10,
    "reraise_min_turns": 4,
    "protected_paths": ["private"],
    "protected_exceptions": ["fixtures/.env.example"],
    "instructions": "Focus on correctness.",
}

# field, a narrower project value (applied), a wider one (warned and ignored)
TABLE = [
    ("enabled", False, None),  # the wider direction needs a user "false": see the next test
    ("model", "", "other-model"),
    ("block", False, None),
    ("max_slice_chars", 10_000, 24_000),
    ("max_note_chars", 1_000, 4_000),
    ("max_note_tokens", 256, 1_024),
    ("pending_hours", 2, 48),
    ("similarity_threshold_bp", 3_000, 8_000),
    ("min_interval_s", 60, 0),
    ("reraise_min_turns", 8, 2),
]


def user_policy(**changes: Any) -> policymod.Policy:
    values = {**USER, **changes}
    table = {"advise": values, "models": {"reviewer": {"kind": "command", "command": ["true"]}}}
    return policymod.from_config(configuration.validate(table))


@pytest.mark.parametrize(("key", "narrower", "wider"), TABLE)
def test_each_field_narrows_and_never_widens(key: str, narrower: Any, wider: Any) -> None:
    policy = user_policy()
    policymod.narrow(policy, {key: narrower})
    assert getattr(policy, key) == narrower
    assert policy.warnings == []
    if wider is None:
        return
    policy = user_policy()
    policymod.narrow(policy, {key: wider})
    assert getattr(policy, key) == USER[key]
    assert policy.warnings == [
        {
            "code": "project_field_ignored",
            "file": None,
            "field": key,
            "why": policymod._WHY[policymod.MERGE[key]],
        }
    ]


@pytest.mark.parametrize(("key", "user_value"), [("enabled", False), ("block", False), ("model", "")])
def test_a_project_can_never_turn_on_what_the_user_left_off(key: str, user_value: Any) -> None:
    policy = user_policy(**{key: user_value})
    policymod.narrow(policy, {key: True if key != "model" else "reviewer"})
    assert getattr(policy, key) == user_value
    assert [w["field"] for w in policy.warnings] == [key]


def test_reraise_zero_is_a_narrowing_but_cannot_be_undone_by_a_project() -> None:
    policy = user_policy()
    policymod.narrow(policy, {"reraise_min_turns": 0})
    assert policy.reraise_min_turns == 0 and policy.warnings == []
    policy = user_policy(reraise_min_turns=0)
    policymod.narrow(policy, {"reraise_min_turns": 4})
    assert policy.reraise_min_turns == 0 and policy.warnings[0]["field"] == "reraise_min_turns"


def test_protected_paths_are_added_never_removed_and_exceptions_are_user_only() -> None:
    policy = user_policy()
    policymod.narrow(policy, {"protected_paths": [], "protected_exceptions": ["secrets/.env"]})
    assert policy.protected_paths == ["private"] and policy.project_paths == []
    assert policy.protected_exceptions == ["fixtures/.env.example"]
    assert [w["field"] for w in policy.warnings] == ["protected_exceptions"]
    policy = user_policy()
    policymod.narrow(policy, {"protected_paths": ["customer-data"]})
    assert policy.protected_paths == ["private"] and policy.project_paths == ["customer-data"]


def test_project_instructions_add_lower_authority_text() -> None:
    policy = user_policy()
    policymod.narrow(policy, {"instructions": "Watch the migration matrix."})
    assert policy.instructions == "Focus on correctness."
    assert policy.project_instructions == "Watch the migration matrix."


@pytest.mark.parametrize(
    "table",
    [
        {"max_slice_chars": "big"},
        {"max_slice_chars": 10},
        {"enabled": "no"},
        {"protected_paths": "x"},
        {"version": 2},
    ],
)
def test_an_invalid_project_value_turns_advise_off(table: dict[str, Any]) -> None:
    policy = user_policy()
    policymod.narrow(policy, table)
    assert policy.enabled is False and policy.off_reason == "project_config_invalid"
    assert policy.warnings[-1]["code"] == "project_config_invalid"


def test_unknown_project_keys_are_warned_and_the_rest_applies() -> None:
    policy = user_policy()
    policymod.narrow(policy, {"version": 1, "colour": "blue", "max_note_chars": 500})
    assert policy.max_note_chars == 500 and policy.enabled
    assert policy.warnings == [{"code": "project_field_unknown", "file": None, "field": "colour"}]


# -- end to end: a repository with .habitus/advise.toml ------------------------------------------------


def repo(tmp_path: Path, text: str | bytes) -> Path:
    folder = tmp_path / "repo"
    (folder / ".git").mkdir(parents=True)
    (folder / ".habitus").mkdir()
    data = text.encode() if isinstance(text, str) else text
    (folder / ".habitus" / "advise.toml").write_bytes(data)
    (folder / "src").mkdir()
    return folder


def test_the_project_file_narrows_a_real_review_and_warns_without_values(
    tmp_path: Path, state_root: Path
) -> None:
    enable(state_root)
    secret = "models-of-acme-internal"
    folder = repo(tmp_path, f'model = "{secret}"\nmax_slice_chars = 1000\nblock = true\n')
    result = review(pair("x " * 3000, cwd=str(folder / "src")))
    assert result["reviewed"] and result["slice"]["chars"] <= 1000 and result["slice"]["truncated"]
    assert [w["field"] for w in result["warnings"]] == ["model"]
    assert secret not in orjson.dumps(result).decode()
    assert result["reviewers"]["model"] == {"status": "off"}


@pytest.mark.parametrize("content", ["enabled = false\n", "this is [not toml", b"\xff\xfe", "version = 7\n"])
def test_a_project_that_disables_or_breaks_its_file_gets_no_review(
    tmp_path: Path, state_root: Path, content: str | bytes
) -> None:
    enable(state_root)
    folder = repo(tmp_path, content)
    result = review(pair("The release is ready.", cwd=str(folder)))
    assert result["reviewed"] is False
    expected = "project" if content == "enabled = false\n" else "project_config_invalid"
    assert result["reason"] == expected
    assert not (state_root / "ledger.sqlite").exists()  # nothing was reviewed, nothing was written


def test_a_symlinked_project_file_is_refused(tmp_path: Path, state_root: Path) -> None:
    enable(state_root)
    folder = repo(tmp_path, "")
    target = tmp_path / "elsewhere.toml"
    target.write_text("max_note_chars = 500\n")
    (folder / ".habitus" / "advise.toml").unlink()
    (folder / ".habitus" / "advise.toml").symlink_to(target)
    result = review(pair("hello there", cwd=str(folder)))
    assert result["reason"] == "project_config_invalid"


def test_user_settings_are_validated_by_config(state_root: Path) -> None:
    for key, value in [
        ("advise.max_slice_chars", 30_000),
        ("advise.max_note_chars", 10),
        ("advise.model", "Bad Name"),
    ]:
        with pytest.raises(Exception) as caught:
            setting(state_root, key, value)
        assert getattr(caught.value, "code", None) == "invalid_value"
    config = configuration.load(StateRoot(state_root))
    assert config.get("advise.max_slice_chars") == 24_000
