"""A case's verdict over its runs (more than half must pass), and the suite: its pass
threshold and the summary table of the grader's report."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ...api import Reason
from ...arithmetic import left_sum
from .format import RepoCase
from .grader import RunResult, plain_copy


@dataclass
class RepoCaseResult:
    """A case's verdict over its runs (more than half must pass), or not run."""

    case: RepoCase
    runs: list[RunResult] | None  # None: never dispatched (the runner's early stop)

    @property
    def verdict(self) -> bool | None:
        if self.runs is None:
            return None
        return left_sum(r.passed for r in self.runs) >= len(self.runs) // 2 + 1

    @property
    def pass_count(self) -> int:
        return left_sum(r.passed for r in self.runs or [])

    def reasons(self) -> list[Reason]:
        many = self.runs is not None and len(self.runs) > 1
        return [
            f.reason(self.case.id, i + 1 if many else None)
            for i, run in enumerate(self.runs or [])
            for f in run.failures
        ]

    @property
    def failure_names(self) -> list[str]:
        return sorted({f.name for r in self.runs or [] for f in r.failures})

    def to_dict(self) -> dict[str, Any]:
        runs = self.runs or []
        row: dict[str, Any] = plain_copy(
            {
                "case": self.case.id,
                "fixture": self.case.fixture,
                "result": {True: "pass", False: "fail", None: "not run"}[self.verdict],
                "passed_runs": f"{self.pass_count}/{len(runs)}" if self.runs is not None else None,
                "failed_assertions": self.failure_names,
                "states": [m.get("state") for r in runs for m in r.measured],
                "runs": [
                    {
                        "passed": r.passed,
                        "statuses": r.statuses,
                        "failures": [f.name for f in r.failures],
                        "measured": r.measured,
                    }
                    for r in runs
                ],
            }
        )
        return row


def threshold(total: int) -> int:
    """At least ``ceil(0.8 x cases)`` must pass (run.py render_report; README section 4)."""
    return math.ceil(0.8 * total)


def summary(results: Sequence[RepoCaseResult]) -> dict[str, Any]:
    """The report's summary table (run.py render_report): counts per failure mode apart."""
    measured = [m for r in results for run in r.runs or [] for m in run.measured]
    spec_turns = [m for m in measured if m.get("state") is not None]
    ratios = [m["probe_ratio"] for m in spec_turns if isinstance(m.get("probe_ratio"), float)]

    def cases_with(status: str) -> int:
        return left_sum(any(status in run.statuses for run in r.runs or []) for r in results)

    not_triggered = left_sum(
        1
        for r in results
        if r.case.spec_expected and r.runs is not None
        for run in r.runs
        if run.statuses[-1] == "no_fence" and not run.environmental
    )
    return {
        "cases": len(results),
        "passed": left_sum(r.verdict is True for r in results),
        "not_run": left_sum(r.verdict is None for r in results),
        "over_asks": left_sum(1 for m in measured if m.get("over_ask")),
        "degraded_output": cases_with("degraded_output"),
        "timeouts": cases_with("timeout"),
        "harness_errors": cases_with("harness_error"),
        "not_triggered": not_triggered,
        "evidence_form_violations": left_sum(len(m.get("form_violations") or []) for m in measured),
        "hallucinated_evidence": left_sum(
            len(m.get("hallucinated_evidence") or []) for m in measured
        ),
        "hallucinated_cases": [
            r.case.id
            for r in results
            if any(m.get("hallucinated_evidence") for run in r.runs or [] for m in run.measured)
        ],
        "would_pass_if_parseable": left_sum(
            1 for r in results if r.verdict is False and set(r.failure_names) <= {"degraded_output"}
        ),
        "probe_ratio": round(left_sum(ratios) / len(ratios), 4) if ratios else 0.0,
        "spec_bearing_turns": f"{len(spec_turns)}/{len(measured)}",
    }
