"""Strict JSON reading measures a document's depth from its text, and refuses alike.

``strictjson.loads`` used to walk every parsed document of more than 200 containers to
measure its depth (about a second for 10 MB); it now reads the depth from the text
outside its strings and walks only a document that may be too deep.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bundler.format import strictjson

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
