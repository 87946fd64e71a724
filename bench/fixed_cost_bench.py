"""The fixed cost of a verification (issue 33 items 1 and 6), against the interpreter itself.

    python bench/fixed_cost_bench.py [--runs 10] [--work DIR]

Builds every example bundle (and the bundled-code test bundle) into DIR (default: a new
temporary folder), then times whole processes, each command once per round in turn (the
first command moves to the end each round, so that none always runs first): the
yardstick ``python -c 'import tarfile, hashlib, json'`` (the interpreter starting with
what reading a bundle needs), ``python -m bundler --version``, and ``verify -q`` of each
bundle, from DIR, with this checkout's code (compiled to bytecode by the warm-up round,
as an installed copy is, even where PYTHONDONTWRITEBYTECODE is set). Prints a Markdown
table: the median wall time, the median of the per-round ratios to the yardstick (paired,
so that a machine that slows down during the run moves both), the target, and the peak
RSS of the largest process of any run (``os.wait4``'s ``ru_maxrss``; a verification with
``--allow-code`` counts its worker process too).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
YARDSTICK = "import tarfile, hashlib, json"
TARGET_RATIO = 4.0  # issue 33 item 1: verifying the quickstart
TARGET_RSS_MIB = 200  # issue 33 item 6: every row
DEMO_PUB = REPO / "bundles" / "demo-key" / "DEMO-ONLY-not-secret.pub"


@dataclass
class Row:
    label: str
    argv: list[str]
    target: str = ""
    walls: list[float] = field(default_factory=list)
    cpus: list[float] = field(default_factory=list)
    peak_kib: int = 0
    exits: set[int] = field(default_factory=set)


def run_once(row: Row, cwd: Path, env: dict[str, str]) -> None:
    """Run ``row``'s command once, adding its wall and CPU time and its peak RSS."""
    started = time.perf_counter()
    process = subprocess.Popen(
        row.argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    _, status, usage = os.wait4(process.pid, 0)
    row.walls.append(time.perf_counter() - started)
    process.returncode = os.waitstatus_to_exitcode(status)  # reaped here, not by Popen
    row.cpus.append(usage.ru_utime + usage.ru_stime)
    row.peak_kib = max(row.peak_kib, usage.ru_maxrss)  # KiB on Linux
    row.exits.add(process.returncode)


def build_bundles(work: Path, env: dict[str, str]) -> list[tuple[str, Path, list[str]]]:
    """Every example bundle and the bundled-code test bundle, built into ``work``:
    (row label, bundle file, the options its verification needs)."""
    sources = sorted(p for p in (REPO / "bundles").iterdir() if (p / "bundle.yaml").is_file())
    built = []
    for source in [*sources, REPO / "tests" / "sources" / "own-code"]:
        target = work / f"{source.name}.bundle.tar.zst"
        command = [sys.executable, "-m", "bundler", "build", str(source), "-o", str(target)]
        subprocess.run(command, cwd=work, env=env, check=True, capture_output=True)
        options = []
        if "\npreregistration:" in (source / "bundle.yaml").read_text("utf-8"):
            options = ["--trust", str(DEMO_PUB), "--allow-unsigned"]  # as run_examples.py
        if source.name == "own-code":
            options = ["--allow-code"]
        label = f"verify {source.name}" + (" --allow-code" if options == ["--allow-code"] else "")
        built.append((label, target, options))
    return built


def rows_for(bundles: list[tuple[str, Path, list[str]]]) -> list[Row]:
    python = sys.executable
    rows = [
        Row(f"`python -c '{YARDSTICK}'` (yardstick)", [python, "-c", YARDSTICK], "1×"),
        Row("`python -m bundler --version`", [python, "-m", "bundler", "--version"]),
    ]
    for label, bundle, options in bundles:
        target = f"≤ {TARGET_RATIO:g}×" if bundle.name.startswith("quickstart.") else ""
        argv = [python, "-m", "bundler", "verify", bundle.name, "-q", *options]
        rows.append(Row(label, argv, target))
    return rows


def table(rows: list[Row]) -> str:
    yardstick = rows[0]
    lines = [
        "| command | median wall s | × yardstick (median of pairs) | target "
        f"| median CPU s (× yardstick) | peak RSS MiB (target < {TARGET_RSS_MIB}) |",
        "| --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for row in rows:
        ratios = [w / y for w, y in zip(row.walls, yardstick.walls, strict=True)]
        cpu = statistics.median(row.cpus)
        cpu_ratio = cpu / statistics.median(yardstick.cpus)
        exits = "" if row.exits == {0} else f" (exit {sorted(row.exits)})"
        lines.append(
            f"| {row.label}{exits} | {statistics.median(row.walls):.3f} "
            f"| {statistics.median(ratios):.1f}× | {row.target} "
            f"| {cpu:.3f} ({cpu_ratio:.1f}×) | {row.peak_kib / 1024:.0f} |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=10, help="rounds (default 10)")
    parser.add_argument("--work", type=Path, help="folder for the built bundles")
    args = parser.parse_args()
    # this checkout's code, deterministic builds; run from the work folder (python -m puts
    # the working directory first on the path, so not from the repository's)
    env = {**os.environ, "PYTHONPATH": str(REPO), "SOURCE_DATE_EPOCH": "1700000000"}
    # the warm-up writes the bytecode an installed copy has (pip compiles it on install):
    # with PYTHONDONTWRITEBYTECODE set, every run would compile this checkout's modules
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    with tempfile.TemporaryDirectory(prefix="fixed-cost-") as scratch:
        work = (args.work or Path(scratch)).absolute()
        work.mkdir(parents=True, exist_ok=True)
        rows = rows_for(build_bundles(work, env))
        for row in rows:  # warm-up, not counted: compiled bytecode, the page cache
            run_once(row, work, env)
            row.walls.clear()
            row.cpus.clear()
        for round_number in range(args.runs):
            shift = round_number % len(rows)
            for row in rows[shift:] + rows[:shift]:
                run_once(row, work, env)
    print(
        f"Fixed cost of a run: {args.runs} rounds, Python {sys.version.split()[0]}, "
        f"{os.cpu_count()} cores; `python bench/fixed_cost_bench.py --runs {args.runs}`\n"
    )
    print(table(rows))


if __name__ == "__main__":
    main()
