from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import build_quickstart


@pytest.fixture(scope="session")
def quickstart_bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One built quickstart bundle, shared read-only by the tests."""
    return build_quickstart(tmp_path_factory.mktemp("built"))


@pytest.fixture
def canary(tmp_path: Path) -> Path:
    """A file outside every work directory; attacks must leave it (and its folder) alone."""
    path = tmp_path / "canary.txt"
    path.write_text("untouched")
    return path
