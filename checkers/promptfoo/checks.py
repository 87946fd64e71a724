"""promptfoo-stats@1/@2/@4 and promptfoo-assert@1/@2/@3: counts and assertions re-checked.

Version 1 trusts its params: ``promptfoo-stats@1`` compares the rows with the ``claimed``
param only (never the file's own ``stats``) and takes any tolerance; ``promptfoo-assert@1``
takes a ``min_rerun`` of 0 and reads JavaScript regexes with Python's ``re`` after a
blocklist. Version 2 compares the file's stats and prompt metrics with its rows, checks
every numeric param against a documented range, and re-runs a regex only inside a
subset both engines read alike.

``promptfoo-stats@1`` recounts the totals from the rows, the pass rate with errors in its
denominator as promptfoo prints it; ``promptfoo-assert@1`` re-runs the deterministic
assertions on the stored outputs. Nothing calls a model; model-graded and code assertions
(``llm-rubric``, ``javascript``, ...) are counted as not re-run, never judged.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping
from typing import Any

from ..api import (
    MAX_TOLERANCE,
    CheckerInputError,
    InputKind,
    Param,
    Reason,
    Role,
    Verdict,
    checker,
    first_failing,
)
from ..arithmetic import left_sum
from .assertions import RULES_VERSION, rerun, rerun_all, skip_reason
from .results import (
    COUNTS,
    ERROR,
    PROMPT_COUNTS,
    STAT_COUNTS,
    TOKEN_FIGURES,
    count_problem,
    counts,
    counts_v2,
    kind_of,
    prompt_counts,
    read_results,
    read_rows,
    repeated_results,
    tokens_v2,
)

RESULTS_ROLE = Role(
    "results",
    InputKind.BYTES,
    "promptfoo's results JSON, as `promptfoo eval -o FILE.json` wrote it",
)


def _stats_counterexample(params: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """Rows giving the first claimed total one more than claimed, or a pass rate of 0 or
    of 1, whichever is outside the tolerance (both ends are tried). Vacuous when no such rows
    contradict a claimed figure (with a ``tolerance`` below 0.05, none)."""
    key, value = next(iter(params["claimed"].items()), ("tests", 0))

    def rows(success: bool, reason: int, n: int) -> Mapping[str, Any]:
        row = {"success": success, "failureReason": reason, "response": {"output": "x"}}
        return {"results": json.dumps({"results": {"version": 3, "results": [row] * n}}).encode()}

    if key == "pass_rate":
        return first_failing(
            promptfoo_stats.function, params, (rows(False, 1, 1), rows(True, 0, 1))
        )
    kind = {"errors": (False, ERROR), "failures": (False, 1)}.get(key, (True, 0))
    return rows(*kind, int(value) + 1 if isinstance(value, int) else 1)


@checker(
    "promptfoo-stats",
    1,
    roles=[RESULTS_ROLE],
    params=[
        Param(
            "claimed",
            "the totals the file states: tests, successes, failures, errors -> integer, and "
            "pass_rate (successes / tests: errors count in the denominator)",
            (dict,),
            states=("promptfoo.count_mismatch",),
        ),
        Param(
            "tolerance",
            "largest accepted |claimed - recomputed| pass rate",
            (float, int),
            1e-9,
            at_least=0,
            below=MAX_TOLERANCE,
        ),
    ],
    reasons={"promptfoo.count_mismatch": "a total recomputed from the rows is not the claimed one"},
    counterexample=_stats_counterexample,
    example_params=[{"claimed": {"successes": 2, "failures": 1, "errors": 1}}],
)
def promptfoo_stats(inputs: Mapping[str, Any], params: Mapping[str, Any]) -> Verdict:
    """promptfoo's totals and pass rate equal what its rows show.

    A row counts as a success when `success` is true, an error when `failureReason` is 2
    (the provider or the harness failed), a failure otherwise. `pass_rate` is successes
    over every row, errors included, as promptfoo prints it; the details give the rate
    over the rows that ran too. A pass re-counts stored rows; it re-runs nothing.
    """
    claimed = params["claimed"]
    unknown = sorted(set(claimed) - {*COUNTS, "pass_rate"})
    if not claimed or unknown:
        raise CheckerInputError(
            "params.invalid", f"claimed must name some of {', '.join(COUNTS)}, pass_rate"
        )
    _, rows = read_rows(inputs["results"])
    observed: dict[str, Any] = counts(rows)
    ran = observed["tests"] - observed["errors"]
    observed["pass_rate"] = observed["successes"] / observed["tests"] if rows else 0.0
    details = {**observed, "pass_rate_without_errors": observed["successes"] / ran if ran else None}
    reasons = []
    for key, value in claimed.items():
        same = (
            abs(float(value) - observed[key]) <= float(params["tolerance"])
            if key == "pass_rate"
            else value == observed[key]
        )
        if not same:
            reasons.append(
                Reason(
                    "promptfoo.count_mismatch",
                    f"{key}: claimed {value}, the rows give {observed[key]}",
                    {"count": key, "claimed": value, "observed": observed[key]},
                )
            )
    if reasons:
        return Verdict.failed("the stated totals do not match the rows", reasons, **details)
    return Verdict.passed(
        f"{observed['successes']} of {observed['tests']} tests passed, {observed['errors']} "
        "errored, as claimed",
        **details,
    )


def _stored_passes(count: int) -> Mapping[str, Any]:
    """A results file of one row whose output "zzz" is stored as passing ``contains
    "qqq"`` ``count`` times: a pass a re-run contradicts."""
    component = {"pass": True, "assertion": {"type": "contains", "value": "qqq"}}
    row = {
        "success": True,
        "response": {"output": "zzz"},
        "gradingResult": {"componentResults": [component] * count},
    }
    return {"results": json.dumps({"results": {"version": 3, "results": [row]}}).encode()}


def _assert_counterexample(params: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """One row stored as passing ``contains "qqq"`` on the output "zzz". Never None."""
    return _stored_passes(1)


@checker(
    "promptfoo-assert",
    1,
    roles=[RESULTS_ROLE],
    params=[
        Param(
            "min_rerun",
            "fewest assertion results that must be re-run (fail closed: a file whose "
            "assertions are all model-graded is an error, not a pass)",
            (int,),
            1,
            at_least=1,
        )
    ],
    reasons={
        "promptfoo.assert_mismatch": "a stored assertion result is not what the assertion gives "
        "on the stored output"
    },
    counterexample=_assert_counterexample,
    example_params=[{}],
)
def promptfoo_assert(inputs: Mapping[str, Any], params: Mapping[str, Any]) -> Verdict:
    """Every stored result of a deterministic assertion follows from the stored output.

    Re-runs `equals` (text), `contains`, `icontains`, `contains-any/-all`,
    `icontains-any/-all` (lists of text), `starts-with`, `regex` (where JavaScript and
    Python read the pattern alike) and `is-json` (no schema), and their `not-` forms, on
    each row's stored text output, as promptfoo 0.121 decides them, and compares with
    the stored `pass`. Model-graded, code and other assertions are counted by type in
    `details.not_rerun`, never judged. A pass says the stored verdicts follow from the
    stored outputs; it does not call the model again.
    """
    _, rows = read_rows(inputs["results"])
    skipped: Counter[str] = Counter()
    checked = 0
    reasons = []
    for row in rows:
        for j, component in enumerate(row.components):
            if skip_reason(row, component) is not None:
                skipped[kind_of(component)] += 1
                continue
            checked += 1
            assertion = component["assertion"]
            again = rerun(assertion, str(row.output))
            if again != component["pass"]:
                reasons.append(
                    Reason(
                        "promptfoo.assert_mismatch",
                        f"{row.label} assertion {j} ({assertion['type']} "
                        f"{assertion.get('value')!r}): stored pass={component['pass']}, re-run "
                        f"gives {again} on output "
                        f"{str(row.output)[:80]!r}",
                        {"row": row.index, "assertion": j, "stored": component["pass"]},
                    )
                )
    details = {"rerun": checked, "not_rerun": dict(sorted(skipped.items()))}
    return _rerun_verdict(checked, params["min_rerun"], skipped, reasons, details)


def _rerun_verdict(
    checked: int,
    minimum: int,
    skipped: Mapping[str, int],
    reasons: list[Reason],
    details: dict[str, Any],
) -> Verdict:
    """Both versions' verdict on the re-run: too few re-run results is bad input (fail
    closed), a re-run that differs from a stored result fails, else it passes."""
    if checked < minimum:
        raise CheckerInputError(
            "input.invalid",
            f"only {checked} assertion result(s) could be re-run (min_rerun {minimum}); not "
            f"re-run: {dict(skipped)}",
        )
    if reasons:
        return Verdict.failed(
            f"{len(reasons)} of {checked} re-run assertion results differ from the stored ones",
            reasons[:50],
            **details,
        )
    return Verdict.passed(
        f"all {checked} re-run assertion results match the stored ones "
        f"({left_sum(skipped.values())} not re-run)",
        **details,
    )


# -- version 2 ------------------------------------------------------------------------------

MAX_TOLERANCE_V2 = 0.005  # half a percentage point: a rate written as a whole percent fits
MAX_MIN_RERUN = 100_000
_CLAIMABLE = (*COUNTS, "pass_rate")


def _snake(name: str) -> str:
    return "".join(f"_{c.lower()}" if c.isupper() else c for c in name)


def _claimed_v2(params: Mapping[str, Any]) -> dict[str, Any]:
    """The ``claimed`` and ``tolerance`` params, checked against their documented ranges."""
    tolerance = params["tolerance"]
    if not (isinstance(tolerance, (int, float)) and 0 <= tolerance <= MAX_TOLERANCE_V2):
        raise CheckerInputError(
            "params.invalid",
            f"tolerance must be from 0 to {MAX_TOLERANCE_V2} (a wider one admits a pass rate "
            f"and rates far from it), observed {tolerance!r}",
        )
    claimed = dict(params["claimed"])
    unknown = sorted(set(claimed) - set(_CLAIMABLE), key=str)
    if unknown:
        raise CheckerInputError(
            "params.invalid", f"claimed names {unknown}; it takes {', '.join(_CLAIMABLE)}"
        )
    for key, value in claimed.items():
        if key == "pass_rate":
            if (
                isinstance(value, bool)
                or not isinstance(value, (int, float))
                or not 0 <= value <= 1
            ):
                raise CheckerInputError(
                    "params.invalid", f"claimed pass_rate must be from 0 to 1, observed {value!r}"
                )
        elif count_problem(value):
            raise CheckerInputError("params.invalid", f"claimed {key} {count_problem(value)}")
    return claimed


def _stats_counterexample_v2(params: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """One passing row whose stats say it failed: the stats disagree with the rows."""
    _claimed_v2(params)
    row = {"success": True, "failureReason": 0, "response": {"output": "x"}}
    stats = {"successes": 0, "failures": 1, "errors": 0}
    document = {"results": {"version": 3, "results": [row], "stats": stats}}
    return {"results": json.dumps(document).encode()}


_STATS_REASONS = {
    **{
        f"promptfoo.stats.{figure}": f"promptfoo's stats.{figure} is not what the rows give"
        for figure in (*STAT_COUNTS, *TOKEN_FIGURES.values())
    },
    **{
        f"promptfoo.prompt.{_snake(key)}": f"a prompt's metrics.{key} is not what its rows give"
        for key in PROMPT_COUNTS
    },
    **{
        f"promptfoo.claimed.{key}": f"the claimed {key} is not what the rows and stats give"
        for key in _CLAIMABLE
    },
}


@checker(
    "promptfoo-stats",
    2,
    roles=[RESULTS_ROLE],
    params=[
        Param(
            "claimed",
            "optional totals claimed besides the file's: tests, successes, failures, errors "
            "-> integer >= 0, pass_rate -> 0..1 (successes / tests: errors count in the "
            "denominator); each must agree with the rows (and so with the stats)",
            (dict,),
            {},
        ),
        Param(
            "tolerance",
            f"largest accepted |claimed - recomputed| pass rate, from 0 to {MAX_TOLERANCE_V2}",
            (float, int),
            1e-9,
            at_least=0,
            at_most=MAX_TOLERANCE_V2,
        ),
    ],
    reasons=_STATS_REASONS,
    counterexample=_stats_counterexample_v2,
    example_params=[{}, {"claimed": {"tests": 4, "pass_rate": 0.5}, "tolerance": 0.005}],
)
def promptfoo_stats_v2(inputs: Mapping[str, Any], params: Mapping[str, Any]) -> Verdict:
    """promptfoo's own stats, each prompt's counts and any claimed totals follow from the rows.

    Reads `results.stats` (successes, failures, errors, and tokenUsage's prompt and
    completion tokens), each `results.prompts[i].metrics` (testPassCount, testFailCount,
    testErrorCount, assertPassCount, assertFailCount) and the rows; counts the rows as
    promptfoo 0.123.1 does (a success; else an error when `failureReason` is 2; else a
    failure; a prompt's assertion counts are its rows' stored component results, unless a
    comparison assertion makes them uncertain) and sums the rows' `tokenUsage` prompt and
    completion tokens (when every row has one), and fails with a code naming each figure
    that differs. A `claimed` total must equal the rows' (and the stats'). Cannot decide:
    token totals, cached and request counts (promptfoo's rules for cached responses differ
    between versions), tokens of a file whose rows carry none, scores, latency and cost,
    and whether the rows are the run's.
    """
    claimed = _claimed_v2(params)
    results = read_results(inputs["results"])
    missing = [k for k in STAT_COUNTS if k not in results.stats]
    if missing:
        raise CheckerInputError(
            "input.invalid",
            f"results.stats states no {', '.join(missing)}: nothing of promptfoo's own to "
            "compare with the rows",
        )
    observed: dict[str, Any] = {**counts_v2(results.rows), **tokens_v2(results.rows)}
    tests = observed["tests"]
    observed["pass_rate"] = observed["successes"] / tests if tests else 0.0
    reasons = []
    for figure in (*STAT_COUNTS, *TOKEN_FIGURES.values()):
        if (
            figure in results.stats
            and figure in observed
            and results.stats[figure] != observed[figure]
        ):
            reasons.append(
                _differs(
                    f"promptfoo.stats.{figure}",
                    f"stats.{figure}",
                    results.stats[figure],
                    observed[figure],
                )
            )
    reasons += _prompt_reasons(results.rows, results.prompt_metrics)
    for key, value in claimed.items():
        same = (
            abs(float(value) - observed[key]) <= float(params["tolerance"])
            if key == "pass_rate"
            else value == observed[key]
        )
        if not same:
            reasons.append(
                _differs(f"promptfoo.claimed.{key}", f"claimed {key}", value, observed[key])
            )
    ran = tests - observed["errors"]
    details = {**observed, "pass_rate_without_errors": observed["successes"] / ran if ran else None}
    if reasons:
        return Verdict.failed("the stated figures do not match the rows", reasons, **details)
    return Verdict.passed(
        f"{observed['successes']} of {tests} tests passed, {observed['failures']} failed and "
        f"{observed['errors']} errored: promptfoo's stats"
        + (" and the claimed totals" if claimed else "")
        + " follow from the rows",
        **details,
    )


def _stats_counterexample_v4(params: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """@2's counterexample, its row numbered as promptfoo numbers every row."""
    _claimed_v2(params)
    row = {"success": True, "failureReason": 0, "response": {"output": "x"}}
    row |= {"testIdx": 0, "promptIdx": 0}
    stats = {"successes": 0, "failures": 1, "errors": 0}
    document = {"results": {"version": 3, "results": [row], "stats": stats}}
    return {"results": json.dumps(document).encode()}


_STATS_REASONS_V4 = {
    **_STATS_REASONS,
    "promptfoo.result_repeated": "the rows hold one test's result for one prompt more than "
    "once (promptfoo writes each testIdx and promptIdx pair once)",
}


@checker(
    "promptfoo-stats",
    4,
    roles=[RESULTS_ROLE],
    params=list(promptfoo_stats_v2.params),  # @2's, as its scores-file twins take them
    reasons=_STATS_REASONS_V4,
    counterexample=_stats_counterexample_v4,
    example_params=[{}, {"claimed": {"tests": 4, "pass_rate": 0.5}, "tolerance": 0.005}],
)
def promptfoo_stats_v4(inputs: Mapping[str, Any], params: Mapping[str, Any]) -> Verdict:
    """promptfoo's stats, prompt counts and claimed totals follow from rows, each result once.

    As promptfoo-stats@2 (the same params, figures and reasons), and each row is one
    result: promptfoo's evaluator gives every test case, var combination and repeat its
    own `testIdx` and every prompt its `promptIdx`, and writes one result per pair (its
    `--resume` finds completed work by the pair). A pair written more than once fails
    (`promptfoo.result_repeated`, naming the pairs and rows), whatever the stats say:
    @2 counted the same passing row written six times, under stats edited to match, as
    six passing tests. A row without integer `testIdx` and `promptIdx` is `input.invalid`.
    Cannot decide, as @2: whether the rows are the run's.
    """
    verdict = promptfoo_stats_v2.function(inputs, params)
    extra, named = repeated_results(inputs["results"])
    if not extra:
        return verdict
    repeated = Reason(
        "promptfoo.result_repeated",
        f"{extra} row(s) repeat a result already written: {'; '.join(named)}; promptfoo "
        "writes each test's result for each prompt once",
    )
    details = {**verdict.details, "repeated_rows": extra}
    if verdict.status == "fail":
        return Verdict.failed(verdict.message, [repeated, *verdict.reasons], **details)
    return Verdict.failed("the rows hold a result more than once", [repeated], **details)


def _differs(code: str, figure: str, stated: Any, observed: Any) -> Reason:
    return Reason(
        code,
        f"{figure} is {stated}, the rows give {observed}",
        {"figure": figure, "stated": stated, "observed": observed},
    )


def _prompt_reasons(rows: Any, metrics: Any) -> list[Reason]:
    """Each prompt's test and assertion counts against its rows (only when every row
    names its prompt)."""
    if not metrics or any(r.prompt is None for r in rows):
        return []
    reasons = []
    for index, figures in enumerate(metrics):
        own = prompt_counts([r for r in rows if r.prompt == index])
        for key, value in figures.items():
            observed = own[PROMPT_COUNTS[key]]
            if observed is not None and value != observed:
                reasons.append(
                    _differs(
                        f"promptfoo.prompt.{_snake(key)}",
                        f"prompts[{index}].metrics.{key}",
                        value,
                        observed,
                    )
                )
    return reasons


def _min_rerun(params: Mapping[str, Any]) -> int:
    value = params["min_rerun"]
    if not 1 <= value <= MAX_MIN_RERUN:
        raise CheckerInputError(
            "params.invalid",
            f"min_rerun must be from 1 to {MAX_MIN_RERUN} (0 would let a file with nothing "
            f"re-run pass), observed {value}",
        )
    return int(value)


def _assert_counterexample_v2(params: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """``min_rerun`` stored passes of `contains "qqq"` on the output "zzz"."""
    return _stored_passes(_min_rerun(params))


@checker(
    "promptfoo-assert",
    2,
    roles=[RESULTS_ROLE],
    params=[
        Param(
            "min_rerun",
            f"fewest assertion results that must be re-run, from 1 to {MAX_MIN_RERUN} (fail "
            "closed: a file whose assertions are none re-run is an error, not a pass)",
            (int,),
            1,
            at_least=1,
            at_most=MAX_MIN_RERUN,
        )
    ],
    reasons={
        "promptfoo.assert_mismatch": "a stored assertion result is not what the assertion gives "
        "on the stored output"
    },
    counterexample=_assert_counterexample_v2,
    example_params=[{}, {"min_rerun": 3}],
)
def promptfoo_assert_v2(inputs: Mapping[str, Any], params: Mapping[str, Any]) -> Verdict:
    """Every stored result of a re-runnable deterministic assertion follows from the stored output.

    Re-runs, under promptfoo 0.123.1's rules (its `src/assertions/`), `equals` (text),
    `contains`, `icontains`, `contains-any/-all`, `icontains-any/-all` (lists of text),
    `starts-with`, `is-json` (no schema), `levenshtein` (UTF-16 units, threshold default
    5) and `regex` inside the subset of JavaScript RegExp that Python reads alike
    (`jsregex.py`), and their `not-` forms; a weight of 0 passes, as promptfoo makes it.
    Everything else is listed by type in `details.not_rerun` with why in
    `details.not_rerun_why` (model-graded, code, deterministic but not re-implemented
    such as `contains-json`, or a value outside the rules: templated, from a file, a
    regex outside the subset), never judged. Cannot decide: the model's outputs, and the
    types not re-run.
    """
    return _assert_v2(inputs, params, linear_only=False)


def _assert_v2(inputs: Mapping[str, Any], params: Mapping[str, Any], linear_only: bool) -> Verdict:
    """@2's check; ``linear_only`` (@3): a regex runs on RE2 only, else is not re-run."""
    minimum = _min_rerun(params)
    results = read_results(inputs["results"])
    done = rerun_all(results.rows, linear_only)
    checked, skipped = len(done.checked), done.skipped
    reasons = []
    for row, j, again in done.mismatches:
        assertion = row.components[j]["assertion"]
        reasons.append(
            Reason(
                "promptfoo.assert_mismatch",
                f"{row.label} assertion {j} ({assertion['type']} {assertion.get('value')!r}): "
                f"stored pass={not again}, re-run gives {again} on output "
                f"{str(row.output)[:80]!r}",
                {"row": row.index, "assertion": j, "stored": not again},
            )
        )
    details = {
        "rerun": checked,
        "not_rerun": dict(sorted(skipped.items())),
        "not_rerun_why": dict(sorted(done.why.items())),
        "rules": f"promptfoo {RULES_VERSION}",
        "file_written_by": results.promptfoo_version,
    }
    return _rerun_verdict(checked, minimum, skipped, reasons, details)


@checker(
    "promptfoo-assert",
    3,
    roles=[RESULTS_ROLE],
    params=list(promptfoo_assert_v2.params),
    reasons=promptfoo_assert_v2.reasons,
    counterexample=_assert_counterexample_v2,
    example_params=[{}],
)
def promptfoo_assert_v3(inputs: Mapping[str, Any], params: Mapping[str, Any]) -> Verdict:
    """Every stored result of a re-runnable deterministic assertion follows from the stored
    output, each regex run in time linear in the output.

    As `promptfoo-assert@2`, except that a `regex` runs on RE2 only: one with a lookahead
    (which RE2 has not), or an output with a character past U+FFFF (RE2 reads code points,
    JavaScript UTF-16 units), is not re-run and is listed in `details.not_rerun` with the
    pattern and why in `details.not_rerun_why` (where @2 ran it on Python's backtracking
    engine). Inside the subset the verdicts are @2's.
    """
    return _assert_v2(inputs, params, linear_only=True)
