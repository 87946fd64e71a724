"""The `checkers` command."""

from __future__ import annotations

import json

import click

import checkers as builtin_checkers
from bundler.cli._shared import exit_help, handle_errors


def show_advisories(as_json: bool) -> None:
    """Every shipped advisory: a paragraph each, or the files' fields as JSON."""
    from bundler.format.advisories import advisories

    found = advisories()
    if as_json:
        click.echo(json.dumps({"advisories": [a.to_dict() for a in found]}, indent=2))
        return
    for advisory in found:
        click.echo(
            f"{advisory.id}  {', '.join(advisory.affected)}  (published {advisory.published})"
        )
        click.echo(f"  {advisory.summary}")
        click.echo(f"  can make supported: {advisory.can_make_supported}")
        click.echo(f"  fixed in: {', '.join(advisory.fixed_in)}")
        click.echo(f"  {advisory.details}")
        click.echo(f"  tests: {', '.join(advisory.tests)}")
        click.echo("")
    click.echo(
        f"{len(found)} advisories. verify, report, ci, build and archive verify judge a claim "
        "resting on an advised version inconclusive unless given --accept-advisory ID."
    )


@click.command(
    "checkers",
    epilog=exit_help("0 listed", "2 no built-in checker has that name (usage error)"),
)
@click.argument("name", required=False)
@click.option(
    "--advisories",
    "list_advisories",
    is_flag=True,
    help="List the checker advisories (versions an author can make say supported against "
    "their evidence, and the versions that fix them).",
)
@click.option("--json", "as_json", is_flag=True, help="With --advisories: write them as JSON.")
@handle_errors
def list_checkers(name: str | None, list_advisories: bool, as_json: bool) -> None:
    """List the built-in checkers with their inputs, params and reason codes.

    Of a checker with several versions, the newest is marked (current): a new bundle names
    it; the older ones stay so that old bundles keep verifying as they did. A version with
    an advisory is marked too.
    NAME (e.g. structured-equal or structured-equal@1) shows one in full, with the
    advisories on it.

    \b
    Example:
      reprobundle checkers structured-equal@1
      reprobundle checkers --advisories --json
    """
    from bundler.errors import UsageError
    from bundler.format.advisories import of_checker

    if as_json and not list_advisories:
        raise UsageError("--json goes with --advisories")
    if list_advisories:
        if name is not None:
            raise UsageError("--advisories lists every advisory; `checkers NAME` shows one's")
        show_advisories(as_json)
        return
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
        advised = of_checker(found.key)
        warn = f"  [advisory {', '.join(a.id for a in advised)}]" if advised else ""
        click.echo(f"{found.key}  {mark}{found.summary}{warn}")
        if name is None:
            continue
        for advisory in advised:
            click.echo(
                f"ADVISORY {advisory.id}: {advisory.summary}. An author can make it say "
                f"supported for {advisory.can_make_supported}. Fixed in {advisory.fix}; "
                f"verify judges its claims inconclusive unless given --accept-advisory "
                f"{advisory.id}."
            )
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
