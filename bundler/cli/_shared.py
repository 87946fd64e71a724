"""What every command shares: error handling, exit codes, limit options, JSON output."""

from __future__ import annotations

import contextlib
import functools
import json
import os
import sys
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from bundler.container.extract import Limits
from bundler.errors import BundlerError

F = TypeVar("F", bound=Callable[..., Any])

EXIT_INTERNAL = 5


def exit_help(*codes: str) -> str:
    """A command's own exit codes for its ``--help`` (the internal error, 5, is added)."""
    import textwrap

    listed = " · ".join([*codes, "5 internal error (a bug in reprobundle)"])
    return "\b\n" + "\n".join(textwrap.wrap("Exit codes: " + listed, 88, break_on_hyphens=False))


EXIT_HELP = exit_help(
    "0 every claim supported",
    "1 a claim contradicted",
    "2 usage error",
    "3 bundle rejected (integrity, format, signature, trust; nothing ran)",
    "4 inconclusive",
)


def handle_errors(function: F) -> F:
    """Map library errors to messages and exit codes; no traceback for any input."""

    @functools.wraps(function)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        _never_unprintable()
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
        except BrokenPipeError:
            # the reader went away (`... | head`): not an error of ours; say nothing more
            sys.stdout = open(os.devnull, "w")  # noqa: SIM115 (the final flush goes here)
            sys.exit(141)
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


def _never_unprintable() -> None:
    """Printing never fails on text that is not valid Unicode (a lone surrogate from a
    ``\\ud800`` escape in evidence, or a name that was not UTF-8): it is shown escaped."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            with contextlib.suppress(Exception):
                reconfigure(errors="backslashreplace")


def limit_options(function: F) -> F:
    defaults = Limits()
    options = [
        click.option(
            "--max-archive-bytes",
            type=click.IntRange(1),
            default=defaults.archive_bytes,
            show_default=True,
            help="Largest bundle file accepted.",
        ),
        click.option(
            "--max-members",
            type=click.IntRange(1),
            default=defaults.members,
            show_default=True,
            help="Most archive members accepted.",
        ),
        click.option(
            "--max-file-bytes",
            type=click.IntRange(1),
            default=defaults.file_bytes,
            show_default=True,
            help="Largest single file accepted.",
        ),
        click.option(
            "--max-total-bytes",
            type=click.IntRange(1),
            default=defaults.total_bytes,
            show_default=True,
            help="Most bytes unpacked in all.",
        ),
        click.option(
            "--max-manifest-bytes",
            type=click.IntRange(1),
            default=defaults.manifest_bytes,
            show_default=True,
            help="Largest manifest (and signature file) accepted.",
        ),
        click.option(
            "--max-ratio",
            type=click.IntRange(1),
            default=defaults.ratio,
            show_default=True,
            help="Highest compression ratio accepted (bombs).",
        ),
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
        manifest_bytes=options["max_manifest_bytes"],
    )


def write_json(target: str, data: dict[str, Any], what: str = "the JSON") -> None:
    text = json.dumps(data, indent=2, ensure_ascii=False, sort_keys=False) + "\n"
    write_text(target, text, what)


def write_text(target: str, text: str, what: str = "the output") -> None:
    """Write an output by the rules of ``bundler.output``, or to stdout for ``-``."""
    if target == "-":
        click.echo(text, nl=not text.endswith("\n"))
    else:
        from bundler.output import encode, write_bytes

        write_bytes(Path(target), encode(text), what)


def is_terminal(stream: Any) -> bool:
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


class ProgressDisplay:
    """A progress bar on stderr for work that takes more than a moment.

    Nothing is drawn when stderr is not a terminal, when disabled (``--quiet``), or when
    the work ends within ``delay`` seconds; the bar is removed once the work is done.
    Colours follow rich's rules (none when ``NO_COLOR`` is set).
    """

    def __init__(self, enabled: bool, console: Any = None, delay: float = 0.5) -> None:
        self._timer: Any = None
        self._shown = False
        self._steps = 0
        self.delay = delay
        self.enabled = enabled and (console.is_terminal if console else is_terminal(sys.stderr))
        if not self.enabled:
            return  # (rich is not even imported: 30 ms less for every piped run)
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

        self.console = console or Console(stderr=True)
        self._progress = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            console=self.console,
            transient=True,
        )
        self._task = self._progress.add_task("starting", total=None)

    def __enter__(self) -> ProgressDisplay:
        if self.enabled:
            import threading

            self._timer = threading.Timer(self.delay, self.show)
            self._timer.daemon = True
            self._timer.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer.join()
        if self._shown:
            self._progress.stop()

    def show(self) -> None:
        """Draw the bar now rather than after the delay."""
        if self.enabled and not self._shown:
            self._shown = True
            self._progress.start()

    def cases(self, done: int, total: int, case_id: str) -> None:
        """For ``verify(progress=...)``: cases done of total."""
        if not self.enabled:
            return
        label = f"verifying: case {case_id}" if case_id else "verifying: done"
        self._progress.update(self._task, completed=done, total=total, description=label)

    BUILD_STEPS = 4  # reading, hashing, packing, verifying at home

    def step(self, name: str) -> None:
        """For ``build(progress=...)``: the step now starting."""
        self._steps += 1
        if not self.enabled:
            return
        self._progress.update(
            self._task,
            completed=self._steps - 1,
            total=max(self.BUILD_STEPS, self._steps),
            description=f"building: {name}",
        )
