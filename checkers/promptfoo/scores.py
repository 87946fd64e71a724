"""The split layout of imported promptfoo results (issue 45): the counts apart from the
prompts, outputs and test variables, so those can be withheld while the pass rate stays
checkable.

``reprobundle import promptfoo --split`` writes the results file unchanged under
``inputs/transcripts/`` and, beside it, a **scores file**: the same JSON shape holding
only what promptfoo's stats are judged from (each row's ``success``, ``failureReason``,
``promptIdx``, ``tokenUsage`` and each assertion's ``pass`` and type; ``results.stats``;
each prompt's ``provider`` and ``metrics``; the promptfoo version). The checkers here:

- ``promptfoo-stats@3``: ``promptfoo-stats@2``'s decision on a scores file, which it
  requires (a file holding anything else is ``input.invalid``);
- ``promptfoo-scores@1``: the scores file is exactly that projection of the results file
  (what ties the pass rate to the outputs; it reads them, so a redacted bundle withholds
  it with the re-run assertions).

The second shape of the scores file (issue 45 item 5, issue 41) keeps each row's
``testIdx`` too, the pair promptfoo writes each result under, so a result written twice
can be told from two tests on the scores file:

- ``promptfoo-stats@5``: ``promptfoo-stats@4``'s decision (each ``testIdx`` and
  ``promptIdx`` pair once) on a scores file of the second shape; ``@3`` counted a row
  repeated in the scores file, under stats edited to match, as several tests (advisory
  RB-2026-0051);
- ``promptfoo-scores@2``: the scores file is exactly the second projection of the results
  file (so its ``testIdx`` and ``promptIdx`` are the results file's).

The shape is the checker version's: ``@3`` and ``promptfoo-scores@1`` read the first shape
(a row carrying ``testIdx`` is more than it holds), ``@5`` and ``promptfoo-scores@2`` the
second.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from .. import strictjson
from ..api import CheckerInputError, InputKind, Reason, Role, Verdict, checker
from .checks import RESULTS_ROLE, promptfoo_stats_v2, promptfoo_stats_v4
from .results import PROMPT_COUNTS

SCORES_ROLE = Role(
    "scores",
    InputKind.BYTES,
    "the counts of promptfoo results as `reprobundle import promptfoo --split` writes them: "
    "each row's success, failureReason, promptIdx, tokenUsage and assertion pass and type; "
    "results.stats; each prompt's provider and metrics; no prompt, output or variable",
)

_ROW_KEYS = ("success", "failureReason", "promptIdx", "tokenUsage")
# the second shape: each row's result pair too (promptfoo-stats@5, promptfoo-scores@2)
_ROW_KEYS_V2 = ("success", "failureReason", "testIdx", "promptIdx", "tokenUsage")

SCORES_ROLE_V2 = Role(
    "scores",
    InputKind.BYTES,
    "the counts of promptfoo results as `reprobundle import promptfoo` writes them in the "
    "split layout: each row's success, failureReason, testIdx, promptIdx, tokenUsage and "
    "assertion pass and type; results.stats; each prompt's provider and metrics; no prompt, "
    "output or variable",
)


def _parse(data: bytes, what: str) -> Any:
    """The JSON document ``data``, read by the one strict reader as promptfoo-stats reads
    its results (NaN, infinities and any depth Python reads accepted)."""
    try:
        return strictjson.loads(data, None, constants=True, huge_numbers=True)
    except strictjson.DuplicateKey as exc:
        raise CheckerInputError(
            "input.invalid", f"{what}: key {exc.key!r} appears twice in one object"
        ) from None
    except (ValueError, RecursionError) as exc:
        raise CheckerInputError("input.invalid", f"{what}: not a JSON document ({exc})") from None


def project(document: Any, row_keys: tuple[str, ...] = _ROW_KEYS) -> dict[str, Any]:
    """The scores of a promptfoo results document (see the module's docstring): each row's
    ``row_keys`` (the first shape's by default)."""
    results = document.get("results") if isinstance(document, dict) else None
    if not isinstance(results, dict):
        raise CheckerInputError("input.invalid", "no 'results' object: not promptfoo's output")
    rows = []
    for row in results.get("results") or []:
        if not isinstance(row, dict):
            raise CheckerInputError("input.invalid", "a row of results.results is not an object")
        kept = {k: row[k] for k in row_keys if k in row}
        grading = row.get("gradingResult")
        if isinstance(grading, dict) and isinstance(grading.get("componentResults"), list):
            kept["gradingResult"] = {
                "componentResults": [
                    {
                        "pass": c.get("pass"),
                        "assertion": {"type": (c.get("assertion") or {}).get("type")},
                    }
                    if isinstance(c, dict)
                    else c
                    for c in grading["componentResults"]
                ]
            }
        rows.append(kept)
    prompts = []
    for prompt in results.get("prompts") or []:
        if not isinstance(prompt, dict):
            raise CheckerInputError("input.invalid", "a prompt of results.prompts is not an object")
        metrics = prompt.get("metrics")
        kept_metrics = (
            {k: metrics[k] for k in PROMPT_COUNTS if k in metrics}
            if isinstance(metrics, dict)
            else metrics
        )
        prompts.append({"provider": prompt.get("provider"), "metrics": kept_metrics})
    out: dict[str, Any] = {
        "results": {
            "version": results.get("version"),
            "stats": results.get("stats"),
            "prompts": prompts,
            "results": rows,
        }
    }
    meta = document.get("metadata")
    if isinstance(meta, dict) and "promptfooVersion" in meta:
        out["metadata"] = {"promptfooVersion": meta["promptfooVersion"]}
    return out


def project_v2(document: Any) -> dict[str, Any]:
    """The scores of a promptfoo results document in the second shape (with ``testIdx``)."""
    return project(document, _ROW_KEYS_V2)


def scores_bytes(document: Any) -> bytes:
    """The scores file of a results document (the same document gives the same bytes)."""
    return (json.dumps(project(document), indent=1, ensure_ascii=False) + "\n").encode()


def scores_bytes_v2(document: Any) -> bytes:
    """The scores file of a results document in the second shape (with ``testIdx``)."""
    return (json.dumps(project_v2(document), indent=1, ensure_ascii=False) + "\n").encode()


def _as_results(inputs: Mapping[str, Any], row_keys: tuple[str, ...] = _ROW_KEYS) -> dict[str, Any]:
    """The scores file as the ``results`` input of the ``@2`` decision; a file holding
    anything a scores file does not (an output, a prompt, a variable) is ``input.invalid``."""
    data = inputs["scores"]
    document = _parse(data, "the scores file")
    if project(document, row_keys) != document:
        raise CheckerInputError(
            "input.invalid",
            "the file holds more than a scores file does (outputs, prompts or variables"
            + (
                ""
                if "testIdx" in row_keys
                else ", or a row's testIdx: that shape is read by promptfoo-stats@5"
            )
            + "): give the scores file `import promptfoo` wrote (the whole results file is "
            "read by promptfoo-stats@2 and @4)",
        )
    return {"results": data}


def _stats_counterexample_v3(params: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """promptfoo-stats@2's counterexample in the split layout (its results as scores)."""
    found = promptfoo_stats_v2.counterexample(params) if promptfoo_stats_v2.counterexample else None
    if found is None:
        return None
    return {"scores": scores_bytes(_parse(found["results"], "counterexample"))}


@checker(
    "promptfoo-stats",
    3,
    roles=[SCORES_ROLE],
    params=list(promptfoo_stats_v2.params),
    reasons=dict(promptfoo_stats_v2.reasons),
    counterexample=_stats_counterexample_v3,
    example_params=[{}, {"claimed": {"tests": 4, "pass_rate": 0.5}, "tolerance": 0.005}],
)
def promptfoo_stats_v3(inputs: Mapping[str, Any], params: Mapping[str, Any]) -> Verdict:
    """promptfoo's stats, each prompt's counts and claimed totals follow from a scores file.

    `promptfoo-stats@2`'s decision, on a scores file (the split layout of `import promptfoo
    --split`): a file holding an output, a prompt or a variable is `input.invalid`. That
    the scores file is the results file's is `promptfoo-scores@1`.
    """
    return promptfoo_stats_v2.function(_as_results(inputs), params)


def _stats_counterexample_v5(params: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """promptfoo-stats@4's counterexample in the split layout (its results as scores)."""
    found = promptfoo_stats_v4.counterexample(params) if promptfoo_stats_v4.counterexample else None
    if found is None:
        return None
    return {"scores": scores_bytes_v2(_parse(found["results"], "counterexample"))}


@checker(
    "promptfoo-stats",
    5,
    roles=[SCORES_ROLE_V2],
    params=list(promptfoo_stats_v4.params),
    reasons=dict(promptfoo_stats_v4.reasons),
    counterexample=_stats_counterexample_v5,
    example_params=[{}, {"claimed": {"tests": 4, "pass_rate": 0.5}, "tolerance": 0.005}],
)
def promptfoo_stats_v5(inputs: Mapping[str, Any], params: Mapping[str, Any]) -> Verdict:
    """promptfoo's stats, prompt counts and claimed totals follow from a scores file's rows,
    each result once.

    `promptfoo-stats@4`'s decision, on a scores file of the second shape (the split layout
    of `import promptfoo`: each row's `testIdx` kept): a (`testIdx`, `promptIdx`) pair
    written more than once fails (`promptfoo.result_repeated`) whatever the stats say;
    `@3` counted a row repeated in the scores file, under stats edited to match, as
    several tests. A row without integer `testIdx` and `promptIdx` is `input.invalid`, as
    is a file holding an output, a prompt or a variable. That the scores file is the
    results file's (its pairs included) is `promptfoo-scores@2`.
    """
    return promptfoo_stats_v4.function(_as_results(inputs, _ROW_KEYS_V2), params)


def _scores_counterexample(params: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """A scores file that is not the results' projection: the scores are not the results'."""
    row = {"success": True, "failureReason": 0, "response": {"output": "x"}}
    document = {"results": {"version": 3, "results": [row], "stats": {"successes": 1}}}
    other = project(document)
    other["results"]["results"][0]["success"] = False
    return {
        "results": json.dumps(document).encode(),
        "scores": (json.dumps(other) + "\n").encode(),
    }


@checker(
    "promptfoo-scores",
    1,
    roles=[
        Role(RESULTS_ROLE.name, RESULTS_ROLE.kind, RESULTS_ROLE.doc, compared=True),
        Role(SCORES_ROLE.name, SCORES_ROLE.kind, SCORES_ROLE.doc, compared=True),
    ],
    reasons={
        "promptfoo.scores_not_the_results": "the scores file is not the results file's counts",
    },
    counterexample=_scores_counterexample,
    example_params=[{}],
)
def promptfoo_scores(inputs: Mapping[str, Any], params: Mapping[str, Any]) -> Verdict:
    """The scores file holds exactly the results file's counts.

    Reads the whole results file (with its prompts, outputs and variables) and the scores
    file, and compares the scores file with the results' projection: each row's success,
    failureReason, promptIdx, tokenUsage and assertions' pass and type, `results.stats`,
    each prompt's provider and metrics, the promptfoo version. A pass ties the pass rate
    checked on the scores file (`promptfoo-stats@3`) to the results file; in a redacted
    bundle that withholds the results file it is not run.
    """
    return _scores_match(inputs, _ROW_KEYS)


def _scores_match(inputs: Mapping[str, Any], row_keys: tuple[str, ...]) -> Verdict:
    """The scores file against the results file's projection on ``row_keys``."""
    want = project(_parse(inputs["results"], "the results file"), row_keys)
    got = _parse(inputs["scores"], "the scores file")
    if want == got:
        rows = len(want["results"]["results"])
        return Verdict.passed(f"the scores file holds the results file's counts ({rows} rows)")
    parts = [
        key
        for key in ("version", "stats", "prompts", "results")
        if not isinstance(got, dict)
        or want["results"].get(key) != (got.get("results") or {}).get(key)
    ]
    return Verdict.failed(
        "the scores file is not the results file's",
        [
            Reason(
                "promptfoo.scores_not_the_results",
                f"it differs in results.{', results.'.join(parts) or 'metadata'}",
            )
        ],
    )


def _scores_counterexample_v2(params: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """A scores file whose row names another test than the results' row: the pairs are
    not the results'."""
    row = {"success": True, "failureReason": 0, "testIdx": 0, "promptIdx": 0}
    document = {"results": {"version": 3, "results": [{**row, "response": {"output": "x"}}]}}
    other = project_v2(document)
    other["results"]["results"][0]["testIdx"] = 1
    return {
        "results": json.dumps(document).encode(),
        "scores": (json.dumps(other) + "\n").encode(),
    }


@checker(
    "promptfoo-scores",
    2,
    roles=[
        Role(RESULTS_ROLE.name, RESULTS_ROLE.kind, RESULTS_ROLE.doc, compared=True),
        Role(SCORES_ROLE_V2.name, SCORES_ROLE_V2.kind, SCORES_ROLE_V2.doc, compared=True),
    ],
    reasons={
        "promptfoo.scores_not_the_results": "the scores file is not the results file's counts",
    },
    counterexample=_scores_counterexample_v2,
    example_params=[{}],
)
def promptfoo_scores_v2(inputs: Mapping[str, Any], params: Mapping[str, Any]) -> Verdict:
    """The scores file of the second shape holds exactly the results file's counts and
    result pairs.

    As `promptfoo-scores@1`, on the second shape: each row's `testIdx` is compared too, so
    the pairs `promptfoo-stats@5` finds each result once by are the results file's. A pass
    ties the pass rate checked on the scores file (`promptfoo-stats@5`) to the results
    file; in a redacted bundle that withholds the results file it is not run.
    """
    return _scores_match(inputs, _ROW_KEYS_V2)
