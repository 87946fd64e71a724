"""The `inspect` command."""

from __future__ import annotations

from pathlib import Path

import click

from bundler.cli._shared import exit_help, handle_errors, limit_options, limits_from


@click.command(
    epilog=exit_help(
        "0 shown (every byte matches the manifest)",
        "2 usage error (a missing file, a folder)",
        "3 the bundle was rejected (integrity, format, signature)",
    )
)
@click.argument("bundle", type=click.Path(path_type=Path))
@limit_options
@handle_errors
def inspect(bundle: Path, **limit_values: int) -> None:
    """Show what BUNDLE holds and claims, after checking its integrity; runs no case.

    \b
    Example:
      reprobundle inspect starter-0.1.0.bundle.tar.zst
    """
    from bundler.errors import one_line as t
    from bundler.run.verify import check_integrity
    from bundler.signatures.trust import Policy, SignatureJudge
    from bundler.signatures.truststore import beside, read_detached

    # no keys are trusted: it says who signed (each signature checked, a detached one
    # beside the bundle too, as verify judges it), nothing more
    signatures = SignatureJudge(Policy(detached=read_detached(beside(bundle))))

    extracted = check_integrity(bundle, limits_from(limit_values), signatures)
    m = extracted.manifest
    env = m.environment
    # every text from the bundle is on one line (t), so none can pass for a line of ours
    click.echo(f"Bundle    {t(m.name)} {t(m.version)}: {t(m.title)}")
    click.echo(f"Identity  sha256:{extracted.identity}")
    click.echo(f"Format    {t(m.format)}")
    click.echo(f"Signature {signatures.check.describe()} (no keys are trusted by inspect)")
    click.echo(
        f"Built     with {t(env.get('tool'))}, Python {t(env.get('python'))}, "
        f"{t(env.get('platform'))}"
    )
    held = {f.path: f for f in extracted.withheld.files} if extracted.withheld else {}
    if held:  # a redacted bundle: never "all files match" when some are not here
        click.echo(
            f"Integrity {len(m.files) - len(held)} of {len(m.files)} files match the manifest "
            f"({extracted.total_bytes} bytes); {len(held)} withheld, their SHA-256 and size "
            "bound by the manifest (redacted bundle: see withheld.json)"
        )
    else:
        click.echo(
            f"Integrity all {len(m.files)} files match the manifest ({extracted.total_bytes} bytes)"
        )
    if m.description.strip():
        click.echo("")
        for line in m.description.strip().split("\n"):  # indented under the bundle
            click.echo(f"  {t(line)}")
    click.echo("\nFiles")
    for entry in m.files:
        gone = held.get(entry.path)
        why = f"  (withheld: {t(gone.reason)})" if gone else ""
        click.echo(f"  {entry.sha256[:16]}  {entry.size:>10}  {t(entry.path)}{why}")
    click.echo("\nCases")
    for case in m.cases:
        listed = ", ".join(sorted(case.expect_reasons))
        reasons = f" [{t(listed)}]" if case.expect_reasons else ""
        kind = f" ({case.kind})" if case.kind else ""
        click.echo(f"  {t(case.id)}: {t(case.checker)}, expects {case.expect}{reasons}{kind}")
    for code in m.code:
        click.echo(f"  bundled code {t(code.key)} = {t(code.entry)} (runs only when allowed)")
    click.echo("\nClaims")
    for claim in m.claims:
        click.echo(f"  {t(claim.id)}: {t(claim.statement)}")
        click.echo(f"    cases: {t(', '.join(claim.cases))}")
        for limit in claim.limits:
            click.echo(f"    limit: {t(limit)}")
    from bundler.format.claims import advisories_of

    advised = advisories_of(m.cases)
    if advised:
        click.echo("\nAdvisories (verify judges the claims resting on them inconclusive)")
    for use in advised:
        click.echo(
            f"  {use.advisory.id} {use.checker} (fixed in {use.advisory.fix}): "
            f"{use.advisory.summary}; cases {t(', '.join(use.cases))}"
        )
    click.echo("\nWhat this bundle cannot support")
    for item in m.cannot_support:
        click.echo(f"  - {t(item)}")
