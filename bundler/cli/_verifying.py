"""What the commands that verify a bundle share (``verify``, ``report``, ``ci``,
``archive verify``), below them so that no command imports another: verify's judging
options, declared once (``verify_options``) and read into one frozen value
(``Judging``), which gives the library's ``VerifyOptions`` for each bundle;
``--disclose`` (``disclose_option``); and the signed attestation of a verification,
which records the options that judged it
(``Verification.options``).
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from bundler.cli._shared import (
    LIMIT_OPTIONS,
    accept_advisory_option,
    limit_options,
    limits_from,
    trust_options,
)
from bundler.run.isolation import CodeLimits, CodePolicy
from bundler.run.limits import CASE_MEMORY, CASE_SECONDS, VERIFY_SECONDS, CaseBudget

if TYPE_CHECKING:
    import datetime as dt

    from bundler.container.extract import Limits
    from bundler.run.verify import VerifyOptions

F = TypeVar("F", bound=Callable[..., Any])
CODE_LIMITS = CodeLimits()  # the library's defaults are the flags' defaults


@dataclass(frozen=True)
class Judging:
    """verify's judging options as the command line gave them: the trust files are read
    for each bundle (``options``), so that a bundle's own detached signature beside it
    counts and a file that cannot be read is that bundle's problem."""

    trust_files: tuple[Path, ...]
    trust_store: Path | None
    require_signature: bool
    allow_unsigned: bool
    expect_manifest_sha256: str | None
    detached: tuple[Path, ...]  # --signature files (default: the one beside the bundle)
    code: CodePolicy
    limits: Limits
    budget: CaseBudget
    jobs: int
    accept_advisories: tuple[str, ...]

    def pinned(self, pin: str | None) -> Judging:
        """The same options with ``pin`` as the identity pin."""
        return replace(self, expect_manifest_sha256=pin)

    def options(self, bundle: Path | None) -> VerifyOptions:
        """The ``VerifyOptions`` that judge ``bundle``: the trusted keys read now, with
        the detached signature beside it unless --signature named others (``None``: no
        one bundle, as for ``archive verify``, whose archive adds its own keys). Raises
        ``UsageError``."""
        from bundler.run.verify import VerifyOptions
        from bundler.signatures.truststore import beside, load_policy

        beside_it = beside(bundle) if bundle is not None else ()
        policy = load_policy(
            self.trust_files,
            self.trust_store,
            require_signature=self.require_signature,
            allow_unsigned=self.allow_unsigned,
            expect_manifest_sha256=self.expect_manifest_sha256,
            detached=self.detached or beside_it,
        )
        return VerifyOptions(
            policy, self.code, self.limits, self.budget, self.jobs, self.accept_advisories
        )


# the parameters verify_options reads into a Judging (with the --max-... limits); those
# of one bundle's signature policy (_ONE_BUNDLE) and --jobs only where it declares them
_ONE_BUNDLE = ("require_signature", "allow_unsigned", "expect_manifest_sha256", "detached")
_JUDGING = (
    "trust_files",
    "trust_store",
    "allow_code",
    "code_timeout",
    "code_memory",
    "code_output",
    "code_processes",
    "code_written_bytes",
    "case_timeout",
    "case_memory",
    "time_limit",
    "accept_advisory",
)
_UNDECLARED: dict[str, Any] = {
    "require_signature": False,
    "allow_unsigned": False,
    "expect_manifest_sha256": None,
    "detached": (),
    "jobs": 1,
}


def _judging(values: dict[str, Any], one_bundle: bool, jobs: bool) -> Judging:
    """Take the judging options (and the --max-... limits) out of a command's ``values``;
    those the command does not declare (``one_bundle``, ``jobs``) take their defaults."""
    names = _JUDGING + (_ONE_BUNDLE if one_bundle else ()) + (("jobs",) if jobs else ())
    given = {**_UNDECLARED, **{name: values.pop(name) for name in names}}
    limits = limits_from(values)
    for flag, _, _ in LIMIT_OPTIONS:
        del values[flag[2:].replace("-", "_")]
    code = CodeLimits(
        timeout=given["code_timeout"],
        memory_bytes=given["code_memory"],
        output_bytes=given["code_output"],
        processes=given["code_processes"],
        written_bytes=given["code_written_bytes"],
    )
    return Judging(
        trust_files=given["trust_files"],
        trust_store=given["trust_store"],
        require_signature=given["require_signature"],
        allow_unsigned=given["allow_unsigned"],
        expect_manifest_sha256=given["expect_manifest_sha256"],
        detached=given["detached"],
        code=CodePolicy(given["allow_code"], code),
        limits=limits,
        budget=CaseBudget(given["case_timeout"], given["case_memory"], given["time_limit"]),
        jobs=given["jobs"],
        accept_advisories=given["accept_advisory"],
    )


def verify_options(
    pinning: Sequence[Callable[[Any], Any]] = (),
    *,
    trust: str = "you trust",
    one_bundle: bool = True,
    jobs: bool = True,
    limits_first: bool = False,
) -> Callable[[F], F]:
    """verify's trust, code, case and ``--max-...`` limit options (``limit_options``),
    declared here once for every command that verifies a bundle, and read into one
    ``Judging`` passed as ``judging``. What legitimately differs between the commands is
    a parameter: ``trust`` says whose keys --trust names (``trust_options``);
    ``one_bundle``: the signature policy of one bundle (--require-signature,
    --allow-unsigned, --expect-manifest-sha256, ``pinning``, --signature), which
    ``archive verify`` leaves to the archive's trust; ``jobs``:
    --jobs, the processes of one bundle's cases (``archive verify``'s --jobs, bundles at
    once, is its own; its ``Judging`` has 1); ``limits_first``: the --max-... options
    shown before the others (``report``, ``ci``) rather than after them. ``pinning``: the
    command's own options shown right after --expect-manifest-sha256 (verify's: where the
    bundle comes from)."""

    def decorate(function: F) -> F:
        command = _judging_options(function)
        return limit_options(command) if limits_first else command

    def _judging_options(function: F) -> F:
        if not limits_first:
            function = limit_options(function)

        @functools.wraps(function)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            return function(*args, judging=_judging(kwargs, one_bundle, jobs), **kwargs)

        command: Any = wrapper
        command = accept_advisory_option(command)
        if jobs:
            command = _JOBS_OPTION(command)
        for option in reversed(_CASE_AND_CODE_OPTIONS):
            command = option(command)
        if not one_bundle:
            return trust_options(trust)(command)  # type: ignore[no-any-return]
        command = click.option(
            "--signature",
            "detached",
            multiple=True,
            type=click.Path(path_type=Path, dir_okay=False),
            help="A detached signature file to check too (repeatable; default: BUNDLE.sig.json "
            "beside the bundle, when there is one).",
        )(command)
        for option in reversed(pinning):
            command = option(command)
        command = click.option(
            "--expect-manifest-sha256",
            metavar="HEX",
            help="Reject the bundle unless its identity (manifest SHA-256) is HEX.",
        )(command)
        command = click.option(
            "--allow-unsigned",
            is_flag=True,
            help="With --trust/--trust-store: verify a bundle none of those keys signed "
            "instead of rejecting it (the result line still says it is unsigned).",
        )(command)
        command = click.option(
            "--require-signature",
            is_flag=True,
            help="Reject the bundle unless a trusted key signed it.",
        )(command)
        return trust_options(trust)(command)  # type: ignore[no-any-return]

    return decorate


_CASE_AND_CODE_OPTIONS: tuple[Callable[[Any], Any], ...] = (
    click.option(
        "--allow-code",
        is_flag=True,
        help="Run the bundle's own checker code (in separate limited processes; not a sandbox).",
    ),
    click.option(
        "--code-timeout",
        type=click.FloatRange(0.1),
        default=CODE_LIMITS.timeout,
        show_default=True,
        help="Seconds a bundled-code case may take.",
    ),
    click.option(
        "--code-memory",
        type=click.IntRange(16 << 20),
        default=CODE_LIMITS.memory_bytes,
        show_default=True,
        help="Address-space bytes of a bundled-code process.",
    ),
    click.option(
        "--code-output",
        type=click.IntRange(0),
        default=CODE_LIMITS.output_bytes,
        show_default=True,
        help="Output bytes kept per bundled-code case.",
    ),
    click.option(
        "--code-processes",
        type=click.IntRange(1),
        default=CODE_LIMITS.processes,
        show_default=True,
        help="Processes a bundled checker may run at once; more and they are all killed.",
    ),
    click.option(
        "--code-written-bytes",
        type=click.IntRange(1 << 20),
        default=CODE_LIMITS.written_bytes,
        show_default=True,
        help="Bytes a bundled checker may write in all (its tmpfs; where no mount namespace "
        "can be made, only each file's size is limited).",
    ),
    click.option(
        "--case-timeout",
        type=click.FloatRange(0),
        default=CASE_SECONDS,
        show_default=True,
        help="Seconds a built-in case may run before it is stopped as inconclusive (0: no limit).",
    ),
    click.option(
        "--case-memory",
        type=click.IntRange(0),
        default=CASE_MEMORY,
        show_default=True,
        help="Bytes of memory a built-in case may add to the verifier (0: no limit); a case "
        "past it is inconclusive (checker.memory).",
    ),
    click.option(
        "--time-limit",
        type=click.FloatRange(0),
        default=VERIFY_SECONDS,
        show_default=True,
        help="Seconds the whole verification may take (0: no limit); cases not run by then "
        "are inconclusive.",
    ),
)
_JOBS_OPTION = click.option(
    "--jobs",
    "-j",
    type=click.IntRange(1),
    default=os.cpu_count() or 1,
    show_default="the number of cores",
    help="Processes for built-in cases (used from 64 cases on; results are the same).",
)


def disclose_option(function: F) -> F:
    """``--disclose DIR``: a redacted bundle's withheld files, given to the commands that
    verify a bundle (``verify``, ``report``, ``ci``) as ``disclose``. Its own decorator,
    apart from ``verify_options``: it gives files, not a way of judging them."""
    return click.option(
        "--disclose",
        type=click.Path(path_type=Path),
        metavar="DIR",
        help="A redacted bundle's withheld files, by their bundle paths under DIR: each is "
        "checked against its digest (a mismatch rejects) and every case runs.",
    )(function)


def signing_key(key_file: Path) -> Any:
    """A private key from ``keygen``, read before any work (a wrong passphrase is found
    before a long verification, not after); the passphrase is asked for, or read from
    ``$REPROBUNDLE_PASSPHRASE``, only when the key is encrypted."""
    from bundler.cli._shared import ask_passphrase
    from bundler.signatures.keyfiles import read_private_key

    return read_private_key(key_file, lambda: ask_passphrase(confirm=False))


def attest_options(options: VerifyOptions, report: dict[str, Any]) -> dict[str, Any]:
    """What decided trust and what ran in a verification, as an attestation records it,
    from the ``options`` that judged it: the keys trusted (by key id, never by a file name
    only this machine knows), the signature policy, whether bundled code could run, every
    limit."""
    from bundler.signatures.trust import counting, now

    policy, code = options.policy, options.code.limits
    signature = report.get("signature") or {}
    limits = {
        flag[2:].replace("-", "_"): getattr(options.limits, f) for flag, f, _ in LIMIT_OPTIONS
    }
    return {
        "trustedKeyIds": sorted(k.key.keyid for k in counting(policy.trusted, now(), "bundle")),
        "requireSignature": policy.require_signature,
        "allowUnsigned": policy.allow_unsigned,
        "expectManifestSha256": policy.expect_manifest_sha256,
        "allowCode": options.code.allow,
        "bundleSignature": signature.get("summary", "unsigned"),
        "codeLimits": {
            "timeoutSeconds": code.timeout,
            "memoryBytes": code.memory_bytes,
            "outputBytes": code.output_bytes,
            "processes": code.processes,
            "writtenBytes": code.written_bytes,
        },
        "caseTimeoutSeconds": options.budget.seconds,
        "caseMemoryBytes": options.budget.memory,
        "timeLimitSeconds": options.budget.time_limit,
        "limits": dict(sorted(limits.items())),
        # advisories: which the reviewer accepted, and which made a claim inconclusive
        "acceptedAdvisories": list(report.get("accepted_advisories", [])),
        # per claim kept from support: each advisory, the version it names, the fix
        "advisoriesNotAccepted": {
            claim["id"]: [
                {"id": a["id"], "checker": a["checker"], "fixedIn": a["fixed_in"]}
                for a in claim.get("advisories", [])
                if not a["accepted"]
            ]
            for claim in report.get("claims", [])
            if any(not a["accepted"] for a in claim.get("advisories", []))
        },
    }


def attestation_bytes(
    report: dict[str, Any],
    bundle: Path,
    hashed: Any,
    options: VerifyOptions,
    signer: Any,
    when: dt.datetime,
    predicate: str = "test-result",
) -> bytes:
    """The signed attestation of one verification (``report``, judged by ``options``) of
    ``bundle``, whose bytes went through ``hashed`` (a ``HashingReader``) as they were
    verified; ``when`` is the time the verification started."""
    from bundler.signatures import attestation as att

    subject = att.subject_of(report, bundle.name, hashed.hexdigest())
    statement = att.statement(report, subject, attest_options(options, report), predicate, when)
    return att.envelope(statement, signer)
