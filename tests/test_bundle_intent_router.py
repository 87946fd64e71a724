"""bundles/intent-router builds and verifies with every claim supported; a flipped
expected verdict or a changed recorded output moves exactly the claims it supports."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from bundler.build import build
from bundler.cli import main
from bundler.verify import verify
from tests.helpers import REPO, edit_manifest

SOURCE = REPO / "bundles" / "intent-router"
RUN = "inputs/outputs/suite-run.yaml"
CLAIMS = {
    "suite-meets-its-threshold",
    "one-invented-citation-fails-the-suite",
    "must-ask-cases-ask-the-one-question",
    "complete-requests-are-routed-in-silence",
    "unanswerable-requests-are-stopped",
    "request-defects-are-pointed-out",
    "contamination-check-can-fail",
    "only-the-failure-policy-separates-the-groups",
}


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("built") / "intent-router.bundle.tar.gz"
    return build(SOURCE, out, 1700000000).path


def statuses(bundle_file: Path) -> tuple[int, dict[str, str]]:
    result = verify(bundle_file)
    return result.exit_code, {c.claim.id: c.status for c in result.claims}


def edited_run(old: str, new: str) -> dict[str, bytes]:
    """The recorded run with one exact text change (which must occur exactly once)."""
    text = (SOURCE / RUN).read_text(encoding="utf-8")
    assert text.count(old) == 1, old
    return {RUN: text.replace(old, new).encode()}


def test_intent_router_verifies_with_every_claim_supported(bundle: Path, tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    result = CliRunner().invoke(main, ["verify", str(bundle), "--json", str(report)])
    assert result.exit_code == 0, result.output
    code, claims = statuses(bundle)
    assert code == 0
    assert claims == dict.fromkeys(CLAIMS, "supported")
    # the report lets a reviewer see, per eval case, which expectation held
    cases = {c["id"]: c for c in json.loads(report.read_text())["cases"]}
    rows = {row["case"]: row for row in cases["suite-run-meets-14-of-17"]["details"]["cases"]}
    assert len(rows) == 17
    assert rows["ungrillable"]["result"] == "inconclusive"
    assert rows["partially-specified-auto"]["codes"] == ["run.not_triggered"]
    held = rows["add-caching-auto"]["expectations"]
    assert {key: row["held"] for key, row in held.items()} == {
        "state": True,
        "question_keywords": True,
        "open_field_regex": True,
        "min_resolved_by_probe": True,
        "max_asked": True,
        "evidence_must_include": True,
    }


def test_flipped_expected_verdict_contradicts_its_claim(bundle: Path, tmp_path: Path) -> None:
    def flip(doc: dict[str, Any]) -> None:
        case = next(c for c in doc["cases"] if c["id"] == "case.premise-adr-auto")
        case["expect"] = "fail"

    flipped = edit_manifest(bundle, tmp_path / "flipped.bundle.tar.gz", flip)
    result = CliRunner().invoke(main, ["verify", str(flipped)])
    assert result.exit_code == 1, result.output
    _, claims = statuses(flipped)
    assert {k for k, v in claims.items() if v != "supported"} == {"request-defects-are-pointed-out"}
    assert claims["request-defects-are-pointed-out"] == "contradicted"


def test_one_invented_citation_in_the_recorded_run_contradicts_the_suite_claim(
    bundle: Path, tmp_path: Path
) -> None:
    files = edited_run(
        "      - src/server.ts:12-13\n",
        "      - src/server.ts:12-13\n      - src/graphql/resolvers/users.ts\n",
    )
    tampered = edit_manifest(bundle, tmp_path / "invented.bundle.tar.gz", lambda doc: None, files)
    code, claims = statuses(tampered)
    assert code == 1
    assert {k for k, v in claims.items() if v != "supported"} == {
        "suite-meets-its-threshold",
        "request-defects-are-pointed-out",
    }
    assert claims["suite-meets-its-threshold"] == "contradicted"


def test_a_timeout_makes_its_claim_inconclusive_never_contradicted(
    bundle: Path, tmp_path: Path
) -> None:
    start = "  - case: vague-no-ask\n    status: completed\n"
    text = (SOURCE / RUN).read_text(encoding="utf-8")
    assert text.count(start) == 1
    files = {RUN: text.replace(start, "  - case: vague-no-ask\n    status: timeout\n").encode()}
    tampered = edit_manifest(bundle, tmp_path / "timeout.bundle.tar.gz", lambda doc: None, files)
    code, claims = statuses(tampered)
    assert code == 4
    # 14 of 17 still pass with two timeouts: the suite claim stands
    assert {k for k, v in claims.items() if v != "supported"} == {
        "unanswerable-requests-are-stopped"
    }
    assert claims["unanswerable-requests-are-stopped"] == "inconclusive"
