from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.helpers import build_quickstart


@pytest.fixture(scope="session")
def quickstart_bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One built quickstart bundle, shared read-only by the tests."""
    return build_quickstart(tmp_path_factory.mktemp("built"))


@pytest.fixture(scope="session")
def quickstart_zst_bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The same, in zstd (the default container of ``build``)."""
    return build_quickstart(tmp_path_factory.mktemp("built"), suffix=".tar.zst")


@pytest.fixture
def canary(tmp_path: Path) -> Path:
    """A file outside every work directory; attacks must leave it (and its folder) alone."""
    path = tmp_path / "canary.txt"
    path.write_text("untouched")
    return path


@pytest.fixture(scope="session")
def example_reports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    """The JSON report of every example bundle in bundles/, each built and verified once."""
    from tests.golden.regenerate import example_sources, verify_source

    work = tmp_path_factory.mktemp("examples")
    return {source.name: verify_source(source, work) for source in example_sources()}
