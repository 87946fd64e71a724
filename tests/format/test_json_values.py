"""JSON values counted before parsing: the count equals the parsed one, and a document
past the cap is refused before the parser builds it, in time linear in its length."""

from __future__ import annotations

import contextlib
import gc
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bundler.format import strictjson

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(alphabet='ab,[]{}"\\: \n'),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=3), inner, max_size=4)
    ),
    max_leaves=30,
)


def parsed_count(value: Any) -> int:
    pending, count = [value], 0
    while pending:
        item = pending.pop()
        count += 1
        if isinstance(item, dict):
            pending.extend(item.values())
        elif isinstance(item, list):
            pending.extend(item)
    return count


@settings(max_examples=300, deadline=None)
@given(JSON, st.sampled_from([None, 1]), st.booleans())
def test_values_counted_before_parsing_equal_the_parsed_count(
    value: Any, indent: int | None, as_bytes: bool
) -> None:
    text = json.dumps(value, indent=indent, ensure_ascii=False)
    counted = strictjson.count_values(text.encode() if as_bytes else text)
    assert counted == parsed_count(value)


def test_a_document_past_the_value_cap_is_refused_before_parsing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls = []
    monkeypatch.setattr(json, "loads", lambda *a, **k: calls.append(1))
    with pytest.raises(ValueError, match="holds more than 100 values"):
        strictjson.loads("[" + ",".join(["0"] * 200) + "]", max_values=100)
    assert calls == []


def test_commas_inside_strings_do_not_count_as_values() -> None:
    text = json.dumps(["a," * 500])
    assert strictjson.loads(text, max_values=2) == ["a," * 500]


def test_an_unterminated_string_of_escaped_quotes_is_counted_in_one_pass() -> None:
    """Every opening quote tried again to the end would take quadratic time."""
    text = b'["' + b'\\"' * 200_000 + b"\\"
    assert strictjson.count_values(text) == 2  # malformed: the parser refuses it after


@pytest.mark.parametrize("text", ['{"a": [1, {"b": null}]}', '{"a": 1, "a": 2}', "[" * 300])
@pytest.mark.parametrize("collecting", [True, False])
def test_reading_a_document_leaves_the_garbage_collector_as_it_was(
    text: str, collecting: bool
) -> None:
    # the collector is paused while json builds a document (its values hold no cycle),
    # and left as it was afterwards, a refused document included
    was = gc.isenabled()
    (gc.enable if collecting else gc.disable)()
    try:
        with contextlib.suppress(ValueError):
            strictjson.loads(text, max_values=10)
        assert gc.isenabled() is collecting
    finally:
        (gc.enable if was else gc.disable)()
