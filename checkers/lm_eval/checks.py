"""lm-eval-metric@1, lm-eval-counts@1, lm-eval-hashes@1: what an lm-evaluation-harness
results file states, re-derived from its stored samples.

Each reads the results file (role ``results``) and, where the run logged them
(``--log_samples``), one task's samples file (role ``samples``), and compares the header
with the records whoever wrote the bundle: a figure, a count or a hash the header states
that the records do not give fails with a reason naming it. They re-check arithmetic,
counts and hashes on stored data; they never re-run the model, and take each per-sample
value as stored.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any

from ..api import (
    MAX_TOLERANCE,
    CheckerInputError,
    InputKind,
    Param,
    Reading,
    Reason,
    Role,
    Verdict,
    checker,
)
from ..arithmetic import left_sum
from .run import (
    HASHES,
    each_record,
    is_count,
    is_number,
    limited,
    mean,
    mean_stderr,
    read_records,
    read_task,
    recomputed_hashes,
    stated_task_hash,
    task_hash,
    values,
)

# lm-eval writes NaN where a figure is undefined (read, and refused where a verdict reads a
# number: ``run.is_number``), and text unescaped (ensure_ascii=False): a U+2028 inside a
# doc is no line break
RESULTS_ROLE = Role(
    "results",
    InputKind.DATA,
    "lm-eval's results_<time>.json, as the run wrote it",
    reading=Reading(json_constants=True),
)
SAMPLES_ROLE = Role(
    "samples",
    InputKind.JSONL,
    "the task's samples_<task>_<time>.jsonl (written with --log_samples)",
    reading=Reading(json_constants=True, lines_at_newline=True),
)
TASK = Param("task", "the task's name, as the results file's `results` names it", (str,))


def text_param(params: Mapping[str, Any], name: str) -> str:
    value = params[name]
    if not value:
        raise CheckerInputError("params.invalid", f"{name} must not be empty")
    return str(value)


def _tolerance(params: Mapping[str, Any]) -> float:
    tolerance = params["tolerance"]
    if not is_number(tolerance) or not 0 <= tolerance < MAX_TOLERANCE:
        raise CheckerInputError(
            "params.invalid",
            f"tolerance {tolerance!r} must be at least 0 and below {MAX_TOLERANCE}",
        )
    return float(tolerance)


def _records(inputs: Mapping[str, Any]) -> list[Any]:
    return read_records(samples_of(inputs))


def samples_of(inputs: Mapping[str, Any]) -> Any:
    if "samples" not in inputs:
        raise CheckerInputError(
            "input.invalid", "no samples file: the run was not made with --log_samples"
        )
    return inputs["samples"]


# -- lm-eval-metric@1 --------------------------------------------------------------------


def metric_params(params: Mapping[str, Any]) -> tuple[str, str, str, float, float]:
    task, metric, filter_name = (text_param(params, n) for n in ("task", "metric", "filter"))
    claimed = params["claimed"]
    if not is_number(claimed):
        raise CheckerInputError("params.invalid", f"claimed {claimed!r} is not a finite number")
    return task, metric, filter_name, float(claimed), _tolerance(params)


def results_with(task: str, figures: Mapping[str, Any], n: int, limit: Any = None) -> Any:
    return {
        "results": {task: dict(figures)},
        "n-samples": {task: {"original": n, "effective": n}},
        "configs": {task: {}},
        "config": {"limit": limit, "bootstrap_iters": 0},
    }


def numbered(records: list[dict[str, Any]]) -> list[tuple[int, Any]]:
    return [(i + 1, r) for i, r in enumerate(records)]


def _metric_counterexample(params: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """A header stating the claimed figure over one record whose value is 0 or 1, at
    least 0.5 away (more than any accepted tolerance)."""
    task, metric, filter_name, claimed, _ = metric_params(params)
    value = 0.0 if claimed >= 0.5 else 1.0
    figures = {f"{metric},{filter_name}": claimed, f"{metric}_stderr,{filter_name}": "N/A"}
    record = {"doc_id": 0, "filter": filter_name, metric: value}
    return {"results": results_with(task, figures, 1), "samples": numbered([record])}


@checker(
    "lm-eval-metric",
    1,
    roles=[RESULTS_ROLE, SAMPLES_ROLE],
    params=[
        TASK,
        Param("metric", 'the metric\'s name (`acc` of `"acc,none"`)', (str,)),
        Param("filter", 'the filter\'s name (`none` of `"acc,none"`)', (str,)),
        Param("claimed", "the figure the results file states (a finite number)", (float, int)),
        Param(
            "tolerance",
            "largest accepted |stated - recomputed|, for the figure and its stderr (lm-eval "
            "writes full precision; at least 0, below 0.05)",
            (float, int),
            1e-9,
            at_least=0,
            below=0.05,
        ),
    ],
    reasons={
        "lmeval.figure_mismatch": "the figure the results file states is not the mean of the "
        "stored per-sample values",
        "lmeval.stderr_mismatch": "the stderr the results file states is not the one the stored "
        "values give",
        "lmeval.claim_mismatch": "the claimed figure is not the one the results file states",
    },
    counterexample=_metric_counterexample,
    example_params=[{"task": "t", "metric": "acc", "filter": "none", "claimed": 0.25}],
)
def lm_eval_metric(inputs: Mapping[str, Any], params: Mapping[str, Any]) -> Verdict:
    """A headline figure ("METRIC,FILTER") equals the mean of the stored per-sample values.

    Reads the task's figure and stderr from the results file and the values of the metric
    under the filter from the samples file, and recomputes both as lm-eval 0.4.13 does for
    a `mean` aggregation: the sum in file order over the count, and the sample standard
    deviation over the square root of the count (a stated "N/A" is accepted). The
    figure the results state is compared with the samples and with `claimed`, each
    mismatch a reason naming the figure. A metric whose aggregation the task config does
    not name `mean` (or, unnamed, is not one lm-eval averages by default), a value that
    is not a finite number, and no value at all are `input.invalid`: not re-derived. A
    pass says the arithmetic holds on the stored values; it does not re-score a sample
    nor re-run the model.
    """
    name, metric, filter_name, claimed, tolerance = metric_params(params)
    task = read_task(inputs["results"], name)
    figure = f"{name} {metric},{filter_name}"
    aggregation = task.aggregation(metric)
    if aggregation != "mean":
        raise CheckerInputError(
            "input.invalid",
            f"{figure}: aggregation {aggregation or 'not named'}, not mean; not re-derived",
        )
    stated = task.figure(metric, filter_name)
    if not is_number(stated):
        raise CheckerInputError(
            "input.invalid", f"{figure}: the results state {stated!r}, not a finite number"
        )
    items = values(_records(inputs), metric, filter_name)
    if not items:
        raise CheckerInputError("input.invalid", f"{figure}: no stored record has a value")
    recomputed = mean(items)
    stated_stderr = task.stderr(metric, filter_name)
    stderr = mean_stderr(items) if len(items) > 1 else None
    details = {
        "figure": f"{metric},{filter_name}",
        "stated": stated,
        "recomputed": recomputed,
        "values": len(items),
        "sum": left_sum(items),
        "stated_stderr": stated_stderr,
        "recomputed_stderr": stderr,
        "claimed": claimed,
    }
    reasons = []
    if abs(stated - recomputed) > tolerance:
        reasons.append(
            Reason(
                "lmeval.figure_mismatch",
                f"{figure}: the results state {stated!r}, the {len(items)} stored values give "
                f"{recomputed!r}",
                {"figure": figure, "stated": stated, "recomputed": recomputed},
            )
        )
    if stated_stderr != "N/A" and (
        not is_number(stated_stderr) or stderr is None or abs(stated_stderr - stderr) > tolerance
    ):
        reasons.append(
            Reason(
                "lmeval.stderr_mismatch",
                f"{figure}: the results state stderr {stated_stderr!r}, the stored values give "
                f"{stderr if stderr is not None else 'none (one value)'}",
                {"figure": figure, "stated": stated_stderr, "recomputed": stderr},
            )
        )
    if abs(claimed - stated) > tolerance:
        reasons.append(
            Reason(
                "lmeval.claim_mismatch",
                f"{figure}: claimed {claimed!r}, the results state {stated!r}",
                {"figure": figure, "claimed": claimed, "stated": stated},
            )
        )
    if reasons:
        return Verdict.failed(f"{figure} does not follow from the samples", reasons, **details)
    return Verdict.passed(
        f"{figure} = {recomputed:.6g}, the mean of {len(items)} stored values, as stated",
        **details,
    )


# -- lm-eval-counts@1 --------------------------------------------------------------------

COUNTS = ("original", "effective")


def claimed_counts(params: Mapping[str, Any]) -> dict[str, int]:
    claimed = params["claimed"]
    if set(claimed) != set(COUNTS) or not all(is_count(v) and v >= 0 for v in claimed.values()):
        raise CheckerInputError(
            "params.invalid",
            "claimed must give original and effective, each a whole number of at least 0 "
            "(a boolean is not a count)",
        )
    return dict(claimed)


def _counts_counterexample(params: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The claimed counts stated, with one samples record more than `effective`."""
    task = text_param(params, "task")
    claimed = claimed_counts(params)
    results = results_with(task, {}, 0)
    results["n-samples"][task] = dict(claimed)
    records = [{"doc_id": i, "filter": "none"} for i in range(claimed["effective"] + 1)]
    return {"results": results, "samples": numbered(records)}


@checker(
    "lm-eval-counts",
    1,
    roles=[RESULTS_ROLE, SAMPLES_ROLE._replace(optional=True)],
    params=[
        TASK,
        Param(
            "claimed",
            "the task's n-samples as the results state them: original and effective -> "
            "whole number",
            (dict,),
        ),
    ],
    reasons={
        "lmeval.count_mismatch": "a count the results state is not what the samples or the "
        "claim give",
        "lmeval.limit_mismatch": "the effective count is not what --limit allows of the original",
        "lmeval.duplicate_doc": "a document is stored twice under one filter",
    },
    counterexample=_counts_counterexample,
    example_params=[{"task": "t", "claimed": {"original": 7, "effective": 3}}],
)
def lm_eval_counts(inputs: Mapping[str, Any], params: Mapping[str, Any]) -> Verdict:
    """The task's sample counts agree with the claim, the limit and the stored records.

    `n-samples` (`original` documents, `effective` evaluated) must equal `claimed`;
    `effective` must be what lm-eval evaluates of `original` under the run's `limit`
    (the first ceil(original x L) documents for L below 1, else the first int(L); all
    of them with no limit, where a `--samples` selection, which the results do not
    record, shows as a mismatch); with the samples file, each filter must hold exactly
    `effective` records, no document twice. A pass re-counts stored data; it says
    nothing about the documents that were not evaluated.
    """
    name = text_param(params, "task")
    claimed = claimed_counts(params)
    task = read_task(inputs["results"], name)
    stated = {"original": task.original, "effective": task.effective}
    allowed = limited(task.original, task.limit)
    reasons = [
        Reason(
            "lmeval.count_mismatch",
            f"{name} n-samples {key}: claimed {claimed[key]}, the results state {stated[key]}",
            {"count": key, "claimed": claimed[key], "stated": stated[key]},
        )
        for key in COUNTS
        if claimed[key] != stated[key]
    ]
    if task.effective != allowed:
        reasons.append(
            Reason(
                "lmeval.limit_mismatch",
                f"{name}: effective {task.effective}, but limit {task.limit!r} of "
                f"{task.original} documents evaluates {allowed}",
                {"effective": task.effective, "limit": task.limit, "allowed": allowed},
            )
        )
    details: dict[str, Any] = {**stated, "limit": task.limit, "allowed_by_limit": allowed}
    if "samples" in inputs:
        records = read_records(inputs["samples"])
        per_filter: dict[str, Counter[int]] = {}
        for record in records:
            per_filter.setdefault(record.filter, Counter())[record.doc_id] += 1
        details["records_per_filter"] = {f: left_sum(c.values()) for f, c in per_filter.items()}
        for filter_name, docs in per_filter.items():
            held = left_sum(docs.values())
            if held != task.effective:
                reasons.append(
                    Reason(
                        "lmeval.count_mismatch",
                        f"{name} filter {filter_name!r}: {held} records stored, the results "
                        f"state effective {task.effective}",
                        {"count": "effective", "filter": filter_name, "stored": held},
                    )
                )
            twice = sorted(d for d, n in docs.items() if n > 1)
            if twice:
                reasons.append(
                    Reason(
                        "lmeval.duplicate_doc",
                        f"{name} filter {filter_name!r}: doc_id(s) {twice[:5]} stored more "
                        "than once",
                        {"filter": filter_name, "doc_ids": twice[:50]},
                    )
                )
        if not per_filter and task.effective:
            reasons.append(
                Reason(
                    "lmeval.count_mismatch",
                    f"{name}: no record stored, the results state effective {task.effective}",
                    {"count": "effective", "stored": 0},
                )
            )
    if reasons:
        return Verdict.failed(f"{name}'s counts do not agree", reasons, **details)
    return Verdict.passed(
        f"{name}: {task.effective} of {task.original} documents evaluated (limit "
        f"{task.limit!r}), as stated"
        + (", each stored once per filter" if "samples" in inputs else ""),
        **details,
    )


# -- lm-eval-hashes@1 --------------------------------------------------------------------


def _hashes_counterexample(params: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """One record whose stored doc_hash is not the hash of its doc."""
    task = text_param(params, "task")
    record = {
        "doc_id": 0,
        "filter": "none",
        "doc": {"q": "x"},
        "target": "y",
        "arguments": {"gen_args_0": {"arg_0": "x"}},
        "doc_hash": "0" * 64,
        "prompt_hash": "0" * 64,
        "target_hash": "0" * 64,
    }
    return {"results": results_with(task, {}, 1), "samples": numbered([record])}


@checker(
    "lm-eval-hashes",
    1,
    roles=[RESULTS_ROLE, SAMPLES_ROLE],
    params=[TASK],
    reasons={
        "lmeval.doc_hash_mismatch": "a record's doc_hash is not the SHA-256 of its doc",
        "lmeval.prompt_hash_mismatch": "a record's prompt_hash is not the SHA-256 of its prompt",
        "lmeval.target_hash_mismatch": "a record's target_hash is not the SHA-256 of its target",
        "lmeval.task_hash_mismatch": "the task hash the results state is not the one the "
        "records give (or none is stated)",
    },
    counterexample=_hashes_counterexample,
    example_params=[{"task": "t"}],
)
def lm_eval_hashes(inputs: Mapping[str, Any], params: Mapping[str, Any]) -> Verdict:
    """Every hash the run stored is recomputed from what it hashes.

    Per record, as lm-eval 0.4.13 computes them: `doc_hash` the SHA-256 of
    `json.dumps(doc, indent=2, ensure_ascii=False)`, `prompt_hash` of the first argument
    of the first request (`arguments.gen_args_0.arg_0`), `target_hash` of the target's
    text; and the results file's `task_hashes[task]`, the SHA-256 of every record's three
    hashes concatenated in file order. A pass shows the records are the ones the hashes
    were made of; it does not show the documents are the task's dataset (nothing here
    holds that) nor that the model answered so.
    """
    name = text_param(params, "task")
    results = inputs["results"]
    read_task(results, name)
    samples = samples_of(inputs)
    # each pass reads the records one at a time, none kept: every record checked first
    count = left_sum(1 for _ in each_record(samples))
    reasons = []
    wrong: Counter[str] = Counter()
    for record in each_record(samples):
        again = recomputed_hashes(record)
        for key in HASHES:
            if record.raw.get(key) != again[key]:
                wrong[key] += 1
                if wrong[key] <= 20:
                    reasons.append(
                        Reason(
                            f"lmeval.{key}_mismatch",
                            f"{name} {record.label}: {key} {record.raw.get(key)!r}, the record "
                            f"gives {again[key]}",
                            {"line": record.line, "hash": key},
                        )
                    )
    stated = stated_task_hash(results, name)
    again_task = task_hash(each_record(samples))
    if stated != again_task:
        reasons.append(
            Reason(
                "lmeval.task_hash_mismatch",
                f"{name}: task_hashes states {stated!r}, the {count} records give {again_task}",
                {"stated": stated, "recomputed": again_task},
            )
        )
    details = {"records": count, "mismatches": dict(wrong), "task_hash": again_task}
    if reasons:
        return Verdict.failed(f"{name}'s stored hashes do not all hold", reasons, **details)
    return Verdict.passed(
        f"{name}: the 3 hashes of each of {count} records and the task hash hold",
        **details,
    )
