"""Bundled checker code: what a persistent worker saves over one process per case.

    python bench/code_worker_bench.py [--cases 40]

Builds tests/sources/own-code, adds N cases of its bundled checker, and verifies it with
--allow-code four ways: one persistent worker vs a new worker per case, each with and
without user/network/PID namespaces. Prints seconds in all and milliseconds per case.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

import bundler.run.isolation as isolation  # noqa: E402
from bundler.authoring.build import build  # noqa: E402
from bundler.run.verify import verify  # noqa: E402
from tests.helpers import edit_manifest  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cases", type=int, default=40)
    n = parser.parse_args().cases
    with tempfile.TemporaryDirectory() as tmp:
        own = build(REPO / "tests" / "sources" / "own-code", Path(tmp) / "own.tgz", 1).path

        def add(doc: dict[str, object]) -> None:
            cases = doc["cases"]
            assert isinstance(cases, list)
            for i in range(n):
                cases.append(
                    {
                        "id": f"t{i}",
                        "checker": "bundle:row-count",
                        "inputs": {"table": "inputs/table.csv"},
                        "params": {"mode": "token"},
                        "expect": "pass",
                    }
                )

        bundle = edit_manifest(own, Path(tmp) / "many.tgz", add)
        available = isolation.namespaces_available()
        print(f"namespaces available here: {available}")
        for per_worker in (1000, 1):
            for namespaces in (True, False) if available else (False,):
                isolation.namespaces_available = lambda v=namespaces: v  # type: ignore[misc]
                limits = isolation.CodeLimits(timeout=30, cases_per_worker=per_worker)
                start = time.perf_counter()
                result = verify(bundle, code=isolation.CodePolicy(True, limits))
                took = time.perf_counter() - start
                assert result.code is not None
                total = len(result.cases)
                print(
                    f"{total} cases, {'persistent worker' if per_worker > 1 else 'worker per case'}"
                    f", namespaces {'on' if namespaces else 'off'}: {took:.2f} s, "
                    f"{1000 * took / total:.0f} ms/case, {result.code.workers_started} worker(s)"
                )


if __name__ == "__main__":
    main()
