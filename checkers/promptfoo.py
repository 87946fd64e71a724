"""promptfoo results (``promptfoo eval -o results.json``): counts and assertions re-checked.

The file holds, per test row, the stored output (``response.output``), whether it passed
(``success``), why not (``failureReason``: 1 an assertion failed, 2 an error such as a
provider failure) and each assertion's result (``gradingResult.componentResults``), and
the run's totals (``results.stats``). ``promptfoo-stats@1`` recounts the totals from the
rows, the pass rate with errors in its denominator as promptfoo prints it;
``promptfoo-assert@1`` re-runs the deterministic assertions on the stored outputs. Only
results ``version`` 3 is read. Nothing calls a model; model-graded and code assertions
(``llm-rubric``, ``javascript``, ...) are counted as not re-run, never judged.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .api import CheckerInputError, InputKind, Param, Reason, Role, Verdict, checker

KNOWN_VERSIONS = (3,)
ERROR = 2  # promptfoo's ResultFailureReason.ERROR
ASSERTION_TYPES = (
    "equals",
    "contains",
    "icontains",
    "contains-any",
    "icontains-any",
    "contains-all",
    "icontains-all",
    "starts-with",
    "regex",
    "is-json",
)
# regex syntax whose meaning differs between JavaScript and Python (or that Python lacks)
_JS_ONLY = re.compile(r"\$|\(\?<|\(\?P|\\[uUpPkxcZAz0-9]")
RESULTS_ROLE = Role(
    "results",
    InputKind.BYTES,
    "promptfoo's results JSON, as `promptfoo eval -o FILE.json` wrote it",
)


@dataclass(frozen=True)
class Row:
    index: int
    output: Any
    success: bool
    errored: bool
    components: tuple[Mapping[str, Any], ...]

    @property
    def label(self) -> str:
        return f"results[{self.index}]"


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise CheckerInputError("input.invalid", f"key {key!r} appears twice in one object")
        out[key] = value
    return out


def read_rows(data: bytes) -> tuple[Mapping[str, Any], list[Row]]:
    """The ``results`` object and its rows. Raises ``CheckerInputError`` naming the problem."""
    try:
        document = json.loads(data, object_pairs_hook=_no_duplicates)
    except (ValueError, RecursionError) as exc:
        raise CheckerInputError("input.invalid", f"not a JSON document ({exc})") from None
    results = document.get("results") if isinstance(document, dict) else None
    if not isinstance(results, dict):
        raise CheckerInputError("input.invalid", "no 'results' object: not promptfoo's output")
    version = results.get("version")
    if version not in KNOWN_VERSIONS or isinstance(version, bool):
        raise CheckerInputError(
            "input.invalid",
            f"promptfoo results version {version!r} is not one this checker reads (it reads "
            f"version {', '.join(map(str, KNOWN_VERSIONS))}); nothing was checked",
        )
    raw = results.get("results")
    if not isinstance(raw, list):
        raise CheckerInputError("input.invalid", "results.results must be a list of rows")
    rows = []
    for i, row in enumerate(raw):
        if not isinstance(row, dict) or not isinstance(row.get("success"), bool):
            raise CheckerInputError("input.invalid", f"results[{i}] needs a true/false 'success'")
        response = row.get("response") or {}
        grading = row.get("gradingResult") or {}
        if not isinstance(response, dict) or not isinstance(grading, dict):
            raise CheckerInputError("input.invalid", f"results[{i}]: response/gradingResult")
        components = grading.get("componentResults") or []
        if not isinstance(components, list) or not all(isinstance(c, dict) for c in components):
            raise CheckerInputError("input.invalid", f"results[{i}]: componentResults")
        errored = row.get("failureReason") == ERROR
        rows.append(Row(i, response.get("output"), row["success"], errored, tuple(components)))
    return results, rows


def counts(rows: list[Row]) -> dict[str, int]:
    errors = sum(1 for r in rows if r.errored)
    successes = sum(1 for r in rows if r.success)
    return {
        "tests": len(rows),
        "successes": successes,
        "failures": len(rows) - successes - errors,
        "errors": errors,
    }


COUNTS = ("tests", "successes", "failures", "errors")


def _stats_counterexample(params: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """Rows giving the first claimed total one more than claimed (or a pass rate of 1 or 0)."""
    key, value = next(iter(params["claimed"].items()), ("tests", 0))
    kind = {"errors": (False, ERROR), "failures": (False, 1)}.get(key, (True, 0))
    if key == "pass_rate":
        kind, n = ((False, 1), 1) if value == 1 else ((True, 0), 1)
    else:
        n = int(value) + 1 if isinstance(value, int) else 1
    row = {"success": kind[0], "failureReason": kind[1], "response": {"output": "x"}}
    return {"results": json.dumps({"results": {"version": 3, "results": [row] * n}}).encode()}


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
        ),
        Param("tolerance", "largest accepted |claimed - recomputed| pass rate", (float, int), 1e-9),
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


def rerun_problem(assertion: Mapping[str, Any]) -> str | None:
    """Why an assertion is not re-run here (None if it is)."""
    kind = str(assertion.get("type", ""))
    base = kind.removeprefix("not-")
    value = assertion.get("value")
    if base not in ASSERTION_TYPES:
        return f"type {kind!r} is not re-run"
    if set(assertion) - {"type", "value", "weight", "metric"}:
        return f"{kind} with {sorted(set(assertion) - {'type', 'value', 'weight', 'metric'})}"
    if isinstance(value, str) and "{{" in value:
        return f"{kind} with a templated value"
    if base == "is-json":
        return None if value is None else "is-json with a schema"
    if base.endswith(("-any", "-all")):
        ok = isinstance(value, list) and all(isinstance(v, str) for v in value)
        return None if ok else f"{kind} whose value is not a list of text"
    if base == "equals" and not isinstance(value, str):
        return "equals with a non-text value"
    if base != "equals" and not (isinstance(value, str) and value):
        return f"{kind} whose value is not text"
    if base.startswith("i") and any(not v.isascii() for v in _texts(value)):
        return f"{kind} on non-ASCII text (case folding differs between JavaScript and Python)"
    if base == "regex" and _JS_ONLY.search(str(value)):
        return "regex using syntax that JavaScript and Python read differently"
    return None


def skip_reason(row: Row, component: Mapping[str, Any]) -> str | None:
    """Why this stored assertion result is not re-run (None if it is)."""
    assertion = component.get("assertion")
    if not isinstance(assertion, dict):
        return "no assertion"
    if not isinstance(component.get("pass"), bool):
        return "no stored true/false result"
    if not isinstance(row.output, str):
        return "non-text output"
    return rerun_problem(assertion)


def kind_of(component: Mapping[str, Any]) -> str:
    assertion = component.get("assertion")
    return str(assertion.get("type", "?")) if isinstance(assertion, dict) else "?"


def _texts(value: Any) -> list[str]:
    return [value] if isinstance(value, str) else [v for v in value if isinstance(v, str)]


def rerun(assertion: Mapping[str, Any], output: str) -> bool:
    """The assertion on ``output``, as promptfoo decides it (``rerun_problem`` is None)."""
    kind = str(assertion["type"])
    inverse = kind.startswith("not-")
    base = kind.removeprefix("not-")
    value = assertion.get("value")
    lowered = output.lower()
    if base == "equals":
        passed = output == value
    elif base == "contains":
        passed = str(value) in output
    elif base == "icontains":
        passed = str(value).lower() in lowered
    elif base == "contains-any":
        passed = any(v in output for v in value)  # type: ignore[union-attr]
    elif base == "icontains-any":
        passed = any(v.lower() in lowered for v in value)  # type: ignore[union-attr]
    elif base == "contains-all":
        passed = all(v in output for v in value)  # type: ignore[union-attr]
    elif base == "icontains-all":
        passed = all(v.lower() in lowered for v in value)  # type: ignore[union-attr]
    elif base == "starts-with":
        passed = output.startswith(str(value))
    elif base == "regex":
        try:
            passed = re.search(str(value), output, re.ASCII) is not None
        except re.error:
            passed = False  # promptfoo: an invalid pattern fails
    else:  # is-json
        try:
            json.loads(output, parse_constant=_refuse)
            passed = True
        except ValueError:
            passed = False
    return passed != inverse


def _refuse(name: str) -> Any:
    raise ValueError(name)


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
