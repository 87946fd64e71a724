"""Every measurement of issues 33 and 47 in one command, each yardstick in the same run.

    python bench/all.py                       # the issue's sizes (about an hour on 2 cores)
    python bench/all.py --quick               # a quarter of each size, one run: still long
    python bench/all.py --runs 5 --work /tmp/rb-all
    python bench/all.py --quick --skip inspect_import_bench.py   # leave a script out

Prints the machine (cores, Python, OS, the file system of the work folder and of the
default temporary folder), the command, then one Markdown table: per row the work,
reprobundle's median seconds, the yardstick the issue names and its median seconds, the
median of the per-round ratios (the two take turns, so a slow spell of the machine falls
on both), the issue's target, whether it is met (ratio at most the target, and peak RSS
under 200 MiB: item 6) and the peak RSS of the reprobundle command.

The rows come from ``bench.py`` (build and verify of one large file, 5,000 files of
4-64 KiB and 20,000 files of 64-1,024 B, the last verified with its temporary folder on
--work and on tmpfs) and from the other scripts of the issue, each run as
``python bench/X.py --runs N --work DIR``. A script whose Markdown table has this table's
columns is merged into it; any other table is printed after it, under the script's name;
a script that does not exist yet is named on a line of its own. Run by hand; never from
tests.

How long: ``--quick`` is not a matter of minutes (issue 43, friction 12: a run on a shared
2-core machine printed no table in 30 minutes); the machine is printed first, then each
part on stderr as it starts, with the seconds the parts before it took.
"""

from __future__ import annotations

import argparse
import os
import platform
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import bench  # noqa: E402

STARTED = time.monotonic()
COLUMNS = ["work", "reprobundle", "yardstick", "ratio", "target", "met?", "peak RSS"]
MAX_RSS_MIB = 200  # issue 33 item 6
# (script, the issue item it measures, its arguments at the sizes, with --quick);
# each also takes --runs N --work DIR
SCRIPTS = [
    ("fixed_cost_bench.py", "issue 33 item 1: the fixed cost of a verification", [], []),
    (
        "checkers_bench.py",
        "issue 33 item 3, issue 47 item 1: checkers at the speed of parsing",
        [],
        ["--quick"],
    ),
    ("inspect_import_bench.py", "issue 33 item 5: import of an Inspect log", [], ["--quick"]),
    ("install_bench.py", "issue 47 item 2: pip install into a clean venv", [], []),
    ("diff_bench.py", "issue 47 item 3: diff of large manifests", [], ["--mib", "2"]),
    (
        "archive_scale.py",
        "issue 47 item 4: the archive at scale",
        ["--sizes", "100", "10000", "--rounds", "1", "--log-records", "1000000", "--dask"],
        ["--quick"],
    ),
]


def file_system(path: Path) -> str:
    """The type of the file system holding ``path`` (``ext4``, ``tmpfs``), as stat says."""
    done = subprocess.run(
        ["stat", "-f", "-c", "%T", str(path)], capture_output=True, text=True, check=False
    )
    return done.stdout.strip() or "unknown"


def machine(work: Path) -> list[str]:
    tmp = Path(tempfile.gettempdir())
    return [
        f"- machine: {os.cpu_count()} cores, Python {platform.python_version()} "
        f"({platform.python_implementation()}), {platform.platform()}",
        f"- work folder {work} on {file_system(work)}; default temporary folder {tmp} on "
        f"{file_system(tmp)}; tmpfs rows in {bench.TMPFS}"
        + ("" if bench.TMPFS.is_dir() else " (absent: no tmpfs rows)"),
        f"- command: `{shlex.join([Path(sys.executable).name, *sys.argv])}`",
    ]


def target_rows(rows: list[bench.Row]) -> list[list[str]]:
    """The rows of ``bench.py`` that carry a target, in the combined table's columns."""
    seconds = {(row.group, row.label): row.seconds for row in rows}
    out = []
    for row in rows:
        if not row.target:
            continue
        yard = seconds[(row.group, row.yardstick)]
        ok = row.met and row.rss_mib < MAX_RSS_MIB
        why = "" if ok else " (ratio)" if not row.met else " (RSS)"
        out.append(
            [
                f"{row.group}: {row.label}",
                f"{row.seconds:.2f} s",
                f"{row.yardstick}: {yard:.2f} s",
                f"{row.versus:.2f}x",
                f"<= {row.target}x",
                f"{'yes' if ok else 'no'}{why}",
                f"{row.rss_mib:.0f} MiB",
            ]
        )
    return out


def tables(text: str) -> list[list[str]]:
    """The Markdown tables in ``text``, each as its lines."""
    found: list[list[str]] = []
    current: list[str] = []
    for line in [*text.splitlines(), ""]:
        if line.strip().startswith("|"):
            current.append(line.strip())
        elif current:
            found.append(current)
            current = []
    return found


def cells(line: str) -> list[str]:
    return [cell.strip() for cell in line.strip().strip("|").split("|")]


def run_script(
    script: str,
    runs: int,
    work: Path,
    extra: list[str] = (),  # type: ignore[assignment]
) -> tuple[list[list[str]], list[str]]:
    """(rows to merge, lines to print after the table) of one other script."""
    path = HERE / script
    if not path.exists():
        return [], [f"- `bench/{script}` does not exist yet: skipped"]
    folder = work / path.stem
    folder.mkdir(parents=True, exist_ok=True)
    command = [sys.executable, str(path), "--runs", str(runs), "--work", str(folder), *extra]
    print(
        f"running {script} ... ({time.monotonic() - STARTED:.0f} s so far)",
        file=sys.stderr,
        flush=True,
    )
    # its progress (stderr) is passed on as it comes, indented; its tables come on stdout
    with tempfile.TemporaryFile("w+") as stdout:
        child = subprocess.Popen(command, stdout=stdout, stderr=subprocess.PIPE, text=True)
        said = ["(no message)"]
        for line in child.stderr or ():
            print(f"    {line.rstrip()}", file=sys.stderr, flush=True)
            said = [line.strip()]
        code = child.wait()
        stdout.seek(0)
        output = stdout.read()
    shutil.rmtree(folder, ignore_errors=True)
    if code != 0:
        return [], [f"- `bench/{script}` failed (exit {code}): {said[-1]}"]
    merged: list[list[str]] = []
    shown: list[str] = []
    for lines in tables(output):
        if [c.lower() for c in cells(lines[0])] == [c.lower() for c in COLUMNS] and len(lines) > 1:
            merged += [cells(line) for line in lines[2:]]
        else:
            shown += ["", f"`bench/{script}`:", "", *lines]
    return merged, shown


def markdown(rows: list[list[str]]) -> str:
    lines = [
        "| " + " | ".join(COLUMNS) + " |",
        "| --- | ---: | --- | ---: | ---: | --- | ---: |",
    ]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="a quarter of each size, 1 run")
    parser.add_argument("--runs", type=int, help="rounds per measurement (default 3; quick 1)")
    parser.add_argument(
        "--work", type=Path, default=Path(tempfile.gettempdir()) / "reprobundle-bench-all"
    )
    parser.add_argument(
        "--skip", nargs="*", default=[], metavar="SCRIPT", help="other scripts not to run"
    )
    args = parser.parse_args()
    runs = args.runs or (1 if args.quick else 3)
    work: Path = args.work.absolute()
    work.mkdir(parents=True, exist_ok=True)
    header = machine(work)
    header.append(f"- load average at the start: {os.getloadavg()}")
    print("\n".join(header), file=sys.stderr, flush=True)  # at once: the run is long
    bench.TARGETS_ONLY[0] = True
    rows = target_rows(
        bench.run(
            ["big", "files", "tiny"], not args.quick, runs, work / "files", True, zstd_only=True
        )
    )
    after: list[str] = []
    for script, item, full, quick in SCRIPTS:
        if script in args.skip:
            after.append(f"- `bench/{script}` ({item}): skipped (--skip)")
            continue
        merged, shown = run_script(script, runs, work, quick if args.quick else full)
        rows += merged
        after += [line.replace(f"`bench/{script}`", f"`bench/{script}` ({item})") for line in shown]
    print(
        f"\n## reprobundle benchmark ({'quick' if args.quick else 'the issue sizes'}, "
        f"median of {runs} run(s))\n"
    )
    header.append(
        f"- load average at the end: {os.getloadavg()} (over the cores: wall times inflated)"
    )
    print("\n".join(header) + "\n")
    print(markdown(rows))
    if after:
        print("\n" + "\n".join(after))
    return 0


if __name__ == "__main__":
    sys.exit(main())
