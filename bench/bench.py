"""Benchmark reprobundle against the real baselines, on the same data, in the same run.

    python bench/bench.py                  # quick sizes, a few minutes on 2 cores
    python bench/bench.py --full           # issue 33's sizes (1 GiB; 5,000 and 20,000 files)
    python bench/bench.py --runs 5 --work /dev/shm/rb-bench --only files cases
    python bench/bench.py --full --largest --targets-only --work /tmp/rb-bench  # the targets

Each data set is measured at two sizes (to show cost growing linearly; --largest: only
the larger). Rows give the median wall time of --runs runs, the peak RSS of the command
and its children, and the median over the rounds of each run's ratio to the first row
of its group: for verify, decompressing and hashing every byte (``zstd -dc FILE |
openssl dgst -sha256``); for build, ``tar --zstd -cf`` followed by that pipeline. A row
issue 33 sets a target for also gives its ratio to the yardstick the issue names (verify:
that pipeline, or for the tiny files ``tar --zstd -xf`` into tmpfs; build: ``tar --zstd
-cf`` followed by ``reprobundle verify`` of the result) and whether it is met.
``reprobundle verify`` runs as a reviewer runs it, in a new temporary folder (TMPDIR is
--work; for the tiny files also on tmpfs), writing only the files its cases read; the
``--workdir`` row writes every file.
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
# TMPDIR is set to --work in main(); bytecode is written as an installed copy has it (with
# PYTHONDONTWRITEBYTECODE set, every run would compile the modules it imports)
ENV = {
    **{k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"},
    "SOURCE_DATE_EPOCH": "1700000000",
}
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
    yardstick: str = ""  # the row an issue target compares this one with, if any
    versus: float = 0.0  # the median of the per-round ratios to the yardstick
    target: float = 0.0  # the largest ratio to the yardstick the issue allows
    cpu_seconds: float = 0.0  # the median of user + system time (GNU time), children included

    @property
    def met(self) -> bool:
        return self.versus <= self.target


@dataclass
class Task:
    """One command of a group, and what to do before each run (outside the timing)."""

    label: str
    command: list[str]
    prepare: Callable[[], None] | None = None
    ok: tuple[int, ...] = (0,)  # exit codes of a run that worked (diff: 1 = different)
    env: dict[str, str] | None = None  # the environment, if not ENV
    yardstick: str = ""  # the label of the task of the group an issue target names
    target: float = 0.0  # the ratio to it the issue allows


# --before: (label, environment) of the code to compare with; --targets-only
BEFORE: list[tuple[str, dict[str, str]]] = []
TARGETS_ONLY: list[bool] = [False]


def before(task: Task) -> list[Task]:
    """``task`` run again with the code of --before first on the path (the same run)."""
    return [
        Task(
            f"{task.label} [{label}]",
            task.command,
            task.prepare,
            task.ok,
            {**(task.env or ENV), "PYTHONPATH": env["PYTHONPATH"]},
            task.yardstick,
            task.target,
        )
        for label, env in BEFORE
    ]


def keep(tasks: list[Task]) -> list[Task]:
    """With --targets-only, only the rows the issue's targets compare: the first, those
    with a target, and their yardsticks."""
    if not TARGETS_ONLY[0]:
        return tasks
    yardsticks = {t.yardstick for t in tasks if t.target}
    return [t for n, t in enumerate(tasks) if n == 0 or t.target or t.label in yardsticks]


def measure(group: str, tasks: list[Task], runs: int) -> list[Row]:
    """Median wall seconds and peak RSS (MiB) of each task over ``runs`` rounds.

    The tasks take turns (one run of each per round), so a slow spell of the machine hits
    them alike instead of one tool's every run. RSS and CPU time come from GNU time (``%M``, the
    largest process of the tree): measured from this process it would include the memory
    of this benchmark at the moment of the fork."""
    times: dict[str, list[float]] = {task.label: [] for task in tasks}
    cpus: dict[str, list[float]] = {task.label: [] for task in tasks}
    peaks: dict[str, list[float]] = {task.label: [] for task in tasks}
    rss_file = Path(ENV["TMPDIR"]) / "rss.txt"
    for _ in range(runs):
        for task in tasks:
            if task.prepare:
                task.prepare()
            start = time.perf_counter()
            done = subprocess.run(
                ["/usr/bin/time", "-f", "%U %S %M", "-o", str(rss_file), *task.command],
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
            user, system, rss = rss_file.read_text().split()[-3:]
            peaks[task.label].append(int(rss) / 1024)
            cpus[task.label].append(float(user) + float(system))

    def ratio(label: str, base: str) -> float:
        pairs = zip(times[label], times[base], strict=True)
        return statistics.median(t / b for t, b in pairs)

    return [
        Row(
            group,
            task.label,
            statistics.median(times[task.label]),
            max(peaks[task.label]),
            ratio(task.label, tasks[0].label),
            task.yardstick if task.target else "",
            ratio(task.label, task.yardstick) if task.target else 0.0,
            task.target,
            statistics.median(cpus[task.label]),
        )
        for task in tasks
    ]


def empty(path: Path) -> Callable[[], None]:
    def clear() -> None:
        shutil.rmtree(path, ignore_errors=True)
        path.mkdir(parents=True)

    return clear


# What issue 33 asks of each kind of data set: verify's yardstick and largest ratio
# ("tmpfs": ``tar --zstd -xf`` writing every file into tmpfs), and build's largest
# ratio to ``tar --zstd -cf`` followed by ``reprobundle verify`` of the result.
VERIFY_TARGETS = {"big": ("pipeline", 1.3), "files": ("pipeline", 1.5), "tiny": ("tmpfs", 1.0)}
BUILD_TARGET = 1.5
TMPFS = Path("/dev/shm")
PIPELINE = "zstd -dc \\| openssl dgst -sha256"
TAR_CF_VERIFY = "tar --zstd -cf + reprobundle verify of the result"
TAR_XF_TMPFS = "tar --zstd -xf into tmpfs"


def bench_files(ds: Dataset, work: Path, runs: int, kind: str = "files") -> list[Row]:
    source = make(ds, work / "src")
    out, unpack, bag = work / "out", work / "unpack", work / "bag"
    out.mkdir()
    bagit = shutil.which("bagit.py")
    shm = TMPFS / f"rb-bench-{os.getpid()}" if TMPFS.is_dir() and kind == "tiny" else None
    if shm is not None:
        shm.mkdir(exist_ok=True)

    def fresh_bag() -> None:
        shutil.rmtree(bag, ignore_errors=True)
        shutil.copytree(source / "data", bag)

    pipeline = f"zstd -dc {out / 't.tar.zst'} | openssl dgst -sha256 > /dev/null"
    ref = out / "ref.bundle.tar.zst"  # built once, outside the timing: what the yardstick verifies
    subprocess.run(
        [*RB, "build", str(source), "-o", str(ref), "-q"],
        env=ENV,
        check=True,
        stdout=subprocess.DEVNULL,
    )
    rb_verify_ref = f"{' '.join(RB)} verify {ref} -q > /dev/null"
    build = [
        Task(
            f"tar --zstd -cf + {PIPELINE}",
            ["sh", "-c", f"tar --zstd -cf {out / 't.tar.zst'} -C {source} . && {pipeline}"],
        ),
        Task(
            TAR_CF_VERIFY,
            ["sh", "-c", f"tar --zstd -cf {out / 't.tar.zst'} -C {source} . && {rb_verify_ref}"],
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
            **({"yardstick": TAR_CF_VERIFY, "target": BUILD_TARGET} if codec == "zstd" else {}),
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
    rows = measure(f"{ds.name}: build", keep(build), runs)

    sums = work / "SHA256SUMS"
    subprocess.run(
        f"cd {source} && find . -type f -print0 | sort -z | xargs -0 sha256sum > {sums}",
        shell=True,
        check=True,
    )
    check = [
        Task(
            PIPELINE,
            ["sh", "-c", f"zstd -dc {out / 'b.bundle.tar.zst'} | openssl dgst -sha256 > /dev/null"],
        ),
        Task(
            "tar --zstd -xf",
            ["tar", "--zstd", "-xf", str(out / "t.tar.zst"), "-C", str(unpack)],
            empty(unpack),
        ),
    ]
    if shm is not None:
        check.append(
            Task(
                TAR_XF_TMPFS,
                ["tar", "--zstd", "-xf", str(out / "t.tar.zst"), "-C", str(shm / "unpack")],
                empty(shm / "unpack"),
            )
        )
    check.append(
        Task(
            "tar --zstd -xf + sha256sum -c",
            [
                "sh",
                "-c",
                f"tar --zstd -xf {out / 't.tar.zst'} -C {unpack} && cd {unpack} && "
                f"sha256sum --quiet -c {sums}",
            ],
            empty(unpack),
        )
    )
    if len(CODECS) > 1:
        check.append(
            Task(
                "tar -xzf", ["tar", "-xzf", str(out / "t.tar.gz"), "-C", str(unpack)], empty(unpack)
            )
        )
    yardstick, target = VERIFY_TARGETS.get(kind, ("pipeline", 0.0))
    yardstick = TAR_XF_TMPFS if yardstick == "tmpfs" else PIPELINE
    if yardstick == TAR_XF_TMPFS and shm is None:
        target = 0.0  # no tmpfs here: no yardstick, so no target
    aim = {"yardstick": yardstick, "target": target}
    for codec, suffix in CODECS:
        rb_verify = Task(
            f"reprobundle verify ({codec}, temporary folder in --work)",
            [*RB, "verify", str(out / f"b.bundle.tar.{suffix}"), "-q"],
            **(aim if codec == "zstd" else {}),
        )
        check += [rb_verify, *before(rb_verify)]
        if shm is not None and codec == "zstd":
            on_tmpfs = Task(
                "reprobundle verify (zstd, temporary folder on tmpfs)",
                rb_verify.command,
                env={**ENV, "TMPDIR": str(shm)},
                **aim,
            )
            check += [on_tmpfs, *before(on_tmpfs)]
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
    try:
        return rows + measure(f"{ds.name}: verify", keep(check), runs)
    finally:
        if shm is not None:
            shutil.rmtree(shm, ignore_errors=True)


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
        "| data set: task | tool | median s (CPU s) | peak RSS MiB | ratio to first row of group "
        "| ratio to the target's yardstick | target |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for row in rows:
        aim = (
            f"{row.versus:.2f}x | {'met' if row.met else 'missed'}: <= {row.target}x"
            if row.target
            else " | "
        )
        lines.append(
            f"| {row.group} | {row.label} | {row.seconds:.2f} ({row.cpu_seconds:.2f}) "
            f"| {row.rss_mib:.0f} | "
            f"{row.ratio:.2f}x | {aim} |"
        )
    return "\n".join(lines)


def run(
    kinds: list[str] | None,
    full: bool,
    runs: int,
    work: Path,
    largest: bool = False,
    zstd_only: bool = False,
    before_code: list[Path] | None = None,
) -> list[Row]:
    """Every group of ``kinds`` (None: all), measured under ``work``; the table so far is
    printed to stderr after each data set, so a later failure keeps it."""
    work.mkdir(parents=True, exist_ok=True)
    ENV["TMPDIR"] = str(work)  # temporary folders (build's verify at home) on the same disk
    for old in before_code or []:
        path = os.pathsep.join(filter(None, [str(old.absolute()), ENV.get("PYTHONPATH")]))
        BEFORE.append((f"before: {old.name}", {**ENV, "PYTHONPATH": path}))
    if zstd_only:
        CODECS[:] = [("zstd", "zst")]
    rows: list[Row] = []
    every = list(datasets(full))
    for n, (kind, ds) in enumerate(every):
        if kinds and kind not in kinds:
            continue
        if largest and n + 1 < len(every) and every[n + 1][0] == kind:
            continue
        print(f"running {ds.name} ...", file=sys.stderr, flush=True)
        folder = work / ds.name
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        if kind == "claims":
            rows += bench_claims(ds.files, folder, runs)
        elif kind == "cases":
            rows += bench_cases(ds.files, folder, runs)
        else:
            rows += bench_files(ds, folder, runs, kind)
        shutil.rmtree(folder, ignore_errors=True)
        print(table(rows), file=sys.stderr, flush=True)
    return rows


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
    rows = run(
        args.only, args.full, args.runs, args.work, args.largest, args.zstd_only, args.before
    )
    print(
        f"\nreprobundle benchmark: {'full' if args.full else 'quick'} sizes, median of "
        f"{args.runs} runs, {os.cpu_count()} cores, work folder {args.work}\n"
    )
    print(table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
