"""lm-eval-metric@2 and lm-eval-counts@2: the @1 checks, deciding from all the evidence
(issue 41, item 7).

What @1 let an author make supported against the records (advisories RB-2026-0040 for
the metric, RB-2026-0041 for the counts):

- a ``tolerance`` below 0.05 applied to the header's figure as well as to the claim, so
  "acc 0.90" held where the stored values give 0.86;
- a record of the filter without the metric's value left out of the denominator, so
  deleting the value of 30 wrong answers of 100 turned 63 right answers into "0.90";
- the stored records counted, never their documents, so a ``--limit 10`` run whose
  records are documents 990-999 held, where lm-eval takes documents 0-9.

@2 compares the header's figure with the re-derived one at float precision (lm-eval
writes the full value), takes the claimed figure as rounded to the decimals it is stated
with (or within an interval no wider than the re-derived stderr), counts a record without
the value as lm-eval's own rule does (left out only where the record's ``metrics`` list
says the task's ``process_results`` gave no such value; otherwise a reason), and checks
each filter's documents against the ones lm-eval takes: ``Task.doc_iterator`` enumerates
the task's documents from 0 and ``utils.create_iterator`` slices the first ``limit``
(``islice(docs, rank, limit, world_size)``, the ranks' shares gathered), so the doc_ids of
a run are exactly 0 to effective - 1.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..api import MAX_TOLERANCE, CheckerInputError, Param, Reason, Verdict, checker
from ..arithmetic import left_sum
from ..precision import FLOAT_NOISE, MAX_DECIMALS, half_unit, precision_text
from .checks import (
    FIGURE_REASONS,
    FILTER,
    METRIC,
    RESULTS_ROLE,
    SAMPLES_ROLE,
    SHOWN,
    TASK,
    count,
    figure_params,
    figure_reasons,
    lm_eval_counts,
    one_value_away,
    rederive,
    samples_of,
    spans,
    tolerance_param,
)
from .run import is_count, read_records

# lm-eval writes a figure at full precision (``json.dumps`` of the float): the stated and
# the re-derived figure differ by the summation's rounding at most (FLOAT_NOISE); a claim
# is taken at its stated decimals by the rule classification-metrics@3 and trial-stats@4
# share (checkers/precision.py)


def _claim_params(params: Mapping[str, Any]) -> tuple[str, str, str, float, int | None, float]:
    task, metric, filter_name, claimed = figure_params(params)
    decimals = params["decimals"]
    if decimals is not None and (not is_count(decimals) or not 0 <= decimals <= MAX_DECIMALS):
        raise CheckerInputError(
            "params.invalid", f"decimals {decimals!r} must be a whole number, 0 to {MAX_DECIMALS}"
        )
    if decimals is not None and abs(round(claimed, decimals) - claimed) > FLOAT_NOISE:
        raise CheckerInputError(
            "params.invalid",
            f"claimed {claimed!r} has more than the {decimals} decimals it is said to be "
            "stated with",
        )
    return task, metric, filter_name, claimed, decimals, tolerance_param(params)


def _metric_counterexample(params: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """A header stating the claimed figure over one record whose value is 0 or 1, at
    least 0.5 away: the header's figure is compared at float precision whatever the
    claim's decimals or interval."""
    task, metric, filter_name, claimed, _, _ = _claim_params(params)
    return one_value_away(task, metric, filter_name, claimed, listed=True)


@checker(
    "lm-eval-metric",
    2,
    roles=[RESULTS_ROLE, SAMPLES_ROLE],
    params=[
        TASK,
        METRIC,
        FILTER,
        Param("claimed", "the figure the claim states (a finite number)", (float, int)),
        Param(
            "decimals",
            "the decimals the claim states the figure with (`0.90`: 2); unset, the figure as "
            "the results state it, at full precision",
            (int,),
            default=None,
            at_least=0,
            at_most=MAX_DECIMALS,
        ),
        Param(
            "tolerance",
            "an interval the claim shows (`0.86 ± 0.035`): largest accepted |claimed - "
            "re-derived|, no wider than the re-derived stderr",
            (float, int),
            0,
            at_least=0,
            below=MAX_TOLERANCE,
        ),
    ],
    reasons={
        **FIGURE_REASONS,
        "lmeval.claim_mismatch": "the claimed figure, at the decimals it is stated with, is not "
        "the re-derived one",
        "lmeval.value_missing": "a record of the filter has no value of the metric where "
        "lm-eval stores one",
        "lmeval.tolerance_too_wide": "the tolerance is wider than the re-derived stderr",
    },
    counterexample=_metric_counterexample,
    example_params=[{"task": "t", "metric": "acc", "filter": "none", "claimed": 0.25}],
)
def lm_eval_metric_v2(inputs: Mapping[str, Any], params: Mapping[str, Any]) -> Verdict:
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
    name, metric, filter_name, claimed, decimals, tolerance = _claim_params(params)
    derived = rederive(inputs, name, metric, filter_name)
    figure, stated, recomputed, stderr = (
        derived.figure,
        derived.stated,
        derived.recomputed,
        derived.stderr,
    )
    items, omitted, missing = derived.tally
    records = len(items) + len(omitted) + len(missing)
    # an interval wider than the stderr is a reason, and is not used: at most the stderr
    allowed = max(half_unit(decimals), min(tolerance, stderr or 0.0))
    precision = precision_text(decimals)
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
        "stated_stderr": derived.stated_stderr,
        "recomputed_stderr": stderr,
    }
    reasons = []
    if missing:
        lines = ", ".join(str(r.line) for r in missing[:SHOWN])
        reasons.append(
            Reason(
                "lmeval.value_missing",
                f"{figure}: {len(missing)} of the filter's {records} records hold no {metric} "
                f"though their metrics list names it or is absent (line(s) {lines}); lm-eval "
                "stores every value process_results gives, so a value was removed",
                {"figure": figure, "missing": len(missing), "lines": [r.line for r in missing]},
            )
        )
    reasons += figure_reasons(derived, FLOAT_NOISE)
    if tolerance and (stderr is None or tolerance > stderr + FLOAT_NOISE):
        reasons.append(
            Reason(
                "lmeval.tolerance_too_wide",
                f"{figure}: tolerance {tolerance!r} is wider than the re-derived stderr "
                f"{stderr if stderr is not None else 'none (one value)'}; a claim may round "
                "the figure to its stated decimals, or show an interval within its stderr",
                {"figure": figure, "tolerance": tolerance, "stderr": stderr},
            )
        )
    if abs(claimed - recomputed) > allowed + FLOAT_NOISE:
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


# -- lm-eval-counts@2 --------------------------------------------------------------------


assert lm_eval_counts.counterexample is not None  # (declared: @checker requires one)


@checker(
    "lm-eval-counts",
    2,
    roles=[RESULTS_ROLE, SAMPLES_ROLE._replace(optional=True)],
    params=list(lm_eval_counts.params),  # @1's, as are its reasons and counterexample
    reasons={
        **lm_eval_counts.reasons,
        "lmeval.doc_set_mismatch": "a filter's documents are not the ones lm-eval takes (the "
        "first `effective` of the task: doc_id 0 to effective - 1)",
    },
    counterexample=lm_eval_counts.counterexample,
    example_params=[{"task": "t", "claimed": {"original": 7, "effective": 3}}],
)
def lm_eval_counts_v2(inputs: Mapping[str, Any], params: Mapping[str, Any]) -> Verdict:
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
    counted = count(inputs, params, taken=True)
    name, task = counted.name, counted.task
    if counted.reasons:
        return Verdict.failed(f"{name}'s counts do not agree", counted.reasons, **counted.details)
    which = (
        f", each stored once per filter: doc_id {spans(list(range(task.effective)))}"
        if "samples" in inputs and task.effective
        else ("" if "samples" in inputs else "; which documents is not checked (no samples file)")
    )
    return Verdict.passed(
        f"{name}: {task.effective} of {task.original} documents evaluated (limit "
        f"{task.limit!r}), as stated{which}",
        **counted.details,
    )


# -- lm-eval-metric@4: each document once ----------------------------------------------------


def repeated_docs(inputs: Mapping[str, Any], filter_name: str) -> tuple[int, list[str]]:
    """How many records of ``filter_name`` repeat a document already stored under it, and
    the first documents that do, each with its lines. lm-eval evaluates each document of
    a task once and writes one record per document and filter (``Task.doc_iterator``
    yields each doc_id once): a record written twice is not a second document."""
    lines: dict[Any, list[int]] = {}
    for record in read_records(samples_of(inputs)):
        if record.filter == filter_name:
            lines.setdefault(record.doc_id, []).append(record.line)
    twice = [(doc, at) for doc, at in lines.items() if len(at) > 1]
    extra = left_sum(len(at) - 1 for _, at in twice)
    named = [
        f"doc_id {doc!r} (lines {', '.join(str(n) for n in at[:SHOWN])}"
        + (", ...)" if len(at) > SHOWN else ")")
        for doc, at in twice[:SHOWN]
    ]
    return extra, named


def _metric_counterexample_v4(params: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """@2's counterexample (a header at least 0.5 away from its one record)."""
    return _metric_counterexample(params)


@checker(
    "lm-eval-metric",
    4,
    roles=[RESULTS_ROLE, SAMPLES_ROLE],
    params=list(lm_eval_metric_v2.params),
    reasons={
        **lm_eval_metric_v2.reasons,
        "lmeval.duplicate_doc": "a document is stored twice under the figure's filter "
        "(lm-eval writes one record per document and filter)",
    },
    counterexample=_metric_counterexample_v4,
    example_params=[{"task": "t", "metric": "acc", "filter": "none", "claimed": 0.25}],
)
def lm_eval_metric_v4(inputs: Mapping[str, Any], params: Mapping[str, Any]) -> Verdict:
    """A headline figure and its claim follow from every stored record, each document once.

    As lm-eval-metric@2 (the same params, figures and reasons), and each document of the
    figure's filter is stored once: lm-eval evaluates each document of a task once and
    writes one record per document and filter. A doc_id stored more than once under the
    filter fails (`lmeval.duplicate_doc`, naming the documents and lines) whatever the
    header says: @2 averaged a passing record written twice, in place of a failing one,
    under a header edited to match (acc 0.5 for a run whose documents give 0.25).
    """
    verdict = lm_eval_metric_v2.function(inputs, params)
    extra, named = repeated_docs(inputs, params["filter"])
    if not extra:
        return verdict
    repeated = Reason(
        "lmeval.duplicate_doc",
        f"{extra} record(s) repeat a document already stored under filter "
        f"{params['filter']!r}: {'; '.join(named)}",
        {"filter": params["filter"], "repeated_records": extra},
    )
    details = {**verdict.details, "repeated_records": extra}
    if verdict.status == "fail":
        return Verdict.failed(verdict.message, [repeated, *verdict.reasons], **details)
    return Verdict.failed("a document is stored more than once", [repeated], **details)
