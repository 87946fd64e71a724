"""The `build` command."""

from __future__ import annotations

from pathlib import Path

import click

from bundler.cli._shared import ProgressDisplay, accept_advisory_option, exit_help, handle_errors


@click.command(
    epilog=exit_help(
        "0 the bundle was written",
        "1 its claims are not all supported at home (no file is left behind)",
        "2 a problem with the source or the arguments",
    )
)
@click.argument("source", type=click.Path(path_type=Path))
@click.option(
    "-o",
    "--output",
    type=click.Path(path_type=Path),
    help="File to write (default: NAME-VERSION.bundle.tar.zst in the current folder).",
)
@click.option(
    "--compression",
    type=click.Choice(["zstd", "gzip"]),
    help="zstd (default, fast) or gzip (readable by any tar). Default: what the -o name "
    "asks for (.tar.zst or .tar.gz), else zstd.",
)
@click.option(
    "--preregistration",
    type=click.Path(path_type=Path, dir_okay=False),
    help="Pack this pre-registration (written by `reprobundle preregister`) into the bundle; "
    "verify then says per claim whether it is as pre-registered.",
)
@click.option(
    "--force",
    is_flag=True,
    help="Replace an existing -o file that is not a bundle (by default it is refused).",
)
@click.option("--quiet", "-q", is_flag=True, help="Print only the path of the new bundle.")
@click.option(
    "--verbose",
    "-v",
    is_flag=True,
    help="List every case verified at home (and tracebacks of bugs).",
)
@accept_advisory_option
@handle_errors
def build(
    source: Path,
    output: Path | None,
    compression: str | None,
    preregistration: Path | None,
    force: bool,
    quiet: bool,
    verbose: bool,
    accept_advisory: tuple[str, ...],
) -> None:
    """Build a bundle from SOURCE, a folder holding bundle.yaml.

    Checks the source, hashes every file, writes the manifest, packs a deterministic
    compressed tar (set SOURCE_DATE_EPOCH for byte-identical rebuilds), then verifies the new
    file from a fresh empty folder and refuses to keep it unless every claim is
    supported there.

    A case naming a checker version with an advisory is refused, with the line to write
    instead; --accept-advisory ID keeps it (and the verification at home accepts it).

    \b
    Example:
      SOURCE_DATE_EPOCH=1700000000 reprobundle build bundles/quickstart -o out/qs.bundle.tar.zst
    """
    from bundler.authoring.build import build as build_bundle
    from bundler.container.compression import CODECS
    from bundler.output import BUNDLE, check_output

    if output is not None and compression:
        _compression_fits(output, compression)

    def accept(path: Path) -> None:
        check_output(path, BUNDLE, "-o" if output is not None else "the output", force)

    with ProgressDisplay(enabled=not quiet) as progress:  # ($SOURCE_DATE_EPOCH read first)
        result = build_bundle(
            source,
            output,
            progress=progress.step,
            codec=CODECS[compression] if compression else None,
            preregistration=preregistration,
            accept_output=accept,
            accept_advisories=accept_advisory,
        )
    if result.skipped:
        click.echo(
            f"skipped {len(result.skipped)} bundle file(s) the patterns matched (a bundle is "
            f"never packed into another): {', '.join(result.skipped)}",
            err=True,
        )
    for warning in result.warnings:  # (said even with --quiet: the next verify depends on it)
        click.echo(f"warning: {warning}", err=True)
    if quiet:
        click.echo(str(result.path))
        return
    from bundler.reports.document import to_json

    home = to_json(result.home)
    claims = home["claims"]
    click.echo(f"built {result.path} ({result.size} bytes)")
    click.echo(f"identity sha256:{result.identity}")
    from bundler.reports.common import verdicts_text

    click.echo(
        f"verified at home from a fresh folder: {len(claims)} of {len(claims)} claims supported, "
        f"{verdicts_text(home['cases'])}"
    )
    if result.home.accepted_advisories:
        click.echo(f"advisories accepted: {', '.join(result.home.accepted_advisories)}")
    if verbose:
        for case in home["cases"]:
            from bundler.errors import one_line as t

            click.echo(f"  [{case['outcome']}] {t(case['id'])}: {t(case['explanation'])}")


def _compression_fits(output: Path, compression: str) -> None:
    """``--compression gzip -o x.bundle.tar.zst`` would write gzip under a zstd name."""
    from bundler.errors import UsageError

    said = "gzip" if output.name.lower().endswith((".gz", ".tgz")) else "zstd"
    if said != compression:
        raise UsageError(
            f"-o {output} names a {said} file, but --compression is {compression}: name it "
            f"NAME{'.bundle.tar.gz' if compression == 'gzip' else '.bundle.tar.zst'}, or "
            "leave --compression out (the name decides)"
        )
