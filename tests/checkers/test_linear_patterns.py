"""Patterns from a bundle or a log run in time linear in the text (issue 42, item 4):
RE2 for patterns inside the subset where it means what Python's ``re`` means, held to
``re`` on generated patterns; the rest named as outside."""

from __future__ import annotations

import re
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from checkers import linear
from checkers.inspect_log import rules
from tests.helpers import refuse_backtracking


def test_nested_quantifier_with_dollar_is_routed_to_re2() -> None:
    # (a+)+$ kept an Inspect import busy past 30 s: it is inside the subset, so RE2 runs it
    compiled = linear.compile("(a+)+$", True)
    assert compiled.translated == "(?:((?:a)+))+\\z"
    assert compiled.search("a" * 200_000 + "b") is None
    assert compiled.search("a" * 5).groups() == ("aaaaa",)


def test_inspect_pattern_scorer_runs_a_nested_quantifier_through_re2(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    refuse_backtracking(monkeypatch, rules.re)
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


def _pattern_log(pattern: str, completion: str, stored: str, ignore_case: bool = True) -> bytes:
    from checkers.inspect_log.log import InspectLog, Record, Score, to_json_log

    records = (Record("s0", 1, ("a",), completion, {"p": Score(stored, None)}, None, "s0"),)
    options = {"pattern": pattern, "ignore_case": ignore_case}
    header = {
        "version": 2,
        "status": "success",
        "eval": {"task": "t", "scorers": [{"name": "pattern", "options": options}]},
        "results": {"scores": [{"name": "p", "scorer": "pattern", "metrics": {}}]},
    }
    return to_json_log(InspectLog("json", header, records), records)


def _rescore(version: int, data: bytes, **params: object) -> Any:
    import checkers
    from bundler.run.runner import run_checker

    found = checkers.get(f"inspect-rescore@{version}")
    assert found is not None
    return run_checker(found, {"log": data}, {"scorer": "p", **params})


def test_out_of_subset_pattern_is_not_rerun_under_rescore_v3(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    refuse_backtracking(monkeypatch, rules.re)
    verdict = _rescore(3, _pattern_log(r"(a)\1", "aa", "C"))
    assert verdict.status == "error"
    assert verdict.codes == ("pattern.not_rerun",)
    assert "'(a)\\\\1' is not re-run" in verdict.message
    assert "escape" in verdict.message  # why it is outside the subset


def test_text_outside_the_subset_is_not_rerun_under_rescore_v3() -> None:
    # \w is Unicode in Python and ASCII in RE2: on a completion that is not ASCII, not run
    verdict = _rescore(3, _pattern_log(r"(\w+)", "café", "I"))
    assert verdict.codes == ("pattern.not_rerun",)
    assert "on s0" in verdict.message and "not ASCII" in verdict.message


def test_restated_out_of_subset_pattern_is_not_rerun_rather_than_vacuous() -> None:
    options = {"pattern": r"(?=a)a", "ignore_case": True}
    verdict = _rescore(3, _pattern_log(r"(?=a)a", "a", "C"), method="pattern", options=options)
    assert verdict.codes == ("pattern.not_rerun",)


@settings(max_examples=300, deadline=None)
@given(
    pattern=patterns(),
    completion=st.text(alphabet="abAB9 .\t-", max_size=10),
    stored=st.sampled_from(["C", "I"]),
    ignore_case=st.booleans(),
)
def test_rescore_v3_gives_v2_verdicts_for_every_in_subset_pattern(
    pattern: str, completion: str, stored: str, ignore_case: bool
) -> None:
    data = _pattern_log(pattern, completion, stored, ignore_case)
    old, new = _rescore(2, data), _rescore(3, data)
    try:
        linear.compile(pattern, ignore_case).search(completion)
    except linear.NotInSubset:
        assert new.codes == ("pattern.not_rerun",), (pattern, completion)
        return
    assert (new.status, new.codes, new.message) == (old.status, old.codes, old.message)


def _contamination(version: int, text: str, *markers: str, ignore_case: bool = False) -> Any:
    import checkers
    from bundler.run.runner import run_checker

    found = checkers.get(f"contamination@{version}")
    assert found is not None
    inputs = {"transcripts": {"run.log": text.encode()}}
    return run_checker(found, inputs, {"markers": list(markers), "ignore_case": ignore_case})


def test_out_of_subset_marker_is_not_rerun_under_contamination_v2(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    verdict = _contamination(2, "ok\nab\n", r"(?=a)ab")
    assert verdict.codes == ("pattern.not_rerun",)
    assert "'(?=a)ab' is not re-run" in verdict.message and "group syntax" in verdict.message


def test_line_outside_the_subset_is_not_rerun_under_contamination_v2() -> None:
    verdict = _contamination(2, "ok\ncafé x\n", r"\w+ x")
    assert verdict.codes == ("pattern.not_rerun",)
    assert "on run.log:2" in verdict.message


@settings(max_examples=120, deadline=None)
@given(
    marker=patterns(),
    lines=st.lists(st.text(alphabet="abAB9 .\t-", max_size=8), min_size=1, max_size=3),
    ignore_case=st.booleans(),
)
def test_contamination_v2_gives_v1_verdicts_for_every_in_subset_marker(
    marker: str, lines: list[str], ignore_case: bool
) -> None:
    text = "\n".join(["transcript", *lines])
    old = _contamination(1, text, marker, ignore_case=ignore_case)
    new = _contamination(2, text, marker, ignore_case=ignore_case)
    try:
        compiled = linear.compile(marker, ignore_case)
        for line in text.split("\n"):
            compiled.count(line)
    except linear.NotInSubset:
        assert new.codes in (("pattern.not_rerun",), old.codes), (marker, text)
        return
    assert (new.status, new.codes, new.message, new.details) == (
        old.status,
        old.codes,
        old.message,
        old.details,
    )


def test_out_of_subset_marker_is_not_rerun_rather_than_vacuous_under_contamination_v2() -> None:
    # the counterexample finds its line by RE2 too: the marker is named, not called vacuous
    verdict = _contamination(2, "ok\n", r"(a)(?!b)")
    assert verdict.codes == ("pattern.not_rerun",)
    assert _contamination(1, "ok\n", r"(a)(?!b)").status == "pass"


@settings(max_examples=400, deadline=None)
@given(
    pattern=patterns(),
    text=st.text(alphabet="abcAB9 .\t-", max_size=12),
    replace=st.sampled_from(["", "x", "<>", "$1"]),
)
def test_re2_substitutes_what_python_substitutes_inside_the_subset(
    pattern: str, text: str, replace: str
) -> None:
    from checkers.api import CheckerInputError

    try:
        ours = linear.sub(pattern, replace, text)
    except CheckerInputError as exc:
        assert exc.code == "pattern.not_rerun"
        return
    assert ours == re.sub(pattern, replace, text), (pattern, replace, text)


def test_substitution_that_can_match_empty_or_refers_to_a_group_is_not_rerun() -> None:
    from checkers.api import CheckerInputError

    with pytest.raises(CheckerInputError, match="can match the empty text"):
        linear.sub("a*", "x", "baa")
    with pytest.raises(CheckerInputError, match="backslash"):
        linear.sub("(a)", r"\1\1", "baa")
    assert linear.sub("(a+)+$", "", "a" * 50_000 + "b") == "a" * 50_000 + "b"
