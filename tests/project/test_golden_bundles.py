"""Bundles built by earlier releases keep verifying with the same report.

Every ``manifests/golden/RELEASE/NAME.bundle.tar.zst`` was built once, with that
release's checkers, by ``manifests/golden/freeze.py``; ``NAME.expected.json`` beside it
holds the exit code and the JSON report it gave then. Today's verifier must give the
same report: every field the old report held, at every depth, keeps its value (lists keep
their length and order); fields a later report format adds are allowed. Only the
verifying machine's own facts are left out.
A rule that changes a golden verdict on purpose changes its expected file in the same
commit, with the reason in the commit message and the changelog.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from bundler.reports.schema import schema_problems
from manifests.golden.freeze import GOLDEN, comparable, run_verify


def changes(expected: Any, actual: Any, where: str = "report") -> list[str]:
    """Where ``actual`` does not keep what ``expected`` says (new mapping keys allowed)."""
    if isinstance(expected, dict):
        if not isinstance(actual, dict):
            return [f"{where}: expected a mapping, got {type(actual).__name__}"]
        out = []
        for key, value in expected.items():
            if key not in actual:
                out.append(f"{where}.{key}: missing")
            else:
                out.extend(changes(value, actual[key], f"{where}.{key}"))
        return out
    if isinstance(expected, list):
        if not isinstance(actual, list) or len(actual) != len(expected):
            return [f"{where}: expected a list of {len(expected)}, got {actual!r:.200}"]
        return [
            c
            for i, (e, a) in enumerate(zip(expected, actual, strict=True))
            for c in changes(e, a, f"{where}[{i}]")
        ]
    if expected != actual or type(expected) is not type(actual):
        return [f"{where}: expected {expected!r:.200}, got {actual!r:.200}"]
    return []


BUNDLES = sorted(GOLDEN.glob("*/*.bundle.tar.*"))


def test_golden_bundles_exist_for_a_release() -> None:
    assert BUNDLES, "no golden bundle under manifests/golden/: run manifests/golden/freeze.py"
    for bundle in BUNDLES:
        name = bundle.name.split(".bundle.tar.")[0]
        assert (bundle.parent / f"{name}.expected.json").is_file(), bundle


@pytest.mark.parametrize("bundle", BUNDLES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_golden_bundle_verifies_with_the_same_report(bundle: Path) -> None:
    name = bundle.name.split(".bundle.tar.")[0]
    expected = json.loads((bundle.parent / f"{name}.expected.json").read_text("utf-8"))
    code, report = run_verify(bundle, expected["verify_args"])
    assert code == expected["exit_code"]
    assert schema_problems(report) == [], "every report verify writes is one `report` reads"
    report = comparable(report)
    if newer_minor(expected["report"].get("report_format"), report.get("report_format")):
        report["report_format"] = expected["report"]["report_format"]
    assert changes(expected["report"], report) == []


def newer_minor(old: object, new: object) -> bool:
    """``reprobundle-report/1.2`` keeps every field of ``/1.1`` (REPORT.md): the same
    major version and a minor version at least as high."""

    def version(value: object) -> tuple[int, int] | None:
        match = re.fullmatch(r"reprobundle-report/([0-9]+)(?:\.([0-9]+))?", str(value))
        return (int(match.group(1)), int(match.group(2) or 0)) if match else None

    before, after = version(old), version(new)
    return bool(before and after and before[0] == after[0] and after[1] >= before[1])


def test_a_changed_verdict_a_lost_field_or_a_lost_case_is_caught() -> None:
    expected = json.loads((GOLDEN / "0.1.0" / "quickstart.expected.json").read_text("utf-8"))
    report = expected["report"]
    altered = json.loads(json.dumps(report))
    altered["claims"][0]["status"] = "contradicted"
    assert changes(report, altered) == [
        "report.claims[0].status: expected 'supported', got 'contradicted'"
    ]
    del altered["claims"][0]["status"]
    assert changes(report, altered) == ["report.claims[0].status: missing"]
    altered["cases"].pop()
    assert any(c.startswith("report.cases: expected a list") for c in changes(report, altered))
    assert changes(report, {**report, "added_later": 1}) == []
    assert changes({"n": 1}, {"n": 1.0}) != []


def test_a_newer_minor_report_format_keeps_the_old_fields() -> None:
    assert newer_minor("reprobundle-report/1.1", "reprobundle-report/1.2")
    assert newer_minor("reprobundle-report/1", "reprobundle-report/1.1")
    assert not newer_minor("reprobundle-report/1.2", "reprobundle-report/1.1")
    assert not newer_minor("reprobundle-report/1.1", "reprobundle-report/2")
