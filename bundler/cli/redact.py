"""The `redact` command."""

from __future__ import annotations

from pathlib import Path

import click

from bundler.cli._shared import exit_help, handle_errors, limit_options, limits_from


@click.command(
    epilog=exit_help(
        "0 the redacted bundle was written",
        "2 usage error (a pattern that matches nothing, or what may not be withheld)",
        "3 the bundle was rejected (it does not verify as it is)",
    )
)
@click.argument("bundle", type=click.Path(path_type=Path))
@click.option(
    "--withhold",
    "patterns",
    multiple=True,
    required=True,
    metavar="PATTERN",
    help="A glob over the bundle's file paths (** crosses folders; a folder takes what is "
    "under it); repeat for more.",
)
@click.option(
    "--reason",
    default="withheld by the bundle's author",
    show_default=True,
    help="Why the files are withheld; the record and every report show it.",
)
@click.option(
    "-o",
    "--output",
    "out",
    required=True,
    type=click.Path(path_type=Path),
    help="The redacted bundle to write (atomically).",
)
@limit_options
@handle_errors
def redact(
    bundle: Path, patterns: tuple[str, ...], reason: str, out: Path, **limit_values: int
) -> None:
    """Write a copy of BUNDLE without the files --withhold names, keeping their digests.

    The manifest is unchanged, so the identity and every signature still hold; the new
    bundle's withheld record lists each file left out with its size, SHA-256 and the
    reason. Verify runs every case that reads none of them; a claim resting on one that
    does is inconclusive, naming the files. Give the withheld files to whom may see them:
    `reprobundle verify OUT --disclose DIR` checks them against their digests and judges
    the whole bundle. Only files a case reads can be withheld (not the manifest, a
    signature, the README or bundled code).

    \b
    Example:
      reprobundle redact study-1.0.0.bundle.tar.zst --withhold 'inputs/transcripts/**' \\
          --reason "contains customer data" -o study-1.0.0.redacted.bundle.tar.zst
    """
    from bundler.authoring.redact import redact as run_redact
    from bundler.run.verify import must_be_file

    must_be_file(bundle)
    done = run_redact(bundle, patterns, out, reason, limits_from(limit_values))
    click.echo(
        f"wrote {done.path}: {len(done.added)} file(s) withheld now, "
        f"{len(done.withheld.files)} in all; identity {done.identity} (unchanged)"
    )
    for entry in done.withheld.files:
        click.echo(f"  withheld {entry.path} ({entry.size} bytes, sha256 {entry.sha256})")
