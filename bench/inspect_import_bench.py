"""Benchmark `reprobundle import inspect` against inspect-ai's own `read_eval_log`.

    python bench/inspect_import_bench.py --runs N --work DIR [--quick] [--rows 900x2 ...]

Writes each log once with the real inspect-ai (``tests/inspect_logs.py --samples N
--scorers K``: N samples, one epoch, K deterministic scorers; needs the test extra) and
keeps it in DIR for the next run. Then, per row, N rounds taking turns, each tool in a
fresh process on the same file:

- **import**: ``import_inspect(log, new folder)``, what ``reprobundle import inspect``
  does: the log read under verify's caps (zip directory against local headers, CRC,
  strict JSON), parsed, every case run once under a case's limits, every negative control
  made, the source folder (log, controls, ``bundle.yaml``) written. It does not build:
  ``reprobundle build`` is a separate command;
- **read_eval_log**: ``inspect_ai.log.read_eval_log(log)``, the reader a reviewer would
  otherwise reach for (every sample parsed into inspect-ai's models).

Each process times its call after its imports (``time.perf_counter``, and its CPU time
``time.process_time``, which a machine shared with other work inflates less) and reports
its peak RSS (``resource.getrusage``); the command column is the whole process
(interpreter, imports, call), timed from outside. Ratio: the median of the per-round
ratios import / read_eval_log of the calls (wall, then CPU); the target (issue 33) is
below 1x, peak RSS under 200 MiB, and a flat time per sample (linear). Prints a Markdown
table.

Rows: 100, 900, 1,000 and 10,000 samples at 2 scorers (match, includes), then 10, 100 and
400 scorers at 100 samples (the cost per sample x scorer stays flat when the import is
linear in scorers too). ``--quick``: 100 and 900 samples only.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent

ROWS = ("100x2", "900x2", "1000x2", "10000x2", "100x10", "100x100", "100x400")
QUICK = ("100x2", "900x2")
RSS_TARGET_MIB = 200

# each child: imports, then the timed call; prints seconds, cases and peak RSS as JSON
_CHILD = """
import json, resource, sys, time
from pathlib import Path
tool, log, dest = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3])
if tool == "import":
    from bundler.importers.inspect_eval import import_inspect
    start, cpu = time.perf_counter(), time.process_time()
    count = import_inspect(log, dest).cases
else:
    from inspect_ai.log import read_eval_log
    start, cpu = time.perf_counter(), time.process_time()
    count = len(read_eval_log(str(log)).samples or [])
seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({"seconds": seconds, "cpu": cpu, "count": count, "rss_mib": rss}))
"""


def log_of(work: Path, samples: int, scorers: int) -> Path:
    """The row's log, written by inspect-ai once and kept in ``work``."""
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


def run_once(tool: str, log: Path, dest: Path) -> dict[str, float]:
    """One fresh process running ``tool`` on ``log``: its call's figures, and the whole
    command's time."""
    shutil.rmtree(dest, ignore_errors=True)
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, tool, str(log), str(dest)],
        cwd=REPO,
        env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        check=True,
    )
    command = time.perf_counter() - start
    shutil.rmtree(dest, ignore_errors=True)
    found: dict[str, float] = json.loads(done.stdout.splitlines()[-1])
    return {**found, "command": command}


def row(work: Path, samples: int, scorers: int, runs: int) -> str:
    log = log_of(work, samples, scorers)
    ours: list[dict[str, float]] = []
    theirs: list[dict[str, float]] = []
    for n in range(runs):  # taking turns, the first tool alternating
        order = ("import", "read") if n % 2 == 0 else ("read", "import")
        for tool in order:
            found = run_once(tool, log, work / "out")
            (ours if tool == "import" else theirs).append(found)
    pairs = list(zip(ours, theirs, strict=True))
    ratio = statistics.median(a["seconds"] / b["seconds"] for a, b in pairs)
    cpu_ratio = statistics.median(a["cpu"] / b["cpu"] for a, b in pairs)
    mine = statistics.median(r["seconds"] for r in ours)
    base = statistics.median(r["seconds"] for r in theirs)
    rss = max(r["rss_mib"] for r in ours)
    rss_base = max(r["rss_mib"] for r in theirs)
    command = statistics.median(r["command"] for r in ours)
    command_base = statistics.median(r["command"] for r in theirs)
    met = "yes" if ratio < 1 and rss < RSS_TARGET_MIB else "no"
    return (
        f"| {samples:,} | {scorers} | {log.stat().st_size / 1e6:.1f} MB "
        f"| {int(ours[0]['count']):,} "
        f"| {mine:.2f} s | {base:.2f} s | {ratio:.2f}x | {cpu_ratio:.2f}x | {met} "
        f"| {mine / samples * 1e3:.2f} ms | {mine / (samples * scorers) * 1e6:.0f} us "
        f"| {rss:.0f} / {rss_base:.0f} MiB | {command:.2f} / {command_base:.2f} s |"
    )


HEAD = (
    "| samples | scorers | log | cases | import | read_eval_log | ratio | CPU ratio | target (<1x, "
    f"<{RSS_TARGET_MIB} MiB) | import per sample | per sample x scorer | peak RSS import / "
    "read_eval_log | command import / read_eval_log |\n"
    "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | :---: | ---: | ---: | ---: | ---: |"
)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=3, help="rounds per row (median)")
    parser.add_argument("--work", type=Path, default=None, help="keeps the logs between runs")
    parser.add_argument("--quick", action="store_true", help="100 and 900 samples only")
    parser.add_argument("--rows", nargs="*", default=None, help="SAMPLESxSCORERS ...")
    args = parser.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="rb-inspect-import-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    rows = args.rows or (QUICK if args.quick else ROWS)
    print(f"`reprobundle import inspect` against inspect-ai `read_eval_log`, {args.runs} runs\n")
    print(HEAD, flush=True)
    for wanted in rows:
        samples, scorers = (int(x) for x in wanted.split("x"))
        print(row(work, samples, scorers, args.runs), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
