"""``pip install`` of reprobundle into a clean virtual environment (issue 47, item 2).

    python bench/install_bench.py --work /tmp/rb-install
    python bench/install_bench.py --runs 3 --work /tmp/rb-install --source /path/to/checkout

Per round, two new virtual environments (``python -m venv``), one install in each, taking
turns: ``pip install SOURCE`` (this checkout, built as a wheel by pip) and the yardstick,
the same with networkx beside it (what the install held before networkx left the runtime
dependencies). For each: the median wall time of ``pip install``, the distributions it
added (``pip list`` after against before, reprobundle itself included), and the size on
disk it added to ``site-packages``. pip reads whatever index it is configured with (here,
a local mirror): the time depends on it, the count and the size do not. Run by hand.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def _size(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file() and not p.is_symlink())


def _distributions(python: Path) -> set[str]:
    done = subprocess.run(
        [str(python), "-m", "pip", "list", "--format=freeze"],
        capture_output=True,
        text=True,
        check=True,
    )
    return {line.split("==")[0].lower() for line in done.stdout.splitlines() if line}


def install(work: Path, packages: list[str]) -> tuple[float, set[str], int]:
    """Seconds of ``pip install PACKAGES`` into a new venv, distributions and bytes added."""
    venv = work / "venv"
    shutil.rmtree(venv, ignore_errors=True)
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = venv / "bin" / "python"
    site = next((venv / "lib").glob("python*/site-packages"))
    before, size = _distributions(python), _size(site)
    start = time.perf_counter()
    subprocess.run(
        [str(python), "-m", "pip", "install", "-q", "--no-cache-dir", *packages],
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    seconds = time.perf_counter() - start
    added = _distributions(python) - before
    grown = _size(site) - size
    shutil.rmtree(venv, ignore_errors=True)
    return seconds, added, grown


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--work", type=Path)
    parser.add_argument("--source", type=Path, default=REPO)
    args = parser.parse_args()
    if args.work is not None:
        Path(args.work).mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="rb-install-", dir=args.work))
    kinds = {"reprobundle": [str(args.source)], "with networkx": [str(args.source), "networkx"]}
    found: dict[str, list[tuple[float, set[str], int]]] = {kind: [] for kind in kinds}
    try:
        for _ in range(args.runs):
            for kind, packages in kinds.items():
                found[kind].append(install(work, packages))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    ours, yard = found["reprobundle"], found["with networkx"]
    seconds = statistics.median(s for s, _, _ in ours)
    yard_seconds = statistics.median(s for s, _, _ in yard)
    ratio = statistics.median(a[0] / b[0] for a, b in zip(ours, yard, strict=True))
    added, yard_added = ours[-1][1], yard[-1][1]
    size, yard_size = ours[-1][2] / 2**20, yard[-1][2] / 2**20
    print(f"distributions installed: {', '.join(sorted(added))}")
    print()
    print("| work | reprobundle | yardstick | ratio | target | met? | peak RSS |")
    print("| --- | ---: | --- | ---: | ---: | --- | ---: |")
    print(
        f"| `pip install` into a clean venv: {len(added)} distributions, {size:.1f} MiB "
        f"| {seconds:.1f} s | the same with networkx: {yard_seconds:.1f} s, "
        f"{len(yard_added)} distributions, {yard_size:.1f} MiB | {ratio:.2f}x "
        f"| networkx out | {'yes' if 'networkx' not in added else 'no'} | - |"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
