"""The compiled schema check says exactly what jsonschema says, on every mutation we try."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bundler.authoring.build import make_manifest
from bundler.authoring.source import read_source
from bundler.format.manifest import schema_validator
from bundler.format.schemafast import compile_schema

ROOT = Path(__file__).resolve().parents[2]
SOURCES = [
    ROOT / "bundles" / "quickstart",
    ROOT / "bundles" / "intent-router",
    ROOT / "bundles" / "trajectory-skeleton",
    ROOT / "tests" / "sources" / "own-code",
]
ODD_VALUES: list[Any] = [
    None, True, False, 0, -1, 1.0, 2.5, float("inf"), "", "x", "A" * 400, "sha512:ab",
    "ab" * 32, [], ["a", "a"], [1, True], [1, 1.0], {}, {"x": 1},
]  # fmt: skip


def manifest_doc(source: Path) -> dict[str, Any]:
    manifest, _ = make_manifest(read_source(source), 0)
    doc = manifest.to_dict()
    doc["files"] = doc["files"][:2]  # the schema sees each entry alike; mutants stay cheap
    first: dict[str, Any] = {}  # and each case alike, but for its checker's params
    for case in doc["cases"]:
        first.setdefault(case["checker"], case)
    doc["cases"] = list(first.values())[:4]
    doc["claims"] = doc["claims"][:2]
    return doc


def nodes(value: Any, at: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield at
    if isinstance(value, dict):
        for key, item in value.items():
            yield from nodes(item, (*at, key))
    elif isinstance(value, list):
        for i, item in enumerate(value[:2]):
            yield from nodes(item, (*at, i))


def mutants(doc: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """The document with one node deleted, replaced by an odd value, or given an extra key."""
    for at in list(nodes(doc))[1:]:
        *parents, last = at
        for change in ["delete", "extra", *range(len(ODD_VALUES))]:
            mutant = copy.deepcopy(doc)
            holder = mutant
            for step in parents:
                holder = holder[step]
            if change == "delete":
                del holder[last]
            elif change == "extra":
                if not isinstance(holder[last], dict):
                    continue
                holder[last]["unexpected"] = 1
            else:
                holder[last] = copy.deepcopy(ODD_VALUES[int(change)])
            yield mutant


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: p.name)
def test_compiled_check_agrees_with_jsonschema_on_every_mutant(source: Path) -> None:
    validator = schema_validator()
    check = compile_schema(validator.schema)
    doc = manifest_doc(source)
    assert check(doc) and validator.is_valid(doc)
    tried = invalid = 0
    for mutant in mutants(doc):
        expected = validator.is_valid(mutant)
        assert check(mutant) == expected, mutant
        tried += 1
        invalid += not expected
    assert invalid > tried // 2  # the mutations do break the schema, mostly


def test_unknown_keywords_and_references_do_not_compile() -> None:
    with pytest.raises(ValueError, match="not compiled"):
        compile_schema({"type": "object", "patternProperties": {"^x": {"type": "string"}}})
    with pytest.raises(ValueError, match="references"):
        compile_schema({"$ref": "https://example.com/other.json"})


@pytest.mark.parametrize("schema", [{"pattern": "^a$"}, {"type": "string", "pattern": "^a$"}])
def test_a_pattern_ending_in_dollar_does_not_compile(schema: dict[str, Any]) -> None:
    # Python's $ matches before a final newline too, where jsonschema's does not
    with pytest.raises(ValueError, match="anchor it with"):
        compile_schema(schema)


@pytest.mark.parametrize(
    ("schema", "good", "bad"),
    [
        ({"type": "integer"}, [1, 2.0, -3], [True, 1.5, "1", None]),
        ({"type": "number", "minimum": 0}, [0, 0.5, 3], [-1, -0.5, False]),
        ({"uniqueItems": True}, [["a", "b"], [1, "1"], [[1], [2]]], [["a", "a"], [1, 1.0]]),
        ({"enum": ["a", "b"]}, ["a"], ["c", 1, None]),
        ({"oneOf": [{"type": "string"}, {"minLength": 2}]}, ["a", 5], ["ab"]),
        ({"type": ["string", "null"], "maxLength": 1}, [None, "a"], ["ab", 0]),
        # the schemas compiled as one check each (a file entry's)
        ({"type": "string", "minLength": 1, "maxLength": 3}, ["a", "abc"], ["", "abcd", 1]),
        ({"type": "string", "pattern": "^[0-9a-f]{2}\\Z"}, ["0a"], ["0A", "0a\n", 10, None]),
        (
            {"type": "integer", "minimum": 0, "maximum": 5},
            [0, 5, 2.0],
            [-1, 6, True, 1.5, float("inf"), float("nan"), "1", 10**400],
        ),
        (
            {
                "type": "object",
                "additionalProperties": False,
                "required": ["a"],
                "properties": {"a": {"type": "integer"}},
            },
            [{"a": 1}],
            [{"a": "x"}, {}, {"a": 1, "b": 2}, [], None],
        ),
        ({"type": "object", "required": ["a"]}, [{"a": 1, "b": 2}], [{}, "a", None]),
        (
            {"type": "object", "properties": {"a": {"type": "string"}}},
            [{}, {"a": "x", "b": 1}],
            [{"a": 1}, 3, []],
        ),
    ],
)
def test_keywords_decide_like_jsonschema(
    schema: dict[str, Any], good: list[Any], bad: list[Any]
) -> None:
    from jsonschema import Draft202012Validator

    check = compile_schema(schema)
    validator = Draft202012Validator(schema)
    for value in good:
        assert check(value) and validator.is_valid(value), value
    for value in bad:
        assert not check(value) and not validator.is_valid(value), value
