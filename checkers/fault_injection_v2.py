"""Fault-injection reports and repeated trials (seed 001), second versions.

``fault-report@1`` and ``trial-stats@1`` (:mod:`checkers.fault_injection`) stay as they
are. The versions here read what real runners and harnesses write:

* ``fault-report@2`` refuses only what its verdict reads (a traceback stored as a list or
  a mapping, ``blocked`` as null or a mapping, NaN in a duration no longer make a report
  undecidable), runs in time linear in the report's size, and lets a case pin what the
  report must hold: the planned count or the list of scenarios, the failure count
  expected per fault, and that every failed test failed on an assertion.
* ``trial-stats@2`` reads per-sample records through a documented field mapping (a task
  id, a 0- or 1-based sample index, ``passed`` or a result string, the run's config once),
  accepts n >= k samples per task with the unbiased pass@k estimator, reports the mean of
  per-task means, and caps its tolerance.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from functools import cached_property
from typing import Any, NamedTuple

from . import fault_injection as v1
from .api import CheckerInputError, InputKind, Param, Reading, Reason, Role, Verdict, checker

__all__ = [
    "FIGURES",
    "Sample",
    "failure_type",
    "fault_report_v2",
    "judge",
    "parse_report",
    "parse_samples",
    "pass_at_k",
    "pass_hat_k",
    "trial_stats_v2",
]

_LENIENT = Reading(yaml_aliases=True, json_constants=True)
_SHOWN = 20  # names listed in a message or in details before "(+N more)"
MAX_TOLERANCE = 0.05


def _few(names: Sequence[str]) -> str:
    shown = ", ".join(names[:_SHOWN])
    return shown + (f" (+{len(names) - _SHOWN} more)" if len(names) > _SHOWN else "")


# --------------------------------------------------------------------------- fault-report


class Record(NamedTuple):
    """One scenario's result; ``traceback`` is kept as written and read only when asked.
    (A tuple: a report may hold hundreds of thousands.)"""

    test: str
    status: str
    traceback: Any = None


@dataclass(frozen=True)
class Report:
    planned: int
    executed: int
    complete: bool
    blocked: bool
    fault: str
    records: tuple[Record, ...]

    @cached_property
    def failed(self) -> list[Record]:
        return [r for r in self.records if r.status == "failed"]


def _blocked(value: Any) -> bool | None:
    """The seed's ``if report["blocked"]``, for the values whose truth is not in doubt:
    null, booleans, counts, lists and mappings. None for text (the seed reads "false" as
    blocked) and other values: refused."""
    if value is None:
        return False
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        return value != 0
    if isinstance(value, list | Mapping):
        return bool(value)
    return None


def parse_report(value: Any) -> Report:
    """The fields the judgement reads, checked; every other field (durations, metadata,
    tracebacks until a pin asks for them) is ignored whatever it holds."""
    if not isinstance(value, Mapping):
        raise CheckerInputError(
            "input.invalid", f"report: expected a mapping, observed {v1._show(value)}"
        )
    problems: list[str] = []

    def count(key: str) -> int:
        item = value.get(key)
        if key not in value:
            problems.append(f"report.{key}: missing (expected an integer)")
        elif not isinstance(item, int) or isinstance(item, bool):
            problems.append(f"report.{key}: expected an integer, observed {v1._show(item)}")
        else:
            return item
        return 0

    planned, executed = count("planned"), count("executed")
    complete = value.get("complete")
    if not isinstance(complete, bool):
        # Stricter than the seed's judge, which reads the text "false" as complete.
        problems.append(f"report.complete: expected true or false, observed {v1._show(complete)}")
    blocked = _blocked(value.get("blocked"))
    if blocked is None:
        problems.append(
            "report.blocked: expected null, true/false, a count, a list or a mapping of "
            f"blocked items, observed {v1._show(value.get('blocked'))}"
        )
    fault = value.get("fault")
    if not isinstance(fault, str):
        problems.append(
            f'report.fault: expected a fault name or "none", observed {v1._show(fault)}'
        )
    raw_records = value.get("records")
    records: list[Record] = []
    if not isinstance(raw_records, list):
        problems.append(
            f"report.records: expected a list of {{test, status}}, observed {v1._show(raw_records)}"
        )
        raw_records = []
    append = records.append
    for index, raw in enumerate(raw_records):
        if type(raw) is dict or isinstance(raw, Mapping):
            test, status = raw.get("test"), raw.get("status")
            if isinstance(test, str) and test and isinstance(status, str) and status:
                append(Record(test, status, raw.get("traceback")))
                continue
        problems.extend(_record_problems(raw, f"report.records[{index}]"))
        if len(problems) >= _SHOWN:
            break
    if problems:
        raise CheckerInputError("input.invalid", "; ".join(problems))
    return Report(planned, executed, bool(complete), bool(blocked), str(fault), tuple(records))


def _record_problems(raw: Any, where: str) -> list[str]:
    if not isinstance(raw, Mapping):
        return [f"{where}: expected a mapping, observed {v1._show(raw)}"]
    test, status = raw.get("test"), raw.get("status")
    problems = []
    if not isinstance(test, str) or not test:
        problems.append(f"{where}.test: expected a test name, observed {v1._show(test)}")
    if not isinstance(status, str) or not status:
        problems.append(f"{where}.status: expected a status, observed {v1._show(status)}")
    return problems


def judge(report: Report, known_faults: Sequence[str] = v1.SEED_FAULTS) -> v1.Judgement:
    """The seed's judgement in the seed's order, in time linear in the number of records."""
    incomplete: list[str] = []
    if report.planned <= 0:
        incomplete.append(f"planned is {report.planned}: nothing was planned")
    if not report.complete:
        incomplete.append("the runner marked the run not complete")
    if report.blocked:
        incomplete.append("the runner reports blocked scenarios")
    if report.executed != report.planned:
        incomplete.append(f"executed {report.executed} of {report.planned} planned")
    if len(report.records) != report.executed:
        incomplete.append(f"{len(report.records)} records for {report.executed} executed")
    counts = Counter(r.test for r in report.records)
    duplicates = sorted(name for name, n in counts.items() if n > 1)
    if duplicates:
        incomplete.append(f"duplicate test names: {_few(duplicates)}")
    if incomplete:
        return v1.Judgement("incomplete", tuple(incomplete))
    others = [r for r in report.records if r.status not in ("passed", "failed")]
    if others:
        shown = [f"{r.test}: status {r.status!r}" for r in others[:_SHOWN]]
        if len(others) > _SHOWN:
            shown.append(f"(+{len(others) - _SHOWN} more)")
        return v1.Judgement("execution_error_or_skip", tuple(shown))
    known = set(known_faults)
    any_failed = any(r.status == "failed" for r in report.records)
    if report.fault == v1.BASELINE_FAULT:
        return v1.Judgement("baseline_fail" if any_failed else "baseline_pass")
    if report.fault in known:
        return v1.Judgement("defect_detected" if any_failed else "defect_missed")
    return v1.Judgement("unknown_fault")


def _traceback_text(record: Record, why: str) -> str:
    """A failed test's traceback as text, for a pin that reads it: text, or a list of
    lines (joined). Anything else is refused here, and only here."""
    value = record.traceback
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(line, str) for line in value):
        return "\n".join(value)
    raise CheckerInputError(
        "input.invalid",
        f"{record.test}: {why} reads its traceback, which is {v1._show(value)}; expected text "
        "or a list of lines",
    )


# The exception a traceback ends in: pytest's location line ("tests/x.py:60: ConnectionError"),
# an "E   Name: message" line, or a final "Name: message" line as the stdlib prints it.
_LOCATION = re.compile(r"^\S+:\d+: ([A-Za-z_][\w.]*)\s*$")
_RAISED = re.compile(
    r"^(?:E\s+)?([A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt|Failed))(?::|\s*$)"
)
_PYTEST_ASSERT = re.compile(r"^E\s+assert\b")


def failure_type(traceback: str) -> str | None:
    """The name of the exception a failed test's traceback ends in (``AssertionError`` for
    pytest's rewritten ``E   assert ...``), or None when it names none."""
    found: str | None = None
    for line in traceback.splitlines():
        line = line.rstrip()
        match = _LOCATION.match(line) or _RAISED.match(line)
        if match:
            found = match.group(1).rsplit(".", 1)[-1]
        elif _PYTEST_ASSERT.match(line) and found is None:
            found = "AssertionError"
    return found


_FAULT_REASONS_V2 = {
    **dict(v1.fault_report.reasons),
    "pin.planned": "the report's planned count is not the count the case pins",
    "pin.scenarios": "the scenarios in the report are not the list the case pins "
    "(one missing or one not pinned)",
    "pin.failure_count": "the number of failed tests is not the count the case expects for "
    "the report's fault (or the case pins no count for that fault)",
    "pin.not_assertion": "a failed test did not fail on an assertion (e.g. a connection "
    "error recorded as a failure): it is not a detection",
}


def _fault_counterexample(params: Mapping[str, Any]) -> Mapping[str, Any] | None:
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
            reading=_LENIENT,
        )
    ],
    params=[
        *v1.fault_report.params,
        Param(
            "planned",
            "the planned scenario count the report must state (null = not pinned)",
            (int, type(None)),
            None,
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
      duration, say) and ignored. Stricter than the seed's judge, on purpose: ``complete``
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
    report = parse_report(inputs["report"])
    known = v1._string_list(params["known_faults"], "known_faults")
    earned = judge(report, known)
    failed = [r.test for r in report.failed]
    details: dict[str, Any] = {
        "judgement": earned.name,
        "fault": report.fault,
        "planned": report.planned,
        "executed": report.executed,
        "passed": sum(r.status == "passed" for r in report.records),
        "failed": len(failed),
        "failed_tests": failed[:_SHOWN],
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
            + "; ".join(r.message for r in reasons[:_SHOWN]),
            reasons,
            **details,
        )
    return Verdict.passed(_summary(report, earned, len(failed)), **details)


def _check_fault_params(params: Mapping[str, Any]) -> None:
    """Check the params as @1 does (by calling it on an empty report), then the pins."""
    base = {k: params[k] for k in ("want", "failing_tests", "failure_causes", "known_faults")}
    try:
        v1.fault_report.function({"report": {}}, base)
    except CheckerInputError as exc:
        if exc.code == "params.invalid":
            raise
    planned = params["planned"]
    if planned is not None and planned <= 0:
        raise CheckerInputError(
            "params.invalid", f"planned: expected a count >= 1, observed {planned}"
        )
    if params["scenarios"]:
        names = v1._string_list(params["scenarios"], "scenarios")
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


def _summary(report: Report, earned: v1.Judgement, failed: int) -> str:
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
                f"failed but not expected to: {_few(extra)}",
                {"unexpected": extra[:_SHOWN], "expected": failing_tests[:_SHOWN]},
            )
        )
    if absent:
        statuses = {r.test: r.status for r in report.records}
        shown = [f"{t} ({statuses.get(t, 'not in the report')})" for t in absent]
        reasons.append(
            Reason(
                "fault.expected_failure_absent",
                f"expected to fail but did not: {_few(shown)}",
                {"absent": absent[:_SHOWN], "expected": required[:_SHOWN]},
            )
        )
    by_name = {r.test: r for r in failed}
    for test, text in sorted(causes.items()):
        if test in by_name and text not in _traceback_text(by_name[test], "failure_causes"):
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
        held = {r.test for r in report.records}
        missing, unpinned = sorted(pinned - held), sorted(held - pinned)
        if missing or unpinned:
            parts = [f"missing {_few(missing)}"] if missing else []
            parts += [f"not pinned {_few(unpinned)}"] if unpinned else []
            reasons.append(
                Reason(
                    "pin.scenarios",
                    "the report's scenarios are not the pinned list: " + "; ".join(parts),
                    {"missing": missing[:_SHOWN], "not_pinned": unpinned[:_SHOWN]},
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
            raised = failure_type(_traceback_text(record, "assertion_failures"))
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


# --------------------------------------------------------------------------- trial-stats

DEFAULT_FIELDS = {"task": "task", "sample": "trial", "outcome": "outcome", "config": "config"}
DEFAULT_OUTCOMES = {
    "success": "success",
    "failure": "failure",
    "environment_failure": "environment_failure",
    "passed": "success",
    "failed": "failure",
}

FIGURES: Mapping[str, tuple[bool, str]] = {
    "trials": (True, "samples recorded (every record)"),
    "environment_failures": (True, "samples that ended in an environment failure"),
    "counted_trials": (True, "samples in the single-run success-rate denominator"),
    "successes": (True, "successful samples"),
    "success_rate": (False, "pooled single-run success rate: successes / counted_trials"),
    "mean_success_rate": (
        False,
        "mean over the tasks with >= k counted samples of each task's success rate "
        "(the mean of per-task means; equals pass@1)",
    ),
    "tasks": (True, "tasks with >= k counted samples: the denominator of the task means"),
    "tasks_excluded": (True, "tasks with fewer than k counted samples (listed apart)"),
    "tasks_with_a_success": (True, "counted tasks where at least one sample succeeded"),
    "tasks_all_succeeded": (True, "counted tasks where every counted sample succeeded"),
    "pass_at_k": (False, "mean over tasks of 1 - C(n-c, k) / C(n, k) (Chen et al. 2021)"),
    "pass_hat_k": (False, "mean over tasks of C(c, k) / C(n, k) (Yao et al. 2024, tau-bench)"),
}


def pass_at_k(n: int, c: int, k: int) -> Fraction:
    """The unbiased estimator of pass@k from n samples with c successes (Chen et al.,
    "Evaluating Large Language Models Trained on Code", 2021): the probability that a
    random k of the n samples hold at least one success. For n == k: 1 if c >= 1."""
    return 1 - Fraction(math.comb(n - c, k), math.comb(n, k))


def pass_hat_k(n: int, c: int, k: int) -> Fraction:
    """The unbiased estimator of pass^k (tau-bench, Yao et al. 2024): the probability that
    a random k of the n samples all succeed. For n == k: 1 if c == n."""
    return Fraction(math.comb(c, k), math.comb(n, k))


@dataclass(frozen=True)
class Sample:
    task: str
    index: int
    outcome: str
    config: Any
    line: int


def _mapping_param(params: Mapping[str, Any], name: str, base: Mapping[str, str]) -> dict[str, str]:
    given = params[name]
    if not all(isinstance(k, str) and isinstance(v, str) for k, v in given.items()):
        raise CheckerInputError("params.invalid", f"{name}: expected a table of text -> text")
    return {**base, **given}


def _fields(params: Mapping[str, Any]) -> dict[str, str]:
    fields = _mapping_param(params, "fields", DEFAULT_FIELDS)
    unknown = sorted(set(fields) - set(DEFAULT_FIELDS))
    if unknown:
        raise CheckerInputError(
            "params.invalid",
            f"fields: unknown role(s) {unknown}; map {', '.join(DEFAULT_FIELDS)} to record fields",
        )
    if not fields["task"] or not fields["outcome"]:
        raise CheckerInputError("params.invalid", "fields: task and outcome need a field name")
    named = [v for v in fields.values() if v]
    if len(set(named)) != len(named):
        raise CheckerInputError("params.invalid", "fields: two roles read the same field")
    return fields


def _outcome(value: Any, outcomes: Mapping[str, str]) -> str | None:
    if isinstance(value, bool):
        return "success" if value else "failure"
    if not isinstance(value, str):
        return None
    if value in outcomes:
        return outcomes[value]
    head = value.split(":", 1)[0].strip()  # human-eval: "failed: AssertionError"
    return outcomes.get(head) if ":" in value else None


def _finite(value: Any) -> Any:
    """Plain data for a verdict: NaN and Infinity (which the reader accepts) as text."""
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, Mapping):
        return {str(k): _finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v) for v in value]
    return value


def parse_samples(
    lines: Any, fields: Mapping[str, str], first: int, outcomes: Mapping[str, str]
) -> tuple[list[Sample], Any]:
    """Per-sample records through the field mapping, and the run's config (from a header
    record, or None when each record carries its own). Every problem is collected."""
    if not isinstance(lines, list):
        raise CheckerInputError("input.invalid", "trials: expected JSON Lines records")
    records = [(int(n), v) for n, v in lines]
    header: Any = None
    tf, sf, of, cf = fields["task"], fields["sample"], fields["outcome"], fields["config"]
    if records and isinstance(records[0][1], Mapping) and tf not in records[0][1]:
        line, first_record = records[0]
        if not cf or cf not in first_record:
            raise CheckerInputError(
                "input.invalid",
                f"line {line}: a record without {tf!r} must be the run's header with its "
                f"configuration in {cf or 'config'!r}",
            )
        header = first_record[cf]
        records = records[1:]
    problems: list[str] = []
    samples: list[Sample] = []
    seen: dict[tuple[str, int], int] = {}
    order: Counter[str] = Counter()
    for line, value in records:
        where = f"line {line}"
        if len(problems) >= _SHOWN:
            break
        if not isinstance(value, Mapping):
            problems.append(f"{where}: expected an object, observed {v1._show(_finite(value))}")
            continue
        task = value.get(tf)
        if not isinstance(task, str | int) or isinstance(task, bool) or task == "":
            problems.append(
                f"{where}: {tf}: expected a task id, observed {v1._show(_finite(task))}"
            )
            continue
        task = str(task)
        if sf:
            index = value.get(sf)
            if not isinstance(index, int) or isinstance(index, bool) or index < first:
                problems.append(
                    f"{where}: {sf}: expected an integer >= {first}, observed "
                    f"{v1._show(_finite(index))}"
                )
                continue
        else:
            index = first + order[task]
        order[task] += 1
        outcome = _outcome(value.get(of), outcomes)
        if outcome is None:
            problems.append(
                f"{where}: {of}: {v1._show(_finite(value.get(of)))} is not true/false nor a result "
                f"the outcomes table maps ({', '.join(sorted(outcomes))}); add it to 'outcomes'"
            )
            continue
        if cf and cf in value:
            config = value[cf]
        elif header is not None:
            config = header
        else:
            problems.append(
                f"{where}: no {cf or 'config'!r} and no header record with the run's config"
            )
            continue
        if (task, index) in seen:
            problems.append(
                f"{where}: task {task!r} sample {index} already on line {seen[task, index]}"
            )
            continue
        seen[task, index] = line
        samples.append(Sample(task, index, outcome, config, line))
    if problems:
        raise CheckerInputError("input.invalid", "; ".join(problems))
    if not samples:
        raise CheckerInputError("input.invalid", "trials: no sample records (nothing to check)")
    by_task: dict[str, list[int]] = {}
    for sample in samples:
        by_task.setdefault(sample.task, []).append(sample.index)
    gaps = []
    for task, indices in sorted(by_task.items()):
        missing = sorted(set(range(first, first + len(indices))) - set(indices))
        if missing:
            gaps.append(f"task {task!r} lacks sample(s) {_few([str(m) for m in missing])}")
    if gaps:
        raise CheckerInputError(
            "input.invalid",
            f"samples are numbered from {first} without gaps; {'; '.join(gaps[:_SHOWN])} "
            "(a dropped sample changes every rate: keep every sample, or set first_sample)",
        )
    return samples, header


@dataclass(frozen=True)
class TaskCount:
    task: str
    launched: int
    environment_failures: int
    counted: int
    successes: int

    def to_dict(self, k: int) -> dict[str, Any]:
        included = self.counted >= k
        return {
            "launched": self.launched,
            "environment_failures": self.environment_failures,
            "counted": self.counted,
            "successes": self.successes,
            "success_rate": self.successes / self.counted if self.counted else None,
            "included": included,
            "pass_at_k": float(pass_at_k(self.counted, self.successes, k)) if included else None,
            "pass_hat_k": float(pass_hat_k(self.counted, self.successes, k)) if included else None,
        }


def _counts(samples: Sequence[Sample], rule: str) -> list[TaskCount]:
    by_task: dict[str, list[Sample]] = {}
    for sample in samples:
        by_task.setdefault(sample.task, []).append(sample)
    out = []
    for task in sorted(by_task):
        rows = by_task[task]
        env = sum(s.outcome == "environment_failure" for s in rows)
        counted = len(rows) - env if rule == "exclude" else len(rows)
        successes = sum(s.outcome == "success" for s in rows)
        out.append(TaskCount(task, len(rows), env, counted, successes))
    return out


def figures_of(tasks: Sequence[TaskCount], k: int) -> dict[str, int | float | None]:
    included = [t for t in tasks if t.counted >= k]
    counted = sum(t.counted for t in tasks)
    successes = sum(t.successes for t in tasks)

    def mean(values: list[Fraction]) -> float | None:
        return float(sum(values, Fraction(0)) / len(values)) if values else None

    return {
        "trials": sum(t.launched for t in tasks),
        "environment_failures": sum(t.environment_failures for t in tasks),
        "counted_trials": counted,
        "successes": successes,
        "success_rate": successes / counted if counted else None,
        "mean_success_rate": mean([Fraction(t.successes, t.counted) for t in included]),
        "tasks": len(included),
        "tasks_excluded": len(tasks) - len(included),
        "tasks_with_a_success": sum(t.successes >= 1 for t in included),
        "tasks_all_succeeded": sum(t.successes == t.counted for t in included),
        "pass_at_k": mean([pass_at_k(t.counted, t.successes, k) for t in included]),
        "pass_hat_k": mean([pass_hat_k(t.counted, t.successes, k) for t in included]),
    }


def _trials_counterexample(params: Mapping[str, Any]) -> Mapping[str, Any] | None:
    k = params.get("k")
    if not isinstance(k, int) or isinstance(k, bool) or k < 1:
        return None
    fields = {**DEFAULT_FIELDS, **params.get("fields", {})}
    first = params.get("first_sample", 1)
    lines: list[tuple[int, dict[str, Any]]] = []
    for n, task in enumerate(("task-a", "task-b")):
        for i in range(k):
            record: dict[str, Any] = {fields["task"]: task, fields["outcome"]: True}
            if fields["sample"]:
                record[fields["sample"]] = first + i
            record[fields["config"] or "config"] = {"run": n}  # two configs: stats.config_mixed
            lines.append((len(lines) + 1, record))
    return {"trials": lines}


@checker(
    "trial-stats",
    2,
    roles=[
        Role(
            "trials",
            InputKind.JSONL,
            "one sample per line through the field mapping (default {task, trial, outcome, "
            "config}); optionally a first header line holding only the run's config",
            reading=_LENIENT,
        )
    ],
    params=[
        Param(
            "k", "samples per task drawn for pass@k and pass^k (>= 1; tasks need n >= k)", (int,)
        ),
        Param(
            "claimed",
            "the figures the report states, figure name -> value (fractions as 0..1); at least one",
            (dict,),
        ),
        Param(
            "tolerance",
            "absolute tolerance for fractions (counts must match exactly); below 0.05",
            (float, int),
            0.0005,
        ),
        Param(
            "environment_failures",
            '"exclude" (counted apart, out of every denominator) or "count_as_failure"',
            (str,),
            "exclude",
        ),
        Param(
            "fields",
            "record field of each role: {task, sample, outcome, config} (defaults task, trial, "
            'outcome, config); sample "" = numbered in file order per task; config "" = none',
            (dict,),
            {},
        ),
        Param("first_sample", "the first sample index of each task: 0 or 1", (int,), 1),
        Param(
            "outcomes",
            "result text -> success | failure | environment_failure, added to the defaults "
            "(success, failure, environment_failure, passed, failed); 'failed: why' reads as "
            "'failed'; true/false are success/failure",
            (dict,),
            {},
        ),
    ],
    reasons={
        "stats.mismatch": "a claimed figure differs from the one recomputed from the samples",
        "stats.config_mixed": (
            "the samples do not share one configuration, so they are not repeats of one setup"
        ),
    },
    counterexample=_trials_counterexample,
)
def trial_stats_v2(inputs: Mapping[str, Any], params: Mapping[str, Any]) -> Verdict:
    """Claimed pass@k / pass^k / success-rate figures match per-sample harness records.

    Records are read through a field mapping (``fields``): the task id, the sample index
    (0- or 1-based, ``first_sample``; indices of a task must run without gaps, so a
    dropped sample is refused, not silently absent), the outcome (true/false, or a result
    text mapped by ``outcomes``: human-eval's ``result`` "passed" / "failed: ..." / "timed
    out" reads with ``{"timed out": failure}``), and the configuration, per record or
    once in a header line (a first record without a task id). Other fields are ignored,
    NaN included.

    With n counted samples and c successes per task (environment failures under the
    stated rule, as trial-stats@1), tasks with n >= k count: pass@k is the mean over them
    of the unbiased estimator 1 - C(n-c, k)/C(n, k) (Chen et al. 2021), pass^k of
    C(c, k)/C(n, k) (tau-bench, Yao et al. 2024); both are @1's counts when n == k.
    ``mean_success_rate`` is the mean of the per-task means c/n (pass@1), beside the
    pooled ``success_rate``. Tasks with fewer than k are listed apart, never dropped
    silently. ``tolerance`` is capped below 0.05, as for classification-metrics.

    Fails ``stats.mismatch`` per claimed figure off, ``stats.config_mixed`` when the
    samples ran with more than one configuration. A pass re-counts the records; it does
    not re-run anything.
    """
    k, claimed, rule = params["k"], params["claimed"], params["environment_failures"]
    tolerance = params["tolerance"]
    if k < 1:
        raise CheckerInputError("params.invalid", f"k: expected an integer >= 1, observed {k}")
    if rule not in v1.ENV_RULES:
        raise CheckerInputError(
            "params.invalid",
            f"environment_failures: {rule!r} is not one of {', '.join(v1.ENV_RULES)}",
        )
    if not math.isfinite(tolerance) or not 0 <= tolerance < MAX_TOLERANCE:
        raise CheckerInputError(
            "params.invalid",
            f"tolerance: expected 0 <= t < {MAX_TOLERANCE} (wider accepts claims the records do "
            f"not support), observed {tolerance}",
        )
    if params["first_sample"] not in (0, 1):
        raise CheckerInputError("params.invalid", "first_sample: expected 0 or 1")
    _check_claimed(claimed)
    outcomes = _mapping_param(params, "outcomes", DEFAULT_OUTCOMES)
    wrong = sorted(v for v in outcomes.values() if v not in v1.OUTCOMES)
    if wrong:
        raise CheckerInputError(
            "params.invalid", f"outcomes: {wrong} are not one of {', '.join(v1.OUTCOMES)}"
        )
    samples, header = parse_samples(
        inputs["trials"], _fields(params), params["first_sample"], outcomes
    )
    tasks = _counts(samples, rule)
    figures = figures_of(tasks, k)
    if figures["tasks"] == 0:
        raise CheckerInputError(
            "input.invalid",
            f"no task has {k} counted samples: pass@{k} and pass^{k} have no denominator",
        )
    reasons: list[Reason] = []
    for name, value in sorted(claimed.items()):
        actual = figures[name]
        is_count = FIGURES[name][0]
        off = (
            actual is None
            or (is_count and value != actual)
            or (not is_count and abs(float(value) - float(actual)) > tolerance + 1e-12)
        )
        if off:
            reasons.append(
                Reason(
                    "stats.mismatch",
                    f"{name}: claimed {value}, recomputed {_describe(name, figures)}",
                    {"figure": name, "claimed": value, "recomputed": actual},
                )
            )
    configs: dict[str, tuple[Any, list[int]]] = {}
    for sample in samples:
        key = json.dumps(_finite(sample.config), sort_keys=True, default=str)
        configs.setdefault(key, (_finite(sample.config), []))[1].append(sample.line)
    if len(configs) > 1:
        shown = "; ".join(
            f"{v1._show(c)} on lines {v1._lines(ls)}" for c, ls in list(configs.values())[:5]
        )
        reasons.append(
            Reason(
                "stats.config_mixed",
                f"{len(configs)} configurations in one set of samples: {shown}",
                {
                    "configurations": [
                        {"config": c, "lines": ls[:_SHOWN]} for c, ls in configs.values()
                    ]
                },
            )
        )
    excluded = [t.task for t in tasks if t.counted < k]
    details: dict[str, Any] = {
        "k": k,
        "estimators": {
            "pass_at_k": "mean over tasks of 1 - C(n-c, k) / C(n, k) (Chen et al. 2021)",
            "pass_hat_k": "mean over tasks of C(c, k) / C(n, k) (Yao et al. 2024)",
        },
        "environment_failures_rule": v1._RULE_TEXT[rule],
        "figures": figures,
        "per_task": {t.task: t.to_dict(k) for t in tasks[:200]},
        "excluded_tasks": excluded[:200],
        "config": _finite(header) if header is not None else None,
    }
    summary = (
        f"pass@{k} {_describe('pass_at_k', figures)}, pass^{k} {_describe('pass_hat_k', figures)}, "
        f"single-run {_describe('success_rate', figures)}, mean of task means "
        f"{_describe('mean_success_rate', figures)}"
    )
    if excluded:
        summary += (
            f"; {len(excluded)} task(s) left out of the task means (fewer than {k} counted "
            f"samples): {_few(excluded)}"
        )
    if figures["environment_failures"]:
        summary += f"; {figures['environment_failures']} environment failure(s), " + (
            "excluded" if rule == "exclude" else "counted as failures"
        )
    if reasons:
        message = "; ".join(r.message for r in reasons) + f" (recomputed {summary})"
        return Verdict.failed(message, reasons, **details)
    return Verdict.passed(f"claimed figures match: {summary}", **details)


def _check_claimed(claimed: Mapping[str, Any]) -> None:
    if not claimed:
        raise CheckerInputError(
            "params.invalid", "claimed: empty; state at least one figure (nothing to check)"
        )
    problems: list[str] = []
    for name, value in claimed.items():
        if name not in FIGURES:
            problems.append(f"{name!r} is not a figure (one of {', '.join(FIGURES)})")
        elif FIGURES[name][0]:
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                problems.append(f"{name}: expected a count, observed {v1._show(value)}")
        elif (
            not isinstance(value, int | float)
            or isinstance(value, bool)
            or not math.isfinite(value)
            or not 0 <= value <= 1
        ):
            problems.append(f"{name}: expected a fraction 0..1, observed {v1._show(value)}")
    if problems:
        raise CheckerInputError("params.invalid", "claimed: " + "; ".join(problems))


def _describe(name: str, figures: Mapping[str, int | float | None]) -> str:
    value = figures[name]
    if value is None:
        return "undefined (empty denominator)"
    if name == "success_rate":
        return f"{v1._pct(value)} ({figures['successes']} of {figures['counted_trials']} samples)"
    if name in ("pass_at_k", "pass_hat_k", "mean_success_rate"):
        return f"{v1._pct(value)} (over {figures['tasks']} tasks)"
    return str(value)
