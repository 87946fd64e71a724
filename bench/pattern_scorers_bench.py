"""Import time of an Inspect log against its number of ``pattern`` scorers (issue 42, item 4:
import is linear in the number of scorers).

    python bench/pattern_scorers_bench.py [--samples N] [--scorers 100 400] [--pattern P]

Writes a JSON log per row (N samples, one epoch; K scores ``p0`` ... made by Inspect's
``pattern`` scorer with the one recorded pattern ``P``, default ``(a+)+$``, each stored
score what that pattern gives), imports it once in this process (``import_inspect``) and
prints seconds, seconds per scorer and the ratio to the first row.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path
from typing import Any

COMPLETIONS = ("a" * 40 + "b", "aaaa", "b", "xaa")


def log_of(path: Path, samples: int, scorers: int, pattern: str) -> Path:
    from checkers.inspect_log import rules

    options = {"pattern": pattern, "ignore_case": False}
    names = [f"p{i}" for i in range(scorers)]
    values = [
        rules.rescore("pattern", options, COMPLETIONS[s % len(COMPLETIONS)], ("a",))
        for s in range(samples)
    ]
    accuracy = sum(v == "C" for v in values) / samples
    head: dict[str, Any] = {
        "version": 2,
        "status": "success",
        "eval": {
            "task": "t",
            "model": "m/m",
            "dataset": {"samples": samples},
            "config": {"epochs": 1},
            "scorers": [{"name": "pattern", "options": options, "metrics": []}],
        },
        "results": {
            "total_samples": samples,
            "completed_samples": samples,
            "scores": [
                {
                    "name": name,
                    "scorer": "pattern",
                    "scored_samples": samples,
                    "metrics": {"accuracy": {"name": "accuracy", "value": accuracy}},
                }
                for name in names
            ],
        },
    }
    rows = [
        {
            "id": f"s{s}",
            "epoch": 1,
            "target": "a",
            "output": {"completion": COMPLETIONS[s % len(COMPLETIONS)]},
            "scores": {name: {"value": values[s], "answer": None} for name in names},
        }
        for s in range(samples)
    ]
    path.write_text(json.dumps({**head, "samples": rows}))
    return path


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--samples", type=int, default=20)
    parser.add_argument("--scorers", type=int, nargs="+", default=[100, 400])
    parser.add_argument("--pattern", default="(a+)+$")
    args = parser.parse_args()
    from bundler.importers.inspect_eval import import_inspect

    first = None
    with tempfile.TemporaryDirectory() as work:
        for k in args.scorers:
            log = log_of(Path(work) / f"{k}.json", args.samples, k, args.pattern)
            start = time.perf_counter()
            done = import_inspect(log, Path(work) / f"out{k}")
            seconds = time.perf_counter() - start
            first = first or seconds / k
            print(
                f"{k} scorers x {args.samples} samples, pattern {args.pattern!r}: "
                f"{done.cases} cases, {seconds:.2f} s, {seconds / k * 1e3:.1f} ms per scorer "
                f"({seconds / k / first:.2f}x the first row's per scorer)"
            )


if __name__ == "__main__":
    main()
