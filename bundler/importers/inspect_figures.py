"""An Inspect log's figures, re-derived at import: per scorer, a case per metric of each
reducer (``inspect-metric@4``), a re-scoring case for a deterministic scorer
(``inspect-rescore@3``), a negative control for each (one sample's stored score changed,
in a copy holding only that scorer), and a claim per reducer whose limits state the
denominator both ways."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from typing import Any

from bundler.importers import slug
from bundler.importers.inspect_plan import (
    CONTROLS,
    TRANSCRIPTS,
    Plan,
    revision_limit,
    role,
    run_limits,
)
from checkers import linear
from checkers.inspect_log import rules
from checkers.inspect_log.log import (
    InspectLog,
    Record,
    Score,
    is_scalar,
    to_float,
    to_json_log,
)

RULES_OF = "0.3.285"  # the inspect-ai whose scorers checkers/inspect_log/rules.py re-implements
_MAX_CONTROL_TRIES = 20  # samples tried per scorer to find one whose change shows


def figure_claims(plan: Plan) -> None:
    """Per scorer: its figure cases, its re-score case, their controls, a claim per reducer."""
    log = plan.log
    headline = (log.results or {}).get("headline") or {}
    by_scorer: dict[str, list[Mapping[str, Any]]] = {}
    for entry in log.result_scores():
        by_scorer.setdefault(str(entry.get("name")), []).append(entry)
    # each scorer's specs found once, by name and by method, not by a scan per scorer
    # (the import stays linear in the number of scorers)
    specs = [s for s in log.spec.get("scorers") or [] if isinstance(s, dict)] if log.spec else []
    by_name: dict[str, list[Mapping[str, Any]]] = {}
    by_method: dict[str, list[Mapping[str, Any]]] = {}
    for spec in specs:
        by_name.setdefault(str(spec.get("name")), []).append(spec)
        by_method.setdefault(str(spec.get("name", "")).removeprefix("inspect_ai/"), []).append(spec)
    for scorer, entries in by_scorer.items():
        method, options = _scorer_of(by_method, entries[0])
        # its specs by its own name, and those of the scorer its entries name (score
        # "p0" made by "pattern"): the checkers find it by either
        named = by_name.get(scorer, [])
        seen = {id(s) for s in named}
        made_by = [s for s in by_method.get(method, []) if id(s) not in seen]
        mine = _scorer_only(log, scorer, entries, named + made_by)
        own = to_json_log(mine, mine.records)
        figure_cases = _figure_cases(plan, scorer, entries, own, mine)
        if plan.split:
            _split_scorer(
                plan,
                scorer,
                method,
                options,
                figure_cases,
                mine,
                headline,
                entries,
                named + made_by,  # (as for the whole log: the score "p0" made by "pattern")
            )
            continue
        rescore = _rescore_case(plan, scorer, method, options, own)
        needs: list[Need] = [
            (case_id, "inspect-metric@4", params, "inspect.header_metric_mismatch")
            for cases in figure_cases.values()
            for case_id, params in cases
        ]
        if rescore:
            needs.append((rescore[0], RESCORE, rescore[1], "inspect.score_mismatch"))
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
    plan: Plan, scorer: str, entries: list[Mapping[str, Any]], own: bytes, mine: InspectLog
) -> dict[str | None, list[tuple[str, dict[str, Any]]]]:
    """A case per metric of each of the scorer's result entries, by reducer (``own``: the
    log with only this scorer's scores, to run them on here; ``mine``: that log read)."""
    out: dict[str | None, list[tuple[str, dict[str, Any]]]] = {}
    for entry in entries:
        reducer = entry.get("reducer")
        for metric_name, metric in (entry.get("metrics") or {}).items():
            value = metric.get("value")
            what = f"{scorer} / {reducer or 'no reducer'} / {metric_name}"
            why = _figure_problem(mine, scorer, reducer, metric_name, value)
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
                plan.key("inspect-metric@4"),
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
    plan: Plan,
    scorer: str,
    method: str,
    options: Mapping[str, Any] | None,
    own: bytes,
    path: str | None = None,
) -> tuple[str, dict[str, Any]] | None:
    """The case re-scoring a deterministic scorer, or None (and why, under the scope)."""
    if options is None:
        problem: str | None = f"the log records {method!r} more than once with different options"
    elif "model_graded" in method:
        problem = "they are a grader model's judgement"
    elif any(not is_scalar(r.scores[scorer].value) for r in plan.log.records if scorer in r.scores):
        problem = "its stored values are not single values"
    else:
        problem = rules.rescore_problem(method, options) or _not_linear(method, options)
    if problem is not None or not any(scorer in r.scores for r in plan.log.records):
        plan.cannot.append(
            f"That the {scorer!r} scores are right ({problem or 'no sample has one'}): the "
            "bundle takes them as stored, and re-checks only the figures computed from them."
        )
        return None
    params = {"scorer": scorer, "method": method, "options": dict(options or {})}
    case_id, message = plan.expected_pass(
        f"rescore-{slug(scorer)}",
        RESCORE,
        params,
        f"every stored {scorer} score follows from completion and target under {method}",
        own,
        path,
    )
    if case_id is None:
        return None
    if message is not None:
        plan.notes.append(f"rescore {scorer}: {message}")
    return case_id, params


def _not_linear(method: str, options: Mapping[str, Any]) -> str | None:
    """Why a ``pattern`` scorer's pattern is not re-run (outside the subset RE2 reads as
    Python's re does: it would run on a backtracking engine), or None."""
    if method != "pattern":
        return None
    try:
        linear.compile(str(options["pattern"]), bool(options.get("ignore_case", True)))
    except linear.NotInSubset as exc:
        return (
            f"its pattern {str(options['pattern'])[:200]!r} is not re-run: {exc}, outside "
            "the subset a linear engine reads as Python's re does"
        )
    return None


def _control_cases(
    plan: Plan, scorer: str, mine: InspectLog, needs: list[Need], folder: str = CONTROLS
) -> dict[str, str]:
    """A negative control per need (same checker and params, a changed copy of the log,
    written under ``folder``); returns case id -> control case id."""
    files = _controls(
        plan, scorer, mine, [(checker, params, code) for _, checker, params, code in needs], folder
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
                "inputs": {role(checker_key): files[i]},
                "params": params,
                "expect": "fail",
                "expect_reasons": [code],
            }
        )
    return control_of


def _controls(
    plan: Plan,
    scorer: str,
    log: InspectLog,
    needs: list[tuple[str, dict[str, Any], str]],
    folder: str = CONTROLS,
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
        path = f"{folder}/{slug(scorer)}-{slug(str(sample_id))}-flipped.json"
        plan.controls[path] = control
        for i in covered:
            chosen[i] = path
        pending -= covered
        candidates.remove(sample_id)
    return chosen


RESCORE = "inspect-rescore@3"  # re-scoring on RE2 only: a pattern outside its subset is not re-run

Need = tuple[str, str, dict[str, Any], str]  # case id, checker, params, reason it must fail with


def _split_scorer(
    plan: Plan,
    scorer: str,
    method: str,
    options: Mapping[str, Any] | None,
    figure_cases: dict[str | None, list[tuple[str, dict[str, Any]]]],
    mine: InspectLog,
    headline: Mapping[str, Any],
    entries: list[Mapping[str, Any]],
    specs: list[Mapping[str, Any]],
) -> None:
    """The split layout: the figure claims rest on the scores file alone (their controls
    are scores files too), and the re-scoring, which reads the transcripts, is a claim of
    its own on the whole log (its control under the transcripts), so withholding the
    transcripts withholds only that claim."""
    assert plan.full is not None
    metric = plan.key("inspect-metric@4")
    needs: list[Need] = [
        (case_id, metric, params, "inspect.header_metric_mismatch")
        for cases in figure_cases.values()
        for case_id, params in cases
    ]
    control_of = _control_cases(plan, scorer, mine, needs)
    rescore_claim = None
    full_mine = _scorer_only(plan.full, scorer, entries, specs)
    rescore = _rescore_case(
        plan, scorer, method, options, to_json_log(full_mine, full_mine.records), plan.full_path
    )
    if rescore is not None:
        need = (rescore[0], RESCORE, rescore[1], "inspect.score_mismatch")
        controls = _control_cases(plan, scorer, full_mine, [need], f"{TRANSCRIPTS}/controls")
        if rescore[0] in controls:
            rescore_claim = f"rescore-{slug(scorer)}"
            plan.claim(
                {
                    "id": rescore_claim,
                    "statement": f"Every stored {scorer} score follows from completion and "
                    f"target under {method}, re-scored from the transcripts in {plan.full_path}.",
                    "cases": [rescore[0], controls[rescore[0]]],
                    "limits": [
                        *run_limits(plan.full),
                        revision_limit(plan.full),
                        _rules_version(plan.full, method),
                        "Reads the transcripts: a bundle that withholds them cannot check "
                        "this claim (its figures stay checked on the scores file).",
                    ],
                }
            )
    for reducer, every in figure_cases.items():
        cases = [(c, p) for c, p in every if c in control_of]
        if not cases:
            continue
        ids = [c for c, _ in cases]
        ids += [control_of[c] for c in ids]
        claim = _figure_claim(
            plan,
            scorer,
            reducer,
            [p for _, p in cases],
            ids,
            method,
            False,
            headline.get("score") == scorer and headline.get("reducer") == reducer,
        )
        if rescore_claim is not None:
            claim["limits"][-1] = (
                f"The {scorer} scores are checked here as {plan.log_path} states them; that "
                f"they follow from the transcripts is claim {rescore_claim}, that they are the "
                "log's is claim scores-match-log."
            )
        plan.claim(claim)


def scores_claim(plan: Plan) -> None:
    """The split layout: the scores file is the log's header and per-record scores (a case
    reading both, and a control with the scores file's last record removed)."""
    assert plan.full is not None
    case = plan.case(
        {
            "id": "scores-match-log",
            "checker": "inspect-scores@1",
            "inputs": {"log": plan.full_path, "scores": plan.log_path},
            "params": {},
            "expect": "pass",
        }
    )
    path = f"{CONTROLS}/scores-one-record-removed.json"
    plan.controls[path] = to_json_log(plan.log, plan.log.records[:-1])
    control = plan.case(
        {
            "id": "scores-match-log-control",
            "checker": "inspect-scores@1",
            "inputs": {"log": plan.full_path, "scores": path},
            "params": {},
            "expect": "fail",
            "expect_reasons": ["inspect.scores_not_the_logs"],
        }
    )
    plan.claim(
        {
            "id": "scores-match-log",
            "statement": f"{plan.log_path} holds exactly the header and each sample record's "
            f"scores and error of the log {plan.full_path}: the figures checked on it are the "
            "log's.",
            "cases": [case, control],
            "limits": [
                *run_limits(plan.full),
                revision_limit(plan.full),
                "Reads the transcripts: a bundle that withholds them cannot check this claim; "
                "its figures are then checked on the scores file as it stands.",
            ],
        }
    )


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
    plan: Plan,
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
        *run_limits(log),
        revision_limit(log),
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


def _scorer_of(
    by_method: Mapping[str, list[Mapping[str, Any]]], entry: Mapping[str, Any]
) -> tuple[str, Mapping[str, Any] | None]:
    """The scorer that made a result entry, and its recorded options (None if ambiguous);
    ``by_method``: the log's scorer specs by name without ``inspect_ai/``."""
    method = str(entry.get("scorer") or entry.get("name") or "")
    recorded = by_method.get(method.removeprefix("inspect_ai/"), [])
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


def _scorer_only(
    log: InspectLog,
    scorer: str,
    entries: list[Mapping[str, Any]],
    specs: list[Mapping[str, Any]],
) -> InspectLog:
    """The log with only ``scorer``'s scores and figures (``entries``: its result entries,
    ``specs``: its scorer specs): all its controls' checkers read (so a control's size, and
    the time to make it, do not grow with the other scorers)."""
    results = log.results
    header = dict(log.header)
    if results is not None:
        mine = [e for e in entries if isinstance(e, dict) and e.get("name") == scorer]
        header["results"] = {**results, "scores": mine}
    if log.spec:
        header["eval"] = {**log.spec, "scorers": list(specs)}
    records = tuple(
        dataclasses.replace(r, scores={scorer: r.scores[scorer]} if scorer in r.scores else {})
        for r in log.records
    )
    return InspectLog(log.format, header, records)
