"""The ``--help`` of every command, as recorded in ``tests/golden/help.txt``.

``tests/cli/test_help_text.py`` compares each command's help with the file, byte for
byte: a change of how the command line is declared or loaded (lazily imported command
modules, shared option declarations) must not change a word a user reads. After an
intended change of a help text, regenerate and review the diff:

    python tests/golden/regenerate_help.py

Each help is what ``reprobundle WORDS --help`` prints through click's runner with the
program name ``reprobundle``, at the width the command line allows (100 columns).
"""

from __future__ import annotations

import sys
from pathlib import Path

import click
from click.testing import CliRunner

REPO = Path(__file__).resolve().parents[2]
HELP = Path(__file__).resolve().parent / "help.txt"
WIDTH = 100


def commands() -> list[tuple[str, ...]]:
    """The top-level command and every command and subcommand, as the words naming it."""
    from bundler.cli import main

    found: list[tuple[str, ...]] = []

    def walk(command: click.Command, words: tuple[str, ...]) -> None:
        found.append(words)
        if isinstance(command, click.Group):
            context = click.Context(command)
            for name in command.list_commands(context):
                sub = command.get_command(context, name)
                assert sub is not None
                walk(sub, (*words, name))

    walk(main, ())
    return found


def help_text(words: tuple[str, ...]) -> str:
    from bundler.cli import main

    result = CliRunner().invoke(
        main, [*words, "--help"], prog_name="reprobundle", terminal_width=WIDTH
    )
    assert result.exit_code == 0, result.output
    return result.output


def recorded() -> str:
    """Every help, each under a line naming its command."""
    return "".join(
        f"=== reprobundle {' '.join((*words, '--help'))}\n{help_text(words)}"
        for words in commands()
    )


if __name__ == "__main__":
    sys.path.insert(0, str(REPO))
    HELP.write_text(recorded(), encoding="utf-8")
    print(f"wrote {HELP.relative_to(REPO)}")
