"""`archive verify`: stored bundles re-verified, their results printed as they come (or
behind a progress bar when a person watches)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

import click

from bundler.cli._shared import handle_errors, write_json
from bundler.cli._verifying import Judging, verify_options
from bundler.cli.archive.common import EXITS, opened
from bundler.codes import COMMAND_EXITS

if TYPE_CHECKING:
    from bundler.store import BundleRow, Reverification


def on_terminal() -> bool:
    """Is a person watching standard error (so a progress bar helps rather than clutters)?"""
    return sys.stderr.isatty()


@click.command("verify", epilog=EXITS["verify"])
@click.argument("bundles", nargs=-1)
@click.option("--all", "all_bundles", is_flag=True, help="Every stored bundle.")
@click.option(
    "--jobs",
    "-j",
    type=click.IntRange(1, 256),
    default=1,
    show_default=True,
    help="Worker processes.",
)
@click.option(
    "--scheduler",
    metavar="tcp://HOST:PORT",
    help="Fan the verifications out to the Dask cluster of this scheduler (needs "
    "reprobundle[distributed]; every worker must see the archive folder at the same path).",
)
@click.option("--json", "json_target", metavar="FILE|-", help="Write the results as JSON.")
@verify_options(
    trust="to trust for this verification, besides the archive's own", one_bundle=False, jobs=False
)
@click.pass_obj
@handle_errors
def verify(
    root: Path | None,
    /,
    bundles: tuple[str, ...],
    all_bundles: bool,
    jobs: int,
    scheduler: str | None,
    json_target: str | None,
    judging: Judging,
) -> None:
    """Re-verify stored BUNDLES (identities, digests, NAME@VERSION, NAME) or --all, in
    parallel: in --jobs local processes, or on a Dask cluster with --scheduler.

    Each stored file is re-hashed first (bit rot is reported loudly), then verified as
    `reprobundle verify` would, signatures judged against the archive's trusted keys
    (trust.toml, plus --trust/--trust-store); every result, with the signer, goes into
    the bundle's history and the audit log. Exits with the worst result. First checks
    each bundle's index rows against its own records in the audit log, and the trust
    store against the log, and refuses (exit 3, nothing run) when they differ; the
    whole log is checked by `archive log verify`.

    A result that differs from the bundle's last recorded one because of an advisory
    (a claim resting on a checker version since found weak) says so, naming the
    advisory, and the audit log records it; --accept-advisory ID judges as before.

    With --scheduler, each Dask worker verifies bundles from the archive folder (the same
    path on every worker) in its own work folder; only this process writes the index and
    the log. Workers running another reprobundle version are refused; a bundle whose
    workers died is re-run elsewhere, or recorded as an error.

    \b
    Example:
      reprobundle archive verify --all --jobs 4
      reprobundle archive verify --all --scheduler tcp://10.0.0.5:8786
    """
    out = sys.stderr if json_target == "-" else sys.stdout
    options = judging.options(None)  # the keys given; the archive adds its own
    with opened(root) as store:
        total = len(store.select(bundles, all_bundles))
        if not total:
            click.echo("reprobundle: the archive holds no bundle; nothing was verified", err=True)
            sys.exit(COMMAND_EXITS["nothing_verified"])
        with Progress(total, out) as show:

            def on_result(outcome: Reverification, bundle: BundleRow) -> None:
                show(result_lines(outcome, bundle))

            batch = store.verify(
                bundles,
                all_bundles,
                jobs,
                options,
                on_result,
                scheduler=scheduler,
                on_note=lambda text: click.echo(f"reprobundle: warning: {text}", err=True),
            )
    for line in show.held:
        click.echo(line, file=out)
    for outcome in batch:
        if outcome.bit_rot:
            click.echo(
                f"reprobundle: BIT ROT in {batch.name(outcome)} (sha256:{outcome.digest}): "
                f"{outcome.detail.get('message')}",
                err=True,
            )
    click.echo(batch.summary, file=out)
    if json_target:
        write_json(json_target, batch.to_dict())
    if not batch:
        click.echo("reprobundle: nothing was verified", err=True)
    sys.exit(batch.exit_code)


def result_lines(outcome: Reverification, bundle: BundleRow) -> list[str]:
    """One verification's lines: the result, then each claim, then any message."""
    signed = outcome.signed
    lines = [
        f"{outcome.result:13} {bundle.name}@{bundle.version}  {bundle.digest[:12]}"
        + f"  {bundle.copy} copy"
        + (f"  {signed.text}" if signed else "")
    ]
    lines += [f"    {c['status']:13} {c['id']}: {c['why']}" for c in outcome.claims]
    if not outcome.bit_rot and "message" in outcome.detail:
        lines.append(f"    {outcome.detail['message']}")
    change = outcome.detail.get("advisory_change")
    if isinstance(change, dict):
        lines.append(f"    {advisory_change_text(change)}")
    return lines


def advisory_change_text(change: dict[str, Any]) -> str:
    """What an advisory changed since the bundle's last verification, in a sentence."""
    if "accepted" in change:
        return (
            f"changed since the last verification: {change['from']} -> {change['to']}, "
            f"advisory {', '.join(change['accepted'])} accepted (--accept-advisory)"
        )
    ids = ", ".join(change["advisories"])
    flags = " ".join(f"--accept-advisory {i}" for i in change["advisories"])
    return (
        f"changed since the last verification: {change['from']} -> {change['to']} because "
        f"of advisory {ids} (claims {', '.join(change['claims'])}); `reprobundle checkers "
        f"--advisories` says why; {flags} judges as before"
    )


class Progress:
    """Each result's lines, printed at once; or, when a person watches a batch of more
    than one, a progress bar on standard error and the lines held until it is done."""

    def __init__(self, total: int, out: TextIO) -> None:
        self.bar: Any = None
        if on_terminal() and total > 1:
            self.bar = click.progressbar(length=total, label="verifying", file=sys.stderr)
        self.out = out
        self.held: list[str] = []

    def __enter__(self) -> Progress:
        if self.bar is not None:
            self.bar.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.bar is not None:
            self.bar.__exit__(None, None, None)

    def __call__(self, lines: list[str]) -> None:
        if self.bar is None:
            for line in lines:
                click.echo(line, file=self.out)
        else:
            self.held.extend(lines)
            self.bar.update(1)
