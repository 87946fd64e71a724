"""group-rates@1: claimed per-group pass rates follow from the recorded runs (seed 004)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ..api import CheckerInputError, InputKind, Param, Reason, Role, Verdict, checker
from ..arithmetic import left_sum
from .cases import (
    LARGEST_SUITE,
    input_invalid,
    records,
)

_RATE = re.compile(r"^(\d+)/(\d+)$")


def _claimed(value: Any) -> dict[str, tuple[int, int]]:
    if not isinstance(value, Mapping) or not value:
        raise CheckerInputError("params.invalid", 'claimed: expected a table of group -> "k/n"')
    out = {}
    for group, rate in value.items():
        match = _RATE.match(rate) if isinstance(rate, str) else None
        if match is None or int(match[1]) > int(match[2]) or int(match[2]) < 1:
            raise CheckerInputError(
                "params.invalid",
                f'claimed.{group}: expected "k/n" with 0 <= k <= n, n >= 1, observed {rate!r}',
            )
        out[str(group)] = (int(match[1]), int(match[2]))
    return out


def _rates_counterexample(params: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """Per claimed group, as many runs as claimed, one more (or one fewer) passing.
    None when more than 10,000 runs are claimed in all (too many to build quickly)."""
    claimed = _claimed(params["claimed"])
    if left_sum(n for _, n in claimed.values()) > LARGEST_SUITE:
        return None
    runs = []
    for group, (k, n) in claimed.items():
        passing = k + 1 if k < n else k - 1
        runs += [
            {"id": f"{group}-{i}", "group": group, "checks": {params["check"]: i < passing}}
            for i in range(n)
        ]
    return {"runs": runs}


@checker(
    "group-rates",
    1,
    roles=[
        Role(
            "runs",
            InputKind.DATA,
            "recorded runs: a list (or {runs: [...]}) of {id, group, checks: {name: true|false}}",
        )
    ],
    params=[
        Param("check", "the name of the delivery check to count", (str,)),
        Param(
            "claimed",
            'the counts the report claims, per group: {bare = "0/5", skill = "3/3"}',
            (dict,),
            states=("rates.mismatch",),
        ),
    ],
    reasons={
        "rates.mismatch": "a group's observed count (k of n runs) differs from the claimed count",
        "rates.group_missing": "a claimed group has no recorded run",
        "rates.group_unclaimed": "a group has recorded runs but no claimed count",
    },
    counterexample=_rates_counterexample,
    example_params=[{"check": "c", "claimed": {"bare": "0/5", "skill": "3/3"}}],
)
def group_rates(inputs: Mapping[str, Any], params: Mapping[str, Any]) -> Verdict:
    """Per group, the number of runs passing one delivery check equals the claimed count.

    Counts ``k of n`` per group (runs whose ``checks[check]`` is true, of all runs in
    the group) and compares both numbers with the claim: a claim of ``0/5`` is wrong if
    the group has 6 runs. Every run must record the check (a run that was not scored is
    an input error, not a failure). The details report the sample sizes. This checker
    gives counts only: no effect size, interval or significance, and with samples of
    5 and 3 none should be read into them.
    """
    check = params["check"]
    claimed = _claimed(params["claimed"])
    runs = records(inputs["runs"], "runs", "runs")
    seen: set[str] = set()
    observed: dict[str, list[int]] = {}
    for i, run in enumerate(runs):
        if (
            not isinstance(run, Mapping)
            or not isinstance(run.get("id"), str)
            or not isinstance(run.get("group"), str)
        ):
            raise input_invalid(
                f"runs[{i}]: expected {{id, group, checks}} with string id and group",
            )
        if run["id"] in seen:
            raise input_invalid(f"run {run['id']}: recorded twice")
        seen.add(run["id"])
        checks = run.get("checks")
        if not isinstance(checks, Mapping) or not isinstance(checks.get(check), bool):
            raise input_invalid(f"run {run['id']}: checks.{check} must be true or false")
        counts = observed.setdefault(run["group"], [0, 0])
        counts[0] += checks[check]
        counts[1] += 1
    groups = {
        g: {
            "observed": f"{observed[g][0]}/{observed[g][1]}" if g in observed else None,
            "claimed": f"{claimed[g][0]}/{claimed[g][1]}" if g in claimed else None,
            "sample_size": observed[g][1] if g in observed else 0,
        }
        for g in sorted(set(observed) | set(claimed))
    }
    details = {
        "check": check,
        "groups": groups,
        "note": "counts only, with sample sizes; no effect size, interval or significance",
    }
    reasons = []
    for g, row in groups.items():
        if row["observed"] is None:
            reasons.append(
                Reason(
                    "rates.group_missing",
                    f"group {g}: claimed {row['claimed']}, no recorded run",
                    {"group": g},
                )
            )
        elif row["claimed"] is None:
            reasons.append(
                Reason(
                    "rates.group_unclaimed",
                    f"group {g}: {row['observed']} recorded, no claim",
                    {"group": g},
                )
            )
        elif row["observed"] != row["claimed"]:
            reasons.append(
                Reason(
                    "rates.mismatch",
                    f"group {g}: {check} observed {row['observed']}, claimed {row['claimed']}",
                    {"group": g, **row},
                )
            )
    summary = ", ".join(f"{g} {row['observed'] or '-'}" for g, row in groups.items())
    if reasons:
        return Verdict.failed(f"{check}: {summary} does not match the claim", reasons, **details)
    return Verdict.passed(f"{check}: {summary} as claimed (counts only, no effect size)", **details)
