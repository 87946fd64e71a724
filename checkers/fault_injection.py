"""Fault-injection runner reports and repeated-trial statistics (seed 001).

Two questions from the inventory test workflow:

* ``fault-report@1``: what does one runner report earn? A replay of the reference
  scenarios against the normal service must pass completely; against a service with an
  injected fault it must fail *on a business assertion*. A report that did not run every
  planned scenario, or whose only "failure" is a connection error or an import error,
  earns nothing: an execution error never counts as a detection.
* ``trial-stats@1``: what do repeated trials of a few tasks support? Per task the
  single-run success rate, whether at least one of k trials succeeded (pass@k) and
  whether all k succeeded (pass^k); across tasks the fraction of tasks with each, always
  with its denominator, environment failures counted apart under a stated rule, and
  never with many repeats of one task counted as many tasks.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .api import (
    CheckerInputError,
    InputKind,
    Param,
    Reason,
    Role,
    Verdict,
    checker,
    first_failing,
)

# --------------------------------------------------------------------------- fault-report

JUDGEMENTS = (
    "incomplete",
    "execution_error_or_skip",
    "baseline_pass",
    "baseline_fail",
    "defect_detected",
    "defect_missed",
    "unknown_fault",
)
# The faults the seed's reference replay injects (ai-test-workflow, `python workflow.py demo`).
SEED_FAULTS = ("reject-writes", "double-reserve", "missing-record")
BASELINE_FAULT = "none"
# Judgements where some tests failed on an assertion, so "which tests" is a fair question.
_WITH_FAILURES = ("defect_detected", "baseline_fail")


@dataclass(frozen=True)
class TestRecord:
    """One scenario's result in a runner report."""

    test: str
    status: str
    traceback: str | None = None


@dataclass(frozen=True)
class RunnerReport:
    """The fields of a runner report the judgement reads (other fields are ignored)."""

    planned: int
    executed: int
    complete: bool
    blocked: bool
    fault: str
    records: tuple[TestRecord, ...]

    @property
    def failed_tests(self) -> list[str]:
        return [r.test for r in self.records if r.status == "failed"]


@dataclass(frozen=True)
class Judgement:
    """What a report earns, and why (``problems`` explains incomplete / error judgements)."""

    name: str
    problems: tuple[str, ...] = field(default=())


def parse_report(value: Any) -> RunnerReport:
    """Check a loaded report against the documented shape, collecting every problem."""
    if not isinstance(value, Mapping):
        raise CheckerInputError(
            "input.invalid", f"report: expected a mapping, observed {type(value).__name__}"
        )
    problems: list[str] = []

    def field_of(key: str, kinds: tuple[type, ...], label: str) -> Any:
        if key not in value:
            problems.append(f"report.{key}: missing (expected {label})")
            return None
        item = value[key]
        # bool is an int in Python; a count must not be true/false.
        if not isinstance(item, kinds) or (bool not in kinds and isinstance(item, bool)):
            problems.append(f"report.{key}: expected {label}, observed {_show(item)}")
            return None
        return item

    planned = field_of("planned", (int,), "an integer")
    executed = field_of("executed", (int,), "an integer")
    complete = field_of("complete", (bool,), "true or false")
    blocked_raw = field_of(
        "blocked", (bool, int, list), "true/false, a count or a list of blocked items"
    )
    fault = field_of("fault", (str,), 'a fault name or "none"')
    raw_records = field_of("records", (list,), "a list of {test, status, traceback?}")
    records: list[TestRecord] = []
    for index, raw in enumerate(raw_records or []):
        where = f"report.records[{index}]"
        if not isinstance(raw, Mapping):
            problems.append(f"{where}: expected a mapping, observed {_show(raw)}")
            continue
        test, status, trace = raw.get("test"), raw.get("status"), raw.get("traceback")
        if not isinstance(test, str) or not test:
            problems.append(f"{where}.test: expected a test name, observed {_show(test)}")
        if not isinstance(status, str) or not status:
            problems.append(f"{where}.status: expected a status, observed {_show(status)}")
        if trace is not None and not isinstance(trace, str):
            problems.append(f"{where}.traceback: expected text or null, observed {_show(trace)}")
        if isinstance(test, str) and isinstance(status, str):
            records.append(TestRecord(test, status, trace if isinstance(trace, str) else None))
    if problems:
        raise CheckerInputError("input.invalid", "; ".join(problems))
    return RunnerReport(
        planned=planned,
        executed=executed,
        complete=complete,
        blocked=bool(blocked_raw),
        fault=fault,
        records=tuple(records),
    )


def judge(report: RunnerReport, known_faults: Sequence[str] = SEED_FAULTS) -> Judgement:
    """The seed's judgement, in the seed's order: completeness first, then execution
    errors, then what the statuses mean for the injected fault."""
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
    names = [r.test for r in report.records]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        incomplete.append(f"duplicate test names: {', '.join(duplicates)}")
    if incomplete:
        return Judgement("incomplete", tuple(incomplete))

    others = [r for r in report.records if r.status not in ("passed", "failed")]
    if others:
        return Judgement(
            "execution_error_or_skip",
            tuple(f"{r.test}: status {r.status!r}" for r in others),
        )
    any_failed = bool(report.failed_tests)
    if report.fault == BASELINE_FAULT:
        return Judgement("baseline_fail" if any_failed else "baseline_pass")
    if report.fault in known_faults:
        return Judgement("defect_detected" if any_failed else "defect_missed")
    return Judgement("unknown_fault")


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
    planned), or for ``want: incomplete`` a complete baseline that passed."""
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
    if (failing_tests or causes) and want not in _WITH_FAILURES:
        raise CheckerInputError(
            "params.invalid",
            f"failing_tests/failure_causes apply only when want is one of "
            f"{', '.join(_WITH_FAILURES)}, not {want!r}",
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
        "passed": sum(r.status == "passed" for r in report.records),
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
    extra = [t for t in failed if t not in failing_tests] if failing_tests else []
    # Every named test must have failed: those of failing_tests, else those of causes
    # (a cause for a test that passed must not be silently skipped).
    required = failing_tests or sorted(causes)
    absent = [t for t in required if t not in failed]
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


# --------------------------------------------------------------------------- trial-stats

OUTCOMES = ("success", "failure", "environment_failure")
ENV_RULES = ("exclude", "count_as_failure")
_RULE_TEXT = {
    "exclude": (
        "environment failures are left out of every denominator and counted apart; "
        "a task needs k trials without environment failure to count for pass@k / pass^k"
    ),
    "count_as_failure": "environment failures count as failed trials (and are also listed apart)",
}


@dataclass(frozen=True)
class Trial:
    task: str
    trial: int
    outcome: str
    config: Mapping[str, Any]
    line: int


@dataclass(frozen=True)
class TaskStats:
    """One task's trials under the exclusion rule."""

    task: str
    launched: int
    environment_failures: int
    counted: int
    successes: int
    k: int

    @property
    def included(self) -> bool:
        """Whether the task has exactly k counted trials (enough for pass@k / pass^k)."""
        return self.counted == self.k

    @property
    def success_rate(self) -> float | None:
        return self.successes / self.counted if self.counted else None

    @property
    def pass_at_k(self) -> bool:
        return self.included and self.successes >= 1

    @property
    def pass_hat_k(self) -> bool:
        return self.included and self.successes == self.k

    def to_dict(self) -> dict[str, Any]:
        return {
            "launched": self.launched,
            "environment_failures": self.environment_failures,
            "counted": self.counted,
            "successes": self.successes,
            "success_rate": self.success_rate,
            "included": self.included,
            "pass_at_k": self.pass_at_k if self.included else None,
            "pass_hat_k": self.pass_hat_k if self.included else None,
        }


# Figures a report may claim: name -> (integer count?, description)
FIGURES: Mapping[str, tuple[bool, str]] = {
    "trials": (True, "trials launched (every record)"),
    "environment_failures": (True, "trials that ended in an environment failure"),
    "counted_trials": (True, "trials in the single-run success-rate denominator"),
    "successes": (True, "successful trials"),
    "success_rate": (False, "single-run success rate: successes / counted_trials"),
    "tasks": (True, "tasks with k counted trials: the pass@k / pass^k denominator"),
    "tasks_excluded": (True, "tasks with fewer than k counted trials (listed apart)"),
    "pass_at_k_tasks": (True, "tasks where at least one of k trials succeeded"),
    "pass_at_k": (False, "pass@k: pass_at_k_tasks / tasks"),
    "pass_hat_k_tasks": (True, "tasks where all k trials succeeded"),
    "pass_hat_k": (False, "pass^k: pass_hat_k_tasks / tasks"),
}


def parse_trials(lines: Any) -> list[Trial]:
    """Check loaded JSON Lines trial records, collecting every problem (by line)."""
    if not isinstance(lines, list):
        raise CheckerInputError("input.invalid", "trials: expected JSON Lines records")
    problems: list[str] = []
    trials: list[Trial] = []
    seen: dict[tuple[str, int], int] = {}
    for entry in lines:
        if not isinstance(entry, tuple | list) or len(entry) != 2:
            raise CheckerInputError("input.invalid", "trials: expected (line, record) pairs")
        line, value = entry
        where = f"line {line}"
        if not isinstance(value, Mapping):
            problems.append(f"{where}: expected an object, observed {_show(value)}")
            continue
        task: Any = value.get("task")
        number: Any = value.get("trial")
        outcome: Any = value.get("outcome")
        config: Any = value.get("config")
        bad = False
        if not isinstance(task, str) or not task:
            problems.append(f"{where}: task: expected a task id, observed {_show(task)}")
            bad = True
        if not isinstance(number, int) or isinstance(number, bool) or number < 1:
            problems.append(f"{where}: trial: expected an integer >= 1, observed {_show(number)}")
            bad = True
        if outcome not in OUTCOMES:
            problems.append(
                f"{where}: outcome: {_show(outcome)} is not one of {', '.join(OUTCOMES)}"
            )
            bad = True
        if not isinstance(config, Mapping):
            problems.append(f"{where}: config: expected an object, observed {_show(config)}")
            bad = True
        if bad:
            continue
        key = (task, number)
        if key in seen:
            problems.append(f"{where}: task {task!r} trial {number} already on line {seen[key]}")
            continue
        seen[key] = line
        trials.append(Trial(task, number, outcome, config, line))
    if problems:
        raise CheckerInputError("input.invalid", "; ".join(problems))
    if not trials:
        raise CheckerInputError("input.invalid", "trials: no trial records (nothing to check)")
    return trials


@dataclass(frozen=True)
class TrialStats:
    """Per-task and across-task figures, each with its denominator."""

    k: int
    rule: str
    tasks: tuple[TaskStats, ...]

    def figures(self) -> dict[str, int | float | None]:
        included = [t for t in self.tasks if t.included]
        counted = sum(t.counted for t in self.tasks)
        successes = sum(t.successes for t in self.tasks)
        at_k = sum(t.pass_at_k for t in included)
        hat_k = sum(t.pass_hat_k for t in included)
        return {
            "trials": sum(t.launched for t in self.tasks),
            "environment_failures": sum(t.environment_failures for t in self.tasks),
            "counted_trials": counted,
            "successes": successes,
            "success_rate": successes / counted if counted else None,
            "tasks": len(included),
            "tasks_excluded": len(self.tasks) - len(included),
            "pass_at_k_tasks": at_k,
            "pass_at_k": at_k / len(included) if included else None,
            "pass_hat_k_tasks": hat_k,
            "pass_hat_k": hat_k / len(included) if included else None,
        }


def compute_stats(trials: Sequence[Trial], k: int, rule: str) -> TrialStats:
    """Group trials by task (never pooling one task's repeats as many tasks) and count.

    A task with more than k counted trials is refused: which k of them would be
    reported is a choice the evidence must make, not this checker.
    """
    by_task: dict[str, list[Trial]] = {}
    for trial in trials:
        by_task.setdefault(trial.task, []).append(trial)
    stats: list[TaskStats] = []
    too_many: list[str] = []
    for task in sorted(by_task):
        rows = by_task[task]
        env = sum(t.outcome == "environment_failure" for t in rows)
        counted = len(rows) - env if rule == "exclude" else len(rows)
        if counted > k:
            too_many.append(f"{task!r} has {counted} counted trials")
        stats.append(
            TaskStats(
                task=task,
                launched=len(rows),
                environment_failures=env,
                counted=counted,
                successes=sum(t.outcome == "success" for t in rows),
                k=k,
            )
        )
    if too_many:
        raise CheckerInputError(
            "input.invalid",
            f"k is {k} but {'; '.join(too_many)}: pass@k and pass^k need exactly k "
            f"counted trials per task (set k, or keep only the trials the report used)",
        )
    return TrialStats(k=k, rule=rule, tasks=tuple(stats))


def independent_pass_at_k(p: float, k: int) -> float:
    """P(at least one of k succeeds) if trials were independent with success p."""
    return 1 - (1 - p) ** k


def independent_pass_hat_k(p: float, k: int) -> float:
    """P(all k succeed) if trials were independent with success p."""
    return float(p**k)


def _trials_counterexample(params: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """Trials whose figures differ from the claimed ones: k trials of one or two tasks,
    all successes or all failures. None when a claimed fraction is within ``tolerance``
    of both 0 and 1: no trial set can contradict it (a tolerance of 0.99 accepts a
    claimed pass@3 of 0.95 over 30 failed trials)."""
    k, claimed, tolerance = params["k"], params["claimed"], params["tolerance"]
    if not isinstance(k, int) or isinstance(k, bool) or not 1 <= k <= 10_000:
        return None
    if not isinstance(claimed, Mapping) or not isinstance(tolerance, int | float):
        return None
    for name, value in claimed.items():
        is_count = FIGURES.get(name, (True, ""))[0]
        if not is_count and isinstance(value, int | float) and max(value, 1 - value) <= tolerance:
            return None

    def trials(tasks: int, outcome: str, environment: bool) -> dict[str, Any]:
        rows = [(f"t{t}", n, outcome) for t in range(1, tasks + 1) for n in range(1, k + 1)]
        if environment:  # one more task, lost to the environment
            rows.append(("t-environment", 1, "environment_failure"))
        return {
            "trials": [
                (line, {"task": task, "trial": n, "outcome": result, "config": {}})
                for line, (task, n, result) in enumerate(rows, start=1)
            ]
        }

    candidates = (
        trials(tasks, outcome, environment)
        for environment in (False, True)
        for tasks in (1, 2)
        for outcome in ("failure", "success")
    )
    return first_failing(trial_stats.function, params, candidates)


@checker(
    "trial-stats",
    1,
    roles=[
        Role(
            "trials",
            InputKind.JSONL,
            "one trial per line: {task, trial, outcome: success|failure|environment_failure, "
            "config: {...}}",
        )
    ],
    params=[
        Param("k", "trials per task for pass@k and pass^k (>= 1)", (int,)),
        Param(
            "claimed",
            "the figures the report states, figure name -> value (fractions as 0..1); at least one",
            (dict,),
        ),
        Param(
            "tolerance",
            "absolute tolerance for fractions (counts must match exactly)",
            (float, int),
            0.0005,
        ),
        Param(
            "environment_failures",
            'the exclusion rule: "exclude" (counted apart, out of every denominator) '
            'or "count_as_failure"',
            (str,),
            "exclude",
        ),
    ],
    reasons={
        "stats.mismatch": "a claimed figure differs from the one recomputed from the trials",
        "stats.config_mixed": (
            "the trials do not share one configuration, so they are not repeats of one setup"
        ),
    },
    counterexample=_trials_counterexample,
)
def trial_stats(inputs: Mapping[str, Any], params: Mapping[str, Any]) -> Verdict:
    """Claimed pass@k / pass^k / single-run figures match the per-task trial records.

    Groups the trials by task: per task the single-run success rate, whether at least
    one of k trials succeeded (pass@k) and whether all k succeeded (pass^k); across tasks
    the fraction of tasks with each, over the tasks that have exactly k counted trials.
    Environment failures are counted apart under the stated rule (``exclude``: out of
    every denominator, so a task needs k trials without one; ``count_as_failure``).
    Repeats of one task are never counted as independent tasks; a task with more than k
    counted trials is an ``error`` (the report must say which k it used).

    Fails ``stats.mismatch`` for each claimed figure (name, claimed, recomputed) that is
    off by more than ``tolerance`` (fractions) or at all (counts), and
    ``stats.config_mixed`` when the trials ran with different configurations. Figures:
    trials, environment_failures, counted_trials, successes, success_rate, tasks,
    tasks_excluded, pass_at_k_tasks, pass_at_k, pass_hat_k_tasks, pass_hat_k. A pass
    re-counts the records; it does not re-run the trials, and says nothing about trials
    the records leave out.
    """
    k, claimed, tolerance, rule = (
        params["k"],
        params["claimed"],
        params.get("tolerance", 0.0005),
        params.get("environment_failures", "exclude"),
    )
    if isinstance(k, bool) or k < 1:
        raise CheckerInputError("params.invalid", f"k: expected an integer >= 1, observed {k}")
    if rule not in ENV_RULES:
        raise CheckerInputError(
            "params.invalid", f"environment_failures: {rule!r} is not one of {', '.join(ENV_RULES)}"
        )
    if isinstance(tolerance, bool) or not 0 <= tolerance < 1:
        raise CheckerInputError(
            "params.invalid", f"tolerance: expected 0 <= t < 1, observed {tolerance}"
        )
    _check_claimed(claimed)

    trials = parse_trials(inputs["trials"])
    stats = compute_stats(trials, k, rule)
    figures = stats.figures()
    if figures["tasks"] == 0:
        raise CheckerInputError(
            "input.invalid",
            f"no task has {k} counted trials: pass@{k} and pass^{k} have no denominator",
        )

    reasons: list[Reason] = []
    for name, value in sorted(claimed.items()):
        actual = figures[name]
        is_count = FIGURES[name][0]
        off = (
            actual is None
            or (is_count and value != actual)
            or (not is_count and abs(float(value) - float(actual)) > tolerance)
        )
        if off:
            recomputed = _describe(name, figures)
            reasons.append(
                Reason(
                    "stats.mismatch",
                    f"{name}: claimed {_fmt(name, value)}, recomputed {recomputed}",
                    {"figure": name, "claimed": value, "recomputed": actual},
                )
            )
    configs = _distinct_configs(trials)
    if len(configs) > 1:
        shown = "; ".join(f"{_show(c)} on lines {_lines(ls)}" for c, ls in configs)
        reasons.append(
            Reason(
                "stats.config_mixed",
                f"{len(configs)} configurations in one trial set: {shown}",
                {"configurations": [{"config": c, "lines": ls} for c, ls in configs]},
            )
        )

    p = figures["success_rate"]
    details: dict[str, Any] = {
        "k": k,
        "environment_failures_rule": _RULE_TEXT[rule],
        "figures": figures,
        "per_task": {t.task: t.to_dict() for t in stats.tasks},
        "excluded_tasks": [t.task for t in stats.tasks if not t.included],
        "if_independent": {
            "note": (
                "what the pooled single-run rate would give if trials were independent; "
                "real trials may be correlated, so this never replaces the observed figures"
            ),
            "pass_at_k": independent_pass_at_k(p, k) if p is not None else None,
            "pass_hat_k": independent_pass_hat_k(p, k) if p is not None else None,
        },
    }
    summary = (
        f"pass@{k} {_describe('pass_at_k', figures)}, "
        f"pass^{k} {_describe('pass_hat_k', figures)}, "
        f"single-run {_describe('success_rate', figures)}"
    )
    # Never drop a task or an environment failure silently: say so in the message.
    excluded = [t.task for t in stats.tasks if not t.included]
    if excluded:
        summary += (
            f"; {len(excluded)} task{'s' if len(excluded) > 1 else ''} left out of "
            f"pass@{k} / pass^{k} (fewer than {k} counted trials): "
            + ", ".join(excluded[:5])
            + (f" (+{len(excluded) - 5} more)" if len(excluded) > 5 else "")
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
                problems.append(f"{name}: expected a count, observed {_show(value)}")
        elif (
            not isinstance(value, int | float)
            or isinstance(value, bool)
            or not math.isfinite(value)
            or not 0 <= value <= 1
        ):
            problems.append(f"{name}: expected a fraction 0..1, observed {_show(value)}")
    if problems:
        raise CheckerInputError("params.invalid", "claimed: " + "; ".join(problems))


def _describe(name: str, figures: Mapping[str, int | float | None]) -> str:
    value = figures[name]
    if value is None:
        return "undefined (empty denominator)"
    if name == "success_rate":
        return f"{_pct(value)} ({figures['successes']} of {figures['counted_trials']} trials)"
    if name in ("pass_at_k", "pass_hat_k"):
        return f"{_pct(value)} ({figures[name + '_tasks']} of {figures['tasks']} tasks)"
    return str(value)


def _distinct_configs(trials: Sequence[Trial]) -> list[tuple[Any, list[int]]]:
    groups: dict[str, tuple[Any, list[int]]] = {}
    for trial in trials:
        key = json.dumps(trial.config, sort_keys=True, default=str)
        groups.setdefault(key, (dict(trial.config), []))[1].append(trial.line)
    return list(groups.values())


def _lines(lines: list[int]) -> str:
    shown = ", ".join(str(n) for n in lines[:5])
    return shown + (f" (+{len(lines) - 5} more)" if len(lines) > 5 else "")


def _pct(value: float) -> str:
    return f"{value * 100:.1f}%"


def _fmt(name: str, value: Any) -> str:
    return str(value) if FIGURES[name][0] else _pct(float(value))


def _show(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
    return text if len(text) <= 80 else text[:77] + "..."
