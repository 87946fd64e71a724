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
