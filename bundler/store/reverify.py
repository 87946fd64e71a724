"""Re-verification of stored bundles in worker processes.

Each worker re-hashes the stored object (bit rot is found before anything runs) and
then calls the library's ``bundler.run.verify.verify`` on it, returning a plain summary the
parent records. Workers never touch the index: only the parent writes, one
transaction per result, so a crash loses at most the results not yet recorded.
"""

from __future__ import annotations

import contextlib
import multiprocessing
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bundler.codes import COMMAND_EXITS
from bundler.codes import EXIT_CODES as EXIT_CODES  # one map, re-exported for the store
from bundler.store.signers import Signed

if TYPE_CHECKING:
    from bundler.run.verify import VerifyOptions

# Overall results a verification can record, worst first (the batch exit code follows it).
RESULTS = ("missing", "rotted", "rejected", "error", "contradicted", "inconclusive", "supported")
BIT_ROT = ("missing", "rotted")


@dataclass(frozen=True)
class Job:
    root: str  # the archive folder
    digest: str
    # how it is judged, with the archive's signature policy (None: the defaults, no keys)
    options: VerifyOptions | None = None
    workdir: str | None = None  # where to make the work folder (default: the temp folder)
    size: int | None = None  # the object's recorded size: it is read no further


@dataclass(frozen=True)
class Reverification:
    """One re-verification's result, as recorded in the history."""

    digest: str
    result: str
    environment: dict[str, str]
    claims: list[dict[str, str]]  # id, status, why
    detail: dict[str, Any]  # cases tally, problems, message; signature, trust

    @property
    def exit_code(self) -> int:
        return EXIT_CODES[self.result]

    @property
    def bit_rot(self) -> bool:
        """The stored bytes are gone or no longer hash to their digest (said loudly)."""
        return self.result in BIT_ROT

    @property
    def signed(self) -> Signed | None:
        """Who signed it, when this verification got as far as judging signatures."""
        doc = self.detail.get("signature")
        return Signed.from_dict(doc) if isinstance(doc, dict) else None


def verify_one(job: Job) -> Reverification:
    """Runs in a worker process: re-hash the object, then verify it with the library."""
    import uuid

    from bundler.errors import BundleRejected, BundlerError
    from bundler.run.verify import VerifyOptions, verifier_environment, verify
    from bundler.store.objects import Store, Unreadable
    from bundler.store.signers import judge, trusted_ids

    environment = verifier_environment()
    options = job.options or VerifyOptions()
    store = Store(Path(job.root))
    path = store.path(job.digest)
    why = store.check(job.digest, job.size)
    if why is not None:
        result = "missing" if "missing" in why else "rotted"
        return Reverification(job.digest, result, environment, [], {"message": why})
    try:
        workdir = Path(job.workdir) / f"verify-{uuid.uuid4().hex}" if job.workdir else None
        with store.reading(job.digest, job.size) as stored:  # checked as it was just now
            verification = verify(path, options, workdir=workdir, stream=stored)
    except Unreadable as exc:
        result = "missing" if exc.missing else "rotted"
        return Reverification(job.digest, result, environment, [], {"message": exc.why})
    except BundleRejected as exc:
        problems = [{"where": p.where, "code": p.code, "message": p.message} for p in exc.problems]
        trust = trusted_ids(options.policy)
        refusal = {"message": exc.headline, "problems": problems, "trust": trust}
        return Reverification(job.digest, "rejected", environment, [], refusal)
    except BundlerError as exc:
        return Reverification(job.digest, "error", environment, [], {"message": exc.diagnostics()})
    except Exception as exc:  # a bug in a checker or the verifier is recorded, not fatal
        return Reverification(
            job.digest, "error", environment, [], {"message": f"{type(exc).__name__}: {exc}"}
        )
    claims = [
        {"id": c.claim.id, "status": c.status, "why": _why(c, verification)}
        for c in verification.claims
    ]
    tally: dict[str, int] = {"reproduced": 0, "diverged": 0, "inconclusive": 0}
    for case in verification.cases:  # "withheld" too, for a redacted bundle (issue 45)
        tally[case.outcome] = tally.get(case.outcome, 0) + 1
    signed = judge(verification.signature, verification.extracted.signatures, options.policy)
    detail: dict[str, Any] = {
        "cases": tally,
        "identity": verification.extracted.identity,
        "signature": signed.to_dict(),
        "trust": trusted_ids(options.policy),
    }
    withheld = {
        c.claim.id: sorted({u.advisory.id for u in c.advisories if not u.accepted})
        for c in verification.claims
        if any(not u.accepted for u in c.advisories)
    }
    if withheld:  # the claims an advisory kept from being supported
        detail["advisories"] = withheld
    if options.accept_advisories:
        detail["accepted_advisories"] = list(options.accept_advisories)
    return Reverification(job.digest, verification.status, verification.environment, claims, detail)


WORKER_DIED = (
    "the worker process died while verifying it (killed, or out of memory; or, run from a "
    'script, the script\'s code is not inside `if __name__ == "__main__":`, so each worker '
    "that imports it runs it again)"
)


def run(
    jobs: Sequence[Job],
    workers: int,
    on_error: Callable[[Job, str], Reverification],
    function: Callable[[Job], Reverification] = verify_one,
) -> Iterator[Reverification]:
    """Yield outcomes as workers finish them (in completion order).

    A worker that dies (killed, out of memory, a crash in native code) breaks the whole
    pool, and every job still pending fails with it. Those jobs are then run again one
    at a time, each in a fresh single-worker pool, so only the job that really kills its
    worker is recorded as an ``error``.
    """
    broken: list[Job] = []
    for job, outcome in _pool(jobs, workers, function, on_error):
        if outcome is None:
            broken.append(job)
        else:
            yield outcome
    for job in broken:
        for _, outcome in _pool([job], 1, function, on_error):
            yield outcome or on_error(job, WORKER_DIED)


def _pool(
    jobs: Sequence[Job],
    workers: int,
    function: Callable[[Job], Reverification],
    on_error: Callable[[Job, str], Reverification],
) -> Iterator[tuple[Job, Reverification | None]]:
    """(job, outcome) as they complete; outcome None when the pool broke under the job."""
    if not jobs:
        return
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(
        max_workers=min(workers, len(jobs)), mp_context=context, initializer=_quiet_ctrl_c
    ) as pool:
        with _workers_born_ignoring_ctrl_c():  # (the workers are started as jobs are sent)
            futures: dict[Future[Reverification], Job] = {
                pool.submit(_in_job, function, job): job for job in jobs
            }
        try:
            for future in as_completed(futures):
                job = futures[future]
                try:
                    yield job, future.result()
                except BrokenProcessPool:
                    yield job, None
                except Exception as exc:  # the job could not be sent or its result read
                    yield job, on_error(job, f"{type(exc).__name__}: {exc}")
        except BaseException:
            pool.shutdown(wait=True, cancel_futures=True)  # interrupted: start nothing new
            raise


# Ctrl-C reaches every worker too (the terminal signals the whole process group). One
# running a job stops it (KeyboardInterrupt, so its work folder is removed) and goes
# back for more, where the shutdown ends it; one waiting for work exits quietly: the
# interruption is the parent's to report, and no worker prints a traceback. A worker
# still starting (importing, before ``_quiet_ctrl_c``) ignores it: it is started with
# SIGINT ignored, which a new process keeps (a handler it would not).
_running = False


@contextlib.contextmanager
def _workers_born_ignoring_ctrl_c() -> Iterator[None]:
    """While workers are started: SIGINT ignored here (main thread only), so that they
    start ignoring it. A Ctrl-C in these few milliseconds is lost."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    old = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, signal.default_int_handler if old is None else old)


def _quiet_ctrl_c() -> None:
    import signal

    def stop(_signum: int, _frame: object) -> None:
        if _running:
            raise KeyboardInterrupt
        raise SystemExit(COMMAND_EXITS["interrupted"])

    signal.signal(signal.SIGINT, stop)


def _in_job(function: Callable[[Job], Reverification], job: Job) -> Reverification:
    global _running
    _running = True
    try:
        return function(job)
    finally:
        _running = False


def _why(claim: Any, verification: Any) -> str:
    """What the archive's history says of a claim: for a supported one, the sentence
    ``verify`` prints ("2 of 2 verdicts reproduced (1 pass, 1 fail as expected: 1
    control)"), which tells findings from controls (issue 43, friction 9); else its reason.
    (The JSON report's ``why`` keeps its words: golden bundles pin them.)"""
    if claim.status != "supported":
        return str(claim.why)
    from bundler.reports.common import verdicts_text

    by_id = {r.case.id: r for r in verification.cases}
    cases = [
        {
            "outcome": r.outcome,
            "expect": r.case.expect,
            "kind": "finding" if r.case.is_finding else None,
        }
        for r in (by_id[i] for i in claim.claim.cases)
    ]
    text = verdicts_text(cases)
    if claim.waiver:
        text += f"; negative control waived for {'; '.join(claim.uncontrolled)}: {claim.waiver}"
    return text
