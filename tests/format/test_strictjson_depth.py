"""Strict JSON reading measures a document's depth from its text, and refuses alike; it
reads and refuses every document as the reading before issue 33 did.

``strictjson.loads`` used to walk every parsed document of more than 200 containers to
measure its depth (about a second for 10 MB); it now reads the depth from the text
outside its strings and walks only a document that may be too deep.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from checkers import strictjson

# text that looks like nesting, escapes and quotes inside strings
_TEXT = st.text(alphabet='[]{}"\\ab\u2028\x00é', max_size=8)
_VALUES = st.recursive(
    st.none() | st.integers() | _TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_TEXT, inner, max_size=3),
    max_leaves=30,
)


def _open_at_most(value: Any) -> int:
    if isinstance(value, dict):
        return 1 + max(map(_open_at_most, value.values()), default=0)
    if isinstance(value, list):
        return 1 + max(map(_open_at_most, value), default=0)
    return 0


@settings(max_examples=500)
@given(_VALUES, st.booleans(), st.booleans())
def test_depth_read_from_the_text_is_the_depth_of_the_value(
    value: Any, ascii_only: bool, as_bytes: bool
) -> None:
    text = json.dumps(value, ensure_ascii=ascii_only)
    assert strictjson._deepest(text.encode() if as_bytes else text) == _open_at_most(value)


def _old_loads(text: str | bytes) -> Any:
    """``strictjson.loads`` as it was before issue 33: a hook an object, then a walk."""
    value = json.loads(
        text,
        object_pairs_hook=strictjson._no_duplicates,
        parse_constant=strictjson._no_constant,
        parse_float=strictjson._finite,
    )
    strictjson._check_size(value, strictjson.MAX_DEPTH, None)
    return value


def _outcome(read: Any, text: str | bytes) -> tuple[str, Any]:
    try:
        return "value", read(text)
    except RecursionError:
        return "error", "nested deeper than 200 levels"
    except ValueError as exc:
        return "error", str(exc)


# keys that clash, hold quotes, colons, escapes and blanks; blanks around the colons
_KEYS = st.text(alphabet='ab":\\ \t', max_size=3)
_BLANK = st.sampled_from(["", " ", "\n\t ", "\r\n"])
_SCALARS = st.sampled_from(
    ["1", "-0.5", "null", "true", '":"', '" :"', '"\\\\"', '"\\":"', '"a\\\\":1', "NaN", "1e999"]
) | _TEXT.map(json.dumps)


def _object(pairs: list[tuple[str, str]], blank: str) -> str:
    return "{" + ",".join(f"{json.dumps(k)}{blank}:{blank}{v}" for k, v in pairs) + "}"


_DOCUMENTS = st.recursive(
    _SCALARS,
    lambda inner: (
        st.lists(inner, max_size=3).map(lambda items: "[" + ",".join(items) + "]")
        | st.builds(_object, st.lists(st.tuples(_KEYS, inner), max_size=4), _BLANK)
    ),
    max_leaves=30,
)


@settings(max_examples=1500, deadline=None)
@given(_DOCUMENTS, st.sampled_from(["str", "bytes", "utf-16"]))
def test_a_document_is_read_or_refused_as_the_hook_an_object_read_it(text: str, form: str) -> None:
    data: str | bytes = {"str": text, "bytes": text.encode(), "utf-16": text.encode("utf-16")}[form]
    assert _outcome(strictjson.loads, data) == _outcome(_old_loads, data)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"a": 1, "b": {"c": 2, "c": 3}}', "duplicate key 'c'"),
        ('{"a\\"": 1, "a\\"" : 2}', "duplicate key 'a\"'"),
        ('[{"x": ":"}, {"y": 1, "y": 2}]', "duplicate key 'y'"),
        ('[{"a": 1, "a": 2}, NaN]', "duplicate key 'a'"),  # the first problem, as before
    ],
)
def test_a_key_given_twice_is_refused_by_name(text: str, message: str) -> None:
    for data in (text, text.encode(), text.encode("utf-16")):
        with pytest.raises(ValueError, match=re.escape(message)):
            strictjson.loads(data)


def test_strings_that_look_like_keys_are_no_duplicates() -> None:
    text = '{"a": "\\":", "b": " :", "c": ["\\\\", "\\"\\" :"]}'
    assert strictjson.loads(text) == json.loads(text)


@pytest.mark.parametrize("inner", ["1", '"]]]"', "[]"])
def test_a_document_one_level_too_deep_behind_many_containers_is_refused(inner: str) -> None:
    wide = ",".join(["[]"] * 300)
    text = "[" + wide + "," + "[" * 199 + inner + "]" * 199 + "]"
    with pytest.raises(ValueError, match="nested deeper than 200 levels"):
        strictjson.loads(text)


def test_a_document_at_the_depth_limit_behind_many_containers_is_read() -> None:
    text = "[" + ",".join(["[]"] * 300) + "," + "[" * 198 + '"]]]"' + "]" * 198 + "]"
    assert len(strictjson.loads(text)) == 301


def test_utf16_text_is_measured_by_walking() -> None:
    text = json.dumps([[1]]).encode("utf-16")
    assert strictjson._deepest(text) >= 2
    assert strictjson.loads(text) == [[1]]
    with pytest.raises(ValueError, match="nested deeper than 200 levels"):
        strictjson.loads(("[" * 201 + "]" * 201).encode("utf-16"))
    with pytest.raises(ValueError, match="would be read as infinity"):
        strictjson.loads('{"a": 1e999}'.encode("utf-16"))
