"""Worker functions for the archive's process-pool tests (importable by spawned workers)."""

from __future__ import annotations

import os

from bundler.store.reverify import Job, Reverification, verify_one


def die_on_other(job: Job) -> Reverification:
    """Kill the worker for bundles whose name says so; verify the rest normally."""
    if job.digest in os.environ.get("ARCHIVE_TEST_KILLER", ""):
        os._exit(9)
    return verify_one(job)


def pid_of_worker(job: Job) -> Reverification:
    outcome = verify_one(job)
    return Reverification(
        outcome.digest,
        outcome.result,
        outcome.environment,
        outcome.claims,
        {**outcome.detail, "pid": os.getpid()},
    )


def die_once(job: Job) -> Reverification:
    """Kill this worker process the first time any worker meets the bundle whose digest is
    in ARCHIVE_TEST_KILLER (a marker file, made atomically, records that it happened); on
    the retry the bundle is verified normally. Deterministic: the kill does not depend on
    when it happens, only on which bundle."""
    if job.digest == os.environ.get("ARCHIVE_TEST_KILLER"):
        try:
            fd = os.open(os.environ["ARCHIVE_TEST_MARKER"], os.O_CREAT | os.O_EXCL | os.O_WRONLY)
        except FileExistsError:
            return verify_one(job)
        os.write(fd, str(os.getpid()).encode())
        os.close(fd)
        os._exit(9)
    return verify_one(job)


def options_seen(job: Job) -> Reverification:
    """Verify normally, and say in the outcome's detail how the worker was told to judge
    the bundle (the ``VerifyOptions`` its ``Job`` carried)."""
    outcome = verify_one(job)
    options = job.options
    seen = None
    if options is not None:
        seen = {
            "allow_code": options.code.allow,
            "code_timeout": options.code.limits.timeout,
            "budget": list(options.budget),
            "jobs": options.jobs,
            "max_members": options.limits.members,
            "trusted": len(options.policy.trusted),
        }
    detail = {**outcome.detail, "options": seen}
    return Reverification(
        outcome.digest, outcome.result, outcome.environment, outcome.claims, detail
    )
