"""The `diff` command."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from bundler.cli._shared import (
    exit_help,
    handle_errors,
    is_terminal,
    limit_options,
    limits_from,
    write_json,
)
from bundler.codes import COMMAND_EXITS, EXIT_CODES

if TYPE_CHECKING:
    from bundler.signatures.trust import SignatureCheck


def _print_coloured(text: str, stream: Any) -> None:
    """Flipped expectations in red on a terminal (rich leaves colour out for NO_COLOR)."""
    from rich.console import Console
    from rich.text import Text

    console = Console(file=stream, highlight=False)
    for line in text.splitlines():
        loud = line.startswith(("EXPECTED VERDICTS", "  !!"))
        console.print(Text(line, style="bold red" if loud else ""), soft_wrap=True)


@click.command(
    epilog=exit_help(
        "0 the bundles are identical",
        "1 they differ (also: one manifest, but other files withheld)",
        "2 usage error",
        "3 a bundle was rejected (integrity, format)",
    )
)
@click.argument("old", type=click.Path(path_type=Path))
@click.argument("new", type=click.Path(path_type=Path))
@click.option(
    "--json", "json_target", metavar="FILE|-", help="Also write the diff as JSON (- for stdout)."
)
@click.option("--force", is_flag=True, help="Replace an existing --json file that is not a diff.")
@click.option("--quiet", "-q", is_flag=True, help="Print only the one-line summary.")
@click.option("--verbose", "-v", is_flag=True, help="Show file hashes too.")
@limit_options
@handle_errors
def diff(
    old: Path,
    new: Path,
    json_target: str | None,
    force: bool,
    quiet: bool,
    verbose: bool,
    **limit_values: int,
) -> None:
    """Show what changed from bundle OLD to bundle NEW, running nothing.

    Both bundles are read strictly and checked against their manifests first. Changed
    expected verdicts come first (a flipped expectation can turn a contradicted claim
    into a supported one with no new evidence), then cases, claims, scope, files, the
    bundle's own fields and the build environment.

    \b
    Example:
      reprobundle diff starter-0.1.0.bundle.tar.zst starter-0.2.0.bundle.tar.zst
    """
    from bundler.errors import BundlerError
    from bundler.output import DIFF, check, check_output
    from bundler.reports.diff import diff as compare
    from bundler.reports.diff import same_evidence_but_withheld
    from bundler.reports.difftext import to_text
    from bundler.run.verify import check_integrity
    from bundler.signatures.trust import Policy, SignatureJudge
    from bundler.signatures.truststore import beside, read_detached

    if json_target and json_target != "-":
        check(json_target, "--json")
        check_output(json_target, DIFF, "--json", force)
    limits = limits_from(limit_values)
    read, judged = [], []
    for label, path in (("OLD", old), ("NEW", new)):
        try:
            # every signature checked (a detached one beside the bundle too), as verify
            # does: a signer is named only once its signature holds
            judge = SignatureJudge(Policy(detached=read_detached(beside(path))))
            read.append(check_integrity(path, limits, judge))
            judged.append(judge.check)
        except BundlerError as exc:
            exc.headline = f"{label} ({path}): {exc.headline}"
            raise
    result = compare(
        read[0].manifest,
        read[1].manifest,
        read[0].identity,
        read[1].identity,
        old.name,
        new.name,
        read[0].withheld,
        read[1].withheld,
    )
    text = to_text(result, verbose=verbose)
    signed = _signatures_line(judged[0], judged[1])
    if signed:  # before the last line (the one --quiet keeps)
        lines = text.splitlines()
        text = "\n".join([*lines[:-1], signed, *lines[-1:]])
    to_stderr = json_target == "-"
    if quiet:
        text = text.splitlines()[-1]
    stream = sys.stderr if to_stderr else sys.stdout
    if is_terminal(stream):
        _print_coloured(text, stream)
    else:
        click.echo(text, err=to_stderr)
    if json_target:  # after the text: an output problem never hides the result
        write_json(json_target, result, "the diff")
    same = result["identical"] and not same_evidence_but_withheld(result)
    sys.exit(EXIT_CODES["supported"] if same else COMMAND_EXITS["failed"])


def _signatures_line(old: SignatureCheck, new: SignatureCheck) -> str | None:
    """What differs in the checked signatures of the two bundles, or None. A signature is
    not part of the manifest, so a signed copy and an unsigned one are the same bundle (the
    same identity): said, so that "identical" is not read as "signed alike". Only
    signatures that verified are named (diff trusts no key: it names key ids)."""

    def keys(check: SignatureCheck) -> list[str]:
        return sorted(k[:16] for k in (*check.unknown_keyids, *check.signers))

    before, after = keys(old), keys(new)
    if before == after:
        return None

    def said(found: list[str]) -> str:
        return f"signed by key id(s) {', '.join(found)}" if found else "unsigned"

    return (
        f"Signatures differ: OLD is {said(before)}, NEW is {said(after)} (each signature "
        "checked over its manifest; diff trusts no key, so this names keys, not who holds "
        "them; a signature is not part of the manifest: it changes neither the identity nor "
        "what is compared)"
    )
