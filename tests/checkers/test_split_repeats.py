"""Issue 45 item 5 / issue 41: the split layout's figures refuse a record or result written
more than once in the scores file, as the whole-log versions do (inspect-metric@4,
promptfoo-stats@4). inspect-metric@3 and promptfoo-stats@3 averaged or counted a repeat,
under a header or stats edited to match (advisories RB-2026-0054, RB-2026-0051); their
fixes are inspect-metric@5 and promptfoo-stats@5, on a scores file that, for promptfoo,
carries each row's testIdx (promptfoo-scores@2 binds it to the results file). The lm-eval
line had the same gap in both layouts: lm-eval-metric@2 and @3 averaged a document stored
twice (RB-2026-0052, 0053), fixed by lm-eval-metric@4 and @5."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from checkers.inspect_log.log import read_log
from checkers.inspect_log.scores import scores_bytes as inspect_scores_bytes
from checkers.promptfoo.scores import project_v2, scores_bytes, scores_bytes_v2
from tests.checkers.checker_calls import run
from tests.helpers import REPO

SOURCES = REPO / "tests" / "advisories" / "sources"
# a run of 4 samples x 2 epochs (accuracy 0.5), two passing records each written five more
# times and the header edited to 0.679; the control: the run's own records under that header
INSPECT_FORGED = (SOURCES / "RB-2026-0045" / "inputs" / "forged.json").read_bytes()
INSPECT_RUN = (SOURCES / "RB-2026-0045" / "inputs" / "control.json").read_bytes()
METRIC = {"scorer": "match", "reducer": "mean", "metric": "accuracy"}
# promptfoo 0.123.1's results (1 of 5 passed), its passing row written five more times and
# its stats edited to match; the control: the run as promptfoo wrote it
PROMPTFOO_FORGED = json.loads((SOURCES / "RB-2026-0044" / "inputs" / "forged.json").read_bytes())
PROMPTFOO_RUN = (SOURCES / "RB-2026-0044" / "inputs" / "control.json").read_bytes()
CLAIMED = {"tests": 10, "successes": 6}


def test_inspect_metric_v3_averages_a_repeated_scores_record_as_epochs() -> None:
    """The gap the advisory names: the forged scores file passes @3."""
    verdict = run(
        "inspect-metric@3", {"scores": inspect_scores_bytes(read_log(INSPECT_FORGED))}, **METRIC
    )
    assert verdict.status == "pass"


def test_a_scores_record_written_six_times_is_not_six_epochs() -> None:
    verdict = run(
        "inspect-metric@5", {"scores": inspect_scores_bytes(read_log(INSPECT_FORGED))}, **METRIC
    )
    assert verdict.status == "fail"
    assert verdict.codes == ("inspect.record_repeated",)
    assert verdict.details["repeated_records"] == 10


def test_inspect_metric_v5_decides_an_unrepeated_scores_file_as_v3() -> None:
    scores = {"scores": inspect_scores_bytes(read_log(INSPECT_RUN))}
    old, new = run("inspect-metric@3", scores, **METRIC), run("inspect-metric@5", scores, **METRIC)
    assert (
        (new.status, new.codes)
        == (old.status, old.codes)
        == (
            "fail",
            ("inspect.header_metric_mismatch",),
        )
    )


def test_inspect_metric_v5_refuses_a_whole_log() -> None:
    verdict = run("inspect-metric@5", {"scores": INSPECT_RUN}, **METRIC)
    assert verdict.status == "error"
    assert "holds a transcript" in verdict.message


def test_a_repeated_scores_record_does_not_match_the_log() -> None:
    """inspect-scores@1 binds the scores file to the log record by record: a record
    repeated (or dropped) in the scores file alone does not match."""
    forged = read_log(INSPECT_FORGED)
    verdict = run("inspect-scores@1", {"log": INSPECT_RUN, "scores": inspect_scores_bytes(forged)})
    assert verdict.codes == ("inspect.scores_not_the_logs",)
    honest = read_log(INSPECT_RUN)
    dropped = inspect_scores_bytes(dataclasses.replace(honest, records=honest.records[1:]))
    verdict = run("inspect-scores@1", {"log": INSPECT_RUN, "scores": dropped})
    assert verdict.codes == ("inspect.scores_not_the_logs",)


def test_promptfoo_stats_v3_counts_a_repeated_scores_row_as_tests() -> None:
    """The gap the advisory names: the forged scores file (first shape) passes @3."""
    verdict = run("promptfoo-stats@3", {"scores": scores_bytes(PROMPTFOO_FORGED)}, claimed=CLAIMED)
    assert verdict.status == "pass"


def test_a_scores_row_written_six_times_is_not_six_tests() -> None:
    verdict = run(
        "promptfoo-stats@5", {"scores": scores_bytes_v2(PROMPTFOO_FORGED)}, claimed=CLAIMED
    )
    assert verdict.status == "fail"
    assert verdict.codes == ("promptfoo.result_repeated",)
    assert verdict.details["repeated_rows"] == 5


def test_promptfoo_stats_v5_decides_an_unrepeated_scores_file_as_v4() -> None:
    scores = scores_bytes_v2(json.loads(PROMPTFOO_RUN))
    new = run("promptfoo-stats@5", {"scores": scores}, claimed=CLAIMED)
    whole = run("promptfoo-stats@4", {"results": PROMPTFOO_RUN}, claimed=CLAIMED)
    assert (new.status, new.codes) == (whole.status, whole.codes)
    assert set(new.codes) == {"promptfoo.claimed.tests", "promptfoo.claimed.successes"}
    assert run("promptfoo-stats@5", {"scores": scores}).status == "pass"


def test_a_scores_file_without_test_indexes_cannot_tell_a_repeat_from_a_test() -> None:
    """The first shape (no testIdx) is refused by @5 rather than read as unrepeated."""
    verdict = run("promptfoo-stats@5", {"scores": scores_bytes(json.loads(PROMPTFOO_RUN))})
    assert verdict.status == "error"
    assert "testIdx" in verdict.message


def test_promptfoo_stats_v3_keeps_reading_only_the_first_shape() -> None:
    verdict = run("promptfoo-stats@3", {"scores": scores_bytes_v2(json.loads(PROMPTFOO_RUN))})
    assert verdict.status == "error"
    assert "promptfoo-stats@5" in verdict.message


def test_promptfoo_stats_v5_refuses_a_whole_results_file() -> None:
    verdict = run("promptfoo-stats@5", {"scores": PROMPTFOO_RUN})
    assert verdict.status == "error"
    assert "more than a scores file" in verdict.message


def _scores_v2(change: Any) -> bytes:
    document = project_v2(json.loads(PROMPTFOO_RUN))
    change(document["results"]["results"])
    return json.dumps(document).encode()


def test_promptfoo_scores_v2_binds_each_rows_test_index_to_the_results() -> None:
    """A scores file that renumbers a row (so a repeat could hide as another test) is not
    the results file's; nor is one that repeats or drops a row."""
    honest = scores_bytes_v2(json.loads(PROMPTFOO_RUN))
    assert run("promptfoo-scores@2", {"results": PROMPTFOO_RUN, "scores": honest}).status == "pass"

    def renumber(rows: list[dict[str, Any]]) -> None:
        rows[0]["testIdx"] = 99

    def repeat(rows: list[dict[str, Any]]) -> None:
        rows.append(dict(rows[0]))

    def drop(rows: list[dict[str, Any]]) -> None:
        del rows[-1]

    for change in (renumber, repeat, drop):
        verdict = run(
            "promptfoo-scores@2", {"results": PROMPTFOO_RUN, "scores": _scores_v2(change)}
        )
        assert verdict.codes == ("promptfoo.scores_not_the_results",), change.__name__


def test_promptfoo_scores_v1_does_not_take_the_second_shape() -> None:
    """The shapes do not cross: @1 compares with the first projection."""
    verdict = run(
        "promptfoo-scores@1",
        {"results": PROMPTFOO_RUN, "scores": scores_bytes_v2(json.loads(PROMPTFOO_RUN))},
    )
    assert verdict.codes == ("promptfoo.scores_not_the_results",)


# -- lm-eval: lm-eval-metric@2 (whole) and @3 (split) averaged a document stored twice -------

LM_FORGED = SOURCES / "RB-2026-0053" / "inputs"
LM_FIGURE = {"task": "arith", "metric": "acc", "filter": "none", "claimed": 0.5}


def _jsonl(path: Any) -> list[tuple[int, Any]]:
    lines = path.read_text("utf-8").splitlines()
    return [(i, json.loads(line)) for i, line in enumerate(lines, 1)]


def _lm_inputs(folder: Any, split: bool) -> dict[str, Any]:
    results = json.loads((folder / "results.json").read_text("utf-8"))
    if split:
        return {"results": results, "sample_scores": _jsonl(folder / "samples_arith.scores.jsonl")}
    whole = SOURCES / "RB-2026-0052" / "inputs" / folder.relative_to(LM_FORGED)
    return {"results": results, "samples": _jsonl(whole / "samples_arith.jsonl")}


def test_lm_eval_metric_v2_and_v3_average_a_document_stored_twice() -> None:
    """The gap the advisories name: acc 0.5 for a run whose documents give 0.3."""
    assert run("lm-eval-metric@2", _lm_inputs(LM_FORGED, False), **LM_FIGURE).status == "pass"
    assert run("lm-eval-metric@3", _lm_inputs(LM_FORGED, True), **LM_FIGURE).status == "pass"
    claimed = {"original": 10, "effective": 10}
    counts = run("lm-eval-counts@3", _lm_inputs(LM_FORGED, True), task="arith", claimed=claimed)
    assert "lmeval.duplicate_doc" in counts.codes  # a separate claim; the figure's rests alone


def test_a_document_stored_twice_is_not_two_documents() -> None:
    for key, split in (("lm-eval-metric@4", False), ("lm-eval-metric@5", True)):
        verdict = run(key, _lm_inputs(LM_FORGED, split), **LM_FIGURE)
        assert verdict.codes == ("lmeval.duplicate_doc",), key
        assert verdict.details["repeated_records"] == 2
        assert "doc_id 0 (lines 1, 8)" in verdict.reasons[0].message


def test_lm_eval_metric_v4_and_v5_decide_an_unrepeated_file_as_before() -> None:
    control = LM_FORGED / "control"
    for old, new, split in (
        ("lm-eval-metric@2", "lm-eval-metric@4", False),
        ("lm-eval-metric@3", "lm-eval-metric@5", True),
    ):
        was = run(old, _lm_inputs(control, split), **LM_FIGURE)
        now = run(new, _lm_inputs(control, split), **LM_FIGURE)
        assert (now.status, now.codes) == (was.status, was.codes) != ("pass", ())
        honest = {**LM_FIGURE, "claimed": 0.3}
        assert run(new, _lm_inputs(control, split), **honest).codes == ("lmeval.figure_mismatch",)


def test_lm_eval_metric_v5_refuses_a_whole_samples_file() -> None:
    inputs = _lm_inputs(LM_FORGED, False)
    verdict = run(
        "lm-eval-metric@5", {**inputs, "sample_scores": inputs.pop("samples")}, **LM_FIGURE
    )
    assert verdict.status == "error" and "sample scores file holds none" in verdict.message
