"""What every command shares: error handling, exit codes, limit options, JSON output."""

from __future__ import annotations

import contextlib
import functools
import io
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from bundler.codes import COMMAND_EXITS, EXIT_CODES
from bundler.container.extract import Limits
from bundler.errors import BundlerError, one_line

F = TypeVar("F", bound=Callable[..., Any])

EXIT_INTERNAL = EXIT_CODES["error"]  # the verifier itself failed


# what any command can end with besides its own codes (handle_errors gives them)
STOPPED = "130 interrupted by Ctrl-C, 143 by SIGTERM, 129 by SIGHUP (nothing is left behind)"


def exit_help(*codes: str) -> str:
    """A command's own exit codes for its ``--help`` (the internal error, 5, and the
    codes of a command stopped by a signal are added)."""
    import textwrap

    listed = " · ".join([*codes, "5 internal error (a bug in reprobundle)", STOPPED])
    return "\b\n" + "\n".join(textwrap.wrap("Exit codes: " + listed, 88, break_on_hyphens=False))


EXIT_HELP = exit_help(
    "0 every claim supported",
    "1 a claim contradicted",
    "2 usage error",
    "3 bundle rejected (integrity, format, signature, trust; nothing ran)",
    "4 inconclusive",
)


def handle_errors(function: F) -> F:
    """Map library errors to messages and exit codes; no traceback for any input.

    Before the command runs, its outputs are checked against its inputs
    (``bundler.output.check_distinct``); while it runs, SIGTERM and SIGHUP unwind it like
    Ctrl-C does, so nothing it made is left behind; an OS error that escapes it is a
    usage error naming the path (exit 2)."""

    @functools.wraps(function)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        from bundler.container.workfolder import Stopped, exiting_on_signals

        _never_unprintable()
        try:
            with exiting_on_signals():
                _check_outputs()
                return function(*args, **kwargs)
        except BundlerError as exc:
            echo_error(exc)
            sys.exit(exc.exit_code)
        except Stopped as exc:
            click.echo(f"reprobundle: stopped by {exc.signal_name}{_notes(exc)}", err=True)
            raise
        except (click.exceptions.Exit, click.ClickException, click.Abort, SystemExit):
            raise
        except KeyboardInterrupt as exc:
            click.echo(f"reprobundle: interrupted{_notes(exc)}", err=True)
            sys.exit(COMMAND_EXITS["interrupted"])
        except BrokenPipeError:
            # the reader went away (`... | head`): not an error of ours; say nothing more
            sys.stdout = open(os.devnull, "w")  # noqa: SIM115 (the final flush goes here)
            sys.exit(COMMAND_EXITS["broken_pipe"])
        except OSError as exc:
            click.echo(log_lines(f"reprobundle: {one_line(os_problem(exc))}"), err=True)
            sys.exit(COMMAND_EXITS["usage"])
        except Exception as exc:
            verbose = _has_option("verbose")
            if os.environ.get(VERBOSE_ENV) or kwargs.get("verbose"):
                import traceback

                traceback.print_exc()
            how = "--verbose" if verbose else f"{VERBOSE_ENV}=1 set"
            click.echo(
                log_lines(
                    f"reprobundle: internal error ({type(exc).__name__}: {one_line(exc)}); this "
                    f"is a bug in reprobundle, not a verdict on the bundle. Re-run with {how} "
                    "for details."
                ),
                err=True,
            )
            sys.exit(EXIT_INTERNAL)

    return wrapper  # type: ignore[return-value]


VERBOSE_ENV = "REPROBUNDLE_VERBOSE"


def _notes(exc: BaseException) -> str:
    """What the library noted on an interruption (a kept work folder's path), as
    ``; note`` each, escaped for the log."""
    notes = getattr(exc, "__notes__", [])
    return log_lines("".join(f"; {one_line(note)}" for note in notes))


def echo_error(exc: BundlerError) -> None:
    """Print a refusal as every command prints it: ``reprobundle:``, the headline and a
    line per problem, escaped for the log it goes to."""
    click.echo(log_lines(f"reprobundle: {exc.diagnostics()}"), err=True)


class _RunnerLog(io.TextIOBase):
    """A text stream whose every line is escaped for a CI runner's log on its way to
    ``stream`` (``bundler.reports.cilog.LineFilter``); bytes written to ``buffer`` (a
    bundle sent to stdout) pass as they are."""

    def __init__(self, stream: Any, runner: str) -> None:
        from bundler.reports.cilog import LineFilter

        self.stream = stream
        self.filter = LineFilter(runner)

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return str(getattr(self.stream, "encoding", None) or "utf-8")

    @property
    def errors(self) -> str | None:  # type: ignore[override]
        return getattr(self.stream, "errors", None)

    @property
    def buffer(self) -> Any:
        return self.stream.buffer

    def writable(self) -> bool:
        return True

    def isatty(self) -> bool:
        return is_terminal(self.stream)

    def fileno(self) -> int:
        return int(self.stream.fileno())

    def write(self, text: str) -> int:
        if not isinstance(text, str):
            raise TypeError(f"write() argument must be str, not {type(text).__name__}")
        out = self.filter.feed(text)
        if out:
            self.stream.write(out)
        return len(text)

    def flush(self) -> None:
        self.stream.flush()

    def finish(self) -> None:
        rest = self.filter.finish()
        if rest:
            self.stream.write(rest)
        self.stream.flush()


@contextlib.contextmanager
def runner_log() -> Any:
    """While a command runs in a CI runner (``GITHUB_ACTIONS``, ``GITLAB_CI``), every line
    it prints on stdout and stderr, whoever prints it, is escaped for that runner's log:
    no bundle text, file name or message can become a workflow command or a log marker."""
    from bundler.reports.cilog import runner_of

    runner = runner_of(os.environ)
    if runner == "plain":
        yield
        return
    saved = sys.stdout, sys.stderr
    out, err = (s if _is_file(s) else _RunnerLog(s, runner) for s in saved)
    sys.stdout, sys.stderr = out, err
    try:
        yield
    finally:
        for stream in (out, err):
            if isinstance(stream, _RunnerLog):
                with contextlib.suppress(OSError, ValueError):
                    stream.finish()
        sys.stdout, sys.stderr = saved


def _is_file(stream: Any) -> bool:
    """Whether ``stream`` is a regular file (``> summary.md``): the runner never reads it
    as its log, and a report written there stays byte for byte what the command wrote."""
    import stat

    try:
        return stat.S_ISREG(os.fstat(stream.fileno()).st_mode)
    except (AttributeError, OSError, ValueError, io.UnsupportedOperation):
        return False


def log_lines(text: str) -> str:
    """``text`` (our lines; each piece from outside already on one line) escaped for the
    log it goes to: in a CI runner's log no line can be read as a command
    (``bundler.reports.cilog``)."""
    from bundler.reports.cilog import lines, runner_of

    return lines(text, runner_of(os.environ))


# the parameters that name a file a command writes; every other click.Path it is given
# is read (the archive folder, written only by the archive itself, holds no output)
OUTPUT_PARAMS = (
    "json_target",
    "markdown_target",
    "junit_target",
    "html_target",
    "attest_target",
    "output",
    "out",
    "summary",
)


def _has_option(name: str) -> bool:
    context = click.get_current_context(silent=True)
    return context is not None and any(p.name == name for p in context.command.params)


def _check_outputs() -> None:
    """``bundler.output.check_distinct`` over the running command's parameters (and its
    groups'): outputs against inputs, and against each other."""
    from bundler.output import check_distinct

    context = click.get_current_context(silent=True)
    outputs: dict[str, Any] = {}
    inputs: dict[str, Any] = {}
    folders: dict[str, Any] = {}
    while context is not None:
        for param in context.command.params:
            value = context.params.get(param.name or "")
            if value is None or not isinstance(param.type, click.Path):
                if param.name in OUTPUT_PARAMS and isinstance(value, str):
                    outputs[_label(param)] = value
                continue
            values = value if isinstance(value, tuple) else (value,)
            for one in values:
                if param.name in OUTPUT_PARAMS:
                    outputs[_label(param)] = one
                elif param.name == "root":
                    folders["the archive folder"] = one
                else:
                    inputs[f"{_label(param)} {one}" if param.multiple else _label(param)] = one
        context = context.parent
    check_distinct(outputs, inputs, folders)


def _label(param: click.Parameter) -> str:
    """How the user wrote the parameter: ``--json``, ``BUNDLE``."""
    if isinstance(param, click.Option):
        return max(param.opts, key=len)
    return param.human_readable_name


def os_problem(exc: OSError) -> str:
    """An OS error as a usage error's message: the path(s) and what went wrong."""
    from bundler.errors import os_reason

    reason = os_reason(exc)
    paths = [p for p in (exc.filename, exc.filename2) if p is not None]
    where = " -> ".join(os.fsdecode(p) if isinstance(p, bytes) else str(p) for p in paths)
    return f"{where}: {reason}" if where else f"{reason} (an operating system error)"


def _never_unprintable() -> None:
    """Printing never fails on text that is not valid Unicode (a lone surrogate from a
    ``\\ud800`` escape in evidence, or a name that was not UTF-8): it is shown escaped."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            with contextlib.suppress(Exception):
                reconfigure(errors="backslashreplace")


# --max-* option -> the Limits field it sets, and its --help (in --help order)
LIMIT_OPTIONS = (
    ("--max-archive-bytes", "archive_bytes", "Largest bundle file accepted."),
    ("--max-members", "members", "Most archive members accepted."),
    ("--max-file-bytes", "file_bytes", "Largest single file accepted."),
    ("--max-total-bytes", "total_bytes", "Most bytes unpacked in all."),
    ("--max-manifest-bytes", "manifest_bytes", "Largest manifest (and signature file) accepted."),
    ("--max-ratio", "ratio", "Highest compression ratio accepted (bombs)."),
)


def limit_options(function: F) -> F:
    """The ``--max-*`` options, one per field of ``Limits``, with its defaults."""
    defaults = Limits()
    for flag, field, text in reversed(LIMIT_OPTIONS):
        function = click.option(
            flag,
            type=click.IntRange(1),
            default=getattr(defaults, field),
            show_default=True,
            help=text,
        )(function)
    return function


def trust_options(whose: str = "you trust") -> Callable[[F], F]:
    """``--trust`` and ``--trust-store``, declared once for every command that judges
    signatures; ``whose`` says what the keys are for in that command's ``--help``. The
    values go to ``bundler.signatures.truststore.load_trusted_keys`` (or ``load_policy``)."""

    def decorate(function: F) -> F:
        function = click.option(
            "--trust-store",
            type=click.Path(path_type=Path, dir_okay=False),
            help=f"A trust store file of keys {whose}: names, validity, revocation, code "
            "permission.",
        )(function)
        return click.option(
            "--trust",
            "trust_files",
            multiple=True,
            type=click.Path(path_type=Path, dir_okay=False),
            help=f"A public key file {whose} (repeatable).",
        )(function)

    return decorate


def accept_advisory_option(function: F) -> F:
    """``--accept-advisory ID``, declared once for every command that verifies (verify,
    report and ci through verify's judging options; build; archive verify). The ids go to
    the verifier, which refuses an unknown one (``bundler.format.claims``)."""
    return click.option(
        "--accept-advisory",
        "accept_advisory",
        multiple=True,
        metavar="ID",
        help="Judge cases on a checker version with this advisory as if it had none "
        "(repeatable; `reprobundle checkers --advisories` lists them). Without it, a claim "
        "resting on an advised version is inconclusive.",
    )(function)


def limits_from(options: dict[str, int]) -> Limits:
    """The ``Limits`` the ``--max-*`` options (as click passes them) ask for."""
    values = {field: options[flag[2:].replace("-", "_")] for flag, field, _ in LIMIT_OPTIONS}
    return Limits(**values)


def write_json(target: str, data: dict[str, Any], what: str = "the JSON") -> None:
    from bundler.reports.formats import json_text

    write_text(target, json_text(data), what)


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


PASSPHRASE_ENV = "REPROBUNDLE_PASSPHRASE"


def ask_passphrase(confirm: bool, otherwise: str = "") -> bytes:
    """From ``$REPROBUNDLE_PASSPHRASE``, else asked for on the terminal; with no terminal
    to ask on (``< /dev/null``, a CI job) a usage error saying what to do instead."""
    from bundler.errors import UsageError

    from_env = os.environ.get(PASSPHRASE_ENV)
    if from_env is not None:
        return from_env.encode("utf-8")
    if not is_terminal(sys.stdin):
        raise UsageError(
            "a passphrase is needed, but standard input is not a terminal to ask it on: "
            f"set ${PASSPHRASE_ENV}{otherwise}"
        )
    try:
        text: str = click.prompt(
            "Passphrase for the private key", hide_input=True, confirmation_prompt=confirm, err=True
        )
    except click.Abort:  # end of input or Ctrl-C at the prompt
        raise UsageError("no passphrase was given; nothing was written") from None
    return text.encode("utf-8")
