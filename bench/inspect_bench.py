"""Benchmark reading an Inspect AI log: reprobundle's reader against inspect-ai's own.

    python bench/inspect_bench.py [--samples 900] [--runs 5] [--work DIR]

Writes a log of N samples with inspect-ai's mock model (``tests/inspect_logs.py``; needs
the test extra), then times, taking turns each round: ``checkers.inspect_format.read_log``
on its bytes (cache emptied, so every run parses), inspect-ai's ``read_eval_log`` on the
same file (the baseline: what a reviewer would otherwise run), and one
``inspect-metric@1`` case as the runner calls it. Prints the median of each.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO))

import checkers  # noqa: E402
from bundler.run.runner import run_checker  # noqa: E402
from checkers import inspect_format  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--samples", type=int, default=900)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--work", type=Path, default=None)
    args = parser.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="rb-inspect-bench-"))
    log = work / "big.eval"
    if not log.exists():
        subprocess.run(
            [
                sys.executable,
                str(REPO / "tests" / "inspect_logs.py"),
                str(work),
                "--samples",
                str(args.samples),
            ],
            check=True,
        )
    data = log.read_bytes()
    from inspect_ai.log import read_eval_log

    metric = checkers.get("inspect-metric@1")
    assert metric is not None
    parsed = inspect_format.read_log(data)
    claimed = parsed.result_scores()[0]["metrics"]["accuracy"]["value"]
    params = {"scorer": "match", "reducer": "mean", "metric": "accuracy", "claimed": claimed}

    def ours() -> None:
        inspect_format._CACHE.clear()
        assert len(inspect_format.read_log(data).records) == args.samples

    def theirs() -> None:
        assert len(read_eval_log(str(log)).samples or []) == args.samples

    def case() -> None:
        inspect_format._CACHE.clear()
        assert run_checker(metric, {"log": data}, params).status == "pass"

    tools: dict[str, Callable[[], None]] = {
        "inspect-ai read_eval_log (baseline)": theirs,
        "reprobundle read_log": ours,
        "reprobundle inspect-metric@1 case (read + recompute)": case,
    }
    times: dict[str, list[float]] = {name: [] for name in tools}
    for _ in range(args.runs):
        for name, run in tools.items():
            start = time.perf_counter()
            run()
            times[name].append(time.perf_counter() - start)
    base = statistics.median(times["inspect-ai read_eval_log (baseline)"])
    print(f"{args.samples} samples, {len(data)} bytes (.eval), median of {args.runs}:")
    for name, values in times.items():
        median = statistics.median(values)
        print(f"  {name:55s} {median * 1000:8.1f} ms  {median / base:5.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
