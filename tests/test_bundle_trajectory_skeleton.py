"""bundles/trajectory-skeleton builds, verifies with every claim supported, and a copy
with one expected verdict flipped (or one trace changed) contradicts its claims."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from bundler.cli import main
from bundler.run.verify import verify
from tests.helpers import REPO, edit_manifest

SOURCE = REPO / "bundles" / "trajectory-skeleton"
CLAIMS = {
    "noise-is-tolerated",
    "missing-and-misordered-steps-fail",
    "stored-model-is-verified",
    "merge-guard-keeps-required-steps",
    "repeated-saves-are-required",
    "skeleton-beats-self-assessment-here",
}


@pytest.fixture(scope="module")
def bundle(example_bundle: Callable[[str], Path]) -> Path:
    return example_bundle("trajectory-skeleton")


def statuses(bundle_file: Path) -> tuple[int, dict[str, str]]:
    result = verify(bundle_file)
    return result.exit_code, {c.claim.id: c.status for c in result.claims}


def test_trajectory_skeleton_verifies_with_every_claim_supported(bundle: Path) -> None:
    result = CliRunner().invoke(main, ["verify", str(bundle)])
    assert result.exit_code == 0, result.output
    code, claims = statuses(bundle)
    assert code == 0
    assert claims == dict.fromkeys(CLAIMS, "supported")


def test_flipped_expected_verdict_contradicts_its_claims(bundle: Path, tmp_path: Path) -> None:
    def flip(doc: dict[str, Any]) -> None:
        case = next(c for c in doc["cases"] if c["id"] == "labelled-t06")
        case["expect"] = "pass"
        case.pop("expect_reasons", None)

    flipped = edit_manifest(bundle, tmp_path / "flipped.bundle.tar.gz", flip)
    result = CliRunner().invoke(main, ["verify", str(flipped)])
    assert result.exit_code == 1, result.output
    _, claims = statuses(flipped)
    assert claims["missing-and-misordered-steps-fail"] == "contradicted"
    assert claims["skeleton-beats-self-assessment-here"] == "contradicted"
    assert claims["noise-is-tolerated"] == "supported"


def test_changed_reference_trace_makes_the_stored_model_diverge(
    bundle: Path, tmp_path: Path
) -> None:
    path = "inputs/search/references/r2.yaml"
    text = (SOURCE / path).read_text(encoding="utf-8")
    changed = text.replace("label: query typed", "label: query pasted")
    assert changed != text
    edited = edit_manifest(
        bundle, tmp_path / "edited.bundle.tar.gz", lambda doc: None, {path: changed.encode()}
    )
    code, claims = statuses(edited)
    assert code == 1
    assert claims["stored-model-is-verified"] == "contradicted"


def test_predictions_table_matches_the_labelled_cases_and_trace_headers() -> None:
    """The skeleton column is what the re-run cases expect; the self-assessment column
    is what each trace header reports."""
    source = yaml.safe_load((SOURCE / "bundle.yaml").read_text(encoding="utf-8"))
    expected = {
        c["id"].removeprefix("labelled-"): c["expect"]
        for c in source["cases"]
        if c["id"].startswith("labelled-")
    }
    folder = SOURCE / "inputs" / "search"
    table = yaml.safe_load((folder / "predictions.yaml").read_text(encoding="utf-8"))
    assert {i["id"]: i["predictions"]["trajectory-skeleton"] for i in table["items"]} == expected
    for item in table["items"]:
        header = yaml.safe_load((folder / "labelled" / f"{item['id']}.yaml").read_text("utf-8"))
        said = "pass" if header["self_assessment"] == "success" else "fail"
        assert item["predictions"]["self-assessment"] == said


def test_regex_model_that_hides_the_guard_contradicts_the_merge_guard_claim(
    bundle: Path, tmp_path: Path
) -> None:
    """The merge-guard claim is about learning: its cases must re-learn the regex model.
    A hand-edited model.json that gives the same verdicts but says the dominators alone
    kept both steps (no guard) must not leave the claim supported."""
    path = "inputs/regex/model.json"
    model = json.loads((SOURCE / path).read_text(encoding="utf-8"))
    model["guard"] = []
    for entry in model["skeleton"]:
        entry["why"] = "dominator"
    for state in model["states"]:
        if state["why"] == "guard":
            state["why"] = "dominator"
    edited = edit_manifest(
        bundle,
        tmp_path / "edited.bundle.tar.gz",
        lambda doc: None,
        {path: json.dumps(model, indent=2).encode()},
    )
    code, claims = statuses(edited)
    assert code == 1
    assert claims["merge-guard-keeps-required-steps"] == "contradicted"
