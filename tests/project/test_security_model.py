"""The README's "Security model" names the tests behind each sentence: every one exists."""

from __future__ import annotations

import re

from tests.helpers import REPO


def _section() -> str:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    start = text.index("## Security model")
    return text[start : text.index("\n## ", start + 1)]


def _defined() -> dict[str, set[str]]:
    return {
        path.name: set(re.findall(r"^def (test_\w+)", path.read_text(), re.M))
        for path in (REPO / "tests").rglob("test_*.py")
    }


def test_every_test_the_security_model_names_exists() -> None:
    section, defined = _section(), _defined()
    everywhere = set().union(*defined.values())
    named = set(re.findall(r"\b(test_\w+)\b(?!\.py)", section))
    assert len(named) > 40
    assert sorted(named - everywhere) == []
    for file, test in re.findall(r"(test_\w+\.py)::(test_\w+)", section):
        assert test in defined[file], f"{file}::{test}"


def test_every_test_file_the_security_model_names_exists() -> None:
    section, defined = _section(), _defined()
    files = set(re.findall(r"\b(test_\w+\.py)\b", section))
    assert files and sorted(files - set(defined)) == []
