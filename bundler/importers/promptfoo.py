"""promptfoo's results JSON (``promptfoo eval -o results.json``) -> a bundle source.

The file is copied unchanged into ``inputs/``. Written beside it, with the
``promptfoo-*@1`` checkers: the totals and the pass rate (errors in the denominator, as
promptfoo prints it; the rate over the tests that ran in the limits) re-counted from the
rows; every deterministic assertion re-run on the stored outputs; a negative control for
each (a copy with one row's success, or one assertion's result, turned around); and what
is not re-run (model-graded and code assertions, the providers) under ``cannot_support``.
"""

from __future__ import annotations

import copy
import json
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import checkers
from bundler.errors import SourceError
from bundler.format.paths import path_problem
from bundler.importers import Checks, Imported, read_log_file, slug, write_source
from checkers.api import CheckerInputError
from checkers.promptfoo.results import ERROR, Row, kind_of, read_rows, skip_reason

CONTROLS = "inputs/controls"


def import_promptfoo(
    results_file: Path, dest: Path, name: str | None = None, version: str = "1.0.0"
) -> Imported:
    """Write a bundle source for ``results_file`` into ``dest`` (new or empty)."""
    data = read_log_file(results_file, dest)
    try:
        results, rows = read_rows(data)
    except CheckerInputError as exc:
        raise SourceError(
            f"{results_file} is not promptfoo results this tool reads: {exc}"
        ) from None
    document = json.loads(data)
    file_name = results_file.name if not path_problem(results_file.name) else "results.json"
    plan = _Plan(f"inputs/{file_name}", data)
    _totals(plan, results, document)
    skipped = _assertions(plan, document, rows)
    if not plan.claims:
        raise SourceError(f"{results_file} states no totals and no re-runnable assertion")
    meta = document.get("metadata") if isinstance(document.get("metadata"), dict) else {}
    description = (
        f"Imported by `reprobundle import promptfoo` from {results_file.name} (promptfoo "
        f"{meta.get('promptfooVersion', '?')}, results version {results.get('version')}, eval "
        f"{document.get('evalId', '?')}). {plan.log_path} is the file, unchanged; {CONTROLS}/ "
        "holds the negative controls (copies with one value turned around).\n"
    )
    config = document.get("config") if isinstance(document.get("config"), dict) else {}
    title = str(config.get("description") or document.get("evalId") or "eval")
    doc = {
        "name": name or f"promptfoo-{slug(title)}"[:64].rstrip("-"),
        "version": version,
        "title": f"promptfoo results: {title}"[:200],
        "description": description,
        "files": ["inputs/**"],
        "cases": plan.cases,
        "claims": plan.claims,
        "scope": {"cannot_support": _cannot_support(results, skipped)},
    }
    written = write_source(dest, doc, plan.files, "promptfoo")
    return Imported(dest, written, len(plan.cases), [c["id"] for c in plan.claims], plan.notes)


class _Plan:
    """The source being written: its files, cases, claims, and notes for the author."""

    def __init__(self, log_path: str, data: bytes) -> None:
        self.log_path = log_path
        self.files = {log_path: data}
        self.cases: list[dict[str, Any]] = []
        self.claims: list[dict[str, Any]] = []
        self.notes: list[str] = []
        self.checks = Checks()  # each check under a case's limits, as at verify

    def control(self, name: str, document: Mapping[str, Any]) -> str:
        path = f"{CONTROLS}/{name}"
        self.files[path] = (json.dumps(document, indent=1) + "\n").encode()
        return path

    def add(
        self, case_id: str, checker_key: str, path: str, params: dict[str, Any], **expect: Any
    ) -> str:
        """Add a case, run here at once: a note if it does not give what it expects."""
        self.cases.append(
            {
                "id": case_id,
                "checker": checker_key,
                "inputs": {"results": path},
                "params": params,
                "expect": "pass",
                **expect,
            }
        )
        found = checkers.get(checker_key)
        assert found is not None
        verdict = self.checks.run(found, {"results": self.files[path]}, params)
        wanted = expect.get("expect", "pass")
        if verdict.status != wanted:
            self.notes.append(f"{case_id}: {verdict.message} (expected {wanted})")
        return case_id


def _totals(plan: _Plan, results: Mapping[str, Any], document: Mapping[str, Any]) -> None:
    """The pass-rate claim: the totals the results state, re-counted from the rows."""
    stats: Mapping[str, Any] = results.get("stats") or {}
    if not isinstance(stats, dict):
        stats = {}
    claimed: dict[str, Any] = {
        k: stats[k] for k in ("successes", "failures", "errors") if isinstance(stats.get(k), int)
    }
    if not claimed:
        return
    tests = sum(claimed.values())
    claimed["tests"] = tests
    if tests:
        claimed["pass_rate"] = claimed.get("successes", 0) / tests
    params = {"claimed": claimed}
    control = copy.deepcopy(document)
    turned = _turn_one_row(control)
    control_path = plan.control("one-row-turned.json", control)
    ids = [
        plan.add("totals", "promptfoo-stats@1", plan.log_path, params),
        plan.add(
            "totals-control",
            "promptfoo-stats@1",
            control_path,
            params,
            expect="fail",
            expect_reasons=["promptfoo.count_mismatch"],
        ),
    ]
    errors = claimed.get("errors", 0)
    ran = tests - errors
    rate = f"{claimed.get('pass_rate', 0):.1%}"
    plan.claims.append(
        {
            "id": "pass-rate",
            "statement": (
                f"{claimed.get('successes', 0)} of {tests} tests passed ({rate}): "
                f"{claimed.get('failures', 0)} failed and {errors} errored, as the "
                "results state; errors count in the denominator."
            ),
            "cases": ids,
            "limits": [
                f"Denominator: all {tests} tests, the {errors} errored (failureReason 2: "
                "the provider or the harness failed) counted as not passed, as promptfoo "
                f"prints it. Over the {ran} tests that ran without error: "
                f"{claimed.get('successes', 0)}/{ran}"
                + (f" = {claimed.get('successes', 0) / ran:.1%}." if ran else "."),
                "Re-counts the stored rows; it re-runs no test and calls no provider.",
                f"The control is a copy of the file with {turned}.",
            ],
        }
    )


def _assertions(plan: _Plan, document: Mapping[str, Any], rows: list[Row]) -> Counter[str]:
    """The assertions claim: every deterministic assertion re-run on the stored output.
    Returns the kinds not re-run (taken as stored), with how many of each."""
    rerun: Counter[str] = Counter()
    skipped: Counter[str] = Counter()
    for row in rows:
        for component in row.components:
            (skipped if skip_reason(row, component) else rerun)[kind_of(component)] += 1
    if not rerun:
        return skipped
    control = copy.deepcopy(document)
    flipped = _flip_one_assertion(control, rows)
    control_path = plan.control("one-assertion-flipped.json", control)
    ids = [
        plan.add("assertions", "promptfoo-assert@1", plan.log_path, {}),
        plan.add(
            "assertions-control",
            "promptfoo-assert@1",
            control_path,
            {},
            expect="fail",
            expect_reasons=["promptfoo.assert_mismatch"],
        ),
    ]
    shown = ", ".join(f"{k} x{n}" for k, n in sorted(rerun.items()))
    limits = [
        "Re-runs each assertion on the stored output under promptfoo 0.121's rules; "
        "the model is not called again.",
        f"The control is a copy of the file with {flipped}.",
    ]
    if skipped:
        limits.append(
            "Not re-run, taken as stored: "
            + ", ".join(f"{k} x{n}" for k, n in sorted(skipped.items()))
            + "."
        )
    plan.claims.append(
        {
            "id": "assertions",
            "statement": (
                f"Every stored result of the {sum(rerun.values())} deterministic "
                f"assertions ({shown}) follows from the stored output."
            ),
            "cases": ids,
            "limits": limits,
        }
    )
    return skipped


def _cannot_support(results: Mapping[str, Any], skipped: Counter[str]) -> list[str]:
    prompts: list[Any] = results.get("prompts") or []
    if not isinstance(prompts, list):
        prompts = []
    providers = sorted({str(p.get("provider")) for p in prompts if isinstance(p, dict)})
    cannot = [
        f"That the provider(s) {', '.join(providers) or '?'} give these outputs again: the "
        "bundle re-checks stored outputs and counts, never the model.",
        "That this file is the one promptfoo wrote: it is not signed; the bundle fixes its "
        "bytes from the import on.",
    ]
    if skipped:
        cannot.append(
            "That the assertions not re-run are right ("
            + ", ".join(f"{k} x{n}" for k, n in sorted(skipped.items()))
            + "): model-graded and code assertions are taken as stored."
        )
    return cannot


def _rows(document: Mapping[str, Any]) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = document["results"]["results"]
    return rows


def _turn_one_row(document: Mapping[str, Any]) -> str:
    """Turn the first passing row into a failed one (or the first other row into a pass)."""
    rows = _rows(document)
    for i, row in enumerate(rows):
        if row.get("success"):
            row.update(success=False, failureReason=1)
            return f"results[{i}] turned from passed to failed"
    for i, row in enumerate(rows):
        if row.get("failureReason") != ERROR:
            row.update(success=True, failureReason=0)
            return f"results[{i}] turned from failed to passed"
    rows[0].update(success=True, failureReason=0)
    return "results[0] turned from errored to passed"


def _flip_one_assertion(document: Mapping[str, Any], rows: list[Row]) -> str:
    """Turn around the stored result of the first re-runnable assertion."""
    raw = _rows(document)
    for row in rows:
        for j, component in enumerate(row.components):
            if skip_reason(row, component) is None:
                stored = raw[row.index]["gradingResult"]["componentResults"][j]
                stored["pass"] = not stored["pass"]
                return f"the stored result of results[{row.index}] assertion {j} turned around"
    raise AssertionError("no re-runnable assertion")  # the caller counted one
