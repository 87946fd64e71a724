"""archive verify --scheduler against a real Dask cluster on 127.0.0.1: a scheduler and
workers started by each test as subprocesses and stopped after it. The same archive must
verify identically on the local pool and on the cluster, whatever happens to workers."""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("distributed", reason="the Dask path needs reprobundle[distributed]")

from bundler.store import Archive, cluster, reverify
from tests import dask_cluster
from tests.archive_support import cli, flip_expectation, rebadge
from tests.dask_cluster import coordinate, local_cluster, other_version, start_worker

pytestmark = pytest.mark.long


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory, quickstart_bundle: Path) -> Path:
    """An archive of supported, contradicted and rotted bundles, not yet verified."""
    folder = tmp_path_factory.mktemp("dask-base")
    root = folder / "archive"
    Archive.init(root).close()
    files = [
        quickstart_bundle,
        rebadge(quickstart_bundle, folder / "c.tar.gz", name="other", edit=flip_expectation),
        *(
            rebadge(quickstart_bundle, folder / f"v{i}.tar.gz", version=f"1.0.{i}")
            for i in range(1, 4)
        ),
        rebadge(quickstart_bundle, folder / "r.tar.gz", name="rotting"),
    ]
    assert cli(root, "add", *map(str, files))[0] == 0
    rotting = digest(root, "rotting@1.0.0")
    stored = root / "objects" / "sha256" / rotting[:2] / rotting
    os.chmod(stored, 0o644)
    stored.write_bytes(stored.read_bytes()[:-10] + b"0123456789")
    return root


@pytest.fixture(scope="module")
def expected(base: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Any, ...]]:
    """What the local pool records for a copy of ``base``."""
    local = tmp_path_factory.mktemp("dask-local") / "archive"
    shutil.copytree(base, local)
    code, _, _ = cli(local, "verify", "--all", "--jobs", "2")
    assert code == 3  # the rotted bundle
    found = results(local)
    assert {r[0] for r in found.values()} == {"supported", "contradicted", "rotted"}
    return found


@pytest.fixture
def second(base: Path, tmp_path: Path) -> Path:
    """A fresh copy of ``base`` (same bundles, log and key) for the cluster to verify."""
    shutil.copytree(base, tmp_path / "cluster-archive")
    return tmp_path / "cluster-archive"


def digest(root: Path, selector: str) -> str:
    return str(json.loads(cli(root, "show", selector, "--json", "-")[1])["bundle"]["digest"])


def results(root: Path) -> dict[str, tuple[Any, ...]]:
    """Per bundle: its last result and the whole record of its last verification (the
    archive's own path replaced, so two copies compare)."""
    found = {}
    with Archive.open(root, read_only=True) as archive:
        assert archive.verify_log().problems == []
        for bundle in archive.list_bundles():
            last = archive.show(bundle.digest).history[-1]
            detail = json.loads(json.dumps(last.detail).replace(str(root), "ARCHIVE"))
            found[f"{bundle.name}@{bundle.version}"] = (
                bundle.last_result,
                last.result,
                last.exit_code,
                last.claims,
                detail,
                last.environment,
            )
    return found


def verify_on(root: Path, address: str) -> Any:
    """``reprobundle archive --archive ROOT verify --all --scheduler ADDRESS``."""
    return dask_cluster.cli(
        "archive", "--archive", str(root), "verify", "--all", "--scheduler", address
    )


def outcomes_of(done: Any) -> dict[str, tuple[str, dict[str, Any]]]:
    assert done.returncode == 0, done.stderr
    return {d: (r, detail) for d, r, detail in json.loads(done.stdout)["outcomes"]}


def work_folders(folder: Path, workers: str) -> list[Path]:
    """The reprobundle work folders inside the local directories of running workers."""
    return sorted(folder.glob(f"worker-{workers}/dask-scratch-space/worker-*/reprobundle"))


def test_the_cluster_gives_the_same_results_and_index_as_the_local_pool(
    second: Path, expected: dict[str, tuple[Any, ...]], tmp_path: Path
) -> None:
    assert {r[0] for r in expected.values()} == {"supported", "contradicted", "rotted"}
    folder = tmp_path / "cluster"
    with local_cluster(folder) as running:
        done = verify_on(second, running.address)
        worked = {w: list(w.iterdir()) for w in work_folders(folder, "w*")}
    assert done.returncode == 3, done.stderr
    assert "6 bundle(s) verified: 1 rotted, 1 contradicted, 4 supported" in done.stdout
    assert results(second) == expected
    assert worked  # the workers verified, each in a folder of its own local directory
    assert not any(worked.values())  # and emptied it after each bundle


def test_a_worker_killed_mid_verification_has_its_bundle_retried(
    second: Path, expected: dict[str, tuple[Any, ...]], tmp_path: Path
) -> None:
    marker = tmp_path / "killed"
    env = {"ARCHIVE_TEST_KILLER": digest(second, "other@1.0.0"), "ARCHIVE_TEST_MARKER": str(marker)}
    with local_cluster(tmp_path / "cluster", env=env) as running:
        outcomes = outcomes_of(coordinate(second, running.address, "die_once"))
        dead = [n for n, p in running.workers.items() if p.poll() is not None]
    assert marker.is_file()  # a worker was killed while it verified other@1.0.0 ...
    assert len(dead) == 1  # ... and stayed dead
    assert len(outcomes) == 6 and results(second) == expected  # retried on the other one


def test_a_bundle_that_kills_every_worker_is_recorded_as_an_error(
    second: Path, expected: dict[str, tuple[Any, ...]], tmp_path: Path
) -> None:
    killer = digest(second, "other@1.0.0")
    env = {"ARCHIVE_TEST_KILLER": killer}
    with local_cluster(tmp_path / "cluster", env=env) as running:
        outcomes = outcomes_of(coordinate(second, running.address, "die_on_other"))
        assert all(p.poll() is not None for p in running.workers.values())  # all died
    assert len(outcomes) == 6
    result, detail = outcomes[killer]
    assert result == "error"
    assert "no worker" in detail["message"] or "KilledWorker" in detail["message"]
    found = results(second)
    for name, record in found.items():
        # each bundle has its true result, or is an error: never another result
        assert record == expected[name] or record[1] == "error", name
    assert found["other@1.0.0"][1] == "error"


def test_a_worker_of_another_reprobundle_version_is_refused(
    second: Path, expected: dict[str, tuple[Any, ...]], tmp_path: Path
) -> None:
    folder = tmp_path / "cluster"
    older = other_version(tmp_path, "0.0.1+other")
    with local_cluster(folder, workers=0) as running:
        start_worker(running, "other", folder, path_first=older)
        done = verify_on(second, running.address)
        assert done.returncode == 2 and "no worker of the Dask cluster" in done.stderr
        assert "runs reprobundle 0.0.1+other" in done.stderr
        start_worker(running, "same", folder)
        done = verify_on(second, running.address)
        assert work_folders(folder, "same")
        assert not work_folders(folder, "other")  # it was given nothing
    assert done.returncode == 3, done.stderr
    assert "refused worker" in done.stderr and "0.0.1+other" in done.stderr
    assert results(second) == expected


def test_a_task_on_a_worker_of_another_version_is_an_error_not_a_result(tmp_path: Path) -> None:
    outcome, version = cluster.verify_on_worker(reverify.Job(str(tmp_path), "a" * 64), "9.9.9")
    assert outcome.result == "error" and "the coordinator 9.9.9" in outcome.detail["message"]
    assert version != "9.9.9"


def test_an_unreachable_scheduler_is_named(second: Path) -> None:
    done = coordinate(second, "tcp://127.0.0.1:9", connect_seconds=1)
    assert done.returncode == 1 and "cannot reach the Dask scheduler at tcp://127.0.0.1:9" in (
        done.stderr
    )


def test_without_the_distributed_extra_the_scheduler_option_says_how_to_install_it(
    second: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "distributed", None)  # as if it were not installed
    code, _, err = cli(second, "verify", "--all", "--scheduler", "tcp://127.0.0.1:9")
    assert code == 2 and "pip install 'reprobundle[distributed]'" in err
