"""The counting ``checkers/lm_eval`` folds into shared helpers gives every version of
lm-eval-metric and lm-eval-counts (@1, @2, @3) the verdict it gave before the fold: the
same status, message, reasons and details, on every input.

Below the tests is a frozen copy of the six functions (and what only they used) as they
were before the fold (commit c2648ab), never to be edited: each version is run twice, as
registered and with its function replaced by the frozen one (the same declaration, params
bound alike), and the two verdicts must be equal. The inputs: the real lm-eval 0.4.13 runs
under ``tests/data/lm_eval/`` on every figure and count they state, the forged sources of
advisories RB-2026-0040 and 0041, and runs Hypothesis forges in lm-eval's shapes (values
deleted, doc_ids moved or repeated, figures, stderr, limits and metrics lists altered,
values that are not numbers).
"""

from __future__ import annotations

import copy
import math
from collections import Counter
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

import checkers
from bundler.run.inputs import parse_input
from bundler.run.runner import run_checker
from checkers.api import MAX_TOLERANCE, CheckerInputError, Reason, Verdict
from checkers.arithmetic import left_sum
from checkers.lm_eval.checks import RESULTS_ROLE, SAMPLES_ROLE, numbered, results_with
from checkers.lm_eval.run import (
    Record,
    is_count,
    is_number,
    limited,
    mean,
    mean_stderr,
    read_records,
    read_task,
)
from checkers.lm_eval.scores import SENSITIVE, project
from tests.checkers.test_lm_eval_evidence import TASK, forged_run

DATA = Path(__file__).parents[1] / "data" / "lm_eval"
ADVISORIES = Path(__file__).parents[1] / "advisories" / "sources"


def _old_lm_eval_metric_v3(inputs: Mapping[str, Any], params: Mapping[str, Any]) -> Verdict:
    return _old_lm_eval_metric_v2(_old_as_samples(inputs), params)


def _old_lm_eval_counts_v3(inputs: Mapping[str, Any], params: Mapping[str, Any]) -> Verdict:
    return _old_lm_eval_counts_v2(_old_as_samples(inputs), params)


FROZEN = {
    "lm-eval-metric@1": lambda: _old_lm_eval_metric,
    "lm-eval-metric@2": lambda: _old_lm_eval_metric_v2,
    "lm-eval-metric@3": lambda: _old_lm_eval_metric_v3,
    "lm-eval-counts@1": lambda: _old_lm_eval_counts,
    "lm-eval-counts@2": lambda: _old_lm_eval_counts_v2,
    "lm-eval-counts@3": lambda: _old_lm_eval_counts_v3,
}


def _seen(verdict: Verdict) -> str:
    """All of a verdict, NaN equal to NaN."""
    reasons = [(r.code, r.message, r.details) for r in verdict.reasons]
    return repr((verdict.status, verdict.message, reasons, verdict.details))


def same(key: str, inputs: Mapping[str, Any], params: Mapping[str, Any]) -> Verdict:
    """The verdict of ``key`` on ``inputs``, asserted equal to the frozen one's."""
    found = checkers.get(key)
    assert found is not None
    now = run_checker(found, inputs, params)
    before = run_checker(found._replace(function=FROZEN[key]()), inputs, params)
    assert _seen(now) == _seen(before), (key, params)
    return now


def every_version(run: Mapping[str, Any], metric: str, filter_name: str, task: str) -> Counter[str]:
    """Each version of both checkers on ``run`` ({results, samples?}), with claims that
    hold, claims that do not, and the params each version takes; the statuses seen, and
    each version's reason codes ("KEY CODE")."""
    statuses: Counter[str] = Counter()

    def judged(key: str, inputs: Mapping[str, Any], params: Mapping[str, Any]) -> str:
        verdict = same(key, inputs, params)
        statuses.update(f"{key} {code}" for code in verdict.codes)
        return verdict.status

    results = run["results"]
    scores = {"results": results}
    if "samples" in run:
        scores["sample_scores"] = project(run["samples"])
    stated = results.get("results", {}).get(task, {}).get(f"{metric},{filter_name}")
    claims = [0.9, 0.0]
    if is_number(stated):
        claims += [stated, round(stated, 2), stated + 0.004, stated - 0.03]
    figure = {"task": task, "metric": metric, "filter": filter_name}
    for claimed in claims:
        for tolerance in (None, 0.0, 0.001, 0.049):
            extra = {} if tolerance is None else {"tolerance": tolerance}
            statuses[judged("lm-eval-metric@1", run, {**figure, "claimed": claimed, **extra})] += 1
            for decimals in (None, 2):
                more = {**extra, **({} if decimals is None else {"decimals": decimals})}
                params = {**figure, "claimed": claimed, **more}
                statuses[judged("lm-eval-metric@2", run, params)] += 1
                statuses[judged("lm-eval-metric@3", scores, params)] += 1
    n_samples = results.get("n-samples", {}).get(task, {"original": 1, "effective": 1})
    honest = dict(n_samples) if isinstance(n_samples, dict) else {"original": 1, "effective": 1}
    off = {k: v + 1 if is_count(v) else 1 for k, v in honest.items()}
    for counts in (honest, off):
        params = {"task": task, "claimed": counts}
        without = {"results": results}
        for version, inputs in ((1, run), (1, without), (2, run), (2, without)):
            statuses[judged(f"lm-eval-counts@{version}", inputs, params)] += 1
        statuses[judged("lm-eval-counts@3", scores, params)] += 1
        statuses[judged("lm-eval-counts@3", without, params)] += 1
    if "samples" in run:  # a whole samples file given as the scores: refused alike
        whole = {"results": results, "sample_scores": run["samples"]}
        statuses[judged("lm-eval-counts@3", whole, {"task": task, "claimed": honest})] += 1
    return statuses


def _real_runs() -> list[tuple[str, dict[str, Any], str]]:
    """(label, {results, samples?}, task) for each task of each real lm-eval run."""
    runs = []
    for results_file in sorted(DATA.glob("*/*/results_*.json")):
        data = results_file.read_bytes()
        results = parse_input(data, results_file.name, RESULTS_ROLE.kind, RESULTS_ROLE.reading)
        for task in sorted(results["results"]):
            run: dict[str, Any] = {"results": results}
            found = sorted(results_file.parent.glob(f"samples_{task}_*.jsonl"))
            if found:
                run["samples"] = parse_input(
                    found[0].read_bytes(), found[0].name, SAMPLES_ROLE.kind, SAMPLES_ROLE.reading
                )
            runs.append((f"{results_file.parent.parent.name}/{task}", run, task))
    return runs


REAL = _real_runs()


@pytest.mark.parametrize("label, run, task", REAL, ids=[label for label, _, _ in REAL])
def test_every_version_decides_a_real_lm_eval_run_as_before_the_fold(
    label: str, run: dict[str, Any], task: str
) -> None:
    statuses: Counter[str] = Counter()
    figures = [key for key in run["results"]["results"][task] if "," in key]
    for key in figures:
        metric, filter_name = key.split(",", 1)
        if metric.endswith("_stderr"):
            continue
        statuses += every_version(run, metric, filter_name, task)
    assert figures and statuses["pass"] and statuses["fail"], (label, statuses)


def test_real_runs_cover_samples_a_limit_and_no_samples() -> None:
    labels = {label.split("/")[0] for label, _, _ in REAL}
    assert {"full", "limit", "nosamples", "unicode"} <= labels


def _advisory_cases() -> list[tuple[str, str, dict[str, Any], dict[str, Any], str]]:
    cases = []
    for source in sorted(ADVISORIES.glob("RB-2026-004[01]")):
        bundle = yaml.safe_load((source / "bundle.yaml").read_text())
        for case in bundle["cases"]:
            inputs = {}
            for role, path in case["inputs"].items():
                declared = RESULTS_ROLE if role == "results" else SAMPLES_ROLE
                data = (source / path).read_bytes()
                inputs[role] = parse_input(data, path, declared.kind, declared.reading)
            label = f"{source.name}/{case['id']}"
            cases.append((label, case["checker"], inputs, case["params"], case["expect"]))
    return cases


ADVISORY_CASES = _advisory_cases()


@pytest.mark.parametrize(
    "label, key, inputs, params, expect", ADVISORY_CASES, ids=[c[0] for c in ADVISORY_CASES]
)
def test_every_version_decides_the_advisories_forgeries_as_before_the_fold(
    label: str, key: str, inputs: dict[str, Any], params: dict[str, Any], expect: str
) -> None:
    name = key.split("@")[0]
    assert same(key, inputs, params).status == expect
    scores = {"results": inputs["results"], "sample_scores": project(inputs["samples"])}
    later = {k: v for k, v in params.items() if k != "tolerance"}
    for version, held in ((1, inputs), (2, inputs), (3, scores)):
        same(f"{name}@{version}", held, params)
        same(f"{name}@{version}", held, later)
    if name == "lm-eval-metric":
        statuses = every_version(inputs, params["metric"], params["filter"], params["task"])
        assert statuses["fail"]


# -- forged runs ---------------------------------------------------------------------------

ODD_VALUES = [True, "0.5", None, math.nan, [1], 2, -1.5]


@st.composite
def forged_runs(draw: st.DrawFn) -> dict[str, Any]:
    """A run in lm-eval's shape (``forged_run``), then altered as a forger would."""
    n = draw(st.integers(2, 14))
    values: list[float | None] = [
        draw(st.sampled_from([0.0, 1.0, 1.0, 0.5, None])) for _ in range(n)
    ]
    if sum(v is not None for v in values) < 2:
        values[:2] = [1.0, 0.0]
    start = draw(st.sampled_from([0, 0, 0, 1, 990]))
    doc_ids = list(range(start, start + n))
    if draw(st.booleans()):
        doc_ids[draw(st.integers(0, n - 1))] = doc_ids[draw(st.integers(0, n - 1))]
    limit = draw(st.sampled_from([None, None, n, 0.5, float(n), 1000]))
    original = draw(st.sampled_from([None, n, n * 2, 1000]))
    stated = draw(st.sampled_from([None, None, 0.9, 0.0]))
    run = forged_run(values, doc_ids=doc_ids, stated=stated, original=original, limit=limit)
    results, samples = run["results"], run["samples"]
    figures = results["results"][TASK]
    if draw(st.booleans()):
        figures["acc_stderr,none"] = draw(st.sampled_from(["N/A", 0.1, None, "x"]))
    if draw(st.integers(0, 5)) == 0:
        results["configs"][TASK]["metric_list"][0]["aggregation"] = "median"
    if draw(st.integers(0, 5)) == 0:
        figures["acc,none"] = draw(st.sampled_from(ODD_VALUES))
    for _line, record in samples:
        what = draw(st.integers(0, 12))
        if what == 0:
            record.pop("metrics", None)
        elif what == 1:
            record["metrics"] = []
        elif what == 2 and "acc" in record:
            record["acc"] = draw(st.sampled_from(ODD_VALUES))
        elif what == 3:
            record["filter"] = "other"
    if draw(st.integers(0, 6)) == 0:
        samples = samples[: draw(st.integers(0, len(samples)))]
    if draw(st.integers(0, 8)) == 0:
        results["n-samples"][TASK]["effective"] = draw(st.sampled_from([0, 1, n + 1, True]))
    return {"results": results, "samples": samples}


@settings(max_examples=150, deadline=None)
@given(run=forged_runs())
def test_every_version_decides_a_forged_run_as_before_the_fold(run: dict[str, Any]) -> None:
    every_version(copy.deepcopy(run), "acc", "none", TASK)
    every_version(copy.deepcopy(run), "acc", "other", TASK)


def test_forged_runs_reach_every_reason_of_every_version() -> None:
    # the inputs compared are not all passes: each reason of each version is met
    seen: Counter[str] = Counter()
    runs: list[tuple[list[float | None], list[int] | None, int | None, int | None, Any]] = [
        ([1.0] * 86 + [0.0] * 14, None, None, None, 0.9),
        ([1.0] * 63 + [0.0] * 7 + [None] * 30, None, None, None, None),
        ([1.0] * 9 + [0.0], list(range(990, 1000)), 10, 1000, None),
        ([1.0, 0.0, 1.0], [0, 0, 1], None, 5, None),
    ]
    for values, ids, limit, original, stated in runs:
        run = forged_run(values, doc_ids=ids, stated=stated, original=original, limit=limit)
        seen += every_version(run, "acc", "none", TASK)
        run["results"]["results"][TASK]["acc_stderr,none"] = 0.5
        seen += every_version(run, "acc", "none", TASK)
    for key in FROZEN:
        found = checkers.get(key)
        assert found is not None
        for code in found.reasons:
            assert seen[f"{key} {code}"], (key, code)


@pytest.mark.parametrize("version", [1, 2, 3])
@pytest.mark.parametrize("claimed", [0.0, 0.25, 0.5, 0.9, 1.0, 7.0])
def test_the_metric_counterexamples_are_those_before_the_fold(version: int, claimed: float) -> None:
    found = checkers.get(f"lm-eval-metric@{version}")
    assert found is not None and found.counterexample is not None
    given = {"task": "t", "metric": "acc", "filter": "f", "claimed": claimed}
    params = found.bind(given).params
    before = {1: _old_metric_counterexample, 2: _old_metric_counterexample_v2}[min(version, 2)]
    expected = before(params)
    assert expected is not None
    if version == 3:
        expected = {"results": expected["results"], "sample_scores": project(expected["samples"])}
    made = found.counterexample(params)
    assert made is not None and repr(made) == repr(expected)
    assert run_checker(found, made, given).status == "fail"


# ---- frozen: the six functions before the fold (commit c2648ab); never edit below ----


def _old_metric_counterexample(params: Mapping[str, Any]) -> Mapping[str, Any] | None:
    task, metric, filter_name, claimed, _ = _old_metric_params(params)
    value = 0.0 if claimed >= 0.5 else 1.0
    figures = {f"{metric},{filter_name}": claimed, f"{metric}_stderr,{filter_name}": "N/A"}
    record = {"doc_id": 0, "filter": filter_name, metric: value}
    return {"results": results_with(task, figures, 1), "samples": numbered([record])}


def _old_metric_counterexample_v2(params: Mapping[str, Any]) -> Mapping[str, Any] | None:
    task, metric, filter_name, claimed, _, _ = _old_claim_params(params)
    value = 0.0 if claimed >= 0.5 else 1.0
    figures = {f"{metric},{filter_name}": claimed, f"{metric}_stderr,{filter_name}": "N/A"}
    record = {"doc_id": 0, "filter": filter_name, "metrics": [metric], metric: value}
    return {"results": results_with(task, figures, 1), "samples": numbered([record])}


def _invalid(message: str) -> CheckerInputError:
    return CheckerInputError("input.invalid", message)


def _old_values(records: Iterable[Record], metric: str, filter_name: str) -> list[float]:
    """The stored per-sample values of ``metric`` under ``filter_name``, in file order."""
    found = []
    for record in records:
        if record.filter != filter_name or metric not in record.raw:
            continue
        value = record.raw[metric]
        if not is_number(value):
            raise _invalid(
                f"{record.label}: {metric} {value!r} is not a finite number (a boolean is "
                "not one); the figure is not re-derived"
            )
        found.append(value)
    return found


def _old_text_param(params: Mapping[str, Any], name: str) -> str:
    value = params[name]
    if not value:
        raise CheckerInputError("params.invalid", f"{name} must not be empty")
    return str(value)


def _old_tolerance(params: Mapping[str, Any]) -> float:
    tolerance = params["tolerance"]
    if not is_number(tolerance) or not 0 <= tolerance < MAX_TOLERANCE:
        raise CheckerInputError(
            "params.invalid",
            f"tolerance {tolerance!r} must be at least 0 and below {MAX_TOLERANCE}",
        )
    return float(tolerance)


def _old_records(inputs: Mapping[str, Any]) -> list[Any]:
    return read_records(_old_samples_of(inputs))


def _old_samples_of(inputs: Mapping[str, Any]) -> Any:
    if "samples" not in inputs:
        raise CheckerInputError(
            "input.invalid", "no samples file: the run was not made with --log_samples"
        )
    return inputs["samples"]


# -- lm-eval-metric@1 --------------------------------------------------------------------


def _old_metric_params(params: Mapping[str, Any]) -> tuple[str, str, str, float, float]:
    task, metric, filter_name = (_old_text_param(params, n) for n in ("task", "metric", "filter"))
    claimed = params["claimed"]
    if not is_number(claimed):
        raise CheckerInputError("params.invalid", f"claimed {claimed!r} is not a finite number")
    return task, metric, filter_name, float(claimed), _old_tolerance(params)


def _old_lm_eval_metric(inputs: Mapping[str, Any], params: Mapping[str, Any]) -> Verdict:
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
    name, metric, filter_name, claimed, tolerance = _old_metric_params(params)
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
    items = _old_values(_old_records(inputs), metric, filter_name)
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


_OLD_COUNTS = ("original", "effective")


def _old_claimed_counts(params: Mapping[str, Any]) -> dict[str, int]:
    claimed = params["claimed"]
    if set(claimed) != set(_OLD_COUNTS) or not all(
        is_count(v) and v >= 0 for v in claimed.values()
    ):
        raise CheckerInputError(
            "params.invalid",
            "claimed must give original and effective, each a whole number of at least 0 "
            "(a boolean is not a count)",
        )
    return dict(claimed)


def _old_lm_eval_counts(inputs: Mapping[str, Any], params: Mapping[str, Any]) -> Verdict:
    """The task's sample counts agree with the claim, the limit and the stored records.

    `n-samples` (`original` documents, `effective` evaluated) must equal `claimed`;
    `effective` must be what lm-eval evaluates of `original` under the run's `limit`
    (the first ceil(original x L) documents for L below 1, else the first int(L); all
    of them with no limit, where a `--samples` selection, which the results do not
    record, shows as a mismatch); with the samples file, each filter must hold exactly
    `effective` records, no document twice. A pass re-counts stored data; it says
    nothing about the documents that were not evaluated.
    """
    name = _old_text_param(params, "task")
    claimed = _old_claimed_counts(params)
    task = read_task(inputs["results"], name)
    stated = {"original": task.original, "effective": task.effective}
    allowed = limited(task.original, task.limit)
    reasons = [
        Reason(
            "lmeval.count_mismatch",
            f"{name} n-samples {key}: claimed {claimed[key]}, the results state {stated[key]}",
            {"count": key, "claimed": claimed[key], "stated": stated[key]},
        )
        for key in _OLD_COUNTS
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


_OLD_FLOAT_NOISE = 1e-9
_OLD_MAX_DECIMALS = 12
_OLD_SHOWN = 5  # lines or doc_ids named in a message


def _old_claim_params(params: Mapping[str, Any]) -> tuple[str, str, str, float, int | None, float]:
    task, metric, filter_name = (_old_text_param(params, n) for n in ("task", "metric", "filter"))
    claimed, decimals, tolerance = params["claimed"], params["decimals"], params["tolerance"]
    if not is_number(claimed):
        raise CheckerInputError("params.invalid", f"claimed {claimed!r} is not a finite number")
    if decimals is not None and (not is_count(decimals) or not 0 <= decimals <= _OLD_MAX_DECIMALS):
        raise CheckerInputError(
            "params.invalid",
            f"decimals {decimals!r} must be a whole number, 0 to {_OLD_MAX_DECIMALS}",
        )
    if decimals is not None and abs(round(claimed, decimals) - claimed) > _OLD_FLOAT_NOISE:
        raise CheckerInputError(
            "params.invalid",
            f"claimed {claimed!r} has more than the {decimals} decimals it is said to be "
            "stated with",
        )
    if not is_number(tolerance) or not 0 <= tolerance < MAX_TOLERANCE:
        raise CheckerInputError(
            "params.invalid", f"tolerance {tolerance!r} must be at least 0 and below 0.05"
        )
    return task, metric, filter_name, float(claimed), decimals, float(tolerance)


def _old_half_unit(decimals: int | None) -> float:
    """How far a figure stated with ``decimals`` decimals may be from what it rounds."""
    return 0.0 if decimals is None else 0.5 * 10.0**-decimals


def _old_counted(records: list[Record], metric: str, filter_name: str) -> tuple[list[float], Any]:
    """The values lm-eval averages, the records the task's rule leaves out (their
    ``metrics`` list omits the metric) and those without a value lm-eval would have
    stored (their list names it, or they carry none)."""
    found: list[float] = []
    omitted: list[int] = []
    missing: list[Record] = []
    for record in records:
        if record.filter != filter_name:
            continue
        if metric in record.raw:
            value = record.raw[metric]
            if not is_number(value):
                raise CheckerInputError(
                    "input.invalid",
                    f"{record.label}: {metric} {value!r} is not a finite number (a boolean is "
                    "not one); the figure is not re-derived",
                )
            found.append(value)
            continue
        named = record.raw.get("metrics")
        listed = isinstance(named, list) and all(isinstance(n, str) for n in named)
        if listed and metric not in (named or ()):
            omitted.append(record.line)
            continue
        missing.append(record)
    return found, (omitted, missing)


def _old_lm_eval_metric_v2(inputs: Mapping[str, Any], params: Mapping[str, Any]) -> Verdict:
    """A headline figure ("METRIC,FILTER") and its claim follow from every stored record.

    Recomputes the figure as lm-eval 0.4.13 does for a `mean` aggregation (the sum in file
    order over the count, and the sample standard deviation over the square root of the
    count) from the records of the filter. A record without the metric's value is left out
    of the denominator only where lm-eval leaves it out: its `metrics` list (the keys the
    task's `process_results` gave) omits the metric; any other record without the value
    fails (`lmeval.value_missing`), never dropped silently. The figure and stderr the
    results state must equal the re-derived ones at float precision (lm-eval writes the
    full value; a stated "N/A" stderr is accepted). `claimed` must be the re-derived figure
    rounded to `decimals` (unset: equal at float precision), or within `tolerance`, an
    interval the claim shows, which may be no wider than the re-derived stderr. The
    message and details always give the claimed figure beside the re-derived one. A
    metric whose aggregation is not `mean`, a value that is not a finite number, and no
    value at all are `input.invalid`. A pass says the arithmetic holds on the stored
    values; it does not re-score a sample nor re-run the model.
    """
    name, metric, filter_name, claimed, decimals, tolerance = _old_claim_params(params)
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
    items, (omitted, missing) = _old_counted(
        read_records(_old_samples_of(inputs)), metric, filter_name
    )
    if not items:
        raise CheckerInputError("input.invalid", f"{figure}: no stored record has a value")
    recomputed = mean(items)
    stderr = mean_stderr(items) if len(items) > 1 else None
    stated_stderr = task.stderr(metric, filter_name)
    records = len(items) + len(omitted) + len(missing)
    # an interval wider than the stderr is a reason, and is not used: at most the stderr
    allowed = max(_old_half_unit(decimals), min(tolerance, stderr or 0.0))
    precision = "at full precision" if decimals is None else f"at {decimals} decimals"
    interval = f" ± {tolerance:g}" if tolerance else ""
    beside = (
        f"claimed {claimed!r}{interval} ({precision}), re-derived {recomputed!r} from "
        f"{len(items)} of the filter's {records} records, the results state {stated!r}"
    )
    details = {
        "figure": f"{metric},{filter_name}",
        "claimed": claimed,
        "recomputed": recomputed,
        "stated": stated,
        "decimals": decimals,
        "tolerance": tolerance,
        "values": len(items),
        "records": records,
        "omitted_by_task": len(omitted),
        "missing": len(missing),
        "sum": left_sum(items),
        "stated_stderr": stated_stderr,
        "recomputed_stderr": stderr,
    }
    reasons = []
    if missing:
        lines = ", ".join(str(r.line) for r in missing[:_OLD_SHOWN])
        reasons.append(
            Reason(
                "lmeval.value_missing",
                f"{figure}: {len(missing)} of the filter's {records} records hold no {metric} "
                f"though their metrics list names it or is absent (line(s) {lines}); lm-eval "
                "stores every value process_results gives, so a value was removed",
                {"figure": figure, "missing": len(missing), "lines": [r.line for r in missing]},
            )
        )
    if abs(stated - recomputed) > _OLD_FLOAT_NOISE:
        reasons.append(
            Reason(
                "lmeval.figure_mismatch",
                f"{figure}: the results state {stated!r}, the {len(items)} stored values give "
                f"{recomputed!r}",
                {"figure": figure, "stated": stated, "recomputed": recomputed},
            )
        )
    if stated_stderr != "N/A" and (
        not is_number(stated_stderr)
        or stderr is None
        or abs(stated_stderr - stderr) > _OLD_FLOAT_NOISE
    ):
        reasons.append(
            Reason(
                "lmeval.stderr_mismatch",
                f"{figure}: the results state stderr {stated_stderr!r}, the stored values give "
                f"{stderr if stderr is not None else 'none (one value)'}",
                {"figure": figure, "stated": stated_stderr, "recomputed": stderr},
            )
        )
    if tolerance and (stderr is None or tolerance > stderr + _OLD_FLOAT_NOISE):
        reasons.append(
            Reason(
                "lmeval.tolerance_too_wide",
                f"{figure}: tolerance {tolerance!r} is wider than the re-derived stderr "
                f"{stderr if stderr is not None else 'none (one value)'}; a claim may round "
                "the figure to its stated decimals, or show an interval within its stderr",
                {"figure": figure, "tolerance": tolerance, "stderr": stderr},
            )
        )
    if abs(claimed - recomputed) > allowed + _OLD_FLOAT_NOISE:
        reasons.append(
            Reason(
                "lmeval.claim_mismatch",
                f"{figure}: {beside}",
                {"figure": figure, "claimed": claimed, "recomputed": recomputed},
            )
        )
    if reasons:
        return Verdict.failed(
            f"{figure} does not follow from the samples: {beside}", reasons, **details
        )
    left_out = (
        f"; {len(omitted)} record(s) left out as the task's process_results gave no {metric}"
        if omitted
        else ""
    )
    return Verdict.passed(f"{figure}: {beside}{left_out}", **details)


def _old_spans(doc_ids: list[int]) -> str:
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
    shown = parts[:_OLD_SHOWN]
    return ", ".join(shown) + (
        f" and {len(parts) - _OLD_SHOWN} more run(s)" if len(parts) > _OLD_SHOWN else ""
    )


def _old_lm_eval_counts_v2(inputs: Mapping[str, Any], params: Mapping[str, Any]) -> Verdict:
    """The task's sample counts and documents agree with the claim, the limit and the records.

    `n-samples` (`original` documents, `effective` evaluated) must equal `claimed`;
    `effective` must be what lm-eval evaluates of `original` under the run's `limit`
    (the first ceil(original x L) documents for L below 1, else the first int(L); all
    of them with no limit, where a `--samples` selection, which the results do not
    record, shows as a mismatch). With the samples file, each filter must hold exactly
    `effective` records, no document twice, and its doc_ids must be the documents lm-eval
    takes: it enumerates the task's documents from 0 and evaluates the first `effective`
    (`Task.doc_iterator`, `utils.create_iterator`), so doc_id 0 to effective - 1 (a
    `--limit 10` run holds documents 0-9, never 990-999). A pass re-counts stored data;
    it says nothing about the documents that were not evaluated, and without the samples
    file nothing about which documents were.
    """
    name = _old_text_param(params, "task")
    claimed = _old_claimed_counts(params)
    task = read_task(inputs["results"], name)
    stated = {"original": task.original, "effective": task.effective}
    allowed = limited(task.original, task.limit)
    reasons = [
        Reason(
            "lmeval.count_mismatch",
            f"{name} n-samples {key}: claimed {claimed[key]}, the results state {stated[key]}",
            {"count": key, "claimed": claimed[key], "stated": stated[key]},
        )
        for key in _OLD_COUNTS
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
        reasons += _old_documents(name, task.effective, read_records(inputs["samples"]), details)
    if reasons:
        return Verdict.failed(f"{name}'s counts do not agree", reasons, **details)
    which = (
        f", each stored once per filter: doc_id {_old_spans(list(range(task.effective)))}"
        if "samples" in inputs and task.effective
        else ("" if "samples" in inputs else "; which documents is not checked (no samples file)")
    )
    return Verdict.passed(
        f"{name}: {task.effective} of {task.original} documents evaluated (limit "
        f"{task.limit!r}), as stated{which}",
        **details,
    )


def _old_documents(
    name: str, effective: int, records: list[Record], details: dict[str, Any]
) -> list[Reason]:
    """Each filter's records against the documents lm-eval takes."""
    per_filter: dict[str, Counter[int]] = {}
    for record in records:
        per_filter.setdefault(record.filter, Counter())[record.doc_id] += 1
    details["records_per_filter"] = {f: left_sum(c.values()) for f, c in per_filter.items()}
    reasons = []
    taken = set(range(effective))
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
                    f"{name} filter {filter_name!r}: doc_id(s) {twice[:_OLD_SHOWN]} stored "
                    "more than once",
                    {"filter": filter_name, "doc_ids": twice[:50]},
                )
            )
        foreign = sorted(set(docs) - taken)
        absent = sorted(taken - set(docs))
        if foreign or absent:
            held_text = _old_spans(sorted(docs)) or "none"
            reasons.append(
                Reason(
                    "lmeval.doc_set_mismatch",
                    f"{name} filter {filter_name!r}: the records hold doc_id {held_text}; "
                    f"lm-eval takes the first {effective} documents, doc_id "
                    f"{_old_spans(sorted(taken)) or 'none'} ({len(foreign)} stored that it "
                    f"does not take, {len(absent)} it takes not stored)",
                    {
                        "filter": filter_name,
                        "not_taken": foreign[:50],
                        "not_stored": absent[:50],
                    },
                )
            )
    if not per_filter and effective:
        reasons.append(
            Reason(
                "lmeval.count_mismatch",
                f"{name}: no record stored, the results state effective {effective}",
                {"count": "effective", "stored": 0},
            )
        )
    return reasons


def _old_as_samples(inputs: Mapping[str, Any]) -> dict[str, Any]:
    """The ``@2`` inputs: the sample scores as its ``samples``; a record holding a
    document, prompt, response or target is ``input.invalid``."""
    out = {"results": inputs["results"]}
    if "sample_scores" not in inputs:
        return out
    scores = inputs["sample_scores"]
    if isinstance(scores, list):
        for line, value in scores:
            if isinstance(value, dict) and any(k in value for k in SENSITIVE):
                raise CheckerInputError(
                    "input.invalid",
                    f"line {line} holds {', '.join(k for k in SENSITIVE if k in value)}: a "
                    "sample scores file holds none (give the file `import lm-eval --split` "
                    "wrote; a whole samples file is read by the @2 checkers)",
                )
    return {**out, "samples": scores}
