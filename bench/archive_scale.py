"""The archive at scale (issue 47, item 4): each step's time per bundle and peak memory, from
100 to 10,000 bundles, with the slope between the smallest and the largest size.

    python bench/archive_scale.py --sizes 100 1000 --work /tmp/rb-scale            # develop
    python bench/archive_scale.py --sizes 100 1000 10000 --rounds 100 --dask        # the issue
    python bench/archive_scale.py --sizes 100 1000 --names one --steps add show    # a part

For each size and each kind of names (``one``: one name with N versions, as a nightly
eval publishes; ``many``: N names of one version), N small bundles (copies of the
quickstart example, packed as ``archive_bench.py`` packs them) are added to a new archive,
then: ``show NAME@VERSION`` of the last one (and its statements, as the command reads
them), ``verify --all --jobs J``, the log grown by ``--rounds`` more verifications of every
bundle (each round a record per bundle: 100 rounds of 10,000 bundles is 1,000,000
records), ``log verify``, ``export`` of one bundle, and re-opening the index (``open``
with its checkpoint check, and ``list``); with ``--dask``, ``verify --all`` on a local Dask
cluster too. Each step runs in a process of its own, so its peak RSS (``ru_maxrss``) is its
own; the time of a step over many bundles is given per bundle. ``add`` is also timed at the
end alone: the last ``--tail`` adds, one call each, into the full archive.

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
from collections.abc import Callable
from pathlib import Path
from typing import Any

import tomli_w

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO))

STEPS = ("add", "add-tail", "show", "verify", "dask", "grow", "log-verify", "export", "reopen")
PER_BUNDLE = {"add", "verify", "dask", "grow", "log-verify", "reopen"}


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


def _step(step: str, root: Path, files: list[Path], options: dict[str, Any]) -> dict[str, Any]:
    from bundler.store import Archive

    last = files[-1].name.split(".bundle.")[0]
    name, version = last.rsplit("-", 1)
    start = time.perf_counter()
    count = len(files)
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
            times = []
            for _ in range(5):
                begun = time.perf_counter()
                shown = archive.show(f"{name}@{version}")
                archive.statements(shown.bundle.name, shown.bundle.digest)
                times.append(time.perf_counter() - begun)
        start, count = time.perf_counter() - statistics.median(times), 1
    elif step in ("verify", "grow"):
        rounds = 1 if step == "verify" else options["rounds"]
        with Archive.open(root) as archive:
            for _ in range(rounds):
                archive.verify(all_bundles=True, jobs=options["jobs"])
        count = len(files) * rounds
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
            times = []
            for n in range(5):
                begun = time.perf_counter()
                archive.export(f"{name}@{version}", root.parent / f"exported-{n}.bundle.tar.gz")
                times.append(time.perf_counter() - begun)
        start, count = time.perf_counter() - statistics.median(times), 1
    elif step == "reopen":
        with Archive.open(root) as archive:
            rows = archive.list_bundles()
        assert len(rows) == len(files)
    seconds = time.perf_counter() - start
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {"seconds": seconds, "count": count, "rss_mib": rss}


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
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    if done.returncode != 0:
        raise SystemExit(f"{step} failed:\n{done.stderr[-3000:]}")
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
    parser.add_argument("--work", type=Path)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    if args.quick:
        args.sizes, args.rounds = [100, 1000], min(args.rounds, 2)
    steps = [*args.steps, *(["dask"] if args.dask else [])]
    work = Path(tempfile.mkdtemp(prefix="rb-archive-scale-", dir=args.work))
    options = {"jobs": args.jobs, "rounds": args.rounds, "tail": args.tail}
    kinds = ["one", "many"] if args.names == "both" else [args.names]
    results: dict[str, dict[int, dict[str, dict[str, Any]]]] = {}
    try:
        for names in kinds:
            results[names] = {
                size: measure(work, size, names, steps, options) for size in args.sizes
            }
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(
        f"{os.cpu_count()} cores, Python {platform.python_version()}, sizes {args.sizes}, "
        f"--rounds {args.rounds} --jobs {args.jobs} --tail {args.tail}"
    )
    print(table(results, args.sizes))
    print()
    print(target_table(results, args.sizes))
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
    return 0


def _unit(step: str) -> str:
    return "record" if step == "log-verify" else ("bundle" if step in PER_BUNDLE else "call")


def table(results: dict[str, dict[int, dict[str, dict[str, Any]]]], sizes: list[int]) -> str:
    head = " | ".join(f"{size:,}: ms/unit (peak MiB)" for size in sizes)
    lines = [
        f"| names | step | unit | {head} | slope {sizes[0]:,} -> {sizes[-1]:,} |",
        "| --- | --- | --- | " + " | ".join("---:" for _ in sizes) + " | ---: |",
    ]
    per: Callable[[dict[str, Any]], float] = lambda r: 1000 * r["seconds"] / max(1, r["count"])  # noqa: E731
    for names, by_size in results.items():
        for step in STEPS:
            rows = [by_size[size].get(step) for size in sizes]
            if any(r is None for r in rows):
                continue
            cells = " | ".join(f"{per(r):.3f} ({r['rss_mib']:.0f})" for r in rows if r)
            slope = per(rows[-1]) / per(rows[0]) if rows[0] and rows[-1] and per(rows[0]) else 0
            lines.append(f"| {names} | {step} | {_unit(step)} | {cells} | {slope:.2f} |")
    return "\n".join(lines)


FLAT, MAX_RSS_MIB = 1.5, 200  # the slope allowed (the noise of a shared machine), peak RSS


def target_table(results: dict[str, dict[int, dict[str, dict[str, Any]]]], sizes: list[int]) -> str:
    """One row per step in ``all.py``'s columns: the time per unit at the largest size
    against the same at the smallest (the yardstick: flat is 1.0x)."""
    lines = [
        "| work | reprobundle | yardstick | ratio | target | met? | peak RSS |",
        "| --- | ---: | --- | ---: | ---: | --- | ---: |",
    ]
    for names, by_size in results.items():
        for step in STEPS:
            small, large = by_size[sizes[0]].get(step), by_size[sizes[-1]].get(step)
            if not small or not large:
                continue
            a = 1000 * large["seconds"] / max(1, large["count"])
            b = 1000 * small["seconds"] / max(1, small["count"])
            slope = a / b if b else 0.0
            rss = max(r[step]["rss_mib"] for r in by_size.values() if step in r)
            ok = slope <= FLAT and rss < MAX_RSS_MIB
            lines.append(
                f"| archive ({'one name' if names == 'one' else 'many names'}) {step}, "
                f"{sizes[-1]:,} bundles | {a:.3f} ms/{_unit(step)} | the same at {sizes[0]:,}: "
                f"{b:.3f} ms | {slope:.2f}x | <= {FLAT}x, < {MAX_RSS_MIB} MiB "
                f"| {'yes' if ok else 'no'} | {rss:.0f} MiB |"
            )
    return "\n".join(lines)


if __name__ == "__main__":
    raise SystemExit(main())
