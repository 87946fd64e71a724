"""Re-verification fanned out to a Dask distributed cluster (``archive verify --scheduler``).

Each worker runs the same ``reverify.verify_one`` as a local pool worker, on the stored
object named by its digest under the archive folder (a path every worker must see), in a
work folder under the worker's own local directory, and returns the same ``Reverification``.
Only the coordinating process (the one that called ``Archive.verify``) writes the index
and the log. A worker whose reprobundle version differs from the coordinator's is
refused (it is given no bundle; a result that still comes from one is recorded as an
``error``). A worker that dies mid-verification has its bundles re-run by the scheduler
on another worker; a bundle whose workers keep dying (Dask's ``allowed-failures``), or
that is left with no worker to run it, is recorded as an ``error``, never as a result.

The scheduler runs whatever code any client sends it: keep it on a private network or
use TLS (README, "Re-verifying on a Dask cluster").
"""

from __future__ import annotations

import dataclasses
import queue
import uuid
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from bundler.errors import UsageError
from bundler.store.errors import ArchiveError
from bundler.store.reverify import Job, Reverification, verify_one
from bundler.version import __version__

POLL_SECONDS = 2.0  # how often the coordinator looks for lost and new workers
CONNECT_SECONDS = 30


def worker_identity() -> dict[str, str]:
    """Runs on each worker (``Client.run``): what it would verify with."""
    import platform

    from bundler.version import __version__ as version

    return {"reprobundle": version, "python": platform.python_version()}


def verify_on_worker(
    job: Job, expected: str, function: Callable[[Job], Reverification] = verify_one
) -> tuple[Reverification, str]:
    """Runs in a Dask task: the worker's own reprobundle verifies the bundle, in a work
    folder under the worker's local directory. Returns the outcome and the version that
    produced it (the coordinator checks it)."""
    from distributed import get_worker

    from bundler.version import __version__ as version

    if version != expected:
        why = f"this worker runs reprobundle {version}, the coordinator {expected}"
        return Reverification(job.digest, "error", {}, [], {"message": why}), version
    if not (Path(job.root) / "objects").is_dir():
        why = f"this worker cannot see the archive at {job.root} (every worker needs that path)"
        return Reverification(job.digest, "error", {}, [], {"message": why}), version
    work = Path(get_worker().local_directory) / "reprobundle"
    work.mkdir(exist_ok=True)
    return function(dataclasses.replace(job, workdir=str(work))), version


def run(
    jobs: Sequence[Job],
    address: str,
    on_error: Callable[[Job, str], Reverification],
    function: Callable[[Job], Reverification] = verify_one,
    on_note: Callable[[str], None] | None = None,
) -> Iterator[Reverification]:
    """Yield outcomes as the cluster finishes them (in completion order)."""
    try:
        from distributed import Client
    except ImportError:
        raise UsageError(
            "archive verify --scheduler needs Dask distributed: "
            "pip install 'reprobundle[distributed]'"
        ) from None
    note = on_note or (lambda text: None)
    try:
        client = Client(address, timeout=f"{CONNECT_SECONDS}s", set_as_default=False)
    except (OSError, TimeoutError, ValueError) as exc:
        raise ArchiveError(
            f"cannot reach the Dask scheduler at {address} ({type(exc).__name__}: {exc}); "
            "start one with 'dask scheduler' (README, 'Re-verifying on a Dask cluster')"
        ) from None
    try:
        yield from _run(client, jobs, address, on_error, function, note)
    finally:
        client.close()


def _probe(client: Any, workers: list[str] | None, note: Callable[[str], None]) -> set[str]:
    """The workers (of ``workers``, or all) that run this reprobundle version; notes the rest."""
    found = client.run(worker_identity, workers=workers, on_error="return")
    good = set()
    for address, answer in sorted(found.items()):
        if isinstance(answer, dict) and answer.get("reprobundle") == __version__:
            good.add(address)
        elif isinstance(answer, dict):
            note(
                f"refused worker {address}: it runs reprobundle {answer.get('reprobundle')}, "
                f"this coordinator {__version__}; it is given no bundle"
            )
        else:
            note(
                f"refused worker {address}: it cannot run reprobundle {__version__}'s "
                f"verifier ({type(answer).__name__}: {answer}); it is given no bundle"
            )
    return good


def _run(
    client: Any,
    jobs: Sequence[Job],
    address: str,
    on_error: Callable[[Job, str], Reverification],
    function: Callable[[Job], Reverification],
    note: Callable[[str], None],
) -> Iterator[Reverification]:
    probed = set(client.scheduler_info()["workers"])
    good = _probe(client, sorted(probed), note)
    if not good:
        raise ArchiveError(
            f"no worker of the Dask cluster at {address} runs reprobundle {__version__} "
            f"({len(probed)} worker(s) refused); nothing was verified",
        )
    batch = uuid.uuid4().hex[:12]

    def submit(job: Job, allowed: set[str]) -> Any:
        future = client.submit(
            verify_on_worker,
            job,
            __version__,
            function,
            key=f"reprobundle-verify-{job.digest}-{batch}-{uuid.uuid4().hex[:8]}",
            workers=sorted(allowed),
            allow_other_workers=False,
            pure=False,
        )
        future.add_done_callback(finished.put)  # called once, from the client's thread
        return future

    # Each finished future arrives once on this queue (O(1) per bundle, where waiting on
    # all pending futures again after each would be O(n) per bundle).
    finished: queue.Queue[Any] = queue.Queue()
    pending = {submit(job, good): job for job in jobs}
    lost: set[Any] = set()  # finished, but the result went with its worker: recomputed
    allowed = set(good)
    try:
        while pending:
            ready = [f for f in lost if f.done()]
            try:
                ready.append(finished.get(timeout=POLL_SECONDS))
                while True:
                    ready.append(finished.get_nowait())
            except queue.Empty:
                pass
            answered = 0
            for future in ready:
                if future not in pending:  # cancelled and submitted again, or answered
                    continue
                try:
                    outcome = _outcome(future, pending[future], on_error)
                except TimeoutError:
                    lost.add(future)
                    continue
                lost.discard(future)
                del pending[future]
                answered += 1
                yield outcome
            if not pending or answered:
                continue
            live = set(client.scheduler_info()["workers"])
            new = live - probed
            if new:
                probed |= new
                good |= _probe(client, sorted(new), note)
            if live & allowed:
                continue
            if live & good:  # every worker the bundles were given to is gone; new ones came
                allowed = live & good
                for future, job in list(pending.items()):
                    future.cancel()
                    del pending[future]
                    lost.discard(future)
                    pending[submit(job, allowed)] = job
                continue
            for future, job in list(pending.items()):
                future.cancel()
                del pending[future]
                yield on_error(
                    job,
                    f"no worker running reprobundle {__version__} is left in the cluster at "
                    f"{address} (the workers were lost); not verified",
                )
    finally:
        for future in pending:
            future.cancel()


def _outcome(
    future: Any, job: Job, on_error: Callable[[Job, str], Reverification]
) -> Reverification:
    if future.status == "cancelled":
        return on_error(job, "the cluster cancelled the verification")
    # A finished task's result lives on its worker until fetched; when that worker dies
    # first, the scheduler recomputes the task and fetching waits: give up after a while
    # (TimeoutError) and let the caller wait for the recomputation or the lost workers.
    error = future.exception(timeout=POLL_SECONDS)
    if error is not None:
        if type(error).__name__ == "KilledWorker":
            return on_error(
                job,
                "every worker that tried to verify it died (Dask KilledWorker: "
                "killed, or out of memory)",
            )
        return on_error(job, f"the cluster could not run it ({type(error).__name__}: {error})")
    outcome, version = future.result(timeout=POLL_SECONDS)
    if version != __version__:
        return on_error(job, f"a worker running reprobundle {version} answered; not recorded")
    if not isinstance(outcome, Reverification) or outcome.digest != job.digest:
        return on_error(job, "a worker returned something other than this bundle's outcome")
    return outcome
