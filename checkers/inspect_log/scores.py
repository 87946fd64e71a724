"""The split layout of an imported Inspect log (issue 45): the scores apart from the
transcripts, so the transcripts can be withheld while the figures stay checkable.

``reprobundle import inspect --split`` writes the log unchanged under
``inputs/transcripts/`` and, beside it, a **scores file**: a ``.json`` log holding the
header and each sample record's id, epoch, scores (values only) and error, with no
transcript (no target, completion or scorer answer). The checkers here are:

- ``inspect-metric@3``, ``inspect-status@3``: the decisions of ``@2``, and
  ``inspect-counts@4``: the decision of ``inspect-counts@3``, on a scores file, which
  they require (a file holding a transcript is ``input.invalid``: the figures' checks
  never read one, so withholding the transcripts never withholds a figure);
- ``inspect-metric@5``: the decision of ``inspect-metric@4`` (each sample and epoch
  recorded once) on a scores file; ``@3`` averaged a record repeated in the scores file,
  under a header edited to match, as several epochs (advisory RB-2026-0054);
- ``inspect-scores@1``: the scores file holds exactly the log's header and per-record
  scores and errors (what ties the checkable figures to the transcripts; it reads the
  transcripts, so a redacted bundle withholds it with the re-scoring).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from ..api import CheckerInputError, InputKind, Reason, Role, Verdict, checker
from .counts import inspect_counts_v3 as counts_of_plan_and_records
from .inputs import LOG_ROLE, synthetic_header
from .log import InspectLog, LogError, Record, Score, read_log, to_json_log
from .metric import inspect_metric_v2, inspect_metric_v4
from .status import inspect_status_v2

SCORES_ROLE = Role(
    "scores",
    InputKind.BYTES,
    "the scores of an Inspect AI log as `reprobundle import inspect --split` writes them: a "
    ".json log holding the header and each sample record's id, epoch, scores (values) and "
    "error, and no transcript (no target, completion or scorer answer)",
)


def project(log: InspectLog) -> InspectLog:
    """``log`` without its transcripts: each record's id, epoch, score values and error."""
    records = tuple(
        dataclasses.replace(
            r,
            target=(),
            completion="",
            scores={k: Score(s.value, None) for k, s in r.scores.items()},
        )
        for r in log.records
    )
    return InspectLog("json", dict(log.header), records)


def scores_bytes(log: InspectLog) -> bytes:
    """The scores file of ``log`` (deterministic: the same log gives the same bytes)."""
    scores = project(log)
    return to_json_log(scores, scores.records)


def _transcript_in(log: InspectLog) -> str | None:
    for r in log.records:
        if r.target or r.completion or any(s.answer is not None for s in r.scores.values()):
            return r.where
    return None


def _as_log(inputs: Mapping[str, Any]) -> dict[str, Any]:
    """The scores file as the ``log`` input of the ``@2`` decision; a file that is not a
    scores file (it holds a transcript) is ``input.invalid``."""
    data = inputs["scores"]
    try:
        log = read_log(data)
    except LogError as exc:
        raise CheckerInputError("input.invalid", str(exc)) from None
    where = _transcript_in(log)
    if where is not None:
        raise CheckerInputError(
            "input.invalid",
            f"{where} holds a transcript (a target, completion or scorer answer): a scores "
            "file holds none; give the scores file `import inspect --split` wrote (the whole "
            "log is read by the @2 checkers)",
        )
    return {"log": data}


def _projected(counterexample: Any) -> Any:
    """The ``@2`` counterexample, as a scores file."""

    def made(params: Mapping[str, Any]) -> Mapping[str, Any] | None:
        """The wrapped version\'s counterexample, in the split layout."""
        found = counterexample(params)
        if found is None:
            return None
        return {"scores": scores_bytes(read_log(found["log"]))}

    return made


@checker(
    "inspect-metric",
    3,
    roles=[SCORES_ROLE],
    params=list(inspect_metric_v2.params),
    reasons=dict(inspect_metric_v2.reasons),
    counterexample=_projected(inspect_metric_v2.counterexample),
    example_params=[{"scorer": "match", "reducer": "mean", "metric": "accuracy", "claimed": 0.5}],
)
def inspect_metric_v3(inputs: Mapping[str, Any], params: Mapping[str, Any]) -> Verdict:
    """A figure the header states equals the one recomputed from the scores file's scores.

    `inspect-metric@2`'s decision, on a scores file (the split layout of `import inspect
    --split`): the header's figure, `scored_samples` and `unscored_samples` are recomputed
    from the per-sample scores with Inspect's rules. A file holding a transcript is
    `input.invalid`. A pass means the header's arithmetic holds on the stored scores; that
    the scores are the log's is `inspect-scores@1`, that they follow from the completions
    `inspect-rescore@2`.
    """
    return inspect_metric_v2.function(_as_log(inputs), params)


@checker(
    "inspect-metric",
    5,
    roles=[SCORES_ROLE],
    params=list(inspect_metric_v4.params),
    reasons=dict(inspect_metric_v4.reasons),
    counterexample=_projected(inspect_metric_v4.counterexample),
    example_params=[{"scorer": "match", "reducer": "mean", "metric": "accuracy", "claimed": 0.5}],
)
def inspect_metric_v5(inputs: Mapping[str, Any], params: Mapping[str, Any]) -> Verdict:
    """A figure the header states equals the one recomputed from the scores file's scores,
    each sample and epoch recorded once.

    `inspect-metric@4`'s decision, on a scores file (the split layout of `import inspect`):
    as `@3`, and a (sample, epoch) recorded more than once fails
    (`inspect.record_repeated`, naming the pairs and records) whatever the header says:
    `@3` averaged a record written several times in the scores file, under a header edited
    to match, as several epochs. A file holding a transcript is `input.invalid`. That the
    scores are the log's is `inspect-scores@1`.
    """
    return inspect_metric_v4.function(_as_log(inputs), params)


@checker(
    "inspect-counts",
    4,
    roles=[SCORES_ROLE],
    params=list(counts_of_plan_and_records.params),
    reasons=dict(counts_of_plan_and_records.reasons),
    counterexample=_projected(counts_of_plan_and_records.counterexample),
    example_params=[{}, {"claimed": {"total_samples": 1}}],
)
def inspect_counts_v4(inputs: Mapping[str, Any], params: Mapping[str, Any]) -> Verdict:
    """The sample counts follow from the scores file's plan and records.

    `inspect-counts@3`'s decision, on a scores file (the split layout of `import inspect
    --split`). A file holding a transcript is `input.invalid`.
    """
    return counts_of_plan_and_records.function(_as_log(inputs), params)


@checker(
    "inspect-status",
    3,
    roles=[SCORES_ROLE],
    params=list(inspect_status_v2.params),
    reasons=dict(inspect_status_v2.reasons),
    counterexample=_projected(inspect_status_v2.counterexample),
    example_params=[{}],
)
def inspect_status_v3(inputs: Mapping[str, Any], params: Mapping[str, Any]) -> Verdict:
    """A run said to have finished cleanly hides no errored record in the scores file.

    `inspect-status@2`'s decision, on a scores file (the split layout of `import inspect
    --split`). A file holding a transcript is `input.invalid`.
    """
    return inspect_status_v2.function(_as_log(inputs), params)


def _scores_counterexample(params: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """A scores file whose record differs from the log's: the scores are not the log's."""
    records = (Record("s0", 1, ("1",), "1", {"match": Score("C", None)}, None, "samples[0]"),)
    log = InspectLog("json", synthetic_header(), records)
    other = InspectLog("json", synthetic_header(), records)
    changed = dataclasses.replace(records[0], scores={"match": Score("I", None)})
    return {
        "log": to_json_log(log, records),
        "scores": scores_bytes(dataclasses.replace(other, records=(changed,))),
    }


@checker(
    "inspect-scores",
    1,
    roles=[
        Role(LOG_ROLE.name, LOG_ROLE.kind, LOG_ROLE.doc, compared=True),
        Role(SCORES_ROLE.name, SCORES_ROLE.kind, SCORES_ROLE.doc, compared=True),
    ],
    reasons={
        "inspect.scores_not_the_logs": "the scores file is not the log's header and per-record "
        "scores and errors",
    },
    counterexample=_scores_counterexample,
    example_params=[{}],
)
def inspect_scores(inputs: Mapping[str, Any], params: Mapping[str, Any]) -> Verdict:
    """The scores file holds exactly the log's header and each record's scores and error.

    Reads the whole log (with its transcripts) and the scores file, and compares the
    header fields the figures are judged from (`version`, `status`, `eval`, `plan`,
    `results`, `stats`, `error`) and, record by record in order, the sample id, epoch,
    score values and error. A pass ties the figures checked on the scores file
    (`inspect-metric@3` and `@5`, `inspect-counts@4`, `inspect-status@3`) to the log that holds the
    transcripts; in a redacted bundle that withholds the transcripts it is not run.
    """
    try:
        log = read_log(inputs["log"])
        scores = read_log(inputs["scores"])
    except LogError as exc:
        raise CheckerInputError("input.invalid", str(exc)) from None
    want, got = read_log(scores_bytes(log)), scores
    differences = []
    if dict(want.header) != dict(got.header):
        keys = sorted(
            k for k in set(want.header) | set(got.header) if want.header.get(k) != got.header.get(k)
        )
        differences.append(f"the header differs in {', '.join(keys)}")
    if len(want.records) != len(got.records):
        differences.append(
            f"the log holds {len(want.records)} record(s), the scores file {len(got.records)}"
        )
    for a, b in zip(want.records, got.records, strict=False):
        if (a.sample_id, a.epoch, a.error) != (b.sample_id, b.epoch, b.error) or {
            k: s.value for k, s in a.scores.items()
        } != {k: s.value for k, s in b.scores.items()}:
            differences.append(f"record {a.label} differs ({b.where} of the scores file)")
            break
    if differences:
        return Verdict.failed(
            "the scores file is not the log's",
            [Reason("inspect.scores_not_the_logs", "; ".join(differences))],
        )
    return Verdict.passed(
        f"the scores file holds the log's header and its {len(want.records)} record(s)' "
        "scores and errors"
    )
