"""Issue 45 item 5: promptfoo results imported in the split layout, redacted of the file
that holds prompts, outputs and variables: the pass rate stays supported; only the
re-run assertions and the tie of the scores file to the results file are withheld."""

from __future__ import annotations

import json
from typing import Any

import pytest

from bundler.authoring.build import build
from bundler.authoring.redact import redact
from bundler.importers.promptfoo import import_promptfoo
from bundler.run.verify import verify
from checkers.promptfoo.scores import project, scores_bytes
from tests.checkers.checker_calls import run
from tests.helpers import REPO

RESULTS = REPO / "tests" / "data" / "promptfoo" / "results.json"


@pytest.fixture(scope="module")
def split(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("promptfoo-split")
    import_promptfoo(RESULTS, root / "source", split=True)
    full = build(root / "source", root / "p.bundle.tar.zst", 1700000000).path
    redacted = redact(full, ["inputs/transcripts/**"], root / "r.bundle.tar.zst", "outputs")
    return {"root": root, "full": full, "redacted": redacted.path}


def test_the_full_split_bundle_supports_every_claim(split: dict[str, Any]) -> None:
    verification = verify(split["full"])
    assert verification.status == "supported", [
        (c.claim.id, c.why) for c in verification.claims if c.status != "supported"
    ]
    keys = {c.checker for c in verification.extracted.manifest.cases}
    assert {"promptfoo-stats@5", "promptfoo-scores@2", "promptfoo-assert@3"} <= keys


def test_the_scores_file_holds_no_output_prompt_or_variable(split: dict[str, Any]) -> None:
    scores = next((split["root"] / "source" / "inputs" / "scores").iterdir()).read_text()
    document = json.loads(RESULTS.read_text())
    for row in document["results"]["results"]:
        output = (row.get("response") or {}).get("output")
        if isinstance(output, str) and len(output) > 8:
            assert output not in scores
    assert '"response"' not in scores and '"vars"' not in scores and '"raw"' not in scores


def test_redacted_of_the_results_file_the_pass_rate_stays_supported(
    split: dict[str, Any],
) -> None:
    verification = verify(split["redacted"])
    statuses = {c.claim.id: c.status for c in verification.claims}
    assert statuses["pass-rate"] == "supported"
    withheld = {c.claim.id for c in verification.claims if c.withheld}
    assert withheld == {"assertions", "scores-match-results"} & set(statuses)
    assert "scores-match-results" in withheld


def test_promptfoo_stats_v3_refuses_a_whole_results_file() -> None:
    verdict = run("promptfoo-stats@3", {"scores": RESULTS.read_bytes()})
    assert verdict.status == "error"
    assert "more than a scores file" in verdict.message


def test_promptfoo_scores_passes_on_the_projection_and_fails_on_a_changed_one() -> None:
    data = RESULTS.read_bytes()
    document = json.loads(data)
    assert run(
        "promptfoo-scores@1", {"results": data, "scores": scores_bytes(document)}
    ).status == ("pass")
    changed = project(document)
    changed["results"]["results"][0]["success"] = not changed["results"]["results"][0]["success"]
    verdict = run("promptfoo-scores@1", {"results": data, "scores": json.dumps(changed).encode()})
    assert verdict.codes == ("promptfoo.scores_not_the_results",)
