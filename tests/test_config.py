"""config.toml: defaults, comment-preserving rewrites, refusal of invalid values, permissions."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from conftest import run


def test_set_get_unset_round_trip(state_root: Path) -> None:
    assert run(["config", "set", "capture.retention_days", "14"]).exit == 0
    got = run(["config", "get", "capture.retention_days"]).result
    assert (got["value"], got["source"], got["default"]) == (14, "file", 7)
    assert run(["config", "unset", "capture.retention_days"]).result["value"] == 7
    assert run(["config", "get", "capture.retention_days"]).result["source"] == "default"


def test_comments_order_and_unknown_keys_survive_a_rewrite(state_root: Path) -> None:
    state_root.mkdir(mode=0o700)
    original = (
        "# my habitus settings\n"
        'future_feature = "kept"  # not known to this version\n\n'
        "[capture]\n"
        "# keep a month\n"
        "retention_days = 30\n\n"
        "[plugins.thing]\n"
        'colour = "blue"\n'
    )
    (state_root / "config.toml").write_text(original)
    assert run(["config", "set", "capture.enabled", "true"]).exit == 0
    text = (state_root / "config.toml").read_text()
    for kept in (
        "# my habitus settings",
        "# not known to this version",
        "# keep a month",
        'colour = "blue"',
        "retention_days = 30",
        'future_feature = "kept"',
    ):
        assert kept in text
    assert "enabled = true" in text
    shown = run(["config", "show"]).result
    assert shown["unknown_keys"] == ["future_feature", "plugins.thing.colour"]
    assert shown["settings"]["capture"] == {"enabled": True, "retention_days": 30}


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("capture.retention_days", "9"),  # not 7, 14 or 30
        ("analyze.batch_max_records", "0"),
        ("analyze.batch_max_records", "501"),
        ("capture.enabled", "maybe"),
        ("select.judge", "model:"),
        ("models.local.kind", "telepathy"),
        ("models.local.api_key_env", "not an env name"),
    ],
)
def test_invalid_values_are_refused_and_nothing_changes(state_root: Path, key: str, value: str) -> None:
    assert run(["config", "set", "capture.enabled", "true"]).exit == 0
    before = (state_root / "config.toml").read_bytes()
    out = run(["config", "set", key, value])
    assert out.exit == 2
    assert out.error["code"] == "invalid_value"
    assert key in out.error["message"]
    assert (state_root / "config.toml").read_bytes() == before


def test_unknown_key_is_refused() -> None:
    out = run(["config", "set", "capture.enabeld", "true"])
    assert out.exit == 2
    assert out.error["code"] == "unknown_key"


def test_invalid_file_fails_closed_naming_the_field_not_the_value(state_root: Path) -> None:
    state_root.mkdir(mode=0o700)
    (state_root / "config.toml").write_text('[capture]\nenabled = "hunter2-secret"\n')
    for args in (["config", "show"], ["status"], ["config", "set", "capture.retention_days", "14"]):
        out = run(args)
        assert out.exit == 3, args
        assert out.error["code"] == "config_invalid"
        assert "capture.enabled" in out.error["message"]
        assert b"hunter2" not in out.stderr
    assert "hunter2" in (state_root / "config.toml").read_text()  # never rewritten


def test_toml_syntax_error_does_not_quote_the_file(state_root: Path) -> None:
    state_root.mkdir(mode=0o700)
    (state_root / "config.toml").write_text("[capture]\nenabled = tru3-secretvalue\n")
    out = run(["config", "show"])
    assert out.exit == 3
    assert out.error["code"] == "config_invalid"
    assert b"secretvalue" not in out.stderr


def test_model_tables_and_typed_values_from_a_request(state_root: Path) -> None:
    out = run(["config", "set"], {"key": "models.local.command", "value": ["my-model", "--json"]})
    assert out.exit == 0
    assert run(["config", "set", "models.local.kind", "command"]).exit == 0
    settings = run(["config", "show"]).result["settings"]
    assert settings["models"]["local"]["command"] == ["my-model", "--json"]
    assert settings["models"]["local"]["kind"] == "command"
    assert settings["models"]["local"]["timeout_s"] == 60  # default filled in
    out = run(["config", "set"], {"key": "models.local.timeout_s", "value": "60"})
    assert out.exit == 2 and out.error["code"] == "invalid_value"


def test_permissions_are_private_even_with_a_permissive_umask(state_root: Path) -> None:
    old = os.umask(0)
    try:
        assert run(["config", "set", "capture.enabled", "true"]).exit == 0
    finally:
        os.umask(old)
    assert stat.S_IMODE(state_root.stat().st_mode) == 0o700
    assert stat.S_IMODE((state_root / "config.toml").stat().st_mode) == 0o600
    assert stat.S_IMODE((state_root / "locks").stat().st_mode) == 0o700
    assert stat.S_IMODE((state_root / "locks" / "config.lock").stat().st_mode) == 0o600


def test_existing_loose_root_is_tightened(state_root: Path) -> None:
    state_root.mkdir(mode=0o755)
    os.chmod(state_root, 0o755)
    assert run(["config", "set", "capture.enabled", "true"]).exit == 0
    assert stat.S_IMODE(state_root.stat().st_mode) == 0o700


def test_symlinked_config_is_refused(state_root: Path, tmp_path: Path) -> None:
    state_root.mkdir(mode=0o700)
    target = tmp_path / "elsewhere.toml"
    target.write_text("[capture]\nenabled = true\n")
    (state_root / "config.toml").symlink_to(target)
    for args in (["config", "show"], ["config", "set", "capture.enabled", "false"]):
        out = run(args)
        assert out.exit == 3
        assert out.error["code"] == "symlink_refused"
    assert target.read_text() == "[capture]\nenabled = true\n"


def test_describe_lists_every_setting_with_a_default() -> None:
    settings = run(["config", "describe"]).result["settings"]
    keys = [s["key"] for s in settings]
    assert "capture.enabled" in keys and "models.*.kind" in keys
    assert all("default" in s and s["help"] for s in settings)
