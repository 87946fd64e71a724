"""Benchmark the archive: add N small bundles, then time list and show; then grow the
index to M rows and time the same queries again (with their query plans).

    python bench/archive_bench.py [--bundles 10000] [--index-rows 100000] [--work DIR]
                                  [--json FILE]

The bundles are copies of the quickstart example under distinct names and versions
(100 names x N/100 versions), written with the project's deterministic packer, so
generating them takes seconds. Each add is timed on its own, through the library
(``Archive.add``), which does what ``reprobundle archive add`` does: stage and hash the
file, strict read of every member, one index transaction with its audit record.
The rows beyond N are synthetic (inserted directly, no objects, no log records): they
measure the index's queries at scale, not add.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import sqlite3
import statistics
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

from bundler.authoring.build import build  # noqa: E402
from bundler.container.compression import GZIP  # noqa: E402
from bundler.container.pack import Member, write_tar  # noqa: E402
from bundler.store import Archive, signers  # noqa: E402


def make_bundles(folder: Path, count: int) -> list[Path]:
    base = build(REPO / "bundles" / "quickstart", folder / "base.bundle.tar.gz", 1700000000).path
    with tarfile.open(base, "r:gz") as tar:
        members = [(m.name, tar.extractfile(m).read()) for m in tar.getmembers() if m.isreg()]  # type: ignore[union-attr]
    manifest = tomllib.loads(members[0][1].decode())
    old_top = members[0][0].split("/")[0]
    out = []
    for i in range(count):
        name, version = f"bench-{i % 100}", f"1.{i // 100}.0"
        manifest["bundle"]["name"], manifest["bundle"]["version"] = name, version
        top = f"{name}-{version}"
        packed = [Member(f"{top}/manifest.toml", data=tomli_w.dumps(manifest).encode())]
        packed += [Member(top + n[len(old_top) :], data=d) for n, d in members[1:]]
        target = folder / f"{top}.bundle.tar.gz"
        with target.open("wb") as stream:
            write_tar(stream, packed, 1700000000, GZIP)
        out.append(target)
    return out


def timed(function: Callable[[], Any], repeat: int = 1) -> tuple[float, Any]:
    """Best wall time of ``repeat`` runs, in milliseconds, and the last result."""
    best, result = float("inf"), None
    for _ in range(repeat):
        start = time.perf_counter()
        result = function()
        best = min(best, time.perf_counter() - start)
    return best * 1000, result


def query_figures(archive: Archive, sample: list[tuple[str, str, str]]) -> dict[str, float]:
    name, _version, digest = sample[0]
    figures: dict[str, float] = {}
    figures["list_all_ms"], rows = timed(archive.list_bundles, 3)
    figures["list_all_rows"] = len(rows)
    figures["list_by_name_ms"], _ = timed(lambda: archive.list_bundles(name=name), 5)
    figures["list_by_status_ms"], _ = timed(lambda: archive.list_bundles(status="supported"), 5)
    figures["list_by_signer_ms"], _ = timed(lambda: archive.list_bundles(signer="nobody"), 5)
    figures["list_by_claim_status_ms"], _ = timed(
        lambda: archive.list_bundles(claim_status="contradicted"), 5
    )
    shows = [timed(lambda n=n, v=v: archive.show(f"{n}@{v}"))[0] for n, v, _ in sample]
    figures["show_by_name_version_median_ms"] = statistics.median(shows)
    figures["show_by_digest_prefix_ms"], _ = timed(lambda: archive.show(digest[:12]), 5)
    return figures


def plans(conn: sqlite3.Connection) -> dict[str, str]:
    by_signer = signers.selector("x")[0].replace("?", "'x'")
    queries = {
        "list --name": "SELECT * FROM bundles WHERE name = 'x'",
        "show NAME@VERSION": "SELECT * FROM bundles WHERE name = 'x' AND version = '1'",
        "list --signer": f"SELECT * FROM bundles WHERE digest IN ({by_signer})",
        "list --status": "SELECT * FROM bundles WHERE last_result = 'x'",
        "show history": "SELECT * FROM verifications WHERE digest = 'x' ORDER BY id",
        "list --claim-status": "SELECT verification FROM claim_results WHERE status = 'x'",
    }
    return {
        label: " | ".join(str(r[3]) for r in conn.execute(f"EXPLAIN QUERY PLAN {sql}"))
        for label, sql in queries.items()
    }


def grow(archive: Archive, target: int) -> None:
    """Synthetic rows up to ``target`` bundles, each with one verification and its claims."""
    conn = archive.conn
    have = conn.execute("SELECT count(*) FROM bundles").fetchone()[0]
    manifest = b'format = "reprobundle/1"\n'
    chosen = random.Random(1)
    conn.execute("BEGIN IMMEDIATE")
    for i in range(have, target):
        digest = f"{i:064x}"
        result = chosen.choice(["supported", "supported", "contradicted", "inconclusive"])
        conn.execute(
            "INSERT INTO bundles (digest, identity, name, version, title, signer, size, "
            "added_at, added_by, tool, manifest, last_result) VALUES "
            "(?, ?, ?, ?, 't', 'unknown', 1000, '2026-01-01T00:00:00Z', 'bench', 'bench', ?, ?)",
            (digest, digest, f"synthetic-{i % 1000}", f"1.{i // 1000}.0", manifest, result),
        )
        vid = conn.execute(
            "INSERT INTO verifications (digest, at, tool, result, exit_code, environment, "
            "detail) VALUES (?, 'now', 'bench', ?, 0, '{}', '{}')",
            (digest, result),
        ).lastrowid
        conn.executemany(
            "INSERT INTO claim_results VALUES (?, ?, ?, 'synthetic')",
            [(vid, f"claim-{k}", result) for k in range(2)],
        )
        conn.execute("UPDATE bundles SET last_verification = ? WHERE digest = ?", (vid, digest))
    conn.execute("COMMIT")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bundles", type=int, default=10_000)
    parser.add_argument("--index-rows", type=int, default=100_000)
    parser.add_argument("--verify", type=int, default=20, help="bundles to re-verify (timed)")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--work", type=Path, help="work folder (default: a temporary one)")
    parser.add_argument("--json", type=Path, help="also write the figures as JSON")
    args = parser.parse_args()

    work = args.work or Path(tempfile.mkdtemp(prefix="reprobundle-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    figures: dict[str, Any] = {
        "machine": {
            "python": platform.python_version(),
            "platform": platform.platform(),
            "cpus": os.cpu_count(),
            "sqlite": sqlite3.sqlite_version,
        },
        "bundles": args.bundles,
    }
    print(f"work folder {work}", flush=True)
    seconds, files = timed(lambda: make_bundles(work / "bundles", args.bundles))
    figures["generate_s"] = round(seconds / 1000, 1)
    figures["bundle_bytes"] = files[0].stat().st_size
    print(f"generated {len(files)} bundles in {seconds / 1000:.1f} s", flush=True)

    archive = Archive.init(work / "archive")
    per_add = []
    start = time.perf_counter()
    for i, file in enumerate(files, 1):
        t = time.perf_counter()
        archive.add([file])
        per_add.append((time.perf_counter() - t) * 1000)
        if i % 1000 == 0:
            print(f"  added {i}", flush=True)
    total = time.perf_counter() - start
    per_add.sort()
    figures["add"] = {
        "total_s": round(total, 1),
        "per_bundle_median_ms": round(statistics.median(per_add), 2),
        "per_bundle_p99_ms": round(per_add[int(len(per_add) * 0.99) - 1], 2),
        "bundles_per_s": round(len(files) / total, 1),
    }
    print(f"add: {figures['add']}", flush=True)

    sample_rows = random.Random(2).sample(archive.list_bundles(), min(50, len(files)))
    sample = [(b.name, b.version, b.digest) for b in sample_rows]
    if args.verify:
        subset = [f"{n}@{v}" for n, v, _ in sample[: args.verify]]
        ms, outcomes = timed(lambda: archive.verify(subset, jobs=args.jobs))
        figures["verify"] = {
            "bundles": len(outcomes),
            "jobs": args.jobs,
            "total_s": round(ms / 1000, 2),
            "results": sorted({o.result for o in outcomes}),
        }
        print(f"verify: {figures['verify']}", flush=True)

    figures[f"queries_at_{args.bundles}"] = {
        k: round(v, 2) for k, v in query_figures(archive, sample).items()
    }
    print(f"queries at {args.bundles}: {figures[f'queries_at_{args.bundles}']}", flush=True)
    ms, report = timed(archive.verify_log)
    figures["log_verify"] = {
        "records": report.size,
        "ms": round(ms, 1),
        "problems": len(report.problems),
    }
    print(f"log verify: {figures['log_verify']}", flush=True)

    if args.index_rows > args.bundles:
        ms, _ = timed(lambda: grow(archive, args.index_rows))
        print(f"grew the index to {args.index_rows} rows in {ms / 1000:.1f} s", flush=True)
        figures[f"queries_at_{args.index_rows}"] = {
            k: round(v, 2) for k, v in query_figures(archive, sample).items()
        }
        print(
            f"queries at {args.index_rows}: {figures[f'queries_at_{args.index_rows}']}", flush=True
        )
    figures["query_plans"] = plans(archive.conn)
    for label, plan in figures["query_plans"].items():
        print(f"  plan {label:22} {plan}")
    figures["index_bytes"] = (work / "archive" / "index.sqlite").stat().st_size
    archive.close()
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
