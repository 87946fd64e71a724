"""The split layout of an imported lm-eval run (issue 45): the per-sample values apart
from the documents, prompts and responses, so those can be withheld while the figures and
counts stay checkable.

``reprobundle import lm-eval --split`` writes each samples file unchanged under
``inputs/transcripts/`` and, beside it, a **sample scores file**: the same JSON Lines,
each record without ``doc``, ``arguments``, ``resps``, ``filtered_resps`` and ``target``
(its ``doc_id``, ``filter``, hashes and per-sample metric values kept). The checkers:

- ``lm-eval-metric@3``, ``lm-eval-counts@3``: the decisions of ``@2`` (which decide from
  all the evidence: issue 41) on a sample scores file, which they require (a record
  holding a document, prompt, response or target is ``input.invalid``);
- ``lm-eval-metric@5``: the decision of ``lm-eval-metric@4`` (each document once under
  the figure's filter) on a sample scores file; ``@3`` averaged a record repeated in the
  sample scores file, under a header edited to match (advisory RB-2026-0053);
- ``lm-eval-scores@1``: the sample scores file is exactly that projection of the samples
  file (it reads the transcripts, so a redacted bundle withholds it with the hashes).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ..api import CheckerInputError, Reason, Verdict, checker
from .checks import RESULTS_ROLE, SAMPLES_ROLE
from .evidence import lm_eval_counts_v2 as lm_eval_counts
from .evidence import lm_eval_metric_v2 as lm_eval_metric
from .evidence import lm_eval_metric_v4

SENSITIVE = ("doc", "arguments", "resps", "filtered_resps", "target")

SCORES_ROLE = SAMPLES_ROLE._replace(
    name="sample_scores",
    doc="the task's per-sample values as `reprobundle import lm-eval --split` writes them: "
    "samples_<task>_<time>.jsonl without each record's doc, arguments, resps, "
    "filtered_resps and target",
)


def project_record(value: Any) -> Any:
    """A samples record without its document, prompt, responses and target."""
    if not isinstance(value, dict):
        return value
    return {k: v for k, v in value.items() if k not in SENSITIVE}


def project(samples: Any) -> list[tuple[int, Any]]:
    """A loaded samples file (``(line, value)`` pairs) as its sample scores."""
    if not isinstance(samples, list):
        raise CheckerInputError("input.invalid", "the samples file is not JSON Lines")
    return [(line, project_record(value)) for line, value in samples]


def _as_samples(inputs: Mapping[str, Any]) -> dict[str, Any]:
    """The ``@2`` inputs: the sample scores as its ``samples``; a record holding a
    document, prompt, response or target is ``input.invalid``."""
    out = {"results": inputs["results"]}
    if "sample_scores" not in inputs:
        return out
    scores = inputs["sample_scores"]
    if isinstance(scores, list):
        for line, value in scores:
            if isinstance(value, dict) and any(k in value for k in SENSITIVE):
                raise CheckerInputError(
                    "input.invalid",
                    f"line {line} holds {', '.join(k for k in SENSITIVE if k in value)}: a "
                    "sample scores file holds none (give the file `import lm-eval --split` "
                    "wrote; a whole samples file is read by the @2 checkers)",
                )
    return {**out, "samples": scores}


def _projected(counterexample: Any) -> Any:
    def made(params: Mapping[str, Any]) -> Mapping[str, Any] | None:
        """The wrapped version\'s counterexample, in the split layout."""
        found = counterexample(params)
        if found is None:
            return None
        out = {"results": found["results"]}
        if "samples" in found:
            out["sample_scores"] = project(found["samples"])
        return out

    return made


@checker(
    "lm-eval-metric",
    3,
    roles=[RESULTS_ROLE, SCORES_ROLE],
    params=list(lm_eval_metric.params),
    reasons=dict(lm_eval_metric.reasons),
    counterexample=_projected(lm_eval_metric.counterexample),
    example_params=[{"task": "t", "metric": "acc", "filter": "none", "claimed": 0.25}],
)
def lm_eval_metric_v3(inputs: Mapping[str, Any], params: Mapping[str, Any]) -> Verdict:
    """A task's figure (and its stderr) is the mean of a sample scores file's values.

    `lm-eval-metric@2`'s decision, on a sample scores file (the split layout of `import
    lm-eval --split`): a record holding a document, prompt, response or target is
    `input.invalid`. That the values are the samples file's is `lm-eval-scores@1`.
    """
    return lm_eval_metric.function(_as_samples(inputs), params)


@checker(
    "lm-eval-metric",
    5,
    roles=[RESULTS_ROLE, SCORES_ROLE],
    params=list(lm_eval_metric_v4.params),
    reasons=dict(lm_eval_metric_v4.reasons),
    counterexample=_projected(lm_eval_metric_v4.counterexample),
    example_params=[{"task": "t", "metric": "acc", "filter": "none", "claimed": 0.25}],
)
def lm_eval_metric_v5(inputs: Mapping[str, Any], params: Mapping[str, Any]) -> Verdict:
    """A task's figure (and its stderr) is the mean of a sample scores file's values, each
    document once.

    `lm-eval-metric@4`'s decision, on a sample scores file (the split layout of `import
    lm-eval`): as `@3`, and a doc_id stored more than once under the figure's filter fails
    (`lmeval.duplicate_doc`) whatever the header says. A record holding a document,
    prompt, response or target is `input.invalid`. That the values are the samples file's
    is `lm-eval-scores@1`.
    """
    return lm_eval_metric_v4.function(_as_samples(inputs), params)


@checker(
    "lm-eval-counts",
    3,
    roles=[RESULTS_ROLE, SCORES_ROLE._replace(optional=True)],
    params=list(lm_eval_counts.params),
    reasons=dict(lm_eval_counts.reasons),
    counterexample=_projected(lm_eval_counts.counterexample),
    example_params=[{"task": "t", "claimed": {"original": 7, "effective": 3}}],
)
def lm_eval_counts_v3(inputs: Mapping[str, Any], params: Mapping[str, Any]) -> Verdict:
    """A task's n-samples is what its sample scores file holds.

    `lm-eval-counts@2`'s decision, on a sample scores file (the split layout of `import
    lm-eval --split`): a record holding a document, prompt, response or target is
    `input.invalid`.
    """
    return lm_eval_counts.function(_as_samples(inputs), params)


def _canonical(samples: Any) -> str:
    values = [value for _, value in samples] if isinstance(samples, list) else samples
    return json.dumps(values, sort_keys=True, allow_nan=True)


def _scores_counterexample(params: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """A scores record with another value than its samples record: not the samples'."""
    samples = [(1, {"doc_id": 0, "filter": "none", "doc": {"q": "x"}, "acc": 1})]
    return {"samples": samples, "sample_scores": [(1, {"doc_id": 0, "filter": "none", "acc": 0})]}


@checker(
    "lm-eval-scores",
    1,
    roles=[SAMPLES_ROLE._replace(compared=True), SCORES_ROLE._replace(compared=True)],
    reasons={
        "lmeval.scores_not_the_samples": "the sample scores file is not the samples file's "
        "records without their documents, prompts and responses",
    },
    counterexample=_scores_counterexample,
    example_params=[{}],
)
def lm_eval_scores(inputs: Mapping[str, Any], params: Mapping[str, Any]) -> Verdict:
    """The sample scores file is exactly the samples file without its transcripts.

    Reads the whole samples file and the sample scores file and compares, record by record
    in order, each samples record without `doc`, `arguments`, `resps`, `filtered_resps` and
    `target` with the scores record. A pass ties the figures and counts checked on the
    scores (`lm-eval-metric@3` and `@5`, `lm-eval-counts@3`) to the samples; in a redacted bundle
    that withholds the samples it is not run.
    """
    want, got = project(inputs["samples"]), inputs["sample_scores"]
    if _canonical(want) == _canonical(got):
        return Verdict.passed(f"the {len(want)} records match the samples file's")
    count = len(got) if isinstance(got, list) else 0
    return Verdict.failed(
        "the sample scores are not the samples file's",
        [
            Reason(
                "lmeval.scores_not_the_samples",
                f"the samples file holds {len(want)} record(s), the scores file {count}; "
                "their values differ"
                if count != len(want)
                else "a record's values differ",
            )
        ],
    )
