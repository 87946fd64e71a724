"""JSON Lines are read by one decoder made once and give what reading each line with
``loads`` gave: the same values and, for a line it refuses, the same error (issue 33,
item 3).

``loads_lines`` called ``loads`` a line, and ``json.loads`` with hooks builds a decoder
a call (about a third of reading a file of small records). A line with no huge number to
look for and too few brackets to be too deep is now read by a decoder made once; any
other line, and any line it refuses, by ``loads``, which gives the value or the error.
``_before`` is the old loop, the reference. The collector is paused while the values
are built (they hold no cycle for it to free).
"""

from __future__ import annotations

import gc
import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from checkers import strictjson


def _before(
    text: str,
    max_values: int | None = None,
    *,
    constants: bool = False,
    huge_numbers: bool = False,
    newline_only: bool = False,
) -> list[tuple[int, Any]]:
    over = (
        max_values is not None
        and strictjson.bound(text) + strictjson._lines_bound(text, newline_only) > max_values
    )
    filled = strictjson._filled_lines(text, newline_only) if over else 0
    if max_values is not None and over and strictjson.count_values(text, filled) > max_values:
        raise ValueError(f"1: the lines hold more than {max_values} values")
    lines = text.split("\n") if newline_only else text.splitlines()
    if newline_only:
        lines = [line.removesuffix("\r") for line in lines]
    records = []
    for number, line in enumerate(lines, start=1):
        if line.strip():
            try:
                records.append(
                    (
                        number,
                        strictjson.loads(line, constants=constants, huge_numbers=huge_numbers),
                    )
                )
            except ValueError as exc:
                raise ValueError(f"{number}: not a JSON value: {exc}") from None
    if max_values is not None and over:
        try:
            strictjson._check_size(
                [value for _, value in records], strictjson.MAX_DEPTH + 1, max_values + 1
            )
        except ValueError:
            raise ValueError(f"1: the lines hold more than {max_values} values") from None
    return records


def _outcome(read: Any, text: str, **options: Any) -> str:
    """The records as text (NaN is equal to itself there, -0.0 and 0 apart), or the error."""
    try:
        records = read(text, **options)
    except ValueError as exc:
        return f"{type(exc).__name__}: {exc}"
    return repr([(n, _typed(v)) for n, v in records])


def _typed(value: Any) -> Any:
    if isinstance(value, dict):
        return [(k, _typed(v)) for k, v in value.items()]
    if isinstance(value, list):
        return [_typed(v) for v in value]
    if isinstance(value, float) and math.isnan(value):
        return "nan"
    return (type(value).__name__, value)


# lines that read, and lines each rule refuses: a duplicate key, NaN and infinities, a
# number too large for a float, a byte order mark, too deep, not JSON, blanks and breaks
_LINE = st.sampled_from(
    [
        '{"a": 1, "b": [true, null, "x"]}',
        '{"a": 1, "a": 2}',
        '{"a": {"b": 1, "b": 1}}',
        "[NaN, 1]",
        '{"t": Infinity}',
        "-Infinity",
        "1e999",
        '{"n": 1E+400}',
        "[" + "9" * 310 + "]",
        "\ufeff{}",
        "[" * 201 + "]" * 201,
        "[" * 200 + "]" * 200,
        '"' + "[" * 300 + '"',
        '{"a": 1} {"b": 2}',
        "{",
        "",
        "   ",
        "1.5",
        '"caf\u00e9 \\u2028"',
        "[1,]",
        '{"x": -0.0, "y": 0}',
    ]
)
_BREAK = st.sampled_from(["\n", "\r\n", "\r", "\u2028", "\x1c", "\n\n"])


@settings(max_examples=500, deadline=None)
@given(
    lines=st.lists(st.tuples(_LINE, _BREAK), max_size=8),
    max_values=st.sampled_from([None, 3, 12, 1000]),
    constants=st.booleans(),
    huge_numbers=st.booleans(),
    newline_only=st.booleans(),
)
def test_json_lines_read_by_one_decoder_give_the_values_and_errors_of_loads(
    lines: list[tuple[str, str]],
    max_values: int | None,
    constants: bool,
    huge_numbers: bool,
    newline_only: bool,
) -> None:
    text = "".join(line + end for line, end in lines)
    options = {
        "max_values": max_values,
        "constants": constants,
        "huge_numbers": huge_numbers,
        "newline_only": newline_only,
    }
    assert _outcome(strictjson.loads_lines, text, **options) == _outcome(_before, text, **options)


@pytest.mark.parametrize("was_collecting", [True, False])
@pytest.mark.parametrize("text", ['{"a": [1]}\n[2]\n', '{"a": 1}\n{"a": 1, "a": 2}\n'])
def test_the_collector_paused_while_lines_are_read_is_left_as_it_was(
    was_collecting: bool, text: str
) -> None:
    """JSON values hold no cycle, so the collector is paused while they are built; read or
    refused, the lines leave it as they found it."""
    (gc.enable if was_collecting else gc.disable)()
    try:
        try:
            strictjson.loads_lines(text)
        except ValueError as exc:
            assert "duplicate key 'a'" in str(exc)
        assert gc.isenabled() is was_collecting
    finally:
        gc.enable()
