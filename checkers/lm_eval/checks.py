"""lm-eval-metric@1, lm-eval-counts@1, lm-eval-hashes@1: what an lm-evaluation-harness
results file states, re-derived from its stored samples.

Each reads the results file (role ``results``) and, where the run logged them
(``--log_samples``), one task's samples file (role ``samples``), and compares the header
with the records whoever wrote the bundle: a figure, a count or a hash the header states
that the records do not give fails with a reason naming it. They re-check arithmetic,
counts and hashes on stored data; they never re-run the model, and take each per-sample
value as stored.

The counting every version of lm-eval-metric and lm-eval-counts does alike is here once
(``rederive`` and ``figure_reasons``, ``count`` and ``filter_counts``), what a version
decides otherwise a parameter of it (the precision a stated figure is held to, whether a
filter's documents must be the ones lm-eval takes): ``evidence.py`` (@2) calls them,
and ``scores.py`` (@3) calls @2.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any, NamedTuple

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
    Record,
    Tally,
    Task,
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
    tally,
    task_hash,
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
METRIC = Param("metric", 'the metric\'s name (`acc` of `"acc,none"`)', (str,))
FILTER = Param("filter", 'the filter\'s name (`none` of `"acc,none"`)', (str,))


def text_param(params: Mapping[str, Any], name: str) -> str:
    value = params[name]
    if not value:
        raise CheckerInputError("params.invalid", f"{name} must not be empty")
    return str(value)


def tolerance_param(params: Mapping[str, Any]) -> float:
    tolerance = params["tolerance"]
    if not is_number(tolerance) or not 0 <= tolerance < MAX_TOLERANCE:
        raise CheckerInputError(
            "params.invalid",
            f"tolerance {tolerance!r} must be at least 0 and below {MAX_TOLERANCE}",
        )
    return float(tolerance)


def samples_of(inputs: Mapping[str, Any]) -> Any:
    if "samples" not in inputs:
        raise CheckerInputError(
            "input.invalid", "no samples file: the run was not made with --log_samples"
        )
    return inputs["samples"]


# -- lm-eval-metric@1 --------------------------------------------------------------------


def figure_params(params: Mapping[str, Any]) -> tuple[str, str, str, float]:
    """The task, metric, filter and claimed figure every lm-eval-metric version takes."""
    task, metric, filter_name = (text_param(params, n) for n in ("task", "metric", "filter"))
    claimed = params["claimed"]
    if not is_number(claimed):
        raise CheckerInputError("params.invalid", f"claimed {claimed!r} is not a finite number")
    return task, metric, filter_name, float(claimed)


def metric_params(params: Mapping[str, Any]) -> tuple[str, str, str, float, float]:
    return (*figure_params(params), tolerance_param(params))


# the reasons of ``figure_reasons``
FIGURE_REASONS = {
    "lmeval.figure_mismatch": "the figure the results file states is not the mean of the "
    "stored per-sample values",
    "lmeval.stderr_mismatch": "the stderr the results file states is not the one the stored "
    "values give",
}


class Rederived(NamedTuple):
    """A task's figure as the results state it and as its stored values give it."""

    figure: str  # "TASK METRIC,FILTER", as messages name it
    stated: float
    tally: Tally
    recomputed: float
    stderr: float | None  # None for one value
    stated_stderr: Any


def rederive(inputs: Mapping[str, Any], name: str, metric: str, filter_name: str) -> Rederived:
    """The figure "METRIC,FILTER" of task ``name`` re-derived as lm-eval 0.4.13 derives a
    `mean` aggregation from the samples file's records (``run.tally``); a figure not
    averaged, stated as no number, or with no value stored is ``input.invalid``."""
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
    counted = tally(read_records(samples_of(inputs)), metric, filter_name)
    items = counted.values
    if not items:
        raise CheckerInputError("input.invalid", f"{figure}: no stored record has a value")
    stderr = mean_stderr(items) if len(items) > 1 else None
    return Rederived(figure, stated, counted, mean(items), stderr, task.stderr(metric, filter_name))


def figure_reasons(derived: Rederived, within: float) -> list[Reason]:
    """The figure and the stderr the results state against the re-derived ones: a reason
    for each that is off by more than ``within`` (a stated "N/A" stderr is accepted)."""
    figure, stated, recomputed = derived.figure, derived.stated, derived.recomputed
    stderr, stated_stderr = derived.stderr, derived.stated_stderr
    reasons = []
    if abs(stated - recomputed) > within:
        reasons.append(
            Reason(
                "lmeval.figure_mismatch",
                f"{figure}: the results state {stated!r}, the {len(derived.tally.values)} "
                f"stored values give {recomputed!r}",
                {"figure": figure, "stated": stated, "recomputed": recomputed},
            )
        )
    if stated_stderr != "N/A" and (
        not is_number(stated_stderr) or stderr is None or abs(stated_stderr - stderr) > within
    ):
        reasons.append(
            Reason(
                "lmeval.stderr_mismatch",
                f"{figure}: the results state stderr {stated_stderr!r}, the stored values give "
                f"{stderr if stderr is not None else 'none (one value)'}",
                {"figure": figure, "stated": stated_stderr, "recomputed": stderr},
            )
        )
    return reasons


def results_with(task: str, figures: Mapping[str, Any], n: int, limit: Any = None) -> Any:
    return {
        "results": {task: dict(figures)},
        "n-samples": {task: {"original": n, "effective": n}},
        "configs": {task: {}},
        "config": {"limit": limit, "bootstrap_iters": 0},
    }


def numbered(records: list[dict[str, Any]]) -> list[tuple[int, Any]]:
    return [(i + 1, r) for i, r in enumerate(records)]


def one_value_away(
    task: str, metric: str, filter_name: str, claimed: float, listed: bool
) -> Mapping[str, Any]:
    """A header stating ``claimed`` over one record whose value is 0 or 1, at least 0.5
    away; with ``listed``, the record's ``metrics`` list names the metric."""
    value = 0.0 if claimed >= 0.5 else 1.0
    figures = {f"{metric},{filter_name}": claimed, f"{metric}_stderr,{filter_name}": "N/A"}
    named = {"metrics": [metric]} if listed else {}
    record = {"doc_id": 0, "filter": filter_name, **named, metric: value}
    return {"results": results_with(task, figures, 1), "samples": numbered([record])}


def _metric_counterexample(params: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """A header stating the claimed figure over one record whose value is 0 or 1, at
    least 0.5 away (more than any accepted tolerance)."""
    task, metric, filter_name, claimed, _ = metric_params(params)
    return one_value_away(task, metric, filter_name, claimed, listed=False)


@checker(
    "lm-eval-metric",
    1,
    roles=[RESULTS_ROLE, SAMPLES_ROLE],
    params=[
        TASK,
        METRIC,
        FILTER,
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
        **FIGURE_REASONS,
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
    derived = rederive(inputs, name, metric, filter_name)
    figure, stated, recomputed, items = (
        derived.figure,
        derived.stated,
        derived.recomputed,
        derived.tally.values,
    )
    details = {
        "figure": f"{metric},{filter_name}",
        "stated": stated,
        "recomputed": recomputed,
        "values": len(items),
        "sum": left_sum(items),
        "stated_stderr": derived.stated_stderr,
        "recomputed_stderr": derived.stderr,
        "claimed": claimed,
    }
    reasons = figure_reasons(derived, tolerance)
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
    counted = count(inputs, params, taken=False)
    name, task = counted.name, counted.task
    if counted.reasons:
        return Verdict.failed(f"{name}'s counts do not agree", counted.reasons, **counted.details)
    return Verdict.passed(
        f"{name}: {task.effective} of {task.original} documents evaluated (limit "
        f"{task.limit!r}), as stated"
        + (", each stored once per filter" if "samples" in inputs else ""),
        **counted.details,
    )


class Counted(NamedTuple):
    """A task's counts checked: the reasons found, and the details of the verdict."""

    name: str
    task: Task
    reasons: list[Reason]
    details: dict[str, Any]


def count(inputs: Mapping[str, Any], params: Mapping[str, Any], taken: bool) -> Counted:
    """The counts of lm-eval-counts: `n-samples` against the claim and the limit, and
    with the samples file each filter's records (``filter_counts``); ``taken`` (from
    @2): also that they are the documents lm-eval takes."""
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
        reasons += filter_counts(name, task.effective, records, details, taken)
    return Counted(name, task, reasons, details)


SHOWN = 5  # lines or doc_ids named in a message


def spans(doc_ids: list[int]) -> str:
    """Sorted doc_ids as runs: ``0-9, 12``."""
    parts: list[str] = []
    start = previous = None
    for doc_id in [*doc_ids, None]:
        if doc_id is not None and previous is not None and doc_id == previous + 1:
            previous = doc_id
            continue
        if start is not None:
            parts.append(str(start) if start == previous else f"{start}-{previous}")
        start = previous = doc_id
    shown = parts[:SHOWN]
    return ", ".join(shown) + (
        f" and {len(parts) - SHOWN} more run(s)" if len(parts) > SHOWN else ""
    )


def filter_counts(
    name: str, effective: int, records: list[Record], details: dict[str, Any], taken: bool
) -> list[Reason]:
    """Each filter's records: exactly ``effective`` of them, no document twice, and with
    ``taken`` the documents lm-eval takes (doc_id 0 to effective - 1); adds
    ``records_per_filter`` to ``details``."""
    per_filter: dict[str, Counter[int]] = {}
    for record in records:
        per_filter.setdefault(record.filter, Counter())[record.doc_id] += 1
    details["records_per_filter"] = {f: left_sum(c.values()) for f, c in per_filter.items()}
    reasons = []
    for filter_name, docs in per_filter.items():
        held = left_sum(docs.values())
        if held != effective:
            reasons.append(
                Reason(
                    "lmeval.count_mismatch",
                    f"{name} filter {filter_name!r}: {held} records stored, the results "
                    f"state effective {effective}",
                    {"count": "effective", "filter": filter_name, "stored": held},
                )
            )
        twice = sorted(d for d, n in docs.items() if n > 1)
        if twice:
            reasons.append(
                Reason(
                    "lmeval.duplicate_doc",
                    f"{name} filter {filter_name!r}: doc_id(s) {twice[:SHOWN]} stored more than "
                    "once",
                    {"filter": filter_name, "doc_ids": twice[:50]},
                )
            )
        if taken:
            reasons += _not_taken(name, effective, filter_name, docs)
    if not per_filter and effective:
        reasons.append(
            Reason(
                "lmeval.count_mismatch",
                f"{name}: no record stored, the results state effective {effective}",
                {"count": "effective", "stored": 0},
            )
        )
    return reasons


def _not_taken(name: str, effective: int, filter_name: str, docs: Counter[int]) -> list[Reason]:
    """A filter's documents against the first ``effective`` ones, which lm-eval takes."""
    taken = set(range(effective))
    foreign = sorted(set(docs) - taken)
    absent = sorted(taken - set(docs))
    if not foreign and not absent:
        return []
    held_text = spans(sorted(docs)) or "none"
    return [
        Reason(
            "lmeval.doc_set_mismatch",
            f"{name} filter {filter_name!r}: the records hold doc_id {held_text}; "
            f"lm-eval takes the first {effective} documents, doc_id "
            f"{spans(sorted(taken)) or 'none'} ({len(foreign)} stored that it does not "
            f"take, {len(absent)} it takes not stored)",
            {"filter": filter_name, "not_taken": foreign[:50], "not_stored": absent[:50]},
        )
    ]


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
