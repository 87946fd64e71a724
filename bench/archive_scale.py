"""The archive at scale (issue 47, item 4): each step's time per bundle and peak memory, from
100 to 10,000 bundles, with the slope between the smallest and the largest size.

    python bench/archive_scale.py --sizes 100 1000 --work /tmp/rb-scale            # develop
    python bench/archive_scale.py --sizes 100 10000 --rounds 1 --log-records 1000000   # the issue
    python bench/archive_scale.py --sizes 100 1000 10000 --rounds 1 --dask
    python bench/archive_scale.py --sizes 100 1000 --names one --steps add show    # a part

For each size and each kind of names (``one``: one name with N versions, as a nightly
eval publishes; ``many``: N names of one version), N small bundles (copies of the
quickstart example, packed as ``archive_bench.py`` packs them) are added to a new archive,
then: ``verify --all --jobs J``; the log grown by ``--rounds`` more verifications of every
bundle (``verify --all``, the command's own path), and then, with ``--log-records R``, at
the largest size, up to R records by recording the outcomes of the last real verification
of every bundle again, in turn, through the function ``archive verify`` records each outcome
with (``bundler.store.verify.record``: the verification row, the bundle's last result and
the audit record, one transaction each), its connection set to ``PRAGMA synchronous = OFF``
(the records are the ones a verification writes; only the bench's wait for the disk at each
commit, and the verifying itself, are left out: 100 real rounds of 10,000 bundles take
hours); a checkpoint issued; then, on that log: ``show NAME@VERSION`` of the last bundle (and
its statements, as the command reads them), ``verify NAME@VERSION`` of it (one worker
process; its CPU time is the worker's too, and the part this process spent, checking the
bundle against its records and recording the result, is printed beside it), ``log
verify``, ``export`` of one bundle, and re-opening the index (``open`` with its checkpoint
check, and ``list``); with ``--dask``, ``verify --all`` on a local Dask cluster too. Each
step runs in a process of its own, so its peak RSS (``ru_maxrss``) is its own; the time of a
step over many bundles is given per bundle, with its CPU time beside it (the wall time of a
shared machine is inflated by the others' work; CPU time much less). ``add`` is also timed
at the end alone: the last ``--tail`` adds, one call each, into the full archive. The load
average is printed with every step.

The slope column is the time per bundle (or per call, for the steps on one bundle) at the
largest size divided by that at the smallest: 1.0 is flat; a step that grows with the
square shows the factor between the sizes. Run by hand; never a test.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
import tomllib
from pathlib import Path
from typing import Any

import tomli_w

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO))

STEPS = (
    "add",
    "add-tail",
    "verify",
    "dask",
    "grow",
    "grow-append",
    "show",
    "verify-one",
    "log-verify",
    "export",
    "reopen",
)
PER_BUNDLE = {"add", "verify", "dask", "grow", "grow-append", "log-verify", "reopen"}


def make_bundles(folder: Path, count: int, names: str) -> list[Path]:
    """``count`` copies of the quickstart bundle: one name with ``count`` versions
    (``names == "one"``) or ``count`` names."""
    from bundler.authoring.build import build
    from bundler.container.compression import GZIP
    from bundler.container.pack import Member, write_tar

    base = build(REPO / "bundles" / "quickstart", folder / "base.bundle.tar.gz", 1700000000).path
    with tarfile.open(base, "r:gz") as tar:
        members = [(m.name, tar.extractfile(m).read()) for m in tar.getmembers() if m.isreg()]  # type: ignore[union-attr]
    manifest = tomllib.loads(members[0][1].decode())
    old_top = members[0][0].split("/")[0]
    out = []
    for i in range(count):
        name, version = ("nightly", f"1.0.{i}") if names == "one" else (f"eval-{i}", "1.0.0")
        manifest["bundle"]["name"], manifest["bundle"]["version"] = name, version
        top = f"{name}-{version}"
        packed = [Member(f"{top}/manifest.toml", data=tomli_w.dumps(manifest).encode())]
        packed += [Member(top + n[len(old_top) :], data=d) for n, d in members[1:]]
        target = folder / f"{top}.bundle.tar.gz"
        with target.open("wb") as stream:
            write_tar(stream, packed, 1700000000, GZIP)
        out.append(target)
    base.unlink()
    return out


# -- the steps, each in a child process -------------------------------------------------------


def _cpu() -> float:
    """CPU seconds of this process and of its children waited for (verify's workers)."""
    own, children = (
        resource.getrusage(resource.RUSAGE_SELF),
        resource.getrusage(resource.RUSAGE_CHILDREN),
    )
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def _own_cpu() -> float:
    """CPU seconds of this process alone (not its workers)."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    return own.ru_utime + own.ru_stime


def _step(step: str, root: Path, files: list[Path], options: dict[str, Any]) -> dict[str, Any]:
    from bundler.store import Archive

    last = files[-1].name.split(".bundle.")[0]
    name, version = last.rsplit("-", 1)
    begun_cpu = _cpu()
    start = time.perf_counter()
    count = len(files)
    extra: dict[str, Any] = {}
    if step == "add":
        with Archive.open(root) as archive:
            report = archive.add(files[: -options["tail"]] if options["tail"] else files)
            count = len(report.added)
    elif step == "add-tail":
        with Archive.open(root) as archive:
            start = time.perf_counter()
            for file in files[-options["tail"] :]:
                archive.add([file])
        count = options["tail"]
    elif step == "show":  # the median of 5 calls: one call is within the noise
        with Archive.open(root, read_only=True) as archive:
            times, cpus = [], []
            for _ in range(5):
                begun, begun_cpu = time.perf_counter(), _cpu()
                shown = archive.show(f"{name}@{version}")
                archive.statements(shown.bundle.name, shown.bundle.digest)
                times.append(time.perf_counter() - begun)
                cpus.append(_cpu() - begun_cpu)
        start, count = time.perf_counter() - statistics.median(times), 1
        begun_cpu = _cpu() - statistics.median(cpus)
    elif step == "verify-one":  # the median of 3 calls, as show (each starts a worker)
        with Archive.open(root) as archive:
            times, cpus, own = [], [], []
            for _ in range(3):
                begun, begun_cpu, begun_own = time.perf_counter(), _cpu(), _own_cpu()
                archive.verify([f"{name}@{version}"], jobs=1)
                times.append(time.perf_counter() - begun)
                cpus.append(_cpu() - begun_cpu)
                own.append(_own_cpu() - begun_own)
        start, count = time.perf_counter() - statistics.median(times), 1
        begun_cpu = _cpu() - statistics.median(cpus)
        extra["own_cpu_seconds"] = statistics.median(own)
    elif step in ("verify", "grow"):
        rounds = 1 if step == "verify" else options["rounds"]
        with Archive.open(root) as archive:
            for _ in range(rounds):
                archive.verify(all_bundles=True, jobs=options["jobs"])
        count = len(files) * rounds
    elif step == "grow-append":  # to --log-records records (the module's docstring says how)
        from bundler.store.verify import record

        with Archive.open(root) as archive:
            size, target = archive.context.head()[0], options["log_records"]
            batch = archive.verify(all_bundles=True, jobs=options["jobs"]) if size < target else ()
            outcomes = list(batch)
            archive.conn.execute("PRAGMA synchronous = OFF")  # the bench's commits only
            begun_cpu, start = _cpu(), time.perf_counter()
            first = size = archive.context.head()[0]
            while size < target:
                for outcome in outcomes[: target - size]:
                    record(archive.context, outcome)
                size = archive.context.head()[0]
                load = os.getloadavg()[0]
                print(f"    log: {size:,} records (load {load:.1f})", file=sys.stderr, flush=True)
            count = size - first
            archive.checkpoint()  # re-opening checks it
    elif step == "dask":
        from tests.dask_cluster import local_cluster

        cluster_folder = root.parent / "cluster"
        with (
            local_cluster(cluster_folder, workers=options["jobs"]) as cluster,
            Archive.open(root) as archive,
        ):
            start = time.perf_counter()
            archive.verify(all_bundles=True, scheduler=cluster.address)
    elif step == "log-verify":
        with Archive.open(root, read_only=True) as archive:
            start = time.perf_counter()
            report = archive.verify_log()
            assert not report.problems, report.problems[:3]
            count = report.size  # per record
    elif step == "export":  # the median of 5 calls, as show
        with Archive.open(root) as archive:
            times, cpus = [], []
            for n in range(5):
                begun, begun_cpu = time.perf_counter(), _cpu()
                archive.export(f"{name}@{version}", root.parent / f"exported-{n}.bundle.tar.gz")
                times.append(time.perf_counter() - begun)
                cpus.append(_cpu() - begun_cpu)
        start, count = time.perf_counter() - statistics.median(times), 1
        begun_cpu = _cpu() - statistics.median(cpus)
    elif step == "reopen":
        with Archive.open(root) as archive:
            rows = archive.list_bundles()
        assert len(rows) == len(files)
    seconds = time.perf_counter() - start
    cpu = _cpu() - begun_cpu
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {
        "seconds": seconds,
        "cpu_seconds": cpu,
        "count": count,
        "rss_mib": rss,
        "load": os.getloadavg()[0],
        **extra,
    }


def _child(argv: list[str]) -> None:
    step, root, listing, options = argv
    if step == "make":
        from bundler.store import Archive

        given = json.loads(options)
        made = make_bundles(Path(listing).parent / "files", given["size"], given["names"])
        Path(listing).write_text("\n".join(map(str, made)))
        Archive.init(Path(root)).close()
        print("{}")
        return
    files = [Path(line) for line in Path(listing).read_text().splitlines()]
    print(json.dumps(_step(step, Path(root), files, json.loads(options))))


def _run(step: str, root: Path, listing: Path, options: dict[str, Any]) -> dict[str, Any]:
    command = [sys.executable, __file__, "--child", step, str(root), str(listing)]
    done = subprocess.run(
        [*command, json.dumps(options)],
        stdout=subprocess.PIPE,  # its progress and errors go to our stderr as they come
        text=True,
        check=False,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    if done.returncode != 0:
        raise SystemExit(f"{step} failed (its error is above)")
    return dict(json.loads(done.stdout.splitlines()[-1]))


def measure(
    work: Path, size: int, names: str, steps: list[str], options: dict[str, Any]
) -> dict[str, dict[str, Any]]:
    folder = work / f"{names}-{size}"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    (folder / "files").mkdir()
    listing = folder / "files.txt"
    root = folder / "archive"
    # made in a process of its own: Linux keeps a parent's peak RSS in its children's
    # ru_maxrss, so this process imports nothing of ours and holds nothing
    _run("make", root, listing, {"size": size, "names": names})
    found: dict[str, dict[str, Any]] = {}
    options = {**options, "tail": min(options["tail"], size // 2)}
    for step in [s for s in STEPS if s in steps or (s == "add-tail" and "add" in steps)]:
        found[step] = _run(step, root, listing, options)
        print(f"  {names} {size}: {step} {found[step]}", file=sys.stderr, flush=True)
    shutil.rmtree(folder, ignore_errors=True)
    return found


def main() -> int:
    if sys.argv[1:2] == ["--child"]:
        _child(sys.argv[2:])
        return 0
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 1000, 10000])
    parser.add_argument("--quick", action="store_true", help="sizes 100 and 1,000, 2 rounds")
    parser.add_argument("--runs", type=int, default=1, help="accepted for all.py: one run each")
    parser.add_argument("--names", choices=["one", "many", "both"], default="both")
    parser.add_argument("--steps", nargs="+", default=[s for s in STEPS if s != "dask"])
    parser.add_argument("--dask", action="store_true", help="verify on a local Dask cluster too")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=10, help="verifications that grow the log")
    parser.add_argument("--tail", type=int, default=20, help="adds timed alone at the end")
    parser.add_argument(
        "--log-records",
        type=int,
        default=0,
        help="at the largest size, grow the log to this many records (1000000: the issue's)",
    )
    parser.add_argument("--work", type=Path)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    if args.quick:
        args.sizes, args.rounds = [100, 1000], min(args.rounds, 2)
    steps = [*args.steps, *(["dask"] if args.dask else [])]
    if args.work is not None:
        args.work.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="rb-archive-scale-", dir=args.work))
    options = {"jobs": args.jobs, "rounds": args.rounds, "tail": args.tail, "log_records": 0}
    print(f"load average at the start: {os.getloadavg()}", file=sys.stderr, flush=True)
    kinds = ["one", "many"] if args.names == "both" else [args.names]
    results: dict[str, dict[int, dict[str, dict[str, Any]]]] = {}
    try:
        for names in kinds:
            results[names] = {
                size: measure(
                    work,
                    size,
                    names,
                    steps,
                    {**options, "log_records": args.log_records if size == max(args.sizes) else 0},
                )
                for size in args.sizes
            }
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(
        f"{os.cpu_count()} cores, Python {platform.python_version()}, sizes {args.sizes}, "
        f"--rounds {args.rounds} --jobs {args.jobs} --tail {args.tail} "
        f"--log-records {args.log_records}; load average at the end {os.getloadavg()}"
    )
    print(logs(results))
    print(table(results, args.sizes))
    print()
    print(target_table(results, args.sizes))
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
    return 0


def _unit(step: str) -> str:
    if step in ("log-verify", "grow-append"):
        return "record"
    return "bundle" if step in PER_BUNDLE else "call"


SLOPED = [s for s in STEPS if s != "grow-append"]  # appended at the largest size only


def logs(results: dict[str, dict[int, dict[str, dict[str, Any]]]]) -> str:
    """How each log was made: the records appended through ``verify.record``, their time."""
    lines = []
    for names, by_size in results.items():
        for size, found in by_size.items():
            grown, checked = found.get("grow-append"), found.get("log-verify")
            if grown and grown["count"]:
                lines.append(
                    f"{names} {size:,}: {grown['count']:,} verification records appended through "
                    f"verify.record (not by re-verifying) in {grown['seconds']:.0f} s, "
                    f"{grown['cpu_seconds']:.0f} s CPU, load {grown['load']:.1f}; the log then "
                    f"held {checked['count'] if checked else '?':,} records"
                )
    return "\n".join(lines)


def _per(r: dict[str, Any], key: str = "seconds") -> float:
    return 1000 * float(r.get(key, 0.0)) / max(1, r["count"])


def table(results: dict[str, dict[int, dict[str, dict[str, Any]]]], sizes: list[int]) -> str:
    head = " | ".join(f"{size:,}: ms/unit wall / CPU (peak MiB, load)" for size in sizes)
    lines = [
        f"| names | step | unit | {head} | slope {sizes[0]:,} -> {sizes[-1]:,}, wall / CPU |",
        "| --- | --- | --- | " + " | ".join("---:" for _ in sizes) + " | ---: |",
    ]
    for names, by_size in results.items():
        for step in SLOPED:
            rows = [by_size[size].get(step) for size in sizes]
            if any(r is None for r in rows):
                continue
            cells = " | ".join(
                f"{_per(r):.3f} / {_per(r, 'cpu_seconds'):.3f} ({r['rss_mib']:.0f}, "
                f"{r.get('load', 0):.1f})"
                for r in rows
                if r
            )
            first, last = rows[0] or {}, rows[-1] or {}
            wall = _per(last) / _per(first) if _per(first) else 0.0
            cpu = (
                _per(last, "cpu_seconds") / _per(first, "cpu_seconds")
                if _per(first, "cpu_seconds")
                else 0.0
            )
            lines.append(f"| {names} | {step} | {_unit(step)} | {cells} | {wall:.2f} / {cpu:.2f} |")
    return "\n".join(lines)


FLAT, MAX_RSS_MIB = 1.5, 200  # the slope allowed (the noise of a shared machine), peak RSS


def target_table(results: dict[str, dict[int, dict[str, dict[str, Any]]]], sizes: list[int]) -> str:
    """One row per step in ``all.py``'s columns: the CPU time per unit at the largest size
    against the same at the smallest (the yardstick: flat is 1.0x), the wall times beside
    them. The ratio is of CPU time: on a shared machine the wall time of a millisecond call
    is the others' work as much as ours."""
    lines = [
        "| work | reprobundle | yardstick | ratio | target | met? | peak RSS |",
        "| --- | ---: | --- | ---: | ---: | --- | ---: |",
    ]
    for names, by_size in results.items():
        for step in SLOPED:
            small, large = by_size[sizes[0]].get(step), by_size[sizes[-1]].get(step)
            if not small or not large:
                continue
            a, b = _per(large, "cpu_seconds"), _per(small, "cpu_seconds")
            slope = a / b if b else 0.0
            wall = _per(large) / _per(small) if _per(small) else 0.0
            rss = max(r[step]["rss_mib"] for r in by_size.values() if step in r)
            ok = slope <= FLAT and rss < MAX_RSS_MIB
            lines.append(
                f"| archive ({'one name' if names == 'one' else 'many names'}) {step}, "
                f"{sizes[-1]:,} bundles | {a:.3f} ms CPU/{_unit(step)} ({_per(large):.3f} wall, "
                f"load {large.get('load', 0):.1f}) | the same at {sizes[0]:,}: {b:.3f} ms CPU "
                f"({_per(small):.3f} wall) | {slope:.2f}x (wall {wall:.2f}x) "
                f"| <= {FLAT}x, < {MAX_RSS_MIB} MiB | {'yes' if ok else 'no'} | {rss:.0f} MiB |"
            )
    return "\n".join(lines)


if __name__ == "__main__":
    raise SystemExit(main())
