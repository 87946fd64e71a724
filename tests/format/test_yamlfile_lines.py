"""A YAML input's version directive is read from its first lines, without a list of all
its lines built first (issue 33, peak memory): ``text.splitlines()`` of a 100 MB input
held about as much again in line objects before the first line was looked at."""

from __future__ import annotations

import tracemalloc

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from checkers import yamlfile

_BREAKS = "\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029"


@settings(max_examples=300, deadline=None)
@given(text=st.text(alphabet=_BREAKS + "ab %#\r\n", max_size=30))
def test_lines_read_one_at_a_time_are_those_of_splitlines(text: str) -> None:
    assert list(yamlfile._lines(text)) == text.splitlines()


def test_a_large_input_has_its_directive_read_in_memory_bounded_by_a_line() -> None:
    text = "%YAML 1.1\n---\n" + "key: value\n" * 500_000
    tracemalloc.start()
    try:
        yamlfile._check_version(text)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < len(text) // 100, f"{peak} bytes for {len(text)}"


def test_a_directive_other_than_yaml_1_1_is_still_refused_with_its_line() -> None:
    with pytest.raises(yamlfile.YamlProblem, match=r"declares YAML 1\.2") as found:
        yamlfile._check_version("# note\u2028\n%YAML 1.2\n---\na: 1\n")
    assert found.value.line == 3
