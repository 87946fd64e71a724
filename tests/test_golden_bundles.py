"""Bundles built by earlier releases keep verifying with the same report.

Every ``manifests/golden/RELEASE/NAME.bundle.tar.zst`` was built once, with that
release's checkers, by ``manifests/golden/freeze.py``; ``NAME.expected.json`` beside it
holds the exit code and the JSON report it gave then. Today's verifier must give the
same, byte for byte in the report's every field but the verifying machine's own facts.
A rule that changes a golden verdict on purpose changes its expected file in the same
commit, with the reason in the commit message and the changelog.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from manifests.golden.freeze import GOLDEN, comparable, run_verify

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
    assert comparable(report) == expected["report"]


def test_a_changed_verdict_is_caught(tmp_path: Path) -> None:
    """The comparison can fail: one reason's message altered in the expected report."""
    bundle = GOLDEN / "0.1.0" / "quickstart.bundle.tar.zst"
    expected = json.loads((GOLDEN / "0.1.0" / "quickstart.expected.json").read_text("utf-8"))
    code, report = run_verify(bundle, expected["verify_args"])
    altered = json.loads(json.dumps(expected["report"]))
    altered["claims"][0]["status"] = "contradicted"
    assert comparable(report) != altered and comparable(report) == expected["report"]
