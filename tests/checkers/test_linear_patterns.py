"""Patterns from a bundle or a log run in time linear in the text (issue 42, item 4):
RE2 for patterns inside the subset where it means what Python's ``re`` means, held to
``re`` on generated patterns; the rest named as outside."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from checkers import linear
from checkers.inspect_log import rules


def test_nested_quantifier_with_dollar_is_routed_to_re2() -> None:
    # (a+)+$ kept an Inspect import busy past 30 s: it is inside the subset, so RE2 runs it
    compiled = linear.compile("(a+)+$", True)
    assert compiled.translated == "(?:((?:a)+))+\\z"
    assert compiled.search("a" * 200_000 + "b") is None
    assert compiled.search("a" * 5).groups() == ("aaaaa",)


def test_inspect_pattern_scorer_runs_a_nested_quantifier_through_re2(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def backtracking(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("Python's backtracking engine was used")

    monkeypatch.setattr(rules.re, "search", backtracking)
    options = {"pattern": "(a+)+$", "ignore_case": True, "match_all": False}
    assert rules.rescore("pattern", options, "a" * 100_000 + "b", ("a",)) == "I"


@pytest.mark.parametrize(
    "pattern, construct",
    [
        (r"(?=a)a", "group syntax"),
        (r"(a)\1", "escape"),
        (r"(?P<x>a)", "group syntax"),
        (r"(?i)a", "group syntax"),
        (r"a*+", "quantifier after a quantifier"),
        (r"a{,3}", "whole quantifier"),
        ("é", "not ASCII"),
        (r"[a--b]", "set operation"),
        (r"a{1001}", "count above"),
    ],
)
def test_patterns_outside_the_subset_are_named(pattern: str, construct: str) -> None:
    with pytest.raises(linear.NotInSubset, match=construct):
        linear.compile(pattern)


def test_texts_where_the_engines_differ_are_outside_the_subset() -> None:
    with pytest.raises(linear.NotInSubset, match="not ASCII"):
        linear.compile(r"\w+").search("café")
    with pytest.raises(linear.NotInSubset, match="ends with a newline"):
        linear.compile(r"a$").search("a\n")
    assert linear.compile("caf.").search("café").group(0) == "café"  # no Unicode set


_ATOMS = st.sampled_from(
    [
        "a",
        "b",
        "ab",
        ".",
        r"\d",
        r"\w",
        r"\s",
        r"\W",
        "[ab]",
        "[^a]",
        "[a-c0-9]",
        r"\.",
        "^",
        "$",
        r"\b",
        " ",
    ]
)


@st.composite
def patterns(draw: st.DrawFn, depth: int = 0) -> str:
    parts = []
    for _ in range(draw(st.integers(1, 3))):
        if depth < 2 and draw(st.booleans()):
            inner = draw(patterns(depth + 1))
            if draw(st.booleans()):
                inner += "|" + draw(patterns(depth + 1))
            atom = f"({inner})" if draw(st.booleans()) else f"(?:{inner})"
        else:
            atom = draw(_ATOMS)
        if atom not in ("^", "$", r"\b"):
            atom += draw(st.sampled_from(["", "", "*", "+", "?", "{2}", "{1,3}", "*?", "+?", "??"]))
        parts.append(atom)
    return "".join(parts)


@settings(max_examples=400, deadline=None)
@given(
    pattern=patterns(),
    text=st.text(alphabet="abcAB9 .\t\x1c-_", max_size=12),
    ignore_case=st.booleans(),
)
def test_re2_gives_what_python_gives_inside_the_subset(
    pattern: str, text: str, ignore_case: bool
) -> None:
    try:
        compiled = linear.compile(pattern, ignore_case)
    except linear.NotInSubset:
        return
    python = re.search(pattern, text, re.IGNORECASE if ignore_case else 0)
    ours = compiled.search(text)
    assert (python is None) == (ours is None), (pattern, text)
    if python is not None:
        assert python.group(0) == ours.group(0), (pattern, text)
        assert python.groups() == ours.groups(), (pattern, text)


def test_promptfoo_regex_in_the_subset_is_run_by_re2(monkeypatch: pytest.MonkeyPatch) -> None:
    # a polynomial backtracker the JavaScript subset accepts: RE2 runs it in one scan
    from checkers.promptfoo import jsregex

    pattern = r"\s*\s*\s*\s*\s*\s*x"
    assert jsregex._for_re2(pattern) is not None
    real = jsregex.translate

    def python_engine(value: str) -> re.Pattern[str]:
        compiled = real(value)

        class Refused:
            pattern = compiled.pattern

            def search(self, _text: str) -> None:
                raise AssertionError("Python's backtracking engine was used")

        return Refused()  # type: ignore[return-value]

    jsregex._for_re2.cache_clear()
    monkeypatch.setattr(jsregex, "translate", python_engine)
    assert jsregex.test(pattern, " " * 50_000) is False
    assert jsregex.test(r"\bword\b", "a word here") is True
    jsregex._for_re2.cache_clear()


def test_promptfoo_regex_with_a_lookahead_or_astral_text_keeps_the_old_engine() -> None:
    from checkers.promptfoo import jsregex

    assert jsregex._for_re2("(?=a)a") is None
    assert jsregex.test("^..$", "\U0001f600") is True  # two UTF-16 units, as in JavaScript


@settings(max_examples=400, deadline=None)
@given(
    pattern=patterns(),
    text=st.text(alphabet="abcAB9 .\t-_", max_size=14),
    ignore_case=st.booleans(),
)
def test_re2_counts_what_python_finds_all_inside_the_subset(
    pattern: str, text: str, ignore_case: bool
) -> None:
    # contamination markers are counted per line: the same count as re.findall
    flags = re.IGNORECASE if ignore_case else 0
    assert linear.count(pattern, text, ignore_case) == len(re.findall(pattern, text, flags))
    try:
        compiled = linear.compile(pattern, ignore_case)
        compiled.count(text)
    except linear.NotInSubset:
        return
    assert not compiled.empty
