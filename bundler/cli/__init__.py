"""The command line: a click group over one module per command in this package.

Library errors carry their problems and exit code; ``bundler.cli._shared.handle_errors``
turns them into a message and that exit code, once. Anything else is a bug, reported
as an internal error (exit 5), with a traceback only under ``--verbose``.
"""

from __future__ import annotations

import importlib
from typing import Any

import click

from bundler.version import __version__

# command name -> "module:function" in this package, imported only when it runs
COMMANDS = {
    "archive": "archive:archive",
    "attestation": "attestation:attestation",
    "build": "build:build",
    "checkers": "checkers:list_checkers",
    "cite": "cite:cite",
    "ci": "ci:ci",
    "diff": "diff:diff",
    "import": "importer:import_group",
    "init": "init:init",
    "inspect": "inspect:inspect",
    "keygen": "keys:keygen",
    "preregister": "preregister:preregister",
    "redact": "redact:redact",
    "report": "report:report",
    "sign": "keys:sign",
    "trajectory": "trajectory:trajectory",
    "verify": "verify:verify",
}


class _Commands(click.Group):
    """A group that imports a command's module when that command is asked for, so that
    ``verify`` does not pay for loading ``archive`` or ``trajectory``."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        target = COMMANDS.get(cmd_name)
        if target is None:
            return None
        module, name = target.split(":")
        command = getattr(importlib.import_module(f"{__name__}.{module}"), name)
        assert isinstance(command, click.Command)
        return command

    def main(self, *args: Any, **kwargs: Any) -> Any:
        """Every command, click's own messages included, prints through the CI runner's
        escaping when it runs in one (``bundler.cli._shared.runner_log``)."""
        from bundler.cli._shared import runner_log

        with runner_log():
            return super().main(*args, **kwargs)


@click.group(
    cls=_Commands,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
)
@click.version_option(__version__, prog_name="reprobundle")
def main() -> None:
    """Build and verify reproducibility bundles: the evidence behind a report's claims,
    hashed and packed in one file that anyone can re-check.

    \b
    Typical use:
      reprobundle init mybundle            # a starter source to edit
      reprobundle build mybundle           # -> starter-0.1.0.bundle.tar.zst
      reprobundle verify starter-0.1.0.bundle.tar.zst
    """
