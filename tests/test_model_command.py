"""`habitus model add|list|use|remove` with real model files."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from conftest import run
from habit_helpers import GOFMT, copy_default_model, db, declared
from habitus.embed import registry
from habitus.embed.registry import MINILM_FILES as DEFAULT_FILES


@pytest.fixture
def source(tmp_path: Path) -> Path:
    return copy_default_model(tmp_path / "export")


def test_list_shows_the_packaged_default_in_use(state_root: Path) -> None:
    out = run(["model", "list"])
    assert out.exit == 0
    item, *others = out.result["items"]
    assert item["name"] == "default" and item["in_use"] and item["dims"] == 384
    shipped = registry.E5_FILES if registry.e5_available() else DEFAULT_FILES
    assert item["bytes"] == sum(size for size, _ in shipped.values())
    assert [o["name"] for o in others] == (["e5", "minilm"] if registry.e5_available() else ["minilm"])
    assert not any(o["in_use"] for o in others)
    assert out.result["in_use"] == "default"
    assert not state_root.exists()  # listing creates nothing
    verified = run(["model", "list", "--verify"])
    assert verified.result["items"][0]["verified"] is True


def test_add_copies_with_recorded_hashes(source: Path, state_root: Path) -> None:
    out = run(["model", "add", str(source), "--name", "copy", "--max-tokens", "128"])
    assert out.exit == 0, out.stderr
    model = out.result["model"]
    assert (
        model["name"] == "copy"
        and model["dims"] == 384
        and model["max_tokens"] == 128
        and not model["in_use"]
    )
    folder = state_root / "models" / "copy"
    assert sorted(p.name for p in folder.iterdir()) == [
        "manifest.json",
        "model.onnx",
        "model.onnx_data",
        "tokenizer.json",
    ]
    assert folder.stat().st_mode & 0o777 == 0o700
    assert all(p.stat().st_mode & 0o777 == 0o600 for p in folder.iterdir())
    manifest = orjson.loads((folder / "manifest.json").read_bytes())
    assert {k: v["sha256"] for k, v in manifest["files"].items()} == {
        "model.onnx": DEFAULT_FILES["onnx/model.onnx"][1],
        "model.onnx_data": DEFAULT_FILES["onnx/model.onnx_data"][1],
        "tokenizer.json": DEFAULT_FILES["tokenizer.json"][1],
    }
    names = [i["name"] for i in run(["model", "list"]).result["items"]]
    assert names[0] == "default" and names[-2:] == ["minilm", "copy"]


def test_add_refuses_bad_sources_and_leaves_nothing(tmp_path: Path, source: Path, state_root: Path) -> None:
    assert run(["model", "add", str(tmp_path / "nowhere"), "--name", "x"]).error["code"] == "not_found"
    (source / "tokenizer.json").unlink()
    assert run(["model", "add", str(source), "--name", "x"]).error["code"] == "not_found"
    garbage = tmp_path / "garbage"
    garbage.mkdir()
    (garbage / "model.onnx").write_bytes(b"not an onnx model")
    (garbage / "tokenizer.json").write_text("{}")
    out = run(["model", "add", str(garbage), "--name", "x"])
    assert out.exit == 3 and out.error["code"] == "model_unavailable"
    assert [p.name for p in (state_root / "models").iterdir()] == []  # staging removed
    for name, code in (("default", "usage"), ("Bad Name", "usage"), ("../x", "usage")):
        assert run(["model", "add", str(garbage), "--name", name]).error["code"] == code


def test_add_refuses_an_existing_name(source: Path) -> None:
    assert run(["model", "add", str(source), "--name", "copy"]).exit == 0
    out = run(["model", "add", str(source), "--name", "copy"])
    assert out.exit == 3 and out.error["code"] == "refused"


def test_use_switches_and_reembeds_then_remove(source: Path, state_root: Path) -> None:
    declared(*GOFMT)
    assert run(["model", "add", str(source), "--name", "copy"]).exit == 0
    out = run(["model", "use", "copy"])
    assert out.exit == 0, out.stderr
    assert out.result["model"]["in_use"] and out.result["reembedded"] == 1 and out.result["habits"] == 1
    assert run(["config", "get", "embed.model"]).result["value"] == "copy"
    models = {r[0].split("@")[0] for r in db().execute("SELECT model_id FROM habit_vectors")}
    assert models == {"default", "copy"}
    refused = run(["model", "remove", "copy"])
    assert refused.exit == 3 and refused.error["code"] == "refused"
    assert run(["model", "use", "default"]).result["reembedded"] == 0  # its vectors are still current
    out = run(["model", "remove", "copy"])
    assert out.exit == 0 and out.result == {"v": 1, "removed": "copy", "vectors_deleted": 2}
    assert not (state_root / "models" / "copy").exists()
    assert run(["model", "remove", "copy"]).error["code"] == "not_found"
    assert run(["model", "remove", "default"]).error["code"] == "refused"


def test_use_of_a_damaged_model_changes_nothing(source: Path, state_root: Path) -> None:
    assert run(["model", "add", str(source), "--name", "copy"]).exit == 0
    data = state_root / "models" / "copy" / "tokenizer.json"
    data.write_bytes(data.read_bytes()[:-1] + b" ")
    out = run(["model", "use", "copy"])
    assert out.exit == 3 and out.error["code"] == "checksum_mismatch"
    assert run(["config", "get", "embed.model"]).result["value"] == "default"
    assert run(["model", "list"]).result["items"][-1]["name"] == "copy"
    assert run(["model", "list", "--verify"]).result["items"][-1]["error"] == "checksum_mismatch"
    manifest = state_root / "models" / "copy" / "manifest.json"
    manifest.write_bytes(manifest.read_bytes().replace(b'"dims":384', b'"dims":385'))
    assert run(["model", "use", "copy"]).error["code"] == "checksum_mismatch"
    assert run(["model", "remove", "copy"]).exit == 0  # a damaged model can still be removed


def test_use_of_an_unknown_model() -> None:
    out = run(["model", "use", "nothing"])
    assert out.exit == 1 and out.error["code"] == "not_found"


def test_a_configured_model_that_is_missing_fails_closed() -> None:
    declared(*GOFMT)
    assert run(["config", "set", "embed.model", "gone"]).exit == 0
    out = run(["habit", "declare", "--condition", "When x happens", "--behavior", "Do y"])
    assert out.exit == 3 and out.error["code"] == "model_unavailable"
    assert len(run(["habit", "list"]).result["items"]) == 1
