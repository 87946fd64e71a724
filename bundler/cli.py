"""The command line: a click group over one module per command (``bundler/commands``).

Library errors carry their problems and exit code; ``commands._shared.handle_errors``
turns them into a message and that exit code, once. Anything else is a bug, reported
as an internal error (exit 5), with a traceback only under ``--verbose``.
"""

from __future__ import annotations

import click

from . import __version__
from .commands import (
    archive,
    build,
    checkers,
    diff,
    init,
    inspect,
    keys,
    report,
    trajectory,
    verify,
)


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
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


for command in (
    init.init,
    build.build,
    verify.verify,
    inspect.inspect,
    checkers.list_checkers,
    trajectory.trajectory,
    report.report,
    diff.diff,
    archive.archive,
    keys.keygen,
    keys.sign,
):
    main.add_command(command)
