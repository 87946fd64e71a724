"""Benchmark the fault-report judge against the seed's own judge, on the same reports.

    python bench/fault_report_bench.py                    # 10,000 .. 300,000 records
    python bench/fault_report_bench.py --runs 5 --v1-max 30000

Each row is one judge on one report of N records (every test passed but the last 4,
which failed on an assertion; names unique), median wall time of --runs runs (--v1-runs
for the quadratic @1), in this process. The baseline is the seed's ``check_reports.py``
judge (a set of names, so linear), written out below from the article;
``fault-report@1`` checked duplicate names with ``list.count`` per name (quadratic) until
issue 33, hence --v1-max; it counts each name once now.
``fault-report@2`` is timed as the runner calls it: the whole checker function, with the
pins of the example bundle (failure count per fault, every failure an assertion).
Run by hand; never from tests.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import checkers

SIZES = (10_000, 30_000, 60_000, 100_000, 300_000)
ASSERTION = "tests/test_inventory.py:60: in test_x\nE   AssertionError: expected 1, observed 0"


def seed_judge(report: dict[str, Any]) -> str:
    """The judge of the seed's check_reports.py (seed 001), as the article prints it."""
    records = report["records"]
    if (
        report["planned"] <= 0
        or not report["complete"]
        or report["blocked"]
        or report["executed"] != report["planned"]
        or len(records) != report["executed"]
        or len({r["test"] for r in records}) != len(records)
    ):
        return "incomplete"
    statuses = [r["status"] for r in records]
    if any(s not in {"passed", "failed"} for s in statuses):
        return "execution_error_or_skip"
    if report["fault"] == "none":
        return "baseline_pass" if all(s == "passed" for s in statuses) else "baseline_fail"
    if report["fault"] in {"reject-writes", "double-reserve", "missing-record"}:
        return "defect_detected" if "failed" in statuses else "defect_missed"
    return "unknown_fault"


def make_report(n: int) -> dict[str, Any]:
    records: list[dict[str, Any]] = [
        {"test": f"test_scenario_{i:06d}", "status": "passed", "traceback": None}
        for i in range(n - 4)
    ]
    records += [
        {"test": f"test_failing_{i}", "status": "failed", "traceback": ASSERTION} for i in range(4)
    ]
    return {
        "fault": "missing-record",
        "planned": n,
        "executed": n,
        "complete": True,
        "blocked": False,
        "records": records,
    }


def checker_call(key: str, **params: Any) -> Callable[[dict[str, Any]], str]:
    found = checkers.get(key)
    assert found is not None
    full = {p.name: p.default for p in found.params if not p.required}
    full.update(params)

    def call(report: dict[str, Any]) -> str:
        verdict = found.function({"report": report}, full)
        assert verdict.status == "pass", verdict.message
        return verdict.status

    return call


def timed(judge: Callable[[dict[str, Any]], str], report: dict[str, Any], runs: int) -> float:
    seconds = []
    for _ in range(runs):
        start = time.perf_counter()
        judge(report)
        seconds.append(time.perf_counter() - start)
    return statistics.median(seconds)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--v1-max", type=int, default=60_000)
    parser.add_argument("--v1-runs", type=int, default=1, help="runs of the quadratic @1")
    parser.add_argument("--sizes", type=int, nargs="*", default=list(SIZES))
    args = parser.parse_args()
    judges: list[tuple[str, Callable[[dict[str, Any]], str], int]] = [
        ("seed check_reports.py judge (baseline)", seed_judge, 10**9),
        ("fault-report@1", checker_call("fault-report@1", want="defect_detected"), args.v1_max),
        (
            "fault-report@2 (with pins)",
            checker_call(
                "fault-report@2",
                want="defect_detected",
                expected_failures={"missing-record": 4},
                assertion_failures=True,
            ),
            10**9,
        ),
    ]
    print("| records | judge | median s | per 100,000 records s | ratio to baseline |")
    print("| ---: | --- | ---: | ---: | ---: |")
    for n in args.sizes:
        report = make_report(n)
        base = timed(seed_judge, report, args.runs)
        for label, judge, limit in judges:
            if n > limit:
                print(f"| {n:,} | {label} | not run (quadratic) | | |", flush=True)
                continue
            runs = args.v1_runs if label == "fault-report@1" else args.runs
            seconds = base if judge is seed_judge else timed(judge, report, runs)
            per = seconds / n * 100_000
            print(
                f"| {n:,} | {label} | {seconds:.3f} | {per:.3f} | {seconds / base:.1f}x |",
                flush=True,
            )


if __name__ == "__main__":
    main()
