"""A real Dask cluster on 127.0.0.1 for the tests: a scheduler and workers as subprocesses
(``dask scheduler``, ``dask worker``), started by a test and stopped after it.

The coordinator (the Dask client) runs in a subprocess too (``coordinate``), as a user
runs ``archive verify --scheduler``: a client's threads in the pytest process can race
CPython 3.11's AST state (pytest rewrites modules it imports late) and fail the run.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

REPO = Path(__file__).resolve().parent.parent
START_SECONDS = 120  # a bound on start-up under load, never a measured expectation


@dataclass
class Cluster:
    address: str
    scheduler: subprocess.Popen[bytes]
    workers: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)  # name -> process


COORDINATOR = """
import json, sys
from pathlib import Path
from bundler.store import Archive, cluster
from tests import archive_workers
root, address, function = sys.argv[1], sys.argv[2], sys.argv[3]
cluster.CONNECT_SECONDS = float(sys.argv[4])
cluster.POLL_SECONDS = 0.25  # how soon lost workers are noticed; the outcomes are the same
notes = []
with Archive.open(Path(root)) as archive:
    outcomes = archive.verify(
        all_bundles=True,
        scheduler=address,
        function=getattr(archive_workers, function),
        on_note=notes.append,
    )
print(json.dumps({"notes": notes, "outcomes": [[o.digest, o.result, o.detail] for o in outcomes]}))
"""


def coordinate(
    root: Path, address: str, function: str = "verify_one", connect_seconds: float = 30
) -> subprocess.CompletedProcess[str]:
    """``Archive.verify(all_bundles=True, scheduler=address)`` in a subprocess, with the
    worker function ``tests.archive_workers.FUNCTION``; prints notes and outcomes as JSON."""
    return subprocess.run(
        [sys.executable, "-c", COORDINATOR, str(root), address, function, str(connect_seconds)],
        cwd=REPO,
        env=_env(),
        capture_output=True,
        text=True,
        check=False,
    )


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    """``reprobundle ARGS`` in a subprocess."""
    return subprocess.run(
        [sys.executable, "-m", "bundler", *args],
        cwd=REPO,
        env=_env(),
        capture_output=True,
        text=True,
        check=False,
    )


def _dask(*args: str) -> list[str]:
    return [sys.executable, "-m", "distributed.cli.dask_" + args[0], *args[1:]]


def _popen(
    command: list[str], env: dict[str, str], log: IO[bytes], cwd: Path = REPO
) -> subprocess.Popen[bytes]:
    """``python -m`` puts the working folder first on the import path: ``cwd`` decides
    which ``bundler`` a worker imports."""
    return subprocess.Popen(command, cwd=cwd, env=env, stdout=log, stderr=subprocess.STDOUT)


def _env(extra: Mapping[str, str] = {}, path_first: Path | None = None) -> dict[str, str]:
    env = dict(os.environ)
    paths = [str(path_first), str(REPO)] if path_first else [str(REPO)]
    env["PYTHONPATH"] = os.pathsep.join([*paths, env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    env.update(extra)
    return env


def _wait_for(check: object, what: str) -> None:
    deadline = time.monotonic() + START_SECONDS
    while time.monotonic() < deadline:
        if callable(check) and check():
            return
        time.sleep(0.2)
    raise RuntimeError(f"the test cluster did not start: {what}")


def start_worker(
    cluster: Cluster,
    name: str,
    folder: Path,
    env: Mapping[str, str] = {},
    path_first: Path | None = None,
) -> None:
    """One worker process without a nanny (a killed worker stays dead)."""
    local = folder / f"worker-{name}"
    local.mkdir(parents=True, exist_ok=True)
    with (folder / f"worker-{name}.log").open("wb") as log:
        process = _popen(
            _dask(
                "worker",
                cluster.address,
                "--name",
                name,
                "--nthreads",
                "1",
                "--no-nanny",
                "--host",
                "127.0.0.1",
                "--no-dashboard",
                "--local-directory",
                str(local),
            ),
            _env(env, path_first),
            log,
            path_first or REPO,
        )
    cluster.workers[name] = process
    log_file = folder / f"worker-{name}.log"
    _wait_for(
        lambda: "Registered to:" in log_file.read_text() or process.poll() is not None,
        f"worker {name}",
    )
    if process.poll() is not None:
        raise RuntimeError(f"worker {name} exited: {(folder / f'worker-{name}.log').read_text()}")


@contextlib.contextmanager
def local_cluster(folder: Path, workers: int = 2, env: Mapping[str, str] = {}) -> Iterator[Cluster]:
    """A scheduler on 127.0.0.1 (a free port) and ``workers`` workers; all stopped after."""
    folder.mkdir(parents=True, exist_ok=True)
    scheduler_file = folder / "scheduler.json"
    with (folder / "scheduler.log").open("wb") as log:
        scheduler = _popen(
            _dask(
                "scheduler",
                "--host",
                "127.0.0.1",
                "--port",
                "0",
                "--no-dashboard",
                "--scheduler-file",
                str(scheduler_file),
            ),
            _env(),
            log,
        )
    cluster = Cluster("", scheduler)
    try:
        _wait_for(lambda: scheduler_file.is_file() and scheduler_file.stat().st_size, "scheduler")
        cluster.address = str(json.loads(scheduler_file.read_text())["address"])
        for number in range(workers):
            start_worker(cluster, f"w{number + 1}", folder, env)
        yield cluster
    finally:
        # Workers first, and killed: a worker asked to close while the scheduler closes too
        # can wait out its 30 s connect timeout (seen under load); nothing of a test's
        # worker is needed once the test is done. Then the scheduler, with no worker left.
        for process in cluster.workers.values():
            if process.poll() is None:
                process.kill()
            process.wait()
        scheduler.send_signal(signal.SIGTERM)
        try:
            scheduler.wait(timeout=30)
        except subprocess.TimeoutExpired:
            scheduler.kill()
            scheduler.wait()


def other_version(folder: Path, version: str) -> Path:
    """A folder to put first on a worker's PYTHONPATH: a copy of the ``bundler`` package
    that says it is reprobundle ``version``."""
    target = folder / "other-version"
    shutil.copytree(
        REPO / "bundler", target / "bundler", ignore=shutil.ignore_patterns("__pycache__")
    )
    source = target / "bundler" / "version.py"
    text = source.read_text()
    source.write_text(text.replace('__version__ = "', f'__version__ = "{version}"  # was "', 1))
    return target
