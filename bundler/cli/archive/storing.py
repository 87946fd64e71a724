"""`archive init`, `add` and `preregister`: what brings a bundle, an attestation or a
pre-registration into the archive."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from bundler.cli._shared import handle_errors, limit_options, limits_from, trust_options
from bundler.cli.archive.common import EXITS, given, opened

if TYPE_CHECKING:
    from bundler.store import BundleRow


@click.command("init", epilog=EXITS["init"])
@trust_options("the archive trusts from now on (kept in its trust.toml)")
@click.pass_obj
@handle_errors
def init(root: Path | None, /, trust_files: tuple[Path, ...], trust_store: Path | None) -> None:
    """Create a new archive (a missing or empty folder) with its index, key and log.

    Keys given with --trust and --trust-store are copied into the archive's trust store
    (trust.toml in the archive folder): add and verify judge bundle signatures against
    them, so a bundle signed by one is recorded as signed by that trusted key.

    \b
    Example:
      reprobundle archive --archive ~/bundle-archive init --trust-store team-trust.toml
    """
    from bundler.signatures.truststore import load_trusted_keys
    from bundler.store import Archive

    keys = load_trusted_keys(trust_files, trust_store)
    with Archive.init(given(root), keys) as created:
        click.echo(f"created archive {created.root} (id {created.archive_id})")
        click.echo(f"archive key: {created.key_path} (keep it private; it signs checkpoints)")
        if keys:
            names = ", ".join(k.name for k in keys)
            click.echo(f"trusted keys: {names} (in {created.root / 'trust.toml'})")


@click.command("add", epilog=EXITS["add"])
@click.argument("files", nargs=-1, required=True, type=click.Path(path_type=Path))
@trust_options("to trust for this add, besides the archive's own")
@click.option(
    "--attestation",
    "attestations",
    multiple=True,
    type=click.Path(path_type=Path, dir_okay=False),
    help="An attestation of a verification of one of these bundles (`verify --attest`), "
    "signed by a trusted key: kept beside it and logged (repeatable).",
)
@limit_options
@click.pass_obj
@handle_errors
def add(
    root: Path | None,
    /,
    files: tuple[Path, ...],
    trust_files: tuple[Path, ...],
    trust_store: Path | None,
    attestations: tuple[Path, ...],
    **limit_values: int,
) -> None:
    """Check each FILE (strict read, signatures, every hash) and store it by its SHA-256.

    Refuses a bundle that fails its integrity check or carries a bad signature, and a
    NAME@VERSION already stored with other bytes; warns when a version lower than the
    highest stored is added. Records the signer: unsigned, signed by an unknown key, or
    signed by a trusted key (the archive's trust.toml, plus --trust/--trust-store).
    Every add and refusal is written to the audit log.

    \b
    Example:
      reprobundle archive add out/*.bundle.tar.zst
      reprobundle archive add signed.bundle.tar.gz --trust alice.pub
      reprobundle archive add b.bundle.tar.zst --attestation b.intoto.json --trust rita.pub
    """
    from bundler.signatures.truststore import load_trusted_keys
    from bundler.store.errors import ArchiveRefused

    keys = load_trusted_keys(trust_files, trust_store)
    with opened(root) as store:
        report = store.add(files, limits_from(limit_values), keys)
        kept, refused = [], []
        for file in attestations if not report.refused else ():
            try:
                kept.append(store.attest(file, keys))
            except ArchiveRefused as exc:  # the bundles stay added; say what was not kept
                refused += exc.problems
    for bundle in report.added:
        click.echo(f"added    {_named(bundle)}  {bundle.signer}")
    for bundle in report.repaired:
        click.echo(
            f"repaired {_named(bundle)}  (the stored copy had rotted; it holds these bytes again)"
        )
    for bundle in report.already:
        click.echo(f"present  {_named(bundle)}")
    if report.added or report.repaired or report.already:
        click.echo(
            "(identity: the manifest's SHA-256, what reports print and "
            "--expect-manifest-sha256 takes; file: the bundle file's SHA-256, what the "
            "archive stores it by)"
        )
    for done in kept:
        d = done.data
        click.echo(
            f"attested {d['name']}@{d['version']}  {d['result']}  signed by "
            f"{', '.join(k[:16] for k in d['signers'])}  (log record #{done.seq})"
        )
    for problem in report.warnings:
        click.echo(f"reprobundle: warning: {problem}", err=True)
    failure = report.failure()
    if failure is not None:
        raise failure
    if refused:
        raise ArchiveRefused(f"{len(refused)} attestation(s) were not recorded", refused)


@click.command("preregister", epilog=EXITS["preregister"])
@click.argument("file", type=click.Path(path_type=Path, dir_okay=False))
@trust_options("whose signatures on it to name, besides the archive's own")
@click.option(
    "--timestamp",
    type=click.Path(path_type=Path, dir_okay=False),
    help="An RFC 3161 time-stamp response (.tsr) over FILE's bytes, checked and kept with it.",
)
@click.option(
    "--tsa-cert",
    "tsa_roots",
    multiple=True,
    type=click.Path(path_type=Path, dir_okay=False),
    help="The time-stamping authority's root certificate (PEM) you trust (repeatable).",
)
@click.pass_obj
@handle_errors
def preregister(
    root: Path | None,
    /,
    file: Path,
    trust_files: tuple[Path, ...],
    trust_store: Path | None,
    timestamp: Path | None,
    tsa_roots: tuple[Path, ...],
) -> None:
    """Record FILE, a pre-registration (`reprobundle preregister`), in the archive's log.

    The file is stored by its SHA-256 and the log records its identity, bundle name and
    version, claims and the trusted keys that signed it; the next checkpoint then shows
    it existed no later than that entry (the pre-registration cannot show its own time).
    `archive show NAME@VERSION` lists the pre-registrations of that name.

    With --timestamp, an RFC 3161 response over FILE (ask any time-stamping authority:
    `openssl ts -query -data FILE -sha256 -cert -out req.tsq`, then send req.tsq) is
    checked against --tsa-cert and kept: its time is a third party's, not the archive's.

    \b
    Example:
      reprobundle archive preregister mybundle.prereg.json
      reprobundle archive preregister p.json --timestamp p.tsr --tsa-cert tsa-root.pem
    """
    from bundler.errors import UsageError
    from bundler.signatures.truststore import load_trusted_keys

    if tsa_roots and timestamp is None:
        raise UsageError("--tsa-cert checks a --timestamp; give the time-stamp response too")
    keys = load_trusted_keys(trust_files, trust_store)
    with opened(root) as store:
        done = store.preregister(file, keys, timestamp, tsa_roots)
    d = done.data
    signed = ", ".join(k[:16] for k in d["signers"]) or "no trusted key"
    click.echo(
        f"recorded pre-registration of {d['name']}@{d['version']} identity sha256:"
        f"{d['identity']} (signed by {signed}) as log record #{done.seq} at {done.at}"
    )
    if "timestamp" in d:
        stamp = d["timestamp"]
        click.echo(f"time-stamped {stamp['time']} by {stamp['authority']} (RFC 3161, checked)")


def _named(bundle: BundleRow) -> str:
    """NAME@VERSION with both of its digests, each labelled: they are easily confused."""
    return (
        f"{bundle.name}@{bundle.version}  identity sha256:{bundle.identity}  "
        f"file sha256:{bundle.digest}"
    )
