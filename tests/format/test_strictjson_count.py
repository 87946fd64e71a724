"""Counting a JSON text's values and measuring its depth take memory bounded by a chunk,
not by the text, and answer exactly as the whole-text readings did (issue 33, peak
memory).

``count_values`` used to blank every string of the whole text with one ``re.sub``: a
100 MB document refused by verify's value cap held about 800 MiB at once (the list of
pieces and the blanked copy). ``_deepest`` made two copies of the whole text (about
19 MiB for 10 MB). JSON Lines were split into a list of lines before the cap was
checked. Each now reads a chunk at a time.
"""

from __future__ import annotations

import json
import re
import tracemalloc
from itertools import accumulate
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from checkers import strictjson

# the whole-text count as it was before issue 33, kept to compare with
_OLD_STRING = re.compile(r'"[^"\\]*+(?:\\.[^"\\]*+)*+(?:"|\\?\Z)', re.DOTALL)
_OLD_STRING_BYTES = re.compile(rb'"[^"\\]*+(?:\\.[^"\\]*+)*+(?:"|\\?\Z)', re.DOTALL)
_OLD_EMPTY = re.compile(r"\[\s*\]|\{\s*\}")
_OLD_EMPTY_BYTES = re.compile(rb"\[\s*\]|\{\s*\}")


def _old_count_values(text: str | bytes, documents: int = 1) -> int:
    if isinstance(text, bytes):
        blank_bytes = _OLD_STRING_BYTES.sub(b'""', text)
        found = len(_OLD_EMPTY_BYTES.findall(blank_bytes))
        return strictjson.bound(blank_bytes) - 1 + documents - found
    blank = _OLD_STRING.sub('""', text)
    return strictjson.bound(blank) - 1 + documents - len(_OLD_EMPTY.findall(blank))


# JSON-ish text: strings with escapes, quotes and brackets, empty containers with blanks
# (Unicode ones too), numbers and garbage, in any order
_PIECES = st.sampled_from(
    ['"', "\\", "[", "]", "{", "}", ",", ":", " ", "\n", "\u2028", "\x0c", "\x1c", "a", "1",
     "-2.5e3", '\\"', '""', "\\\\", "[ ]", "{\t}", '"a,[{"', "null", "é", "\x00"]
)  # fmt: skip
_JSONISH = st.lists(_PIECES, max_size=40).map("".join)


@settings(max_examples=400, deadline=None)
@given(text=_JSONISH, documents=st.integers(0, 3), chunk=st.integers(1, 9))
def test_counting_by_chunks_counts_as_the_whole_text_count_did(
    text: str, documents: int, chunk: int
) -> None:
    # small chunks put every boundary somewhere: in a string, in an escape, between the
    # brackets of an empty container, in the blanks after one
    with mock.patch.object(strictjson, "_CHUNK", chunk):
        for data in (text, text.encode("utf-8")):
            assert strictjson.count_values(data, documents) == _old_count_values(data, documents)


@settings(max_examples=100, deadline=None)
@given(value=st.recursive(
    st.none() | st.integers() | st.text(alphabet='[]{}",\\ é', max_size=6),
    lambda inner: st.lists(inner, max_size=4)
    | st.dictionaries(st.text(max_size=3), inner, max_size=4),
    max_leaves=40,
), chunk=st.integers(1, 9))  # fmt: skip
def test_counting_by_chunks_counts_every_value_of_a_document(value: object, chunk: int) -> None:
    text = json.dumps(value, indent=1)
    with mock.patch.object(strictjson, "_CHUNK", chunk):
        assert strictjson.count_values(text) == _old_count_values(text)


@pytest.mark.parametrize(
    "text",
    [
        "[" + " " * 50 + "]",  # an empty list whose blanks span chunks
        '["' + 'x\\"' * 40 + '"]',  # one string longer than a chunk
        '"' + "ab\\" * 30,  # left open, ending in an escape
        "[1," * 30 + "]" * 30,
    ],
    ids=["long-empty-list", "long-string", "open-string", "deep"],
)
def test_counting_across_chunks_of_long_runs(text: str) -> None:
    with mock.patch.object(strictjson, "_CHUNK", 7):
        assert strictjson.count_values(text) == _old_count_values(text)
        assert strictjson.count_values(text.encode()) == _old_count_values(text.encode())


def _rows(size: int) -> str:
    row = '{"id": 1, "name": "row-\\"1\\"", "tags": ["a", "b", []], "meta": {"y": null}}'
    return "[" + ", ".join([row] * (size // (len(row) + 2))) + "]"


@pytest.mark.parametrize("kind", [str, bytes])
def test_a_large_text_is_counted_in_memory_bounded_by_a_chunk(kind: type) -> None:
    # 128 chunks of text: the whole-text count held several times the text at once
    text = _rows(128 * strictjson._CHUNK)
    data = text if kind is str else text.encode()
    tracemalloc.start()
    try:
        counted = strictjson.count_values(data)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert counted == _old_count_values(data)
    assert peak < len(data) // 4, f"{peak} bytes at most for {len(data)}"


def test_a_large_document_over_the_cap_is_refused_as_before() -> None:
    text = _rows(4 * strictjson._CHUNK)
    values = _old_count_values(text)
    with pytest.raises(ValueError, match=f"holds more than {values - 1} values"):
        strictjson.loads(text, max_values=values - 1)
    assert len(strictjson.loads(text, max_values=values)) > 1000


_LINE_PIECES = ["\n", "\r", "\r\n", "\x0b", "\x1d", "\x85", "\u2028", " ", "\t", "\xa0", "a", "[]"]
_LINES = st.lists(st.sampled_from(_LINE_PIECES), max_size=30).map("".join)


@settings(max_examples=300, deadline=None)
@given(text=_LINES, newline_only=st.booleans(), chunk=st.integers(1, 5))
def test_filled_lines_are_counted_as_the_split_lines_were(
    text: str, newline_only: bool, chunk: int
) -> None:
    lines = text.split("\n") if newline_only else text.splitlines()
    expected = sum(1 for line in lines if line.strip())
    with mock.patch.object(strictjson, "_CHUNK", chunk):
        assert strictjson._filled_lines(text, newline_only) == expected


@pytest.mark.parametrize("newline_only", [False, True])
def test_json_lines_over_the_cap_are_refused_before_their_lines_are_split(
    newline_only: bool,
) -> None:
    text = '{"a": [1, 2, 3]}\n' * (64 * strictjson._CHUNK // 17)
    tracemalloc.start()
    try:
        with pytest.raises(ValueError, match="the lines hold more than 1000 values"):
            strictjson.loads_lines(text, 1000, newline_only=newline_only)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < len(text) // 4, f"{peak} bytes at most for {len(text)}"


def _old_deepest(text: str | bytes) -> int:
    """``_deepest`` as it was before issue 33: the whole text at once."""
    if isinstance(text, bytes) and b"\0" in text:
        return len(text)
    data = text if isinstance(text, bytes) else text.encode("utf-8", "surrogatepass")
    data = data.replace(b"\\\\", b"").replace(b'\\"', b"")
    kept = data.translate(None, strictjson._NOT_BRACKET_OR_QUOTE).replace(b'""', b"")
    brackets = b"".join(kept.split(b'"')[::2])
    return max(accumulate(map(strictjson._STEP.__getitem__, brackets)), default=0)


_DEPTH_PIECES = ['"', "\\", "\\\\", "[", "]", "{", "}", "a", "é", "\ud800", '""', '\\"']
_DEPTHISH = st.lists(st.sampled_from(_DEPTH_PIECES), max_size=40).map("".join)


@settings(max_examples=400, deadline=None)
@given(text=_DEPTHISH, chunk=st.integers(1, 9))
def test_depth_read_by_chunks_is_the_whole_text_depth(text: str, chunk: int) -> None:
    # chunks end in runs of backslashes, between an escape and its quote, in strings
    with mock.patch.object(strictjson, "_CHUNK", chunk):
        for data in (text, text.encode("utf-8", "surrogatepass")):
            assert strictjson._deepest(data) == _old_deepest(data)


@pytest.mark.parametrize("kind", [str, bytes])
def test_a_large_text_has_its_depth_read_in_memory_bounded_by_a_chunk(kind: type) -> None:
    text = _rows(128 * strictjson._CHUNK)
    data = text if kind is str else text.encode()
    tracemalloc.start()
    try:
        depth = strictjson._deepest(data)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert depth == _old_deepest(data) == 4  # [{ "tags": [[]] }]
    assert peak < len(data) // 4, f"{peak} bytes at most for {len(data)}"


@pytest.mark.parametrize("newline_only", [False, True])
def test_json_lines_of_more_values_than_the_cap_are_refused_however_few_their_commas(
    newline_only: bool,
) -> None:
    # a line of one number has no comma nor bracket: the lines used to be let through
    # unchecked whenever their commas and brackets were under the cap (a 256 MB file of
    # "1" lines: 128 million values held)
    with pytest.raises(ValueError, match="the lines hold more than 5 values"):
        strictjson.loads_lines("1\n" * 6, 5, newline_only=newline_only)
    with pytest.raises(ValueError, match="the lines hold more than 5 values"):
        strictjson.loads_lines("1\r\n\n" * 3 + "[2]\n[3]\n", 5, newline_only=newline_only)
    assert len(strictjson.loads_lines("1\n\n \n" * 5, 5, newline_only=newline_only)) == 5
