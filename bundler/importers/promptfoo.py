"""promptfoo's results JSON (``promptfoo eval -o results.json``) -> a bundle source.

The file is copied unchanged into ``inputs/``. Written beside it, with the
``promptfoo-*@2`` checkers: promptfoo's own stats (totals, prompt and completion tokens)
and each prompt's test counts compared with the rows, the pass rate (errors in the
denominator, as promptfoo prints it; the rate over the tests that ran in the limits);
every assertion re-runnable under promptfoo 0.123.1's rules re-run on the stored outputs;
a negative control for each (a copy with one stated figure, or one assertion's result,
changed); the file's promptfoo version beside the rules' version; and what is not re-run
(by type, with why) under ``cannot_support``.

The file is read within verify's caps (bytes, values, depth) and parsed, like every
checker run here, under the time and memory limits of one case at verify.
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
from bundler.format import documents
from bundler.format.paths import path_problem
from bundler.importers import Checks, Imported, ImportLimits, read_log_file, slug, write_source
from bundler.importers.untrusted import AT_VERIFY, bounded
from checkers.api import CheckerInputError
from checkers.promptfoo.assertions import RULES_VERSION, Rerun, rerun_all
from checkers.promptfoo.results import STAT_COUNTS, ResultsV2, read_results, tokens_v2
from checkers.promptfoo.scores import project_v2, scores_bytes_v2

CONTROLS = "inputs/controls"
STATS = "promptfoo-stats@4"
ASSERT = "promptfoo-assert@3"
# the split layout (``import promptfoo --split``, issue 45)
TRANSCRIPTS = "inputs/transcripts"
SCORES = "inputs/scores"
STATS_SPLIT = "promptfoo-stats@5"
SCORES_CHECK = "promptfoo-scores@2"


def import_promptfoo(
    results_file: Path,
    dest: Path,
    name: str | None = None,
    version: str = "1.0.0",
    split: bool = True,
    limits: ImportLimits = AT_VERIFY,
) -> Imported:
    """Write a bundle source for ``results_file`` into ``dest`` (new or empty). ``split``
    (the default; False: the whole-log layout, as before issue 45): the file goes under
    ``inputs/transcripts/`` and its counts, without prompts, outputs or variables, into a
    scores file the pass rate is checked on (``checkers/promptfoo/scores.py``), so the
    transcripts can be withheld. The file is read, and its checks run, within ``limits``
    (by default verify's)."""
    data = read_log_file(results_file, dest, limits)
    return _import(results_file, data, dest, name, version, split, limits)


def _import(
    results_file: Path,
    data: bytes,
    dest: Path,
    name: str | None,
    version: str,
    split: bool = False,
    limits: ImportLimits = AT_VERIFY,
) -> Imported:
    caps = documents.Caps(values=limits.load.values, depth=limits.load.depth)
    try:
        document, results = bounded(  # under one case's time and memory, as at verify
            lambda: (
                documents.parse(
                    documents.decode(data, results_file.name), results_file.name, "json", caps
                ),
                read_results(data),
            ),
            f"reading {results_file}",
            limits.budget,
        )
    except (documents.DocumentProblem, CheckerInputError) as exc:
        raise SourceError(
            f"{results_file} is not promptfoo results this tool reads: {exc}"
        ) from None
    file_name = results_file.name if not path_problem(results_file.name) else "results.json"
    if split:
        plan = _Plan(f"{TRANSCRIPTS}/{file_name}", data, Checks(budget=limits.budget))
        scores_path = f"{SCORES}/{file_name.rsplit('.', 1)[0]}.scores.json"
        plan.files[scores_path] = scores_bytes_v2(document)
        _totals(plan, results, project_v2(document), scores_path)
    else:
        plan = _Plan(f"inputs/{file_name}", data, Checks(budget=limits.budget))
        _totals(plan, results, document)
    done = bounded(
        lambda: rerun_all(results.rows, True),
        f"re-running {results_file}'s assertions",
        limits.budget,
    )
    _assertions(plan, document, results, done, f"{TRANSCRIPTS}/controls" if split else CONTROLS)
    if split:
        _scores_claim(plan, scores_path)
    if not plan.claims:
        raise SourceError(f"{results_file} states no totals and no re-runnable assertion")
    description = (
        f"Imported by `reprobundle import promptfoo` from {results_file.name} (promptfoo "
        f"{results.promptfoo_version or '?'}, results version {results.version}, eval "
        f"{document.get('evalId', '?')}). {plan.log_path} is the file, unchanged; {CONTROLS}/ "
        "holds the negative controls (copies with one stated value changed)."
        + (
            f" The pass rate is checked on the scores file under {SCORES}/ (the file's counts, "
            f"no prompt, output or variable); {TRANSCRIPTS}/ holds what may be withheld."
            if split
            else ""
        )
        + "\n"
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
        "scope": {"cannot_support": _cannot_support(document, done)},
    }
    written = write_source(dest, doc, plan.files, "promptfoo")
    return Imported(dest, written, len(plan.cases), [c["id"] for c in plan.claims], plan.notes)


class _Plan:
    """The source being written: its files, cases, claims, and notes for the author."""

    def __init__(self, log_path: str, data: bytes, checks: Checks) -> None:
        self.log_path = log_path
        self.files = {log_path: data}
        self.cases: list[dict[str, Any]] = []
        self.claims: list[dict[str, Any]] = []
        self.notes: list[str] = []
        self.checks = checks  # each check under a case's limits, as at verify

    def control(self, name: str, document: Mapping[str, Any], folder: str = CONTROLS) -> str:
        path = f"{folder}/{name}"
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
                "inputs": {_role(checker_key): path},
                "params": params,
                "expect": "pass",
                **expect,
            }
        )
        found = checkers.get(checker_key)
        assert found is not None
        verdict = self.checks.run(found, {_role(checker_key): self.files[path]}, params)
        wanted = expect.get("expect", "pass")
        reasons = expect.get("expect_reasons")
        if verdict.status != wanted or (reasons and set(reasons) != set(verdict.codes)):
            self.notes.append(
                f"{case_id}: {verdict.message} (expected {wanted} {reasons or ''})".rstrip()
            )
        return case_id


def _role(checker_key: str) -> str:
    found = checkers.get(checker_key)
    assert found is not None
    return found.roles[0].name


def _totals(
    plan: _Plan, results: ResultsV2, document: Mapping[str, Any], scores: str | None = None
) -> None:
    """The pass-rate claim: promptfoo's stats compared with the rows, with a control for
    a stated count (and the prompt tokens, when stated) changed by one. ``scores``: the
    scores file to check them on (the split layout), and ``document`` its content."""
    stats_key = STATS_SPLIT if scores else STATS
    checked = scores or plan.log_path
    stats = results.stats
    if any(k not in stats for k in STAT_COUNTS):
        return
    tests = sum(stats[k] for k in STAT_COUNTS)
    successes, failures, errors = (stats[k] for k in STAT_COUNTS)
    claimed: dict[str, Any] = {"tests": tests}
    if tests:
        claimed["pass_rate"] = successes / tests
    params = {"claimed": claimed}
    ids = [plan.add("totals", stats_key, checked, params)]
    controls: list[tuple[str, tuple[str, ...], str]] = [
        ("successes", ("successes",), "stats.successes")
    ]
    tokens_compared = "prompt_tokens" in stats and "prompt_tokens" in tokens_v2(results.rows)
    if tokens_compared:
        controls.append(("prompt_tokens", ("tokenUsage", "prompt"), "stats.tokenUsage.prompt"))
    shown = []
    for figure, path, label in controls:
        control = copy.deepcopy(document)
        node: dict[str, Any] = control["results"]["stats"]
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] += 1
        control_path = plan.control(f"{figure.replace('_', '-')}-plus-one.json", control)
        ids.append(
            plan.add(
                f"totals-control-{figure.replace('_', '-')}",
                stats_key,
                control_path,
                params,
                expect="fail",
                expect_reasons=[f"promptfoo.stats.{figure}"],
            )
        )
        shown.append(label)
    ran = tests - errors
    tokens = (
        f"; {stats['prompt_tokens']} prompt and {stats['completion_tokens']} completion tokens"
        if tokens_compared and "completion_tokens" in stats
        else ""
    )
    plan.claims.append(
        {
            "id": "pass-rate",
            "statement": (
                f"{successes} of {tests} tests passed ({claimed.get('pass_rate', 0):.1%}): "
                f"{failures} failed and {errors} errored{tokens}, as promptfoo's stats state "
                "and its rows show; errors count in the denominator."
            ),
            "cases": ids,
            "limits": [
                f"Denominator: all {tests} tests, the {errors} errored (failureReason 2: "
                "the provider or the harness failed) counted as not passed, as promptfoo "
                f"prints it. Over the {ran} tests that ran without error: {successes}/{ran}"
                + (f" = {successes / ran:.1%}." if ran else "."),
                "Compares promptfoo's stats and each prompt's test counts with the stored "
                "rows; it re-runs no test and calls no provider. Token totals, cached and "
                "request counts are not compared.",
                "The controls are copies of the file with "
                + " and ".join(f"{label} raised by one" for label in shown)
                + ", each one a control of its own.",
            ],
        }
    )


def _assertions(
    plan: _Plan,
    document: Mapping[str, Any],
    results: ResultsV2,
    done: Rerun,
    folder: str = CONTROLS,
) -> None:
    """The assertions claim: every re-runnable assertion re-run on the stored output (its
    control, a copy of the file, under ``folder``)."""
    if not done.checked:
        return
    control = copy.deepcopy(document)
    row, j, _ = done.checked[0]
    stored = control["results"]["results"][row.index]["gradingResult"]["componentResults"][j]
    stored["pass"] = not stored["pass"]
    flipped = f"the stored result of results[{row.index}] assertion {j} turned around"
    control_path = plan.control("one-assertion-flipped.json", control, folder)
    ids = [
        plan.add("assertions", ASSERT, plan.log_path, {}),
        plan.add(
            "assertions-control",
            ASSERT,
            control_path,
            {},
            expect="fail",
            expect_reasons=["promptfoo.assert_mismatch"],
        ),
    ]
    rerun = Counter(str(r.components[k]["assertion"]["type"]) for r, k, _ in done.checked)
    shown = ", ".join(f"{k} x{n}" for k, n in sorted(rerun.items()))
    written_by = results.promptfoo_version
    if written_by == RULES_VERSION:
        versions = f"promptfoo {RULES_VERSION}'s rules, the version that wrote this file"
    else:
        versions = (
            f"promptfoo {RULES_VERSION}'s rules; this file was written by promptfoo "
            f"{written_by or '(version not stated)'}: the versions differ, and a rule changed "
            f"between them is applied as {RULES_VERSION} has it"
        )
    limits = [
        f"Re-runs each assertion on the stored output under {versions}. The model is not "
        "called again.",
        f"The control is a copy of the file with {flipped}.",
    ]
    if done.skipped:
        limits.append("Not re-run, taken as stored: " + _not_rerun(done) + ".")
    plan.claims.append(
        {
            "id": "assertions",
            "statement": (
                f"Every stored result of the {sum(rerun.values())} re-runnable deterministic "
                f"assertions ({shown}) follows from the stored output."
            ),
            "cases": ids,
            "limits": limits,
        }
    )


def _scores_claim(plan: _Plan, scores_path: str) -> None:
    """The split layout: the scores file is the results file's counts (a case reading both,
    and a control whose first row's success is turned around)."""
    other = json.loads(plan.files[scores_path])
    rows = other["results"]["results"]
    if not rows:
        return
    rows[0]["success"] = not rows[0]["success"]
    control = plan.control("scores-one-row-flipped.json", other)
    ids = []
    for case_id, scores, expect in (
        ("scores-match-results", scores_path, {}),
        (
            "scores-match-results-control",
            control,
            {"expect": "fail", "expect_reasons": ["promptfoo.scores_not_the_results"]},
        ),
    ):
        plan.cases.append(
            {
                "id": case_id,
                "checker": SCORES_CHECK,
                "inputs": {"results": plan.log_path, "scores": scores},
                "params": {},
                "expect": "pass",
                **expect,
            }
        )
        ids.append(case_id)
    plan.claims.append(
        {
            "id": "scores-match-results",
            "statement": f"{scores_path} holds exactly the counts of {plan.log_path} (each "
            "row's success, failure reason, prompt, token usage and assertion results; the "
            "stats; each prompt's metrics): the pass rate checked on it is the file's.",
            "cases": ids,
            "limits": [
                "Reads the whole results file: a bundle that withholds it cannot check this "
                "claim; the pass rate is then checked on the scores file as it stands."
            ],
        }
    )


def _not_rerun(done: Rerun) -> str:
    """Each type not re-run, by name, with how many and why."""
    return ", ".join(
        f"{kind} x{n} ({'; '.join(done.why[kind])})" for kind, n in sorted(done.skipped.items())
    )


def _providers(names: list[str]) -> str:
    """``the provider 'flaky'``, ``the providers 'a' and 'b'``: names quoted, so a name such
    as ``flaky`` is not read as a word of the sentence (issue 43, friction 14)."""
    if not names:
        return "the provider (the file names none)"
    quoted = [repr(n) for n in names]
    if len(quoted) == 1:
        return f"the provider {quoted[0]}"
    return f"the providers {', '.join(quoted[:-1])} and {quoted[-1]}"


def _cannot_support(document: Mapping[str, Any], done: Rerun) -> list[str]:
    results = document["results"]
    prompts: list[Any] = results.get("prompts") or []
    if not isinstance(prompts, list):
        prompts = []
    providers = sorted({str(p.get("provider")) for p in prompts if isinstance(p, dict)})
    cannot = [
        f"That {_providers(providers)} give{'s' if len(providers) <= 1 else ''} these outputs "
        "again: the bundle re-checks stored outputs and counts, never the model.",
        "That this file is the one promptfoo wrote: it is not signed; the bundle fixes its "
        "bytes from the import on.",
    ]
    if done.skipped:
        cannot.append("That the assertions not re-run are right: " + _not_rerun(done) + ".")
    return cannot
