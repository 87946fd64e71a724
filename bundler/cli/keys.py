"""The `keygen` and `sign` commands."""

from __future__ import annotations

from pathlib import Path

import click

from bundler.cli._shared import (
    ask_passphrase,
    exit_help,
    handle_errors,
    limit_options,
    limits_from,
)
from bundler.cli._verifying import signing_key


@click.command(
    epilog=exit_help(
        "0 the key pair was written",
        "2 usage error (a bad name, a key file that exists, an empty passphrase or none to "
        "read, a folder that cannot be written)",
    )
)
@click.argument("name")
@click.option(
    "--out-dir",
    type=click.Path(path_type=Path, file_okay=False),
    default=Path("."),
    show_default=True,
    help="Folder for NAME.key (private) and NAME.pub (public, shareable).",
)
@click.option(
    "--no-passphrase",
    is_flag=True,
    help="Write the private key unencrypted (anyone who reads the file can sign as you).",
)
@handle_errors
def keygen(name: str, out_dir: Path, no_passphrase: bool) -> None:
    """Make an Ed25519 key pair: NAME.key (private) and NAME.pub (public).

    The private key is encrypted with a passphrase (asked for, or read from
    $REPROBUNDLE_PASSPHRASE) unless --no-passphrase is given. Give NAME.pub to reviewers:
    they trust it with `verify --trust NAME.pub` or in a trust store. Existing files are
    never overwritten.

    \b
    Example:
      reprobundle keygen alice --out-dir ~/.reprobundle
    """
    from bundler.signatures.keyfiles import write_key_pair

    def passphrase() -> bytes | None:
        """Asked for once the files are known to be new."""
        if no_passphrase:
            click.echo(
                "warning: the private key is not encrypted; anyone who can read "
                f"{out_dir / name}.key can sign bundles as you",
                err=True,
            )
            return None
        return ask_passphrase(confirm=True, otherwise=", or give --no-passphrase")

    written = write_key_pair(name, out_dir, passphrase)
    private_path, public_path, public = written.private_path, written.public_path, written.public
    click.echo(f"private key  {private_path}  (keep it secret)")
    click.echo(f"public key   {public_path}  (share it)")
    click.echo(f"key id       {public.keyid}")
    click.echo("trust store entry:")
    click.echo(f'  [[key]]\n  name = "{name}"\n  public_key = "ed25519:{public.b64}"')


@click.command(
    epilog=exit_help(
        "0 signed",
        "2 usage error (a missing file, a key that cannot be read)",
        "3 the bundle was rejected (it does not match its manifest; nothing was signed)",
    )
)
@click.argument("bundle", type=click.Path(path_type=Path, dir_okay=False))
@click.option(
    "--key",
    "key_file",
    required=True,
    type=click.Path(path_type=Path, dir_okay=False),
    help="Private key file made by `reprobundle keygen`.",
)
@click.option(
    "--detached",
    is_flag=True,
    help="Write the signature beside the bundle (BUNDLE.sig.json) instead of inside it.",
)
@click.option(
    "-o",
    "--out",
    type=click.Path(path_type=Path, dir_okay=False),
    help="Write here instead (default: the bundle in place, or BUNDLE.sig.json).",
)
@click.option(
    "--force",
    is_flag=True,
    help="Replace an existing output that is not a bundle (with --detached: a signature).",
)
@limit_options
@handle_errors
def sign(
    bundle: Path,
    key_file: Path,
    detached: bool,
    out: Path | None,
    force: bool,
    **limit_values: int,
) -> None:
    """Sign BUNDLE's exact manifest bytes with an Ed25519 key.

    The bundle is read strictly first. The signature is embedded as
    signatures/<keyid>.json right after the manifest (the manifest and thus the bundle
    identity stay the same), or written beside the file with --detached. A passphrase is
    asked for, or read from $REPROBUNDLE_PASSPHRASE.

    \b
    Example:
      reprobundle sign starter-0.1.0.bundle.tar.zst --key alice.key
    """
    from bundler.output import BUNDLE, SIGNATURE, check_output
    from bundler.signatures.signfile import sign_bundle
    from bundler.signatures.trust import DETACHED_SUFFIX

    if detached:
        target = out or bundle.with_name(bundle.name + DETACHED_SUFFIX)
        check_output(target, SIGNATURE, "-o" if out else "the signature file", force)
    else:
        check_output(out, BUNDLE, "-o", force)
    key = signing_key(key_file)
    target, signature = sign_bundle(
        bundle, key, out=out, detached=detached, limits=limits_from(limit_values)
    )
    click.echo(f"signed {bundle.name} with key {signature.keyid[:16]} -> {target}")
