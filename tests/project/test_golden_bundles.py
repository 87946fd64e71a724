"""Bundles built by earlier releases keep verifying with the same report.

Every ``manifests/golden/RELEASE/NAME.bundle.tar.zst`` was built once, with that
release's checkers, by ``manifests/golden/freeze.py``; ``NAME.expected.json`` beside it
holds the exit code and the JSON report it gave then. Today's verifier must give the
same report: every field the old report held, at every depth, keeps its value (lists keep
their length and order); fields a later report format adds are allowed. Only the
verifying machine's own facts are left out.
A rule that changes a golden verdict on purpose changes its expected file in the same
commit, with the reason in the commit message and the changelog.

An advisory (``checkers/advisories/``, issue 41) changes a verdict without any file
changing: a claim whose passing cases rest on an advised checker version is
``inconclusive`` today, its ``why`` the advisory's sentence around the old one. The
expected files stay as frozen; ``with_advisories`` applies exactly that change to them,
so an advisory-driven change passes and any other change still fails. Each golden bundle
an advisory changes is listed in CHANGELOG.md with its advisory.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from bundler.codes import EXIT_CODES
from bundler.format.advisories import by_id, of_checker
from bundler.format.claims import AdvisoryUse, advised_why
from bundler.reports.schema import schema_problems
from manifests.golden.freeze import GOLDEN, comparable, run_verify
from tests.helpers import REPO


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


def with_advisories(expected: dict[str, Any], actual: dict[str, Any]) -> dict[str, Any]:
    """``expected`` as the advisories ``actual`` names change it, and nothing else: each
    claim whose passing cases rest on an advisory not accepted is ``inconclusive`` (a
    contradicted one stays so), its ``why`` the advisory's sentence with the frozen one in
    brackets; the result and exit code follow from the claims."""
    out: dict[str, Any] = json.loads(json.dumps(expected))
    now = {c["id"]: c for c in actual.get("claims", [])}
    for claim in out.get("claims", []):
        found = now.get(claim["id"], {}).get("advisories", [])
        uses = [
            AdvisoryUse(by_id()[a["id"]], a["checker"], tuple(a["cases"]), False)
            for a in found
            if not a["accepted"] and a["id"] in by_id()
        ]
        if uses and claim["status"] != "contradicted":
            claim["status"] = "inconclusive"
            claim["why"] = f"{advised_why(uses)} ({claim['why']})"
    statuses = {c["status"] for c in out.get("claims", [])}
    if out.get("result") in ("supported", "inconclusive", "contradicted"):
        result = (
            "contradicted"
            if "contradicted" in statuses
            else ("inconclusive" if "inconclusive" in statuses or not statuses else "supported")
        )
        out["result"], out["exit_code"] = result, EXIT_CODES[result]
    return out


def advised(expected: dict[str, Any]) -> set[str]:
    """The advisories on the checker versions of a frozen report's passing cases and
    findings (what a claim rests on; planted controls are left out)."""
    return {
        a.id
        for case in expected["report"].get("cases", [])
        if case["expect"] == "pass" or case.get("kind") == "finding"
        for a in of_checker(case["checker"])
    }


@pytest.mark.parametrize("bundle", BUNDLES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_golden_bundle_verifies_with_the_same_report(bundle: Path) -> None:
    name = bundle.name.split(".bundle.tar.")[0]
    expected = json.loads((bundle.parent / f"{name}.expected.json").read_text("utf-8"))
    code, report = run_verify(bundle, expected["verify_args"])
    assert schema_problems(report) == [], "every report verify writes is one `report` reads"
    report = comparable(report)
    frozen = with_advisories(expected["report"], report)
    assert (frozen != expected["report"]) == bool(advised(expected)), "advisory in the report"
    assert code == frozen.get("exit_code", expected["exit_code"])
    if newer_minor(frozen.get("report_format"), report.get("report_format")):
        report["report_format"] = frozen["report_format"]
    assert changes(frozen, report) == []


@pytest.mark.parametrize("bundle", BUNDLES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_each_golden_bundle_an_advisory_changes_is_in_the_changelog(bundle: Path) -> None:
    name = bundle.name.split(".bundle.tar.")[0]
    expected = json.loads((bundle.parent / f"{name}.expected.json").read_text("utf-8"))
    ids = advised(expected)
    line = f"`manifests/golden/{bundle.parent.name}/{name}`"
    changelog = (REPO / "CHANGELOG.md").read_text("utf-8")
    rows = changelog.splitlines()
    listed = []  # each item naming the bundle, with its continuation lines
    for at, row in enumerate(rows):
        if line in row:
            end = next(
                (i for i in range(at + 1, len(rows)) if not rows[i].startswith("    ")), len(rows)
            )
            listed += rows[at:end]
    if not ids:
        return
    assert listed, f"CHANGELOG.md names no {line} (advisories {sorted(ids)})"
    assert all(i in " ".join(listed) for i in ids), (line, sorted(ids))


def test_only_an_advisory_change_passes_for_one() -> None:
    expected = json.loads(
        (GOLDEN / "0.2.0.dev1" / "promptfoo-import.expected.json").read_text("utf-8")
    )["report"]
    claim = next(c for c in expected["claims"] if c["status"] == "supported")
    case = next(c for c in expected["cases"] if c["id"] in claim["cases"])
    advisory = next(iter(of_checker(case["checker"])), None) or by_id()["RB-2026-0004"]
    use = {"id": advisory.id, "checker": case["checker"], "cases": [case["id"]], "accepted": False}
    actual = json.loads(json.dumps(expected))
    mine = next(c for c in actual["claims"] if c["id"] == claim["id"])
    mine["advisories"] = [use]
    mine["status"] = "inconclusive"
    uses = [AdvisoryUse(advisory, case["checker"], (case["id"],), False)]
    mine["why"] = f"{advised_why(uses)} ({claim['why']})"
    actual["result"], actual["exit_code"] = "inconclusive", 4
    assert changes(with_advisories(expected, actual), actual) == []
    # any other change beside it is still caught
    other = json.loads(json.dumps(actual))
    other["cases"][0]["outcome"] = "diverged"
    assert changes(with_advisories(expected, other), other) != []
    worded = json.loads(json.dumps(actual))
    next(c for c in worded["claims"] if c["id"] == claim["id"])["why"] += " and more"
    assert changes(with_advisories(expected, worded), worded) != []
    # an accepted advisory changes nothing
    accepted = json.loads(json.dumps(expected))
    next(c for c in accepted["claims"] if c["id"] == claim["id"])["advisories"] = [
        {**use, "accepted": True}
    ]
    assert with_advisories(expected, accepted) == expected


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
