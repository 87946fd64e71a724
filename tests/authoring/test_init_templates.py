"""The trial template: `reprobundle init --template trial DIR` copies the seed's fixture."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from bundler.authoring.templates import copy_template, names
from bundler.errors import UsageError

TRIAL_LAYOUT = {"bundle.yaml", "task.txt", "config.json"}
TRIAL_FOLDERS = ("inputs/", "candidate/", "evidence/")


def test_trial_template_is_listed() -> None:
    assert "trial" in names()


def test_trial_template_creates_the_seed_layout(tmp_path: Path) -> None:
    written = copy_template("trial", tmp_path / "trial-001")
    paths = {p.relative_to(tmp_path / "trial-001").as_posix() for p in written}
    assert paths >= TRIAL_LAYOUT
    for folder in TRIAL_FOLDERS:
        assert any(p.startswith(folder) for p in paths), folder


def test_cases_of_the_trial_source_point_at_files_it_contains(tmp_path: Path) -> None:
    copy_template("trial", tmp_path)
    source = yaml.safe_load((tmp_path / "bundle.yaml").read_text(encoding="utf-8"))
    for case in source["cases"]:
        for path in case["inputs"].values():
            assert (tmp_path / path).is_file(), (case["id"], path)
    assert any(case["expect"] == "fail" for case in source["cases"]), "needs a negative control"


def test_trial_template_refuses_a_non_empty_directory(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("mine", encoding="utf-8")
    with pytest.raises(UsageError, match="not an empty folder"):
        copy_template("trial", tmp_path)
    assert [p.name for p in tmp_path.iterdir()] == ["notes.txt"]


def test_init_with_trial_template_creates_the_fixture(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from bundler.cli import main

    result = CliRunner().invoke(main, ["init", "--template", "trial", str(tmp_path / "t")])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "t" / "task.txt").is_file()
    assert (tmp_path / "t" / "evidence" / "reports" / "none.json").is_file()
