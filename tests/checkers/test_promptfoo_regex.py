"""promptfoo's `regex` assertions: JavaScript RegExp, re-run in Python only inside a subset.

``tests/data/promptfoo/regex_cases.json`` is what Node answered for every (pattern, text)
pair of ``regex_cases.js`` (run it again with ``node tests/data/promptfoo/regex_cases.js >
tests/data/promptfoo/regex_cases.json``): ``true``/``false`` from ``new RegExp(pattern)
.test(text)``, or ``"SyntaxError"``. Each pair is either re-run here with JavaScript's
answer, or not re-run. Node 20.20.2 (which wrote the file) and 22.23.5 (the Node promptfoo
0.123 requires) give the same answer on every pair.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from checkers.promptfoo import jsregex

CASES = json.loads(
    (Path(__file__).resolve().parent.parent / "data" / "promptfoo" / "regex_cases.json").read_text()
)["cases"]


def _decision(pattern: str, text: str) -> bool | None:
    """The re-run's answer, or None when the pattern is not re-run."""
    try:
        return jsregex.test(pattern, text)
    except jsregex.NotInSubset:
        return None


def test_every_rerun_regex_gives_javascripts_answer_and_the_rest_is_not_rerun() -> None:
    disagreements = []
    rerun = 0
    for case in CASES:
        decided = _decision(case["pattern"], case["text"] or "")
        if decided is None:
            continue
        rerun += 1
        if case["js"] == "SyntaxError" or decided != case["js"]:
            disagreements.append((case["pattern"], case["text"], case["js"], decided))
    assert disagreements == []
    assert rerun > 3000  # most of the subset is exercised, not only refused


@pytest.mark.parametrize(
    "pattern",
    ["(?i)abc", "(?s)x.y", "(?x)a b c", "(?#comment)abc", "(?>a+)b", "a{,3}", "(?i:abc)"],
)
def test_syntax_python_reads_and_javascript_does_not_is_not_rerun(pattern: str) -> None:
    with pytest.raises(jsregex.NotInSubset):
        jsregex.translate(pattern)


@pytest.mark.parametrize("text", ["x\ry", "x\u2028y", "x\u2029y", "x\ny"])
def test_a_dot_does_not_match_a_javascript_line_terminator(text: str) -> None:
    js = {c["text"]: c["js"] for c in CASES if c["pattern"] == "x.y"}
    assert js[text] is False
    assert jsregex.test("x.y", text) is False


def test_unicode_digits_and_spaces_are_read_as_javascript_reads_them() -> None:
    assert jsregex.test(r"\d", "\u0663") is False  # Python's \d would match
    assert jsregex.test(r"a\sb", "a\u180eb") is False  # not white space in JavaScript
    assert jsregex.test(r"a\sb", "a\ufeffb") is True  # white space in JavaScript only
    assert jsregex.test("^.$", "\U0001f600") is False  # two UTF-16 units in JavaScript


@pytest.mark.parametrize("pattern", ["(a+)+b", "(a*)*b", "(a|a)*b", "(a|aa)+$"])
def test_a_catastrophic_regex_is_not_rerun(pattern: str) -> None:
    with pytest.raises(jsregex.NotInSubset, match="backtrack"):
        jsregex.translate(pattern)
