"""The command line: a thin click shell over the library.

Library errors carry their problems and exit code; ``handle_errors`` turns them into
a message on stderr and that exit code, once, here. Anything else is a bug: it is
reported as an internal error (exit 5), with a traceback only under ``--verbose``.
"""

from __future__ import annotations

import functools
import json
import os
import sys
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

import checkers as builtin_checkers

from . import __version__
from .errors import BundlerError
from .extract import Limits

F = TypeVar("F", bound=Callable[..., Any])

EXIT_INTERNAL = 5

EXIT_HELP = """\b
Exit codes: 0 every claim supported · 1 a claim contradicted · 2 usage error ·
3 bundle rejected (integrity, format; nothing ran) · 4 inconclusive ·
5 internal error (a bug in reprobundle)."""


def handle_errors(function: F) -> F:
    """Map library errors to messages and exit codes; no traceback for any input."""

    @functools.wraps(function)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return function(*args, **kwargs)
        except BundlerError as exc:
            click.echo(f"reprobundle: {exc.diagnostics()}", err=True)
            sys.exit(exc.exit_code)
        except (click.exceptions.Exit, click.ClickException, click.Abort, SystemExit):
            raise
        except KeyboardInterrupt:
            click.echo("reprobundle: interrupted", err=True)
            sys.exit(130)
        except Exception as exc:
            if os.environ.get("REPROBUNDLE_VERBOSE") or kwargs.get("verbose"):
                traceback.print_exc()
            click.echo(
                f"reprobundle: internal error ({type(exc).__name__}: {exc}); this is a bug in "
                "reprobundle, not a verdict on the bundle. Re-run with --verbose for details.",
                err=True,
            )
            sys.exit(EXIT_INTERNAL)

    return wrapper  # type: ignore[return-value]


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name="reprobundle")
def main() -> None:
    """Build and verify reproducibility bundles: the evidence behind a report's claims,
    hashed and packed in one file that anyone can re-check.

    \b
    Typical use:
      reprobundle init mybundle            # a starter source to edit
      reprobundle build mybundle           # -> starter-0.1.0.bundle.tar.gz
      reprobundle verify starter-0.1.0.bundle.tar.gz
    """


# ---------------------------------------------------------------- build
@main.command()
@click.argument("source", type=click.Path(path_type=Path))
@click.option("-o", "--output", type=click.Path(path_type=Path),
              help="File to write (default: NAME-VERSION.bundle.tar.gz in the current folder).")
@click.option("--quiet", "-q", is_flag=True, help="Print only the path of the new bundle.")
@handle_errors
def build(source: Path, output: Path | None, quiet: bool) -> None:
    """Build a bundle from SOURCE, a folder holding bundle.yaml.

    Checks the source, hashes every file, writes the manifest, packs a deterministic
    tar.gz (set SOURCE_DATE_EPOCH for byte-identical rebuilds), then verifies the new
    file from a fresh empty folder and refuses to keep it unless every claim is
    supported there.

    \b
    Example:
      SOURCE_DATE_EPOCH=1700000000 reprobundle build bundles/quickstart -o out/qs.bundle.tar.gz
    """
    from .build import build as build_bundle
    from .build import default_name
    from .errors import UsageError
    from .source import read_source

    epoch_text = os.environ.get("SOURCE_DATE_EPOCH", "0")
    if not epoch_text.isdigit():
        raise UsageError(f"SOURCE_DATE_EPOCH must be a whole number of seconds, observed {epoch_text!r}")
    if output is None:
        output = Path.cwd() / default_name(read_source(source))
    result = build_bundle(source, output, int(epoch_text))
    if quiet:
        click.echo(str(result.path))
        return
    claims = result.home_report.get("claims", [])
    click.echo(f"built {result.path} ({result.size} bytes)")
    click.echo(f"identity sha256:{result.identity}")
    click.echo(
        f"verified at home from a fresh folder: {len(claims)} of {len(claims)} claims supported, "
        f"{len(result.manifest.cases)} cases reproduced"
    )


# ---------------------------------------------------------------- verify
def limit_options(function: F) -> F:
    defaults = Limits()
    options = [
        click.option("--max-archive-bytes", type=click.IntRange(1), default=defaults.archive_bytes,
                     show_default=True, help="Largest bundle file accepted."),
        click.option("--max-members", type=click.IntRange(1), default=defaults.members,
                     show_default=True, help="Most archive members accepted."),
        click.option("--max-file-bytes", type=click.IntRange(1), default=defaults.file_bytes,
                     show_default=True, help="Largest single file accepted."),
        click.option("--max-total-bytes", type=click.IntRange(1), default=defaults.total_bytes,
                     show_default=True, help="Most bytes unpacked in all."),
        click.option("--max-ratio", type=click.IntRange(1), default=defaults.ratio,
                     show_default=True, help="Highest compression ratio accepted (bombs)."),
    ]
    for option in reversed(options):
        function = option(function)
    return function


def limits_from(options: dict[str, int]) -> Limits:
    return Limits(
        archive_bytes=options["max_archive_bytes"],
        members=options["max_members"],
        file_bytes=options["max_file_bytes"],
        total_bytes=options["max_total_bytes"],
        ratio=options["max_ratio"],
    )


def _write_json(target: str, data: dict[str, Any]) -> None:
    text = json.dumps(data, indent=2, ensure_ascii=False, sort_keys=False) + "\n"
    if target == "-":
        click.echo(text, nl=False)
    else:
        from .atomic import write_atomic

        write_atomic(Path(target), text.encode("utf-8"))


@main.command(epilog=EXIT_HELP)
@click.argument("bundle", type=click.Path(path_type=Path))
@click.option("--workdir", type=click.Path(path_type=Path),
              help="Folder to unpack into; must not exist or be empty (default: a new temporary one).")
@click.option("--keep", is_flag=True, help="Keep the work directory afterwards (also on failure).")
@click.option("--json", "json_target", metavar="FILE|-", help="Also write the JSON report (- for stdout).")
@click.option("--quiet", "-q", is_flag=True, help="Print only the result line.")
@click.option("--verbose", "-v", is_flag=True, help="Show every case with its reasons.")
@limit_options
@handle_errors
def verify(bundle: Path, workdir: Path | None, keep: bool, json_target: str | None,
           quiet: bool, verbose: bool, **limit_values: int) -> None:
    """Verify BUNDLE: check every byte, re-run every case, judge every claim.

    Unpacks into an empty folder, refuses the bundle (exit 3) if any file is missing,
    unlisted, or differs from the manifest, re-runs each case with its checker, and
    prints per claim whether the evidence supports it, with what it cannot support.

    \b
    Example:
      reprobundle verify quickstart-1.0.0.bundle.tar.gz --json report.json
    """
    from .errors import BundleRejected, UsageError
    from .report import rejection_json, to_json, to_text, verdict_line
    from .verify import verify as run_verify

    text_to_stderr = json_target == "-"
    try:
        verification = run_verify(bundle, workdir=workdir, keep=keep, limits=limits_from(limit_values))
    except (BundleRejected, UsageError) as exc:
        if json_target:
            _write_json(json_target, rejection_json(exc, exc.exit_code))
        raise
    if json_target:
        _write_json(json_target, to_json(verification))
    if quiet:
        click.echo(verdict_line(verification), err=text_to_stderr)
    else:
        click.echo(to_text(verification, verbose=verbose), err=text_to_stderr)
        if verification.workdir:
            click.echo(f"work directory kept at {verification.workdir}", err=text_to_stderr)
    sys.exit(verification.exit_code)


# ---------------------------------------------------------------- inspect
@main.command(epilog=EXIT_HELP)
@click.argument("bundle", type=click.Path(path_type=Path))
@limit_options
@handle_errors
def inspect(bundle: Path, **limit_values: int) -> None:
    """Show what BUNDLE holds and claims, after checking its integrity; runs no case.

    \b
    Example:
      reprobundle inspect quickstart-1.0.0.bundle.tar.gz
    """
    import tempfile

    from .extract import extract

    with tempfile.TemporaryDirectory(prefix="reprobundle-inspect-") as work:
        extracted = extract(bundle.absolute(), Path(work), limits_from(limit_values))
    m = extracted.manifest
    env = m.environment
    click.echo(f"Bundle    {m.name} {m.version}: {m.title}")
    click.echo(f"Identity  sha256:{extracted.identity}")
    click.echo(f"Format    {m.format}")
    click.echo(f"Built     with {env.get('tool')}, Python {env.get('python')}, {env.get('platform')}")
    click.echo(f"Integrity all {len(m.files)} files match the manifest ({extracted.total_bytes} bytes)")
    if m.description.strip():
        click.echo("")
        click.echo(m.description.strip())
    click.echo("\nFiles")
    for entry in m.files:
        click.echo(f"  {entry.sha256[:16]}  {entry.size:>10}  {entry.path}")
    click.echo("\nCases")
    for case in m.cases:
        reasons = f" {list(case.expect_reasons)}" if case.expect_reasons else ""
        click.echo(f"  {case.id}: {case.checker}, expects {case.expect}{reasons}")
    click.echo("\nClaims")
    for claim in m.claims:
        click.echo(f"  {claim.id}: {claim.statement}")
        click.echo(f"    cases: {', '.join(claim.cases)}")
        for limit in claim.limits:
            click.echo(f"    limit: {limit}")
    click.echo("\nWhat this bundle cannot support")
    for item in m.cannot_support:
        click.echo(f"  - {item}")


# ---------------------------------------------------------------- init
@main.command()
@click.argument("directory", type=click.Path(path_type=Path))
@click.option("--template", default="starter", show_default=True,
              help="Which starter to copy (see --list-templates).")
@handle_errors
def init(directory: Path, template: str) -> None:
    """Create a starter bundle source in DIRECTORY (new or empty).

    The starter builds and verifies as it is: one claim, a case that passes and a
    negative control that must fail.

    \b
    Example:
      reprobundle init mybundle && reprobundle build mybundle
    """
    from .templates import copy_template

    written = copy_template(template, directory)
    click.echo(f"created {len(written)} files in {directory}:")
    for path in written:
        click.echo(f"  {path.relative_to(directory)}")
    click.echo(f"next: edit {directory}/bundle.yaml, then `reprobundle build {directory}`")


# ---------------------------------------------------------------- checkers
@main.command("checkers")
@click.argument("name", required=False)
@handle_errors
def list_checkers(name: str | None) -> None:
    """List the built-in checkers with their inputs, params and reason codes.

    NAME (e.g. structured-equal or structured-equal@1) shows one in full.

    \b
    Example:
      reprobundle checkers structured-equal@1
    """
    from .errors import UsageError

    registry = builtin_checkers.registry()
    chosen = [c for key, c in registry.items() if name in (None, key, c.name)]
    if not chosen:
        raise UsageError(f"no built-in checker {name!r}; known: {', '.join(registry)}")
    for found in chosen:
        click.echo(f"{found.key}  {found.summary}")
        if name is None:
            continue
        click.echo("")
        click.echo(found.doc)
        click.echo("\ninputs:")
        for role in found.roles:
            shape = "list of paths" if role.many else ("folder" if role.kind.value == "tree" else "path")
            optional = ", optional" if role.optional else ""
            click.echo(f"  {role.name} ({role.kind.value}, {shape}{optional}): {role.doc}")
        click.echo("params:")
        for param in found.params:
            default = "required" if param.required else f"default {json.dumps(param.default)}"
            click.echo(f"  {param.name} ({default}): {param.doc}")
        if not found.params:
            click.echo("  (none)")
        click.echo("reason codes:")
        for code, meaning in found.reasons.items():
            click.echo(f"  {code}: {meaning}")
        click.echo("")
