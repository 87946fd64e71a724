"""The `import` group: bundle sources from the eval logs people already have."""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from bundler.cli._shared import exit_help, handle_errors

IMPORT_EXIT_HELP = exit_help(
    "0 the bundle source was written",
    "2 usage error, or a log it cannot read or that exceeds verify's caps (named in the message)",
)

F = TypeVar("F", bound=Callable[..., Any])

if TYPE_CHECKING:
    from bundler.importers import Imported


@click.group(name="import", epilog=IMPORT_EXIT_HELP)
def import_group() -> None:
    """Write a bundle source from an eval harness's log, ready for `reprobundle build`.

    \b
    Example:
      reprobundle import inspect logs/2026-12-01T09-27-49_task.eval -o mybundle
      reprobundle build mybundle
    """


def _source_options(given: str, default_name: str) -> Callable[[F], F]:
    """The options every importer takes (where to write, name, version) and its errors."""

    def wrap(function: F) -> F:
        function = handle_errors(function)
        function = click.option(
            "--version", "version", default="1.0.0", show_default=True, help="Bundle version."
        )(function)
        function = click.option(
            "--name", default=None, help=f"Bundle name (default: {default_name})."
        )(function)
        return click.option(
            "-o",
            "--output",
            "output",
            type=click.Path(path_type=Path),
            default=None,
            help="The bundle source folder to write (new or empty). "
            f"Default: NAME beside the {given}.",
        )(function)

    return wrap


def _layout_option(split: str, whole: str) -> Callable[[F], F]:
    """How an importer lays out what it writes (issue 45 item 5): split by default, so that
    the sensitive part can be withheld (`reprobundle redact`) while the figures stay
    checkable; the whole log as one input only when asked."""
    return click.option(
        "--split/--whole-log",
        "split",
        default=True,
        show_default=True,
        help=f"--split: {split}, so `reprobundle redact --withhold 'inputs/transcripts/**'` "
        f"keeps them checkable. --whole-log: {whole} (the layout before issue 45).",
    )


@import_group.command(name="inspect", epilog=IMPORT_EXIT_HELP)
@click.argument("log", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@_source_options("log", "inspect-LOG, from the log's file name: its time and task")
@_layout_option(
    "the log (with its transcripts) under inputs/transcripts/ and the figures checked on a "
    "scores file without transcripts",
    "the log under inputs/, the one input every case reads",
)
def inspect(log: Path, output: Path | None, name: str | None, version: str, split: bool) -> None:
    """Import an Inspect AI log (.eval or .json) as a bundle source.

    The log is copied unchanged. Each figure of its header (per scorer, reducer and
    metric) becomes a case that re-derives it from the per-sample scores; the sample
    counts, a success status hiding errored samples (a finding), a run that did not
    finish (a finding: what ran, what did not, and why), and the deterministic scorers
    (match, includes, exact, pattern) re-scored from completion and target become cases
    too, each with a negative control. Claims state every denominator both ways: errors
    dropped, and errors counted as failures. The log is read under verify's caps.

    By default (--split) the transcripts (prompts, completions, targets, answers) stay in
    the log under inputs/transcripts/, and the figures, counts and status are checked on a
    scores file beside it (inspect-metric@5, inspect-counts@4, inspect-status@3); the
    re-scoring and the check that the scores file is the log's read the transcripts, each
    its own claim. Redacting the transcripts then leaves only those claims unchecked.
    --whole-log keeps the log as the one input every case reads.

    \b
    Example:
      reprobundle import inspect run.eval -o run-bundle && reprobundle build run-bundle
    """
    from bundler.importers import slug
    from bundler.importers.inspect_eval import import_inspect

    name = name or f"inspect-{slug(log.stem)}"[:64].rstrip("-")  # one name per run
    target = output or log.parent / name
    _report(import_inspect(log, target, name=name, version=version, split=split))


@import_group.command(name="promptfoo", epilog=IMPORT_EXIT_HELP)
@click.argument("results", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@_source_options("file", "promptfoo-FOLDER-FILE, from where the results file is")
@_layout_option(
    "the results file (prompts, outputs, variables) under inputs/transcripts/ and the pass "
    "rate checked on a scores file without them",
    "the results file under inputs/, the one input every case reads",
)
def promptfoo(
    results: Path, output: Path | None, name: str | None, version: str, split: bool
) -> None:
    """Import promptfoo's results JSON (`promptfoo eval -o results.json`) as a bundle source.

    The file is copied unchanged. Its totals and pass rate (errors in the denominator)
    are re-counted from the rows, and every deterministic assertion (equals, contains,
    icontains, contains-any/-all, starts-with, regex, is-json and their not- forms) is
    re-run on the stored outputs, each with a negative control. Model-graded and code
    assertions are listed as not re-run. By default (--split) the file is kept under
    inputs/transcripts/ and the totals are checked on a scores file without the
    transcripts; --whole-log checks them on the file itself.

    \b
    Example:
      reprobundle import promptfoo results.json -o pf-bundle && reprobundle build pf-bundle
    """
    from bundler.importers import slug
    from bundler.importers.promptfoo import import_promptfoo

    where = f"{slug(results.absolute().parent.name)}-{slug(results.stem)}"
    name = name or f"promptfoo-{where}"[:64].rstrip("-")  # one name per results file
    target = output or results.parent / name
    _report(import_promptfoo(results, target, name=name, version=version, split=split))


@import_group.command(name="lm-eval", epilog=IMPORT_EXIT_HELP)
@click.argument("path", type=click.Path(exists=True, path_type=Path))
@_source_options("run", "lm-eval-STAMP, from the run's results_STAMP.json")
@_layout_option(
    "the samples files (documents, prompts, responses) under inputs/transcripts/ and the "
    "figures and counts checked on sample scores files without them",
    "the samples files under inputs/, the figures and counts checked on them",
)
def lm_eval(path: Path, output: Path | None, name: str | None, version: str, split: bool) -> None:
    """Import an lm-evaluation-harness run (its output folder or results_*.json).

    The results file and the run's samples files (--log_samples) are copied unchanged.
    Per task: the sample counts against n-samples and --limit, every stored hash
    (doc, prompt, target, task) recomputed, and each figure whose aggregation is the
    mean (with its stderr) re-derived from the per-sample values, each with a negative
    control. Other aggregations, bootstrap stderrs, group figures and every figure of a
    run without samples are listed as what the bundle cannot support. By default
    (--split) the samples files are kept under inputs/transcripts/ and the figures and
    counts are checked on sample scores files without them; --whole-log checks them on
    the samples files themselves.

    \b
    Example:
      reprobundle import lm-eval out/ -o lm-bundle && reprobundle build lm-bundle
    """
    from bundler.importers import slug
    from bundler.importers.lm_eval import import_lm_eval

    name = name or _lm_eval_run_name(path)
    target = output or path.parent / (name or f"lm-eval-{slug(path.stem)}"[:64])
    _report(import_lm_eval(path, target, name=name, version=version, split=split))


RESULTS_STAMP = re.compile(r"results_(.+)\.json")
MAX_LOOKED_AT = 10_000  # entries looked at for the default name (the importer has its caps)


def _lm_eval_run_name(path: Path) -> str | None:
    """A default bundle name that tells one lm-eval run from another: ``lm-eval-`` and
    the time stamp lm-eval gives its results file (``results_<stamp>.json``), so two runs
    of the same tasks never default to the same bundle name (and folder). None when
    ``path`` holds no single results file (the importer then says what it found)."""
    from itertools import islice

    from bundler.importers import slug

    def results_in(folder: Path) -> list[str]:
        try:
            with os.scandir(folder) as entries:
                return [
                    e.name
                    for e in islice(entries, MAX_LOOKED_AT)
                    if RESULTS_STAMP.fullmatch(e.name)
                ]
        except OSError:
            return []

    if path.is_file():
        found = [path.name] if RESULTS_STAMP.fullmatch(path.name) else []
    else:
        found = results_in(path)
        try:
            with os.scandir(path) as entries:
                folders = [
                    e.path
                    for e in islice(entries, MAX_LOOKED_AT)
                    if e.is_dir(follow_symlinks=False)
                ]
        except OSError:
            folders = []
        for folder in folders[:MAX_LOOKED_AT]:
            found += results_in(Path(folder))
    stamps = [m.group(1) for n in found if (m := RESULTS_STAMP.fullmatch(n))]
    return f"lm-eval-{slug(stamps[0])}"[:64].rstrip("-") if len(stamps) == 1 else None


def _report(done: Imported) -> None:
    click.echo(
        f"wrote {done.source}: {done.cases} cases, {len(done.claims)} claims "
        f"({', '.join(done.claims)})"
    )
    for note in done.notes:
        click.echo(f"note: {note}", err=True)
    click.echo(f"next: reprobundle build {done.source}")
