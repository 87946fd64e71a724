"""The metaschema check is remembered per exact document (checkers/jsonschemas.py): a
document equal in Python but not as data (``True`` for ``1``) is checked on its own."""

from __future__ import annotations

import pytest
from jsonschema import exceptions
from jsonschema.validators import Draft202012Validator

from checkers.jsonschemas import check_schema


def test_a_document_equal_only_in_python_is_checked_again() -> None:
    check_schema(Draft202012Validator, {"type": "string", "minLength": 1})
    assert {"type": "string", "minLength": True} == {"type": "string", "minLength": 1}
    with pytest.raises(exceptions.SchemaError):  # True is not a non-negative integer
        check_schema(Draft202012Validator, {"type": "string", "minLength": True})


def test_an_invalid_document_is_refused_every_time_with_the_same_message() -> None:
    messages = []
    for _ in range(3):
        with pytest.raises(exceptions.SchemaError) as caught:
            check_schema(Draft202012Validator, {"type": "no-such-type"})
        messages.append(caught.value.message)
    assert len(set(messages)) == 1 and "no-such-type" in messages[0]


def test_a_document_that_is_not_plain_data_is_checked_without_memory() -> None:
    class Odd(dict):  # type: ignore[type-arg]
        pass

    check_schema(Draft202012Validator, Odd(type="string"))
    with pytest.raises(exceptions.SchemaError):
        check_schema(Draft202012Validator, Odd(type="no-such-type"))


def test_a_large_document_is_checked_without_memory(monkeypatch: pytest.MonkeyPatch) -> None:
    from checkers import jsonschemas

    monkeypatch.setattr(jsonschemas, "_LARGEST", 100)
    before = len(jsonschemas._seen)
    large = {"type": "object", "properties": {f"p{i}": {"type": "string"} for i in range(100)}}
    check_schema(Draft202012Validator, large)
    assert len(jsonschemas._seen) == before  # not kept: memory stays bounded
    small = {"type": "object", "properties": {"owner": {"type": "string"}}, "title": "small"}
    check_schema(Draft202012Validator, small)
    assert len(jsonschemas._seen) == min(before + 1, jsonschemas._REMEMBERED)
