"""CI runs the suite on every Python the project supports (issue 43, defect 8: on 3.13
four tests failed that no run had met, CI knowing only 3.11)."""

from __future__ import annotations

import re
import tomllib

from tests.helpers import REPO

NEWEST_KNOWN = (3, 13)  # the newest CPython released when this was written


def test_ci_runs_the_suite_on_every_supported_python() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text("utf-8"))["project"]
    oldest = re.fullmatch(r">=3\.(\d+)", project["requires-python"])
    assert oldest, project["requires-python"]
    supported = [f"3.{minor}" for minor in range(int(oldest[1]), NEWEST_KNOWN[1] + 1)]
    script = (REPO / ".ci" / "run").read_text("utf-8")
    pythons = re.search(r'PYTHONS="\$\{REPROBUNDLE_CI_PYTHONS:-([\d. ]+)\}"', script)
    assert pythons and pythons[1].split() == supported
    assert "python -m pytest -q\n" in script  # the whole suite on each, not a subset
