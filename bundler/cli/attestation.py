"""The `attestation` commands: check a signed attestation of a verification."""

from __future__ import annotations

import datetime as dt
import sys
from pathlib import Path
from typing import Any, ClassVar

import click

from bundler.cli._shared import exit_help, handle_errors, trust_options
from bundler.codes import COMMAND_EXITS

MAX_READ = 8 << 20


def attest_options(values: dict[str, Any], report: dict[str, Any]) -> dict[str, Any]:
    """What decided trust and what ran in a verification, as an attestation records it:
    the keys trusted (by key id, never by a file name only this machine knows), the
    signature policy, whether bundled code could run, every limit."""
    from bundler.signatures.trust import counting, now
    from bundler.signatures.truststore import load_trusted_keys

    keys = load_trusted_keys(values["trust_files"], values["trust_store"])
    signature = report.get("signature") or {}
    return {
        "trustedKeyIds": sorted(k.key.keyid for k in counting(keys, now(), "bundle")),
        "requireSignature": values["require_signature"],
        "allowUnsigned": values["allow_unsigned"],
        "expectManifestSha256": values["expect_manifest_sha256"],
        "allowCode": values["allow_code"],
        "bundleSignature": signature.get("summary", "unsigned"),
        "codeLimits": {
            "timeoutSeconds": values["code_timeout"],
            "memoryBytes": values["code_memory"],
            "outputBytes": values["code_output"],
            "processes": values["code_processes"],
            "writtenBytes": values["code_written_bytes"],
        },
        "caseTimeoutSeconds": values["case_timeout"],
        "caseMemoryBytes": values["case_memory"],
        "timeLimitSeconds": values["time_limit"],
        "limits": {k: v for k, v in sorted(values.items()) if k.startswith("max_")},
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
    values: dict[str, Any],
    signer: Any,
    when: dt.datetime,
) -> bytes:
    """The signed attestation of one verification (``report``) of ``bundle``, whose bytes
    went through ``hashed`` (a ``HashingReader``) as they were verified; ``when`` is the
    time the verification started."""
    from bundler.signatures import attestation as att

    subject = att.subject_of(report, bundle.name, hashed.hexdigest())
    predicate = values.get("attest_predicate") or "test-result"
    options = attest_options(values, report)
    statement = att.statement(report, subject, options, predicate, when)
    return att.envelope(statement, signer)


def write_attestation(
    target: Path,
    report: dict[str, Any],
    bundle: Path,
    hashed: Any,
    values: dict[str, Any],
    signer: Any,
    when: dt.datetime,
) -> None:
    """Sign and write the attestation of one verification (``attestation_bytes``)."""
    from bundler.output import write_bytes

    data = attestation_bytes(report, bundle, hashed, values, signer, when)
    write_bytes(target, data, "the attestation")


def _read(path: Path, what: str) -> bytes:
    from bundler.files import read_bounded

    return read_bounded(path, MAX_READ, what)


class MaxAge(click.ParamType[dt.timedelta]):
    """A length of time: a number and a unit (s, m, h, d, w)."""

    name = "age"
    UNITS: ClassVar[dict[str, int]] = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}

    def convert(self, value: Any, param: Any, ctx: Any) -> dt.timedelta:
        if isinstance(value, dt.timedelta):
            return value
        import re

        found = re.fullmatch(r"\s*(\d{1,9}(?:\.\d{1,6})?)\s*([smhdw])\s*", str(value))
        if not found:
            self.fail(
                f"{value!r} is not an age: give a number and a unit, as 90s, 45m, 12h, 30d or 2w",
                param,
                ctx,
            )
        seconds = float(found.group(1)) * self.UNITS[found.group(2)]
        if seconds <= 0:
            self.fail(f"{value!r} is no age: give more than nothing", param, ctx)
        return dt.timedelta(seconds=seconds)


ATTESTATION_EXIT_HELP = exit_help(
    "0 the attestation holds (and its result is the one expected)",
    "1 its result is not the one given with --expect-result",
    "2 usage error",
    "3 attestation rejected (signature, shape, or a bundle that is not its subject)",
)


@click.group(epilog=ATTESTATION_EXIT_HELP)
def attestation() -> None:
    """Check signed attestations of verifications (written by `verify --attest`).

    \b
    Example:
      reprobundle attestation verify a.intoto.json --trust me.pub \\
          --bundle starter-0.1.0.bundle.tar.zst --expect-result PASSED
    """


@attestation.command("verify", epilog=ATTESTATION_EXIT_HELP)
@click.argument("file", type=click.Path(path_type=Path, dir_okay=False))
@trust_options("whose attestations you accept")
@click.option(
    "--bundle",
    type=click.Path(path_type=Path, dir_okay=False),
    help="The bundle file the attestation must be about (its SHA-256 and identity).",
)
@click.option(
    "--max-age",
    type=MaxAge(),
    metavar="AGE",
    help="Refuse an attestation of a verification that ran longer ago than AGE (a number "
    "and a unit: 90s, 45m, 12h, 30d, 2w).",
)
@click.option(
    "--expect-result",
    type=click.Choice(["PASSED", "WARNED", "FAILED"]),
    help="Exit 1 unless the attested result is this one.",
)
@handle_errors
def verify_attestation(
    file: Path,
    trust_files: tuple[Path, ...],
    trust_store: Path | None,
    bundle: Path | None,
    max_age: dt.timedelta | None,
    expect_result: str | None,
) -> None:
    """Check FILE, a DSSE envelope holding an in-toto Statement about a verification:
    signed by a key you trust, shaped as the Statement and its predicate require, and
    (with --bundle) about that bundle file. Prints what was attested per claim.

    \b
    Example:
      reprobundle verify starter-0.1.0.bundle.tar.zst --attest a.intoto.json --attest-key me.key
      reprobundle attestation verify a.intoto.json --trust me.pub \\
          --bundle starter-0.1.0.bundle.tar.zst --expect-result PASSED --max-age 30d
    """
    from bundler.errors import BundleRejected, Problem, UsageError, one_line
    from bundler.signatures import attestation as att
    from bundler.signatures.trust import now
    from bundler.signatures.truststore import load_trusted_keys

    keys = load_trusted_keys(trust_files, trust_store)
    if not keys:
        raise UsageError("name the keys whose attestations you accept: --trust or --trust-store")
    try:
        checked = att.read(_read(file, "attestation"), keys, now())
    except att.AttestationProblem as exc:
        raise BundleRejected(
            "the attestation was rejected", [Problem(str(file), exc.code, exc.message)]
        ) from None
    if max_age is not None:
        why = checked.age_problem(max_age, dt.datetime.now(dt.UTC))
        if why is not None:
            raise BundleRejected(
                "the attestation is too old to accept",
                [Problem(str(file), "attestation.too_old", why)],
            )
    if bundle is not None:
        _check_subject(checked, bundle)
    for line in _describe(checked):
        click.echo(one_line(line))
    if expect_result and checked.result != expect_result:
        click.echo(f"result {checked.result}, expected {expect_result}", err=True)
        sys.exit(COMMAND_EXITS["failed"])


def _check_subject(checked: Any, bundle: Path) -> None:
    from bundler.errors import BundleRejected, Problem, UsageError
    from bundler.format.hashing import sha256_file
    from bundler.run.verify import check_integrity, must_be_file

    must_be_file(bundle)
    try:
        digest, _ = sha256_file(bundle)
    except OSError as exc:
        raise UsageError(f"cannot read {bundle}: {exc.strerror}") from None
    problems = []
    files = checked.sha256s
    if digest not in files:
        problems.append(
            Problem(
                str(bundle),
                "attestation.subject",
                f"the bundle file's SHA-256 is {digest}; the attestation is about "
                f"{', '.join(files) or 'no sha256 subject'}",
            )
        )
    else:
        identity = check_integrity(bundle).identity
        if identity not in files:
            problems.append(
                Problem(
                    str(bundle),
                    "attestation.subject",
                    f"the bundle's identity {identity} is not among the attested subjects",
                )
            )
    if problems:
        raise BundleRejected("the attestation is not about this bundle", problems)


def _describe(checked: Any) -> list[str]:
    from bundler.signatures import attestation as att

    statement = checked.statement
    lines = [
        "attestation signed by "
        + ", ".join(
            f"{name} (key id {keyid[:16]})"
            for name, keyid in zip(checked.names, checked.signers, strict=True)
        ),
        f"predicate {checked.predicate_type}",
    ]
    for item in statement["subject"]:
        lines.append(f"subject {item.get('name', '')} sha256:{item['digest'].get('sha256')}")
    lines.append(f"result {checked.result}")
    when = checked.time_verified
    lines.append(
        f"verified at {att.rfc3339(when)}"
        if when
        else "verified at: not recorded (an older attestation)"
    )
    if checked.predicate_type == att.TEST_RESULT:
        words = {
            "passedTests": "supported",
            "warnedTests": "inconclusive",
            "failedTests": "contradicted",
        }
        for field, word in words.items():
            for test in statement["predicate"].get(field, []):
                if test.startswith("claim:"):
                    lines.append(f"  claim {test[len('claim:') :]}: {word}")
    return lines
