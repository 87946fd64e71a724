"""Issue 45 item 5: an lm-eval run imported in the split layout, redacted of its samples
files (documents, prompts, responses): its figures and counts stay supported; only the
hashes (they hash the documents) and the tie of the scores to the samples are withheld."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from bundler.authoring.build import build
from bundler.authoring.redact import redact
from bundler.importers.lm_eval import import_lm_eval
from bundler.run.verify import verify
from tests.checkers.checker_calls import run

DATA = Path(__file__).parents[1] / "data" / "lm_eval"


@pytest.fixture(scope="module")
def split(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("lm-eval-split")
    import_lm_eval(DATA / "full", root / "source", split=True)
    full = build(root / "source", root / "l.bundle.tar.zst", 1700000000).path
    redacted = redact(full, ["inputs/transcripts/**"], root / "r.bundle.tar.zst", "documents")
    return {"root": root, "full": full, "redacted": redacted.path}


def test_the_full_split_bundle_supports_every_claim(split: dict[str, Any]) -> None:
    verification = verify(split["full"])
    assert verification.status == "supported", [
        (c.claim.id, c.why) for c in verification.claims if c.status != "supported"
    ]
    keys = {c.checker for c in verification.extracted.manifest.cases}
    assert {"lm-eval-metric@5", "lm-eval-counts@3", "lm-eval-scores@1"} <= keys
    assert "lm-eval-metric@1" not in keys


def test_the_scores_files_hold_no_document_prompt_or_response(split: dict[str, Any]) -> None:
    folder = split["root"] / "source" / "inputs"
    for path in [*(folder / "scores").iterdir(), *(folder / "controls").iterdir()]:
        text = path.read_text()
        for key in ('"doc":', '"arguments":', '"resps":', '"filtered_resps":', '"target":'):
            assert key not in text, (path.name, key)


def test_redacted_of_its_samples_the_figures_and_counts_stay_supported(
    split: dict[str, Any],
) -> None:
    verification = verify(split["redacted"])
    statuses = {c.claim.id: c.status for c in verification.claims}
    withheld = {c.claim.id for c in verification.claims if c.withheld}
    assert withheld and all(
        i.endswith("-hashes") or i.endswith("-scores-match-samples") for i in withheld
    ), withheld
    figures = [i for i in statuses if i.endswith("-figures")]
    counts = [i for i in statuses if i.endswith("-counts")]
    assert figures and counts
    assert all(statuses[i] == "supported" for i in figures + counts), statuses


def test_lm_eval_metric_v3_refuses_a_samples_record_with_a_document() -> None:
    results = {"results": {}, "n-samples": {}}
    record = {"doc_id": 0, "filter": "none", "doc": {"q": "x"}, "acc": 1}
    verdict = run(
        "lm-eval-metric@3",
        {"results": results, "sample_scores": [(1, record)]},
        task="t",
        metric="acc",
        filter="none",
        claimed=1,
    )
    assert verdict.status == "error"
    assert "holds doc" in verdict.message


def test_lm_eval_scores_fails_when_a_value_differs() -> None:
    samples = [(1, {"doc_id": 0, "filter": "none", "doc": {"q": "x"}, "acc": 1})]
    same = [(1, {"doc_id": 0, "filter": "none", "acc": 1})]
    other = [(1, {"doc_id": 0, "filter": "none", "acc": 0})]
    assert run("lm-eval-scores@1", {"samples": samples, "sample_scores": same}).status == "pass"
    verdict = run("lm-eval-scores@1", {"samples": samples, "sample_scores": other})
    assert verdict.codes == ("lmeval.scores_not_the_samples",)
