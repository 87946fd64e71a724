"""The `report` command."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from bundler.cli._shared import (
    EXIT_HELP,
    ProgressDisplay,
    echo_error,
    handle_errors,
    write_text,
)
from bundler.cli._verifying import Judging, disclose_option, verify_options
from bundler.reports.formats import FORMATS

MAX_REPORT_BYTES = 64 * 1024 * 1024


def _is_json(file: Path) -> bool:
    """A stored report is a JSON object; anything else is read as a bundle (and a file
    that is neither is rejected as a bundle, exit 3, as verify rejects it)."""
    from bundler.errors import UsageError

    try:
        with file.open("rb") as stream:
            head = stream.read(64)
    except OSError as exc:
        raise UsageError(f"cannot read {file}: {exc.strerror or exc}") from None
    return head.lstrip(b" \t\r\n\xef\xbb\xbf").startswith(b"{")


def output_format(output: str, fmt: str | None) -> str:
    """The format to write: the one asked for, else the one the output's extension says,
    else Markdown; a format its extension contradicts is refused (a Markdown report in
    ``x.html`` would open as a broken page)."""
    from bundler.errors import UsageError
    from bundler.reports.formats import format_of_name, format_problem

    if output == "-":
        return fmt or "markdown"
    if fmt is None:
        return format_of_name(Path(output).name) or "markdown"
    problem = format_problem(Path(output).name, fmt, "-o")
    if problem:
        raise UsageError(problem)
    return fmt


@click.command(epilog=EXIT_HELP)
@click.argument("file", type=click.Path(path_type=Path))
@click.option(
    "-o", "--output", metavar="FILE|-", default="-", show_default=True, help="Where to write."
)
@click.option(
    "-f",
    "--format",
    "fmt",
    type=click.Choice(list(FORMATS)),
    help="What to write (default: what the -o file's extension says: .md, .html, .xml "
    "(JUnit), .json; else markdown).",
)
@click.option(
    "--force", is_flag=True, help="Replace an existing -o file that is not a report of its kind."
)
@click.option("--quiet", "-q", is_flag=True, help="Print nothing but the output itself.")
@click.option("--verbose", "-v", is_flag=True, help="Tracebacks for internal errors.")
@disclose_option
@verify_options(limits_first=True)
@handle_errors
def report(
    file: Path,
    output: str,
    fmt: str | None,
    force: bool,
    quiet: bool,
    verbose: bool,
    disclose: Path | None,
    judging: Judging,
) -> None:
    """Write the Markdown block for a report's appendix (or another format) for FILE.

    FILE is a bundle, which is verified first exactly as `verify` does (with the same
    trust, code and case options), or a JSON report that `verify --json` wrote, which is
    rendered again without running anything. The block names the bundle, its identity,
    the command to verify it, every claim with its verdicts, and what the bundle cannot
    support. The exit code is the verification's, as `verify` gives it. A redacted
    bundle's withheld files may be given with --disclose DIR, as to `verify`.

    \b
    Example:
      reprobundle report starter-0.1.0.bundle.tar.zst -o appendix.md
      reprobundle report signed.bundle.tar.zst --trust alice.pub -f html -o report.html
      reprobundle verify starter-0.1.0.bundle.tar.zst --json r.json -q; reprobundle report r.json
    """
    from bundler.errors import BundleRejected, UsageError
    from bundler.output import REPORTS, OutputError, check, replace_problem
    from bundler.reports.common import as_stated
    from bundler.reports.document import rejection_json, to_json
    from bundler.reports.formats import render
    from bundler.reports.schema import read_report
    from bundler.run.verify import must_be_file, verify

    must_be_file(file)
    fmt = output_format(output, fmt)
    if output != "-":
        check(output, "-o")
        if not force and (problem := replace_problem(output, REPORTS[fmt], "-o")):
            raise OutputError(problem)
    is_report = _is_json(file)
    if is_report and disclose is not None:
        raise UsageError(
            f"--disclose {disclose}: {file} is a stored report, not a bundle; nothing is "
            "verified again, so no withheld file can be used: give the redacted bundle"
        )
    if not is_report:
        try:
            with ProgressDisplay(enabled=not quiet) as progress:
                verification = verify(
                    file, judging.options(file), progress=progress.cases, disclose=disclose
                )
            data = to_json(verification)
        except (BundleRejected, UsageError) as exc:
            echo_error(exc)  # as verify says it
            data = rejection_json(exc, exc.exit_code)
    else:
        try:
            with file.open("rb") as stream:
                stored = stream.read(MAX_REPORT_BYTES + 1)
        except OSError as exc:
            raise UsageError(f"cannot read {file}: {exc.strerror or exc}") from None
        if len(stored) > MAX_REPORT_BYTES:
            raise UsageError(
                f"{file} is more than {MAX_REPORT_BYTES} bytes; a JSON report is at most "
                f"{MAX_REPORT_BYTES} bytes"
            )
        data = as_stated(read_report(stored, str(file)))  # its signature words: not ours

    text = render(fmt, data, expect_identity=True)  # verify has --expect-manifest-sha256
    try:
        write_text(output, text, f"the {FORMATS[fmt]} report")
    except OutputError as exc:  # the verdict is never lost to an output problem
        exc.headline += f" (the result was: {data['result']})"
        raise
    if output != "-" and not quiet:
        click.echo(f"wrote {output} ({fmt}; result: {data['result']})", err=True)
    sys.exit(int(data["exit_code"]))
