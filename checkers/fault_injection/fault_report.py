"""fault-report@1 and @2: a runner report earns the wanted judgement."""

from __future__ import annotations

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
)
from ..arithmetic import left_sum
from .report import (
    BASELINE_FAULT,
    JUDGEMENTS,
    LENIENT,
    SEED_FAULTS,
    SHOWN,
    WITH_FAILURES,
    Judgement,
    Report,
    RunnerReport,
    failure_type,
    few_names,
    judge,
    judge_v2,
    missing_fields,
    parse_report,
    parse_report_v2,
    traceback_text,
)
from .report import SEED_READS as _SEED_READS
from .report import SEED_RECORD_READS as _SEED_RECORD_READS

_FAULT_REASONS = {
    **{f"judgement.{name}": f"the report earns the judgement {name!r}" for name in JUDGEMENTS},
    "fault.other_cause": (
        "the failing tests are not (only) the expected ones, or a failure's traceback "
        "lacks the expected cause: the failures do not show the targeted defect"
    ),
    "fault.expected_failure_absent": "a test named in failing_tests did not fail",
}


def _report_counterexample(params: Mapping[str, Any]) -> Mapping[str, Any]:
    """A report that earns another judgement than ``want``: an incomplete one (nothing
    planned), or for ``want: incomplete`` a complete baseline that passed. Never None."""
    if params["want"] != "incomplete":
        report = {"planned": 0, "executed": 0, "complete": False, "blocked": False}
        return {"report": {**report, "fault": BASELINE_FAULT, "records": []}}
    record = {"test": "test_counterexample", "status": "passed"}
    report = {"planned": 1, "executed": 1, "complete": True, "blocked": False}
    return {"report": {**report, "fault": BASELINE_FAULT, "records": [record]}}


@checker(
    "fault-report",
    1,
    roles=[
        Role(
            "report",
            InputKind.DATA,
            "a runner report: planned, executed, complete, blocked, fault, "
            "records [{test, status, traceback?}]",
        )
    ],
    params=[
        Param("want", "the judgement the case expects the report to earn", (str,)),
        Param(
            "failing_tests",
            "when the report earns defect_detected or baseline_fail: exactly the tests "
            "that must be the failing ones ([] = not checked)",
            (list,),
            [],
        ),
        Param(
            "failure_causes",
            "test name -> text that must occur in that failed test's traceback "
            "(e.g. the assertion); {} = not checked",
            (dict,),
            {},
        ),
        Param(
            "known_faults",
            'the injected fault names (a fault not listed and not "none" is unknown_fault)',
            (list,),
            list(SEED_FAULTS),
        ),
    ],
    reasons=_FAULT_REASONS,
    counterexample=_report_counterexample,
    example_params=[{"want": "defect_detected", "failing_tests": ["t"]}],
)
def fault_report(inputs: Mapping[str, Any], params: Mapping[str, Any]) -> Verdict:
    """A runner report earns the wanted judgement (incomplete, error, baseline, defect).

    Judges one report in this order, as the seed does:
    ``incomplete`` (planned <= 0, not complete, blocked, executed != planned,
    records != executed, or duplicate test names), then ``execution_error_or_skip``
    (any status other than passed/failed), then for fault ``none`` ``baseline_pass`` /
    ``baseline_fail``, for a known fault ``defect_detected`` (some test failed) /
    ``defect_missed``, otherwise ``unknown_fault``. An execution error never counts as
    a detection: a fault report whose only failure is a connection error is
    ``execution_error_or_skip``.

    The case passes when the report earns ``want``; otherwise it fails with the reason
    ``judgement.<earned>``. A pass does not authenticate the report (the runner that
    wrote it is trusted to have tied it to the service version), and by itself does not
    show *which* defect a failure reveals: name ``failing_tests`` (and optionally
    ``failure_causes``, text from each traceback) to require that the failures are the
    targeted assertions (``fault.other_cause``, ``fault.expected_failure_absent``).
    Several failing tests for one injected fault are one detected defect, not several.
    """
    want = params["want"]
    if want not in JUDGEMENTS:
        raise CheckerInputError(
            "params.invalid", f"want: {want!r} is not one of {', '.join(JUDGEMENTS)}"
        )
    failing_tests = _string_list(params.get("failing_tests", []), "failing_tests")
    known_faults = _string_list(params.get("known_faults", list(SEED_FAULTS)), "known_faults")
    causes = params.get("failure_causes", {})
    if not all(isinstance(k, str) and isinstance(v, str) and v for k, v in causes.items()):
        raise CheckerInputError(
            "params.invalid", "failure_causes: expected a table of test name -> non-empty text"
        )
    if (failing_tests or causes) and want not in WITH_FAILURES:
        raise CheckerInputError(
            "params.invalid",
            f"failing_tests/failure_causes apply only when want is one of "
            f"{', '.join(WITH_FAILURES)}, not {want!r}",
        )
    if BASELINE_FAULT in known_faults:
        raise CheckerInputError(
            "params.invalid", f'known_faults: "{BASELINE_FAULT}" is the baseline, not a fault'
        )
    unknown_causes = sorted(set(causes) - set(failing_tests)) if failing_tests else []
    if unknown_causes:
        raise CheckerInputError(
            "params.invalid",
            f"failure_causes names tests not in failing_tests: {', '.join(unknown_causes)}",
        )

    report = parse_report(inputs["report"])
    earned = judge(report, known_faults)
    failed = report.failed_tests
    details: dict[str, Any] = {
        "judgement": earned.name,
        "fault": report.fault,
        "planned": report.planned,
        "executed": report.executed,
        "passed": left_sum(r.status == "passed" for r in report.records),
        "failed": len(failed),
        "failed_tests": failed,
        "problems": list(earned.problems),
    }
    if earned.name != want:
        why = f" ({'; '.join(earned.problems)})" if earned.problems else ""
        message = f"fault {report.fault!r}: the report earns {earned.name}, not {want}{why}"
        return Verdict.failed(
            message,
            [Reason(f"judgement.{earned.name}", message, {"want": want, **details})],
            **details,
        )

    reasons = _check_causes(report, failing_tests, causes)
    if reasons:
        return Verdict.failed(
            f"fault {report.fault!r}: {earned.name}, but not by the expected failures: "
            + "; ".join(r.message for r in reasons),
            reasons,
            **details,
        )
    return Verdict.passed(_summary(report, earned), **details)


def _summary(report: RunnerReport, earned: Judgement) -> str:
    ran = f"{report.executed} of {report.planned} scenarios executed"
    failed = report.failed_tests
    if earned.name == "defect_detected":
        one = f" (one injected fault, not {len(failed)} defects)" if len(failed) > 1 else ""
        return f"fault {report.fault!r} detected: {ran}, {len(failed)} failed on an assertion{one}"
    return f"fault {report.fault!r}: {earned.name}; {ran}, {len(failed)} failed"


def _check_causes(
    report: RunnerReport, failing_tests: list[str], causes: Mapping[str, str]
) -> list[Reason]:
    reasons: list[Reason] = []
    failed = report.failed_tests
    expected, failed_names = set(failing_tests), set(failed)  # not a list scan per name
    extra = [t for t in failed if t not in expected] if failing_tests else []
    # Every named test must have failed: those of failing_tests, else those of causes
    # (a cause for a test that passed must not be silently skipped).
    required = failing_tests or sorted(causes)
    absent = [t for t in required if t not in failed_names]
    if extra:
        reasons.append(
            Reason(
                "fault.other_cause",
                f"failed but not expected to: {', '.join(extra)}",
                {"unexpected": extra, "expected": failing_tests},
            )
        )
    if absent:
        statuses = {r.test: r.status for r in report.records}
        shown = [f"{t} ({statuses.get(t, 'not in the report')})" for t in absent]
        reasons.append(
            Reason(
                "fault.expected_failure_absent",
                f"expected to fail but did not: {', '.join(shown)}",
                {"absent": absent, "expected": required},
            )
        )
    traces = {r.test: r.traceback or "" for r in report.records if r.status == "failed"}
    for test, text in sorted(causes.items()):
        if test in traces and text not in traces[test]:
            reasons.append(
                Reason(
                    "fault.other_cause",
                    f"{test}: its traceback does not contain {text!r}",
                    {"test": test, "expected_in_traceback": text},
                )
            )
    return reasons


def _string_list(value: Any, name: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise CheckerInputError("params.invalid", f"{name}: expected a list of names")
    if len(set(value)) != len(value):
        raise CheckerInputError("params.invalid", f"{name}: a name is listed twice")
    return list(value)


_FAULT_REASONS_V2 = {
    **dict(fault_report.reasons),
    "pin.planned": "the report's planned count is not the count the case pins",
    "pin.scenarios": "the scenarios in the report are not the list the case pins "
    "(one missing or one not pinned)",
    "pin.failure_count": "the number of failed tests is not the count the case expects for "
    "the report's fault (or the case pins no count for that fault)",
    "pin.not_assertion": "a failed test did not fail on an assertion (e.g. a connection "
    "error recorded as a failure): it is not a detection",
}


def _fault_counterexample(params: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """A report with every field, earning another judgement than ``want``: an incomplete
    one (nothing executed), or for ``want: incomplete`` a complete baseline that passed.
    Never None."""
    if params.get("want") == "incomplete":
        report: dict[str, Any] = {
            "fault": "none",
            "planned": 1,
            "executed": 1,
            "complete": True,
            "blocked": False,
            "records": [{"test": "test_a", "status": "passed"}],
        }
    else:
        report = {
            "fault": "none",
            "planned": 1,
            "executed": 0,
            "complete": False,
            "blocked": False,
            "records": [],
        }
    return {"report": report}


@checker(
    "fault-report",
    2,
    roles=[
        Role(
            "report",
            InputKind.DATA,
            "a runner report: planned, executed, complete, blocked, fault, "
            "records [{test, status, traceback?}]; other fields ignored",
            reading=LENIENT,
        )
    ],
    params=[
        *fault_report.params,
        Param(
            "planned",
            "the planned scenario count the report must state (null = not pinned)",
            (int, type(None)),
            None,
            at_least=1,
        ),
        Param(
            "scenarios",
            "exactly the test names the report must hold ([] = not pinned)",
            (list,),
            [],
        ),
        Param(
            "expected_failures",
            "fault name -> the number of tests that must fail for it, e.g. {none: 0, "
            "missing-record: 4} ({} = not pinned; a report of a fault not named fails)",
            (dict,),
            {},
        ),
        Param(
            "assertion_failures",
            "every failed test must have failed on an assertion (its traceback ends in an "
            "AssertionError), without naming the tests",
            (bool,),
            False,
        ),
    ],
    reasons=_FAULT_REASONS_V2,
    counterexample=_fault_counterexample,
    example_params=[{"want": "execution_error_or_skip"}],
)
def fault_report_v2(inputs: Mapping[str, Any], params: Mapping[str, Any]) -> Verdict:
    """A runner report earns the wanted judgement, and holds what the case pins.

    The judgement is fault-report@1's, in the seed's order (``incomplete``,
    ``execution_error_or_skip``, ``baseline_pass``/``baseline_fail``,
    ``defect_detected``/``defect_missed``, ``unknown_fault``), with the same params and
    ``judgement.<earned>`` reason when it is not ``want``. What differs from @1:

    - Only what the verdict reads is checked. ``traceback`` is read only for a failed test
      a pin asks about (``failure_causes``, ``assertion_failures``), as text or a list of
      lines; otherwise it may hold anything. ``blocked`` may be null or a mapping (empty =
      not blocked) besides true/false, a count or a list. NaN and Infinity are read (in a
      duration, say) and ignored. Stricter than the seed's judge_v2, on purpose: ``complete``
      must be true or false (the seed takes the text "false" as complete), ``blocked`` may
      not be text, and a duplicate key is refused by the reader (the seed keeps the last).
    - Every check is linear in the number of records (duplicate names counted once).
    - Pins, checked once the judgement is the wanted one, every problem reported:
      ``planned`` (``pin.planned``), ``scenarios`` (the exact test names,
      ``pin.scenarios``), ``expected_failures`` (fault -> failed count,
      ``pin.failure_count``), ``assertion_failures`` (every failed test's traceback ends
      in an AssertionError, or pytest's ``E   assert ...``: a ConnectionError recorded as
      "failed" is not a detection, ``pin.not_assertion``). Pins name no tests, so one set
      of params fits the reports of every fault.

    A pass does not authenticate the report, and several failed tests for one injected
    fault are one detected defect, not several.
    """
    _check_fault_params(params)
    report = parse_report_v2(inputs["report"])
    known = _string_list(params["known_faults"], "known_faults")
    earned = judge_v2(report, known)
    failed = [r.test for r in report.failed]
    details: dict[str, Any] = {
        "judgement": earned.name,
        "fault": report.fault,
        "planned": report.planned,
        "executed": report.executed,
        "passed": report.statuses.count("passed"),
        "failed": len(failed),
        "failed_tests": failed[:SHOWN],
        "problems": list(earned.problems),
    }
    if earned.name != params["want"]:
        why = f" ({'; '.join(earned.problems)})" if earned.problems else ""
        message = (
            f"fault {report.fault!r}: the report earns {earned.name}, not {params['want']}{why}"
        )
        return Verdict.failed(
            message,
            [Reason(f"judgement.{earned.name}", message, {"want": params["want"], **details})],
            **details,
        )
    reasons = _causes(report, params) + _pins(report, params)
    if reasons:
        return Verdict.failed(
            f"fault {report.fault!r}: {earned.name}, but not as the case pins: "
            + "; ".join(r.message for r in reasons[:SHOWN]),
            reasons,
            **details,
        )
    return Verdict.passed(_summary_v2(report, earned, len(failed)), **details)


def _check_fault_params(params: Mapping[str, Any]) -> None:
    """Check the params as @1 does (by calling it on an empty report), then the pins."""
    base = {k: params[k] for k in ("want", "failing_tests", "failure_causes", "known_faults")}
    try:
        fault_report.function({"report": {}}, base)
    except CheckerInputError as exc:
        if exc.code == "params.invalid":
            raise
    planned = params["planned"]
    if planned is not None and planned <= 0:
        raise CheckerInputError(
            "params.invalid", f"planned: expected a count >= 1, observed {planned}"
        )
    if params["scenarios"]:
        names = _string_list(params["scenarios"], "scenarios")
        if planned is not None and planned != len(names):
            raise CheckerInputError(
                "params.invalid", f"planned is {planned} but scenarios lists {len(names)} tests"
            )
    counts = params["expected_failures"]
    if not all(
        isinstance(f, str) and isinstance(n, int) and not isinstance(n, bool) and n >= 0
        for f, n in counts.items()
    ):
        raise CheckerInputError(
            "params.invalid", "expected_failures: expected a table of fault name -> count >= 0"
        )


def _summary_v2(report: Report, earned: Judgement, failed: int) -> str:
    """@1's pass message."""
    ran = f"{report.executed} of {report.planned} scenarios executed"
    if earned.name == "defect_detected":
        one = f" (one injected fault, not {failed} defects)" if failed > 1 else ""
        return f"fault {report.fault!r} detected: {ran}, {failed} failed on an assertion{one}"
    return f"fault {report.fault!r}: {earned.name}; {ran}, {failed} failed"


def _causes(report: Report, params: Mapping[str, Any]) -> list[Reason]:
    """@1's failing_tests / failure_causes, with sets instead of list scans."""
    failing_tests: list[str] = params["failing_tests"]
    causes: Mapping[str, str] = params["failure_causes"]
    failed = report.failed
    failed_names = {r.test for r in failed}
    wanted = set(failing_tests)
    reasons: list[Reason] = []
    extra = [r.test for r in failed if r.test not in wanted] if failing_tests else []
    required = failing_tests or sorted(causes)
    absent = [t for t in required if t not in failed_names]
    if extra:
        reasons.append(
            Reason(
                "fault.other_cause",
                f"failed but not expected to: {few_names(extra)}",
                {"unexpected": extra[:SHOWN], "expected": failing_tests[:SHOWN]},
            )
        )
    if absent:
        statuses = dict(zip(report.tests, report.statuses, strict=True))
        shown = [f"{t} ({statuses.get(t, 'not in the report')})" for t in absent]
        reasons.append(
            Reason(
                "fault.expected_failure_absent",
                f"expected to fail but did not: {few_names(shown)}",
                {"absent": absent[:SHOWN], "expected": required[:SHOWN]},
            )
        )
    by_name = {r.test: r for r in failed}
    for test, text in sorted(causes.items()):
        if test in by_name and text not in traceback_text(by_name[test], "failure_causes"):
            reasons.append(
                Reason(
                    "fault.other_cause",
                    f"{test}: its traceback does not contain {text!r}",
                    {"test": test, "expected_in_traceback": text},
                )
            )
    return reasons


def _pins(report: Report, params: Mapping[str, Any]) -> list[Reason]:
    reasons: list[Reason] = []
    planned = params["planned"]
    if planned is not None and report.planned != planned:
        reasons.append(
            Reason(
                "pin.planned",
                f"the report plans {report.planned} scenarios, the case pins {planned}",
                {"pinned": planned, "reported": report.planned},
            )
        )
    if params["scenarios"]:
        pinned = set(params["scenarios"])
        held = set(report.tests)
        missing, unpinned = sorted(pinned - held), sorted(held - pinned)
        if missing or unpinned:
            parts = [f"missing {few_names(missing)}"] if missing else []
            parts += [f"not pinned {few_names(unpinned)}"] if unpinned else []
            reasons.append(
                Reason(
                    "pin.scenarios",
                    "the report's scenarios are not the pinned list: " + "; ".join(parts),
                    {"missing": missing[:SHOWN], "not_pinned": unpinned[:SHOWN]},
                )
            )
    counts: Mapping[str, int] = params["expected_failures"]
    failed = report.failed
    if counts:
        expected = counts.get(report.fault)
        if expected != len(failed):
            pinned_text = (
                f"the case expects {expected}"
                if expected is not None
                else f"the case pins no count for fault {report.fault!r} "
                f"(it pins {', '.join(sorted(counts))})"
            )
            reasons.append(
                Reason(
                    "pin.failure_count",
                    f"fault {report.fault!r}: {len(failed)} test(s) failed, {pinned_text}",
                    {"fault": report.fault, "expected": expected, "failed": len(failed)},
                )
            )
    if params["assertion_failures"]:
        for record in failed:
            raised = failure_type(traceback_text(record, "assertion_failures"))
            if raised != "AssertionError":
                seen = f"ends in {raised}" if raised else "names no exception"
                if record.traceback is None:
                    seen = "has no traceback"
                reasons.append(
                    Reason(
                        "pin.not_assertion",
                        f"{record.test} failed, but its traceback {seen}: not an assertion, "
                        "so not a detection",
                        {"test": record.test, "raised": raised},
                    )
                )
    return reasons


_FAULT_REASONS_V3 = {
    **_FAULT_REASONS_V2,
    **{
        f"report.missing.{key}": f"error: the report has no {key!r} field, which the seed's "
        "judge reads: it cannot judge the report, so neither does this version"
        for key in _SEED_READS
    },
    **{
        f"report.missing.{key}": f"error: a record has no {key!r} field, which the seed's "
        "judge reads for every record"
        for key in _SEED_RECORD_READS
    },
}


@checker(
    "fault-report",
    3,
    roles=[
        Role(
            "report",
            InputKind.DATA,
            "a runner report: fault, records [{test, status, traceback?}], planned, complete, "
            "blocked, executed, each present (blocked may be null); other fields ignored",
            reading=LENIENT,
        )
    ],
    params=list(fault_report_v2.params),
    reasons=_FAULT_REASONS_V3,
    counterexample=_fault_counterexample,
    example_params=[{"want": "defect_detected", "assertion_failures": True}],
)
def fault_report_v3(inputs: Mapping[str, Any], params: Mapping[str, Any]) -> Verdict:
    """A report the seed's judge can read earns the wanted judgement and holds the pins.

    fault-report@2's judgement, params, pins and reasons, on a report that holds every
    field the seed's judge (the article's ``check_reports.py``) reads: ``fault``,
    ``records``, ``planned``, ``complete``, ``blocked``, ``executed``, and ``test`` and
    ``status`` in every record. A report without one is an ``error``
    (``report.missing.<field>``, naming the first in the order the seed reads them; the
    message lists every one): the seed's judge would raise on it, so it has no judgement
    to reproduce. @2 read a missing ``blocked`` as "not blocked" and judged the report.
    A field the seed's judge skips on a short path (``blocked`` after ``planned: 0``) is
    still required: the report is outside what the judgement is defined on. ``blocked:
    null`` is present (the seed reads it as not blocked) and ``traceback`` is optional.

    Param ranges (checked here, ``params.invalid`` outside them): ``planned`` null or
    >= 1, ``expected_failures`` counts >= 0, ``want`` one of the seven judgements.

    A pass does not authenticate the report, and several failed tests for one injected
    fault are one detected defect, not several.
    """
    _check_fault_params(params)
    missing = missing_fields(inputs["report"])
    if missing:
        first = missing[0].rpartition(".")[2] if missing[0].startswith("records[") else missing[0]
        raise CheckerInputError(
            f"report.missing.{first}",
            f"the report has no {few_names(missing)}: the seed's judge reads every one of these "
            "fields and could not judge this report (write each; blocked may be null or false)",
        )
    return fault_report_v2.function(inputs, params)
