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

import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import checkers
from bundler.errors import SourceError
from bundler.format.paths import path_problem
from bundler.importers import Checks, Imported, is_count, read_log_file, slug, write_source
from bundler.importers.untrusted import bounded
from checkers.api import Verdict
from checkers.inspect_log import rules
from checkers.inspect_log.log import (
    InspectLog,
    LogError,
    Record,
    Score,
    is_scalar,
    read_log,
    to_float,
    to_json_log,
)

CONTROLS = "inputs/controls"
RULES_OF = "0.3.285"  # the inspect-ai whose scorers checkers/inspect_log/rules.py re-implements
_MAX_CONTROL_TRIES = 20  # samples tried per scorer to find one whose change shows


@dataclass
class _Plan:
    log: InspectLog
    log_path: str
    data: bytes
    cases: list[dict[str, Any]] = field(default_factory=list)
    claims: list[dict[str, Any]] = field(default_factory=list)
    cannot: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    controls: dict[str, bytes] = field(default_factory=dict)
    checks: Checks = field(default_factory=Checks)
    case_ids: set[str] = field(default_factory=set)
    claim_ids: set[str] = field(default_factory=set)

    def run(self, checker_key: str, data: bytes, params: Mapping[str, Any]) -> Verdict:
        """The verdict of ``checker_key`` on ``data``, under a case's limits at verify."""
        checker = checkers.get(checker_key)
        assert checker is not None
        return self.checks.run(checker, {"log": data}, params)

    def fails_with(
        self, checker_key: str, data: bytes, params: Mapping[str, Any], code: str
    ) -> bool:
        verdict = self.run(checker_key, data, params)
        return verdict.status == "fail" and verdict.codes == (code,)

    def case(self, case: dict[str, Any]) -> str:
        case["id"] = _unique(str(case["id"]), self.case_ids)
        self.case_ids.add(case["id"])
        self.cases.append(case)
        return str(case["id"])

    def expected_pass(
        self,
        case_id: str,
        checker_key: str,
        params: dict[str, Any],
        what: str,
        data: bytes | None = None,
    ) -> tuple[str | None, str | None]:
        """A case of ``checker_key`` on the log that must pass, and what it says when it does
        not on this log (None when it passes): run here, so the note is made before build.
        A check that cannot decide here (an error: past a case's time or memory limit, a
        log it cannot read) gets no case: ``what`` goes under the scope with the reason.
        ``data``: what to run it on here, if not the log (a copy that gives the same
        verdict: the log with only the scorer's scores, so the checks of S scorers do not
        each read all S scorers' scores)."""
        verdict = self.run(checker_key, self.data if data is None else data, params)
        if verdict.status == "error":
            self.cannot.append(f"That {what}: not checked ({verdict.message}).")
            self.notes.append(f"{case_id}: {verdict.message}; left out of the claims")
            return None, verdict.message
        found = self.case(
            {
                "id": case_id,
                "checker": checker_key,
                "inputs": {"log": self.log_path},
                "params": params,
                "expect": "pass",
            }
        )
        return found, None if verdict.status == "pass" else verdict.message

    def drop(self, case_id: str) -> None:
        """Take a case back (one that no control can show able to fail)."""
        self.cases = [c for c in self.cases if c["id"] != case_id]

    def claim(self, claim: dict[str, Any]) -> None:
        claim["id"] = _unique(str(claim["id"]), self.claim_ids)
        self.claim_ids.add(claim["id"])
        self.claims.append(claim)


def _unique(wanted: str, taken: set[str]) -> str:
    """``wanted``, or with a number after it: two scorer names can make one slug."""
    found, n = wanted, 1
    while found in taken:
        n += 1
        found = f"{wanted}-{n}"
    return found


def import_inspect(
    log_file: Path, dest: Path, name: str | None = None, version: str = "1.0.0"
) -> Imported:
    """Write a bundle source for ``log_file`` into ``dest`` (new or empty)."""
    data = read_log_file(log_file, dest)
    try:
        log = bounded(lambda: read_log(data), f"reading {log_file}")
    except LogError as exc:
        raise SourceError(f"{log_file} is not an Inspect log this tool reads: {exc}") from None
    if not log.records:
        why = (
            "was it written with --no-log-samples?"
            if _finished(log)
            else f"the run did not finish: status {log.status}, and no sample record was written"
        )
        raise SourceError(
            f"{log_file} holds no samples ({why}): nothing its header states can be re-derived"
        )
    file_name = log_file.name if not path_problem(log_file.name) else f"log.{log.format}"
    plan = _Plan(log, f"inputs/{file_name}", data)
    _counts(plan)
    _finding(plan)
    _unfinished(plan)
    _figures(plan)
    _scope(plan)
    document = _document(plan, log_file.name, name, version)
    written = write_source(dest, document, {plan.log_path: data, **plan.controls}, "inspect")
    claims = [c["id"] for c in plan.claims]
    return Imported(dest, written, len(plan.cases), claims, plan.notes)


# -- what the log claims -------------------------------------------------------------------


def _counts(plan: _Plan) -> None:
    log = plan.log
    observed = rules.counts(log)
    claimed, said = _claimed_counts(log)
    if not claimed:
        plan.notes.append("the header states no sample counts; none are checked")
        return
    params = {"claimed": claimed}
    counts_checker, _ = _counts_check(log)
    case, message = plan.expected_pass(
        "counts", counts_checker, params, "the sample counts follow from the records"
    )
    if case is None:
        return
    if message is not None:
        plan.notes.append(f"counts: {message}; the claim will be contradicted")
    controls = _counts_control(plan, params)
    if not controls:  # a count no removed record moves: stated, never claimed
        plan.drop(case)
        plan.cannot.append(
            f"That the log's sample counts are {claimed}: re-counted at import, but removing a "
            "record does not make the check fail, so no claim rests on them."
        )
        return
    cases = [case, *controls]
    shown = ", ".join(f"{k.replace('_samples', '')} {v}" for k, v in claimed.items())
    plan.claim(
        {
            "id": "sample-counts",
            "statement": (
                f"The log holds {observed['total_samples']} sample records "
                f"({observed['samples']} samples x {observed['epochs']} epochs), {said}: {shown}."
            ),
            "cases": cases,
            "limits": [
                *_run_limits(log),
                _revision(log),
                "Counts the records the log holds; a record the run never wrote cannot be counted.",
            ],
        }
    )


def _claimed_counts(log: InspectLog) -> tuple[dict[str, int], str]:
    """The sample counts to check, and where they come from. A finished run's header (or,
    with no results, its plan) states the records it holds; an unfinished run's header
    total is the plan's, so the records it holds are re-counted, and only a completed
    count the header states is taken from it. Counts that are not whole numbers (a
    boolean is not one) are left out."""
    results = log.results or {}
    total, completed = results.get("total_samples"), results.get("completed_samples")
    if not _finished(log):
        observed = rules.counts(log)
        claimed = {
            "total_samples": observed["total_samples"],
            "completed_samples": completed
            if is_count(completed)
            else observed["completed_samples"],
            "errored_samples": observed["errored_samples"],
        }
        source = "the header's completed count and " if is_count(completed) else ""
        return claimed, f"as {source}its records give them (the run did not finish)"
    if log.results is not None:
        found: dict[str, Any] = {"total_samples": total, "completed_samples": completed}
        if is_count(total) and is_count(completed):
            found["errored_samples"] = total - completed
        said = "as its header states"
    else:
        planned, samples, epochs = _planned(log)
        found = {"total_samples": planned}
        said = (
            f"the total its plan ({samples} samples x {epochs} epochs) implies "
            "(it states no results)"
        )
    return {k: v for k, v in found.items() if is_count(v)}, said


def _finished(log: InspectLog) -> bool:
    return log.status == "success"


def _counts_check(log: InspectLog) -> tuple[str, str]:
    """The counts checker and its control's reason: inspect-counts@2 compares a finished
    run's header with its records; an unfinished run's header states the planned total,
    so its records' own counts are checked (@1) and the finding says what did not run."""
    if _finished(log):
        return "inspect-counts@2", "inspect.header_count_mismatch"
    return "inspect-counts@1", "inspect.count_mismatch"


def _planned(log: InspectLog) -> tuple[int | None, Any, Any]:
    """The sample records the run planned (samples x epochs of its plan), and both; the
    samples are the ids it chose (fewer than the dataset's under --limit) if it names them."""
    dataset = log.spec.get("dataset") or {}
    ids = dataset.get("sample_ids")
    samples = len(ids) if isinstance(ids, list) else dataset.get("samples")
    epochs = (log.spec.get("config") or {}).get("epochs") or 1
    if is_count(samples) and is_count(epochs):
        return samples * epochs, samples, epochs
    return None, samples, epochs


def _counts_control(plan: _Plan, params: dict[str, Any]) -> list[str]:
    """The log with its last record removed, if the counts check fails on it."""
    log = plan.log
    if not log.records:
        return []
    path = f"{CONTROLS}/one-record-removed.json"
    control = to_json_log(log, log.records[:-1])
    counts_checker, counts_code = _counts_check(log)
    if not plan.fails_with(counts_checker, control, params, counts_code):
        return []
    plan.controls[path] = control
    return [
        plan.case(
            {
                "id": "counts-control",
                "checker": counts_checker,
                "inputs": {"log": path},
                "params": params,
                "expect": "fail",
                "expect_reasons": [counts_code],
            }
        )
    ]


def _finding(plan: _Plan) -> None:
    """What ``inspect-status@2`` finds (errored records, a status other than success, no
    results) as a finding; a clean run as a claim with its control."""
    log = plan.log
    params: dict[str, Any] = {}
    verdict = plan.run("inspect-status@2", plan.data, params)  # under a case's limits
    if verdict.status == "pass":
        _clean_status(plan)
        return
    if verdict.status != "fail":
        plan.notes.append(f"status: {verdict.message}; not checked")
        return
    codes = list(verdict.codes)
    finding = "finding-errors-under-success" if log.status == "success" else "finding-status"
    plan.case(
        {
            "id": finding,
            "checker": "inspect-status@2",
            "inputs": {"log": plan.log_path},
            "params": params,
            "expect": "fail",
            "kind": "finding",  # the log's own fields, not a planted control
            "expect_reasons": sorted(codes),
        }
    )
    errored = len(log.errored)
    no_results = " and states no results at all" if "inspect.no_results" in codes else ""
    said = (
        f"The run says {log.status} while"
        if log.status == "success"
        else f"The run says {log.status}, not success, and"
    )
    plan.claim(
        {
            "id": finding,
            "statement": (
                f"{said} {errored} of {len(log.records)} sample records errored"
                f"{no_results}; {_errored_in_figures(log)}."
            ),
            "cases": [finding],
            "limits": [
                "A finding: the log's own status and error fields, re-read; that a "
                "success status with errored samples misleads is the author's judgement.",
                _revision(log),
            ],
        }
    )


def _clean_status(plan: _Plan) -> None:
    """The run ended with success, results and no errored record; its control is the log
    with its first record marked errored."""
    log = plan.log
    case = plan.case(
        {
            "id": "status",
            "checker": "inspect-status@2",
            "inputs": {"log": plan.log_path},
            "params": {},
            "expect": "pass",
        }
    )
    cases = [case]
    path = f"{CONTROLS}/one-record-errored.json"
    marked = (dataclasses.replace(log.records[0], error="planted by the importer"),)
    control = to_json_log(log, marked + log.records[1:])
    if plan.fails_with("inspect-status@2", control, {}, "inspect.records_errored"):
        plan.controls[path] = control
        cases.append(
            plan.case(
                {
                    "id": "status-control",
                    "checker": "inspect-status@2",
                    "inputs": {"log": path},
                    "params": {},
                    "expect": "fail",
                    "expect_reasons": ["inspect.records_errored"],
                }
            )
        )
    plan.claim(
        {
            "id": "status",
            "statement": (
                f"The run says success, states results, and none of its {len(log.records)} "
                "sample records errored."
            ),
            "cases": cases,
            "limits": [
                "Reads the log's own status and error fields; a record the run never "
                "wrote cannot be judged.",
                *_run_limits(log),
                _revision(log),
            ],
        }
    )


def _errored_in_figures(log: InspectLog) -> str:
    """What the figures do with the errored records, as their stored scores show it: an
    errored record with no score is left out; one scored (``--score-on-error``) counts."""
    scored = sum(1 for r in log.errored if r.scores)
    config = log.spec.get("config") or {}
    if not scored:
        return "the errored records are left out of every figure the header states"
    if scored == len(log.errored):
        flag = " (its config has score_on_error)" if config.get("score_on_error") is True else ""
        return f"the errored records were scored{flag} and count in the figures like any other"
    return (
        f"{len(log.errored) - scored} of them have no score and are left out of every figure; "
        f"{scored} were scored and count in the figures"
    )


def _unfinished(plan: _Plan) -> None:
    """A run that did not finish (status error, cancelled, started): what ran, what did
    not, and why, as a finding; each count it states is a case expected to fail."""
    log = plan.log
    if _finished(log):
        return
    held, errored = len(log.records), log.errored
    planned, samples, epochs = _planned(log)
    total = (log.results or {}).get("total_samples")
    if is_count(total):
        planned = total
    cases = []
    if planned is not None and planned != held:
        cases.append(_finding_case(plan, "finding-not-run", {"total_samples": planned}))
    if errored:
        cases.append(_finding_case(plan, "finding-errored", {"errored_samples": 0}))
    error = log.header.get("error")
    why = {
        "error": " (the run stopped on an error"
        + (f": {_short(error.get('message'))})" if isinstance(error, dict) else ")"),
        "cancelled": " (the run was cancelled)",
        "started": " (the log was never finished)",
    }.get(log.status, "")
    said = [f"{held - len(errored)} completed"]
    if errored:
        first = "; ".join(f"{r.label}: {_short(r.error)}" for r in errored[:3])
        said.append(
            f"{len(errored)} ended with an error ({first}{'; ...' if len(errored) > 3 else ''})"
        )
    if planned is not None and planned > held:
        said.append(f"{planned - held} never ran")
    plan_said = (
        f"It planned {planned} sample records ({samples} samples x {epochs} epochs); the log "
        f"holds {held}: "
        if planned is not None
        else f"The log holds {held} sample records: "
    )
    statement = f"The run did not finish: its status is {log.status}{why}. {plan_said}" + (
        ", ".join(said) + "."
    )
    plan.cannot.append(
        f"That the run finished: its status is {log.status}; every figure covers only the "
        f"{held} sample records it wrote"
        + (f", of the {planned} it planned." if planned is not None else ".")
    )
    if not cases:
        plan.notes.append(f"status {log.status}: {statement} (stated under scope, no case)")
        return
    plan.claim(
        {
            "id": "finding-unfinished-run",
            "statement": statement,
            "cases": cases,
            "limits": [
                "A finding: the counts the log's own records give, against the total its "
                "header (or plan) names and against no errors; why a sample errored is "
                "the log's error message, as stored.",
                _revision(log),
            ],
        }
    )


def _finding_case(plan: _Plan, case_id: str, claimed: dict[str, int]) -> str:
    return plan.case(
        {
            "id": case_id,
            "checker": "inspect-counts@1",
            "inputs": {"log": plan.log_path},
            "params": {"claimed": claimed},
            "expect": "fail",
            "kind": "finding",  # the log's own records, not a planted control
            "expect_reasons": ["inspect.count_mismatch"],
        }
    )


def _short(text: Any, most: int = 80) -> str:
    shown = " ".join(str(text).split())
    return shown if len(shown) <= most else shown[: most - 3] + "..."


def _run_limits(log: InspectLog) -> list[str]:
    """What every figure of the run is limited by: an unfinished run, a --limit, retries."""
    config = log.spec.get("config") or {}
    out = []
    if not _finished(log):
        planned = _planned(log)[0]
        out.append(
            f"The run did not finish (status {log.status}): this covers the "
            f"{len(log.records)} sample records the log holds"
            + (f", of the {planned} the run planned." if planned is not None else ".")
        )
    limit = config.get("limit")
    if limit is not None:
        out.append(
            f"A limited run (--limit {limit!r}): only part of the dataset "
            f"({(log.spec.get('dataset') or {}).get('samples', '?')} samples) was run."
        )
    retries = config.get("retry_on_error")
    if is_count(retries) and retries:
        out.append(
            f"Errored samples were retried up to {retries} times (--retry-on-error); the log "
            "keeps each sample's last attempt, which is what is counted here."
        )
    return out


def _rules_version(log: InspectLog, method: str) -> str:
    """Which Inspect's rules re-score ``method``, beside the version that wrote the log."""
    wrote = (log.spec.get("packages") or {}).get("inspect_ai")
    said = (
        f"Re-scored with reprobundle's re-implementation of {method} as of inspect-ai {RULES_OF}; "
    )
    if not isinstance(wrote, str):
        return said + "the log does not say which inspect_ai wrote it."
    if wrote == RULES_OF:
        return said + f"the log was written by inspect_ai {wrote}, the same version."
    return said + (
        f"the log was written by inspect_ai {wrote}, another version: where its {method} "
        "differs, a re-scored value can differ too."
    )


def _revision(log: InspectLog) -> str:
    revision = log.spec.get("revision")
    if not isinstance(revision, dict):
        return "The log records no code revision: the code that produced it is not identified."
    commit = str(revision.get("commit", "?"))
    where = f"commit {commit} of {revision.get('origin') or 'a repository with no origin'}"
    if revision.get("dirty"):
        return (
            f"DIRTY REVISION: the run was made from {where} with uncommitted changes, so "
            "the code that produced the log is not exactly that commit."
        )
    return f"The run was made from {where} (clean working tree)."


def _scorer_of(log: InspectLog, entry: Mapping[str, Any]) -> tuple[str, Mapping[str, Any] | None]:
    """The scorer that made a result entry, and its recorded options (None if ambiguous)."""
    method = str(entry.get("scorer") or entry.get("name") or "")
    recorded = [
        s
        for s in log.spec.get("scorers") or []
        if isinstance(s, dict)
        and str(s.get("name", "")).removeprefix("inspect_ai/") == method.removeprefix("inspect_ai/")
    ]
    options = [s.get("options") or {} for s in recorded]
    if len(options) == 1 or (options and all(o == options[0] for o in options)):
        return method.removeprefix("inspect_ai/"), options[0]
    return method.removeprefix("inspect_ai/"), None


def _flip(log: InspectLog, scorer: str, sample_id: str | int) -> tuple[Record, ...]:
    """The records with every stored ``scorer`` score of one sample set to I if any of
    them was above 0, else to C (one value for all epochs, so pass@k changes too)."""
    mine = [
        r.scores[scorer].value
        for r in log.records
        if r.sample_id == sample_id and scorer in r.scores
    ]
    value = "I" if any(to_float(v) > 0 for v in mine) else "C"

    def flipped(r: Record) -> Record:
        score = r.scores.get(scorer)
        if r.sample_id != sample_id or score is None:
            return r
        return dataclasses.replace(r, scores={**r.scores, scorer: Score(value, score.answer)})

    return tuple(flipped(r) for r in log.records)


def _scorer_only(log: InspectLog, scorer: str) -> InspectLog:
    """The log with only ``scorer``'s scores and figures: all its controls' checkers read
    (so a control's size, and the time to make it, do not grow with the other scorers)."""
    results = log.results
    header = dict(log.header)
    if results is not None:
        mine = [e for e in log.result_scores() if isinstance(e, dict) and e.get("name") == scorer]
        header["results"] = {**results, "scores": mine}
    if log.spec:
        scorers = [s for s in log.spec.get("scorers") or [] if s.get("name") == scorer]
        header["eval"] = {**log.spec, "scorers": scorers}
    records = tuple(
        dataclasses.replace(r, scores={scorer: r.scores[scorer]} if scorer in r.scores else {})
        for r in log.records
    )
    return InspectLog(log.format, header, records)


def _controls(
    plan: _Plan, scorer: str, log: InspectLog, needs: list[tuple[str, dict[str, Any], str]]
) -> dict[int, str]:
    """For each (checker, params, code) in ``needs``: a control file on which it fails,
    made from ``log`` (the log with only ``scorer``'s scores). Greedy over the first
    samples with a score: one file usually serves all."""
    candidates = [
        s
        for s, records in rules.by_sample(log).items()
        if any(scorer in r.scores and is_scalar(r.scores[scorer].value) for r in records)
    ][:_MAX_CONTROL_TRIES]
    chosen: dict[int, str] = {}
    pending = set(range(len(needs)))
    while pending:
        best: tuple[set[int], str | int, bytes] | None = None
        for sample_id in candidates:
            control = to_json_log(log, _flip(log, scorer, sample_id))
            covered = {
                i
                for i in pending
                if plan.fails_with(needs[i][0], control, needs[i][1], needs[i][2])
            }
            if covered and (best is None or len(covered) > len(best[0])):
                best = (covered, sample_id, control)
            if covered == pending:
                break
        if best is None:
            break
        covered, sample_id, control = best
        path = f"{CONTROLS}/{slug(scorer)}-{slug(str(sample_id))}-flipped.json"
        plan.controls[path] = control
        for i in covered:
            chosen[i] = path
        pending -= covered
        candidates.remove(sample_id)
    return chosen


Need = tuple[str, str, dict[str, Any], str]  # case id, checker, params, reason it must fail with


def _figures(plan: _Plan) -> None:
    """Per scorer: its figure cases, its re-score case, their controls, a claim per reducer."""
    log = plan.log
    headline = (log.results or {}).get("headline") or {}
    by_scorer: dict[str, list[Mapping[str, Any]]] = {}
    for entry in log.result_scores():
        by_scorer.setdefault(str(entry.get("name")), []).append(entry)
    for scorer, entries in by_scorer.items():
        method, options = _scorer_of(log, entries[0])
        mine = _scorer_only(log, scorer)
        own = to_json_log(mine, mine.records)
        figure_cases = _figure_cases(plan, scorer, entries, own)
        rescore = _rescore_case(plan, scorer, method, options, own)
        needs: list[Need] = [
            (case_id, "inspect-metric@2", params, "inspect.header_metric_mismatch")
            for cases in figure_cases.values()
            for case_id, params in cases
        ]
        if rescore:
            needs.append((rescore[0], "inspect-rescore@2", rescore[1], "inspect.score_mismatch"))
        control_of = _control_cases(plan, scorer, mine, needs)
        if rescore and rescore[0] not in control_of:
            rescore = None
        for reducer, every in figure_cases.items():
            cases = [(c, p) for c, p in every if c in control_of]
            if not cases:
                continue
            ids = [c for c, _ in cases] + ([rescore[0]] if rescore else [])
            ids += [control_of[c] for c in ids]
            plan.claim(
                _figure_claim(
                    plan,
                    scorer,
                    reducer,
                    [p for _, p in cases],
                    ids,
                    method,
                    rescore is not None,
                    headline.get("score") == scorer and headline.get("reducer") == reducer,
                )
            )


def _figure_cases(
    plan: _Plan, scorer: str, entries: list[Mapping[str, Any]], own: bytes
) -> dict[str | None, list[tuple[str, dict[str, Any]]]]:
    """A case per metric of each of the scorer's result entries, by reducer (``own``: the
    log with only this scorer's scores, to run them on here)."""
    out: dict[str | None, list[tuple[str, dict[str, Any]]]] = {}
    for entry in entries:
        reducer = entry.get("reducer")
        for metric_name, metric in (entry.get("metrics") or {}).items():
            value = metric.get("value")
            what = f"{scorer} / {reducer or 'no reducer'} / {metric_name}"
            why = _figure_problem(plan.log, scorer, reducer, metric_name, value)
            if why:
                plan.cannot.append(f"The figure {what} = {value!r}: {why}.")
                continue
            params: dict[str, Any] = {
                "scorer": scorer,
                "reducer": reducer or "",
                "metric": metric_name,
                "claimed": value,
            }
            case_id, message = plan.expected_pass(
                f"{slug(scorer)}-{slug(reducer or 'none')}-{slug(metric_name)}",
                "inspect-metric@2",
                params,
                f"the figure {what} = {value!r} follows from the samples",
                own,
            )
            if case_id is None:
                continue
            if message is not None:
                plan.notes.append(
                    f"{what}: {message}; its claim will be contradicted (build refuses "
                    "a bundle whose claims are not supported)"
                )
            out.setdefault(reducer, []).append((case_id, params))
    return out


def _rescore_case(
    plan: _Plan, scorer: str, method: str, options: Mapping[str, Any] | None, own: bytes
) -> tuple[str, dict[str, Any]] | None:
    """The case re-scoring a deterministic scorer, or None (and why, under the scope)."""
    if options is None:
        problem: str | None = f"the log records {method!r} more than once with different options"
    elif "model_graded" in method:
        problem = "they are a grader model's judgement"
    elif any(not is_scalar(r.scores[scorer].value) for r in plan.log.records if scorer in r.scores):
        problem = "its stored values are not single values"
    else:
        problem = rules.rescore_problem(method, options)
    if problem is not None or not any(scorer in r.scores for r in plan.log.records):
        plan.cannot.append(
            f"That the {scorer!r} scores are right ({problem or 'no sample has one'}): the "
            "bundle takes them as stored, and re-checks only the figures computed from them."
        )
        return None
    params = {"scorer": scorer, "method": method, "options": dict(options or {})}
    case_id, message = plan.expected_pass(
        f"rescore-{slug(scorer)}",
        "inspect-rescore@2",
        params,
        f"every stored {scorer} score follows from completion and target under {method}",
        own,
    )
    if case_id is None:
        return None
    if message is not None:
        plan.notes.append(f"rescore {scorer}: {message}")
    return case_id, params


def _control_cases(plan: _Plan, scorer: str, mine: InspectLog, needs: list[Need]) -> dict[str, str]:
    """A negative control per need (same checker and params, a changed copy of the log);
    returns case id -> control case id."""
    files = _controls(
        plan, scorer, mine, [(checker, params, code) for _, checker, params, code in needs]
    )
    control_of: dict[str, str] = {}
    for i, (case_id, checker_key, params, code) in enumerate(needs):
        if i not in files:
            plan.drop(case_id)
            what = (
                f"the figure {params['scorer']} / {params['reducer'] or 'no reducer'} / "
                f"{params['metric']} = {params['claimed']!r}"
                if "metric" in params
                else f"every stored {params['scorer']} score"
            )
            plan.cannot.append(
                f"That {what} follows from the samples: re-derived at import, but no changed "
                "sample makes its check fail, so no claim rests on it."
            )
            plan.notes.append(f"{case_id}: no changed sample makes it fail; left out of the claims")
            continue
        control_of[case_id] = plan.case(
            {
                "id": f"{case_id}-control",
                "checker": checker_key,
                "inputs": {"log": files[i]},
                "params": params,
                "expect": "fail",
                "expect_reasons": [code],
            }
        )
    return control_of


def _figure_problem(
    log: InspectLog, scorer: str, reducer: str | None, metric: str, value: Any
) -> str | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return "not a number, not re-derived"
    if not math.isfinite(value):
        return "not a finite number, not re-derived"
    if metric not in rules.METRICS:
        return f"metric {metric!r} is not one reprobundle recomputes ({', '.join(rules.METRICS)})"
    if not rules.known_reducer(reducer):
        return f"reducer {reducer!r} is not one reprobundle recomputes"
    for spec in log.spec.get("scorers") or []:
        if spec.get("name") != scorer:
            continue
        for m in spec.get("metrics") or []:
            name = str(m.get("name", "")).removeprefix("inspect_ai/")
            if name == metric and m.get("options"):
                return f"the metric has options {m['options']!r}, which are not recomputed"
    values = [r.scores[scorer].value for r in log.records if scorer in r.scores]
    if not values and len(log.errored) < len(log.records):
        return (
            "no sample stores a score of that name (a scorer with several values?), not re-derived"
        )
    if any(not is_scalar(v) for v in values):
        return "its scores are not scalar values, not re-derived"
    return None


def _figure_claim(
    plan: _Plan,
    scorer: str,
    reducer: str | None,
    params: list[dict[str, Any]],
    ids: list[str],
    method: str,
    rescored: bool,
    headline: bool,
) -> dict[str, Any]:
    log = plan.log
    shown = " and ".join(f"{p['metric']} {p['claimed']:.4g}" for p in params)
    first = params[0]
    dropped = rules.figure(log, scorer, reducer, first["metric"])
    counted = rules.figure(log, scorer, reducer, first["metric"], errors_fail=True)
    pool = rules.pooled(log, scorer)
    no_score = pool["epochs"] - pool["scored_epochs"]
    scored_errors = sum(1 for r in log.errored if scorer in r.scores)
    unscored_errors = len(log.errored) - scored_errors
    why = "errored" if unscored_errors == no_score else f"{unscored_errors} of them errored"
    reduced = reducer or "no reducer"
    statement = (
        f"{'Headline figure: the' if headline else 'The'} log's {scorer} score ({reduced}): "
        f"{shown} over {dropped['scored_samples']} samples, re-derived from the per-sample "
        "scores"
        + (
            f"; every stored {scorer} score follows from completion and target under {method}"
            if rescored
            else ""
        )
        + "."
    )
    p_drop = pool["sum"] / pool["scored_epochs"] if pool["scored_epochs"] else math.nan
    p_all = pool["sum"] / pool["epochs"] if pool["epochs"] else math.nan
    limits = [
        (
            f"Denominator, Inspect's way (errors dropped): each sample's scored epochs reduced "
            f"with {reduced}, then {first['metric']} over the {dropped['scored_samples']} samples "
            f"with a value ({dropped['unscored_samples']} left out as unscored); {no_score} of "
            f"{pool['epochs']} epoch records have no {scorer} score ({why}) and are dropped"
            + (
                f"; {scored_errors} errored records were scored and are counted."
                if scored_errors
                else "."
            )
        ),
        (
            f"With errors counted as failures: {first['metric']} {counted['value']:.4g} over "
            f"{counted['scored_samples']} samples. Pooled over epochs: {pool['sum']:g}/"
            f"{pool['scored_epochs']} = {p_drop:.4g} with errors dropped, {pool['sum']:g}/"
            f"{pool['epochs']} = {p_all:.4g} with errors counted as failures."
        ),
        *_run_limits(log),
        _revision(log),
        "Re-checks the arithmetic on the stored scores"
        + (" and the deterministic scoring" if rescored else "")
        + "; it never re-runs the model.",
    ]
    if not rescored:
        limits.append(f"The {scorer} scores themselves are taken as stored, not re-derived.")
    else:
        limits.append(_rules_version(log, method))
    return {
        "id": f"{slug(scorer)}-{slug(reduced)}",
        "statement": statement,
        "cases": ids,
        "limits": limits,
    }


def _scope(plan: _Plan) -> None:
    model = plan.log.spec.get("model", "the model")
    plan.cannot[:0] = [
        f"That {model} gives these outputs again: the bundle re-checks the stored scores, "
        "their arithmetic and the deterministic scoring, never the model.",
        "That this log is the one the run wrote: Inspect does not sign its logs; the bundle "
        "fixes its bytes from the import on.",
    ]


def _document(plan: _Plan, original: str, name: str | None, version: str) -> dict[str, Any]:
    log = plan.log
    spec = log.spec
    task = str(spec.get("task", "task"))
    packages = spec.get("packages") or {}
    bundle_name = name or f"inspect-{slug(task)}"[:64].rstrip("-")
    description = (
        f"Imported by `reprobundle import inspect` from {original} (Inspect log version "
        f"{log.version}, .{log.format}): task {task} on {spec.get('model', '?')}, created "
        f"{spec.get('created', '?')}, inspect_ai {packages.get('inspect_ai', '?')}, status "
        f"{log.status}. {plan.log_path} is the log, unchanged. {CONTROLS}/ holds the negative "
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
