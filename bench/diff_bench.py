"""``reprobundle diff`` of two hostile bundles with large manifests (issues 32 and 47).

    python bench/diff_bench.py --work /dev/shm/rb-diff                 # 2.5 and 15.6 MiB
    python bench/diff_bench.py --mib 2 --before /tmp/old-code --work /dev/shm/rb-diff

Two pairs of bundles per size, each manifest about 1.25 x ``--mib`` MiB (``--mib 2 12.5``
by default: 2.5 MiB, and 15.6 MiB, the largest under the manifest limit of 16 MiB): a
case's params holding one long list, the new bundle's in reverse order (every item moved),
and a bundle description of the largest size allowed, every line changed. ``inspect`` of
the new bundle (reading and checking the manifest, comparing nothing) is each group's
first row: a diff reads two, so twice that is its floor. Wall time, CPU time (user +
system) and peak RSS as ``bench.py`` measures them (``/usr/bin/time``), and the load
average at the end of the group (on a shared machine the wall time is CPU time times the
others' share: the CPU time is what a quiet machine's wall time approaches); ``--before``
runs an older copy of the
code beside. Prints the rows of each group, then the target rows in ``all.py``'s columns
(issue 47: 16 MiB manifests in under 10 s and 300 MiB; the yardstick is two ``inspect``
runs).
Run by hand.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tarfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from bench import BEFORE, ENV, RB, Row, Task, before, measure, table  # noqa: E402
from tests.helpers import build_quickstart, edit_manifest  # noqa: E402


def pairs(work: Path, mib: float) -> dict[str, tuple[Path, Path]]:
    base = build_quickstart(work)
    items = [f"key-{i:08d}" for i in range(int(mib * (1 << 20)) // 16)]
    lines = "\n".join(f"line {i}" for i in range(9000))[:100_000]
    shuffled = "\n".join(f"line {i * 7 % 9000}" for i in range(9000))[:100_000]

    def params(values: list[str]) -> Any:
        return lambda doc: doc["cases"][0]["params"].__setitem__("ignore", values)

    def description(text: str) -> Any:
        return lambda doc: doc["bundle"].__setitem__("description", text)

    made = {
        "a params list of the manifest's size, reversed": (params(items), params(items[::-1])),
        "a 100,000-character description, every line changed": (
            description(lines),
            description(shuffled),
        ),
    }
    out = {}
    for n, (label, (old, new)) in enumerate(made.items()):
        out[label] = (
            edit_manifest(base, work / f"{n}-old.bundle.tar.gz", old),
            edit_manifest(base, work / f"{n}-new.bundle.tar.gz", new),
        )
    return out


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--work", type=Path, default=Path("/tmp/reprobundle-diff-bench"))
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--mib", type=float, nargs="+", default=[2.0, 12.5])
    parser.add_argument("--before", type=Path, action="append", default=[])
    args = parser.parse_args()
    shutil.rmtree(args.work, ignore_errors=True)
    args.work.mkdir(parents=True)
    ENV["TMPDIR"] = str(args.work)
    for old in args.before:
        path = os.pathsep.join(filter(None, [str(old.absolute()), ENV.get("PYTHONPATH")]))
        BEFORE.append((f"before: {old.name}", {**ENV, "PYTHONPATH": path}))
    rows: list[Row] = []
    targets: list[str] = []
    for mib in args.mib:
        folder = args.work / f"{mib:g}"
        folder.mkdir()
        for label, (old, new) in pairs(folder, mib).items():
            with tarfile.open(old, "r:gz") as tar:
                size = tar.next().size  # type: ignore[union-attr] (the manifest comes first)
            group = f"diff, {size / (1 << 20):.1f} MiB manifests: {label}"
            print(group, file=sys.stderr, flush=True)
            diff = Task("reprobundle diff", [*RB, "diff", str(old), str(new), "-q"], ok=(1,))
            tasks = [Task("reprobundle inspect (one bundle)", [*RB, "inspect", str(new)]), diff]
            found = measure(group, [*tasks, *before(diff)], args.runs)
            rows += found
            targets.append(target_row(group, found[0], found[1]))
            print(table(rows), file=sys.stderr, flush=True)
        shutil.rmtree(folder, ignore_errors=True)
    shutil.rmtree(args.work, ignore_errors=True)
    print(table(rows))
    print()
    print("| work | reprobundle | yardstick | ratio | target | met? | peak RSS |")
    print("| --- | ---: | --- | ---: | ---: | --- | ---: |")
    print("\n".join(targets))
    return 0


SECONDS, RSS_MIB = 10.0, 300.0  # issue 47: a diff of 16 MiB manifests


def target_row(group: str, inspect: Row, diff: Row) -> str:
    """The diff's row in ``all.py``'s columns: its time against reading both bundles."""
    ok = diff.seconds < SECONDS and diff.rss_mib < RSS_MIB
    load = os.getloadavg()[0]
    return (
        f"| {group} | {diff.seconds:.2f} s ({diff.cpu_seconds:.2f} s CPU, load {load:.1f}) "
        f"| 2 x `reprobundle inspect`: {2 * inspect.seconds:.2f} s "
        f"({2 * inspect.cpu_seconds:.2f} s CPU) | {diff.seconds / (2 * inspect.seconds):.2f}x "
        f"| < {SECONDS:g} s, < {RSS_MIB:g} MiB | {'yes' if ok else 'no'} | {diff.rss_mib:.0f} MiB |"
    )


if __name__ == "__main__":
    sys.exit(main())
