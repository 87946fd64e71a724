"""trial-stats@1 to @3: claimed repeated-trial figures follow from the trials.

``sample_verdict`` also gives @4's verdict, with @4's judge of the claimed figures
(``trial_stats_v4``: a claimed fraction at the decimals it is stated with)."""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
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
from . import tally
from .report import LENIENT, SHOWN, few_names, shown_value
from .trials import (
    DEFAULT_FIELDS,
    DEFAULT_OUTCOMES,
    ENV_RULES,
    FIGURES,
    FIGURES_V2,
    OUTCOMES,
    RULE_TEXT,
    Sample,
    TrialStats,
    compute_stats,
    distinct_configs,
    field_names,
    figures_of,
    finite,
    fmt,
    independent_pass_at_k,
    independent_pass_hat_k,
    line_numbers,
    mapping_param,
    parse_samples,
    parse_trials,
    pct,
    task_counts,
)

# pass@k needs k samples per task: the counterexample builds two tasks of k each
MAX_K = 10_000


def _trials_counterexample(params: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """Trials whose figures differ from the claimed ones: k trials of one or two tasks,
    all successes or all failures. None when a claimed fraction is within ``tolerance``
    of both 0 and 1: no trial set can contradict it (a tolerance of 0.99 accepts a
    claimed pass@3 of 0.95 over 30 failed trials)."""
    k, claimed, tolerance = params["k"], params["claimed"], params["tolerance"]
    if not isinstance(k, int) or isinstance(k, bool) or not 1 <= k <= MAX_K:
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
        Param(
            "k",
            "trials per task for pass@k and pass^k (>= 1)",
            (int,),
            at_least=1,
            at_most=MAX_K,
        ),
        Param(
            "claimed",
            "the figures the report states, figure name -> value (fractions as 0..1); at least one",
            (dict,),
            states=("stats.mismatch",),
        ),
        Param(
            "tolerance",
            "absolute tolerance for fractions (counts must match exactly)",
            (float, int),
            0.0005,
            at_least=0,
            below=MAX_TOLERANCE,
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
    example_params=[{"k": 3, "claimed": {"pass_at_k": 0.8, "tasks": 5}}],
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
    _check_rule(rule)
    if isinstance(tolerance, bool) or not 0 <= tolerance < 1:
        raise CheckerInputError(
            "params.invalid", f"tolerance: expected 0 <= t < 1, observed {tolerance}"
        )
    _check_claimed(claimed)

    tallied = tally.trials_v1(inputs["trials"], k, rule)
    if tallied is None:  # read record by record, every problem named
        trials = parse_trials(inputs["trials"])
        stats = compute_stats(trials, k, rule)
    else:
        stats = TrialStats(k=k, rule=rule, tasks=tuple(tallied[0]))
    figures = stats.figures()
    _check_denominator(figures, k, "trials")
    reasons = mismatches(claimed, figures, FIGURES, tolerance, fmt, _describe)
    configs = distinct_configs(trials) if tallied is None else tally.configs_v1(tallied[1])
    if len(configs) > 1:
        shown = "; ".join(f"{shown_value(c)} on lines {line_numbers(ls)}" for c, ls in configs)
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
        "environment_failures_rule": RULE_TEXT[rule],
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
    return _verdict(reasons, summary + _environment_note(figures, rule), details)


def _check_rule(rule: Any) -> None:
    if rule not in ENV_RULES:
        raise CheckerInputError(
            "params.invalid", f"environment_failures: {rule!r} is not one of {', '.join(ENV_RULES)}"
        )


def _check_denominator(figures: Mapping[str, Any], k: int, what: str) -> None:
    if figures["tasks"] == 0:
        raise CheckerInputError(
            "input.invalid",
            f"no task has {k} counted {what}: pass@{k} and pass^{k} have no denominator",
        )


def mismatches(
    claimed: Mapping[str, Any],
    figures: Mapping[str, Any],
    kinds: Mapping[str, tuple[bool, str]],
    slack: float,
    claim_text: Callable[[str, Any], str],
    describe: Callable[[str, Mapping[str, Any]], str],
    derived: str = "recomputed",
) -> list[Reason]:
    """``stats.mismatch`` per claimed figure off: a count at all, a fraction beyond ``slack``
    (``derived``: the word before the recomputed figure in the message)."""
    reasons: list[Reason] = []
    for name, value in sorted(claimed.items()):
        actual = figures[name]
        is_count = kinds[name][0]
        off = (
            actual is None
            or (is_count and value != actual)
            or (not is_count and abs(float(value) - float(actual)) > slack)
        )
        if off:
            shown = f"claimed {claim_text(name, value)}, {derived} {describe(name, figures)}"
            reasons.append(
                Reason(
                    "stats.mismatch",
                    f"{name}: {shown}",
                    {"figure": name, "claimed": value, "recomputed": actual},
                )
            )
    return reasons


def _environment_note(figures: Mapping[str, Any], rule: str) -> str:
    """Never drop an environment failure silently: say so in the message."""
    if not figures["environment_failures"]:
        return ""
    return f"; {figures['environment_failures']} environment failure(s), " + (
        "excluded" if rule == "exclude" else "counted as failures"
    )


def _verdict(reasons: list[Reason], summary: str, details: Mapping[str, Any]) -> Verdict:
    if reasons:
        message = "; ".join(r.message for r in reasons) + f" (recomputed {summary})"
        return Verdict.failed(message, reasons, **details)
    return Verdict.passed(f"claimed figures match: {summary}", **details)


def _check_claimed(
    claimed: Mapping[str, Any], figures: Mapping[str, tuple[bool, str]] = FIGURES
) -> None:
    if not claimed:
        raise CheckerInputError(
            "params.invalid", "claimed: empty; state at least one figure (nothing to check)"
        )
    problems: list[str] = []
    for name, value in claimed.items():
        if name not in figures:
            problems.append(f"{name!r} is not a figure (one of {', '.join(figures)})")
        elif figures[name][0]:
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                problems.append(f"{name}: expected a count, observed {shown_value(value)}")
        elif (
            not isinstance(value, int | float)
            or isinstance(value, bool)
            or not math.isfinite(value)
            or not 0 <= value <= 1
        ):
            problems.append(f"{name}: expected a fraction 0..1, observed {shown_value(value)}")
    if problems:
        raise CheckerInputError("params.invalid", "claimed: " + "; ".join(problems))


def _describe(name: str, figures: Mapping[str, int | float | None]) -> str:
    value = figures[name]
    if value is None:
        return "undefined (empty denominator)"
    if name == "success_rate":
        return f"{pct(value)} ({figures['successes']} of {figures['counted_trials']} trials)"
    if name in ("pass_at_k", "pass_hat_k"):
        return f"{pct(value)} ({figures[name + '_tasks']} of {figures['tasks']} tasks)"
    return str(value)


def _trials_counterexample_v2(params: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """Samples whose figures differ from the claimed ones (k samples of one or two tasks,
    one configuration, all successes or all failures); else two tasks under two
    configurations (``stats.config_mixed``). Vacuous when no candidate contradicts each
    claimed figure on its own with ``stats.mismatch``: the mixed-configuration input shows
    that the check can fail, not that a figure can."""
    k = params.get("k")
    if not isinstance(k, int) or isinstance(k, bool) or not 1 <= k <= MAX_K:
        return None
    fields = {**DEFAULT_FIELDS, **params.get("fields", {})}
    first = params.get("first_sample", 1)

    def samples(tasks: int, outcome: bool, mixed: bool) -> dict[str, Any]:
        lines: list[tuple[int, dict[str, Any]]] = []
        for n, task in enumerate(("task-a", "task-b")[:tasks]):
            for i in range(k):
                record: dict[str, Any] = {fields["task"]: task, fields["outcome"]: outcome}
                if fields["sample"]:
                    record[fields["sample"]] = first + i
                record[fields["config"] or "config"] = {"run": n if mixed else 0}
                lines.append((len(lines) + 1, record))
        return {"trials": lines}

    candidates = (samples(tasks, outcome, False) for tasks in (1, 2) for outcome in (False, True))
    found = first_failing(trial_stats_v2.function, params, candidates)
    return found if found is not None else samples(2, True, True)


@checker(
    "trial-stats",
    2,
    roles=[
        Role(
            "trials",
            InputKind.JSONL,
            "one sample per line through the field mapping (default {task, trial, outcome, "
            "config}); optionally a first header line holding only the run's config",
            reading=LENIENT,
        )
    ],
    params=[
        Param(
            "k",
            "samples per task drawn for pass@k and pass^k (>= 1; tasks need n >= k)",
            (int,),
            at_least=1,
            at_most=MAX_K,
        ),
        Param(
            "claimed",
            "the figures the report states, figure name -> value (fractions as 0..1); at least one",
            (dict,),
            states=("stats.mismatch",),
        ),
        Param(
            "tolerance",
            "absolute tolerance for fractions (counts must match exactly); below 0.05",
            (float, int),
            0.0005,
            at_least=0,
            below=MAX_TOLERANCE,
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
        Param(
            "first_sample",
            "the first sample index of each task: 0 or 1",
            (int,),
            1,
            at_least=0,
            at_most=1,
        ),
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
    counterexample=_trials_counterexample_v2,
    example_params=[{"claimed": {"pass_at_k": 1.0, "pass_hat_k": 0.75, "tasks": 4}, "k": 3}],
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
    return sample_verdict(inputs, params)


def sample_verdict(
    inputs: Mapping[str, Any],
    params: Mapping[str, Any],
    *,
    v3: bool = False,
    judge: Callable[[Mapping[str, Any], Mapping[str, Any]], list[Reason]] | None = None,
) -> Verdict:
    """trial-stats@2's verdict; ``v3``: @3's range for k and its reading of an empty
    ``fields.config`` (no configuration recorded, so none compared, and the verdict says so);
    ``judge``: the claimed figures' reasons given the figures, in place of ``tolerance``."""
    k, claimed, rule = params["k"], params["claimed"], params["environment_failures"]
    if k < 1 or (v3 and k > MAX_K_V3):
        most = f" and <= {MAX_K_V3}" if v3 else ""
        raise CheckerInputError(
            "params.invalid", f"k: expected an integer >= 1{most}, observed {k}"
        )
    _check_rule(rule)
    if judge is None:
        tolerance = params["tolerance"]
        if not math.isfinite(tolerance) or not 0 <= tolerance < MAX_TOLERANCE:
            raise CheckerInputError(
                "params.invalid",
                f"tolerance: expected 0 <= t < {MAX_TOLERANCE} (wider accepts claims the "
                f"records do not support), observed {tolerance}",
            )
    if params["first_sample"] not in (0, 1):
        raise CheckerInputError("params.invalid", "first_sample: expected 0 or 1")
    _check_claimed(claimed, FIGURES_V2)
    outcomes = mapping_param(params, "outcomes", DEFAULT_OUTCOMES)
    wrong = sorted(v for v in outcomes.values() if v not in OUTCOMES)
    if wrong:
        raise CheckerInputError(
            "params.invalid", f"outcomes: {wrong} are not one of {', '.join(OUTCOMES)}"
        )
    fields = field_names(params)
    first = params["first_sample"]
    tallied = tally.samples_v2(
        inputs["trials"], fields, first, outcomes, rule, unrecorded_config=v3
    )
    if tallied is None:  # read record by record, every problem named
        samples, header = parse_samples(
            inputs["trials"], fields, first, outcomes, unrecorded_config=v3
        )
        tasks = task_counts(samples, rule)
        groups: Iterable[tuple[Any, Iterable[int]]] = ((s.config, (s.line,)) for s in samples)
    else:
        tasks, header, groups = tallied
    unrecorded = v3 and not fields["config"]
    figures = figures_of(tasks, k)
    _check_denominator(figures, k, "samples")
    if judge is not None:
        reasons = judge(claimed, figures)
    else:
        slack = params["tolerance"] + 1e-12
        reasons = mismatches(claimed, figures, FIGURES_V2, slack, lambda _, v: f"{v}", _describe_v2)
    if not unrecorded:
        reasons += _mixed_config_groups(groups)
    excluded = [t.task for t in tasks if t.counted < k]
    details: dict[str, Any] = {
        "k": k,
        "estimators": {
            "pass_at_k": "mean over tasks of 1 - C(n-c, k) / C(n, k) (Chen et al. 2021)",
            "pass_hat_k": "mean over tasks of C(c, k) / C(n, k) (Yao et al. 2024)",
        },
        "environment_failures_rule": RULE_TEXT[rule],
        "figures": figures,
        "per_task": {t.task: t.to_dict(k) for t in tasks[:200]},
        "excluded_tasks": excluded[:200],
        "config": finite(header) if header is not None else None,
    }
    if v3:
        details["config_compared"] = not unrecorded
    summary = (
        f"pass@{k} {_describe_v2('pass_at_k', figures)}, "
        f"pass^{k} {_describe_v2('pass_hat_k', figures)}, "
        f"single-run {_describe_v2('success_rate', figures)}, mean of task means "
        f"{_describe_v2('mean_success_rate', figures)}"
    )
    if excluded:
        summary += (
            f"; {len(excluded)} task(s) left out of the task means (fewer than {k} counted "
            f"samples): {few_names(excluded)}"
        )
    summary += _environment_note(figures, rule)
    if unrecorded:
        summary += f"; {UNRECORDED_CONFIG}"
    return _verdict(reasons, summary, details)


def _mixed_configs_v2(samples: Sequence[Sample]) -> list[Reason]:
    """``stats.config_mixed`` when the samples ran with more than one configuration."""
    return _mixed_config_groups((sample.config, (sample.line,)) for sample in samples)


def _mixed_config_groups(groups: Iterable[tuple[Any, Iterable[int]]]) -> list[Reason]:
    """``_mixed_configs_v2`` of groups of samples, each a configuration and its lines."""
    # grouped first by the configuration's own JSON text (in C), then each group made
    # plain once: alike texts make alike plain copies, and groups whose copies agree
    # (NaN and "nan") are one configuration, their lines in sample order
    written: dict[str, tuple[Any, list[int]]] = {}
    for config, lines in groups:
        try:
            text = json.dumps(config, sort_keys=True, default=str)
        except (TypeError, ValueError):  # keys JSON cannot sort: grouped by the plain copy
            text = "plain " + json.dumps(finite(config), sort_keys=True, default=str)
        written.setdefault(text, (config, []))[1].extend(lines)
    configs: dict[str, tuple[Any, list[int]]] = {}
    for first, lines in written.values():
        config = finite(first)
        configs.setdefault(json.dumps(config, sort_keys=True, default=str), (config, []))[1].extend(
            lines
        )
    for _, lines in configs.values():
        lines.sort()  # samples come in line order
    if len(configs) <= 1:
        return []
    shown = "; ".join(
        f"{shown_value(c)} on lines {line_numbers(ls)}" for c, ls in list(configs.values())[:5]
    )
    return [
        Reason(
            "stats.config_mixed",
            f"{len(configs)} configurations in one set of samples: {shown}",
            {"configurations": [{"config": c, "lines": ls[:SHOWN]} for c, ls in configs.values()]},
        )
    ]


def _describe_v2(name: str, figures: Mapping[str, int | float | None]) -> str:
    value = figures[name]
    if value is None:
        return "undefined (empty denominator)"
    if name == "success_rate":
        return f"{pct(value)} ({figures['successes']} of {figures['counted_trials']} samples)"
    if name in ("pass_at_k", "pass_hat_k", "mean_success_rate"):
        return f"{pct(value)} (over {figures['tasks']} tasks)"
    return str(value)


# trial-stats@3: k at most this (pass@k is reported for k up to a few hundred; a bound
# keeps the counterexample, k samples per task, quick to build and run).
MAX_K_V3 = 1000
UNRECORDED_CONFIG = (
    "the samples record no configuration (fields.config is empty): not checked that they "
    "are repeats of one setup; the seed keeps it beside the trials (config.json)"
)


def _trials_counterexample_v3(params: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """Samples whose figures contradict the claimed ones (``stats.mismatch``), all under one
    configuration: one or two tasks of k or k + 1 samples with no, one or every success,
    then with a task lost to the environment or one sample short of k. None when no such
    set contradicts any claimed figure (a claimed ``tasks_excluded: 0`` with k = 1 and
    environment failures counted as failures: no task can be left out), or when k is
    outside 1..MAX_K_V3."""
    return sample_counterexample(params, trial_stats_v3.function)


def sample_counterexample(params: Mapping[str, Any], function: Any) -> Mapping[str, Any] | None:
    """``_trials_counterexample_v3``'s candidates, the first that ``function`` fails."""
    k = params.get("k")
    if not isinstance(k, int) or isinstance(k, bool) or not 1 <= k <= MAX_K_V3:
        return None
    given = params.get("fields")
    fields = {**DEFAULT_FIELDS, **(given if isinstance(given, Mapping) else {})}
    first = params.get("first_sample", 1)

    def lines(tasks: list[list[Any]]) -> dict[str, Any]:
        out: list[tuple[int, dict[str, Any]]] = []
        for number, outcomes in enumerate(tasks):
            for index, outcome in enumerate(outcomes):
                record: dict[str, Any] = {fields["task"]: f"task-{number}"}
                record[fields["outcome"]] = outcome
                if fields["sample"]:
                    record[fields["sample"]] = first + index if isinstance(first, int) else index
                if fields["config"]:
                    record[fields["config"]] = {"run": "counterexample"}
                out.append((len(out) + 1, record))
        return {"trials": out}

    extras: list[list[list[Any]]] = [[], [["environment_failure"]]]
    if k > 1:
        extras.append([[False] * (k - 1)])

    def candidates() -> Iterator[dict[str, Any]]:
        for extra in extras:
            for count in (1, 2):
                for n in (k, k + 1):
                    for successes in (0, n, 1):
                        task = [True] * successes + [False] * (n - successes)
                        yield lines([task] * count + extra)

    return first_failing(function, params, candidates())


@checker(
    "trial-stats",
    3,
    roles=[
        Role(
            "trials",
            InputKind.JSONL,
            "one sample per line through the field mapping (default {task, trial, outcome, "
            "config}); a first header line holding only the run's config when fields.config "
            "is named and records lack it; read unchanged with no config when fields.config "
            'is ""',
            reading=LENIENT,
        )
    ],
    params=[
        Param(
            "k",
            f"samples per task drawn for pass@k and pass^k: 1 <= k <= {MAX_K_V3} "
            "(tasks need n >= k)",
            (int,),
            at_least=1,
            at_most=MAX_K_V3,
        ),
        *(p for p in trial_stats_v2.params if p.name != "k"),
    ],
    reasons=dict(trial_stats_v2.reasons),
    counterexample=_trials_counterexample_v3,
    example_params=[{"k": 3, "claimed": {"pass_at_k": 0.8}, "fields": {"config": ""}}],
)
def trial_stats_v3(inputs: Mapping[str, Any], params: Mapping[str, Any]) -> Verdict:
    """Claimed pass@k / pass^k / success-rate figures match per-sample records, config or not.

    trial-stats@2's reading, figures, estimators and reasons, with two differences:

    - ``fields.config: ""`` means what @2's docs say, "none": the records carry no
      configuration (a harness file such as human-eval's results, which writes none) and
      are read unchanged, with no header line looked for. The seed keeps a trial's
      configuration beside it (``config.json`` in the trial's folder), not in the
      results, so nothing in the records can show that the samples are repeats of one
      setup: ``stats.config_mixed`` is not decided, and every verdict says so (in its
      message, and ``config_compared: false`` in the details). @2 refused every such
      record and then the params as vacuous. With a named ``fields.config`` the config
      is read and compared as in @2 (a record without it and no header is refused).
    - Param ranges, checked here (``params.invalid`` outside): ``k`` 1..1000,
      ``tolerance`` 0 <= t < 0.05, ``first_sample`` 0 or 1, claimed fractions 0..1 and
      counts >= 0. The counterexample contradicts the claimed figures themselves
      (``stats.mismatch``), so params whose claimed figures no records could contradict
      are refused as vacuous, whatever the config.

    A pass re-counts the records; it does not re-run anything.
    """
    return sample_verdict(inputs, params, v3=True)
