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

from checkers import strictjson

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


@st.composite
def _number_literals(draw: st.DrawFn) -> str:
    """JSON number literals around the largest float: long integer parts, fractions,
    exponents of every size and sign, leading zeros in the exponent."""
    digits = draw(st.integers(min_value=1, max_value=420))
    whole = str(draw(st.integers(min_value=1, max_value=9))) + "".join(
        draw(st.lists(st.sampled_from("0123456789"), min_size=digits - 1, max_size=digits - 1))
    )
    fraction = draw(st.sampled_from(["", ".5", ".000", ".99999"]))
    if not draw(st.booleans()):
        return whole + fraction
    mark, sign = draw(st.sampled_from("eE")), draw(st.sampled_from(["", "+", "-"]))
    zeros = "0" * draw(st.integers(min_value=0, max_value=3))
    return f"{whole}{fraction}{mark}{sign}{zeros}{draw(st.integers(min_value=0, max_value=420))}"


@settings(max_examples=600, deadline=None)
@given(_number_literals())
def test_a_number_read_as_infinity_is_refused_and_no_other(literal: str) -> None:
    # 1 followed by 300 zeros and e9 is 1e309: json.loads reads it as infinity, and the
    # search for a three-digit exponent or 309 digits let it through as one
    infinite = json.loads(literal) == float("inf")  # an integer stays exact
    for text in (literal, f"[0, {literal}]", f'{{"a": {literal}}}'):
        for value in (text, text.encode()):
            if infinite:
                with pytest.raises(ValueError, match="would be read as infinity"):
                    strictjson.loads(value)
            else:
                assert strictjson.loads(value) == json.loads(text)
        if infinite:
            with pytest.raises(ValueError, match="would be read as infinity"):
                strictjson.loads_lines(text + "\n")
        else:
            assert strictjson.loads_lines(text + "\n") == [(1, json.loads(text))]
    assert strictjson.loads(literal, huge_numbers=True) == json.loads(literal)


def test_a_number_of_300_digits_and_a_small_exponent_is_refused_as_infinity() -> None:
    with pytest.raises(ValueError, match="would be read as infinity"):
        strictjson.loads("1" + "0" * 300 + "e9")
    with pytest.raises(ValueError, match="would be read as infinity"):
        strictjson.loads_lines("[" + "9" * 250 + "e99]\n")
