"""An Inspect AI log (``.eval`` or ``.json``) -> a bundle source.

The log is copied unchanged into ``inputs/``. From its header and samples the importer
writes, with the ``inspect-*@2`` checkers (they compare the header with the samples
themselves; the params only restate what the log says):

- per scorer x reducer x metric of ``results``: a case re-deriving the figure from the
  per-sample scores, expecting the header's value, and one claim per scorer x reducer
  whose limits state the denominator both ways (errors dropped, errors counted as
  failures) and the revision (a dirty one flagged);
- the sample counts (total, completed, errored) as a case and a claim: the header's for
  a finished run, the records' own for one that did not finish (its header's total is
  the planned one);
- "the run says success while N samples errored" as a finding (a case expected to
  fail) with its own claim, saying what the figures do with the errored records as
  their stored scores show it (left out, or scored under ``--score-on-error``);
- for a run that did not finish (status error, cancelled, started): what ran, what did
  not and why as a finding (the planned total, and no errors, each a case expected to
  fail); every claim's limits say so, and name a ``--limit`` or ``--retry-on-error``;
- a clean run (success, results, no errored record) as a claim with a control (one
  record marked errored);
- a retried run (``eval_retry`` writes a re-run sample's entry a second time in the
  ``.eval`` zip): read as Inspect reads it, the last entry of each name; a finding (the
  zip's sample entries against the records read, a case expected to fail), and said in
  every other claim's limits, the scope and the notes, each superseded attempt named;
- per deterministic scorer (``match``, ``includes``, ``exact``, ``pattern`` with the
  options the log records): a case re-scoring every stored score from completion and
  target; model-graded and other scores go under ``cannot_support``;
- for every (checker, params) of a passing case, a negative control with the same
  checker and params on a copy of the log with one sample's stored score changed (or
  one record removed, for the counts), so each check is shown able to fail. A check no
  changed copy can make fail, or one that cannot decide here, is stated under
  ``cannot_support`` and no claim rests on it.

The log is read under verify's caps and every check runs under a case's limits
(``bundler.importers.untrusted``).

Every case is run once here, so the author learns at import time which figures do not
follow from the samples (their claims will be contradicted, and ``build`` refuses them).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bundler.errors import SourceError
from bundler.format.paths import path_problem
from bundler.importers import Checks, Imported, ImportLimits, read_log_file, slug, write_source
from bundler.importers.inspect_figures import figure_claims, scores_claim
from bundler.importers.inspect_plan import CONTROLS, SCORES, TRANSCRIPTS, Plan, finished
from bundler.importers.inspect_status import (
    counts_claim,
    rerun_finding,
    status_claim,
    unfinished_finding,
)
from bundler.importers.untrusted import AT_VERIFY, bounded, superseded
from checkers.inspect_log.log import LogError, read_log
from checkers.inspect_log.scores import scores_bytes


def import_inspect(
    log_file: Path,
    dest: Path,
    name: str | None = None,
    version: str = "1.0.0",
    split: bool = True,
    limits: ImportLimits = AT_VERIFY,
) -> Imported:
    """Write a bundle source for ``log_file`` into ``dest`` (new or empty). ``split`` (the
    default; False: the whole-log layout, as before issue 45): the log goes under
    ``inputs/transcripts/`` and its scores, without transcripts, into a scores file the
    figures are checked on (``checkers/inspect_log/scores.py``), so that ``reprobundle
    redact --withhold 'inputs/transcripts/**'`` keeps the figures checkable. The log is
    read, and its checkers run, within ``limits`` (by default verify's)."""
    data = read_log_file(log_file, dest, limits)
    checks = Checks(budget=limits.budget)
    try:
        log = bounded(lambda: read_log(data), f"reading {log_file}", limits.budget)
    except LogError as exc:
        raise SourceError(f"{log_file} is not an Inspect log this tool reads: {exc}") from None
    if not log.records:
        why = (
            "was it written with --no-log-samples?"
            if finished(log)
            else f"the run did not finish: status {log.status}, and no sample record was written"
        )
        raise SourceError(
            f"{log_file} holds no samples ({why}): nothing its header states can be re-derived"
        )
    file_name = log_file.name if not path_problem(log_file.name) else f"log.{log.format}"
    if split:
        scores = scores_bytes(log)
        stem = file_name.rsplit(".", 1)[0]
        plan = Plan(
            read_log(scores),
            f"{SCORES}/{stem}.scores.json",
            scores,
            full=log,
            full_path=f"{TRANSCRIPTS}/{file_name}",
            full_data=data,
            checks=checks,
        )
    else:
        plan = Plan(log, f"inputs/{file_name}", data, checks=checks)
    counts_claim(plan)
    status_claim(plan)
    unfinished_finding(plan)
    figure_claims(plan)
    if split:
        scores_claim(plan)
    if log.format == "eval":  # (said in the limits of every claim made before it)
        again = bounded(lambda: superseded(data, limits), f"reading {log_file}", limits.budget)
        rerun_finding(plan, again)
    _scope(plan)
    document = _document(plan, log_file.name, name, version)
    files = {plan.log_path: plan.data, **plan.controls}
    if split:
        files[plan.full_path] = data
    written = write_source(dest, document, files, "inspect")
    claims = [c["id"] for c in plan.claims]
    return Imported(dest, written, len(plan.cases), claims, plan.notes)


def _scope(plan: Plan) -> None:
    model = plan.log.spec.get("model", "the model")
    plan.cannot[:0] = [
        f"That {model} gives these outputs again: the bundle re-checks the stored scores, "
        "their arithmetic and the deterministic scoring, never the model.",
        "That this log is the one the run wrote: Inspect does not sign its logs; the bundle "
        "fixes its bytes from the import on.",
    ]


def _document(plan: Plan, original: str, name: str | None, version: str) -> dict[str, Any]:
    log = plan.full or plan.log
    spec = log.spec
    task = str(spec.get("task", "task"))
    packages = spec.get("packages") or {}
    bundle_name = name or f"inspect-{slug(task)}"[:64].rstrip("-")
    description = (
        f"Imported by `reprobundle import inspect` from {original} (Inspect log version "
        f"{log.version}, .{log.format}): task {task} on {spec.get('model', '?')}, created "
        f"{spec.get('created', '?')}, inspect_ai {packages.get('inspect_ai', '?')}, status "
        f"{log.status}. "
        + (
            f"{plan.full_path} is the log, unchanged (with its transcripts); {plan.log_path} "
            "its header and per-sample scores and errors, without transcripts, on which the "
            f"figures are checked; {TRANSCRIPTS}/controls/ the controls that hold transcripts. "
            if plan.split
            else f"{plan.log_path} is the log, unchanged. "
        )
        + f"{CONTROLS}/ holds the negative "
        "controls: copies of the log's records, with one sample's stored score changed (or "
        "one record removed), written as .json logs with only the fields the checkers read "
        "(a scorer's control holds only that scorer's scores).\n"
    )
    return {
        "name": bundle_name,
        "version": version,
        "title": f"Inspect log: {task} on {spec.get('model', '?')}"[:200],
        "description": description,
        "files": ["inputs/**"],
        "cases": plan.cases,
        "claims": plan.claims,
        "scope": {"cannot_support": plan.cannot},
    }
