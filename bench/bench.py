"""Benchmark reprobundle against the real baselines, on the same data, in the same run.

    python bench/bench.py                 # quick sizes (a few minutes on 2 cores)
    python bench/bench.py --full          # the issue's sizes (1 GiB, 20,000 / 100,000 files)
    python bench/bench.py --runs 5 --work /var/tmp/rb-bench

Prints a Markdown table: median wall time of --runs runs, peak RSS of the process tree
(max RSS of the command and its children), and the ratio to the baseline named in each row.
Run by hand; never from the test suite.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from datasets import DATASETS, Dataset, make  # noqa: E402


@dataclass
class Timing:
    label: str
    seconds: float
    rss_mib: float


def timed(
    command: list[str],
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
    prepare: Callable[[], None] | None = None,
    runs: int = 3,
) -> tuple[float, float]:
    """Median wall seconds and the peak RSS (MiB) over ``runs`` runs of ``command``."""
    times, peaks = [], []
    for _ in range(runs):
        if prepare:
            prepare()
        start = time.perf_counter()
        process = subprocess.Popen(
            command, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
        )
        _, status, usage = os.wait4(process.pid, 0)
        elapsed = time.perf_counter() - start
        process.returncode = os.waitstatus_to_exitcode(status)
        if process.returncode != 0:
            err = process.stderr.read().decode(errors="replace") if process.stderr else ""
            raise SystemExit(
                f"benchmark command failed ({process.returncode}): {' '.join(command)}\n{err}"
            )
        times.append(elapsed)
        peaks.append(usage.ru_maxrss / 1024)
    return statistics.median(times), max(peaks)


def reset(path: Path) -> Callable[[], None]:
    def clear() -> None:
        shutil.rmtree(path, ignore_errors=True)
        path.mkdir(parents=True)

    return clear


def bench_dataset(
    ds: Dataset, work: Path, runs: int, compressions: list[str]
) -> list[tuple[str, list[Timing]]]:
    source = make(ds, work / "data")
    data_dir = source / "data"
    rb = [sys.executable, "-m", "bundler"]
    env = {**os.environ, "SOURCE_DATE_EPOCH": "1700000000"}
    out = work / "out"
    out.mkdir(exist_ok=True)
    rows: list[tuple[str, list[Timing]]] = []

    # --- pack / build
    packing: list[Timing] = []
    for name, cmd in [
        (
            "tar --zstd -cf",
            ["tar", "--zstd", "-cf", str(out / "b.tar.zst"), "-C", str(source), "data"],
        ),
        ("tar -czf", ["tar", "-czf", str(out / "b.tar.gz"), "-C", str(source), "data"]),
    ]:
        packing.append(Timing(name, *timed(cmd, runs=runs)))
    bundles = {}
    for compression in compressions:
        target = out / f"b.bundle.tar.{'zst' if compression == 'zstd' else 'gz'}"
        extra = (
            ["--compression", compression] if len(compressions) > 1 or compression != "gzip" else []
        )
        packing.append(
            Timing(
                f"reprobundle build ({compression})",
                *timed(
                    [*rb, "build", str(source), "-o", str(target), "-q", *extra], env=env, runs=runs
                ),
            )
        )
        bundles[compression] = target
    if shutil.which("bagit.py"):
        bag = work / "bag"

        def copy_for_bag() -> None:
            shutil.rmtree(bag, ignore_errors=True)
            shutil.copytree(data_dir, bag)

        packing.append(
            Timing(
                "bagit.py (make bag)",
                *timed(
                    ["bagit.py", "--quiet", "--processes", "1", str(bag)],
                    prepare=copy_for_bag,
                    runs=runs,
                ),
            )
        )
    rows.append((f"{ds.name}: build", packing))

    # --- integrity verification
    checking: list[Timing] = []
    unpack = work / "unpack"
    sums = work / "SHA256SUMS"
    subprocess.run(
        f"cd {data_dir} && find . -type f -print0 | sort -z | xargs -0 sha256sum > {sums}",
        shell=True,
        check=True,
    )
    checking.append(
        Timing(
            "tar --zstd -xf",
            *timed(
                ["tar", "--zstd", "-xf", str(out / "b.tar.zst"), "-C", str(unpack)],
                prepare=reset(unpack),
                runs=runs,
            ),
        )
    )
    checking.append(
        Timing(
            "tar -xzf",
            *timed(
                ["tar", "-xzf", str(out / "b.tar.gz"), "-C", str(unpack)],
                prepare=reset(unpack),
                runs=runs,
            ),
        )
    )
    checking.append(
        Timing(
            "tar -xzf + sha256sum -c",
            *timed(
                [
                    "sh",
                    "-c",
                    f"tar -xzf {out / 'b.tar.gz'} -C {unpack} && cd {unpack}/data && sha256sum --quiet -c {sums}",
                ],
                prepare=reset(unpack),
                runs=runs,
            ),
        )
    )
    for compression, target in bundles.items():
        checking.append(
            Timing(
                f"reprobundle verify ({compression})",
                *timed(
                    [*rb, "verify", str(target), "--quiet", "--workdir", str(unpack)],
                    prepare=reset(unpack),
                    runs=runs,
                ),
            )
        )
    if shutil.which("bagit.py"):
        checking.append(
            Timing(
                "bagit.py --validate",
                *timed(["bagit.py", "--quiet", "--validate", str(work / "bag")], runs=runs),
            )
        )
    rows.append((f"{ds.name}: verify", checking))
    return rows


def table(rows: list[tuple[str, list[Timing]]]) -> str:
    lines = [
        "| task | tool | median s | peak RSS MiB | ratio to first row |",
        "| --- | --- | ---: | ---: | ---: |",
    ]
    for task, timings in rows:
        base = timings[0].seconds
        for t in timings:
            lines.append(
                f"| {task} | {t.label} | {t.seconds:.2f} | {t.rss_mib:.0f} | {t.seconds / base:.2f}x |"
            )
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--full", action="store_true", help="the issue's sizes instead of quick ones"
    )
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--work", type=Path, default=Path("/tmp/reprobundle-bench"))
    parser.add_argument("--only", nargs="*", help="dataset names to run")
    parser.add_argument("--compression", nargs="*", default=["gzip"])
    args = parser.parse_args()
    rows = []
    for ds in DATASETS(full=args.full):
        if args.only and ds.name not in args.only:
            continue
        print(f"running {ds.name} ...", file=sys.stderr, flush=True)
        work = args.work / ds.name
        shutil.rmtree(work, ignore_errors=True)
        work.mkdir(parents=True)
        rows += bench_dataset(ds, work, args.runs, args.compression)
        shutil.rmtree(work, ignore_errors=True)
    print(
        f"\nreprobundle benchmark ({'full' if args.full else 'quick'} sizes, median of {args.runs} runs, "
        f"{os.cpu_count()} cores)\n"
    )
    print(table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
