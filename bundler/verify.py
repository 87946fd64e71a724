"""Verify a bundle: strict read, integrity, re-run every case, judge every claim.

Each step refuses before the next starts. The work directory is new (or empty), is
the only place anything is written, and is removed afterwards unless the caller keeps
it. Nothing here depends on the current working directory.
"""

from __future__ import annotations

import errno
import platform
import shutil
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import BinaryIO

from . import __version__, filewriter
from .claims import ClaimResult, ClaimStatus, judge_claims, overall
from .errors import BundlerError, Problem, UsageError
from .extract import BeforePayload, Extracted, Limits, extract
from .runner import (
    CASE_MEMORY,
    CASE_SECONDS,
    VERIFY_SECONDS,
    Budget,
    CaseResult,
    Progress,
    run_cases,
)
from .sandbox import BundledCode, CodePolicy, isolation
from .trust import Policy, SignatureCheck, check_signatures

EXIT_CODES: dict[ClaimStatus, int] = {"supported": 0, "contradicted": 1, "inconclusive": 4}


@dataclass(frozen=True)
class CodeRun:
    """Whether bundled code ran, why, what it is, and what isolation was in force."""

    allowed: bool
    why: str
    entries: tuple[tuple[str, str, str], ...]  # (checker, entry, sha256 of the entry file)
    isolation: dict[str, object]
    workers_started: int = 0


@dataclass(frozen=True)
class Verification:
    """Everything a report needs about one verification."""

    bundle_file: Path
    extracted: Extracted
    cases: list[CaseResult]
    claims: list[ClaimResult]
    status: ClaimStatus
    environment: dict[str, str]
    workdir: Path | None  # set when the caller kept it
    signature: SignatureCheck = field(default_factory=lambda: SignatureCheck("unsigned"))
    code: CodeRun | None = None  # set when the bundle declares bundled code

    @property
    def exit_code(self) -> int:
        return EXIT_CODES[self.status]


def verifier_environment() -> dict[str, str]:
    return {
        "tool": f"reprobundle {__version__}",
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "platform": platform.platform(),
    }


def prepare_workdir(workdir: Path | None) -> tuple[Path, bool]:
    """A new empty folder to extract into, and whether we created it."""
    if workdir is None:
        return Path(tempfile.mkdtemp(prefix="reprobundle-")), True
    try:
        return _given_workdir(workdir)
    except OSError as exc:  # under a file, no permission, ...: a usage error, never a bug
        why = (
            "a part of the path is a file, not a folder"
            if exc.errno == errno.ENOTDIR
            else exc.strerror
        )
        raise UsageError(f"--workdir {workdir}: cannot use it: {why}") from None


def _given_workdir(workdir: Path) -> tuple[Path, bool]:
    if workdir.is_symlink():
        raise UsageError(f"--workdir {workdir} is a link; give a new or empty folder")
    if workdir.exists():
        if not workdir.is_dir():
            raise UsageError(f"--workdir {workdir} exists and is not a folder")
        if any(workdir.iterdir()):
            raise UsageError(
                f"--workdir {workdir} is not empty: stale files could feed a checker; "
                "give a new or empty folder"
            )
        return workdir, False
    workdir.mkdir(parents=True)
    return workdir, True


def clean(workdir: Path, created: bool, files: Sequence[str] = ()) -> None:
    """Remove what was unpacked; ``files`` (relative to ``workdir``), if known, are
    removed first on two processes."""
    filewriter.remove_files(str(workdir), files)
    if created:
        shutil.rmtree(workdir, ignore_errors=True)
    else:
        for child in workdir.iterdir():
            if child.is_dir() and not child.is_symlink():
                shutil.rmtree(child, ignore_errors=True)
            else:
                child.unlink(missing_ok=True)


@contextmanager
def unpacked(
    bundle_file: Path,
    workdir: Path | None = None,
    keep: bool = False,
    limits: Limits | None = None,
    before_payload: BeforePayload | None = None,
    stream: BinaryIO | None = None,
) -> Iterator[Extracted]:
    """``bundle_file`` read into ``workdir`` (a new temporary folder by default) with every
    byte checked, and removed again on the way out unless ``keep``: the one place a work
    folder is made and emptied. A refusal while it is kept says where it is."""
    target, created = prepare_workdir(workdir)
    files: list[str] = []
    try:
        extracted = extract(bundle_file, target, limits, before_payload, stream)
        files = [f"{extracted.root.name}/{f.path}" for f in extracted.manifest.files]
        yield extracted
    except BundlerError as exc:
        if keep:
            exc.problems.append(
                Problem("", "workdir.kept", f"the work directory is kept at {target}")
            )
        raise
    finally:
        if not keep:
            clean(target, created, files)


def check_integrity(
    bundle_file: Path, limits: Limits | None = None, before_payload: BeforePayload | None = None
) -> Extracted:
    """Check every byte of ``bundle_file`` against its manifest, running no case: what
    ``inspect`` and ``diff`` need. The returned ``root`` no longer exists. Raises
    ``UsageError`` when ``bundle_file`` is not a file, ``BundleRejected`` when it does not
    hold."""
    _must_be_file(bundle_file)
    with unpacked(bundle_file.absolute(), limits=limits, before_payload=before_payload) as found:
        return found


def _must_be_file(path: Path) -> None:
    if not path.is_file():
        raise UsageError(f"{path} is not a file")


def verify(
    bundle_file: Path,
    workdir: Path | None = None,
    keep: bool = False,
    limits: Limits | None = None,
    progress: Progress | None = None,
    policy: Policy | None = None,
    code: CodePolicy | None = None,
    jobs: int = 1,
    stream: BinaryIO | None = None,
    case_seconds: float = CASE_SECONDS,
    case_memory: int = CASE_MEMORY,
    time_limit: float = VERIFY_SECONDS,
) -> Verification:
    """Verify ``bundle_file``. Raises ``BundleRejected`` (exit 3) when nothing could run.
    Given ``stream``, the bundle's bytes are read from it and ``bundle_file`` names them.

    Signatures are judged against ``policy`` (the reviewer's trusted keys) after the
    manifest is read and before any payload byte is written; a bad one always rejects.
    """
    policy = policy or Policy()
    checked: list[SignatureCheck] = []
    deadline = time.monotonic() + time_limit if time_limit > 0 else None
    budget = Budget(case_seconds, case_memory, deadline)

    def judge_signatures(manifest_bytes: bytes, identity: str, found: dict[str, bytes]) -> None:
        checked.append(check_signatures(manifest_bytes, identity, found, policy))

    bundle_file = Path(bundle_file).absolute() if stream is None else Path(bundle_file)
    if stream is None:
        _must_be_file(bundle_file)
    with unpacked(
        bundle_file, workdir.absolute() if workdir else None, keep, limits, judge_signatures, stream
    ) as extracted:
        code_run, runner = _code(extracted, checked[0], code or CodePolicy())
        try:
            cases = run_cases(
                extracted.manifest, extracted.root, progress, runner, jobs, budget=budget
            )
        finally:
            if runner is not None:
                runner.close()
                code_run = replace(
                    code_run,
                    workers_started=runner.started,
                    isolation={**code_run.isolation, "rlimits_applied": runner.limits_applied},
                )
        claims = judge_claims(extracted.manifest, cases)
        return Verification(
            bundle_file=bundle_file,
            extracted=extracted,
            cases=cases,
            claims=claims,
            status=overall(claims),
            environment=verifier_environment(),
            workdir=extracted.root.parent if keep else None,
            signature=checked[0],
            code=code_run if extracted.manifest.code else None,
        )


def _code(
    extracted: Extracted, signature: SignatureCheck, policy: CodePolicy
) -> tuple[CodeRun, BundledCode | None]:
    manifest = extracted.manifest
    hashes = {f.path: f.sha256 for f in manifest.files}
    entries = tuple((b.key, b.entry, hashes.get(b.path, "")) for b in manifest.code)
    if policy.allow:
        why = "allowed by --allow-code"
    elif signature.allow_code:
        why = (
            f"allowed: signed by a trusted key allowed to run code ({', '.join(signature.signers)})"
        )
    else:
        why = "not allowed: give --allow-code, or trust the signer with allow_code"
    allowed = policy.allow or signature.allow_code
    run = CodeRun(allowed, why, entries, isolation(policy.limits))
    if not manifest.code or not allowed:
        return run, None
    return run, BundledCode(manifest, extracted.root, policy.limits)


if sys.platform == "win32":  # pragma: no cover
    raise ImportError("reprobundle verifies on POSIX systems (it relies on O_NOFOLLOW and dir_fd)")
