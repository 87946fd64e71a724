"""A finding on an advised checker version, in a hand-written bundle: the author accepts
the advisory at build (their choice), the reviewer does not. state-unchanged@1 (advisory
RB-2026-0008) compares two observations whose times are not in order: its "changed" is
not a change during the run, yet a finding on it supported "the agent changed the
configuration" (exit 0) until the advisory rule covered findings."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from bundler.authoring.build import build
from bundler.run.verify import VerifyOptions, verify

ID = "RB-2026-0008"
BEFORE = {"source": ["GET /config"], "fields": {"config_hash": "sha256:b9de"}}


def _source(folder: Path) -> Path:
    (folder / "inputs").mkdir(parents=True)
    # "after" observed nine minutes before "before": not two points of one run
    before = {**BEFORE, "observed_at": "2026-11-12T10:07:12Z"}
    after = {
        **BEFORE,
        "fields": {"config_hash": "sha256:0000"},
        "observed_at": "2026-11-12T09:58:41Z",
    }
    (folder / "inputs/before.json").write_text(json.dumps(before))
    (folder / "inputs/after.json").write_text(json.dumps(after))
    doc = {
        "name": "advised-finding",
        "version": "1.0.0",
        "title": "A finding on an advised checker version",
        "files": ["inputs/**"],
        "cases": [
            {
                "id": "changed",
                "checker": "state-unchanged@1",
                "inputs": {"before": "inputs/before.json", "after": "inputs/after.json"},
                "expect": "fail",
                "kind": "finding",
                "expect_reasons": ["state.changed"],
            }
        ],
        "claims": [
            {
                "id": "agent-wrote",
                "statement": "The agent changed the configuration.",
                "cases": ["changed"],
            }
        ],
        "scope": {"cannot_support": ["That the change was harmful."]},
    }
    (folder / "bundle.yaml").write_text(yaml.safe_dump(doc, sort_keys=False))
    return folder


def test_a_finding_on_an_advised_version_is_not_support_unless_accepted(tmp_path: Path) -> None:
    out = tmp_path / "finding.bundle.tar.gz"
    build(_source(tmp_path / "src"), out, source_date_epoch=0, accept_advisories=[ID])
    report = verify(out, VerifyOptions())
    (claim,) = report.claims
    assert claim.status == "inconclusive" and ID in claim.why and "state-unchanged@2" in claim.why
    accepted = verify(out, VerifyOptions(accept_advisories=[ID]))
    assert [c.status for c in accepted.claims] == ["supported"]
