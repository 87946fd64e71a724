"""The `cite` command."""

from __future__ import annotations

from pathlib import Path

import click

from bundler.cli._shared import exit_help, handle_errors, limit_options, limits_from, trust_options


@click.command(
    epilog=exit_help(
        "0 cited (every byte matches the manifest; the signatures named were checked)",
        "2 usage error (a missing file, a key that cannot be read)",
        "3 the bundle was rejected (integrity, format, signature): it is not cited",
    )
)
@click.argument("bundle", type=click.Path(path_type=Path))
@click.option("--url", metavar="URL", help="Where readers download the bundle (an https link).")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "markdown", "bibtex", "cff"]),
    default="text",
    show_default=True,
    help="Plain text, a Markdown block, a BibTeX entry, or CITATION.cff.",
)
@click.option("--author", "authors", multiple=True, help="An author to name (repeatable).")
@trust_options("whose signatures the citation names")
@limit_options
@handle_errors
def cite(
    bundle: Path,
    url: str | None,
    fmt: str,
    authors: tuple[str, ...],
    trust_files: tuple[Path, ...],
    trust_store: Path | None,
    **limit_values: int,
) -> None:
    """Print what a report attaches to cite BUNDLE: its identity, the file's SHA-256,
    who signed it, and the exact verify command with its pins.

    The bundle is read first, every byte checked; a rejected bundle is not cited. Only
    signers checked against the keys you name (--trust, --trust-store) are named as
    signers; other signatures are said to be not checked. With --url the command is
    `reprobundle verify URL --sha256 HEX`, which downloads and checks exactly this file.

    \b
    Example:
      reprobundle cite starter-0.1.0.bundle.tar.zst --url https://example.org/starter-0.1.0.bundle.tar.zst
      reprobundle cite starter-0.1.0.bundle.tar.zst --format bibtex --trust alice.pub
    """
    from bundler.container.download import check_url
    from bundler.format.hashing import sha256_file
    from bundler.reports.citation import Citation, render
    from bundler.run.verify import check_integrity
    from bundler.signatures.trust import Policy, SignatureJudge
    from bundler.signatures.truststore import load_trusted_keys

    if url is not None:
        check_url(url)
    trusted = load_trusted_keys(trust_files, trust_store)
    judge = SignatureJudge(Policy(trusted, allow_unsigned=True))
    checked = check_integrity(bundle, limits_from(limit_values), judge)
    digest, size = sha256_file(bundle)
    found = judge.check
    citation = Citation(
        name=checked.manifest.name,
        version=checked.manifest.version,
        title=checked.manifest.title,
        identity=checked.identity,
        file_name=bundle.name,
        file_sha256=digest,
        file_bytes=size,
        url=url,
        signers=found.signers if trusted else None,
        unchecked_signatures=len(found.unknown_keyids),
        not_counted=found.notes if trusted else (),
        authors=authors,
        allow_code=bool(checked.manifest.code),
    )
    click.echo(render(citation, fmt), nl=False)
