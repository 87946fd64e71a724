"""A JSON report is untrusted input (a reviewer can be sent one): rendering it costs work
linear in its claims and cases, its drawings are capped (and the page says so), and its
Markdown can carry neither a character reference nor a cell that ends early (issue 42,
item 7)."""

from __future__ import annotations

import copy
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from bundler.reports.document import to_json
from bundler.reports.drawings import MAX_STATES_DRAWN
from bundler.reports.formats import render
from bundler.reports.html import DRAWINGS_CHARS, to_html
from bundler.reports.markdown import cell, to_markdown
from bundler.reports.text import to_text
from bundler.run.verify import verify


@pytest.fixture(scope="module")
def base(quickstart_bundle: Path) -> dict[str, Any]:
    return to_json(verify(quickstart_bundle))


def one_case_claims(base: dict[str, Any], n: int) -> dict[str, Any]:
    """``n`` claims of one case each, over ``n`` cases (the shape that was quadratic)."""
    report = copy.deepcopy(base)
    case, claim = base["cases"][0], base["claims"][0]
    report["cases"] = [{**copy.deepcopy(case), "id": f"case-{i}"} for i in range(n)]
    report["claims"] = [
        {**copy.deepcopy(claim), "id": f"claim-{i}", "cases": [f"case-{i}"]} for i in range(n)
    ]
    return report


def opcodes(work: Callable[[], object]) -> int:
    """How many bytecode instructions ``work`` runs in the reports package: a count of
    work that does not depend on the machine's speed."""
    count = 0

    def trace(frame: Any, event: str, _arg: object) -> Any:
        nonlocal count
        if "bundler/reports/" not in frame.f_code.co_filename.replace("\\", "/"):
            return None
        frame.f_trace_opcodes = True
        if event == "opcode":
            count += 1
        return trace

    sys.settrace(trace)
    try:
        work()
    finally:
        sys.settrace(None)
    return count


@pytest.mark.parametrize("fmt", ["markdown", "html", "junit", "text"])
def test_report_rendering_is_linear_in_claims_and_cases(base: dict[str, Any], fmt: str) -> None:
    # each claim used to rebuild a map of every case: 4 times the claims and cases cost
    # 16 times the work; linear work costs 4 times (a little more for longer ids)
    def rendering(n: int) -> Callable[[], object]:
        report = one_case_claims(base, n)
        if fmt == "text":
            return lambda: to_text(report)
        return lambda: render(fmt, report)

    # once first: Python 3.12 counted no opcode of code run for the first time under a trace
    opcodes(rendering(1))
    small, large = opcodes(rendering(100)), opcodes(rendering(400))
    assert small > 0 and large < 5 * small, (fmt, small, large)


def trajectory_case(positions: int) -> dict[str, Any]:
    return {
        "id": "long-trace",
        "checker": "trajectory-skeleton@1",
        "details": {
            "positions": [
                {"state": f"s{i}", "label": f"state {i}", "step": i} for i in range(positions)
            ],
            "coverage": {"matched": positions, "essential": positions},
        },
    }


def test_trajectory_drawing_is_capped_and_says_so(base: dict[str, Any]) -> None:
    from bundler.reports.drawings import trajectory_skeleton

    few = trajectory_skeleton(trajectory_case(MAX_STATES_DRAWN)) or ""
    many = trajectory_skeleton(trajectory_case(50_000)) or ""
    assert many.count("<rect") == few.count("<rect") == MAX_STATES_DRAWN
    assert f"the first {MAX_STATES_DRAWN} of 50000 states drawn" in many
    assert "states drawn" not in few


def test_page_drawings_have_a_budget_stated_in_the_page(base: dict[str, Any]) -> None:
    report = copy.deepcopy(base)
    case = {**copy.deepcopy(base["cases"][0]), **trajectory_case(MAX_STATES_DRAWN)}
    report["cases"] = [{**case, "id": f"long-{i}"} for i in range(1000)]
    report["claims"][0]["cases"] = [c["id"] for c in report["cases"]]
    report["claims"] = report["claims"][:1]
    page = to_html(report)
    drawn = sum(len(svg) for svg in re.findall(r"<svg.*?</svg>", page, re.DOTALL))
    assert drawn < DRAWINGS_CHARS + 40_000  # the last drawing may cross the budget
    assert f"this page draws at most {DRAWINGS_CHARS:,} characters of drawings" in page


@pytest.mark.parametrize(
    "reference, char",
    [
        ("&rlm;", "\u200f"),
        ("&lrm;", "\u200e"),
        ("&ZeroWidthSpace;", "\u200b"),
        ("&zwj;", "\u200d"),
        ("&#x202e;", "\u202e"),
        ("&#8238;", "\u202e"),
    ],
)
def test_markdown_shows_a_character_reference_as_the_character_is_shown(
    base: dict[str, Any], reference: str, char: str
) -> None:
    report = copy.deepcopy(base)
    report["claims"][0]["statement"] = f"evil{reference}txt"
    report["cannot_support"] = [f"raw{char}txt and {reference}"]
    text = to_markdown(report)
    escaped = f"\\\\u{ord(char):04x}"  # the one-line rule's escape, its backslash escaped
    assert f"evil{escaped}txt" in text
    assert f"raw{escaped}txt and {escaped}" in text
    assert char not in text
    # CommonMark decodes no reference whose & is escaped
    assert re.search(r"(?<!\\)&[#A-Za-z]", text) is None


def test_markdown_escapes_every_ampersand_so_no_reference_is_decoded() -> None:
    assert cell("&amp;rlm; &copy;") == "\\&amp;rlm; \\&copy;"


def test_reason_code_cannot_break_out_of_its_table_cell(base: dict[str, Any]) -> None:
    report = copy.deepcopy(base)
    case = report["cases"][0]
    case.update(outcome="diverged", verdict="fail")
    case["reasons"] = [{"code": "x` | reproduced | ok | `", "message": "m"}]
    text = to_markdown(report)
    row = next(line for line in text.splitlines() if line.startswith(f"| `{case['id']}`"))
    # GitHub splits a row at every | not escaped (inside a code span too)
    cells = re.split(r"(?<!\\)\|", row.strip())[1:-1]
    assert len(cells) == 4, row
    assert "**diverged**" in cells[3]


@pytest.mark.parametrize(
    "value", ["a|b", "a\\|b", "x` | reproduced | ok | `", "`", "\\", "a\\", "||", "&zwj;|"]
)
def test_table_cell_is_one_cell_whatever_it_holds(value: str) -> None:
    for monospace in (False, True):
        row = f"| {cell(value, monospace)} | next |"
        # GitHub's row scanner: a backslash takes the next character with it
        cells = re.findall(r"(?:\\.|[^|\\])+", row.strip().strip("|"))
        assert len(cells) == 2, (value, monospace, row)
