"""The `preregister` command: fix a bundle's claims and checks before its evidence exists."""

from __future__ import annotations

from pathlib import Path

import click

from bundler.cli._shared import accept_advisory_option, exit_help, handle_errors


@click.command(
    epilog=exit_help(
        "0 the pre-registration was written",
        "2 usage error (a source with problems, a key that cannot be read)",
    )
)
@click.argument("source", type=click.Path(path_type=Path, file_okay=False))
@click.option(
    "-o",
    "--output",
    required=True,
    type=click.Path(path_type=Path, dir_okay=False),
    help="The pre-registration file to write (e.g. NAME-VERSION.prereg.json).",
)
@click.option(
    "--sign",
    "key_file",
    type=click.Path(path_type=Path, dir_okay=False),
    help="Sign it with this private key (made by `reprobundle keygen`).",
)
@click.option(
    "--fix",
    "fix",
    multiple=True,
    metavar="PATH",
    help="Fix the content of this reference input too (a file a case names as an input, "
    "as bundle.yaml names it, e.g. an expected file or a schema): its digest is "
    "pre-registered, so a later edit shows as a change. Repeatable.",
)
@click.option(
    "--force", is_flag=True, help="Replace an existing -o file that is not a pre-registration."
)
@click.option("--quiet", "-q", is_flag=True, help="Print nothing but errors.")
@accept_advisory_option
@handle_errors
def preregister(
    source: Path,
    output: Path,
    key_file: Path | None,
    fix: tuple[str, ...],
    force: bool,
    quiet: bool,
    accept_advisory: tuple[str, ...],
) -> None:
    """Write a pre-registration of SOURCE: its claims and checks, before the evidence.

    Reads SOURCE's bundle.yaml as `build` does, but looks for no input file (they may not
    exist yet): it writes the name and version, every claim (statement, limits, cases),
    every case's checker, params, inputs, expectation and reasons, the scope and the
    names of the inputs the cases will read, never their content, except the reference
    inputs given with --fix and the source's bundled code, whose digests it fixes. Its
    identity is the SHA-256 of its canonical bytes. Later, `build SOURCE --preregistration
    FILE` packs it into the bundle, and `verify` says per claim whether it is as
    pre-registered or what changed. As `build`, it refuses a case on a checker version
    with an advisory unless given --accept-advisory ID.

    \b
    Example:
      reprobundle preregister mybundle -o mybundle.prereg.json --sign alice.key
      reprobundle preregister mybundle -o p.json --fix inputs/expected.yaml
    """
    from bundler.authoring.preregistration import preregister_source
    from bundler.format import preregistration as model
    from bundler.format.claims import accepted_advisories
    from bundler.output import PREREGISTRATION, check, check_output, write_bytes
    from bundler.signatures.preregistration import seal_preregistration

    check(output, "-o")
    check_output(output, PREREGISTRATION, "-o", force)
    from bundler.cli._verifying import signing_key

    keys = [signing_key(key_file)] if key_file is not None else []
    import datetime as dt

    written = dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")  # stated, not attested
    accepted = accepted_advisories(accept_advisory)
    doc = preregister_source(source, written, fix, accepted)
    write_bytes(output, seal_preregistration(doc, keys), "the pre-registration")
    if not quiet:
        signed = "signed" if keys else "unsigned"
        fixed = f", {len(doc['files'])} file digest(s) fixed" if doc.get("files") else ""
        click.echo(
            f"wrote {output}: {len(doc['claims'])} claims, {len(doc['cases'])} cases{fixed}, "
            f"{signed}; identity sha256:{model.identity(doc)}"
        )
