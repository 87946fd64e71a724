"""Peak memory of verifying large JSON inputs, and of refusing them (issue 33, item 6).

    python bench/memory_bench.py --work /tmp/rb-memory
    git archive fc98028 bundler checkers | tar -x -C /tmp/before   # the code before
    python bench/memory_bench.py --work /tmp/rb-memory --code /tmp/before

Builds two bundles of one ``structured-equal@1`` case on two equal JSON files of the
checkers bench's rows (``checkers_bench._rows``): 10 MB each (verified) and 100 MB each
(built with the value cap raised, so that verify refuses it under its cap of 5,000,000
values an input). Then runs, each in a process of its own, ``verify -q`` of both bundles
and ``runner.parse_input`` of a 100 MB JSON Lines file over the cap (the read verify gives
a JSON Lines input). Prints a Markdown table of each process's peak RSS (``os.wait4``'s
``ru_maxrss``). ``--code`` runs another checkout's code on the same files.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from checkers_bench import _rows

REPO = Path(__file__).resolve().parent.parent
MB = 1_000_000

BUILD_OVER_THE_CAP = """
import dataclasses, runpy, sys
from bundler.run import runner
runner.LOAD_LIMITS = dataclasses.replace(runner.LOAD_LIMITS, values=50_000_000)
sys.argv = ["reprobundle", "build", sys.argv[1], "-o", sys.argv[2]]
runpy.run_module("bundler", run_name="__main__")
"""

PARSE_LINES = """
import sys
from bundler.format import documents
from bundler.run import runner
from checkers.api import InputKind
try:
    runner.parse_input(open(sys.argv[1], "rb").read(), "lines.jsonl", InputKind.JSONL)
except documents.DocumentProblem as exc:
    print(exc)
"""


def _source(work: Path, size: int) -> Path:
    folder = work / f"json-{size // MB}mb"
    (folder / "inputs").mkdir(parents=True, exist_ok=True)
    text = json.dumps({"rows": _rows(size // 124)})
    for role in ("actual", "expected"):
        (folder / "inputs" / f"{role}.json").write_text(text)
    case = "{actual: inputs/actual.json, expected: inputs/expected.json}"
    (folder / "bundle.yaml").write_text(
        f"name: memory-{size // MB}mb\nversion: 1.0.0\n"
        f"title: Two equal JSON files of {size // MB} MB\ndescription: A memory benchmark.\n"
        "files:\n  - inputs/**\n"
        f"cases:\n  - id: equal\n    checker: structured-equal@1\n    inputs: {case}\n"
        "    expect: pass\n"
        "claims:\n  - id: equal\n    statement: The two files are equal.\n"
        "    cases: [equal]\n    negative_control_waiver: a benchmark, not evidence\n"
    )
    return folder


def _lines(work: Path) -> Path:
    line = json.dumps(
        {
            "task": "task-0000001",
            "trial": 1,
            "outcome": "success",
            "config": {"model": "model-a", "skill": "inventory-tests@2", "temperature": 0.8},
        }
    )
    path = work / "lines-100mb.jsonl"
    path.write_text((line + "\n") * (100 * MB // (len(line) + 1)) + "[" + "1," * MB + "1]\n")
    return path


def _peak(argv: list[str], code: Path, cwd: Path) -> tuple[int, int]:
    """The exit status and peak RSS (MiB) of one process running ``code``."""
    env = {**os.environ, "PYTHONPATH": str(code)}
    child = subprocess.Popen(argv, env=env, cwd=cwd, stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(child.pid, 0)
    return os.waitstatus_to_exitcode(status), usage.ru_maxrss // 1024


def _make(work: Path) -> None:
    """The two bundles (built with this checkout's code, the same for every ``--code``)
    and the JSON Lines file."""
    for size in (10 * MB, 100 * MB):
        bundle = work / f"json-{size // MB}mb.bundle.tar.zst"
        source = _source(work, size)
        build = [sys.executable, "-c", BUILD_OVER_THE_CAP, str(source), str(bundle)]
        subprocess.run(build, env={**os.environ, "PYTHONPATH": str(REPO)}, check=True)
    _lines(work)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, required=True, help="folder for the files")
    parser.add_argument("--code", type=Path, default=REPO, help="checkout whose code runs")
    parser.add_argument("--make", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    work = args.work.resolve()
    work.mkdir(parents=True, exist_ok=True)
    if args.make:
        _make(work)
        return 0
    if not (work / "lines-100mb.jsonl").exists():
        # in a process of its own: a process's peak RSS is kept across fork and exec, so
        # the children below would report this one's (several 100 MB texts written)
        make = [sys.executable, __file__, "--work", str(work), "--make"]
        subprocess.run(make, env={**os.environ, "PYTHONPATH": str(REPO)}, check=True)
    bundles = {size: work / f"json-{size // MB}mb.bundle.tar.zst" for size in (10 * MB, 100 * MB)}
    lines = work / "lines-100mb.jsonl"
    rows = [
        ("verify: structured-equal@1, 2 x 10 MB JSON", bundles[10 * MB]),
        ("verify: structured-equal@1, 2 x 100 MB JSON, refused by the cap", bundles[100 * MB]),
    ]
    print("| work | exit | peak RSS MiB |\n| --- | ---: | ---: |")
    for label, bundle in rows:
        argv = [sys.executable, "-m", "bundler", "verify", str(bundle), "-q"]
        status, peak = _peak(argv, args.code.resolve(), work)
        print(f"| {label} | {status} | {peak} |")
    status, peak = _peak([sys.executable, "-c", PARSE_LINES, str(lines)], args.code.resolve(), work)
    print(f"| parse 100 MB of JSON Lines, refused by the cap | {status} | {peak} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
