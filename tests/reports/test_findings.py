"""A reader of any format can tell at a glance which run was wrong and why: every case's
verdict beside its outcome, claims counted as verdicts, and findings (real outputs the
author judges wrong) shown as findings, apart from planted controls. The six-run example
(bundles/config-edits, run 6 wrong) is the evidence."""

from __future__ import annotations

import copy
import re
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from rich.console import Console

from bundler.cli import main
from bundler.format.manifest import parse
from bundler.reports.common import verdicts_text
from bundler.reports.html import to_html
from bundler.reports.junit import to_junit
from bundler.reports.markdown import to_markdown
from bundler.reports.schema import schema_problems
from bundler.reports.terminal import render
from bundler.reports.text import to_text
from tests.helpers import edit_manifest

SIX_RUNS = "6 of 6 verdicts reproduced (5 pass, 1 fail as expected: 1 finding)"


@pytest.fixture(scope="module")
def built(example_bundle: Callable[[str], Path]) -> Path:
    return example_bundle("config-edits")


@pytest.fixture(scope="module")
def report(built: Path) -> dict[str, Any]:
    from bundler.reports.document import to_json
    from bundler.run.verify import verify

    return to_json(verify(built))


def test_the_report_says_which_case_is_a_finding(report: dict[str, Any]) -> None:
    assert schema_problems(report) == []
    assert report["report_format"] == "reprobundle-report/1.4"
    kinds = {c["id"]: c["kind"] for c in report["cases"]}
    assert kinds["run-6"] == "finding" and kinds["unedited-config-is-caught"] == "control"
    assert kinds["run-1"] is None
    claim = report["claims"][0]
    assert claim["findings"] == ["run-6"]
    assert claim["verdicts"] == (
        "7 of 7 verdicts reproduced (5 pass, 2 fail as expected: 1 finding, 1 control)"
    )


def test_verdicts_read_as_the_issue_asks() -> None:
    cases = [{"expect": "pass", "outcome": "reproduced"}] * 5 + [
        {"expect": "fail", "outcome": "reproduced", "kind": "finding"}
    ]
    assert verdicts_text(cases) == SIX_RUNS
    cases[0] = {"expect": "pass", "outcome": "diverged"}
    assert verdicts_text(cases) == (
        "5 of 6 verdicts reproduced (4 pass, 1 fail as expected: 1 finding), 1 diverged"
    )


def test_markdown_lists_the_finding_with_its_reasons(report: dict[str, Any]) -> None:
    text = to_markdown(report)
    findings = text.split("**Findings**")[1].split("**Cases**")[0]
    assert "`run-6`: verdict `fail [content.changed, content.removed]`" in findings
    assert "retries: expected 3, observed 0" in findings
    assert "`run-1`" not in findings and "unedited-config-is-caught" not in findings
    assert (
        "| `run-6` | fail (finding) | `fail [content.changed, content.removed]` | reproduced |"
        in text
    )
    assert "| `unedited-config-is-caught` | fail (control) |" in text
    assert "pip install" not in text


def test_html_shows_the_finding_apart_and_not_as_a_plain_success(report: dict[str, Any]) -> None:
    page = to_html(report)
    assert '<section id="findings">' in page
    article = re.search(
        r'<article class="case reproduced finding" id="case-run-6">.*?</article>', page, re.S
    )
    assert article is not None
    assert '<span class="badge kind finding">finding</span>' in article.group()
    assert "fail [content.changed, content.removed]" in article.group()
    assert 'Findings (outputs the author judges wrong): <a href="#case-run-6">run-6</a>' in page
    assert "[&#x27;" not in page and "['" not in page  # no Python list repr in prose


def test_junit_names_the_finding_and_counts_each_case_once(report: dict[str, Any]) -> None:
    root = ET.fromstring(to_junit(report))
    assert root.get("tests") == str(len(report["cases"])) == "7"
    run6 = root.find(".//testcase[@name='run-6']")
    assert run6 is not None
    out = run6.findtext("system-out") or ""
    assert "finding: a real output the author judges wrong" in out
    assert "verdict fail [content.changed, content.removed]" in out


def test_plain_text_lists_every_case_with_its_verdict_and_the_findings(
    report: dict[str, Any],
) -> None:
    text = to_text(report, width=100)
    assert re.search(r"\[ok\] reproduced +run-1 +pass +pass\n", text)
    assert re.search(
        r"\[ok\] reproduced +run-6 +fail \(FINDING\) +fail \[content.changed,\s+content.removed\]",
        text,
    )
    assert "Findings: real outputs the author judges wrong\n  - run-6:" in text


def test_terminal_tables_show_the_finding(report: dict[str, Any]) -> None:
    console = Console(width=120, record=True, color_system=None)
    render(report, console)
    screen = console.export_text()
    assert "FINDING" in screen and "Findings: real outputs the author judges wrong" in screen
    assert "fail [content.changed, content.removed]" in screen


def test_a_finding_that_no_longer_fails_is_contradicted_in_every_format(
    built: Path, tmp_path: Path
) -> None:
    def judged_right(doc: dict[str, Any]) -> None:
        case = next(c for c in doc["cases"] if c["id"] == "run-6")
        case["inputs"]["actual"] = "inputs/run-1.yaml"

    bad = edit_manifest(built, tmp_path / "bad.bundle.tar.gz", judged_right)
    result = CliRunner().invoke(main, ["verify", str(bad)])
    assert result.exit_code == 1
    assert re.search(r"\[XX\] diverged +run-6 +fail \(FINDING\) +pass", result.stdout)
    assert "run-6: pass (diverged: the checker does not confirm it here)" in result.stdout


def test_a_finding_needs_format_1_2(built: Path, tmp_path: Path) -> None:
    def older(doc: dict[str, Any]) -> None:
        doc["format"] = "reprobundle/1"

    bad = edit_manifest(built, tmp_path / "old.bundle.tar.gz", older)
    result = CliRunner().invoke(main, ["verify", str(bad)])
    assert result.exit_code == 3
    assert "a finding needs format 'reprobundle/1.2' [manifest.case.format]" in result.stderr


def test_kind_is_kept_in_the_manifest_only_for_findings(built: Path) -> None:
    from bundler.run.verify import check_integrity

    manifest = check_integrity(built).manifest
    again = parse(manifest.to_bytes())
    assert [c.kind for c in again.cases] == [None] * 5 + ["finding", "control"]
    assert manifest.to_bytes().count(b'kind = "finding"') == 1
    assert b'kind = "control"' not in manifest.to_bytes()


def test_a_report_of_format_1_1_reads_every_expected_failure_as_a_control(
    report: dict[str, Any],
) -> None:
    old = copy.deepcopy(report)
    old["report_format"] = "reprobundle-report/1.1"
    for case in old["cases"]:
        del case["kind"]
    for claim in old["claims"]:
        del claim["verdicts"], claim["findings"]
    assert schema_problems(old) == []
    assert "2 fail as expected: 2 controls" in to_markdown(old)
    assert '<section id="findings">' not in to_html(old)


def test_diff_shows_a_finding_turned_into_a_control(built: Path) -> None:
    import dataclasses

    from bundler.reports.diff import diff
    from bundler.run.verify import check_integrity

    old = check_integrity(built).manifest
    cases = tuple(c._replace(kind="control") if c.is_finding else c for c in old.cases)
    new = dataclasses.replace(old, cases=cases)
    found = diff(old, new, "old", "new")["expectations_changed"]
    assert [(e["case"], e["flipped"], e["old"].get("kind")) for e in found] == [
        ("run-6", False, "finding")
    ]
    from bundler.reports.difftext import to_text

    # friction 14 of issue 43: "(finding)" was shown on the finding's side only
    text = to_text(diff(old, new, "old", "new"))
    assert "fail [content.changed, content.removed] (finding) -> fail [content.changed, " in text
    assert "content.removed] (control)" in text


def test_junit_finding_is_not_a_plain_passing_test(report: dict[str, Any]) -> None:
    """A CI page lists a passing test's properties, not its output: the finding must be
    named there, and the suite's result must count it (issue 43, friction 4)."""
    root = ET.fromstring(to_junit(report))
    run6 = root.find(".//testcase[@name='run-6']")
    assert run6 is not None
    properties = {p.get("name"): p.get("value") for p in run6.iter("property")}
    assert properties["case.kind"] == "finding"
    assert properties["case.verdict"] == "fail [content.changed, content.removed]"
    plain = root.find(".//testcase[@name='run-1']")
    assert plain is not None and plain.find("properties") is None
    result = root.find(".//property[@name='result']")
    assert result is not None and str(result.get("value")).startswith("supported, 1 finding:")


def test_quiet_result_line_counts_findings(built: Path) -> None:
    done = CliRunner().invoke(main, ["verify", str(built), "-q"])
    assert done.exit_code == 0, done.output
    assert "(1 of 1 claims supported; 1 finding)" in done.output
