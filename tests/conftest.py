"""Fixtures shared by the whole suite, and what makes it run the same in parallel.

The suite runs on every core (pytest-xdist, ``-n auto`` in pyproject.toml), each test
file on one worker. What is expensive and only read (built example bundles, their
reports, real Inspect logs) is made once per run for all workers (``once``).
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from hypothesis import settings

from tests.helpers import REPO, build_quickstart

EPOCH = 1700000000

# Hypothesis fails an example that takes over 200 ms by default: a timing window that a
# busy or slow machine misses. No test may depend on the machine's speed.
settings.register_profile("suite", deadline=None)
settings.load_profile("suite")

# Bytecode is kept: with PYTHONDONTWRITEBYTECODE set (as on some machines, this one
# among them) each of the few hundred Python processes the suite starts (verify, build,
# archive and Dask workers) would compile reprobundle from source again, ~0.15 s each, and
# pytest would rewrite every test module's asserts again in each worker. Read before the
# workers start, so they and every process they start keep bytecode too.
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
sys.dont_write_bytecode = False

# pytest-xdist's workers start with COLUMNS=80 and LINES=24 in their environment, which
# would make piped output wrap there and not in a serial run: no test may see them.
for _name in ("COLUMNS", "LINES"):
    os.environ.pop(_name, None)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Files marked ``long`` first, so that a parallel run does not end waiting for one."""
    items.sort(key=lambda item: item.get_closest_marker("long") is None)


def once(factory: pytest.TempPathFactory, name: str, make: Callable[[Path], None]) -> Path:
    """A folder that ``make`` fills once per test run; after that it is only read.

    Under pytest-xdist it lives beside the workers' own temporary folders (their parent
    is the run's), so every worker shares it; the first to ask makes it, under a lock."""
    base = factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        base = base.parent
    folder = base / f"once-{name}"
    with (base / f"once-{name}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (folder / ".done").exists():
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir()
            make(folder)
            (folder / ".done").touch()
    return folder


if TYPE_CHECKING:
    from bundler.run.verify import Verification


@pytest.fixture(scope="session")
def example_bundle(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], Path]:
    """``example_bundle(NAME)``: ``bundles/NAME`` built once per run (gzip, SOURCE_DATE_EPOCH
    1700000000, as the golden reports are made), shared read-only by the tests."""

    def built(name: str) -> Path:
        from bundler.authoring.build import build

        def make(folder: Path) -> None:
            build(REPO / "bundles" / name, folder / f"{name}.bundle.tar.gz", EPOCH)

        return once(tmp_path_factory, f"bundle-{name}", make) / f"{name}.bundle.tar.gz"

    return built


@pytest.fixture(scope="session")
def quickstart_bundle(example_bundle: Callable[[str], Path]) -> Path:
    """One built quickstart bundle, shared read-only by the tests."""
    return example_bundle("quickstart")


@pytest.fixture(scope="session")
def example_reports(
    tmp_path_factory: pytest.TempPathFactory, example_bundle: Callable[[str], Path]
) -> dict[str, dict[str, Any]]:
    """The JSON report of every example bundle in bundles/, each built and verified once."""
    from bundler.reports.document import to_json
    from bundler.run.verify import verify
    from tests.golden.regenerate import example_sources

    def make(folder: Path) -> None:
        reports = {s.name: to_json(verify(example_bundle(s.name))) for s in example_sources()}
        (folder / "reports.json").write_text(json.dumps(reports), encoding="utf-8")

    folder = once(tmp_path_factory, "example-reports", make)
    found: dict[str, dict[str, Any]] = json.loads((folder / "reports.json").read_text("utf-8"))
    return found


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
def example_bundles(example_bundle: Callable[[str], Path]) -> dict[str, Path]:
    """Every example bundle in bundles/, built once per run, by name."""
    from tests.golden.regenerate import example_sources

    return {source.name: example_bundle(source.name) for source in example_sources()}


@pytest.fixture(scope="session")
def example_verifications(example_bundles: dict[str, Path]) -> dict[str, Verification]:
    """What ``verify`` returns for each example bundle, verified once per worker."""
    from bundler.run.verify import verify

    return {name: verify(bundle) for name, bundle in example_bundles.items()}
