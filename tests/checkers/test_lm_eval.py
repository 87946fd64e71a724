"""lm-eval-metric@1, lm-eval-counts@1, lm-eval-hashes@1 on small runs written here, each
in lm-eval 0.4.13's own shape (the real outputs are in tests/importers/test_import_lm_eval.py)."""

from __future__ import annotations

import copy
import hashlib
import json
from typing import Any

import pytest

import checkers
from bundler.run.runner import run_checker
from checkers.api import Verdict
from checkers.lm_eval.run import limited

TASK = "t"


def sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def record(doc_id: int, acc: float, filter_name: str = "none") -> dict[str, Any]:
    doc = {"question": f"q{doc_id} café", "label": doc_id % 2}
    prompt = f"Question: q{doc_id}\nAnswer:"
    target = str(doc_id % 2)
    return {
        "doc_id": doc_id,
        "doc": doc,
        "target": target,
        "arguments": {"gen_args_0": {"arg_0": prompt, "arg_1": " yes"}},
        "filter": filter_name,
        "metrics": ["acc"],
        "doc_hash": sha(json.dumps(doc, indent=2, ensure_ascii=False)),
        "prompt_hash": sha(prompt),
        "target_hash": sha(target),
        "acc": acc,
    }


VALUES = [1.0, 0.0, 1.0, 1.0]


def run(values: list[float] = VALUES, limit: Any = None, original: int = 4) -> dict[str, Any]:
    """A results file and its samples, as lm-eval writes them (loaded, as the runner
    passes them to a checker)."""
    records = [record(i, v) for i, v in enumerate(values)]
    n = len(values)
    mu = sum(values) / n
    stderr = (sum((x - mu) ** 2 for x in values) / (n - 1)) ** 0.5 / n**0.5
    task_hash = sha("".join(r["doc_hash"] + r["prompt_hash"] + r["target_hash"] for r in records))
    results = {
        "results": {TASK: {"name": TASK, "acc,none": mu, "acc_stderr,none": stderr}},
        "configs": {TASK: {"metric_list": [{"metric": "acc", "aggregation": "mean"}]}},
        "n-samples": {TASK: {"original": original, "effective": n}},
        "config": {"limit": limit, "bootstrap_iters": 100000},
        "task_hashes": {TASK: task_hash},
    }
    return {"results": results, "samples": [(i + 1, r) for i, r in enumerate(records)]}


def check(key: str, inputs: dict[str, Any], **params: Any) -> Verdict:
    found = checkers.get(key)
    assert found is not None
    return run_checker(found, inputs, {"task": TASK, **params})


def metric(inputs: dict[str, Any], claimed: float = 0.75, **params: Any) -> Verdict:
    return check("lm-eval-metric@1", inputs, metric="acc", filter="none", claimed=claimed, **params)


def counts(inputs: dict[str, Any], original: int = 4, effective: int = 4) -> Verdict:
    claimed = {"original": original, "effective": effective}
    return check("lm-eval-counts@1", inputs, claimed=claimed)


# -- lm-eval-metric@1 --------------------------------------------------------------------


def test_headline_equal_to_the_mean_of_the_samples_passes() -> None:
    verdict = metric(run())
    assert verdict.status == "pass", verdict.message
    assert verdict.details["recomputed"] == 0.75
    assert verdict.details["values"] == 4


def test_header_accuracy_disagreeing_with_samples_fails_naming_the_figure() -> None:
    inputs = run()
    inputs["results"]["results"][TASK]["acc,none"] = 0.5
    # whoever wrote the bundle: a claim of the samples' own mean does not hide the header
    verdict = metric(inputs, claimed=0.75)
    assert verdict.status == "fail"
    assert "lmeval.figure_mismatch" in verdict.codes
    assert "t acc,none" in verdict.reasons[0].message


def test_a_stored_value_changed_fails_figure_and_stderr() -> None:
    inputs = run()
    inputs["samples"][1][1]["acc"] = 1.0
    verdict = metric(inputs)
    assert verdict.codes == ("lmeval.figure_mismatch", "lmeval.stderr_mismatch")


def test_header_stderr_disagreeing_with_samples_fails() -> None:
    inputs = run()
    inputs["results"]["results"][TASK]["acc_stderr,none"] = 0.01
    assert metric(inputs).codes == ("lmeval.stderr_mismatch",)


def test_stderr_stated_as_na_is_accepted() -> None:
    inputs = run()
    inputs["results"]["results"][TASK]["acc_stderr,none"] = "N/A"
    assert metric(inputs).status == "pass"


def test_a_claim_other_than_the_header_fails() -> None:
    assert metric(run(), claimed=0.8).codes == ("lmeval.claim_mismatch",)


def test_values_of_another_filter_are_not_averaged_in() -> None:
    inputs = run()
    inputs["samples"].append((9, record(0, 0.0, filter_name="strict")))
    assert metric(inputs).status == "pass"


@pytest.mark.parametrize("value", [True, "1.0", None, float("nan")])
def test_a_value_that_is_not_a_finite_number_is_not_averaged(value: Any) -> None:
    inputs = run()
    inputs["samples"][0][1]["acc"] = value
    verdict = metric(inputs)
    assert verdict.status == "error" and verdict.codes == ("input.invalid",)


def test_another_aggregation_is_not_re_derived() -> None:
    inputs = run()
    inputs["results"]["configs"][TASK]["metric_list"][0]["aggregation"] = "median"
    verdict = metric(inputs)
    assert verdict.status == "error" and "not mean" in verdict.message


def test_an_unlisted_metric_averages_only_if_lm_eval_does_by_default() -> None:
    inputs = run()
    inputs["results"]["configs"][TASK] = {}
    assert metric(inputs).status == "pass"  # acc: mean by default
    inputs["results"]["results"][TASK]["bleu,none"] = 0.75
    for _, r in inputs["samples"]:
        r["bleu"] = r["acc"]
    verdict = check("lm-eval-metric@1", inputs, metric="bleu", filter="none", claimed=0.75)
    assert verdict.status == "error"


@pytest.mark.parametrize("tolerance", [-0.1, 0.05, 1])
def test_tolerance_outside_its_documented_range_is_refused(tolerance: float) -> None:
    verdict = metric(run(), tolerance=tolerance)
    assert verdict.status == "error" and verdict.codes in (
        ("params.invalid",),
        ("params.out_of_range",),
    )


def test_a_bool_tolerance_is_refused() -> None:
    assert metric(run(), tolerance=True).codes == ("params.invalid",)


def test_no_samples_file_is_an_error_not_a_pass() -> None:
    inputs = run()
    del inputs["samples"]
    assert metric(inputs).status == "error"


# -- lm-eval-counts@1 --------------------------------------------------------------------


def test_counts_that_agree_pass() -> None:
    assert counts(run()).status == "pass"


def test_a_record_missing_from_the_samples_fails() -> None:
    inputs = run()
    del inputs["samples"][-1]
    assert counts(inputs).codes == ("lmeval.count_mismatch",)


def test_a_document_stored_twice_fails() -> None:
    inputs = run()
    inputs["samples"][-1][1]["doc_id"] = 0
    assert counts(inputs).codes == ("lmeval.duplicate_doc",)


def test_a_claim_other_than_n_samples_fails() -> None:
    assert counts(run(), original=5).codes == ("lmeval.count_mismatch",)


def test_effective_other_than_the_limit_allows_fails() -> None:
    inputs = run(limit=3.0, original=7)  # 4 records, but --limit 3
    verdict = counts(inputs, original=7)
    assert "lmeval.limit_mismatch" in verdict.codes
    assert counts(run(limit=4.0, original=7), original=7).status == "pass"


def test_all_documents_must_be_evaluated_without_a_limit() -> None:
    assert counts(run(original=7), original=7).codes == ("lmeval.limit_mismatch",)


@pytest.mark.parametrize(
    ("original", "limit", "evaluated"),
    [(7, None, 7), (7, 3.0, 3), (7, 10, 7), (7, 0.5, 4), (10, 0.25, 3), (7, 1.0, 1)],
)
def test_the_limit_is_read_as_lm_eval_reads_it(original: int, limit: Any, evaluated: int) -> None:
    assert limited(original, limit) == evaluated


def test_counts_from_the_results_alone_without_samples() -> None:
    inputs = run()
    del inputs["samples"]
    assert counts(inputs).status == "pass"
    inputs["results"]["n-samples"][TASK]["effective"] = 3
    assert counts(inputs, effective=3).codes == ("lmeval.limit_mismatch",)


@pytest.mark.parametrize("value", [True, 4.0, -1, "4"])
def test_a_count_that_is_not_a_whole_number_is_refused(value: Any) -> None:
    inputs = run()
    inputs["results"]["n-samples"][TASK]["original"] = value
    verdict = counts(inputs)
    assert verdict.status == "error" and verdict.codes == ("input.invalid",)


def test_a_boolean_claimed_count_is_refused() -> None:
    verdict = check("lm-eval-counts@1", run(), claimed={"original": True, "effective": 4})
    assert verdict.codes == ("params.invalid",)


@pytest.mark.parametrize("value", [True, "3", 0, -2.0])
def test_a_limit_that_is_not_a_positive_number_is_refused(value: Any) -> None:
    inputs = run()
    inputs["results"]["config"]["limit"] = value
    assert counts(inputs).status == "error"


# -- lm-eval-hashes@1 --------------------------------------------------------------------


def test_hashes_as_lm_eval_computes_them_pass() -> None:
    verdict = check("lm-eval-hashes@1", run())
    assert verdict.status == "pass", verdict.message


@pytest.mark.parametrize(
    ("field", "change", "code"),
    [
        ("doc", lambda r: r["doc"].update(label=7), "lmeval.doc_hash_mismatch"),
        (
            "arguments",
            lambda r: r["arguments"]["gen_args_0"].update(arg_0="other"),
            "lmeval.prompt_hash_mismatch",
        ),
        ("target", lambda r: r.update(target="9"), "lmeval.target_hash_mismatch"),
    ],
)
def test_a_forged_record_fails_naming_the_hash(field: str, change: Any, code: str) -> None:
    inputs = run()
    change(inputs["samples"][2][1])
    verdict = check("lm-eval-hashes@1", inputs)
    assert verdict.codes == (code,), field
    assert "line 3" in verdict.reasons[0].message


def test_a_forged_stored_hash_fails_the_record_and_the_task_hash() -> None:
    inputs = run()
    inputs["samples"][0][1]["doc_hash"] = "0" * 64
    verdict = check("lm-eval-hashes@1", inputs)
    assert verdict.codes == ("lmeval.doc_hash_mismatch", "lmeval.task_hash_mismatch")


def test_a_forged_task_hash_fails() -> None:
    inputs = run()
    inputs["results"]["task_hashes"][TASK] = "f" * 64
    assert check("lm-eval-hashes@1", inputs).codes == ("lmeval.task_hash_mismatch",)


def test_records_reordered_change_the_task_hash() -> None:
    inputs = run()
    inputs["samples"].reverse()
    assert check("lm-eval-hashes@1", inputs).codes == ("lmeval.task_hash_mismatch",)


def test_a_missing_task_hash_fails() -> None:
    inputs = run()
    inputs["results"]["task_hashes"] = {}
    assert check("lm-eval-hashes@1", inputs).codes == ("lmeval.task_hash_mismatch",)


def test_a_lone_surrogate_in_a_hashed_text_is_an_error_not_a_traceback() -> None:
    inputs = run()
    inputs["samples"][0][1]["target"] = "\ud800"
    verdict = check("lm-eval-hashes@1", inputs)
    assert verdict.status == "error" and verdict.codes == ("input.invalid",)


@pytest.mark.parametrize("prompt", [None, 3, ["a"]])
def test_a_prompt_that_is_not_text_is_an_error(prompt: Any) -> None:
    inputs = copy.deepcopy(run())
    inputs["samples"][0][1]["arguments"]["gen_args_0"]["arg_0"] = prompt
    assert check("lm-eval-hashes@1", inputs).codes == ("input.invalid",)


@pytest.mark.parametrize("doc_id", [True, "0", None])
def test_a_doc_id_that_is_not_a_whole_number_is_an_error(doc_id: Any) -> None:
    inputs = run()
    inputs["samples"][0][1]["doc_id"] = doc_id
    for key, params in [("lm-eval-hashes@1", {}), ("lm-eval-counts@1", {})]:
        if key == "lm-eval-counts@1":
            params = {"claimed": {"original": 4, "effective": 4}}
        assert check(key, inputs, **params).codes == ("input.invalid",)


def test_the_samples_role_reads_lines_at_newline_only() -> None:
    """As verify loads it: a doc's U+2028 (unescaped, as lm-eval writes it) is no line break."""
    from bundler.run.inputs import parse_input
    from checkers.lm_eval.checks import SAMPLES_ROLE

    first = record(0, 1.0)
    first["doc"]["question"] = "a\u2028b\x85c"
    first["doc_hash"] = sha(json.dumps(first["doc"], indent=2, ensure_ascii=False))
    text = json.dumps(first, ensure_ascii=False) + "\r\n" + json.dumps(record(1, 0.0)) + "\n"
    loaded = parse_input(text.encode(), "s.jsonl", SAMPLES_ROLE.kind, SAMPLES_ROLE.reading)
    assert [line for line, _ in loaded] == [1, 2]
    inputs = run([1.0, 0.0])
    inputs["samples"] = loaded
    inputs["results"]["task_hashes"][TASK] = sha(
        "".join(r["doc_hash"] + r["prompt_hash"] + r["target_hash"] for _, r in loaded)
    )
    assert check("lm-eval-hashes@1", inputs).status == "pass"
