"""intent-expectations and suite-threshold, @1 and @2: recorded agent output judged against cases.


"The agent guessed my intent wrong" is not decidable; a case is. A case names a
request, the state the agent must reach (ASK, ROUTE or ABORT), and observable
expectations on what it asked, what it resolved by probing the repository itself and
which files it cited as evidence. These checkers judge *recorded* outputs against such
cases: no model is called, so a pass says what the recorded run did, not what a
re-run would do.

Three rules from the seed are built in and cannot be switched off by a param:

- an evidence pointer to a file that does not exist in the fixture repository
  (``evidence.hallucinated``) fails its case **and the whole suite**, whatever else
  passed: an invented citation outlives a wrong answer because it is taken as proof;
- a value that is not a pointer at all (prose, the repository root, ``.git/``) is a
  form violation (``evidence.form``), counted apart: it fails the case, never the
  suite on its own;
- a timeout or a harness error is the environment's failure, not the agent's: the
  case is inconclusive, never a behavioural failure. "Not triggered" (no spec) and
  "degraded output" (a spec that does not parse) are behavioural failures. The four
  failure modes are counted apart.

``intent-expectations@2`` and ``suite-threshold@2`` take the Intent-Router repository's
own ``evals/cases.yaml`` unchanged and judge runs recorded by its runner as its grader
``evals/run.py`` does (model in ``checkers/intent/repo/``): where the grader and the
article above disagree (a timeout is not a pass; the threshold is ceil(0.8 x cases), not a
fixed 14/17; which pointers are legal), ``@2`` follows the grader. ``@1`` is unchanged.

``suite-threshold@1`` cannot see the verdicts of other bundle cases (a checker only
sees its own inputs), so it takes the same three inputs as ``intent-expectations@1``
and recomputes every per-case result with the same function, ``judge_suite`` in
``checkers/intent/cases.py``, before applying the threshold. One function, two views:
a per-case result can never differ between the two checkers.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .. import linear
from ..api import CheckerInputError, InputKind, Param, Reason, Role, Verdict, checker
from ..arithmetic import left_sum
from .cases import (
    DEFAULT_STATES,
    ENVIRONMENT_FAILURES,
    LARGEST_SUITE,
    diagnostics,
    input_invalid,
    judge_suite,
    suite_counts,
)
from .repo import EXPECT_KEYS, summary, threshold
from .runs import judge

_INPUT_ROLES = [
    Role(
        "cases",
        InputKind.DATA,
        "the eval cases: a list (or {cases: [...]}) of {id, prompt, mode, fixture, "
        "category, expect: {state, question_keywords, open_field_regex, "
        "min_resolved_by_probe, max_asked, evidence_must_include}}",
    ),
    Role(
        "outputs",
        InputKind.DATA,
        "the recorded agent outputs: a list (or {outputs: [...]}) of {case, status, "
        "state, questions, open_fields, resolved_by_probe, evidence, transcript}",
    ),
    Role(
        "fixture",
        InputKind.TREE,
        "the fixture repositories evidence must point into: one folder per fixture "
        "name used by the cases (e.g. user-api/src/routes/users.ts)",
    ),
]
_STATES_PARAM = Param(
    "states",
    "the states a case may expect (extend for a router with more states)",
    (list, tuple),
    DEFAULT_STATES,
)
_EVIDENCE_REASONS = {
    "evidence.form": "an evidence value is not a pointer into the fixture (prose, the "
    "repository root, a folder, .git/, an absolute path, a bad line range)",
    "evidence.hallucinated": "a well-formed evidence pointer names a file (or lines) that "
    "does not exist in the fixture; fails the case and the whole suite",
}


def _suite(ids: list[str], params: Mapping[str, Any]) -> dict[str, Any]:
    """Inputs where every case is recorded as not triggered: each one fails."""
    states = params["states"]
    expect = {"state": states[0] if isinstance(states, list | tuple) and states else "ASK"}
    return {
        "cases": [
            {"id": i, "prompt": "counterexample", "fixture": "f", "expect": expect} for i in ids
        ],
        "outputs": [{"case": i, "status": "not_triggered"} for i in ids],
        "fixture": {"f/README.md": b"counterexample\n"},
    }


def _expectations_counterexample(params: Mapping[str, Any]) -> Mapping[str, Any]:
    """The judged case (or the one case of the suite) was never triggered. Never None."""
    return _suite([params["case"] or "counterexample"], params)


def _threshold_counterexample(params: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """A suite of ``total`` cases none of which passed: below any min_pass >= 1. None
    for a suite of more than 10,000 cases (too large to build quickly)."""
    total = params["total"]
    if not isinstance(total, int) or isinstance(total, bool) or not 1 <= total <= LARGEST_SUITE:
        return None
    return _suite([f"case-{n}" for n in range(1, total + 1)], params)


@checker(
    "intent-expectations",
    1,
    roles=list(_INPUT_ROLES),
    params=[
        Param(
            "case",
            "the id of the one case to judge; empty judges every case (each needs an output)",
            (str,),
            "",
        ),
        _STATES_PARAM,
    ],
    reasons={
        "expect.state": "the run reached another state than the case expects",
        "expect.keywords": "no question was asked, or a question mentions none of the keywords",
        "expect.open_field": "no open field of the spec matches open_field_regex",
        "expect.probe": "fewer items resolved by probing than min_resolved_by_probe",
        "expect.max_asked": "more questions asked than max_asked",
        "expect.evidence_missing": "a file in evidence_must_include is not cited",
        **_EVIDENCE_REASONS,
        "run.not_triggered": "the router was not triggered: no spec produced (behavioural failure)",
        "run.degraded": "a spec was produced but does not parse (behavioural failure)",
        "run.timeout": "the run timed out: environment, not behaviour; the case is inconclusive",
        "run.harness_error": "the harness failed, not the agent; the case is inconclusive",
    },
    libraries=("pyyaml",),
    counterexample=_expectations_counterexample,
    example_params=[{"case": "add-caching-auto"}],
)
def intent_expectations(inputs: Mapping[str, Any], params: Mapping[str, Any]) -> Verdict:
    """Recorded agent output meets every expectation of its eval case.

    With ``case`` set, judges that case alone: ``pass`` when every expectation holds
    and every evidence pointer names an existing file of the case's fixture; ``fail``
    with one reason per expectation that does not hold, per malformed pointer
    (``evidence.form``) and per invented one (``evidence.hallucinated``); an ``error``
    (inconclusive) for a timeout or a harness error. With ``case`` empty, judges every
    case (each must have an output) and fails if any case fails. The details carry, per case,
    each expectation with ``held`` true/false, expected and observed values.

    ``question_keywords``: at least one question, and every question mentions one of
    the keywords (case-insensitive substring; a question about something else is off
    topic). ``open_field_regex``: at least one open field of the spec matches
    (case-insensitive search). ``evidence_must_include``: each listed file is cited
    (a pointer with a line range counts for its file). A pass says what the recorded
    run did; it does not say a re-run would do the same.
    """
    results = judge_suite(
        inputs["cases"],
        inputs["outputs"],
        inputs["fixture"],
        params["states"],
        only=params["case"],
    )
    rows = [r.to_dict() for r in results]
    counts = suite_counts(results)
    if params["case"]:
        (one,) = results
        if one.result == "inconclusive":
            code = ENVIRONMENT_FAILURES[one.output.status]
            return Verdict.errored(
                code,
                f"{one.case.id}: run {one.output.status}: inconclusive, not a behavioural verdict",
                case=rows[0],
            )
        if one.result == "fail":
            held = left_sum(1 for e in one.expectations.values() if e["held"])
            judged = (
                f"{held} of {len(one.expectations)} expectation(s) held"
                if one.output.status == "completed"
                else f"run {one.output.status}, expectations not evaluated"
            )
            return Verdict.failed(
                f"{one.case.id}: {judged}; failed on {', '.join(one.codes)}",
                one.reasons,
                case=rows[0],
            )
        return Verdict.passed(
            f"{one.case.id}: all {len(one.expectations)} expectation(s) held, "
            f"{len(one.pointers)} evidence pointer(s) exist",
            case=rows[0],
        )
    failed = [r for r in results if r.result == "fail"]
    if failed:
        return Verdict.failed(
            f"{len(failed)} of {len(results)} case(s) failed: "
            + ", ".join(r.case.id for r in failed),
            [reason for r in failed for reason in r.reasons],
            counts=counts,
            cases=rows,
        )
    unsure = [r for r in results if r.result == "inconclusive"]
    if unsure:
        return Verdict.errored(
            ENVIRONMENT_FAILURES[unsure[0].output.status],
            f"{len(unsure)} of {len(results)} case(s) inconclusive "
            f"({', '.join(f'{r.case.id}: {r.output.status}' for r in unsure)}), none failed",
            counts=counts,
            cases=rows,
        )
    return Verdict.passed(
        f"all {len(results)} case(s) met every expectation", counts=counts, cases=rows
    )


@checker(
    "suite-threshold",
    1,
    roles=list(_INPUT_ROLES),
    params=[
        Param("min_pass", "N: the least number of cases that must pass", (int,), at_least=1),
        Param(
            "total",
            "M: the number of cases the suite must have (guards against a shrunk suite)",
            (int,),
            at_least=1,
        ),
        _STATES_PARAM,
    ],
    reasons={
        "suite.below_threshold": "fewer than min_pass passed, even counting every "
        "inconclusive case as a pass",
        "suite.hallucinated_evidence": "an evidence pointer is hallucinated: the whole suite fails",
        "suite.inconclusive": "below the threshold only because of timeouts or harness "
        "errors (an error verdict)",
    },
    libraries=("pyyaml",),
    counterexample=_threshold_counterexample,
    example_params=[{"min_pass": 14, "total": 17}],
)
def suite_threshold(inputs: Mapping[str, Any], params: Mapping[str, Any]) -> Verdict:
    """The suite passes: at least N of M cases pass and no evidence is hallucinated.

    Per-case results are recomputed from the same inputs as ``intent-expectations@1``
    with the same function (a checker cannot see other cases' verdicts), so both
    checkers always agree on every case. Every case must have a recorded output.

    ``fail`` with ``suite.hallucinated_evidence`` when any pointer in any case is
    hallucinated, however many cases passed; ``fail`` with ``suite.below_threshold``
    when fewer than ``min_pass`` passed and the inconclusive cases could not make up
    the difference. A timeout or harness error never counts as a behavioural failure:
    when only they stand between the suite and its threshold, the verdict is an
    ``error`` (``suite.inconclusive``). Form violations fail their case but never the
    suite on their own. The details give counts per result, category, failure mode and
    evidence kind, a per-case table, and diagnostics (``probe_ratio``) that decide
    nothing.
    """
    n, m = params["min_pass"], params["total"]
    if isinstance(n, bool) or isinstance(m, bool) or not 1 <= n <= m:
        raise CheckerInputError(
            "params.invalid", f"need 1 <= min_pass <= total, observed {n} of {m}"
        )
    results = judge_suite(inputs["cases"], inputs["outputs"], inputs["fixture"], params["states"])
    if len(results) != m:
        raise input_invalid(
            f"the suite has {len(results)} case(s), the threshold is stated for {m}",
        )
    counts = suite_counts(results)
    details = {
        "threshold": f"{n}/{m}",
        "counts": counts,
        "diagnostics": diagnostics(results),
        "cases": [r.to_dict() for r in results],
    }
    passed, unsure = counts["passed"], counts["inconclusive"]
    score = f"{passed} of {m} case(s) passed (threshold {n}/{m})"
    reasons: list[Reason] = []
    bad = counts["evidence"]
    if bad["hallucinated"]:
        reasons.append(
            Reason(
                "suite.hallucinated_evidence",
                f"{bad['hallucinated']} hallucinated evidence pointer(s) in "
                f"{bad['hallucinated_cases']}: "
                "one invented citation fails the whole suite",
                {"cases": bad["hallucinated_cases"], "pointers": bad["hallucinated"]},
            )
        )
    if passed + unsure < n:
        reasons.append(
            Reason(
                "suite.below_threshold",
                f"{score}; {counts['failed']} failed, {unsure} inconclusive",
                {"passed": passed, "min_pass": n, "total": m, "inconclusive": unsure},
            )
        )
    if reasons:
        return Verdict.failed(f"suite fails: {score}", reasons, **details)
    if passed < n:
        return Verdict.errored(
            "suite.inconclusive",
            f"{score}; {unsure} inconclusive case(s) (timeouts/harness errors) could decide it",
            **details,
        )
    return Verdict.passed(f"suite passes: {score}, no hallucinated evidence", **details)


_REPO_ROLES = [
    Role(
        "cases",
        InputKind.DATA,
        "the Intent-Router repository's evals/cases.yaml, unchanged: a list of "
        "{id, prompt, mode, fixture, turns, expect, expect_turn1, metrics}",
    ),
    Role(
        "outputs",
        InputKind.DATA,
        "the runs as its runner records them: {case id: {turns: [{spec, status, text}], "
        "runner_failures: []} | one turn {spec, status, text} | a list of records (repeats) "
        "| null (not run)}; or give transcripts instead",
        optional=True,
    ),
    Role(
        "transcripts",
        InputKind.TREE,
        "instead of outputs: the runner's persisted transcripts, reports/raw/<harness>/"
        "<case>-<n>.txt, read back as its --rescore reads them",
        optional=True,
    ),
    Role(
        "schema",
        InputKind.DATA,
        "the IntentSpec JSON Schema every emitted spec must validate against (Draft 2020-12; "
        "the repository's skills/intent-router/schema/intentspec.schema.json)",
    ),
    Role(
        "fixture",
        InputKind.TREE,
        "the fixture repositories, one folder per fixture name (evals/fixtures: user-api/..., "
        "support-queue/...); optional when every judged case uses the empty fixture",
        optional=True,
    ),
]
_REPO_REASONS = {
    **{f"expect.{key}": f"the assertion {key} of the case does not hold" for key in EXPECT_KEYS},
    "spec.schema_invalid": "the emitted spec does not validate against the schema (schema_valid)",
    "spec.invariants_broken": "the spec's counters do not balance, a ROUTE leaves an unknown "
    "open or infers an irreversible constraint, or an ASK has no budget left (invariants_ok)",
    "evidence.form": "an evidence value is not a legal pointer (evidence_form): fails the case",
    "evidence.hallucinated": "a well-formed path names no file of the workspace "
    "(evidence_valid): fails the case and the whole suite",
    "run.not_triggered": "a spec was expected and none was emitted (triggered)",
    "run.degraded": "a spec was emitted and does not parse (degraded_output)",
    "run.timeout": "the run timed out: counted apart as environmental, and not passed",
    "run.harness_error": "the harness failed: counted apart as environmental, and not passed",
    "run.turn1_not_ask": "a multi-turn case whose first turn did not ASK (the runner stops)",
}


def _repo_counterexample(case_id: str, n: int = 1) -> dict[str, Any]:
    """Inputs on which a case expecting ASK emits no spec: a ``triggered`` failure."""
    ids = [case_id] + [f"{case_id}-{i}" for i in range(2, n + 1)]
    return {
        "cases": [{"id": i, "fixture": "empty", "expect": {"state": "ASK"}} for i in ids],
        "outputs": {i: {"spec": None, "status": "no_fence", "text": ""} for i in ids},
        "schema": {"type": "object"},
    }


def _one_case_counterexample(params: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The judged case, expecting ASK, emitting no spec (``triggered``). None when no case
    is named."""
    case = params.get("case")
    return _repo_counterexample(case) if isinstance(case, str) and case else None


@checker(
    "intent-expectations",
    2,
    roles=list(_REPO_ROLES),
    params=[Param("case", "the id of the case of cases.yaml to judge", (str,))],
    reasons={**_REPO_REASONS, "run.not_run": "the case was never dispatched (null output)"},
    libraries=("pyyaml", "jsonschema"),
    counterexample=_one_case_counterexample,
    example_params=[{"case": "no-repo"}],
)
def intent_expectations_v2(inputs: Mapping[str, Any], params: Mapping[str, Any]) -> Verdict:
    """One case of the repository's own cases.yaml, judged on its recorded run as its grader does.

    Reads ``cases.yaml`` as the repository publishes it and the runner's record of the
    case, and applies the grader's rules (``evals/run.py`` ``check``/``check_turn``):
    every assertion key the grader knows, on the last turn (``expect``) and on turn one
    of a multi-turn case (``expect_turn1``); a quiet case (``should_trigger: false``)
    passes exactly when no spec was emitted; for every emitted spec, always, schema
    validity, the counter invariants and every evidence pointer (``evidence.form`` for a
    value that is not a legal pointer, ``evidence.hallucinated`` for a path that is not
    in the workspace). A timeout or harness error is not passed (``run.timeout``,
    ``run.harness_error``: environmental, counted apart). With repeats, more than half
    of the runs must pass. One reason per failure the grader would record; the details
    hold every run's measured values. A pass says what the recorded run did, not what a
    re-run would do. A key the grader does not know is refused by name (input.invalid).
    """
    results = judge(
        inputs["cases"],
        inputs.get("outputs"),
        inputs.get("fixture"),
        inputs["schema"],
        only=params["case"],
        transcripts=inputs.get("transcripts"),
    )
    (one,) = results
    row = one.to_dict()
    cid = one.case.id
    if one.verdict is None:
        return Verdict.errored("run.not_run", f"{cid}: not run: neither pass nor fail", case=row)
    runs = f"{one.pass_count} of {len(one.runs or [])} run(s) passed"
    if one.verdict:
        return Verdict.passed(f"{cid}: passed as the grader judges it ({runs})", case=row)
    return Verdict.failed(
        f"{cid}: not passed ({runs}); failed: {', '.join(one.failure_names)}",
        one.reasons(),
        case=row,
    )


def _suite_counterexample(params: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """A suite of ``total`` cases (at least one), each expecting ASK and emitting no spec.
    None for a ``total`` below 0."""
    total = params.get("total", 0)
    if isinstance(total, bool) or not isinstance(total, int) or total < 0:
        return None
    return _repo_counterexample("case", max(total, 1))


@checker(
    "suite-threshold",
    2,
    roles=list(_REPO_ROLES),
    params=[
        Param(
            "total",
            "when > 0, the number of cases cases.yaml must hold (guards against a shrunk "
            "file); 0 takes the file as it is",
            (int,),
            0,
            at_least=0,
        )
    ],
    reasons={
        "suite.below_threshold": "fewer than ceil(0.8 x cases) cases passed; a timeout, a "
        "harness error or a case not run is not a pass",
        "suite.hallucinated_evidence": "an evidence pointer is hallucinated: the whole suite fails",
    },
    libraries=("pyyaml", "jsonschema"),
    counterexample=_suite_counterexample,
    example_params=[{"total": 12}],
)
def suite_threshold_v2(inputs: Mapping[str, Any], params: Mapping[str, Any]) -> Verdict:
    """The whole cases.yaml meets its threshold: ceil(0.8 x cases) pass, none hallucinated.

    As the repository defines it (``evals/README.md`` section 4, ``render_report`` and
    ``run_suite`` in ``evals/run.py``): the threshold follows the number of cases in the
    file (17 cases need 14), every case is judged as ``intent-expectations@2`` judges it
    (the same function), and a case passes or not: a timeout, a harness error and a
    case not run are not passes. One hallucinated pointer anywhere fails the suite
    (``suite.hallucinated_evidence``) however many cases passed; form violations fail
    only their case. Every case of the file needs an entry in the outputs (null when it
    was not run). The details give the report's summary table (not triggered, degraded
    output, timeouts and harness errors counted apart; evidence form violations apart
    from hallucinations), the per-case table, and the probe ratio, a diagnostic that
    decides nothing.
    """
    total = params["total"]
    if isinstance(total, bool) or total < 0:
        raise CheckerInputError("params.invalid", f"total must be >= 0, observed {total}")
    results = judge(
        inputs["cases"],
        inputs.get("outputs"),
        inputs.get("fixture"),
        inputs["schema"],
        transcripts=inputs.get("transcripts"),
    )
    if total and len(results) != total:
        raise input_invalid(
            f"cases.yaml holds {len(results)} case(s), the threshold is stated for {total}"
        )
    counts = summary(results)
    need = threshold(len(results))
    passed = counts["passed"]
    score = f"{passed} of {len(results)} case(s) passed (threshold {need} of {len(results)})"
    details = {
        "threshold": f"{need}/{len(results)}",
        "summary": counts,
        "cases": [r.to_dict() for r in results],
    }
    reasons: list[Reason] = []
    if counts["hallucinated_evidence"]:
        reasons.append(
            Reason(
                "suite.hallucinated_evidence",
                f"{counts['hallucinated_evidence']} hallucinated evidence pointer(s) in "
                f"{counts['hallucinated_cases']}: one invented citation fails the whole suite",
                {
                    "cases": counts["hallucinated_cases"],
                    "pointers": counts["hallucinated_evidence"],
                },
            )
        )
    if passed < need:
        failed = [r.case.id for r in results if r.verdict is not True]
        reasons.append(
            Reason(
                "suite.below_threshold",
                f"{score}; not passed: {failed}",
                {"passed": passed, "need": need, "cases": len(results), "not_passed": failed},
            )
        )
    if reasons:
        return Verdict.failed(f"threshold not met: {score}", reasons, **details)
    return Verdict.passed(f"threshold met: {score}, no hallucinated evidence", **details)


_LINEAR_NOTE = (
    "\n\nVersion 3 decides as version 2, except that every regular expression (the "
    "cases' `evidence_regex`, `open_field_regex`, `output_regex`, and the schema's "
    "`pattern`s) runs on RE2, in time linear in its text: one outside the subset RE2 reads "
    "as Python's `re` does, or a text on which the two could differ, is not re-run: "
    "`pattern.not_rerun`, the case inconclusive, naming the pattern and why."
)
intent_expectations_v3 = intent_expectations_v2._replace(
    version=3,
    function=linear.linear_only_version(intent_expectations_v2.function),
    doc=intent_expectations_v2.doc + _LINEAR_NOTE,
)
suite_threshold_v3 = suite_threshold_v2._replace(
    version=3,
    function=linear.linear_only_version(suite_threshold_v2.function),
    doc=suite_threshold_v2.doc + _LINEAR_NOTE,
)
