"""inspect-metric, inspect-counts, inspect-status, inspect-rescore @1 and the log reader."""

from __future__ import annotations

import io
import json
import statistics
import struct
import zipfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import checkers
from bundler.run.runner import run_checker
from checkers.api import COMMON_ERRORS, Verdict
from checkers.inspect_log import log as inspect_format
from checkers.inspect_log.log import InspectLog, LogError, Record, Score, read_log, to_json_log
from checkers.inspect_log.rules import figure, reduce
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


def test_member_larger_than_the_limit_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(inspect_format, "MAX_MEMBER_BYTES", 10)
    with pytest.raises(LogError, match="more than 10 allowed"):
        read_log(_zip({"header.json": b'{"version": 2, "status": "success"}'}))


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
    found = checkers.get(key)
    assert found is not None and found.counterexample is not None
    full = {p.name: p.default for p in found.params if not p.required} | params
    inputs = found.counterexample(full)
    assert inputs is not None
    verdict = run_checker(found, inputs, params)
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
