"""The version is written once, in ``bundler/version.py``: the package, the command line
and the distribution's metadata (``pyproject.toml`` has setuptools read it from there)
all say what that file says."""

from __future__ import annotations

import shutil
import tomllib
import warnings
from pathlib import Path

from click.testing import CliRunner

import bundler
import bundler.version
from bundler.cli import main

REPO = Path(__file__).resolve().parents[2]


def distribution_version(root: Path) -> str:
    """The version setuptools gives the distribution built from ``root`` (its own reading
    of ``pyproject.toml``, as ``pip install`` and ``python -m build`` do)."""
    from setuptools.config.pyprojecttoml import read_configuration  # type: ignore[import-untyped]

    with warnings.catch_warnings():  # "[tool.setuptools] is still beta": not ours to fix
        warnings.simplefilter("ignore")
        version: str = read_configuration(root / "pyproject.toml")["project"]["version"]
    return version


def test_pyproject_names_no_version_of_its_own() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text("utf-8"))
    assert "version" not in project["project"]
    assert "version" in project["project"]["dynamic"]
    dynamic = project["tool"]["setuptools"]["dynamic"]["version"]
    assert dynamic == {"attr": "bundler.version.__version__"}


def test_the_distribution_takes_its_version_from_bundler_version(tmp_path: Path) -> None:
    """A changed ``bundler/version.py`` changes the distribution's version, alone."""
    shutil.copy(REPO / "pyproject.toml", tmp_path / "pyproject.toml")
    (tmp_path / "bundler").mkdir()
    (tmp_path / "bundler" / "__init__.py").write_text("", "utf-8")
    source = (REPO / "bundler" / "version.py").read_text("utf-8")
    changed = source.replace(f'"{bundler.__version__}"', '"9.8.7"')
    assert changed != source
    (tmp_path / "bundler" / "version.py").write_text(changed, "utf-8")
    assert distribution_version(tmp_path) == "9.8.7"
    assert distribution_version(REPO) == bundler.__version__


def test_the_package_and_the_command_line_say_the_same_version() -> None:
    assert bundler.__version__ is bundler.version.__version__
    result = CliRunner().invoke(main, ["--version"])
    assert result.exit_code == 0
    assert result.output == f"reprobundle, version {bundler.__version__}\n"
