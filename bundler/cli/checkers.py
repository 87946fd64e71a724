"""The `checkers` command."""

from __future__ import annotations

import json

import click

import checkers as builtin_checkers
from bundler.cli._shared import exit_help, handle_errors


@click.command(
    "checkers",
    epilog=exit_help("0 listed", "2 no built-in checker has that name (usage error)"),
)
@click.argument("name", required=False)
@handle_errors
def list_checkers(name: str | None) -> None:
    """List the built-in checkers with their inputs, params and reason codes.

    Of a checker with several versions, the newest is marked (current): a new bundle names
    it; the older ones stay so that old bundles keep verifying as they did.
    NAME (e.g. structured-equal or structured-equal@1) shows one in full.

    \b
    Example:
      reprobundle checkers structured-equal@1
    """
    from bundler.errors import UsageError

    registry = builtin_checkers.registry()
    chosen = [c for key, c in registry.items() if name in (None, key, c.name)]
    if not chosen:
        import difflib

        close = difflib.get_close_matches(
            str(name), [*registry, *(c.name for c in registry.values())], n=1
        )
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise UsageError(f"no built-in checker {name!r}{hint}; known: {', '.join(registry)}")
    newest: dict[str, int] = {}
    versions: dict[str, int] = {}
    for checker in registry.values():
        newest[checker.name] = max(newest.get(checker.name, 0), checker.version)
        versions[checker.name] = versions.get(checker.name, 0) + 1
    for found in chosen:
        mark = ""
        if versions[found.name] > 1:  # which one a new bundle should name
            current = newest[found.name]
            mark = (
                "(current)  " if found.version == current else f"(older; @{current} is current)  "
            )
        click.echo(f"{found.key}  {mark}{found.summary}")
        if name is None:
            continue
        click.echo("")
        click.echo(found.doc)
        click.echo("\ninputs:")
        for role in found.roles:
            shape = (
                "list of paths"
                if role.many
                else ("folder" if role.kind.value == "tree" else "path")
            )
            optional = ", optional" if role.optional else ""
            reads = "".join(
                text
                for on, text in (
                    (role.reading.yaml_aliases, ", YAML aliases expanded"),
                    (role.reading.json_constants, ", NaN/Infinity read"),
                    (role.reading.lines_at_newline, ", lines end at \\n only"),
                )
                if on
            )
            click.echo(f"  {role.name} ({role.kind.value}, {shape}{optional}{reads}): {role.doc}")
        click.echo("params:")
        for param in found.params:
            default = "required" if param.required else f"default {json.dumps(param.default)}"
            shown = "; ".join(filter(None, [default, param.range]))
            states = (
                f" [a wrong value fails with {', '.join(param.states)}]" if param.states else ""
            )
            click.echo(f"  {param.name} ({shown}): {param.doc}{states}")
        if not found.params:
            click.echo("  (none)")
        click.echo(
            "reason codes (verdict fail; a case that expects fail names them in expect_reasons):"
        )
        for code, meaning in found.reasons.items():
            click.echo(f"  {code}: {meaning}")
        click.echo("error codes (verdict error: the case is inconclusive, never a pass or a fail):")
        for code, meaning in found.all_reasons.items():
            if code not in found.reasons:
                click.echo(f"  {code}: {meaning}")
        click.echo("")
