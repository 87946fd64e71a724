"""trial-stats@4: claimed repeated-trial figures at the decimals they are stated with.

trial-stats@1 to @3 accepted a claimed fraction within any ``tolerance`` below 0.05, so
"pass@1 0.90" held where the records give 0.86 (issue 41, item 7; advisories RB-2026-0048
to RB-2026-0050). Every figure is exact from each task's counts, so @4 has no tolerance:
@3's verdict (``trial_stats.sample_verdict``) with the claim taken at its ``decimals``
(``checkers/precision.py``, the rule lm-eval-metric@2 and classification-metrics@3 share).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from ..api import Reason, Verdict, checker
from ..precision import FLOAT_NOISE, decimals_param, half_unit, precision_text, stated_decimals
from .trial_stats import mismatches, sample_counterexample, sample_verdict, trial_stats_v3
from .trials import FIGURES_V2


def _trials_counterexample_v4(params: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """@3's candidates, judged by @4."""
    return sample_counterexample(params, trial_stats_v4.function)


@checker(
    "trial-stats",
    4,
    roles=list(trial_stats_v3.roles),
    params=[
        *(p for p in trial_stats_v3.params if p.name != "tolerance"),
        decimals_param("every claimed fraction is"),
    ],
    reasons=dict(trial_stats_v3.reasons),
    counterexample=_trials_counterexample_v4,
    example_params=[
        {"k": 3, "claimed": {"pass_at_k": 0.8}, "fields": {"config": ""}},
        {"k": 1, "claimed": {"pass_at_k": 0.86, "tasks": 100}, "decimals": 2},
    ],
)
def trial_stats_v4(inputs: Mapping[str, Any], params: Mapping[str, Any]) -> Verdict:
    """Claimed pass@k / pass^k / success-rate figures are the per-sample records' figures.

    trial-stats@3's reading, figures, estimators, ranges and reasons, except how a claimed
    fraction is compared: every figure is computed exactly from each task's counts (the
    estimators in fractions), so none needs a tolerance. A claimed fraction must be the
    re-derived one rounded to `decimals`, the decimals the claim states its fractions with
    (`0.86`: 2, `86.0%` as 0.860: 3), that is within half a unit of the last decimal;
    unset, it must equal the re-derived one at float precision. A claimed fraction with
    more decimals than `decimals` is `params.invalid`. @1 to @3 took any `tolerance`
    below 0.05, so "pass@1 0.90" held where the records give 0.86 (advisories
    RB-2026-0048 to RB-2026-0050); @4 has no `tolerance` param. Each `stats.mismatch`
    gives the claimed figure at its decimals beside the re-derived one and what it is a
    fraction of. Counts are compared exactly.

    A pass re-counts the records; it does not re-run anything.
    """
    decimals = params["decimals"]

    def judge(claimed: Mapping[str, Any], figures: Mapping[str, Any]) -> list[Reason]:
        for name, value in claimed.items():
            if not FIGURES_V2[name][0]:
                stated_decimals(decimals, float(value), f"claimed {name}")
        at = precision_text(decimals)
        return mismatches(
            claimed,
            figures,
            FIGURES_V2,
            half_unit(decimals) + FLOAT_NOISE,
            lambda name, v: f"{v!r}" if FIGURES_V2[name][0] else f"{v!r} ({at})",
            _re_derived,
            "re-derived",
        )

    verdict = sample_verdict(inputs, params, v3=True, judge=judge)
    return dataclasses.replace(verdict, details={**verdict.details, "decimals": decimals})


def _re_derived(name: str, figures: Mapping[str, int | float | None]) -> str:
    """The re-derived figure in full, beside what it is a fraction of."""
    value = figures[name]
    if value is None:
        return "undefined (empty denominator)"
    if name == "success_rate":
        return f"{value!r} from {figures['successes']} of {figures['counted_trials']} samples"
    if name in ("pass_at_k", "pass_hat_k", "mean_success_rate"):
        return f"{value!r}, the mean of {figures['tasks']} tasks' estimates"
    return str(value)
