"""The `verify` command."""

from __future__ import annotations

import contextlib
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from bundler.cli._shared import (
    EXIT_HELP,
    ProgressDisplay,
    echo_error,
    handle_errors,
    is_terminal,
    write_text,
)
from bundler.cli._verifying import (
    Judging,
    attestation_bytes,
    disclose_option,
    signing_key,
    verify_options,
)
from bundler.container.download import TIMEOUT, default_cache

if TYPE_CHECKING:
    from bundler.reports.view import ReportView


def write_outputs(report: ReportView | dict[str, Any], targets: dict[str, str | None]) -> None:
    """Write each requested rendering of the JSON report (its view, built once); the verify
    command each shows pins the bundle's identity (``--expect-manifest-sha256``)."""
    if not any(targets.values()):
        return
    from bundler.reports.formats import FORMATS, render
    from bundler.reports.view import as_view

    view = as_view(report)
    for fmt, target in targets.items():
        if target:
            text = render(fmt, view, expect_identity=True)
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


# where the bundle comes from and its file pin: verify's own, shown beside the identity pin
_PINNING = (
    click.option(
        "--identity",
        metavar="sha256:HEX",
        help="The same pin as --expect-manifest-sha256, as `reprobundle cite` writes it.",
    ),
    click.option(
        "--sha256",
        metavar="HEX",
        help="Reject the bundle unless the file's SHA-256 is HEX, checked before anything in "
        "it is read (the pin of a link: BUNDLE may be an https URL).",
    ),
    click.option(
        "--trust-on-first-use",
        is_flag=True,
        help="Verify a link without a pin: what it serves now, and print the --sha256 to pin it.",
    ),
    click.option(
        "--no-cache",
        is_flag=True,
        help="Do not keep a downloaded bundle, nor use one kept before (default: kept by "
        "digest in the cache folder, so a pinned link verifies again offline).",
    ),
    click.option(
        "--download-timeout",
        type=click.FloatRange(0.001),
        default=TIMEOUT,
        show_default=True,
        help="Seconds to connect, and between two pieces of a download, before it fails.",
    ),
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
@disclose_option
@verify_options(pinning=_PINNING)
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
    identity: str | None,
    sha256: str | None,
    trust_on_first_use: bool,
    no_cache: bool,
    download_timeout: float,
    disclose: Path | None,
    judging: Judging,
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

    In a redacted bundle (`reprobundle redact`) a case that reads a withheld file is not
    run and its claim is inconclusive (exit 4); --disclose DIR gives the withheld files,
    each checked against the digest the manifest binds, and every case runs.

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
    from bundler.reports.document import rejection_json, to_json
    from bundler.reports.view import report_view
    from bundler.run.verify import verify as run_verify

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
            judging = judging.pinned(pin_identity(identity, judging.expect_manifest_sha256))
        file, fetched = obtain(
            stack,
            bundle,
            sha256=sha256,
            identity=identity,
            trust_on_first_use=trust_on_first_use,
            cache=None if no_cache else default_cache(),
            timeout=download_timeout,
            max_bytes=judging.limits.archive_bytes,
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
                stream: Any = sys.stdin.buffer if str(file) == "-" else hashed
                verification = run_verify(
                    file,
                    judging.options(file),
                    workdir=workdir,
                    keep=keep,
                    stream=stream,
                    progress=progress.cases,
                    disclose=disclose,
                )
        except (BundleRejected, UsageError) as exc:
            # the verdict first, so that an output that cannot be written never hides it
            echo_error(exc)
            write_outputs(rejection_json(exc, exc.exit_code), targets)
            sys.exit(exc.exit_code)
        report = to_json(verification)
        view = report_view(report)  # what every output shows, derived once
        stream = sys.stderr if text_to_stderr else sys.stdout
        if quiet:
            click.echo(view.verdict_line, err=text_to_stderr)
        elif is_terminal(stream):
            from rich.console import Console

            from bundler.reports.terminal import render

            render(view, Console(file=stream), verbose=verbose)
        else:
            import shutil

            from bundler.reports.text import to_text

            # $COLUMNS, else the terminal's width; piped with neither, lines are not wrapped
            width = shutil.get_terminal_size(fallback=(0, 0)).columns
            text = to_text(view, verbose=verbose, width=width)
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
        write_outputs(view, targets)  # after the verdict is printed: it is never lost
        if fetched is not None:
            after_download(fetched, verification.extracted.identity, no_cache)
        if signer is not None and hashed is not None and attest_target:
            from bundler.output import write_bytes

            data = attestation_bytes(
                report, file, hashed, verification.options, signer, started, attest_predicate
            )
            write_bytes(Path(attest_target), data, "the attestation")
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
    return signing_key(key_file)
