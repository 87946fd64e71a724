"""The report view: built once from a JSON report, laid out by every renderer (issue 44,
item 6). That the renderers derive nothing themselves is ``tests/project/test_report_view.py``."""

from __future__ import annotations

import copy
import io
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from rich.console import Console

from bundler.cli import main
from bundler.reports import view as view_module
from bundler.reports.formats import render
from bundler.reports.terminal import render as render_terminal
from bundler.reports.text import to_text
from bundler.reports.view import ReportView, report_view

GOLDEN = Path(__file__).resolve().parents[1] / "golden"


def golden(name: str) -> dict[str, Any]:
    report: dict[str, Any] = json.loads((GOLDEN / name / "report.json").read_text("utf-8"))
    return report


def every_rendering(report: ReportView | dict[str, Any]) -> dict[str, str]:
    out = io.StringIO()
    render_terminal(report, Console(file=out, width=100), verbose=True)
    return {
        "text": to_text(report, verbose=True, width=80),
        "terminal": out.getvalue(),
        **{
            fmt: render(fmt, report, expect_identity=True)
            for fmt in ("json", "markdown", "html", "junit")
        },
    }


@pytest.mark.parametrize(
    "name", sorted(p.name for p in GOLDEN.glob("*") if (p / "report.json").exists())
)
def test_one_view_renders_every_format_as_the_report_does(name: str) -> None:
    report = golden(name)
    assert every_rendering(report_view(report)) == every_rendering(report)
    assert render("json", report_view(report)) == render("json", report)  # the report as given


def test_the_view_cannot_be_changed_by_a_renderer() -> None:
    made = report_view(golden("preregistered"))
    with pytest.raises(AttributeError):
        made.verdict_line = "Result: every claim supported"  # type: ignore[misc]
    with pytest.raises(AttributeError):
        made.claims[0].status = "supported"  # type: ignore[misc]
    assert isinstance(made.claims, tuple) and isinstance(made.cases, tuple)


def test_the_view_holds_each_fact_in_the_words_every_format_shows() -> None:
    report = golden("preregistered")
    made = report_view(report)
    assert made.verdict_line.startswith(f"Result: {made.status_words} (")
    assert made.supported == sum(c["status"] == "supported" for c in report["claims"])
    assert [c.id for c in made.claims] == [c["id"] for c in report["claims"]]
    assert all(c.preregistration for c in made.claims)  # the bundle holds a pre-registration
    assert made.preregistration is not None and made.preregistration.lines
    assert "--expect-manifest-sha256" in made.verify_command_pinned
    assert "--expect-manifest-sha256" not in made.verify_command
    claim = made.claims[0]
    assert claim.cases == tuple(made.by_id[i] for i in claim.case_ids)
    assert all(c.outcome_text.startswith(c.outcome) for c in made.cases)


def test_every_text_in_the_view_is_on_one_line_and_the_json_keeps_the_report() -> None:
    report = copy.deepcopy(golden("quickstart"))
    report["claims"][0]["statement"] = "fine\nResult: every claim supported"
    made = report_view(report)
    assert made.claims[0].statement == "fine\\nResult: every claim supported"
    assert made.source is report  # what --json writes: the report, unchanged


def test_a_rejection_has_a_view_of_its_own() -> None:
    made = report_view(
        {
            "report_format": "reprobundle-report/1.4",
            "result": "rejected",
            "exit_code": 3,
            "message": "a\nb",
            "problems": [{"where": "x", "code": "c.d", "message": "m"}],
        }
    )
    assert made.rejected and made.message == "a\\nb" and made.result_words == "rejected"
    assert made.claims == () and made.bundle is None


def test_verify_builds_the_view_once_for_every_output(
    quickstart_bundle: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    made: list[ReportView] = []
    build = view_module.report_view

    def counted(report: Any) -> ReportView:
        made.append(build(report))
        return made[-1]

    monkeypatch.setattr(view_module, "report_view", counted)
    outputs = {ext: tmp_path / f"r.{ext}" for ext in ("json", "md", "xml", "html")}
    result = CliRunner().invoke(
        main,
        [
            "verify",
            str(quickstart_bundle),
            "--json",
            str(outputs["json"]),
            "--markdown",
            str(outputs["md"]),
            "--junit",
            str(outputs["xml"]),
            "--html",
            str(outputs["html"]),
            "-q",
        ],
    )
    assert result.exit_code == 0, result.output
    assert len(made) == 1  # the -q line and the four files, from one view
    assert result.output.splitlines()[0] == made[0].verdict_line
    assert outputs["md"].read_text("utf-8") == render("markdown", made[0], expect_identity=True)
