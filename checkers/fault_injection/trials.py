"""Repeated trials (seed 001), as @1 and as @2 read them, and the figures they support.

Repeats of one task are never counted as many tasks: pass@k and pass^k are per task.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from ..api import (
    CheckerInputError,
)
from ..arithmetic import left_sum
from ..plain import SAME, few, plain
from .report import SHOWN, few_names, shown_value

OUTCOMES = ("success", "failure", "environment_failure")
ENV_RULES = ("exclude", "count_as_failure")
RULE_TEXT = {
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
            problems.append(f"{where}: expected an object, observed {shown_value(value)}")
            continue
        task: Any = value.get("task")
        number: Any = value.get("trial")
        outcome: Any = value.get("outcome")
        config: Any = value.get("config")
        bad = False
        if not isinstance(task, str) or not task:
            problems.append(f"{where}: task: expected a task id, observed {shown_value(task)}")
            bad = True
        if not isinstance(number, int) or isinstance(number, bool) or number < 1:
            problems.append(
                f"{where}: trial: expected an integer >= 1, observed {shown_value(number)}"
            )
            bad = True
        if outcome not in OUTCOMES:
            problems.append(
                f"{where}: outcome: {shown_value(outcome)} is not one of {', '.join(OUTCOMES)}"
            )
            bad = True
        if not isinstance(config, Mapping):
            problems.append(f"{where}: config: expected an object, observed {shown_value(config)}")
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
        counted = left_sum(t.counted for t in self.tasks)
        successes = left_sum(t.successes for t in self.tasks)
        at_k = left_sum(t.pass_at_k for t in included)
        hat_k = left_sum(t.pass_hat_k for t in included)
        return {
            "trials": left_sum(t.launched for t in self.tasks),
            "environment_failures": left_sum(t.environment_failures for t in self.tasks),
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
        env = left_sum(t.outcome == "environment_failure" for t in rows)
        counted = len(rows) - env if rule == "exclude" else len(rows)
        if counted > k:
            too_many.append(f"{task!r} has {counted} counted trials")
        stats.append(
            TaskStats(
                task=task,
                launched=len(rows),
                environment_failures=env,
                counted=counted,
                successes=left_sum(t.outcome == "success" for t in rows),
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


def distinct_configs(trials: Sequence[Trial]) -> list[tuple[Any, list[int]]]:
    groups: dict[str, tuple[Any, list[int]]] = {}
    for trial in trials:
        key = json.dumps(trial.config, sort_keys=True, default=str)
        groups.setdefault(key, (dict(trial.config), []))[1].append(trial.line)
    return list(groups.values())


def line_numbers(lines: list[int]) -> str:
    return few([str(n) for n in lines], 5)


def pct(value: float) -> str:
    return f"{value * 100:.1f}%"


def fmt(name: str, value: Any) -> str:
    return str(value) if FIGURES[name][0] else pct(float(value))


DEFAULT_FIELDS = {"task": "task", "sample": "trial", "outcome": "outcome", "config": "config"}
DEFAULT_OUTCOMES = {
    "success": "success",
    "failure": "failure",
    "environment_failure": "environment_failure",
    "passed": "success",
    "failed": "failure",
}

FIGURES_V2: Mapping[str, tuple[bool, str]] = {
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


def mapping_param(params: Mapping[str, Any], name: str, base: Mapping[str, str]) -> dict[str, str]:
    given = params[name]
    if not all(isinstance(k, str) and isinstance(v, str) for k, v in given.items()):
        raise CheckerInputError("params.invalid", f"{name}: expected a table of text -> text")
    return {**base, **given}


def field_names(params: Mapping[str, Any]) -> dict[str, str]:
    fields = mapping_param(params, "fields", DEFAULT_FIELDS)
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


def outcome_of(value: Any, outcomes: Mapping[str, str]) -> str | None:
    if isinstance(value, bool):
        return "success" if value else "failure"
    if not isinstance(value, str):
        return None
    if value in outcomes:
        return outcomes[value]
    head = value.split(":", 1)[0].strip()  # human-eval: "failed: AssertionError"
    return outcomes.get(head) if ":" in value else None


def finite(value: Any) -> Any:
    """Plain data for a verdict: NaN and Infinity (which the reader accepts) as text."""
    return plain(value, other=SAME)


def parse_samples(
    lines: Any,
    fields: Mapping[str, str],
    first: int,
    outcomes: Mapping[str, str],
    *,
    unrecorded_config: bool = False,
) -> tuple[list[Sample], Any]:
    """Per-sample records through the field mapping, and the run's config (from a header
    record, or None when each record carries its own). Every problem is collected.

    ``unrecorded_config`` (trial-stats@3): with ``fields.config`` empty the records carry
    no configuration and none is looked for (no header record; every sample's config is
    None). Otherwise an empty ``fields.config`` leaves every record without one, refused."""
    if not isinstance(lines, list):
        raise CheckerInputError("input.invalid", "trials: expected JSON Lines records")
    records = [(int(n), v) for n, v in lines]
    if unrecorded_config and not fields["config"]:
        samples = _read_samples(records, fields, first, outcomes, None, config_needed=False)
        _check_numbering(samples, first)
        return samples, None
    header, records = _split_header(records, fields)
    samples = _read_samples(records, fields, first, outcomes, header)
    _check_numbering(samples, first)
    return samples, header


def _split_header(
    records: list[tuple[int, Any]], fields: Mapping[str, str]
) -> tuple[Any, list[tuple[int, Any]]]:
    """A first record without a task id is the run's header: its config, and the rest."""
    tf, cf = fields["task"], fields["config"]
    if records and isinstance(records[0][1], Mapping) and tf not in records[0][1]:
        line, first_record = records[0]
        if not cf or cf not in first_record:
            raise CheckerInputError(
                "input.invalid",
                f"line {line}: a record without {tf!r} must be the run's header with its "
                f"configuration in {cf or 'config'!r}",
            )
        return first_record[cf], records[1:]
    return None, records


def _read_samples(
    records: list[tuple[int, Any]],
    fields: Mapping[str, str],
    first: int,
    outcomes: Mapping[str, str],
    header: Any,
    *,
    config_needed: bool = True,
) -> list[Sample]:
    """Each record as a sample; every problem collected (up to ``SHOWN``), then refused.
    Without ``config_needed`` a record with no config gets None."""
    tf, sf, of, cf = fields["task"], fields["sample"], fields["outcome"], fields["config"]
    problems: list[str] = []
    samples: list[Sample] = []
    seen: dict[tuple[str, int], int] = {}
    order: Counter[str] = Counter()
    for line, value in records:
        where = f"line {line}"
        if len(problems) >= SHOWN:
            break
        # each check's common case first by exact type (the same decision, sooner)
        if type(value) is not dict and not isinstance(value, Mapping):
            problems.append(f"{where}: expected an object, observed {shown_value(finite(value))}")
            continue
        task = value.get(tf)
        if not (type(task) is str and task) and (
            not isinstance(task, str | int) or isinstance(task, bool) or task == ""
        ):
            problems.append(
                f"{where}: {tf}: expected a task id, observed {shown_value(finite(task))}"
            )
            continue
        task = str(task)
        if sf:
            index = value.get(sf)
            if not (type(index) is int and index >= first) and (
                not isinstance(index, int) or isinstance(index, bool) or index < first
            ):
                problems.append(
                    f"{where}: {sf}: expected an integer >= {first}, observed "
                    f"{shown_value(finite(index))}"
                )
                continue
        else:
            index = first + order[task]
        order[task] += 1
        outcome = outcome_of(value.get(of), outcomes)
        if outcome is None:
            problems.append(
                f"{where}: {of}: {shown_value(finite(value.get(of)))} is not true/false nor a "
                "result "
                f"the outcomes table maps ({', '.join(sorted(outcomes))}); add it to 'outcomes'"
            )
            continue
        if cf and cf in value:
            config = value[cf]
        elif header is not None:
            config = header
        elif not config_needed:
            config = None
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
    return samples


def _check_numbering(samples: Sequence[Sample], first: int) -> None:
    """A task's sample indices run from ``first`` without gaps: a dropped sample is refused."""
    by_task: dict[str, list[int]] = {}
    for sample in samples:
        by_task.setdefault(sample.task, []).append(sample.index)
    gaps = []
    for task, indices in sorted(by_task.items()):
        if indices == list(range(first, first + len(indices))):
            continue  # in order from ``first``: nothing missing
        missing = sorted(set(range(first, first + len(indices))) - set(indices))
        if missing:
            gaps.append(f"task {task!r} lacks sample(s) {few_names([str(m) for m in missing])}")
    if gaps:
        raise CheckerInputError(
            "input.invalid",
            f"samples are numbered from {first} without gaps; {'; '.join(gaps[:SHOWN])} "
            "(a dropped sample changes every rate: keep every sample, or set first_sample)",
        )


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


def task_counts(samples: Sequence[Sample], rule: str) -> list[TaskCount]:
    by_task: dict[str, list[Sample]] = {}
    for sample in samples:
        by_task.setdefault(sample.task, []).append(sample)
    out = []
    for task in sorted(by_task):
        rows = by_task[task]
        env = left_sum(s.outcome == "environment_failure" for s in rows)
        counted = len(rows) - env if rule == "exclude" else len(rows)
        successes = left_sum(s.outcome == "success" for s in rows)
        out.append(TaskCount(task, len(rows), env, counted, successes))
    return out


def figures_of(tasks: Sequence[TaskCount], k: int) -> dict[str, int | float | None]:
    included = [t for t in tasks if t.counted >= k]
    counted = left_sum(t.counted for t in tasks)
    successes = left_sum(t.successes for t in tasks)

    # each estimator depends on a task's (counted, successes) only: summed once per pair,
    # times its tasks (exact fractions, so the sum and its float are the per-task ones)
    pairs = Counter((t.counted, t.successes) for t in included)

    def mean(of: Callable[[int, int], Fraction]) -> float | None:
        if not included:
            return None
        total = left_sum((of(n, c) * m for (n, c), m in pairs.items()), Fraction(0))
        return float(total / len(included))

    return {
        "trials": left_sum(t.launched for t in tasks),
        "environment_failures": left_sum(t.environment_failures for t in tasks),
        "counted_trials": counted,
        "successes": successes,
        "success_rate": successes / counted if counted else None,
        "mean_success_rate": mean(lambda n, c: Fraction(c, n)),
        "tasks": len(included),
        "tasks_excluded": len(tasks) - len(included),
        "tasks_with_a_success": left_sum(t.successes >= 1 for t in included),
        "tasks_all_succeeded": left_sum(t.successes == t.counted for t in included),
        "pass_at_k": mean(lambda n, c: pass_at_k(n, c, k)),
        "pass_hat_k": mean(lambda n, c: pass_hat_k(n, c, k)),
    }
