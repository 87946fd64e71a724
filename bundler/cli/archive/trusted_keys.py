"""`archive trust list|add|revoke|remove|restore`: the keys the archive trusts, every
change logged."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from bundler.cli._shared import handle_errors
from bundler.cli.archive.common import ARCHIVE_EXIT_HELP, opened


@click.group("trust", epilog=ARCHIVE_EXIT_HELP)
def trust() -> None:
    """The keys the archive trusts (its trust.toml). Every change is an event in the audit
    log with each key's permissions, and add and verify refuse a trust store that differs
    from what the log says (an edit of trust.toml behind the log's back).

    \b
    Example:
      reprobundle archive trust add alice.pub --name alice
      reprobundle archive trust revoke alice
    """


@trust.command("list", epilog=ARCHIVE_EXIT_HELP)
@click.pass_obj
@handle_errors
def trust_list(root: Path | None, /) -> None:
    """Print the trusted keys and whether the trust store is what the log says. Only
    reads: works on a read-only archive.

    \b
    Example:
      reprobundle archive trust list
    """
    with opened(root, read_only=True) as store:
        keys = store.trust_keys()
    if not keys:
        click.echo("the archive trusts no key")
        return
    for k in keys:
        flags = [f for f, on in (("allow_code", k.allow_code), ("revoked", k.revoked)) if on]
        if k.may_sign is not None:
            flags.append(f"may_sign={','.join(sorted(k.may_sign)) or 'nothing'}")
        window = "".join(
            f" {label} {when.isoformat()}"
            for label, when in (("from", k.valid_from), ("until", k.valid_until))
            if when
        )
        click.echo(f"{k.name:24} {k.key.keyid}  {' '.join(flags) or '-'}{window}")
    click.echo(f"{len(keys)} key(s); the trust store matches the audit log")


@trust.command("add", epilog=ARCHIVE_EXIT_HELP)
@click.argument("keyfile", type=click.Path(path_type=Path, dir_okay=False))
@click.option("--name", help="The name reports print for this key (default: the file name).")
@click.option(
    "--allow-code",
    is_flag=True,
    help="Bundles this key signed may run their bundled code on archive verify.",
)
@click.option("--valid-from", type=click.DateTime(), help="Trusted from this UTC time on.")
@click.option("--valid-until", type=click.DateTime(), help="Trusted until this UTC time.")
@click.pass_obj
@handle_errors
def trust_add(
    root: Path | None,
    /,
    keyfile: Path,
    name: str | None,
    allow_code: bool,
    valid_from: Any,
    valid_until: Any,
) -> None:
    """Trust the public key in KEYFILE from now on (logged with its permissions).

    \b
    Example:
      reprobundle archive trust add keys/alice.pub --name alice
    """
    import dataclasses
    import datetime as dt

    from bundler.signatures.truststore import load_key_file

    def utc(when: Any) -> dt.datetime | None:
        return when.replace(tzinfo=dt.UTC) if when is not None else None

    key = dataclasses.replace(
        load_key_file(keyfile),
        name=name or keyfile.name,
        allow_code=allow_code,
        valid_from=utc(valid_from),
        valid_until=utc(valid_until),
    )
    with opened(root) as store:
        store.change_trust("add", key)
    flags = " (may run bundled code)" if allow_code else ""
    click.echo(f"trusted {key.name} (key id {key.key.keyid}){flags}; logged")


def _change_by_name(change: str, done: str, help_text: str) -> None:
    """``archive trust revoke|remove NAME``: one change of the key NAME, logged."""

    @trust.command(change, epilog=ARCHIVE_EXIT_HELP, help=help_text)
    @click.argument("name")
    @click.pass_obj
    @handle_errors
    def command(root: Path | None, /, name: str) -> None:
        with opened(root) as store:
            store.change_trust(change, name=name)
        click.echo(f"{done} {name}; logged")


_change_by_name(
    "revoke",
    "revoked",
    "Revoke the trusted key NAME: bundles it signed are refused from now on (logged).\n\n"
    "\b\nExample:\n  reprobundle archive trust revoke alice",
)
_change_by_name(
    "remove",
    "removed",
    "Stop trusting the key NAME (its bundles count as signed by an unknown key; logged).\n\n"
    "\b\nExample:\n  reprobundle archive trust remove alice",
)


@trust.command("restore", epilog=ARCHIVE_EXIT_HELP)
@click.pass_obj
@handle_errors
def trust_restore(root: Path | None, /) -> None:
    """Write trust.toml back as the audit log says it is (after an edit behind the log's
    back, or a crash between writing it and logging the change); the restore is logged.

    \b
    Example:
      reprobundle archive trust restore
    """
    with opened(root) as store:
        keys = store.restore_trust()
    click.echo(f"restored the trust store from the audit log: {len(keys)} key(s)")
