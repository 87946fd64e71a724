"""promptfoo-stats@1 and promptfoo-assert@1: counts and assertions re-checked.

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
    CheckerInputError,
    InputKind,
    Param,
    Reason,
    Role,
    Verdict,
    checker,
    first_failing,
)
from .results import COUNTS, ERROR, counts, kind_of, read_rows, rerun, skip_reason

# A wider tolerance on a pass rate would admit a claim and its opposite (1.0 +- 0.99).
MAX_TOLERANCE = 0.05

RESULTS_ROLE = Role(
    "results",
    InputKind.BYTES,
    "promptfoo's results JSON, as `promptfoo eval -o FILE.json` wrote it",
)


def _stats_counterexample(params: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """Rows giving the first claimed total one more than claimed, or a pass rate of 0 or
    of 1, whichever is outside the tolerance (both ends are tried)."""
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


def _assert_counterexample(params: Mapping[str, Any]) -> Mapping[str, Any] | None:
    row = {
        "success": True,
        "response": {"output": "zzz"},
        "gradingResult": {
            "componentResults": [{"pass": True, "assertion": {"type": "contains", "value": "qqq"}}]
        },
    }
    return {"results": json.dumps({"results": {"version": 3, "results": [row]}}).encode()}


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
    if checked < params["min_rerun"]:
        raise CheckerInputError(
            "input.invalid",
            f"only {checked} assertion result(s) could be re-run (min_rerun "
            f"{params['min_rerun']}); not re-run: {dict(skipped)}",
        )
    if reasons:
        return Verdict.failed(
            f"{len(reasons)} of {checked} re-run assertion results differ from the stored ones",
            reasons[:50],
            **details,
        )
    return Verdict.passed(
        f"all {checked} re-run assertion results match the stored ones "
        f"({sum(skipped.values())} not re-run)",
        **details,
    )
