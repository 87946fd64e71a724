"""Verify a bundle: strict read, integrity, re-run every case, judge every claim.

Each step refuses before the next starts. The work directory is new (or empty), is
the only place anything is written, and is removed afterwards unless the caller keeps
it. Nothing here depends on the current working directory.
"""

from __future__ import annotations

import datetime as dt
import platform
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO, NamedTuple

from bundler.codes import EXIT_CODES
from bundler.container.extract import (
    BeforePayload,
    CheckedBundle,
    Extracted,
    Limits,
    Wanted,
    extract,
)
from bundler.container.workfolder import WorkFolder
from bundler.errors import BundlerError, Problem, UsageError, os_reason
from bundler.format import withheld as withheld_rules
from bundler.format.arguments import count, seconds
from bundler.format.claims import (
    ClaimResult,
    ClaimStatus,
    accepted_advisories,
    judge_claims,
    overall,
)
from bundler.format.manifest import Manifest
from bundler.format.preregistration import FILE_NAME as PREREGISTRATION_FILE
from bundler.format.results import CaseResult
from bundler.run.isolation import CodePolicy, isolation
from bundler.run.limits import Budget, CaseBudget
from bundler.run.runner import Progress, checker_environment, run_cases
from bundler.run.withheld import disclose as disclose_files
from bundler.run.withheld import kept_back, withheld_result
from bundler.signatures.trust import Policy, SignatureCheck, SignatureJudge, TrustedKey, now
from bundler.version import __version__

if TYPE_CHECKING:
    from bundler.run.sandbox import BundledCode
    from bundler.signatures.preregistration import Preregistration


class CodeRun(NamedTuple):
    """Whether bundled code ran, why, what it is, and what isolation was in force."""

    allowed: bool
    why: str
    entries: tuple[tuple[str, str, str], ...]  # (checker, entry, sha256 of the entry file)
    isolation: dict[str, object]
    workers_started: int = 0


@dataclass(frozen=True)
class VerifyOptions:
    """How a bundle is judged, as one value: the reviewer's signature ``policy``, whether
    and how its own ``code`` runs, the ``limits`` on reading it, the ``budget`` of its
    built-in cases, the ``jobs`` (processes) they run in, and the advisories accepted (a
    claim resting on an advised checker version is otherwise inconclusive). Checked when
    made (``UsageError``); a ``Verification`` records the options that judged it."""

    policy: Policy = field(default_factory=Policy)
    code: CodePolicy = field(default_factory=CodePolicy)
    limits: Limits = field(default_factory=Limits)
    budget: CaseBudget = field(default_factory=CaseBudget)
    jobs: int = 1
    accept_advisories: Sequence[str] = ()  # kept as a tuple of known ids

    def __post_init__(self) -> None:
        object.__setattr__(self, "accept_advisories", accepted_advisories(self.accept_advisories))
        count("jobs", self.jobs, 1)
        count("case_memory", self.budget.memory)
        seconds("case_seconds", self.budget.seconds)
        seconds("time_limit", self.budget.time_limit)


@dataclass(frozen=True)
class Verification:
    """Everything a report needs about one verification. It names a folder only when
    that folder is still there: ``workdir`` (and ``root``) only when the caller kept it."""

    bundle_file: Path
    extracted: CheckedBundle
    cases: list[CaseResult]
    claims: list[ClaimResult]
    status: ClaimStatus
    environment: dict[str, Any]
    workdir: Path | None  # the work folder, when the caller kept it (else it is removed)
    signature: SignatureCheck = field(default_factory=lambda: SignatureCheck("unsigned"))
    code: CodeRun | None = None  # set when the bundle declares bundled code
    preregistration: PreregistrationCheck | None = None  # set when the bundle holds one
    disclosed: tuple[str, ...] = ()  # withheld files given by --disclose and checked
    options: VerifyOptions = field(default_factory=VerifyOptions)  # what judged it

    @property
    def accepted_advisories(self) -> tuple[str, ...]:
        """The advisories the reviewer accepted."""
        return tuple(self.options.accept_advisories)

    @property
    def exit_code(self) -> int:
        return EXIT_CODES[self.status]

    @property
    def root(self) -> Path | None:
        """The bundle's top folder (``NAME-VERSION/``) in the kept work folder, else None."""
        return self.workdir / self.extracted.manifest.top if self.workdir else None


class PreregistrationCheck(NamedTuple):
    """The pre-registration a bundle holds, read against the reviewer's trusted keys:
    ``found`` when it reads strictly and names this bundle, else ``problem`` (code,
    message). Whether a claim is as pre-registered is decided by the report from it."""

    found: Preregistration | None
    trusted_signers: tuple[str, ...] = ()  # names of the trusted keys that signed and count
    problem: tuple[str, str] | None = None
    not_counting: tuple[str, ...] = ()  # why each other trusted key that signed does not
    at: dt.datetime | None = None  # when it was judged (its signatures, its stated time)


def check_preregistration(
    extracted: Extracted, trusted: Sequence[TrustedKey]
) -> PreregistrationCheck | None:
    """Read the bundle's ``preregistration.json`` (None when it holds none)."""
    manifest = extracted.manifest
    if not any(f.path == PREREGISTRATION_FILE for f in manifest.files):
        return None
    # imported here: cryptography costs every verify of a bundle that holds none
    from bundler.signatures.envelope import MAX_ENVELOPE, EnvelopeProblem
    from bundler.signatures.preregistration import open_preregistration

    with (extracted.root / PREREGISTRATION_FILE).open("rb") as stream:
        data = stream.read(MAX_ENVELOPE + 1)  # a larger one is refused as too large
    at = now()
    try:
        found = open_preregistration(data, trusted, at, name=manifest.name)
    except EnvelopeProblem as exc:
        return PreregistrationCheck(None, problem=(exc.code, exc.message), at=at)
    return PreregistrationCheck(found, found.names, not_counting=found.notes, at=at)


def machine_environment() -> dict[str, Any]:
    """This tool, Python and platform: what a build records of the machine it ran on and a
    verification of its own, beside the checkers and libraries each used."""
    return {
        "tool": f"reprobundle {__version__}",
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        # starts `uname -p` once a process: what it prints is the distribution's (Debian
        # "unknown", dropped; Fedora the machine, dropped; Gentoo the CPU's model name,
        # kept), so no reading of os.uname() gives the same string everywhere
        "platform": platform.platform(),
    }


def verifier_environment(manifest: Manifest | None = None, code_ran: bool = True) -> dict[str, Any]:
    """This machine, and (given the manifest) the checkers and library versions its cases
    used here, beside which the build's are recorded."""
    here = machine_environment()
    if manifest is not None:
        here.update(checker_environment((c.checker for c in manifest.cases), code_ran))
    return here


@contextmanager
def unpacked(
    bundle_file: Path,
    workdir: Path | None = None,
    keep: bool = False,
    limits: Limits | None = None,
    before_payload: BeforePayload | None = None,
    stream: BinaryIO | None = None,
    wanted: Wanted | None = None,
) -> Iterator[Extracted]:
    """``bundle_file`` read into ``workdir`` (a new temporary folder by default) with every
    byte checked, and removed again on the way out unless ``keep`` (on Ctrl-C and SIGTERM
    too): the one place a work folder is made and emptied. A refusal while it is kept says
    where it is. ``wanted`` names the files to write (every byte is hashed either way)."""
    folder = WorkFolder(workdir)
    try:
        yield extract(bundle_file, folder.path, limits, before_payload, stream, wanted)
    except BundlerError as exc:
        if keep:
            exc.problems.append(
                Problem("", "workdir.kept", f"the work directory is kept at {folder.path}")
            )
        raise
    except BaseException as exc:  # Ctrl-C, a signal: a kept folder is never left unnamed
        if keep:
            exc.add_note(
                f"the work directory is kept at {folder.path} (half-written: the "
                "verification was stopped)"
            )
        raise
    finally:
        if keep:
            folder.release()
        else:
            folder.remove()


def read_by_cases(manifest: Manifest) -> set[str]:
    """The files some case names as an input, or that lie under a folder a case names."""
    return withheld_rules.read_by_cases(manifest)


def check_integrity(
    bundle_file: Path, limits: Limits | None = None, before_payload: BeforePayload | None = None
) -> CheckedBundle:
    """Check every byte of ``bundle_file`` against its manifest, running no case and
    writing no file: what ``inspect`` and ``diff`` need. Raises ``UsageError`` when
    ``bundle_file`` is not a file, ``BundleRejected`` when it does not hold."""
    bundle_file = Path(bundle_file)
    must_be_file(bundle_file)
    with unpacked(
        bundle_file.absolute(), limits=limits, before_payload=before_payload, wanted=lambda _: ()
    ) as found:
        return found.checked()


def must_be_file(path: Path) -> None:
    """A usage error naming what ``path`` is instead of a bundle file, with the fix."""
    if path.is_file():
        return
    if (path / "bundle.yaml").is_file():
        raise UsageError(
            f"{path} is not a file but a bundle source (a folder holding bundle.yaml): build "
            f"it first with `reprobundle build {path}`, then verify the file it writes"
        )
    if path.is_dir():
        raise UsageError(
            f"{path} is not a file but a folder; give a bundle file (NAME-VERSION.bundle.tar.zst)"
        )
    raise UsageError(f"{path} is not a file: {_what_it_is(path)}")


def _what_it_is(path: Path) -> str:
    """What is at ``path`` that is neither a file nor a folder, in words."""
    import stat

    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        blocked = next((part for part in path.parents if part.is_file()), None)
        if blocked is not None:
            return f"a part of the path, {blocked}, is a file"
        if path.is_symlink():
            return "it is a symbolic link to something that does not exist"
        return "it does not exist"
    except NotADirectoryError:
        blocked = next((part for part in path.parents if part.is_file()), None)
        return f"a part of the path, {blocked}, is a file" if blocked else "it does not exist"
    except OSError as exc:
        return f"it cannot be looked at ({os_reason(exc)})"
    if stat.S_ISFIFO(mode):
        return "it is a FIFO (a named pipe); give the bundle file itself"
    if stat.S_ISSOCK(mode):
        return "it is a socket; give the bundle file itself"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "it is a device; give the bundle file itself"
    return "it is not a regular file; give the bundle file itself"


def verify(
    bundle_file: Path,
    options: VerifyOptions | None = None,
    *,
    workdir: Path | None = None,
    keep: bool = False,
    stream: BinaryIO | None = None,
    progress: Progress | None = None,
    disclose: Path | None = None,
) -> Verification:
    """Verify ``bundle_file``. Raises ``BundleRejected`` (exit 3) when nothing could run.
    Given ``stream``, the bundle's bytes are read from it and ``bundle_file`` names them.

    Judged as ``options`` say (``VerifyOptions``; the defaults when None): signatures
    against its ``policy`` (the reviewer's trusted keys) after the manifest is read and
    before any payload byte is written (a bad one always rejects); a claim resting on an
    advised checker version is inconclusive unless its advisory is accepted
    (``bundler.format.claims``).

    In a redacted bundle a case that reads a withheld file is not run (outcome
    ``withheld``), unless ``disclose`` names a folder holding the withheld files: each is
    then checked against its digest (``BundleRejected`` if one differs) and every case runs.
    """
    options = options or VerifyOptions()
    policy = options.policy
    judge_signatures = SignatureJudge(policy)
    budget = options.budget.started(time.monotonic())
    limits = options.limits
    jobs = options.jobs

    def wanted(manifest: Manifest) -> set[str] | None:
        """Every file when a person will look at the folder or bundled code will run."""
        runs_code = manifest.code and (code_policy.allow or judge_signatures.check.allow_code)
        if keep or workdir is not None or runs_code:
            return None
        return read_by_cases(manifest) | {PREREGISTRATION_FILE}  # (written only if listed)

    code_policy = options.code
    bundle_file = Path(bundle_file).absolute() if stream is None else Path(bundle_file)
    if stream is None:
        must_be_file(bundle_file)
    with unpacked(
        bundle_file, workdir, keep, limits, judge_signatures, stream, wanted
    ) as extracted:
        disclosed = () if disclose is None else disclose_files(extracted, disclose)
        code_run, runner = _code(extracted, judge_signatures.check, code_policy)
        try:
            cases = _run_present(extracted, disclosed, progress, runner, jobs, budget)
        finally:
            if runner is not None:
                runner.close()
                isolated = {**code_run.isolation, "rlimits_applied": runner.limits_applied}
                code_run = CodeRun(
                    code_run.allowed, code_run.why, code_run.entries, isolated, runner.started
                )
        claims = judge_claims(extracted.manifest, cases, options.accept_advisories)
        return Verification(
            bundle_file=bundle_file,
            extracted=extracted.checked(),
            cases=cases,
            claims=claims,
            status=overall(claims),
            environment=verifier_environment(extracted.manifest, code_run.allowed),
            workdir=extracted.root.parent if keep else None,  # (else removed on return)
            signature=judge_signatures.check,
            code=code_run if extracted.manifest.code else None,
            preregistration=check_preregistration(extracted, policy.trusted),
            disclosed=disclosed,
            options=options,
        )


def _run_present(
    extracted: Extracted,
    disclosed: tuple[str, ...],
    progress: Progress | None,
    runner: BundledCode | None,
    jobs: int,
    budget: Budget,
) -> list[CaseResult]:
    """Every case whose inputs are here; a case that reads a withheld (and undisclosed)
    file is not run, its outcome ``withheld``."""
    manifest = extracted.manifest
    held = {} if disclosed else kept_back(manifest.cases, extracted.withheld)
    if not held:
        return run_cases(manifest, extracted.root, progress, runner, jobs, budget=budget)
    present = replace(manifest, cases=tuple(c for c in manifest.cases if c.id not in held))
    ran = {
        r.case.id: r
        for r in run_cases(present, extracted.root, progress, runner, jobs, budget=budget)
    }
    return [withheld_result(c, held[c.id]) if c.id in held else ran[c.id] for c in manifest.cases]


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
    # probed (by running unshare) only for a bundle that holds code: the report shows it
    # only then
    run = CodeRun(allowed, why, entries, isolation(policy.limits) if manifest.code else {})
    if not manifest.code or not allowed:
        return run, None
    from bundler.run.sandbox import BundledCode  # the worker protocol: only to run code

    return run, BundledCode(manifest, extracted.root, policy.limits)


if sys.platform == "win32":  # pragma: no cover
    raise ImportError("reprobundle verifies on POSIX systems (it relies on O_NOFOLLOW and dir_fd)")
