"""ruff and mypy (strict) are part of the test command, so CI enforces them; and no module
of the library grows past what one reads as one concept."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

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


# A module longer than this holds more than one concept, as every one that did so far
# (the trajectory skeleton, the archive commands, the intent grader, the inspect_log
# checks): split it along its seams (CONTRIBUTING.md, "Code layout").
MAX_MODULE_LINES = 700
# the modules allowed to stay longer, each with the reason; none is better
LONG_MODULES: dict[str, str] = {}


def module_lengths(root: Path = REPO) -> dict[str, int]:
    """Lines of every module of bundler/ and checkers/, by path relative to ``root``."""
    return {
        path.relative_to(root).as_posix(): len(path.read_text(encoding="utf-8").splitlines())
        for package in ("bundler", "checkers")
        for path in sorted((root / package).rglob("*.py"))
    }


def test_no_module_of_bundler_or_checkers_is_longer_than_700_lines() -> None:
    long = {
        name: lines
        for name, lines in module_lengths().items()
        if lines > MAX_MODULE_LINES and name not in LONG_MODULES
    }
    assert not long, f"split along their seams (one concept per module): {long}"


def test_each_allowed_long_module_is_still_long() -> None:
    """An exception that no longer applies is removed, so the list cannot hide a new one."""
    lengths = module_lengths()
    assert not [name for name in LONG_MODULES if lengths.get(name, 0) <= MAX_MODULE_LINES]
