"""The `verify` command."""

from __future__ import annotations

import contextlib
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from bundler.cli._shared import (
    EXIT_HELP,
    ProgressDisplay,
    accept_advisory_option,
    echo_error,
    handle_errors,
    is_terminal,
    limit_options,
    limits_from,
    trust_options,
    write_text,
)
from bundler.container.download import TIMEOUT, default_cache
from bundler.run.isolation import CodeLimits
from bundler.run.limits import CASE_MEMORY, CASE_SECONDS, VERIFY_SECONDS

CODE_LIMITS = CodeLimits()  # the library's defaults are the flags' defaults


def write_outputs(report: dict[str, Any], targets: dict[str, str | None]) -> None:
    """Write each requested rendering of the JSON report data; the verify command each
    shows pins the bundle's identity (``--expect-manifest-sha256``)."""
    for fmt, target in targets.items():
        if target:
            from bundler.reports.formats import FORMATS, render

            text = render(fmt, report, expect_identity=True)
            write_text(target, text, f"the {FORMATS[fmt]} report")


def check_targets(targets: dict[str, str | None], force: bool = False) -> None:
    from bundler.errors import UsageError
    from bundler.output import ATTESTATION, REPORTS, check, replace_problem

    to_stdout = [name for name, target in targets.items() if target == "-"]
    if len(to_stdout) > 1:
        raise UsageError(
            f"only one output can go to stdout (-), observed --{' --'.join(to_stdout)}"
        )
    for name, target in targets.items():
        if target and target != "-":
            from bundler.reports.formats import FORMATS, format_problem

            check(target, f"--{name}")
            problem = name in FORMATS and format_problem(Path(target).name, name, f"--{name}")
            if not problem and not force:
                kind = REPORTS.get(name, ATTESTATION)
                problem = replace_problem(target, kind, f"--{name}")
            if problem:
                raise UsageError(problem)


if TYPE_CHECKING:
    from bundler.container.extract import Limits
    from bundler.run.runner import Progress
    from bundler.run.verify import Verification


# verify's options that are not about how it writes its outputs: how it judges. `report`
# takes exactly these too (judging_options), so the two always judge alike.
_OUTPUT_OPTIONS = frozenset(
    {
        "bundle",
        "workdir",
        "keep",
        "json_target",
        "markdown_target",
        "junit_target",
        "html_target",
        "quiet",
        "verbose",
        "attest_target",
        "attest_key",
        "attest_predicate",
        "force",
        # where the bundle comes from and its file pin: not how it is judged
        "sha256",
        "identity",
        "trust_on_first_use",
        "no_cache",
        "download_timeout",
    }
)


def judging_params() -> list[click.Parameter]:
    """verify's trust, code and case options (everything but outputs and --max-... limits)."""
    return [
        p
        for p in verify.params
        if p.name and p.name not in _OUTPUT_OPTIONS and not p.name.startswith("max_")
    ]


def judging_options(values: dict[str, Any]) -> dict[str, Any]:
    """The values of ``judging_params`` among a command's arguments."""
    return {p.name: values[p.name] for p in judging_params() if p.name}


def verify_with_options(
    bundle: Path,
    options: dict[str, Any],
    *,
    stream: Any = None,
    workdir: Path | None = None,
    keep: bool = False,
    limits: Limits | None = None,
    progress: Progress | None = None,
) -> Verification:
    """Verify ``bundle`` as the command line's judging options say (``judging_options``)."""
    from bundler.run.isolation import CodePolicy
    from bundler.run.verify import verify as run_verify
    from bundler.signatures.truststore import beside, load_policy

    policy = load_policy(
        options["trust_files"],
        options["trust_store"],
        require_signature=options["require_signature"],
        allow_unsigned=options["allow_unsigned"],
        expect_manifest_sha256=options["expect_manifest_sha256"],
        detached=options["detached"] or beside(bundle),
    )
    code = CodePolicy(
        options["allow_code"],
        CodeLimits(
            timeout=options["code_timeout"],
            memory_bytes=options["code_memory"],
            output_bytes=options["code_output"],
            processes=options["code_processes"],
            written_bytes=options["code_written_bytes"],
        ),
    )
    return run_verify(
        bundle,
        stream=stream,
        workdir=workdir,
        keep=keep,
        limits=limits,
        progress=progress,
        policy=policy,
        code=code,
        jobs=options["jobs"],
        case_seconds=options["case_timeout"],
        case_memory=options["case_memory"],
        time_limit=options["time_limit"],
        accept_advisories=options["accept_advisory"],
    )


@click.command(epilog=EXIT_HELP)
@click.argument("bundle", type=click.Path(path_type=str))  # a file, -, or a link
@click.option(
    "--workdir",
    type=click.Path(path_type=Path),
    help="Folder to unpack every file into; must not exist or be empty (default: a new "
    "temporary one, which receives only the files the cases read).",
)
@click.option(
    "--keep",
    is_flag=True,
    help="Keep the work directory afterwards (also on failure), with every file written.",
)
@click.option(
    "--json", "json_target", metavar="FILE|-", help="Also write the JSON report (- for stdout)."
)
@click.option(
    "--markdown",
    "markdown_target",
    metavar="FILE|-",
    help="Also write the Markdown block for a report's appendix.",
)
@click.option("--junit", "junit_target", metavar="FILE|-", help="Also write JUnit XML for CI.")
@click.option(
    "--html",
    "html_target",
    metavar="FILE|-",
    help="Also write one self-contained HTML page (works offline).",
)
@click.option(
    "--attest",
    "attest_target",
    metavar="FILE",
    help="Also write a signed in-toto attestation of this verification (needs --attest-key).",
)
@click.option(
    "--attest-key",
    type=click.Path(path_type=Path, dir_okay=False),
    help="Your private key (made by `reprobundle keygen`) to sign the attestation with.",
)
@click.option(
    "--attest-predicate",
    type=click.Choice(["test-result", "vsa"]),
    default="test-result",
    show_default=True,
    help="in-toto's Test Result (every claim and case) or SLSA's Verification Summary.",
)
@click.option(
    "--force",
    is_flag=True,
    help="Replace an existing output file that is not a report of its kind (or an attestation).",
)
@click.option("--quiet", "-q", is_flag=True, help="Print only the result line.")
@click.option(
    "--verbose",
    "-v",
    is_flag=True,
    help="Show every case with its reasons (and tracebacks of bugs).",
)
@trust_options()
@click.option(
    "--require-signature",
    is_flag=True,
    help="Reject the bundle unless a trusted key signed it.",
)
@click.option(
    "--allow-unsigned",
    is_flag=True,
    help="With --trust/--trust-store: verify a bundle none of those keys signed instead of "
    "rejecting it (the result line still says it is unsigned).",
)
@click.option(
    "--expect-manifest-sha256",
    metavar="HEX",
    help="Reject the bundle unless its identity (manifest SHA-256) is HEX.",
)
@click.option(
    "--identity",
    metavar="sha256:HEX",
    help="The same pin as --expect-manifest-sha256, as `reprobundle cite` writes it.",
)
@click.option(
    "--sha256",
    metavar="HEX",
    help="Reject the bundle unless the file's SHA-256 is HEX, checked before anything in it "
    "is read (the pin of a link: BUNDLE may be an https URL).",
)
@click.option(
    "--trust-on-first-use",
    is_flag=True,
    help="Verify a link without a pin: what it serves now, and print the --sha256 to pin it.",
)
@click.option(
    "--no-cache",
    is_flag=True,
    help="Do not keep a downloaded bundle, nor use one kept before (default: kept by digest "
    "in the cache folder, so a pinned link verifies again offline).",
)
@click.option(
    "--download-timeout",
    type=click.FloatRange(0.001),
    default=TIMEOUT,
    show_default=True,
    help="Seconds to connect, and between two pieces of a download, before it fails.",
)
@click.option(
    "--signature",
    "detached",
    multiple=True,
    type=click.Path(path_type=Path, dir_okay=False),
    help="A detached signature file to check too (repeatable; default: BUNDLE.sig.json "
    "beside the bundle, when there is one).",
)
@click.option(
    "--allow-code",
    is_flag=True,
    help="Run the bundle's own checker code (in separate limited processes; not a sandbox).",
)
@click.option(
    "--code-timeout",
    type=click.FloatRange(0.1),
    default=CODE_LIMITS.timeout,
    show_default=True,
    help="Seconds a bundled-code case may take.",
)
@click.option(
    "--code-memory",
    type=click.IntRange(16 << 20),
    default=CODE_LIMITS.memory_bytes,
    show_default=True,
    help="Address-space bytes of a bundled-code process.",
)
@click.option(
    "--code-output",
    type=click.IntRange(0),
    default=CODE_LIMITS.output_bytes,
    show_default=True,
    help="Output bytes kept per bundled-code case.",
)
@click.option(
    "--code-processes",
    type=click.IntRange(1),
    default=CODE_LIMITS.processes,
    show_default=True,
    help="Processes a bundled checker may run at once; more and they are all killed.",
)
@click.option(
    "--code-written-bytes",
    type=click.IntRange(1 << 20),
    default=CODE_LIMITS.written_bytes,
    show_default=True,
    help="Bytes a bundled checker may write in all (its tmpfs; where no mount namespace "
    "can be made, only each file's size is limited).",
)
@click.option(
    "--case-timeout",
    type=click.FloatRange(0),
    default=CASE_SECONDS,
    show_default=True,
    help="Seconds a built-in case may run before it is stopped as inconclusive (0: no limit).",
)
@click.option(
    "--case-memory",
    type=click.IntRange(0),
    default=CASE_MEMORY,
    show_default=True,
    help="Bytes of memory a built-in case may add to the verifier (0: no limit); a case "
    "past it is inconclusive (checker.memory).",
)
@click.option(
    "--time-limit",
    type=click.FloatRange(0),
    default=VERIFY_SECONDS,
    show_default=True,
    help="Seconds the whole verification may take (0: no limit); cases not run by then "
    "are inconclusive.",
)
@click.option(
    "--jobs",
    "-j",
    type=click.IntRange(1),
    default=os.cpu_count() or 1,
    show_default="the number of cores",
    help="Processes for built-in cases (used from 64 cases on; results are the same).",
)
@accept_advisory_option
@limit_options
@handle_errors
def verify(
    bundle: str,
    workdir: Path | None,
    keep: bool,
    json_target: str | None,
    markdown_target: str | None,
    junit_target: str | None,
    html_target: str | None,
    attest_target: str | None,
    attest_key: Path | None,
    attest_predicate: str,
    force: bool,
    quiet: bool,
    verbose: bool,
    trust_files: tuple[Path, ...],
    trust_store: Path | None,
    require_signature: bool,
    allow_unsigned: bool,
    expect_manifest_sha256: str | None,
    identity: str | None,
    sha256: str | None,
    trust_on_first_use: bool,
    no_cache: bool,
    download_timeout: float,
    detached: tuple[Path, ...],
    allow_code: bool,
    code_timeout: float,
    code_memory: int,
    code_output: int,
    code_processes: int,
    code_written_bytes: int,
    case_timeout: float,
    case_memory: int,
    time_limit: float,
    jobs: int,
    accept_advisory: tuple[str, ...],
    **limit_values: int,
) -> None:
    """Verify BUNDLE: check every byte, re-run every case, judge every claim.

    Reads it into an empty folder (writing only the files the cases read; all of
    them with --keep or --workdir), refuses the bundle (exit 3) if any file is missing,
    unlisted, or differs from the manifest, re-runs each case with its checker, and
    prints per claim whether the evidence supports it, with what it cannot support.
    On a terminal the claims are a table (colours unless NO_COLOR is set); piped, the
    text is plain. --json, --markdown, --junit and --html write the same verdict in
    other formats (one of them may be - for stdout; the text then goes to stderr).

    Signatures are checked before any payload file is written: a bad signature always
    rejects; naming keys you trust (--trust, --trust-store) rejects a bundle none of
    them signed, unless you add --allow-unsigned; --expect-manifest-sha256 pins an
    unsigned bundle. The result line (also with -q) says whether and by whom it was signed.

    A bundle's own checker code runs only with --allow-code or when a trusted key that
    may run code signed it; otherwise its cases are inconclusive.

    A claim resting on a checker version with an advisory (a known way to make it say
    supported against its evidence; `reprobundle checkers --advisories`) is inconclusive,
    naming the advisory and the version that fixes it, unless you accept that advisory
    with --accept-advisory ID; the reports record what you accepted.

        BUNDLE may be - to read the bundle from standard input (read once, never seeked),
    or an https link pinned by --sha256 (the file's digest, checked before anything in
    it is read) or --identity: the file is downloaded with bounds (--max-archive-bytes,
    --download-timeout, a few redirects that keep the scheme) and kept by its digest in
    the cache folder, so it verifies again offline. --trust-on-first-use verifies an
    unpinned link and prints the pin.

    --attest FILE --attest-key KEY writes a DSSE envelope holding an in-toto Statement
    about this verification (the bundle file's SHA-256 and identity as subjects; each
    claim and case; the options that decided trust and what ran; the tool's and checkers'
    versions), signed with your key, for others to check with `reprobundle attestation
    verify`. None is written for a rejected bundle (nothing was verified).

    \b
    Example:
      reprobundle verify starter-0.1.0.bundle.tar.zst --json report.json
      reprobundle verify starter-0.1.0.bundle.tar.zst --junit junit.xml --html report.html -q
      reprobundle verify signed.bundle.tar.gz --trust alice.pub --require-signature
      reprobundle verify https://example.org/starter-0.1.0.bundle.tar.zst --sha256 HEX
      reprobundle verify starter-0.1.0.bundle.tar.zst --attest a.intoto.json --attest-key me.key
    """
    from bundler.cli.remote import after_download, obtain, pin_identity
    from bundler.errors import BundleRejected, UsageError
    from bundler.reports.common import verdict_line
    from bundler.reports.document import rejection_json, to_json

    # a downloaded bundle's file (temporary with --no-cache) lives as long as this block
    with contextlib.ExitStack() as stack:
        targets = {
            "json": json_target,
            "markdown": markdown_target,
            "junit": junit_target,
            "html": html_target,
        }
        check_targets({**targets, "attest": attest_target}, force)
        signer = attest_signer(Path(bundle), attest_target, attest_key)  # before any download
        if identity is not None:
            expect_manifest_sha256 = pin_identity(identity, expect_manifest_sha256)
        file, fetched = obtain(
            stack,
            bundle,
            sha256=sha256,
            identity=identity,
            trust_on_first_use=trust_on_first_use,
            cache=None if no_cache else default_cache(),
            timeout=download_timeout,
            max_bytes=limits_from(limit_values).archive_bytes,
        )
        text_to_stderr = "-" in targets.values()
        hashed = None
        if signer is not None:
            from bundler.format.hashing import HashingReader

            try:
                hashed = HashingReader(file.open("rb"))
            except OSError as exc:
                raise UsageError(f"cannot read {file}: {exc.strerror}") from None
        import datetime as dt

        started = dt.datetime.now(dt.UTC)  # an attestation says when the verification ran
        try:
            with ProgressDisplay(enabled=not quiet) as progress:
                verification = verify_with_options(
                    file,
                    judging_options(locals()),
                    stream=sys.stdin.buffer if str(file) == "-" else hashed,
                    workdir=workdir,
                    keep=keep,
                    limits=limits_from(limit_values),
                    progress=progress.cases,
                )
        except (BundleRejected, UsageError) as exc:
            # the verdict first, so that an output that cannot be written never hides it
            echo_error(exc)
            write_outputs(rejection_json(exc, exc.exit_code), targets)
            sys.exit(exc.exit_code)
        report = to_json(verification)
        stream = sys.stderr if text_to_stderr else sys.stdout
        if quiet:
            click.echo(verdict_line(report), err=text_to_stderr)
        elif is_terminal(stream):
            from rich.console import Console

            from bundler.reports.terminal import render

            render(report, Console(file=stream), verbose=verbose)
        else:
            import shutil

            from bundler.reports.text import to_text

            # $COLUMNS, else the terminal's width; piped with neither, lines are not wrapped
            width = shutil.get_terminal_size(fallback=(0, 0)).columns
            text = to_text(report, verbose=verbose, width=width)
            click.echo(text, err=text_to_stderr)
        if verification.workdir:  # even with --quiet: a kept folder is never left unnamed
            click.echo(
                f"work directory kept at {verification.workdir}", err=text_to_stderr or quiet
            )
        elif workdir is not None:  # a folder the user named: say what became of it
            done = (
                "emptied (it was there before)"
                if workdir.exists()
                else "removed (made for this run)"
            )
            click.echo(f"work directory {workdir} {done}; --keep keeps its files", err=True)
        write_outputs(report, targets)  # after the verdict is printed: it is never lost
        if fetched is not None:
            after_download(fetched, verification.extracted.identity, no_cache)
        if signer is not None and hashed is not None and attest_target:
            from bundler.cli.attestation import write_attestation

            values = {**locals(), **limit_values}
            write_attestation(Path(attest_target), report, file, hashed, values, signer, started)
        sys.exit(verification.exit_code)


def attest_signer(bundle: Path, target: str | None, key_file: Path | None) -> Any:
    """The private key to sign an attestation with, read before any work (a wrong
    passphrase is found before a long verification, not after), or None."""
    from bundler.errors import UsageError

    if target is None and key_file is None:
        return None
    if target is None or key_file is None:
        raise UsageError(
            "--attest FILE and --attest-key KEY go together: an attestation is always signed"
        )
    if target == "-" or str(bundle) == "-":
        raise UsageError(
            "--attest needs a bundle file and an attestation file (not - for stdin or stdout)"
        )
    from bundler.cli.keys import signing_key

    return signing_key(key_file)
