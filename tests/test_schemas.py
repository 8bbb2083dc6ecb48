"""Published JSON Schemas: well-formed, self-identifying, resolvable offline, and enforced."""

from __future__ import annotations

import pytest
from jsonschema import Draft202012Validator

from habitus import schemas


def test_every_schema_is_valid_and_names_itself() -> None:
    names = schemas.names()
    assert {"common.v1", "model-envelope.v1"} <= set(names)
    for name in names:
        schema = schemas.load(name)
        Draft202012Validator.check_schema(schema)
        assert schema["$id"] == f"{schemas.BASE}{name}.json"
        assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"


def test_load_returns_a_copy() -> None:
    schemas.load("model-envelope.v1")["type"] = "array"
    assert schemas.load("model-envelope.v1")["type"] == "object"


@pytest.mark.parametrize("name", ["../settings", "nope", ".hidden"])
def test_unknown_names_are_refused(name: str) -> None:
    with pytest.raises(ValueError):
        schemas.load(name)


def test_envelope_and_cross_file_refs() -> None:
    assert schemas.problems("model-envelope.v1", {"schema_version": 1, "notes": "ok"}) == []
    assert schemas.problems("model-envelope.v1", {}) == [("$", "required")]
    assert schemas.problems("model-envelope.v1", {"schema_version": 0}) == [("$.schema_version", "minimum")]
    # notes is a $ref into common.v1.json: long text and control characters are refused
    assert schemas.problems("model-envelope.v1", {"schema_version": 1, "notes": "x" * 1001}) == [
        ("$.notes", "maxLength")
    ]
    assert schemas.problems("model-envelope.v1", {"schema_version": 1, "notes": "a\x1bb"}) == [
        ("$.notes", "pattern")
    ]


def test_a_caller_schema_can_refer_to_common_definitions() -> None:
    schema = {
        "type": "object",
        "properties": {
            "confidence_bp": {"$ref": "https://schemas.habitus.invalid/common.v1.json#/$defs/basis_points"},
            "polarity": {"$ref": "https://schemas.habitus.invalid/common.v1.json#/$defs/polarity"},
        },
    }
    assert schemas.problems(schema, {"confidence_bp": 9000, "polarity": -1}) == []
    found = dict(schemas.problems(schema, {"confidence_bp": 10001, "polarity": 0}))
    assert found == {"$.confidence_bp": "maximum", "$.polarity": "enum"}
