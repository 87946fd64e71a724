"""ruff and mypy (strict) are part of the test command, so CI enforces them."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.long  # mypy


@pytest.mark.parametrize(
    "command",
    [
        ["ruff", "check", "bundler", "checkers", "tests", "bundles"],
        [sys.executable, "-m", "mypy"],
    ],
    ids=["ruff", "mypy"],
)
def test_tool_is_clean(command: list[str]) -> None:
    if command[0] == "ruff" and shutil.which("ruff") is None:
        command = [sys.executable, "-m", "ruff", *command[1:]]
    done = subprocess.run(command, cwd=REPO, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.parametrize("script", sorted((REPO / "bench").glob("*.py")), ids=lambda p: p.name)
def test_benchmark_scripts_still_import_what_they_use(script: Path) -> None:
    """The benchmarks run by hand, not in CI; at least their imports must not go stale."""
    import runpy

    runpy.run_path(str(script), run_name="imported_by_tests")
