"""Benchmark archive verify: the local process pool against a local Dask cluster.

    python bench/archive_dask_bench.py [--bundles 1000] [--jobs 2] [--work DIR] [--json FILE]

Makes N small distinct bundles (as archive_bench.py does), adds them to an archive, copies
it, then re-verifies every bundle of one copy with the local pool (``--jobs``) and of the
other on a Dask cluster on 127.0.0.1 (a scheduler and ``--jobs`` single-threaded workers,
started here as subprocesses and stopped after). Both copies must end with the same
results. Also times ``log verify`` (the audit of every index row against the log, which
archive verify runs first). Needs reprobundle[distributed].
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(HERE))

from archive_bench import make_bundles  # noqa: E402

from bundler.store import Archive  # noqa: E402
from tests.dask_cluster import local_cluster  # noqa: E402


def verify(root: Path, **options: object) -> tuple[float, dict[str, str]]:
    with Archive.open(root) as archive:
        start = time.perf_counter()
        outcomes = archive.verify(all_bundles=True, **options)  # type: ignore[arg-type]
        seconds = time.perf_counter() - start
    return seconds, {o.digest: o.result for o in outcomes}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bundles", type=int, default=1000)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--work", type=Path)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="rb-dask-bench-", dir=args.work))
    try:
        files = make_bundles(work, args.bundles)
        local = work / "local"
        with Archive.init(local) as archive:
            start = time.perf_counter()
            archive.add(files)
            add_seconds = time.perf_counter() - start
        remote = work / "remote"
        shutil.copytree(local, remote)
        with Archive.open(local, read_only=True) as archive:
            start = time.perf_counter()
            assert archive.verify_log().problems == []
            audit_seconds = time.perf_counter() - start
        pool_seconds, pool = verify(local, jobs=args.jobs)
        with local_cluster(work / "cluster", workers=args.jobs) as cluster:
            dask_seconds, dask = verify(remote, scheduler=cluster.address)
        assert pool == dask and len(pool) == args.bundles, "the two runs differ"
        rows = [
            ("add (1 process)", add_seconds),
            ("log verify (audit of the index, before any verification)", audit_seconds),
            (f"verify --all --jobs {args.jobs} (local pool)", pool_seconds),
            (
                f"verify --all --scheduler (local cluster, {args.jobs} workers x 1 thread)",
                dask_seconds,
            ),
        ]
        print(f"{args.bundles} bundles, {os.cpu_count()} cores, Python {platform.python_version()}")
        print("| task | seconds | bundles/s | ratio to the local pool |")
        print("| --- | ---: | ---: | ---: |")
        for task, seconds in rows:
            print(
                f"| {task} | {seconds:.1f} | {args.bundles / seconds:.1f} | "
                f"{seconds / pool_seconds:.2f}x |"
            )
        if args.json:
            args.json.write_text(json.dumps(dict(rows), indent=2))
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
