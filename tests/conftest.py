from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from tests.helpers import build_quickstart

if TYPE_CHECKING:
    from bundler.run.verify import Verification


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
def example_bundles(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Every example bundle in bundles/, built once (fixed SOURCE_DATE_EPOCH), by name."""
    from tests.golden.regenerate import build_source, example_sources

    work = tmp_path_factory.mktemp("examples")
    return {source.name: build_source(source, work) for source in example_sources()}


@pytest.fixture(scope="session")
def example_verifications(example_bundles: dict[str, Path]) -> dict[str, Verification]:
    """What ``verify`` returns for each example bundle, verified once."""
    from bundler.run.verify import verify

    return {name: verify(bundle) for name, bundle in example_bundles.items()}


@pytest.fixture(scope="session")
def example_reports(example_verifications: dict[str, Verification]) -> dict[str, dict[str, Any]]:
    """The JSON report of every example bundle in bundles/, each built and verified once."""
    from bundler.reports.document import to_json

    return {name: to_json(result) for name, result in example_verifications.items()}
