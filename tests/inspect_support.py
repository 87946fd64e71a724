"""Real Inspect AI logs for the tests, written once per session by ``tests/inspect_logs.py``.

The logs are made at run time, offline (inspect-ai's mock model), inside a throw-away git
working tree with an uncommitted change, so Inspect records a dirty revision. Without
inspect-ai (the test extra) these tests are skipped, except under CI, where they fail.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).resolve().parent


def _missing(reason: str) -> None:
    if os.environ.get("CI"):
        pytest.fail(f"CI must run the Inspect log tests, but {reason}")
    pytest.skip(f"no Inspect log tests: {reason} (pip install -e '.[test]')")


@pytest.fixture(scope="session")
def inspect_logs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder with mixed.eval, mixed.json, all-errored.eval, failed.json, cancelled.eval,
    cancelled-epochs.eval, limit.json, retried.json, score-on-error.json, eval-set.json,
    retried.eval (eval_retry) and truth.json
    (tests/inspect_logs.py)."""
    if importlib.util.find_spec("inspect_ai") is None:  # not imported here: it is heavy
        _missing("inspect-ai is not installed")
    from tests.conftest import once

    return once(tmp_path_factory, "inspect-logs", _write_logs)


def _write_logs(out: Path) -> None:
    root = out.parent / f"{out.name}-making"
    shutil.rmtree(root, ignore_errors=True)
    tree = root / "tree"
    tree.mkdir(parents=True)
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid"]
    (tree / "task.txt").write_text("committed\n")
    for command in (["init", "-q"], ["add", "task.txt"], ["commit", "-qm", "task"]):
        subprocess.run([*git, *command], cwd=tree, check=True, capture_output=True)
    (tree / "task.txt").write_text("changed, not committed\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST")}
    env.update(HOME=str(root / "home"), XDG_DATA_HOME=str(root / "data"), NO_COLOR="1")
    done = subprocess.run(
        [sys.executable, str(HERE / "inspect_logs.py"), str(out)],
        cwd=tree,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]


def truth(logs: Path, name: str) -> list[dict[str, Any]]:
    """What inspect-ai's own reader found in a log."""
    found: list[dict[str, Any]] = json.loads((logs / "truth.json").read_text())[name]
    return found


# A value of another type, for each type found in a log: a mutant field must be refused.
WRONG: dict[type, Any] = {dict: ["x"], list: {"x": 1}, str: 7, int: "7", float: "0.5", bool: "yes"}


def with_wrong_type(
    document: Any, path: tuple[Any, ...], wrong: Callable[[Any], Any] | None = None
) -> Any:
    """A copy of ``document`` whose field at ``path`` holds a value of another type:
    ``WRONG``'s for its type, or ``wrong(old value)``."""
    copy = json.loads(json.dumps(document))
    node = copy
    for key in path[:-1]:
        node = node[key]
    old = node[path[-1]]
    node[path[-1]] = wrong(old) if wrong is not None else WRONG.get(type(old), {"x": 1})
    return copy


def paths_of(value: Any, at: tuple[Any, ...] = (), depth: int = 0) -> list[tuple[Any, ...]]:
    """Paths into a JSON document (mappings, and the first item of each list), 4 deep."""
    out = [at] if at else []
    if depth < 4 and isinstance(value, dict):
        for key, child in value.items():
            out += paths_of(child, (*at, key), depth + 1)
    elif depth < 4 and isinstance(value, list) and value:
        out += paths_of(value[0], (*at, 0), depth + 1)
    return out
