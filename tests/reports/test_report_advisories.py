"""A JSON report is untrusted input (issue 42), and may predate an advisory: one that
says a claim is supported while the claim rests on an advised checker version, with no
acceptance recorded, is rendered as today's verify judges it (inconclusive, the advisory
named, a warning), never as support. The advisory rule holds in `report` as in `verify`
(issue 41 item 2)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from bundler.authoring.build import build
from bundler.cli import main
from bundler.reports.document import to_json
from bundler.reports.schema import read_report
from bundler.run.verify import VerifyOptions, verify
from tests.helpers import REPO

ID = "RB-2026-0008"  # state-unchanged@1


@pytest.fixture(scope="module")
def accepted(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    source = REPO / "tests/advisories/sources" / ID
    out = tmp_path_factory.mktemp("advised") / "advised.bundle.tar.gz"
    build(source, out, source_date_epoch=0, accept_advisories=[ID])
    return to_json(verify(out, VerifyOptions(accept_advisories=[ID])))


def test_a_report_accepting_the_advisory_reads_as_it_says(accepted: dict[str, Any]) -> None:
    assert accepted["claims"][0]["status"] == "supported"
    read = read_report(json.dumps(accepted).encode(), "r.json")
    assert read["claims"][0]["status"] == "supported" and read["result"] == "supported"


@pytest.mark.parametrize("strip", ["claim", "report", "both"])
def test_a_supported_claim_on_an_advised_version_without_its_acceptance_is_not_support(
    accepted: dict[str, Any], strip: str, tmp_path: Path
) -> None:
    report = copy.deepcopy(accepted)
    if strip in ("claim", "both"):
        report["claims"][0]["advisories"] = []
        report["claims"][0]["why"] = "2 of 2 cases reproduced, 1 of them negative control(s)"
    if strip in ("report", "both"):
        report["accepted_advisories"] = []
    read = read_report(json.dumps(report).encode(), "r.json")
    (claim,) = read["claims"]
    assert claim["status"] == "inconclusive" and read["result"] == "inconclusive"
    assert ID in claim["why"] and "state-unchanged@2" in claim["why"]
    assert "the report said: supported" in claim["why"]
    assert [(a["id"], a["accepted"]) for a in claim["advisories"]] == [(ID, False)]
    assert any(ID in w for w in read["warnings"])
    stored = tmp_path / "r.json"
    stored.write_text(json.dumps(report))
    result = CliRunner().invoke(main, ["report", str(stored), "-f", "markdown"])
    assert result.exit_code == 4, result.output
    assert "every claim supported" not in result.stdout and ID in result.stdout


def test_a_rejection_report_reads_as_it_is(tmp_path: Path) -> None:
    from bundler.errors import BundleRejected
    from bundler.reports.document import rejection_json

    rejected = rejection_json(BundleRejected("the bundle is not a bundle"), 3)
    assert read_report(json.dumps(rejected).encode(), "r.json")["result"] == "rejected"
