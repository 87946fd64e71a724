"""`init` and `import` write the newest version of every checker they name (issue 41,
item 3): a new source never starts on a version an advisory may later close, and never on
one it already has. Every template and every importer's output on every kept log."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

import checkers
from bundler.authoring.templates import copy_template, names
from bundler.format.advisories import of_checker
from bundler.importers.inspect_eval import import_inspect
from bundler.importers.lm_eval import import_lm_eval
from bundler.importers.promptfoo import import_promptfoo
from tests.helpers import REPO
from tests.inspect_support import inspect_logs

__all__ = ["inspect_logs"]  # the fixture, used by name

DATA = REPO / "tests" / "data"


def layout(key: str) -> tuple[str, ...]:
    """The input roles a checker version reads: a version that reads another layout (the
    split layout of `import --split`, issue 45) is a line of its own, not a replacement."""
    return tuple(sorted(r.name for r in checkers.registry()[key].roles))


def newest() -> dict[tuple[str, tuple[str, ...]], str]:
    """Each checker name's highest registered version per input layout, as ``name@N``."""
    found: dict[tuple[str, tuple[str, ...]], tuple[int, str]] = {}
    for key in checkers.registry():
        name, version = key.rsplit("@", 1)
        line = (name, layout(key))
        found[line] = max(found.get(line, (0, key)), (int(version), key))
    return {line: key for line, (_, key) in found.items()}


def newest_of(key: str) -> str | None:
    return newest().get((key.split("@")[0], layout(key))) if key in checkers.registry() else None


def not_newest(source: Path) -> list[str]:
    """``case: checker`` for every case of the source not on its checker's newest version
    (for the layout it reads) or on a version with an advisory."""
    document: Any = yaml.safe_load((source / "bundle.yaml").read_text("utf-8"))
    cases = [c for c in document["cases"] if isinstance(c, dict) and "checker" in c]
    assert cases
    return [
        f"{c['id']}: {c['checker']} (newest {newest_of(c['checker'])})"
        for c in cases
        if c["checker"] != newest_of(c["checker"]) or of_checker(c["checker"])
    ]


def test_newest_is_the_highest_version() -> None:
    assert newest_of("fault-report@1") == "fault-report@3"
    assert newest_of("inspect-metric@1") == "inspect-metric@4"  # the whole log
    assert newest_of("inspect-metric@3") == "inspect-metric@5"  # the scores file
    assert newest_of("promptfoo-stats@3") == "promptfoo-stats@5"  # the scores file


@pytest.mark.parametrize("template", names())
def test_every_init_template_names_the_newest_versions(template: str, tmp_path: Path) -> None:
    copy_template(template, tmp_path / "source")
    assert not_newest(tmp_path / "source") == []


PROMPTFOO = sorted(DATA.glob("promptfoo/**/results.json"))
LM_EVAL = sorted(p for p in (DATA / "lm_eval").iterdir() if p.is_dir() and p.name != "tasks")
# Every run, finished or not (error, cancelled, --limit, retried), has its counts checked
# by inspect-counts@3, the newest (an unfinished run used to get the advised @1).
INSPECT = [
    "mixed.eval",
    "mixed.json",
    "all-errored.eval",
    "failed.json",
    "cancelled.eval",
    "limit.json",
    "retried.json",
    "score-on-error.json",
    "eval-set.json",
    "cancelled-epochs.eval",
    "retried.eval",
]


def importer_cases() -> list[Any]:
    cases: list[Any] = []
    for path in PROMPTFOO:
        cases.append(pytest.param(import_promptfoo, path, id=f"promptfoo/{path.parent.name}"))
    for path in LM_EVAL:
        cases.append(pytest.param(import_lm_eval, path, id=f"lm-eval/{path.name}"))
    return cases


# both layouts (issue 45 item 5): split, the default, and the whole log
LAYOUTS = pytest.mark.parametrize("split", [True, False], ids=["split", "whole-log"])


@LAYOUTS
@pytest.mark.parametrize(("importer", "log"), importer_cases())
def test_every_importer_writes_the_newest_versions(
    importer: Callable[..., Any], log: Path, tmp_path: Path, split: bool
) -> None:
    importer(log, tmp_path / "source", split=split)
    assert not_newest(tmp_path / "source") == []


@LAYOUTS
@pytest.mark.parametrize("name", INSPECT)
def test_inspect_import_writes_the_newest_versions(
    inspect_logs: Path, tmp_path: Path, name: str, split: bool
) -> None:
    import_inspect(inspect_logs / name, tmp_path / "source", split=split)
    assert not_newest(tmp_path / "source") == []
