"""The `init` command."""

from __future__ import annotations

from pathlib import Path

import click

from bundler.authoring.templates import names
from bundler.cli._shared import exit_help, handle_errors


@click.command(
    epilog=exit_help(
        "0 the starter source was written", "2 usage error (a folder that is not empty)"
    )
)
@click.argument("directory", type=click.Path(path_type=Path))
@click.option(
    "--template",
    type=click.Choice(names()),
    default="starter",
    show_default=True,
    help="Which starter to copy: starter (one claim) or trial (one trial of an agent run).",
)
@handle_errors
def init(directory: Path, template: str) -> None:
    """Create a starter bundle source in DIRECTORY (new or empty).

    The starter builds and verifies as it is: one claim, a case that passes and a
    negative control that must fail.

    \b
    Example:
      reprobundle init mybundle && reprobundle build mybundle
    """
    from bundler.authoring.templates import bundle_name_for, copy_template

    name = bundle_name_for(directory)
    written = copy_template(template, directory, name)
    click.echo(f"created {len(written)} files in {directory}:")
    for path in written:
        click.echo(f"  {path.relative_to(directory)}")
    if name is not None:
        click.echo(f"bundle name: {name} (from the folder's name; bundle.yaml can change it)")
    click.echo(f"next: edit {directory}/bundle.yaml, then `reprobundle build {directory}`")
