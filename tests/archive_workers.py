"""Worker functions for the archive's process-pool tests (importable by spawned workers)."""

from __future__ import annotations

import os

from bundler.archive.reverify import Job, Outcome, verify_one


def die_on_other(job: Job) -> Outcome:
    """Kill the worker for bundles whose name says so; verify the rest normally."""
    if job.digest in os.environ.get("ARCHIVE_TEST_KILLER", ""):
        os._exit(9)
    return verify_one(job)


def pid_of_worker(job: Job) -> Outcome:
    outcome = verify_one(job)
    return Outcome(
        outcome.digest,
        outcome.result,
        outcome.environment,
        outcome.claims,
        {**outcome.detail, "pid": os.getpid()},
    )
