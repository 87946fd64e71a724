"""The `archive` command group: a thin shell over ``bundler.store.Archive``, assembled here
from one module per kind of command: ``storing`` (init, add, preregister), ``reading``
(list, show, export), ``verifying`` (verify), ``audit`` (checkpoint, log, rebuild) and
``trusted_keys`` (trust); ``common`` holds the exit codes and the opening of the archive."""

from __future__ import annotations

from pathlib import Path

import click

from bundler.cli.archive.audit import checkpoint, log, rebuild
from bundler.cli.archive.common import ARCHIVE_EXIT_HELP
from bundler.cli.archive.reading import export, list_bundles, show
from bundler.cli.archive.storing import add, init, preregister
from bundler.cli.archive.trusted_keys import trust
from bundler.cli.archive.verifying import verify


class ArchiveGroup(click.Group):
    """The group, saying where ``--archive`` goes when a subcommand is given it (it is the
    group's option, so it comes before the subcommand's name)."""

    def invoke(self, ctx: click.Context) -> object:
        try:
            return super().invoke(ctx)
        except click.NoSuchOption as exc:
            if exc.option_name != "--archive":
                raise
            command = exc.ctx.info_name if exc.ctx else "COMMAND"
            raise click.NoSuchOption(
                exc.option_name,
                f"--archive is an option of `reprobundle archive` itself, so it goes before "
                f"the subcommand: reprobundle archive --archive DIR {command} ... (or set "
                "REPROBUNDLE_ARCHIVE=DIR once)",
                ctx=exc.ctx,
            ) from None


@click.group(cls=ArchiveGroup, epilog=ARCHIVE_EXIT_HELP)
@click.option(
    "--archive",
    "root",
    type=click.Path(path_type=Path, file_okay=False),
    envvar="REPROBUNDLE_ARCHIVE",
    show_envvar=True,
    help="The archive folder.",
)
@click.pass_context
def archive(ctx: click.Context, root: Path | None) -> None:
    """Keep bundles for later audit: stored by content digest, re-verified on demand,
    every event in a tamper-evident audit log.

    \b
    Example:
      export REPROBUNDLE_ARCHIVE=~/bundle-archive
      reprobundle archive init
      reprobundle archive add starter-0.1.0.bundle.tar.zst
      reprobundle archive verify --all --jobs 2
      reprobundle archive checkpoint -o checkpoint-2026-11.json
      reprobundle archive log verify --checkpoint checkpoint-2026-11.json
    """
    ctx.obj = root


for _command in (
    init,
    add,
    preregister,
    list_bundles,
    show,
    export,
    verify,
    checkpoint,
    log,
    rebuild,
    trust,
):
    archive.add_command(_command)
