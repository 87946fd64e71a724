"""No command of the command line imports another (issue 44, item 1).

A command module (``bundler/cli/*.py`` that declares a click command or group) takes what
it shares with other commands from a module below them (``_shared``, ``_verifying``, a
helper module that declares no command), so the CLI has two floors: helpers, commands.
Read from the code's imports (every import, in functions and under ``if TYPE_CHECKING:``
too); ``bundler/cli/__init__.py``, which gathers the commands into one group, is not a
command module.
"""

from __future__ import annotations

import ast
from pathlib import Path

from tests.project.test_layers import imports

REPO = Path(__file__).resolve().parents[2]
CLI = REPO / "bundler" / "cli"


def declares_a_command(source: str) -> bool:
    """Whether ``source`` declares a click command or group (``@click.command``,
    ``@click.group``, ``@GROUP.command``)."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.FunctionDef):
            for decorator in node.decorator_list:
                call = decorator.func if isinstance(decorator, ast.Call) else decorator
                if isinstance(call, ast.Attribute) and call.attr in ("command", "group"):
                    return True
    return False


def commands_importing_commands(sources: dict[str, str]) -> list[str]:
    """``A imports B`` for each command module A of ``sources`` (module name -> text)
    that imports another command module B."""
    commands = {name for name, text in sources.items() if declares_a_command(text)}
    found = []
    for name in sorted(commands):
        imported = imports(name, sources[name], sources, is_package=False, everywhere=True)
        found += [f"{name} imports {other}" for other in sorted(imported & commands - {name})]
    return found


def cli_sources() -> dict[str, str]:
    return {
        f"bundler.cli.{path.stem}": path.read_text("utf-8")
        for path in sorted(CLI.glob("*.py"))
        if path.name != "__init__.py"
    }


def test_no_command_module_imports_another() -> None:
    sources = cli_sources()
    assert {"bundler.cli.verify", "bundler.cli.report", "bundler.cli.ci"} <= {
        name for name, text in sources.items() if declares_a_command(text)
    }
    assert commands_importing_commands(sources) == []


def test_a_planted_import_of_one_command_by_another_is_found() -> None:
    sources = cli_sources()
    sources["bundler.cli.ci"] += (
        "\n\ndef later() -> None:\n    from bundler.cli.report import report\n"
    )
    assert commands_importing_commands(sources) == ["bundler.cli.ci imports bundler.cli.report"]


def test_a_helper_module_below_the_commands_is_not_a_command() -> None:
    sources = cli_sources()
    assert not declares_a_command(sources["bundler.cli._verifying"])
    assert not declares_a_command(sources["bundler.cli._shared"])
