"""The `verify` command."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from ._shared import EXIT_HELP, handle_errors, limit_options, limits_from, write_json


@click.command(epilog=EXIT_HELP)
@click.argument("bundle", type=click.Path(path_type=Path))
@click.option(
    "--workdir",
    type=click.Path(path_type=Path),
    help="Folder to unpack into; must not exist or be empty (default: a new temporary one).",
)
@click.option("--keep", is_flag=True, help="Keep the work directory afterwards (also on failure).")
@click.option(
    "--json", "json_target", metavar="FILE|-", help="Also write the JSON report (- for stdout)."
)
@click.option("--quiet", "-q", is_flag=True, help="Print only the result line.")
@click.option("--verbose", "-v", is_flag=True, help="Show every case with its reasons.")
@limit_options
@handle_errors
def verify(
    bundle: Path,
    workdir: Path | None,
    keep: bool,
    json_target: str | None,
    quiet: bool,
    verbose: bool,
    **limit_values: int,
) -> None:
    """Verify BUNDLE: check every byte, re-run every case, judge every claim.

    Unpacks into an empty folder, refuses the bundle (exit 3) if any file is missing,
    unlisted, or differs from the manifest, re-runs each case with its checker, and
    prints per claim whether the evidence supports it, with what it cannot support.

    \b
    Example:
      reprobundle verify quickstart-1.0.0.bundle.tar.gz --json report.json
    """
    from ..errors import BundleRejected, UsageError
    from ..report import rejection_json, to_json, to_text, verdict_line
    from ..verify import verify as run_verify

    text_to_stderr = json_target == "-"
    try:
        verification = run_verify(
            bundle, workdir=workdir, keep=keep, limits=limits_from(limit_values)
        )
    except (BundleRejected, UsageError) as exc:
        if json_target:
            write_json(json_target, rejection_json(exc, exc.exit_code))
        raise
    if json_target:
        write_json(json_target, to_json(verification))
    if quiet:
        click.echo(verdict_line(verification), err=text_to_stderr)
    else:
        click.echo(to_text(verification, verbose=verbose), err=text_to_stderr)
        if verification.workdir:
            click.echo(f"work directory kept at {verification.workdir}", err=text_to_stderr)
    sys.exit(verification.exit_code)
