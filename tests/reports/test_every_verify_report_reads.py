"""Every JSON report ``verify`` writes is one ``report`` reads (issue 43, defect 6): the
report format's schema holds every section verify adds (the pre-registration's too), for
every example bundle and every golden one."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from bundler.cli import main
from bundler.reports.schema import schema_problems
from manifests.golden.freeze import GOLDEN
from tests.golden.regenerate import example_sources

RUN = CliRunner()
EXAMPLES = [s.name for s in example_sources()]
FROZEN = sorted(GOLDEN.glob("*/*.expected.json"))


@pytest.mark.parametrize("name", EXAMPLES)
def test_report_reads_the_json_report_verify_writes_for_every_example_bundle(
    name: str, example_reports: dict[str, dict[str, Any]], tmp_path: Path
) -> None:
    report = example_reports[name]
    file = tmp_path / "report.json"
    file.write_text(json.dumps(report), encoding="utf-8")
    done = RUN.invoke(main, ["report", str(file), "-o", "-"])
    assert done.exit_code == 0, done.output
    assert schema_problems(report) == []


def test_a_pre_registered_example_is_among_them(
    example_reports: dict[str, dict[str, Any]],
) -> None:
    assert any("preregistration" in r for r in example_reports.values())


@pytest.mark.parametrize("expected", FROZEN, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_report_reads_every_golden_report(expected: Path) -> None:
    report = json.loads(expected.read_text("utf-8"))["report"]
    report.setdefault("verify_environment", _ENVIRONMENT)  # (left out when frozen)
    report.setdefault("workdir", None)
    report["bundle"].setdefault("file", "x.bundle.tar.zst")
    assert schema_problems(report) == []


_ENVIRONMENT = {"tool": "reprobundle", "python": "3", "implementation": "CPython", "platform": "x"}
