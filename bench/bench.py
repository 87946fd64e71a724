"""Benchmark reprobundle against the real baselines, on the same data, in the same run.

    python bench/bench.py                  # quick sizes, a few minutes on 2 cores
    python bench/bench.py --full           # the issue's sizes (1 GiB, 20,000 and 100,000 files)
    python bench/bench.py --runs 5 --work /dev/shm/rb-bench --only files cases
    python bench/bench.py --full --largest --work /tmp/rb-bench   # the issue's targets, on disk

Each data set is measured at two sizes (to show cost growing linearly; --largest: only
the larger). Rows give the median wall time of --runs runs, the peak RSS of the command
and its children, and the median over the rounds of each run's ratio to the first row
of its group: for verify, decompressing and hashing every byte (``zstd -dc FILE |
openssl dgst -sha256``); for build, ``tar --zstd -cf`` followed by that pipeline.
``reprobundle verify`` runs as a reviewer runs it, in a new temporary folder (TMPDIR is
--work), writing only the files its cases read; the ``--workdir`` row writes every file.
The commands of a group take turns, one run of each per round, so a slow spell of the
machine does not fall on one tool alone.
Every command writes and reads in the same folder (--work), so all see the same file
system. Run by hand; never from tests.
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

from datasets import Dataset, datasets, make, make_cases  # noqa: E402

RB = [sys.executable, "-m", "bundler"]
MIB = 1024 * 1024
CODECS = [("zstd", "zst"), ("gzip", "gz")]  # --zstd-only keeps the first
ENV = {**os.environ, "SOURCE_DATE_EPOCH": "1700000000"}  # TMPDIR is set to --work in main()
PACK_ONLY = """
import sys
from pathlib import Path
from bundler.authoring.build import make_manifest, members_of
from bundler.container.compression import CODECS
from bundler.container.pack import write_tar
from bundler.authoring.source import read_source
plan = read_source(Path(sys.argv[1]))
manifest, readme = make_manifest(plan, 0)
members = members_of(manifest, manifest.to_bytes(), readme, plan.root)
with open(sys.argv[2], "wb") as out:
    write_tar(out, members, 0, CODECS[sys.argv[3]])
"""


@dataclass
class Row:
    group: str
    label: str
    seconds: float
    rss_mib: float
    ratio: float  # the median of the per-round ratios to the group's first row


@dataclass
class Task:
    """One command of a group, and what to do before each run (outside the timing)."""

    label: str
    command: list[str]
    prepare: Callable[[], None] | None = None
    ok: tuple[int, ...] = (0,)  # exit codes of a run that worked (diff: 1 = different)
    env: dict[str, str] | None = None  # the environment, if not ENV


# --before: (label, environment) of the code to compare with; --targets-only
BEFORE: list[tuple[str, dict[str, str]]] = []
TARGETS_ONLY: list[bool] = [False]


def before(task: Task) -> list[Task]:
    """``task`` run again with the code of --before first on the path (the same run)."""
    return [
        Task(f"{task.label} [{label}]", task.command, task.prepare, task.ok, env)
        for label, env in BEFORE
    ]


def keep(tasks: list[Task], targets: set[str]) -> list[Task]:
    """With --targets-only, only the rows the issue's targets compare."""
    if not TARGETS_ONLY[0]:
        return tasks
    return [t for t in tasks if t.label.split(" [")[0] in targets]


def measure(group: str, tasks: list[Task], runs: int) -> list[Row]:
    """Median wall seconds and peak RSS (MiB) of each task over ``runs`` rounds.

    The tasks take turns (one run of each per round), so a slow spell of the machine hits
    them alike instead of one tool's every run. RSS comes from GNU time (``%M``, the
    largest process of the tree): measured from this process it would include the memory
    of this benchmark at the moment of the fork."""
    times: dict[str, list[float]] = {task.label: [] for task in tasks}
    peaks: dict[str, list[float]] = {task.label: [] for task in tasks}
    rss_file = Path(ENV["TMPDIR"]) / "rss.txt"
    for _ in range(runs):
        for task in tasks:
            if task.prepare:
                task.prepare()
            start = time.perf_counter()
            done = subprocess.run(
                ["/usr/bin/time", "-f", "%M", "-o", str(rss_file), *task.command],
                env=task.env or ENV,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                check=False,
            )
            times[task.label].append(time.perf_counter() - start)
            if done.returncode not in task.ok:
                raise SystemExit(
                    f"failed: {' '.join(task.command)}\n{done.stderr.decode(errors='replace')}"
                )
            peaks[task.label].append(int(rss_file.read_text().split()[-1]) / 1024)
    base = times[tasks[0].label]
    return [
        Row(
            group,
            task.label,
            statistics.median(times[task.label]),
            max(peaks[task.label]),
            statistics.median(t / b for t, b in zip(times[task.label], base, strict=True)),
        )
        for task in tasks
    ]


def empty(path: Path) -> Callable[[], None]:
    def clear() -> None:
        shutil.rmtree(path, ignore_errors=True)
        path.mkdir(parents=True)

    return clear


def bench_files(ds: Dataset, work: Path, runs: int) -> list[Row]:
    source = make(ds, work / "src")
    out, unpack, bag = work / "out", work / "unpack", work / "bag"
    out.mkdir()
    bagit = shutil.which("bagit.py")

    def fresh_bag() -> None:
        shutil.rmtree(bag, ignore_errors=True)
        shutil.copytree(source / "data", bag)

    pipeline = f"zstd -dc {out / 't.tar.zst'} | openssl dgst -sha256 > /dev/null"
    build = [
        Task(
            "tar --zstd -cf + zstd -dc \\| openssl dgst -sha256",
            ["sh", "-c", f"tar --zstd -cf {out / 't.tar.zst'} -C {source} . && {pipeline}"],
        ),
        Task(
            "tar --zstd -cf",
            ["tar", "--zstd", "-cf", str(out / "t.tar.zst"), "-C", str(source), "."],
        ),
    ]
    if len(CODECS) > 1:
        build.append(
            Task("tar -czf", ["tar", "-czf", str(out / "t.tar.gz"), "-C", str(source), "."])
        )
    for codec, suffix in CODECS:
        rb_build = Task(
            f"reprobundle build ({codec}, with verify at home)",
            [*RB, "build", str(source), "-o", str(out / f"b.bundle.tar.{suffix}"), "-q"],
        )
        build += [
            Task(
                f"reprobundle pack only ({codec})",
                [sys.executable, "-c", PACK_ONLY, str(source), str(out / f"p.{suffix}"), codec],
            ),
            rb_build,
            *before(rb_build),
        ]
    if bagit:
        build.append(
            Task(
                "bagit.py (make bag, 1 process)",
                ["bagit.py", "--quiet", "--processes", "1", str(bag)],
                fresh_bag,
            )
        )
    build_targets = {build[0].label, "reprobundle build (zstd, with verify at home)"}
    rows = measure(f"{ds.name}: build", keep(build, build_targets), runs)

    sums = work / "SHA256SUMS"
    subprocess.run(
        f"cd {source} && find . -type f -print0 | sort -z | xargs -0 sha256sum > {sums}",
        shell=True,
        check=True,
    )
    check = [
        Task(
            "zstd -dc \\| openssl dgst -sha256",
            ["sh", "-c", f"zstd -dc {out / 'b.bundle.tar.zst'} | openssl dgst -sha256 > /dev/null"],
        ),
        Task(
            "tar --zstd -xf",
            ["tar", "--zstd", "-xf", str(out / "t.tar.zst"), "-C", str(unpack)],
            empty(unpack),
        ),
        Task(
            "tar --zstd -xf + sha256sum -c",
            [
                "sh",
                "-c",
                f"tar --zstd -xf {out / 't.tar.zst'} -C {unpack} && cd {unpack} && "
                f"sha256sum --quiet -c {sums}",
            ],
            empty(unpack),
        ),
    ]
    if len(CODECS) > 1:
        check.append(
            Task(
                "tar -xzf", ["tar", "-xzf", str(out / "t.tar.gz"), "-C", str(unpack)], empty(unpack)
            )
        )
    for codec, suffix in CODECS:
        rb_verify = Task(
            f"reprobundle verify ({codec})",
            [*RB, "verify", str(out / f"b.bundle.tar.{suffix}"), "-q"],
        )
        check += [rb_verify, *before(rb_verify)]
    check.append(
        Task(
            "reprobundle verify --workdir (zstd, writes every file)",
            [*RB, "verify", str(out / "b.bundle.tar.zst"), "-q", "--workdir", str(unpack)],
            empty(unpack),
        )
    )
    if bagit:
        check.append(
            Task(
                "bagit.py --validate (1 process)",
                ["bagit.py", "--quiet", "--validate", "--processes", "1", str(bag)],
            )
        )
    check_targets = {check[0].label, "reprobundle verify (zstd)"}
    return rows + measure(f"{ds.name}: verify", keep(check, check_targets), runs)


def bench_cases(cases: int, work: Path, runs: int) -> list[Row]:
    source = make_cases(work / "src", cases)
    bundle = work / "cases.bundle.tar.zst"
    subprocess.run(
        [*RB, "build", str(source), "-o", str(bundle), "-q"],
        env=ENV,
        check=True,
        stdout=subprocess.DEVNULL,
    )
    unpack = work / "unpack"
    tasks = [
        Task(
            f"reprobundle verify -j {jobs}",
            [*RB, "verify", str(bundle), "-q", "-j", str(jobs), "--workdir", str(unpack)],
            empty(unpack),
        )
        for jobs in (1, os.cpu_count() or 1)
    ]
    return measure(f"{cases} built-in cases: verify", tasks, runs)


MANIFEST_LIMIT = str(256 * 1024 * 1024)  # past the 16 MiB default: 40,000 cases x 10 claims


def bench_claims(cases: int, work: Path, runs: int) -> list[Row]:
    """Per-claim and per-case costs stay linear: ``cases`` cases cited by 10 claims against
    the same cases cited by one (the baseline), then ``diff`` of two such bundles (large
    manifests) against ``inspect`` of one (reading and checking it, without comparing).

    The bundles are packed without build's verification at home, which keeps the default
    manifest limit; every command here is given ``--max-manifest-bytes`` 256 MiB."""
    bundles = {}
    for claims in (1, 10):
        source = make_cases(work / f"src-{claims}", cases, claims)
        bundles[claims] = work / f"claims-{claims}.bundle.tar.zst"
        subprocess.run(
            [sys.executable, "-c", PACK_ONLY, str(source), str(bundles[claims]), "zstd"],
            env=ENV,
            check=True,
        )
        shutil.rmtree(source)
        size = len(read_manifest(bundles[claims]))
        print(f"{cases} cases x {claims} claim(s): manifest {size / MIB:.1f} MiB", file=sys.stderr)
    unpack = work / "unpack"
    limit = ["--max-manifest-bytes", MANIFEST_LIMIT]
    verify = [*RB, "verify", "-q", "-j", "1", "--workdir", str(unpack), *limit]
    rows = measure(
        f"{cases} cases: verify",
        [
            Task("cited by 1 claim", [*verify, str(bundles[1])], empty(unpack)),
            Task("cited by 10 claims", [*verify, str(bundles[10])], empty(unpack)),
        ],
        runs,
    )
    return rows + measure(
        f"{cases} cases x 10 claims: diff",
        [
            Task("reprobundle inspect (one bundle)", [*RB, "inspect", str(bundles[10]), *limit]),
            Task(
                "reprobundle diff (two bundles)",
                [*RB, "diff", str(bundles[1]), str(bundles[10]), "-q", *limit],
                ok=(1,),
            ),
        ],
        runs,
    )


def read_manifest(bundle: Path) -> bytes:
    """The manifest's bytes (the first member of the tar), for the size it is printed with."""
    import tarfile

    import zstandard

    with (
        bundle.open("rb") as raw,
        zstandard.ZstdDecompressor().stream_reader(raw) as stream,
        tarfile.open(fileobj=stream, mode="r|") as tar,
    ):
        member = tar.next()
        assert member is not None
        data = tar.extractfile(member)
        assert data is not None
        return data.read()


def table(rows: list[Row]) -> str:
    lines = [
        "| data set: task | tool | median s | peak RSS MiB | ratio to first row of group |",
        "| --- | --- | ---: | ---: | ---: |",
    ]
    for row in rows:
        lines.append(
            f"| {row.group} | {row.label} | {row.seconds:.2f} | {row.rss_mib:.0f} | "
            f"{row.ratio:.2f}x |"
        )
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--full", action="store_true", help="the issue's sizes")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--work", type=Path, default=Path("/tmp/reprobundle-bench"))
    parser.add_argument("--only", nargs="*", choices=["big", "files", "tiny", "cases", "claims"])
    parser.add_argument("--largest", action="store_true", help="only the larger size of each")
    parser.add_argument("--zstd-only", action="store_true", help="leave out the gzip rows")
    parser.add_argument(
        "--before",
        type=Path,
        action="append",
        default=[],
        help="a copy of older code (e.g. `git archive REV bundler checkers manifests`, "
        "unpacked) to run beside the current one, first on PYTHONPATH; repeatable",
    )
    parser.add_argument(
        "--targets-only",
        action="store_true",
        help="only the rows the issue's targets compare: the baseline pipeline and "
        "reprobundle build and verify (with their --before rows)",
    )
    args = parser.parse_args()
    TARGETS_ONLY[0] = args.targets_only
    args.work.mkdir(parents=True, exist_ok=True)
    ENV["TMPDIR"] = str(args.work)  # temporary folders (build's verify at home) on the same disk
    for old in args.before:
        path = os.pathsep.join(filter(None, [str(old.absolute()), ENV.get("PYTHONPATH")]))
        BEFORE.append((f"before: {old.name}", {**ENV, "PYTHONPATH": path}))
    rows: list[Row] = []
    every = list(datasets(args.full))
    for n, (kind, ds) in enumerate(every):
        if args.only and kind not in args.only:
            continue
        if args.largest and n + 1 < len(every) and every[n + 1][0] == kind:
            continue
        print(f"running {ds.name} ...", file=sys.stderr, flush=True)
        if args.zstd_only:
            CODECS[:] = [("zstd", "zst")]
        work = args.work / ds.name
        shutil.rmtree(work, ignore_errors=True)
        work.mkdir(parents=True)
        if kind == "claims":
            rows += bench_claims(ds.files, work, args.runs)
        elif kind == "cases":
            rows += bench_cases(ds.files, work, args.runs)
        else:
            rows += bench_files(ds, work, args.runs)
        shutil.rmtree(work, ignore_errors=True)
        print(table(rows), file=sys.stderr, flush=True)  # so far: a later failure keeps it
    print(
        f"\nreprobundle benchmark: {'full' if args.full else 'quick'} sizes, median of "
        f"{args.runs} runs, {os.cpu_count()} cores, work folder {args.work}\n"
    )
    print(table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
