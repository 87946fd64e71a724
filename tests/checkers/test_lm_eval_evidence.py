"""lm-eval-metric@2 and lm-eval-counts@2 (issue 41, item 7): the three forgeries @1
supports, hand-written in lm-eval 0.4.13's shapes, each failed by @2 and still passed by @1
(the @1 versions keep their behaviour; their advisories are RB-2026-0040 and 0041)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from checkers.api import Verdict
from tests.checkers.test_lm_eval import TASK, check, sha


def record(doc_id: int, acc: float | None) -> dict[str, Any]:
    """A record as lm-eval writes it; ``acc`` None: the value deleted, its ``metrics``
    list left as lm-eval wrote it."""
    doc = {"question": f"q{doc_id}", "label": doc_id % 2}
    prompt = f"Question: q{doc_id}\nAnswer:"
    target = str(doc_id % 2)
    written = {
        "doc_id": doc_id,
        "doc": doc,
        "target": target,
        "arguments": {"gen_args_0": {"arg_0": prompt, "arg_1": " yes"}},
        "filter": "none",
        "metrics": ["acc"],
        "doc_hash": sha(json.dumps(doc, indent=2, ensure_ascii=False)),
        "prompt_hash": sha(prompt),
        "target_hash": sha(target),
    }
    if acc is not None:
        written["acc"] = acc
    return written


def mean_and_stderr(values: list[float]) -> tuple[float, float]:
    n = len(values)
    mu = sum(values) / n
    return mu, (sum((x - mu) ** 2 for x in values) / (n - 1)) ** 0.5 / n**0.5


def forged_run(
    values: list[float | None],
    doc_ids: list[int] | None = None,
    stated: float | None = None,
    original: int | None = None,
    limit: Any = None,
) -> dict[str, Any]:
    """A results file and samples; the header states ``stated`` (else the mean of the
    values present) and the stderr those values give."""
    ids = doc_ids if doc_ids is not None else list(range(len(values)))
    records = [record(i, v) for i, v in zip(ids, values, strict=True)]
    present = [v for v in values if v is not None]
    mu, stderr = mean_and_stderr(present)
    task_hash = sha("".join(r["doc_hash"] + r["prompt_hash"] + r["target_hash"] for r in records))
    results = {
        "results": {
            TASK: {"acc,none": mu if stated is None else stated, "acc_stderr,none": stderr}
        },
        "configs": {TASK: {"metric_list": [{"metric": "acc", "aggregation": "mean"}]}},
        "n-samples": {TASK: {"original": original or len(values), "effective": len(values)}},
        "config": {"limit": limit, "bootstrap_iters": 100000},
        "task_hashes": {TASK: task_hash},
    }
    return {"results": results, "samples": [(i + 1, r) for i, r in enumerate(records)]}


def metric(version: int, inputs: dict[str, Any], **params: Any) -> Verdict:
    return check(f"lm-eval-metric@{version}", inputs, metric="acc", filter="none", **params)


def counts(version: int, inputs: dict[str, Any]) -> Verdict:
    claimed = dict(inputs["results"]["n-samples"][TASK])
    return check(f"lm-eval-counts@{version}", inputs, claimed=claimed)


# 86 right answers of 100: stderr sqrt(0.86 x 0.14 / 99) = 0.0349
EIGHTY_SIX = [1.0] * 86 + [0.0] * 14
# 63 right, 7 wrong, and the value of 30 wrong answers deleted: 63/70 = 0.90
DELETED = [1.0] * 63 + [0.0] * 7 + [None] * 30


# -- the forgeries, @1 against @2 -----------------------------------------------------------


def test_tolerance_0049_makes_acc_090_of_samples_giving_086_contradicted_under_v2() -> None:
    inputs = forged_run(EIGHTY_SIX, stated=0.90)
    assert metric(1, inputs, claimed=0.90, tolerance=0.049).status == "pass"  # the advisory
    verdict = metric(2, inputs, claimed=0.90, tolerance=0.049)
    assert verdict.status == "fail"
    assert set(verdict.codes) == {
        "lmeval.figure_mismatch",
        "lmeval.tolerance_too_wide",
        "lmeval.claim_mismatch",
    }
    # the re-derived figure beside the claimed one
    assert "claimed 0.9 ± 0.049" in verdict.message and "re-derived 0.86" in verdict.message


def test_claim_090_at_two_decimals_of_samples_giving_086_is_contradicted() -> None:
    inputs = forged_run(EIGHTY_SIX)
    verdict = metric(2, inputs, claimed=0.90, decimals=2)
    assert verdict.codes == ("lmeval.claim_mismatch",)
    assert "claimed 0.9 (at 2 decimals), re-derived 0.86" in verdict.message


def test_metric_key_deleted_from_30_of_100_records_is_contradicted_under_v2() -> None:
    inputs = forged_run(DELETED)
    assert inputs["results"]["results"][TASK]["acc,none"] == pytest.approx(0.90)
    for version in (1, 2):
        assert counts(version, inputs).status == "pass"  # 100 records, documents 0-99
    assert check("lm-eval-hashes@1", inputs).status == "pass"  # the hashes hold
    assert metric(1, inputs, claimed=0.9).status == "pass"  # the advisory
    verdict = metric(2, inputs, claimed=0.9)
    assert verdict.codes == ("lmeval.value_missing",)
    assert "30 of the filter's 100 records hold no acc" in verdict.reasons[0].message
    assert verdict.details["values"] == 70 and verdict.details["records"] == 100


def test_limit_10_run_holding_documents_990_to_999_is_contradicted_under_v2() -> None:
    inputs = forged_run([1.0] * 9 + [0.0], doc_ids=list(range(990, 1000)), original=1000, limit=10)
    assert counts(1, inputs).status == "pass"  # the advisory
    verdict = counts(2, inputs)
    assert verdict.codes == ("lmeval.doc_set_mismatch",)
    assert "hold doc_id 990-999" in verdict.message or "doc_id 990-999" in (
        verdict.reasons[0].message
    )
    assert "the first 10 documents, doc_id 0-9" in verdict.reasons[0].message


# -- what @2 still accepts ------------------------------------------------------------------


def test_v2_passes_an_honest_run_showing_claimed_beside_re_derived() -> None:
    verdict = metric(2, forged_run(EIGHTY_SIX), claimed=0.86)
    assert verdict.status == "pass", verdict.message
    assert "claimed 0.86 (at full precision), re-derived 0.86" in verdict.message
    assert verdict.details["values"] == 100 == verdict.details["records"]


def test_v2_accepts_a_claim_rounded_to_its_stated_decimals() -> None:
    inputs = forged_run(EIGHTY_SIX)
    assert metric(2, inputs, claimed=0.9, decimals=1).status == "pass"  # 0.86 is 0.9
    assert metric(2, inputs, claimed=0.86, decimals=2).status == "pass"
    assert metric(2, inputs, claimed=0.8, decimals=1).codes == ("lmeval.claim_mismatch",)


def test_v2_accepts_an_interval_within_the_stderr() -> None:
    inputs = forged_run(EIGHTY_SIX)
    assert metric(2, inputs, claimed=0.89, tolerance=0.034).status == "pass"
    assert metric(2, inputs, claimed=0.89, tolerance=0.036).codes == ("lmeval.tolerance_too_wide",)


def test_v2_refuses_a_claim_with_more_decimals_than_it_says() -> None:
    verdict = metric(2, forged_run(EIGHTY_SIX), claimed=0.861, decimals=2)
    assert verdict.status == "error" and verdict.codes == ("params.invalid",)


def test_v2_leaves_out_a_record_only_where_its_metrics_list_says_the_task_gave_no_value() -> None:
    inputs = forged_run(DELETED)
    for _, written in inputs["samples"][70:]:
        written["metrics"] = []  # what lm-eval writes when process_results gives no acc
    verdict = metric(2, inputs, claimed=0.9)
    assert verdict.status == "pass", verdict.message
    assert "30 record(s) left out as the task's process_results gave no acc" in verdict.message
    assert "from 70 of the filter's 100 records" in verdict.message


def test_v2_counts_a_record_without_a_metrics_list_as_missing_its_value() -> None:
    inputs = forged_run(DELETED)
    for _, written in inputs["samples"][70:]:
        del written["metrics"]
    assert metric(2, inputs, claimed=0.9).codes == ("lmeval.value_missing",)


def test_v2_counts_accept_the_first_documents_of_a_limit_run() -> None:
    inputs = forged_run([1.0] * 9 + [0.0], original=1000, limit=10)
    verdict = counts(2, inputs)
    assert verdict.status == "pass", verdict.message
    assert "doc_id 0-9" in verdict.message


def test_v2_counts_name_a_document_missing_and_one_not_taken() -> None:
    inputs = forged_run([1.0] * 4, doc_ids=[0, 1, 2, 7], original=10, limit=4)
    verdict = counts(2, inputs)
    assert verdict.codes == ("lmeval.doc_set_mismatch",)
    assert verdict.reasons[0].details["not_taken"] == [7]
    assert verdict.reasons[0].details["not_stored"] == [3]


def test_v2_counts_without_samples_say_the_documents_are_not_checked() -> None:
    inputs = forged_run([1.0] * 4)
    del inputs["samples"]
    verdict = counts(2, inputs)
    assert verdict.status == "pass" and "not checked (no samples file)" in verdict.message
