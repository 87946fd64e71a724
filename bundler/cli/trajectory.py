"""``reprobundle trajectory``: learn a skeleton from reference traces, check a trace.

A thin shell: read files, call :mod:`checkers.trajectory.skeleton`, write the model atomically,
echo the explanation. Exit codes: 0 pass (or learned), 1 the trace fails, 2 usage
error or unreadable/invalid input, 5 a bug (``handle_errors``).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from bundler.cli._shared import exit_help, handle_errors
from bundler.codes import COMMAND_EXITS
from bundler.errors import UsageError, one_line
from bundler.format import documents
from bundler.output import write_bytes
from bundler.reports.formats import json_text
from checkers.api import CheckerInputError
from checkers.trajectory.draw import RENDERERS
from checkers.trajectory.skeleton import (
    MODEL_FORMATS,
    Equivalence,
    Model,
    Trace,
    learn,
    match,
    parse_trace,
    read_back,
)


def load_document(path: Path) -> Any:
    """A JSON, YAML or JSON Lines file, parsed (JSON Lines as ``(line, value)`` pairs), as
    the runner reads a case's input."""
    kind = documents.kind_of(path.name)
    if kind is None:
        raise UsageError(f"{path}: expected a .yaml, .yml, .json or .jsonl file")
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise UsageError(f"{path}: cannot read: {exc.strerror or exc}") from None
    try:
        return documents.parse(documents.decode(data, str(path)), str(path), kind)
    except documents.DocumentProblem as exc:
        raise UsageError(str(exc)) from None


def _trace(path: Path) -> Trace:
    try:
        return parse_trace(load_document(path))
    except CheckerInputError as exc:
        raise UsageError(f"{path}: {exc.message}") from None
    except RecursionError:
        raise UsageError(f"{path}: nested too deeply to read") from None


def _model(path: Path) -> Model:
    try:
        return Model.from_dict(load_document(path), formats=MODEL_FORMATS)
    except CheckerInputError as exc:
        raise UsageError(f"{path}: {exc.message}") from None
    except RecursionError:
        raise UsageError(f"{path}: nested too deeply to read") from None


_FORMAT = click.option(
    "--format",
    "fmt",
    type=click.Choice(sorted(RENDERERS)),
    default="text",
    show_default=True,
    help="text: what was learned; mermaid or dot: a drawing of the skeleton "
    "(essential states bold, optional ones dashed).",
)


@click.group(
    epilog=exit_help("0 learned, shown, or the trace passes", "1 the trace fails", "2 usage error")
)
def trajectory() -> None:
    """Learn the skeleton of successful runs from reference traces and check a trace.

    \b
    Example:
      reprobundle trajectory learn refs/*.yaml -o model.json --format mermaid
      reprobundle trajectory check model.json new-run.yaml
    """


@trajectory.command(
    "learn", epilog=exit_help("0 the model was written", "2 usage error (unreadable traces)")
)
@click.argument("traces", nargs=-1, required=True, type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "-o",
    "--output",
    required=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help="Where to write the model (JSON).",
)
@click.option(
    "--params",
    "params_file",
    type=click.Path(dir_okay=False, path_type=Path),
    help="A YAML/JSON file {identity: [...], normalise: [{field, pattern, replace}]}.",
)
@click.option(
    "--identity",
    multiple=True,
    metavar="FIELD",
    help="A field that defines a state (label or an attribute); repeatable. Default: label.",
)
@click.option(
    "--normalise",
    multiple=True,
    nargs=2,
    metavar="FIELD PATTERN",
    help="Delete what PATTERN (a regular expression) matches in FIELD ('*' = every "
    "identity field) before comparing; repeatable.",
)
@click.option(
    "--model-format",
    type=click.Choice(["1", "2"]),
    default="2",
    show_default=True,
    help="2: canonical identity text, unique state ids, repeated steps "
    "(trajectory-skeleton@2); 1: the format trajectory-skeleton@1 reads.",
)
@click.option(
    "--force", is_flag=True, help="Replace an existing -o file that is not a trajectory model."
)
@_FORMAT
@handle_errors
def learn_command(
    traces: tuple[Path, ...],
    output: Path,
    params_file: Path | None,
    identity: tuple[str, ...],
    normalise: tuple[tuple[str, str], ...],
    model_format: str,
    force: bool,
    fmt: str,
) -> None:
    """Learn a model from 2-10 successful reference TRACES (YAML, JSON or JSON Lines).

    Prints the essential states in order, the optional ones, and every state the merge
    guard kept essential; the model file records the merge decisions.

    \b
    Example:
      reprobundle trajectory learn runs/r*.yaml --params equivalence.yaml -o model.json
      reprobundle trajectory learn runs/r*.yaml -o model.json --format mermaid > skeleton.mmd
    """
    from bundler.output import TRAJECTORY_MODEL, check_output

    check_output(output, TRAJECTORY_MODEL, "-o", force)
    base: dict[str, Any] = {"identity": ["label"], "normalise": []}
    if params_file is not None:
        loaded = load_document(params_file)
        if not isinstance(loaded, dict) or not set(loaded) <= {"identity", "normalise"}:
            raise UsageError(f"{params_file}: expected a mapping with identity and normalise")
        base.update(loaded)
    if identity:
        base["identity"] = list(identity)
    rules = list(base.get("normalise") or [])
    rules += [{"field": field, "pattern": pattern} for field, pattern in normalise]
    try:
        equivalence = Equivalence.from_params(base.get("identity"), rules)
        chosen = MODEL_FORMATS[int(model_format) - 1]
        model = learn([_trace(path) for path in traces], equivalence, chosen)
    except CheckerInputError as exc:
        raise UsageError(exc.message) from None
    try:
        # read back as `check` reads it: never write a model that check would refuse
        document = read_back(model)
    except CheckerInputError as exc:
        raise UsageError(
            f"the learned model would be refused, so it is not written: {exc.message}"
        ) from None
    write_bytes(output, json_text(document).encode("utf-8"))
    click.echo(RENDERERS[fmt](model, one_line))
    if fmt == "text":
        click.echo(one_line(f"model written to {output}"))


@trajectory.command(
    "check",
    epilog=exit_help("0 the trace passes", "1 the trace fails", "2 usage error"),
)
@click.argument("model_path", metavar="MODEL", type=click.Path(dir_okay=False, path_type=Path))
@click.argument("trace_path", metavar="TRACE", type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True
)
@handle_errors
def check_command(model_path: Path, trace_path: Path, fmt: str) -> None:
    """Check that TRACE reaches the essential states of MODEL in order (exit 1 if not).

    \b
    Example:
      reprobundle trajectory check model.json runs/new.yaml
    """
    result = match(_model(model_path), _trace(trace_path))
    if fmt == "json":
        report = {
            "status": "pass" if result.passed else "fail",
            "message": result.explain(),
            "reasons": [
                {"code": p.code, "message": p.message, "details": dict(p.details)}
                for p in result.problems
            ],
            **result.details(),
        }
        click.echo(json_text(report), nl=False)
    else:
        click.echo(one_line(("PASS: " if result.passed else "FAIL: ") + result.explain()))
        for problem in result.problems:
            click.echo(one_line(f"  {problem.code}: {problem.message}"))
    if not result.passed:
        sys.exit(COMMAND_EXITS["failed"])


@trajectory.command("show", epilog=exit_help("0 shown", "2 usage error"))
@click.argument("model_path", metavar="MODEL", type=click.Path(dir_okay=False, path_type=Path))
@_FORMAT
@handle_errors
def show_command(model_path: Path, fmt: str) -> None:
    """Explain or draw a learned MODEL.

    \b
    Example:
      reprobundle trajectory show model.json --format dot | dot -Tsvg > skeleton.svg
    """
    click.echo(RENDERERS[fmt](_model(model_path), one_line))
