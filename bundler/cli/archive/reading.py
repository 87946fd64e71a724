"""`archive list`, `show` and `export`: what the archive holds, read back."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from bundler.cli._shared import handle_errors, write_json
from bundler.cli.archive.common import EXITS, opened
from bundler.cli.archive.verifying import advisory_change_text


@click.command("list", epilog=EXITS["list"])
@click.option("--name", help="Only this bundle name.")
@click.option("--version", "version", help="Only this version.")
@click.option(
    "--signer",
    help="Only bundles signed by this trusted key name or key id (8+ hex digits), or 'unsigned'.",
)
@click.option(
    "--status",
    type=click.Choice(
        [
            "unverified",
            "supported",
            "contradicted",
            "inconclusive",
            "rejected",
            "rotted",
            "missing",
            "error",
        ]
    ),
    help="Only bundles whose latest verification had this result.",
)
@click.option(
    "--claim-status",
    type=click.Choice(["supported", "contradicted", "inconclusive"]),
    help="Only bundles with a claim of this status in their latest verification.",
)
@click.option("--json", "json_target", metavar="FILE|-", help="Write the list as JSON.")
@click.pass_obj
@handle_errors
def list_bundles(
    root: Path | None,
    /,
    name: str | None,
    version: str | None,
    signer: str | None,
    status: str | None,
    claim_status: str | None,
    json_target: str | None,
) -> None:
    """List stored bundles, by name and version, with each one's identity (the SHA-256 of
    its manifest, as a report's appendix prints it) and file digest.

    \b
    Example:
      reprobundle archive list --name quickstart --status supported
      reprobundle archive list --signer alice
    """
    with opened(root, read_only=True) as store:
        rows = store.list_bundles(name, version, signer, status, claim_status)
    if json_target:
        write_json(json_target, {"bundles": [r.to_dict() for r in rows]})
        if json_target == "-":
            return
    if not rows:
        click.echo("no bundle matches")
        return
    click.echo(
        f"{'NAME@VERSION':28} {'IDENTITY':12} {'DIGEST':12} {'SIZE':>9}  {'ADDED':19} "
        f"{'LAST RESULT':13} {'COPY':9} SIGNER"
    )
    for r in rows:
        copy = r.copy if r.withheld is None else f"{r.copy}:{r.withheld}"
        click.echo(
            f"{r.name + '@' + r.version:28} {r.identity[:12]:12} {r.digest[:12]:12} "
            f"{r.size:>9}  {r.added_at[:19]:19} {r.last_result:13} {copy:9} {r.signer}"
        )
    click.echo(
        "IDENTITY is the manifest's SHA-256 (what a report's appendix prints), DIGEST the "
        "file's; either, or a unique prefix of 8+ hex digits, names a bundle (an identity: "
        "its full copy when held)"
    )
    if any(r.withheld is not None for r in rows):
        click.echo("COPY redacted:N is a redacted copy withholding N files (reprobundle redact)")
    click.echo(f"{len(rows)} bundle(s)")


@click.command("show", epilog=EXITS["show"])
@click.argument("bundle")
@click.option("--json", "json_target", metavar="FILE|-", help="Write the details as JSON.")
@click.pass_obj
@handle_errors
def show(root: Path | None, /, bundle: str, json_target: str | None) -> None:
    """Show one BUNDLE with its whole verification history. BUNDLE is NAME@VERSION, its
    identity (the manifest's SHA-256, as a report's appendix prints it) or its file digest,
    whole or a unique prefix of at least 8 hex digits.

    \b
    Example:
      reprobundle archive show quickstart@1.0.0
      reprobundle archive show sha256:3f2a9c41
    """
    from bundler.store.errors import ArchiveError

    with opened(root, read_only=True) as store:
        try:
            shown = store.show(bundle)
        except ArchiveError:
            # NAME@VERSION or NAME that only a pre-registration names so far: show it
            name, _, version = bundle.partition("@")
            kept = [
                k
                for k in store.statements(name=name)
                if k.event == "preregister" and (not version or k.data.get("version") == version)
            ]
            if not kept:
                raise
            _show_preregistered(bundle, kept, json_target)
            return
        kept = store.statements(shown.bundle.name, shown.bundle.digest)
    if json_target:
        write_json(json_target, {**shown.to_dict(), "statements": [k.to_dict() for k in kept]})
        if json_target == "-":
            return
    from bundler.errors import one_line as t  # bundle text stays on its line

    b = shown.bundle
    click.echo(f"Bundle    {t(b.name)}@{t(b.version)}: {t(b.title)}")
    click.echo(f"Identity  sha256:{b.identity} (the manifest's SHA-256, as reports print it)")
    click.echo(f"Digest    sha256:{b.digest} (the file's SHA-256, {b.size} bytes)")
    click.echo(f"Copy      {b.copy_text}")
    click.echo(f"Held      {shown.copies_text}")
    if len(shown.copies) > 1:
        for c in shown.copies:
            click.echo(f"  {c.copy_text}: sha256:{c.digest} ({c.size} bytes)")
    click.echo(f"Signer    {b.signer}")
    click.echo(f"Added     {b.added_at} by {b.added_by} with {b.tool}")
    click.echo("Claims")
    for claim in shown.claims:
        click.echo(f"  {t(claim['id'])}: {t(claim['statement'])}")
    click.echo(f"Advisories {len(shown.advisories)} on the checker versions it uses")
    for found in shown.advisories:
        click.echo(
            f"  {found['id']} {found['checker']} (fixed in {', '.join(found['fixed_in'])}): "
            f"{found['summary']}; cases {t(', '.join(found['cases']))}"
        )
    click.echo(f"History   {len(shown.history)} verification(s), oldest first")
    for v in shown.history:
        env = v.environment
        where = f"Python {env.get('python', '?')} on {env.get('platform', '?')}" if env else ""
        click.echo(f"  #{v.id} {v.at}  {v.result} (exit {v.exit_code})  {v.tool}  {where}")
        if isinstance(v.detail.get("signature"), dict):
            click.echo(f"      {v.detail['signature'].get('text')}")
        for claim in v.claims:
            click.echo(f"      {claim['status']:13} {t(claim['id'])}: {t(claim['why'])}")
        if "message" in v.detail:
            click.echo(f"      {t(v.detail['message'])}")
        if isinstance(v.detail.get("advisory_change"), dict):
            click.echo(f"      {advisory_change_text(v.detail['advisory_change'])}")
        for problem in v.detail.get("problems", []):
            click.echo(
                f"      - {t(problem['where'])}: {t(problem['message'])} [{t(problem['code'])}]"
            )
    click.echo(f"Statements {len(kept)} kept beside it (log record, time, what)")
    _statements(kept)


def _show_preregistered(selector: str, kept: list[Any], json_target: str | None) -> None:
    """A bundle the archive does not hold, of which it records pre-registrations."""
    if json_target:
        write_json(json_target, {"bundle": None, "statements": [k.to_dict() for k in kept]})
        if json_target == "-":
            return
    from bundler.errors import one_line as t

    click.echo(
        f"Bundle    {t(selector)}: not in the archive (no bundle file added); "
        f"{len(kept)} pre-registration(s) of it recorded"
    )
    click.echo(f"Statements {len(kept)} (log record, time, what)")
    _statements(kept)


def _statements(kept: list[Any]) -> None:
    from bundler.errors import one_line as t

    for k in kept:
        signed = ", ".join(s[:16] for s in k.data.get("signers", [])) or "no trusted key"
        if k.event == "preregister":
            what = (
                f"pre-registration of {t(k.data.get('name'))}@{t(k.data.get('version'))}, "
                f"identity sha256:{t(k.data.get('identity'))}"
            )
            stamp = k.data.get("timestamp")
            if isinstance(stamp, dict):
                what += f", time-stamped {t(stamp.get('time'))} by {t(stamp.get('authority'))}"
        else:
            what = f"attestation of a verification: {t(k.data.get('result'))}"
        click.echo(f"  #{k.seq} {k.at}  {what}; signed by {signed}")


@click.command("export", epilog=EXITS["export"])
@click.argument("bundle")
@click.option(
    "-o",
    "--output",
    "out",
    required=True,
    type=click.Path(path_type=Path),
    help="The file to write.",
)
@click.option("--force", is_flag=True, help="Replace an existing file that is not a bundle.")
@click.option(
    "--copy",
    type=click.Choice(["full", "redacted"]),
    help="Which copy of the bundle's identity to write (default: the full one when held, "
    "else the redacted one; a file digest names its own copy).",
)
@click.pass_obj
@handle_errors
def export(root: Path | None, /, bundle: str, out: Path, force: bool, copy: str | None) -> None:
    """Write the stored BUNDLE (digest or NAME@VERSION) to a file, checking its digest.

    An identity may be held as its full bundle, a redacted copy (`reprobundle redact`),
    or both; --copy picks one.

    \b
    Example:
      reprobundle archive export quickstart@1.0.0 -o quickstart-1.0.0.bundle.tar.zst
    """
    from bundler.output import BUNDLE, check_output

    check_output(out, BUNDLE, "-o", force)
    with opened(root) as store:
        row = store.export(bundle, out, copy)
    click.echo(f"exported {row.name}@{row.version} ({row.copy_text}; sha256:{row.digest}) to {out}")
