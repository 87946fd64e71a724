"""What an Inspect log says of its run, re-derived at import: the sample counts (a case
and a claim with its control), the status as a finding (errored samples under success, a
run that did not finish), or a clean run as a claim with its control."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from bundler.importers import is_count
from bundler.importers.inspect_held import never_ran, records_text
from bundler.importers.inspect_plan import (
    CONTROLS,
    Plan,
    finished,
    plan_size,
    revision_limit,
    role,
    run_limits,
    short,
)
from checkers.inspect_log.log import InspectLog, to_json_log

COUNTS_CHECKER = "inspect-counts@3"


def counts_claim(plan: Plan) -> None:
    """The run's sample counts, finished or not, as ``inspect-counts@3`` re-derives them
    from its plan and records (each sample and epoch once), claimed with a control."""
    log = plan.log
    claimed, why = _claimed_counts(plan)
    if claimed is None:
        plan.notes.append(f"counts: {why}; no sample counts are checked")
        return
    params = {"claimed": claimed}
    case, message = plan.expected_pass(
        "counts",
        plan.key(COUNTS_CHECKER),
        params,
        "the sample counts follow from the plan and records",
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
    plan.claim(
        {
            "id": "sample-counts",
            "statement": _counts_statement(log, claimed),
            "cases": [case, *controls],
            "limits": [
                *run_limits(log),
                revision_limit(log),
                "Counts the records the log holds; a record the run never wrote cannot be counted.",
            ],
        }
    )


def _claimed_counts(plan: Plan) -> tuple[dict[str, int] | None, str]:
    """The counts ``inspect-counts@3`` gives this log, or None and why it gives none (no
    planned total, a header it cannot read). A header that disagrees with them fails the
    check: the claim is made of what the plan and records give, and is contradicted."""
    verdict = plan.run(plan.key(COUNTS_CHECKER), plan.data, {})
    observed = verdict.details.get("samples") if verdict.status != "error" else None
    if not isinstance(observed, dict) or not is_count(observed.get("total_samples")):
        return None, verdict.message
    return {k: v for k, v in observed.items() if is_count(v)}, verdict.message


def _counts_statement(log: InspectLog, claimed: dict[str, int]) -> str:
    """What the counts claim says: the plan, the records held (duplicates said as such),
    and of each sample and epoch once, what completed, errored and never ran: each a
    count the case checks."""
    planned, samples, epochs = plan_size(log)
    grid = f" ({samples} samples x {epochs} epochs)" if planned == claimed["total_samples"] else ""
    said = [
        f"{claimed['completed_samples']} completed",
        f"{claimed['errored_samples']} errored",
    ]
    never, names = never_ran(log, claimed["total_samples"])
    if claimed["not_run"]:
        named = f" ({names})" if names and never == claimed["not_run"] else ""
        said.append(f"{claimed['not_run']} never ran{named}")
    each = " (each sample and epoch once)" if claimed["duplicates"] else ""
    return (
        f"The run planned {claimed['total_samples']} sample records{grid}, and the log holds "
        f"{records_text(log)}: {', '.join(said)}{each}."
    )


def _counts_control(plan: Plan, params: dict[str, Any]) -> list[str]:
    """The log with its last record removed, if the counts check fails on it (for the
    reasons it gives there: a claimed count, and under success a planned record missing)."""
    log = plan.log
    if not log.records:
        return []
    path = f"{CONTROLS}/one-record-removed.json"
    control = to_json_log(log, log.records[:-1])
    counts_checker = plan.key(COUNTS_CHECKER)
    verdict = plan.run(counts_checker, control, params)
    if verdict.status != "fail":
        return []
    plan.controls[path] = control
    return [
        plan.case(
            {
                "id": "counts-control",
                "checker": counts_checker,
                "inputs": {role(counts_checker): path},
                "params": params,
                "expect": "fail",
                "expect_reasons": sorted(set(verdict.codes)),
            }
        )
    ]


def status_claim(plan: Plan) -> None:
    """What ``inspect-status@2`` finds (errored records, a status other than success, no
    results) as a finding; a clean run as a claim with its control."""
    log = plan.log
    params: dict[str, Any] = {}
    verdict = plan.run(plan.key("inspect-status@2"), plan.data, params)  # under a case's limits
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
            "checker": plan.key("inspect-status@2"),
            "inputs": {role(plan.key("inspect-status@2")): plan.log_path},
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
                revision_limit(log),
            ],
        }
    )


def _clean_status(plan: Plan) -> None:
    """The run ended with success, results and no errored record; its control is the log
    with its first record marked errored."""
    log = plan.log
    case = plan.case(
        {
            "id": "status",
            "checker": plan.key("inspect-status@2"),
            "inputs": {role(plan.key("inspect-status@2")): plan.log_path},
            "params": {},
            "expect": "pass",
        }
    )
    cases = [case]
    path = f"{CONTROLS}/one-record-errored.json"
    marked = (dataclasses.replace(log.records[0], error="planted by the importer"),)
    control = to_json_log(log, marked + log.records[1:])
    if plan.fails_with(plan.key("inspect-status@2"), control, {}, "inspect.records_errored"):
        plan.controls[path] = control
        cases.append(
            plan.case(
                {
                    "id": "status-control",
                    "checker": plan.key("inspect-status@2"),
                    "inputs": {role(plan.key("inspect-status@2")): path},
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
                *run_limits(log),
                revision_limit(log),
            ],
        }
    )


def _errored_in_figures(log: InspectLog) -> str:
    """What the figures do with the errored records, as their stored scores show it: an
    errored record with no score is left out; one scored (``--score-on-error``) counts."""
    scored = sum(1 for r in log.errored if r.scores)
    config = log.spec.get("config") or {}
    if not log.errored:
        return "no record the log holds errored, so none is left out of a figure"
    if not scored:
        return "the errored records are left out of every figure the header states"
    if scored == len(log.errored):
        flag = " (its config has score_on_error)" if config.get("score_on_error") is True else ""
        return f"the errored records were scored{flag} and count in the figures like any other"
    return (
        f"{len(log.errored) - scored} of them have no score and are left out of every figure; "
        f"{scored} were scored and count in the figures"
    )


def unfinished_finding(plan: Plan) -> None:
    """A run that did not finish (status error, cancelled, started): what ran, what did
    not, and why, as a finding; each count it states is a case expected to fail."""
    log = plan.log
    if finished(log):
        return
    held, errored = len(log.records), log.errored
    planned, samples, epochs = plan_size(log)
    total = (log.results or {}).get("total_samples")
    if is_count(total):
        planned = total
    cases = []
    if planned is not None and planned != held:  # a count the records can fail
        cases.append(_finding_case(plan, "finding-not-run", {"not_run": 0}))
    if errored:
        cases.append(_finding_case(plan, "finding-errored", {"errored_samples": 0}))
    cases = [c for c in cases if c is not None]
    error = log.header.get("error")
    why = {
        "error": " (the run stopped on an error"
        + (f": {short(error.get('message'))})" if isinstance(error, dict) else ")"),
        "cancelled": " (the run was cancelled)",
        "started": " (the log was never finished)",
    }.get(log.status, "")
    never, names = never_ran(log, planned)
    said = [f"{held - len(errored)} completed"]
    if errored:
        first = "; ".join(f"{r.label}: {short(r.error)}" for r in errored[:3])
        said.append(
            f"{len(errored)} ended with an error ({first}{'; ...' if len(errored) > 3 else ''})"
        )
    if never:
        said.append(f"{never} never ran" + (f" ({names})" if names else ""))
    plan_said = (
        f"It planned {planned} sample records ({samples} samples x {epochs} epochs); the log "
        f"holds {records_text(log)}: "
        if planned is not None
        else f"The log holds {records_text(log)}: "
    )
    statement = f"The run did not finish: its status is {log.status}{why}. {plan_said}" + (
        ", ".join(said) + "."
    )
    plan.cannot.append(
        f"That the run finished: its status is {log.status}; every figure covers only the "
        f"{records_text(log)} it wrote"
        + (f", of the {planned} it planned" if planned is not None else "")
        + (f"; {never} planned sample records never ran" if never else "")
        + (f" ({names})." if never and names else ".")
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
                "A finding: the log's own records against its plan (none never ran) and "
                "against no errors; why a sample errored is the log's error message, as "
                "stored.",
                revision_limit(log),
            ],
        }
    )


def _finding_case(plan: Plan, case_id: str, claimed: dict[str, int]) -> str | None:
    """A count the log's records fail, as a case expected to fail for the reasons the
    counts check gives here (none if it does not fail: it cannot decide on this log)."""
    counts_checker = plan.key(COUNTS_CHECKER)
    verdict = plan.run(counts_checker, plan.data, {"claimed": claimed})
    if verdict.status != "fail":
        plan.notes.append(f"{case_id}: {verdict.message}; not checked")
        return None
    return plan.case(
        {
            "id": case_id,
            "checker": counts_checker,
            "inputs": {role(counts_checker): plan.log_path},
            "params": {"claimed": claimed},
            "expect": "fail",
            "kind": "finding",  # the log's own records, not a planted control
            "expect_reasons": sorted(set(verdict.codes)),
        }
    )


def rerun_finding(plan: Plan, superseded: list[tuple[str, bytes]]) -> None:
    """A log a retry wrote (``eval_retry``: the prior log's members copied in, each re-run
    sample written again under its name): said in every claim's limits, the scope and
    the import's notes. ``superseded``: the earlier entries, which Inspect does not read
    (``untrusted.superseded``: the last entry of a name wins)."""
    if not superseded:
        return
    shown = []
    for name, member in superseded:
        try:
            earlier = json.loads(member)
        except ValueError:
            earlier = None
        error = earlier.get("error") if isinstance(earlier, dict) else None
        said = f"errored: {short(error.get('message'))}" if isinstance(error, dict) else "no error"
        shown.append(f"{name} ({said})")
    listed = "; ".join(shown[:5]) + (f"; and {len(shown) - 5} more" if len(shown) > 5 else "")
    sentence = (
        f"Retried run: the .eval zip holds {len(superseded)} superseded sample entries (a "
        "later entry has the same name), as Inspect's eval-retry writes a re-run sample after "
        "the entries it copies from the prior log. Inspect reads the last entry of each name "
        "(its reader keeps, per name, the last entry of the zip's directory), and so does "
        "every check here; the earlier entries, the attempts the retry superseded, stay in "
        "the file unread: "
        f"{listed}."
    )
    for claim in plan.claims:
        claim["limits"].append(sentence)
    _retry_finding(plan, len(superseded), listed)
    plan.cannot.append(
        f"What the superseded attempts of the retried run would have given: {listed}; "
        "Inspect reads only the re-run, and so do the checks."
    )
    plan.notes.append(sentence)


def _retry_finding(plan: Plan, superseded: int, listed: str) -> None:
    """The retry as a finding: the zip's sample entries against the records Inspect reads
    (a case expected to fail, so a reader that counted a superseded entry diverges)."""
    held = len(plan.log.records)
    entries = held + superseded
    params = {"claimed": {"records": entries}}
    counts_checker = plan.key(COUNTS_CHECKER)
    if not plan.fails_with(counts_checker, plan.data, params, "inspect.claimed_mismatch"):
        return
    case = plan.case(
        {
            "id": "finding-retried-run",
            "checker": counts_checker,
            "inputs": {role(counts_checker): plan.log_path},
            "params": params,
            "expect": "fail",
            "kind": "finding",  # the log's own entries, not a planted control
            "expect_reasons": ["inspect.claimed_mismatch"],
        }
    )
    plan.claim(
        {
            "id": "finding-retried-run",
            "statement": (
                f"The log was written by a retry: its .eval zip holds {entries} sample "
                f"entries, {superseded} of them superseded by a later entry of the same name "
                f"({listed}); Inspect reads {held} sample records, the last entry of each "
                "name, and so does every check here."
            ),
            "cases": [case],
            "limits": [
                "A finding: the zip's own directory, read as Inspect reads it (the last "
                "entry of a name wins); what a superseded attempt would have given is not "
                "judged.",
                revision_limit(plan.log),
            ],
        }
    )
