"""What refusing vacuous params costs verify: for each example bundle, the time of the
vacuity check of every built-in case with an empty memo (one counterexample run per
distinct checker and params), median of 5.

    python bench/vacuity_bench.py        (from the repository root)
"""

from __future__ import annotations

import json
import statistics
import time
from pathlib import Path

import checkers
from bundler.format import yamlfile
from bundler.run import runner

REPO = Path(__file__).resolve().parents[1]


def main() -> None:
    for source in sorted(REPO.glob("bundles/*/bundle.yaml")):
        doc, _ = yamlfile.load(source.read_text("utf-8"))
        cases = [c for c in doc["cases"] if not c["checker"].startswith("bundle:")]
        found = {c["checker"]: checkers.get(c["checker"]) for c in cases}  # imports first
        times = []
        for _ in range(5):
            runner._VACUITY_CACHE.clear()
            started = time.perf_counter()
            for case in cases:
                checker = found[case["checker"]]
                assert checker is not None
                assert runner.vacuity(checker, case.get("params", {})) is None
            times.append(time.perf_counter() - started)
        distinct = {(c["checker"], json.dumps(c.get("params", {}), sort_keys=True)) for c in cases}
        print(
            f"{source.parent.name:22} {len(cases):3} cases, {len(distinct):3} distinct checks: "
            f"median {1000 * statistics.median(times):.1f} ms (min {1000 * min(times):.1f})"
        )


if __name__ == "__main__":
    main()
