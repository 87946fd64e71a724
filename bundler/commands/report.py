"""The `report` command."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from ._shared import (
    EXIT_HELP,
    ProgressDisplay,
    handle_errors,
    limit_options,
    limits_from,
    write_text,
)

MAX_REPORT_BYTES = 64 * 1024 * 1024


@click.command(epilog=EXIT_HELP)
@click.argument("file", type=click.Path(path_type=Path))
@click.option(
    "-o", "--output", metavar="FILE|-", default="-", show_default=True, help="Where to write."
)
@click.option(
    "-f",
    "--format",
    "fmt",
    type=click.Choice(["markdown", "html", "junit", "json"]),
    default="markdown",
    show_default=True,
    help="What to write.",
)
@click.option("--quiet", "-q", is_flag=True, help="Print nothing but the output itself.")
@click.option("--verbose", "-v", is_flag=True, help="Tracebacks for internal errors.")
@limit_options
@handle_errors
def report(
    file: Path, output: str, fmt: str, quiet: bool, verbose: bool, **limit_values: int
) -> None:
    """Write the Markdown block for a report's appendix (or another format) for FILE.

    FILE is a bundle, which is verified first (as `verify` does), or a JSON report that
    `verify --json` wrote, which is rendered again without running anything. The block
    names the bundle, its identity, the command to verify it, every claim with its
    denominators, and what the bundle cannot support. The exit code is the
    verification's (0 supported, 1 contradicted, 3 rejected, 4 inconclusive).

    \b
    Example:
      reprobundle report quickstart-1.0.0.bundle.tar.gz -o appendix.md
      reprobundle verify qs.bundle.tar.gz --json r.json -q && reprobundle report r.json
    """
    from ..compression import detect
    from ..errors import BundleRejected, UsageError
    from ..output import OutputError, check
    from ..report import rejection_json, to_json
    from ..reports.html import to_html
    from ..reports.junit import to_junit
    from ..reports.markdown import to_markdown
    from ..reports.schema import read_report
    from ..verify import verify as run_verify
    from .verify import expects_identity_option

    if not file.is_file():
        raise UsageError(f"{file} is not a file")
    if output != "-":
        check(output, "-o")
    with file.open("rb") as stream:
        magic = stream.read(4)
    if detect(magic) is not None:
        try:
            with ProgressDisplay(enabled=not quiet) as progress:
                verification = run_verify(
                    file, limits=limits_from(limit_values), progress=progress.cases
                )
            data = to_json(verification)
        except (BundleRejected, UsageError) as exc:
            data = rejection_json(exc, exc.exit_code)
    else:
        if file.stat().st_size > MAX_REPORT_BYTES:
            raise UsageError(
                f"{file} is {file.stat().st_size} bytes; a JSON report is at most "
                f"{MAX_REPORT_BYTES} bytes"
            )
        data = read_report(file.read_bytes(), str(file))

    pin = expects_identity_option()
    if fmt == "markdown":
        text = to_markdown(data, expect_identity=pin)
    elif fmt == "html":
        text = to_html(data, expect_identity=pin)
    elif fmt == "junit":
        text = to_junit(data)
    else:
        import json

        text = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    try:
        write_text(output, text, f"the {fmt} report")
    except OutputError as exc:  # the verdict is never lost to an output problem
        exc.headline += f" (the result was: {data['result']})"
        raise
    if output != "-" and not quiet:
        click.echo(f"wrote {output} ({fmt}; result: {data['result']})", err=True)
    sys.exit(int(data["exit_code"]))
