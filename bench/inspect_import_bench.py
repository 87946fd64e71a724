"""Benchmark `reprobundle import inspect`: its cost against samples x scorers.

    python bench/inspect_import_bench.py [--runs 1] [--work DIR] [--rows 100x10 1000x10 ...]

Writes each log with the real inspect-ai (``tests/inspect_logs.py --samples N --scorers K``:
N samples, one epoch, K deterministic scorers; needs the test extra), then times
``import_inspect`` on it (read under verify's caps, every case run once, every control
made), each into a new folder. Default rows: 100, 1,000 and 10,000 samples at 10
scorers, and 10, 100 and 400 scorers at 100 samples. Prints per row the median time
and the time per sample x scorer, which stays flat when the cost is linear.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO))

from bundler.importers.inspect_eval import import_inspect  # noqa: E402

ROWS = ("100x10", "1000x10", "10000x10", "100x100", "100x400")


def log_of(work: Path, samples: int, scorers: int) -> Path:
    folder = work / f"{samples}x{scorers}"
    log = folder / "big.eval"
    if not log.exists():
        subprocess.run(
            [
                sys.executable,
                str(REPO / "tests" / "inspect_logs.py"),
                str(folder),
                "--samples",
                str(samples),
                "--scorers",
                str(scorers),
            ],
            check=True,
            capture_output=True,
        )
    return log


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--work", type=Path, default=None)
    parser.add_argument("--rows", nargs="*", default=list(ROWS))
    args = parser.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="rb-inspect-import-bench-"))
    print(
        f"{'samples':>8} {'scorers':>8} {'log bytes':>11} {'cases':>6} {'import':>9} "
        f"{'per sample x scorer':>20}"
    )
    for row in args.rows:
        samples, scorers = (int(x) for x in row.split("x"))
        log = log_of(work, samples, scorers)
        times = []
        cases = 0
        for run in range(args.runs):
            out = work / f"out-{row}-{run}"
            shutil.rmtree(out, ignore_errors=True)
            start = time.perf_counter()
            cases = import_inspect(log, out).cases
            times.append(time.perf_counter() - start)
            shutil.rmtree(out)
        median = statistics.median(times)
        per = median / (samples * scorers) * 1e6
        print(
            f"{samples:>8,} {scorers:>8,} {log.stat().st_size:>11,} {cases:>6} "
            f"{median:>8.2f}s {per:>17.1f} us",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
