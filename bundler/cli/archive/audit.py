"""`archive checkpoint`, `log verify|show` and `rebuild`: the audit log, pinned by
checkpoints, checked, shown, and the index rebuilt from it."""

from __future__ import annotations

from pathlib import Path

import click

from bundler.cli._shared import handle_errors
from bundler.cli.archive.common import ARCHIVE_EXIT_HELP, EXITS, opened


@click.command("checkpoint", epilog=EXITS["checkpoint"])
@click.option(
    "-o",
    "--output",
    "out",
    type=click.Path(path_type=Path),
    help="Also write the checkpoint to this file (default: standard output only).",
)
@click.option("--force", is_flag=True, help="Replace an existing -o file that is not a checkpoint.")
@click.pass_obj
@handle_errors
def checkpoint(root: Path | None, /, out: Path | None, force: bool) -> None:
    """Print a checkpoint of the audit log (its size and head hash), signed by the archive
    key. Keep it somewhere the archive's writers cannot reach.

    \b
    Example:
      reprobundle archive checkpoint -o /mnt/elsewhere/checkpoint-2026-11-30.json
    """
    from bundler.output import CHECKPOINT, OutputError, check_output, write_bytes

    check_output(out, CHECKPOINT, "-o", force)  # (a file of another kind: before issuing)
    with opened(root) as store:
        issued = store.checkpoint()
    text = issued.to_json()
    click.echo(text, nl=False)
    if out is not None:
        try:
            write_bytes(out, text.encode("utf-8"), "the checkpoint")
        except OutputError as exc:
            exc.headline = (
                f"the checkpoint was issued (printed above, and kept in {store.checkpoints}) "
                f"but {exc.headline}"
            )
            raise


@click.group("log", epilog=EXITS["log"])
def log() -> None:
    """The audit log: show it, or verify its hash chain against checkpoints.

    \b
    Example:
      reprobundle archive log verify --checkpoint checkpoint-2026-11-30.json
    """


@log.command("verify", epilog=EXITS["log verify"])
@click.option(
    "--checkpoint",
    "checkpoints",
    multiple=True,
    type=click.Path(path_type=Path, dir_okay=False),
    help="A checkpoint kept elsewhere (repeatable).",
)
@click.pass_obj
@handle_errors
def log_verify(root: Path | None, /, checkpoints: tuple[Path, ...]) -> None:
    """Check every link of the audit log, the log against every checkpoint (those the
    archive kept and those given), and every fact of the index and the trust store
    against the log, row by row. Exit 3 on any inconsistency (edits, reordering,
    truncation, rewrites, an index row or trusted key the log does not describe).
    Only reads: works on a read-only archive.

    \b
    Example:
      reprobundle archive log verify --checkpoint checkpoint-2026-11-30.json
    """
    with opened(root, check_checkpoint=False, read_only=True) as store:
        report = store.verify_log(checkpoints)
    failure = report.failure()
    if failure is not None:
        raise failure
    click.echo(report.summary)


@log.command("show", epilog=EXITS["log show"])
@click.option("--tail", type=click.IntRange(1), help="Only the last N records.")
@click.pass_obj
@handle_errors
def log_show(root: Path | None, /, tail: int | None) -> None:
    """Print the audit log records, one exact record per line.

    \b
    Example:
      reprobundle archive log show --tail 5
    """
    with opened(root, read_only=True) as store:
        for record in store.log_records(tail):
            click.echo(record.decode("utf-8", "replace"))


@click.command("rebuild", epilog=ARCHIVE_EXIT_HELP)
@click.pass_obj
@handle_errors
def rebuild(root: Path | None, /) -> None:
    """Rebuild the index from the audit log and the stored objects: every bundle row,
    signer, claim, verification and claim result as the log says it is, the log itself
    byte for byte. The old index is kept beside the new one (index.sqlite.before-rebuild-*).
    Refuses when the log's chain is broken. Run it while no other archive command runs.

    \b
    Example:
      reprobundle archive log verify     # lists what no longer matches the log
      reprobundle archive rebuild
    """
    with opened(root) as store:
        bundles, verifications = store.rebuild()
        click.echo(
            f"rebuilt the index of {store.root} from its audit log: {bundles} bundle(s), "
            f"{verifications} verification(s)"
        )
