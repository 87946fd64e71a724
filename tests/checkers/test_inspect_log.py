"""inspect-metric, inspect-counts, inspect-status, inspect-rescore @1 and the log reader.

inspect-metric, inspect-counts, inspect-status, inspect-rescore @2: the header read and
compared with the samples, on logs written by hand as an attacker would, and on real ones.

Each weakness of the @1 versions (issue 30) is a test here that the @1 version passes and
the @2 version fails: @1 stays registered, trusting its params."""

from __future__ import annotations

import io
import json
import math
import statistics
import struct
import zipfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import checkers
from bundler.run.runner import run_checker, vacuity
from checkers.api import COMMON_ERRORS, Verdict
from checkers.inspect_log import log as inspect_format
from checkers.inspect_log.log import InspectLog, LogError, Record, Score, read_log, to_json_log
from checkers.inspect_log.rules import figure, reduce
from tests.checkers.checker_calls import on_counterexample
from tests.inspect_support import inspect_logs, truth

__all__ = ["inspect_logs"]  # the fixture, used by name

FAMILY = ("inspect-metric@1", "inspect-counts@1", "inspect-status@1", "inspect-rescore@1")


def run(key: str, data: bytes, **params: Any) -> Verdict:
    found = checkers.get(key)
    assert found is not None
    return run_checker(found, {"log": data}, params)


def rec(
    sid: str,
    epoch: int,
    value: Any = None,
    completion: str = "",
    target: str = "4",
    error: str | None = None,
    scorer: str = "match",
) -> Record:
    scores = {} if value is None else {scorer: Score(value, None)}
    return Record(sid, epoch, (target,), completion, scores, error, f"{sid}_{epoch}")


def log_of(
    *records: Record, status: str = "success", results: Any = None, version: int = 2
) -> bytes:
    header = {"version": version, "status": status, "eval": {"task": "t"}, "results": results}
    return to_json_log(InspectLog("json", header, records), records)


# s1: C C, s2: C I, s3: errored, I  -- the shapes where denominators differ
MIXED = log_of(
    rec("s1", 1, "C"),
    rec("s1", 2, "C"),
    rec("s2", 1, "C"),
    rec("s2", 2, "I"),
    rec("s3", 1, error="boom"),
    rec("s3", 2, "I"),
)


def test_mean_reducer_averages_per_sample_means_with_the_errored_epoch_dropped() -> None:
    verdict = run(
        "inspect-metric@1",
        MIXED,
        scorer="match",
        reducer="mean",
        metric="accuracy",
        claimed=0.5,
        scored_samples=3,
    )
    assert verdict.status == "pass", verdict.message
    assert verdict.details["recomputed"]["value"] == pytest.approx((1 + 0.5 + 0) / 3)
    assert verdict.details["pooled"] == {
        "sum": 3.0,
        "scored_epochs": 5,
        "epochs": 6,
        "errored_epochs": 1,
    }


def test_pass_at_k_leaves_out_a_sample_with_fewer_scored_epochs_than_k() -> None:
    log = read_log(MIXED)
    dropped = figure(log, "match", "pass_at_2", "accuracy")
    counted = figure(log, "match", "pass_at_2", "accuracy", errors_fail=True)
    assert (dropped["value"], dropped["scored_samples"], dropped["unscored_samples"]) == (1.0, 2, 1)
    assert (counted["value"], counted["scored_samples"]) == (pytest.approx(2 / 3), 3)


def test_header_figure_that_disagrees_with_the_samples_fails() -> None:
    verdict = run(
        "inspect-metric@1", MIXED, scorer="match", reducer="mean", metric="accuracy", claimed=0.6
    )
    assert verdict.status == "fail" and verdict.codes == ("inspect.figure_mismatch",)
    assert "claimed 0.6, recomputed 0.5" in verdict.reasons[0].message


def test_wrong_count_of_scored_samples_fails() -> None:
    verdict = run(
        "inspect-metric@1",
        MIXED,
        scorer="match",
        reducer="pass_at_2",
        metric="accuracy",
        claimed=1.0,
        scored_samples=3,
    )
    assert verdict.codes == ("inspect.scored_mismatch",)


@pytest.mark.parametrize(
    ("reducer", "metric", "expected"),
    [
        ("max", "accuracy", 2 / 3),
        ("median", "accuracy", 0.5),
        ("mode", "accuracy", 2 / 3),
        ("at_least_2", "accuracy", 1 / 3),
        ("mean", "stderr", (((0.5**2 + 0 + 0.5**2) / 2) ** 0.5) / 3**0.5),
        ("mean", "var", (0.5**2 + 0 + 0.5**2) / 2),
    ],
)
def test_each_reducer_and_metric_as_inspect_computes_it(
    reducer: str, metric: str, expected: float
) -> None:
    assert figure(read_log(MIXED), "match", reducer, metric)["value"] == pytest.approx(expected)


def test_unknown_reducer_or_metric_is_an_error_not_a_verdict() -> None:
    for reducer, metric in (("bootstrap", "accuracy"), ("mean", "bootstrap_stderr")):
        verdict = run(
            "inspect-metric@1", MIXED, scorer="match", reducer=reducer, metric=metric, claimed=0.5
        )
        assert verdict.status == "error" and verdict.codes == ("params.invalid",)


def test_counts_follow_the_records() -> None:
    claimed = {
        "total_samples": 6,
        "completed_samples": 5,
        "errored_samples": 1,
        "samples": 3,
        "epochs": 2,
    }
    assert run("inspect-counts@1", MIXED, claimed=claimed).status == "pass"
    verdict = run("inspect-counts@1", MIXED, claimed={"total_samples": 6, "completed_samples": 6})
    assert verdict.codes == ("inspect.count_mismatch",)
    assert "completed_samples: claimed 6, the samples give 5" in verdict.reasons[0].message


def test_success_status_with_errored_samples_fails_and_a_clean_log_passes() -> None:
    verdict = run("inspect-status@1", MIXED)
    assert verdict.codes == ("inspect.errors_under_success", "inspect.no_results")
    assert "1 of 6 sample record(s) errored" in verdict.reasons[0].message
    clean = log_of(rec("s1", 1, "C"), results={"scores": []})
    assert run("inspect-status@1", clean).status == "pass"


@pytest.mark.parametrize(
    ("method", "options", "completion", "target", "value"),
    [
        ("match", {}, "The answer is 4.", "4", "C"),
        ("match", {}, "4 is the answer", "4", "I"),
        ("match", {"location": "begin"}, "4 is the answer", "4", "C"),
        ("match", {"location": "any"}, "so 4 it is", "4", "C"),
        ("match", {"location": "exact"}, " 4. ", "4", "C"),
        ("match", {"ignore_case": False}, "answer: PARIS", "paris", "I"),
        ("includes", {}, "It is PARIS", "paris", "C"),
        ("includes", {"ignore_case": False}, "It is PARIS", "paris", "I"),
        ("exact", {}, "The  Paris!", "paris", "C"),
        ("exact", {}, "3.0", "3", "C"),
        ("exact", {}, "Paris, France", "paris", "I"),
        ("pattern", {"pattern": r"ANSWER: (\d+)"}, "ANSWER: 9", "9", "C"),
        ("pattern", {"pattern": r"ANSWER: (\d+)"}, "ANSWER: 8", "9", "I"),
        ("pattern", {"pattern": r"(\d+)-(\d+)", "match_all": True}, "9-8", "9", "I"),
        ("pattern", {"pattern": r"(\d+)-(\d+)"}, "9-8", "8", "C"),
        ("pattern", {"pattern": r"ANSWER"}, "no answer here", "x", "I"),
    ],
)
def test_rescoring_follows_inspects_rules(
    method: str, options: dict[str, Any], completion: str, target: str, value: str
) -> None:
    data = log_of(rec("s1", 1, value, completion=completion, target=target))
    assert (
        run("inspect-rescore@1", data, scorer="match", method=method, options=options).status
        == "pass"
    )
    wrong = log_of(rec("s1", 1, "I" if value == "C" else "C", completion=completion, target=target))
    verdict = run("inspect-rescore@1", wrong, scorer="match", method=method, options=options)
    assert verdict.codes == ("inspect.score_mismatch",)
    assert verdict.reasons[0].details["sample"] == "s1"


def test_rescoring_refuses_what_it_does_not_reimplement() -> None:
    data = log_of(rec("s1", 1, "C", completion="4"))
    for method, options in (
        ("match", {"numeric": True}),
        ("model_graded_qa", {}),
        ("match", {"locaton": "end"}),
        ("pattern", {"pattern": "("}),
    ):
        verdict = run("inspect-rescore@1", data, scorer="match", method=method, options=options)
        assert verdict.status == "error" and verdict.codes == ("params.invalid",), method


# -- the reader --------------------------------------------------------------------------------


def test_unknown_log_version_is_refused_by_name() -> None:
    verdict = run(
        "inspect-counts@1", log_of(rec("s1", 1, "C"), version=3), claimed={"total_samples": 1}
    )
    assert verdict.status == "error" and verdict.codes == ("input.invalid",)
    assert (
        "Inspect log version 3 is not one this reader knows (it reads version 2)" in verdict.message
    )


@pytest.mark.parametrize(
    ("data", "words"),
    [
        (b"not a log", "not valid JSON"),
        (b'{"version": 2, "samples": [{"id": "a", "id": "b", "epoch": 1}]}', "appears twice"),
        (b'{"version": 2, "samples": [{"id": "a", "epoch": 0}]}', "'epoch' must be"),
        (b'{"version": "2"}', "no integer log 'version'"),
        (b"PK\x03\x04 broken", "not a readable .eval zip"),
    ],
)
def test_malformed_logs_are_refused_with_the_reason(data: bytes, words: str) -> None:
    with pytest.raises(LogError, match=words):
        read_log(data)


def _zip(members: dict[str, bytes], method: int = zipfile.ZIP_STORED) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", compression=method) as archive:
        for name, content in members.items():
            archive.writestr(name, content)
    return out.getvalue()


def test_eval_zip_without_header_says_the_run_did_not_finish() -> None:
    with pytest.raises(LogError, match=r"no header\.json .*did not finish"):
        read_log(_zip({"_journal/start.json": b"{}"}))


def test_eval_zip_with_an_unknown_compression_method_is_refused() -> None:
    data = _zip({"header.json": b'{"version": 2}'}, zipfile.ZIP_BZIP2)
    with pytest.raises(LogError, match="compression method 12"):
        read_log(data)


def test_member_larger_than_the_limit_is_refused() -> None:
    data = _zip({"header.json": b'{"version": 2, "status": "success"}'})
    with pytest.raises(LogError, match="more than 10 allowed"):
        read_log(data, inspect_format.LogLimits(member_bytes=10))
    with pytest.raises(LogError, match="members hold more than 10 bytes in all"):
        read_log(data, inspect_format.LogLimits(total_bytes=10))


def test_stored_and_deflated_members_read_like_zstd_ones(inspect_logs: Path) -> None:
    raw = (inspect_logs / "mixed.eval").read_bytes()
    original = read_log(raw)
    with zipfile.ZipFile(io.BytesIO(raw)) as archive:
        members = {
            i.filename: inspect_format._member(raw, i, [1 << 40]) for i in archive.infolist()
        }
    for method in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
        again = read_log(_zip(members, method))
        assert again.records == original.records and again.header == original.header


def test_a_changed_byte_in_a_sample_member_is_caught(inspect_logs: Path) -> None:
    raw = bytearray((inspect_logs / "mixed.eval").read_bytes())
    with zipfile.ZipFile(io.BytesIO(bytes(raw))) as archive:
        info = next(i for i in archive.infolist() if i.filename.startswith("samples/"))
    name_len, extra_len = struct.unpack_from("<HH", raw, info.header_offset + 26)
    start = info.header_offset + 30 + name_len + extra_len
    raw[start + info.compress_size // 2] ^= 0x01
    with pytest.raises(LogError, match=info.filename):
        read_log(bytes(raw))


@pytest.mark.parametrize("name", ["mixed.eval", "mixed.json", "all-errored.eval"])
def test_reader_sees_what_inspect_ai_sees(inspect_logs: Path, name: str) -> None:
    log = read_log((inspect_logs / name).read_bytes())
    ours = [
        {
            "id": r.sample_id,
            "epoch": r.epoch,
            "completion": r.completion,
            "scores": {k: s.value for k, s in r.scores.items()},
            "error": r.error,
        }
        for r in log.records
    ]
    key = lambda r: (r["id"], r["epoch"])  # noqa: E731
    assert sorted(ours, key=key) == sorted(truth(inspect_logs, name), key=key)
    assert log.version == 2 and log.status == "success"


@pytest.mark.parametrize("name", ["mixed.eval", "mixed.json"])
def test_every_header_figure_of_a_real_log_is_recomputed_exactly(
    inspect_logs: Path, name: str
) -> None:
    data = (inspect_logs / name).read_bytes()
    entries = read_log(data).result_scores()
    assert len(entries) == 15  # 5 scorers x 3 reducers
    for entry in entries:
        for metric, value in entry["metrics"].items():
            verdict = run(
                "inspect-metric@1",
                data,
                scorer=entry["name"],
                reducer=entry["reducer"],
                metric=metric,
                claimed=value["value"],
                scored_samples=entry["scored_samples"],
            )
            assert verdict.status == "pass", (entry["name"], entry["reducer"], verdict.message)


def test_real_deterministic_scores_follow_from_their_completions(inspect_logs: Path) -> None:
    data = (inspect_logs / "mixed.eval").read_bytes()
    for spec in read_log(data).spec["scorers"][:4]:
        verdict = run(
            "inspect-rescore@1",
            data,
            scorer=spec["name"],
            method=spec["name"],
            options=spec["options"],
        )
        assert verdict.status == "pass", verdict.message


# -- every checker can fail: counterexamples ----------------------------------------------------

PARAMS: list[tuple[str, dict[str, Any]]] = [
    (
        "inspect-metric@1",
        {"scorer": "match", "reducer": "mean", "metric": "accuracy", "claimed": 0.5},
    ),
    (
        "inspect-metric@1",
        {"scorer": "m", "reducer": "pass_at_2", "metric": "stderr", "claimed": 0.0},
    ),
    ("inspect-metric@1", {"scorer": "m", "reducer": "", "metric": "mean", "claimed": 1}),
    (
        "inspect-metric@1",
        {"scorer": "m", "reducer": "at_least_3", "metric": "var", "claimed": 0.25},
    ),
    ("inspect-counts@1", {"claimed": {"total_samples": 10, "completed_samples": 9}}),
    ("inspect-counts@1", {"claimed": {"errored_samples": 0}}),
    ("inspect-counts@1", {"claimed": {"epochs": 2}}),
    ("inspect-status@1", {}),
    ("inspect-rescore@1", {"scorer": "match", "method": "match", "options": {"location": "any"}}),
    ("inspect-rescore@1", {"scorer": "p", "method": "pattern", "options": {"pattern": ".*"}}),
    ("inspect-rescore@1", {"scorer": "e", "method": "exact", "options": {}}),
    ("inspect-rescore@1", {"scorer": "i", "method": "includes", "options": {"ignore_case": False}}),
]


@pytest.mark.parametrize(("key", "params"), PARAMS)
def test_counterexample_makes_the_checker_fail_for_a_reason_of_its_own(
    key: str, params: dict[str, Any]
) -> None:
    found, verdict = on_counterexample(key, params)
    assert verdict.status == "fail", verdict.message
    assert set(verdict.codes) <= set(found.reasons) and not set(verdict.codes) & set(COMMON_ERRORS)


def test_every_checker_of_the_family_declares_a_counterexample() -> None:
    for key in FAMILY:
        found = checkers.get(key)
        assert found is not None and found.counterexample is not None, key


def test_synthetic_logs_round_trip_through_the_json_writer() -> None:
    log = read_log(MIXED)
    assert json.loads(to_json_log(log, log.records))["samples"][4]["error"] == {"message": "boom"}
    assert read_log(to_json_log(log, log.records)).records == log.records


def test_a_damaged_eval_file_is_refused_never_a_traceback(inspect_logs: Path) -> None:
    import random

    data = (inspect_logs / "mixed.eval").read_bytes()
    rnd = random.Random(22)
    read = refused = 0
    for _ in range(400):
        damaged = bytearray(data)
        if rnd.random() < 0.7:
            for _ in range(rnd.randint(1, 4)):  # anywhere, or in the central directory
                at = (
                    rnd.randrange(len(damaged))
                    if rnd.random() < 0.5
                    else len(damaged) - 1 - rnd.randrange(2000)
                )
                damaged[at] = rnd.randrange(256)
        else:
            del damaged[rnd.randrange(len(damaged)) :]
        inspect_format._CACHE.clear()
        try:
            read_log(bytes(damaged))  # a change in a member no checker reads is fine
            read += 1
        except LogError:
            refused += 1
    assert refused > 300 and read + refused == 400


def test_rescoring_a_score_that_holds_several_values_is_an_error_not_a_mismatch() -> None:
    data = log_of(rec("s1", 1, {"a": "C"}, completion="4"))
    verdict = run("inspect-rescore@1", data, scorer="match", method="match", options={})
    assert verdict.status == "error" and "it was not made by match" in verdict.message


_EPOCH_VALUES = st.one_of(
    st.sampled_from([0.0, -0.0, 1.0, 0.5, 2.0**31, -(2.0**32) + 1, 2.0**32, 2.0**53, 1e308]),
    st.integers(-(2**40), 2**40).map(float),
    st.floats(allow_nan=False),
)


@settings(max_examples=500, deadline=None)
@given(st.lists(_EPOCH_VALUES, min_size=1, max_size=8))
def test_the_mean_reducer_gives_statistics_mean_to_the_last_bit(values: list[float]) -> None:
    """The mean reducer skips ``statistics.mean``'s exact fractions only where plain
    arithmetic gives the same float (and the same sign of zero): whatever the epochs."""
    expected = statistics.mean(values)
    found = reduce(values, "mean")
    assert repr(found) == repr(expected) and type(found) is type(expected)


V2 = ("inspect-metric@2", "inspect-counts@2", "inspect-status@2", "inspect-rescore@2")


def sample(
    sid: str,
    completion: str,
    value: str | None,
    target: str = "4",
    epoch: int = 1,
    error: str | None = None,
    score: str = "match",
) -> dict[str, Any]:
    found: dict[str, Any] = {
        "id": sid,
        "epoch": epoch,
        "target": target,
        "output": {"completion": completion},
        "scores": {} if value is None else {score: {"value": value}},
    }
    if error is not None:
        found["error"] = {"message": error}
    return found


def entry(
    value: float, scored: int, name: str = "match", scorer: str = "match", metric: str = "accuracy"
) -> dict[str, Any]:
    return {
        "name": name,
        "scorer": scorer,
        "reducer": None,
        "scored_samples": scored,
        "unscored_samples": 0,
        "metrics": {metric: {"name": metric, "value": value, "params": {}}},
    }


def log(
    samples: list[dict[str, Any]],
    results: dict[str, Any] | None,
    status: str = "success",
    scorers: list[dict[str, Any]] | None = None,
    error: dict[str, Any] | None = None,
) -> bytes:
    """A .json log written by hand: header fields as Inspect names them, and samples."""
    document: dict[str, Any] = {
        "version": 2,
        "status": status,
        "eval": {
            "task": "hand-written",
            "scorers": scorers if scorers is not None else [{"name": "match", "options": {}}],
            "dataset": {"samples": len({s["id"] for s in samples})},
            "config": {"epochs": 1},
        },
        "samples": samples,
    }
    if results is not None:
        document["results"] = results
    if error is not None:
        document["error"] = error
    return json.dumps(document).encode()


def results(total: int, completed: int, *entries: dict[str, Any]) -> dict[str, Any]:
    return {"total_samples": total, "completed_samples": completed, "scores": list(entries)}


# 10 records, 5 correct; the header says accuracy 0.95 over 1,000 samples
TEN = [sample(f"s{i}", "4" if i < 5 else "5", "C" if i < 5 else "I") for i in range(10)]
FORGED = log(TEN, results(1000, 1000, entry(0.95, 1000)))
HONEST = log(TEN, results(10, 10, entry(0.5, 10)))
FIGURE = {"scorer": "match", "reducer": "", "metric": "accuracy"}


# -- inspect-metric@2 --------------------------------------------------------------------


def test_forged_header_accuracy_that_the_samples_do_not_give_fails_naming_the_figure() -> None:
    # @1 trusts the params: claimed 0.5, as the samples give, passes whatever the header says
    assert run("inspect-metric@1", FORGED, **FIGURE, claimed=0.5).status == "pass"
    verdict = run("inspect-metric@2", FORGED, **FIGURE, claimed=0.5)
    assert verdict.status == "fail"
    assert verdict.codes == (
        "inspect.claimed_mismatch",
        "inspect.header_metric_mismatch",
        "inspect.header_scored_mismatch",
    )
    header = next(r for r in verdict.reasons if r.code == "inspect.header_metric_mismatch")
    assert header.details == {"figure": "match/-/accuracy", "header": 0.95, "samples": 0.5}
    assert "the header states 0.95, the samples give 0.5 over 10 sample(s)" in header.message
    scored = next(r for r in verdict.reasons if r.code == "inspect.header_scored_mismatch")
    assert scored.details == {
        "figure": "match/-/accuracy",
        "count": "scored_samples",
        "header": 1000,
        "samples": 10,
    }


def test_forged_header_fails_without_any_claimed_param() -> None:
    verdict = run("inspect-metric@2", FORGED, **FIGURE)
    assert verdict.codes == ("inspect.header_metric_mismatch", "inspect.header_scored_mismatch")


def test_honest_header_passes_and_a_claim_restating_it_passes() -> None:
    assert run("inspect-metric@2", HONEST, **FIGURE).status == "pass"
    verdict = run("inspect-metric@2", HONEST, **FIGURE, claimed=0.5)
    assert verdict.status == "pass", verdict.message
    assert verdict.details["header"] == 0.5


def test_claimed_figure_that_agrees_with_the_samples_but_not_the_header_fails() -> None:
    verdict = run("inspect-metric@2", HONEST, **FIGURE, claimed=0.6)
    assert verdict.codes == ("inspect.claimed_mismatch",)
    assert verdict.reasons[0].details == {
        "figure": "match/-/accuracy",
        "claimed": 0.6,
        "header": 0.5,
        "samples": 0.5,
    }


def test_claimed_figure_rounded_within_the_tolerance_passes() -> None:
    data = log(TEN[3:6], results(3, 3, entry(2 / 3, 3)))
    assert run("inspect-metric@2", data, **FIGURE, claimed=0.67, tolerance=0.005).status == "pass"
    assert run("inspect-metric@2", data, **FIGURE, claimed=0.67).codes == (
        "inspect.claimed_mismatch",
    )


@pytest.mark.parametrize("tolerance", [0.006, 0.5, -0.001, math.nan, math.inf])
def test_tolerance_outside_its_range_is_refused(tolerance: float) -> None:
    verdict = run("inspect-metric@2", HONEST, **FIGURE, claimed=0.5, tolerance=tolerance)
    assert verdict.status == "error" and verdict.codes in (
        ("params.invalid",),
        ("params.out_of_range",),
    )


@pytest.mark.parametrize("claimed", [math.nan, math.inf])
def test_a_claimed_figure_that_is_not_finite_is_refused(claimed: float) -> None:
    verdict = run("inspect-metric@2", HONEST, **FIGURE, claimed=claimed)
    assert verdict.status == "error" and verdict.codes in (
        ("params.invalid",),
        ("params.out_of_range",),
    )


def test_header_that_states_no_such_figure_fails() -> None:
    data = log(TEN, results(10, 10, entry(0.5, 10, metric="mean")))
    assert run("inspect-metric@1", data, **FIGURE, claimed=0.5).status == "pass"
    verdict = run("inspect-metric@2", data, **FIGURE, claimed=0.5)
    assert verdict.codes == ("inspect.header_figure_missing",)
    assert run("inspect-metric@2", log(TEN, None), **FIGURE).codes == (
        "inspect.header_figure_missing",
    )


def test_header_that_states_a_figure_twice_is_refused() -> None:
    data = log(TEN, results(10, 10, entry(0.5, 10), entry(0.95, 10)))
    verdict = run("inspect-metric@2", data, **FIGURE)
    assert verdict.status == "error" and "states 2 results for 'match'" in verdict.message


@pytest.mark.parametrize("value", ["0.5", None, [0.5], True])
def test_header_figure_that_is_not_a_number_is_refused(value: Any) -> None:
    data = log(TEN, results(10, 10, entry(value, 10)))
    verdict = run("inspect-metric@2", data, **FIGURE)
    assert verdict.status == "error" and verdict.codes == ("input.invalid",), verdict.message


def test_header_unscored_count_that_the_samples_do_not_give_fails() -> None:
    forged = entry(0.5, 10)
    forged["unscored_samples"] = 3
    verdict = run("inspect-metric@2", log(TEN, results(10, 10, forged)), **FIGURE)
    assert verdict.codes == ("inspect.header_scored_mismatch",)
    assert verdict.reasons[0].details["count"] == "unscored_samples"


# -- inspect-counts@2 --------------------------------------------------------------------


def test_forged_header_counts_fail_naming_each_count() -> None:
    assert run("inspect-counts@1", FORGED, claimed={"total_samples": 10}).status == "pass"
    verdict = run("inspect-counts@2", FORGED)
    assert verdict.codes == ("inspect.header_count_mismatch",)
    assert [r.details for r in verdict.reasons] == [
        {"figure": "total_samples", "header": 1000, "samples": 10},
        {"figure": "completed_samples", "header": 1000, "samples": 10},
    ]


def test_claimed_counts_must_agree_with_header_and_samples() -> None:
    verdict = run("inspect-counts@2", FORGED, claimed={"total_samples": 10})
    assert verdict.codes == ("inspect.claimed_mismatch", "inspect.header_count_mismatch")
    claimed = next(r for r in verdict.reasons if r.code == "inspect.claimed_mismatch")
    assert claimed.details == {
        "figure": "total_samples",
        "claimed": 10,
        "header": 1000,
        "samples": 10,
    }
    assert run("inspect-counts@2", HONEST, claimed={"total_samples": 10}).status == "pass"
    assert run("inspect-counts@2", HONEST, claimed={"errored_samples": 1}).codes == (
        "inspect.claimed_mismatch",
    )


def test_header_completed_count_that_hides_errored_records_fails() -> None:
    errored = [*TEN[:9], sample("s9", "", None, error="boom")]
    verdict = run("inspect-counts@2", log(errored, results(10, 10, entry(5 / 9, 9))))
    assert [r.details["figure"] for r in verdict.reasons] == [
        "completed_samples",
        "errored_samples",
    ]


def test_a_log_with_no_results_is_compared_with_its_planned_total() -> None:
    assert run("inspect-counts@2", log(TEN, None)).status == "pass"
    planned = json.loads(log(TEN, None))
    planned["eval"]["config"]["epochs"] = 3
    verdict = run("inspect-counts@2", json.dumps(planned).encode())
    assert verdict.reasons[0].details == {"figure": "total_samples", "header": 30, "samples": 10}


def test_a_header_with_no_counts_fails() -> None:
    bare = json.loads(log(TEN, None))
    del bare["eval"]["dataset"]
    verdict = run("inspect-counts@2", json.dumps(bare).encode())
    assert verdict.codes == ("inspect.header_counts_missing",)


@pytest.mark.parametrize(
    "claimed", [{}, {"samples": 10}, {"total_samples": -1}, {"total_samples": 1.5}]
)
def test_claimed_counts_outside_their_range_are_refused(claimed: dict[str, Any]) -> None:
    verdict = run("inspect-counts@2", HONEST, claimed=claimed)
    assert verdict.status == "error" and verdict.codes == ("params.invalid",)


# -- inspect-status@2 --------------------------------------------------------------------

THREE_OF_FOUR = [
    sample("s0", "4", "C"),
    *[sample(f"s{i}", "", None, error=f"RuntimeError('boom {i}')") for i in (1, 2, 3)],
]


def test_status_other_than_success_with_three_of_four_records_errored_fails() -> None:
    data = log(THREE_OF_FOUR, results(4, 1, entry(1.0, 1)), status="error")
    old = run("inspect-status@1", data)
    assert old.status == "pass" and "none of 4 sample record(s) errored" in old.message
    verdict = run("inspect-status@2", data)
    assert verdict.codes == ("inspect.records_errored", "inspect.status_not_success")
    assert verdict.message == "the log says 'error', not success; 3 of 4 sample records errored"
    errored = next(r for r in verdict.reasons if r.code == "inspect.records_errored")
    assert errored.details == {"errored": 3, "records": 4, "status": "error"}
    assert "RuntimeError('boom 1')" in errored.message


def test_success_with_errored_records_fails_with_the_counts() -> None:
    data = log(THREE_OF_FOUR, results(4, 1, entry(1.0, 1)))
    verdict = run("inspect-status@2", data)
    assert verdict.codes == ("inspect.records_errored",)
    assert verdict.message == "the log says success, but 3 of 4 sample records errored"


def test_cancelled_run_with_no_errored_record_fails_and_says_its_status() -> None:
    data = log(TEN, None, status="cancelled", error={"message": "cancelled by the user"})
    verdict = run("inspect-status@2", data)
    assert verdict.codes == ("inspect.no_results", "inspect.status_not_success")
    assert verdict.message.startswith("the log says 'cancelled', not success")
    status = next(r for r in verdict.reasons if r.code == "inspect.status_not_success")
    assert "cancelled by the user" in status.message


def test_clean_run_passes_and_a_log_without_records_is_refused() -> None:
    assert run("inspect-status@2", HONEST).status == "pass"
    verdict = run("inspect-status@2", log([], results(0, 0)))
    assert verdict.status == "error" and verdict.codes == ("input.invalid",)


# -- inspect-rescore@2 -------------------------------------------------------------------

# match(location="begin") scored these: "4 is it" correct, "it is 4" not
BEGIN = [sample("s1", "4 is it", "C"), sample("s2", "it is 4", "I")]
BEGIN_LOG = log(BEGIN, None, scorers=[{"name": "match", "options": {"location": "begin"}}])


def test_rescore_with_options_differing_from_the_logs_fails() -> None:
    # scores stored as location=end would give them, but the log records location=begin
    as_end = [sample("s1", "4 is it", "I"), sample("s2", "it is 4", "C")]
    data = log(as_end, None, scorers=[{"name": "match", "options": {"location": "begin"}}])
    params = {"scorer": "match", "method": "match", "options": {"location": "end"}}
    assert run("inspect-rescore@1", data, **params).status == "pass"
    verdict = run("inspect-rescore@2", data, **params)
    assert verdict.codes == ("inspect.score_mismatch", "inspect.scorer_mismatch")
    mismatch = next(r for r in verdict.reasons if r.code == "inspect.scorer_mismatch")
    assert mismatch.details == {
        "field": "options",
        "params": {"location": "end"},
        "log": {"location": "begin"},
    }
    assert verdict.details["mismatches"] == 2


def test_rescore_uses_the_logs_options_when_the_params_restate_none() -> None:
    assert run("inspect-rescore@2", BEGIN_LOG, scorer="match").status == "pass"
    verdict = run("inspect-rescore@1", BEGIN_LOG, scorer="match", method="match", options={})
    assert verdict.codes == ("inspect.score_mismatch",)  # @1 judges under the params


def test_options_restated_with_inspects_defaults_agree() -> None:
    restated = {"location": "begin", "ignore_case": True, "numeric": False}
    verdict = run("inspect-rescore@2", BEGIN_LOG, scorer="match", method="match", options=restated)
    assert verdict.status == "pass", verdict.message
    verdict = run(
        "inspect-rescore@2",
        BEGIN_LOG,
        scorer="match",
        options={"location": "begin", "ignore_case": 1},
    )
    assert verdict.codes == ("inspect.scorer_mismatch",)  # 1 is not true


def test_rescore_with_another_method_than_the_log_records_fails() -> None:
    verdict = run("inspect-rescore@2", BEGIN_LOG, scorer="match", method="includes")
    assert verdict.codes == ("inspect.scorer_mismatch",)
    assert verdict.reasons[0].details == {"field": "method", "params": "includes", "log": "match"}


def test_the_scorer_is_found_through_the_result_entry_naming_it() -> None:
    named = [sample(s["id"], s["output"]["completion"], "C", score="mine") for s in BEGIN[:1]]
    header = results(1, 1, entry(1.0, 1, name="mine", scorer="match"))
    data = log(named, header, scorers=[{"name": "match", "options": {"location": "begin"}}])
    assert run("inspect-rescore@2", data, scorer="mine").status == "pass"


@pytest.mark.parametrize(
    ("scorers", "words"),
    [
        ([], "records no scorer 'match'"),
        (
            [{"name": "match", "options": {}}, {"name": "match", "options": {"location": "any"}}],
            "2 times with different options",
        ),
        ([{"name": "match", "options": {"numeric": True}}], "numeric=True"),
        ([{"name": "model_graded_qa", "options": {}}], "not one this checker re-scores"),
    ],
)
def test_a_scorer_the_log_does_not_state_exactly_is_not_rescored(
    scorers: list[dict[str, Any]], words: str
) -> None:
    maker = scorers[0]["name"] if scorers else "match"
    header = results(2, 2, entry(0.5, 2, scorer=maker))
    verdict = run("inspect-rescore@2", log(BEGIN, header, scorers=scorers), scorer="match")
    assert verdict.status == "error" and verdict.codes == ("input.invalid",)
    assert words in verdict.message


# -- real logs ----------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["mixed.eval", "mixed.json"])
def test_every_header_figure_count_and_score_of_a_real_log_follows(
    inspect_logs: Path, name: str
) -> None:
    data = (inspect_logs / name).read_bytes()
    found = read_log(data)
    for e in found.result_scores():
        for metric, value in e["metrics"].items():
            params = {"scorer": e["name"], "reducer": e["reducer"], "metric": metric}
            verdict = run("inspect-metric@2", data, **params, claimed=value["value"])
            assert verdict.status == "pass", (params, verdict.message)
    assert run("inspect-counts@2", data).status == "pass"
    for spec in found.spec["scorers"][:4]:
        verdict = run("inspect-rescore@2", data, scorer=spec["name"])
        assert verdict.status == "pass", verdict.message
    status = run("inspect-status@2", data)
    assert status.codes == ("inspect.records_errored",)
    assert status.message == "the log says success, but 1 of 12 sample records errored"


def test_a_real_log_whose_header_figure_was_edited_fails_under_v2(inspect_logs: Path) -> None:
    document = json.loads((inspect_logs / "mixed.json").read_text())
    first = document["results"]["scores"][0]
    first["metrics"]["accuracy"]["value"] = 0.95
    data = json.dumps(document).encode()
    params = {"scorer": first["name"], "reducer": first["reducer"], "metric": "accuracy"}
    assert run("inspect-metric@1", data, **params, claimed=0.5).status == "pass"
    verdict = run("inspect-metric@2", data, **params, claimed=0.5)
    assert verdict.codes == ("inspect.claimed_mismatch", "inspect.header_metric_mismatch")


# -- every @2 checker can fail: counterexamples ----------------------------------------------

PARAMS_AT2: list[tuple[str, dict[str, Any]]] = [
    ("inspect-metric@2", {"scorer": "match", "reducer": "mean", "metric": "accuracy"}),
    ("inspect-metric@2", {**FIGURE, "claimed": 0.5, "tolerance": 0.005}),
    ("inspect-metric@2", {"scorer": "m", "reducer": "pass_at_2", "metric": "stderr", "claimed": 0}),
    ("inspect-metric@2", {"scorer": "m", "reducer": "at_least_3", "metric": "var"}),
    ("inspect-metric@2", {"scorer": "m", "reducer": "mode", "metric": "mean", "claimed": 7.5}),
    ("inspect-counts@2", {}),
    ("inspect-counts@2", {"claimed": {"total_samples": 1, "completed_samples": 1}}),
    ("inspect-counts@2", {"claimed": {"errored_samples": 0}}),
    ("inspect-counts@2", {"claimed": {"total_samples": 10**9}}),
    ("inspect-status@2", {}),
    ("inspect-rescore@2", {"scorer": "match"}),
    ("inspect-rescore@2", {"scorer": "p", "method": "pattern", "options": {"pattern": ".*"}}),
    ("inspect-rescore@2", {"scorer": "e", "method": "exact"}),
    ("inspect-rescore@2", {"scorer": "i", "options": {"ignore_case": False}}),
    ("inspect-rescore@2", {"scorer": "m", "method": "match", "options": {"location": "any"}}),
]


@pytest.mark.parametrize(("key", "params"), PARAMS_AT2, ids=lambda v: str(v)[:50])
def test_counterexample_makes_the_v2_checker_fail_for_a_reason_of_its_own(
    key: str, params: dict[str, Any]
) -> None:
    found, verdict = on_counterexample(key, params)
    assert verdict.status == "fail", verdict.message
    assert set(verdict.codes) <= set(found.reasons) and not set(verdict.codes) & set(COMMON_ERRORS)
    assert vacuity(found, params) is None


@pytest.mark.parametrize(
    ("key", "params"),
    [
        ("inspect-metric@2", {**FIGURE, "tolerance": 0.05}),
        ("inspect-metric@2", {**FIGURE, "claimed": math.nan}),
        ("inspect-counts@2", {"claimed": {"total_samples": -3}}),
        ("inspect-rescore@2", {"scorer": "m", "method": "model_graded_qa"}),
    ],
)
def test_params_outside_their_range_are_refused_before_any_input(
    key: str, params: dict[str, Any]
) -> None:
    found = checkers.get(key)
    assert found is not None
    refused = vacuity(found, params)
    assert refused is not None and refused.codes in (("params.invalid",), ("params.out_of_range",))


def test_every_v2_checker_is_registered_beside_its_v1() -> None:
    registry = checkers.registry()
    for key in V2:
        assert key in registry and key.replace("@2", "@1") in registry
