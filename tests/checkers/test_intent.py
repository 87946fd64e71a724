"""Tests of the intent family (seed 004): expectations, evidence, suite, contamination, rates."""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from checkers import registry
from checkers.api import Checker, CheckerInputError, Verdict
from checkers.intent.cases import classify_pointer, judge_suite
from checkers.intent.contamination import contamination
from checkers.intent.expectations import intent_expectations, suite_threshold
from checkers.intent.group_rates import group_rates

# --------------------------------------------------------------------------- helpers

TREE: dict[str, bytes] = {
    "user-api/README.md": b"# user-api\n",
    "user-api/src/cache/redis.ts": b"".join(b"line %d\n" % i for i in range(1, 31)),
    "user-api/src/routes/users.ts": b"".join(b"line %d\n" % i for i in range(1, 81)),
    "user-api/docs/adr/0007-no-in-process-cache.md": b"# ADR 0007\n\nno in-process cache\n",
    "other/src/main.py": b"print()\n",
}

GOOD_CASE: dict[str, Any] = {
    "id": "add-caching-auto",
    "prompt": "add caching to the user API",
    "mode": "auto",
    "fixture": "user-api",
    "category": "ask",
    "expect": {
        "state": "ASK",
        "question_keywords": ["invalidation", "stale", "fail"],
        "open_field_regex": "invalid|stale|fail",
        "min_resolved_by_probe": 2,
        "evidence_must_include": ["src/cache/redis.ts", "src/routes/users.ts"],
        "max_asked": 1,
    },
}

GOOD_OUTPUT: dict[str, Any] = {
    "case": "add-caching-auto",
    "status": "completed",
    "state": "ASK",
    "questions": ["If Redis is unreachable, should reads fail or fall through to the database?"],
    "open_fields": ["cache.failure_policy"],
    "resolved_by_probe": ["cache backend: shared Redis", "TTL: default 300 s"],
    "evidence": ["src/cache/redis.ts:1-30", "src/routes/users.ts"],
    "transcript": "transcripts/add-caching-auto.jsonl",
}


def call(checker_: Checker, inputs: Mapping[str, Any], /, **params: Any) -> Verdict:
    """Call a checker the way the runner does: defaults filled in, then the function."""
    filled = {p.name: p.default for p in checker_.params if not p.required}
    filled.update(params)
    verdict = checker_.function(inputs, filled)
    assert set(verdict.codes) <= set(checker_.reasons), "undeclared reason code"
    json.dumps(verdict.details)  # details must be JSON-serialisable
    json.dumps([dict(r.details) for r in verdict.reasons])
    return verdict


def one(output_changes: Mapping[str, Any] | None = None, **expect: Any) -> Verdict:
    """Judge the one good case after changing its output and/or its expectations."""
    case = copy.deepcopy(GOOD_CASE)
    case["expect"].update(expect)
    output = {**copy.deepcopy(GOOD_OUTPUT), **(output_changes or {})}
    inputs = {"cases": [case], "outputs": [output], "fixture": TREE}
    return call(intent_expectations, inputs, case="add-caching-auto")


def suite(statuses: list[str]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """A suite of len(statuses) copies of the good case; each output is made to
    ``pass``, ``fail`` (too many questions), ``form``, ``hallucinated``, ``timeout``,
    ``harness_error``, ``not_triggered`` or ``degraded``."""
    cases, outputs = [], []
    for i, kind in enumerate(statuses):
        case = copy.deepcopy(GOOD_CASE)
        case["id"] = f"case-{i:02d}"
        case["category"] = ["ask", "quiet", "abort", "defect"][i % 4]
        output = {**copy.deepcopy(GOOD_OUTPUT), "case": case["id"]}
        if kind == "fail":
            output["questions"] = output["questions"] * 3
        elif kind == "form":
            output["evidence"] = [*output["evidence"], "the route reads from the cache"]
        elif kind == "hallucinated":
            output["evidence"] = [*output["evidence"], "src/cache/invalidation.ts"]
        elif kind != "pass":
            output = {"case": case["id"], "status": kind}
        cases.append(case)
        outputs.append(output)
    return cases, outputs


def threshold(statuses: list[str], min_pass: int) -> Verdict:
    cases, outputs = suite(statuses)
    inputs = {"cases": cases, "outputs": outputs, "fixture": TREE}
    return call(suite_threshold, inputs, min_pass=min_pass, total=len(statuses))


# --------------------------------------------------------------------------- registry


def test_family_is_registered_under_its_names() -> None:
    keys = set(registry())
    assert {
        "intent-expectations@1",
        "suite-threshold@1",
        "contamination@1",
        "group-rates@1",
    } <= keys


# --------------------------------------------------------------------------- expectations


def test_output_meeting_every_expectation_passes() -> None:
    verdict = one()
    assert verdict.status == "pass", verdict.reasons
    rows = verdict.details["case"]["expectations"]
    assert set(rows) == set(GOOD_CASE["expect"])
    assert all(row["held"] is True for row in rows.values())


def test_wrong_state_fails_expect_state_only() -> None:
    verdict = one({"state": "ABORT"})
    assert verdict.status == "fail"
    assert verdict.codes == ("expect.state",)
    assert verdict.details["case"]["expectations"]["state"] == {
        "held": False,
        "expected": "ASK",
        "observed": "ABORT",
    }


def test_question_about_something_else_fails_keywords() -> None:
    verdict = one({"questions": ["Which Redis client library should I use?"]})
    assert verdict.codes == ("expect.keywords",)
    assert verdict.details["case"]["expectations"]["question_keywords"]["off_topic"] == [
        "Which Redis client library should I use?"
    ]


def test_asking_no_question_fails_keywords_even_with_max_asked_met() -> None:
    verdict = one({"questions": []})
    assert verdict.codes == ("expect.keywords",)


def test_keywords_match_chinese_questions_by_substring() -> None:
    verdict = one(
        {"questions": ["Redis 不可达时，读请求应该失败还是回源数据库？"]},
        question_keywords=["失效", "过期", "失败"],
    )
    assert verdict.status == "pass", verdict.reasons


def test_open_field_must_match_regex() -> None:
    assert one({"open_fields": ["cache.ttl"]}).codes == ("expect.open_field",)
    assert one({"open_fields": []}).codes == ("expect.open_field",)
    assert one({"open_fields": ["cache.ttl", "cache.STALE_reads"]}).status == "pass"


def test_too_few_items_resolved_by_probe_fails_probe() -> None:
    verdict = one({"resolved_by_probe": ["cache backend: shared Redis"]})
    assert verdict.codes == ("expect.probe",)
    assert verdict.details["case"]["expectations"]["min_resolved_by_probe"]["observed"] == 1


@pytest.mark.parametrize(
    "padded",
    [
        ["cache backend: shared Redis", "cache backend: shared Redis"],
        ["cache backend: shared Redis", "cache backend:  shared Redis "],
        ["cache backend: shared Redis", ""],
        ["cache backend: shared Redis", None],
        ["cache backend: shared Redis", "   ", [], {}],
    ],
)
def test_a_padded_probe_list_does_not_meet_min_resolved_by_probe(padded: list[Any]) -> None:
    """One fact listed twice, or a blank entry, is not a second fact settled by probing."""
    verdict = one({"resolved_by_probe": padded})
    assert verdict.codes == ("expect.probe",)
    row = verdict.details["case"]["expectations"]["min_resolved_by_probe"]
    assert row["observed"] == 1
    assert "repeated or blank" in row["ignored"]


def test_forty_questions_fail_max_asked() -> None:
    questions = [f"What should happen on cache failure, variant {i}?" for i in range(40)]
    verdict = one({"questions": questions})
    assert verdict.codes == ("expect.max_asked",)
    assert "asked 40 question(s), expected at most 1" in verdict.reasons[0].message


def test_quiet_case_passes_only_with_no_question() -> None:
    quiet = {"state": "ROUTE", "max_asked": 0}
    case = {**copy.deepcopy(GOOD_CASE), "id": "fully-specified", "expect": quiet}
    silent = {"case": "fully-specified", "status": "completed", "state": "ROUTE"}
    asked = {**silent, "state": "ASK", "questions": ["Are you sure?"]}
    for output, codes in ((silent, ()), (asked, ("expect.max_asked", "expect.state"))):
        inputs = {"cases": [case], "outputs": [output], "fixture": TREE}
        assert call(intent_expectations, inputs, case="fully-specified").codes == codes


def test_required_evidence_not_cited_fails_evidence_missing() -> None:
    verdict = one({"evidence": ["src/cache/redis.ts"]})
    assert verdict.codes == ("expect.evidence_missing",)
    assert verdict.reasons[0].details["missing"] == ["src/routes/users.ts"]


def test_pointer_with_line_range_counts_for_its_file() -> None:
    verdict = one({"evidence": ["src/cache/redis.ts#L3-L9", "./src/routes/users.ts:12"]})
    assert verdict.status == "pass", verdict.reasons


def test_required_file_written_with_a_leading_dot_slash_is_the_same_file() -> None:
    """The case's ./src/cache/redis.ts and the cited src/cache/redis.ts name one file,
    as they do for pointers; otherwise the expectation could never hold."""
    verdict = one(evidence_must_include=["./src/cache/redis.ts", "src/routes/users.ts"])
    assert verdict.status == "pass", verdict.reasons
    assert one(
        {"evidence": ["src/routes/users.ts"]}, evidence_must_include=["./src/cache/redis.ts"]
    ).codes == ("expect.evidence_missing",)


def test_every_failed_expectation_is_its_own_reason() -> None:
    verdict = one(
        {"state": "ROUTE", "questions": ["a", "b"], "open_fields": [], "resolved_by_probe": []}
    )
    assert verdict.codes == (
        "expect.keywords",
        "expect.max_asked",
        "expect.open_field",
        "expect.probe",
        "expect.state",
    )
    assert "1 of 6 expectation(s) held" in verdict.message


# --------------------------------------------------------------------------- evidence

FORM_VIOLATIONS = [
    "the cache is in src/cache/redis.ts",  # prose
    "because redis is shared",
    "",
    ".",
    "./",
    "/",
    ".git/HEAD",
    ".git",
    "src/.git/config",
    "src/cache/",  # trailing slash
    "src",  # a folder that exists
    "/src/cache/redis.ts",  # absolute
    "C:/src/cache/redis.ts",
    "src\\cache\\redis.ts",
    "src/../src/cache/redis.ts",
    "src//cache/redis.ts",
    "src/cache/redis.ts:0",
    "src/cache/redis.ts:9-3",
    "因为缓存在redis里",  # Chinese prose without spaces is still not a pointer
    "https://example.com/src/cache/redis.ts",
    42,
    {"path": "src/cache/redis.ts"},
]


@pytest.mark.parametrize("value", FORM_VIOLATIONS, ids=repr)
def test_form_violation_is_never_counted_as_hallucination(value: Any) -> None:
    verdict = one({"evidence": [*GOOD_OUTPUT["evidence"], value]})
    assert verdict.codes == ("evidence.form",)
    assert [e["verdict"] for e in verdict.details["case"]["evidence"]] == ["ok", "ok", "form"]


@pytest.mark.parametrize(
    "value",
    [
        "src/cache/invalidation.ts",
        "src/cache/redis.ts:31",
        "src/routes/users.ts:70-95",
        "docs/adr/0008.md",
    ],
)
def test_well_formed_pointer_to_nothing_is_hallucinated_not_form(value: str) -> None:
    verdict = one({"evidence": [*GOOD_OUTPUT["evidence"], value]})
    assert verdict.codes == ("evidence.hallucinated",)


def test_pointer_into_another_fixture_is_hallucinated() -> None:
    assert one({"evidence": [*GOOD_OUTPUT["evidence"], "src/main.py"]}).codes == (
        "evidence.hallucinated",
    )


_segment = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789_-", min_size=1, max_size=8)
_paths = st.lists(_segment, min_size=1, max_size=4).map("/".join)


@settings(max_examples=200)
@given(path=_paths, line=st.integers(min_value=1, max_value=5))
def test_a_well_formed_path_is_ok_if_present_and_hallucinated_if_absent(
    path: str, line: int
) -> None:
    files = {path: b"a\nb\nc\nd\ne\n"}
    assert classify_pointer(path, files).verdict == "ok"
    assert classify_pointer(f"{path}:{line}", files).verdict == "ok"
    assert classify_pointer(path + "x.ts", files).verdict == "hallucinated"
    assert classify_pointer(f"{path}:{line + 5}", files).verdict == "hallucinated"


@settings(max_examples=200)
@given(path=_paths, text=st.text(min_size=1))
def test_prose_and_git_internals_are_form_whatever_the_fixture(path: str, text: str) -> None:
    files = {path: b"x\n", f".git/{path}": b"x\n"}
    assert classify_pointer(f".git/{path}", files).verdict == "form"
    assert classify_pointer(f"{path} {text}", files).verdict == "form"


# --------------------------------------------------------------------------- failure modes


def test_not_triggered_is_a_behavioural_failure_with_expectations_not_evaluated() -> None:
    verdict = one({"status": "not_triggered", "state": None, "questions": [], "evidence": []})
    assert verdict.status == "fail"
    assert verdict.codes == ("run.not_triggered",)
    assert {row["held"] for row in verdict.details["case"]["expectations"].values()} == {None}


def test_degraded_output_is_a_behavioural_failure() -> None:
    assert one({"status": "degraded", "evidence": []}).codes == ("run.degraded",)


@pytest.mark.parametrize("status", ["timeout", "harness_error"])
def test_timeout_and_harness_error_are_inconclusive_not_failed(status: str) -> None:
    verdict = one({"status": status, "questions": ["x"] * 9, "evidence": []})
    assert verdict.status == "error"
    assert verdict.codes == (f"run.{status}",)


def test_hallucinated_pointer_recorded_before_a_timeout_still_fails_the_case() -> None:
    verdict = one({"status": "timeout", "evidence": ["src/cache/invented.ts"]})
    assert verdict.status == "fail"
    assert verdict.codes == ("evidence.hallucinated",)


# --------------------------------------------------------------------------- all cases


def test_without_case_param_one_failing_case_fails_and_the_table_shows_each_case() -> None:
    cases, outputs = suite(["pass", "pass", "fail", "timeout"])
    verdict = call(intent_expectations, {"cases": cases, "outputs": outputs, "fixture": TREE})
    assert verdict.status == "fail"
    assert verdict.codes == ("expect.max_asked",)
    assert [row["result"] for row in verdict.details["cases"]] == [
        "pass",
        "pass",
        "fail",
        "inconclusive",
    ]


def test_without_case_param_all_passing_passes_and_timeout_only_is_inconclusive() -> None:
    cases, outputs = suite(["pass", "pass"])
    assert (
        call(intent_expectations, {"cases": cases, "outputs": outputs, "fixture": TREE}).status
        == "pass"
    )
    cases, outputs = suite(["pass", "timeout"])
    verdict = call(intent_expectations, {"cases": cases, "outputs": outputs, "fixture": TREE})
    assert (verdict.status, verdict.codes) == ("error", ("run.timeout",))


# --------------------------------------------------------------------------- malformed input


def _refused(code: str, inputs: Mapping[str, Any], **params: Any) -> str:
    with pytest.raises(CheckerInputError) as caught:
        call(intent_expectations, inputs, **params)
    assert caught.value.code == code
    return caught.value.message


@pytest.mark.parametrize(
    ("change", "needle"),
    [
        ({"expect": {"state": "ASK", "max_ask": 1}}, "unknown expectation"),
        ({"expect": {"state": "GUESS"}}, "expect.state must be one of"),
        ({"expect": {"max_asked": 1}}, "expect.state must be one of"),
        ({"expect": {"state": "ASK", "max_asked": -1}}, "max_asked"),
        ({"expect": {"state": "ASK", "max_asked": True}}, "max_asked"),
        ({"expect": {"state": "ASK", "open_field_regex": "("}}, "open_field_regex"),
        ({"expect": {"state": "ASK", "open_field_regex": ".*"}}, "empty string"),
        ({"expect": {"state": "ASK", "question_keywords": []}}, "must not be empty"),
        ({"expect": {"state": "ASK", "evidence_must_include": ["src/nope.ts"]}}, "the case itself"),
        ({"fixture": "missing-repo"}, "no files under missing-repo/"),
        ({"priority": "high"}, "unknown key"),
    ],
)
def test_malformed_case_is_an_input_error_not_a_verdict(
    change: dict[str, Any], needle: str
) -> None:
    case = {**copy.deepcopy(GOOD_CASE), **change}
    message = _refused(
        "input.invalid",
        {"cases": [case], "outputs": [GOOD_OUTPUT], "fixture": TREE},
        case=case["id"],
    )
    assert needle in message


@pytest.mark.parametrize(
    ("outputs", "needle"),
    [
        ([{**GOOD_OUTPUT, "question": ["typo"]}], "unknown key"),
        ([{**GOOD_OUTPUT, "status": "crashed"}], "status must be one of"),
        ([{**GOOD_OUTPUT, "state": None}], "must record its state"),
        ([GOOD_OUTPUT, GOOD_OUTPUT], "recorded twice"),
        ([GOOD_OUTPUT, {**GOOD_OUTPUT, "case": "ghost"}], "unknown case"),
        ([], "nothing to judge"),
    ],
)
def test_malformed_outputs_are_an_input_error(outputs: list[Any], needle: str) -> None:
    message = _refused(
        "input.invalid",
        {"cases": [GOOD_CASE], "outputs": outputs, "fixture": TREE},
        case="add-caching-auto",
    )
    assert needle in message


def test_selected_case_without_output_is_an_input_error() -> None:
    other = {**copy.deepcopy(GOOD_CASE), "id": "other"}
    inputs = {"cases": [GOOD_CASE, other], "outputs": [GOOD_OUTPUT], "fixture": TREE}
    assert "no recorded output" in _refused("input.invalid", inputs, case="other")
    assert "not in the cases" in _refused("input.invalid", inputs, case="nobody")


def test_states_param_extends_the_known_states() -> None:
    case = {**copy.deepcopy(GOOD_CASE), "expect": {"state": "CHALLENGE"}}
    output = {**GOOD_OUTPUT, "state": "CHALLENGE"}
    inputs = {"cases": [case], "outputs": [output], "fixture": TREE}
    _refused("input.invalid", inputs, case=case["id"])
    states = ["ASK", "ROUTE", "ABORT", "CHALLENGE"]
    assert call(intent_expectations, inputs, case=case["id"], states=states).status == "pass"
    with pytest.raises(CheckerInputError):
        call(intent_expectations, inputs, case=case["id"], states=["lower"])


def test_cases_and_outputs_may_be_wrapped_in_a_mapping() -> None:
    inputs = {
        "cases": {"cases": [GOOD_CASE]},
        "outputs": {"run": "x", "outputs": [GOOD_OUTPUT]},
        "fixture": TREE,
    }
    assert call(intent_expectations, inputs).status == "pass"


# --------------------------------------------------------------------------- suite


SEEDLIKE = ["pass"] * 15 + ["not_triggered", "timeout"]


def test_suite_of_17_with_15_passes_meets_14_of_17() -> None:
    verdict = threshold(SEEDLIKE, 14)
    assert verdict.status == "pass", verdict.reasons
    counts = verdict.details["counts"]
    assert (counts["passed"], counts["failed"], counts["inconclusive"]) == (15, 1, 1)
    assert counts["failure_modes"] == {
        "not_triggered": 1,
        "degraded": 0,
        "timeout": 1,
        "harness_error": 0,
    }
    assert sum(c["total"] for c in counts["by_category"].values()) == 17


def test_one_hallucinated_pointer_among_many_good_cases_fails_the_suite() -> None:
    verdict = threshold(["pass"] * 16 + ["hallucinated"], 14)
    assert verdict.status == "fail"
    assert verdict.codes == ("suite.hallucinated_evidence",)
    assert verdict.details["counts"]["passed"] == 16
    assert verdict.details["counts"]["evidence"]["hallucinated_cases"] == ["case-16"]


def test_form_violation_fails_its_case_but_never_the_suite_by_itself() -> None:
    verdict = threshold(["pass"] * 14 + ["form"] * 3, 14)
    assert verdict.status == "pass"
    evidence = verdict.details["counts"]["evidence"]
    assert (evidence["form_violations"], evidence["hallucinated"]) == (3, 0)


def test_suite_below_threshold_fails() -> None:
    verdict = threshold(
        ["pass"] * 12 + ["fail", "fail", "degraded", "not_triggered", "harness_error"], 14
    )
    assert verdict.codes == ("suite.below_threshold",)


def test_timeouts_never_count_as_behavioural_failures() -> None:
    verdict = threshold(["pass"] * 12 + ["timeout"] * 5, 14)
    assert verdict.status == "error"
    assert verdict.codes == ("suite.inconclusive",)
    assert verdict.details["counts"]["failed"] == 0
    assert verdict.details["counts"]["failure_modes"]["timeout"] == 5


def test_hallucination_fails_the_suite_even_when_timeouts_leave_the_threshold_open() -> None:
    verdict = threshold(["pass"] * 12 + ["timeout"] * 4 + ["hallucinated"], 14)
    assert verdict.codes == ("suite.hallucinated_evidence",)


def test_probe_ratio_is_reported_and_decides_nothing() -> None:
    cases, outputs = suite(["pass"] * 3)
    eager = copy.deepcopy(outputs)
    for o in eager:
        o["resolved_by_probe"] = [f"item {i}" for i in range(20)]
    low = call(
        suite_threshold, {"cases": cases, "outputs": outputs, "fixture": TREE}, min_pass=3, total=3
    )
    high = call(
        suite_threshold, {"cases": cases, "outputs": eager, "fixture": TREE}, min_pass=3, total=3
    )
    assert low.details["diagnostics"]["probe_ratio"] == round(6 / 9, 4)
    assert high.details["diagnostics"]["probe_ratio"] == round(60 / 63, 4)
    assert (low.status, high.status) == ("pass", "pass")


def test_suite_refuses_a_shrunk_suite_a_missing_output_and_a_bad_threshold() -> None:
    cases, outputs = suite(["pass"] * 16)
    inputs = {"cases": cases, "outputs": outputs, "fixture": TREE}
    with pytest.raises(CheckerInputError, match="has 16 case"):
        call(suite_threshold, inputs, min_pass=14, total=17)
    with pytest.raises(CheckerInputError, match="no recorded output"):
        call(suite_threshold, {**inputs, "outputs": outputs[:-1]}, min_pass=14, total=16)
    with pytest.raises(CheckerInputError) as caught:
        call(suite_threshold, inputs, min_pass=17, total=16)
    assert caught.value.code == "params.invalid"


KINDS = [
    "pass",
    "fail",
    "form",
    "hallucinated",
    "timeout",
    "harness_error",
    "not_triggered",
    "degraded",
]


@settings(max_examples=60, deadline=None)
@given(kinds=st.lists(st.sampled_from(KINDS), min_size=1, max_size=12), data=st.data())
def test_suite_and_per_case_checker_agree_on_every_case(
    kinds: list[str], data: st.DataObject
) -> None:
    """suite-threshold@1 recomputes per-case results; they must equal intent-expectations@1's."""
    cases, outputs = suite(kinds)
    inputs = {"cases": cases, "outputs": outputs, "fixture": TREE}
    n = data.draw(st.integers(min_value=1, max_value=len(kinds)))
    verdict = call(suite_threshold, inputs, min_pass=n, total=len(kinds))
    to_result = {"pass": "pass", "fail": "fail", "error": "inconclusive"}
    for row, case in zip(verdict.details["cases"], cases, strict=True):
        single = call(intent_expectations, inputs, case=case["id"])
        assert row["result"] == to_result[single.status]
        assert row["codes"] == list(single.codes)
    passed = kinds.count("pass")
    unsure = kinds.count("timeout") + kinds.count("harness_error")
    if "hallucinated" in kinds:
        assert "suite.hallucinated_evidence" in verdict.codes
    elif passed >= n:
        assert verdict.status == "pass"
    elif passed + unsure >= n:
        assert verdict.codes == ("suite.inconclusive",)
    else:
        assert verdict.codes == ("suite.below_threshold",)


@settings(max_examples=60, deadline=None)
@given(
    kinds=st.lists(st.sampled_from(["pass", "fail", "form"]), min_size=1, max_size=10),
    data=st.data(),
)
def test_turning_a_failed_case_into_a_timeout_never_fails_a_suite(
    kinds: list[str], data: st.DataObject
) -> None:
    n = data.draw(st.integers(min_value=1, max_value=len(kinds)))
    before = threshold(kinds, n)
    after = threshold(["timeout" if k != "pass" else k for k in kinds], n)
    if before.status == "pass":
        assert after.status == "pass"
    # every case either passed or timed out: the suite can be unsure, never failed
    assert after.status in ("pass", "error")
    if after.status == "error":
        assert after.codes == ("suite.inconclusive",)
    assert after.details["counts"]["failed"] == 0


def test_judge_suite_is_the_one_function_both_checkers_use() -> None:
    cases, outputs = suite(["pass", "fail"])
    results = judge_suite(cases, outputs, TREE)
    assert [r.result for r in results] == ["pass", "fail"]


# --------------------------------------------------------------------------- contamination

SKILL_MARKERS = [r"## Intent contract", r"unavailable tool '\w+'"]
CLEAN = {
    "bare-1.jsonl": b'{"role": "assistant", "text": "I read docs/adr/0007 first."}\n',
    "bare-2.jsonl": b'{"role": "tool", "name": "bash", "text": "git log -3"}\n',
}


def test_clean_transcripts_pass_and_report_what_was_scanned() -> None:
    verdict = call(contamination, {"transcripts": CLEAN}, markers=SKILL_MARKERS)
    assert verdict.status == "pass"
    assert (verdict.details["files_scanned"], verdict.details["lines_scanned"]) == (2, 2)


def test_skill_format_in_a_bare_run_is_detected_with_count_and_location() -> None:
    dirty = {
        **CLEAN,
        "bare-3.jsonl": b'{"text": "ok"}\n{"text": "## Intent contract\\n## Intent contract"}\n',
    }
    verdict = call(contamination, {"transcripts": dirty}, markers=SKILL_MARKERS)
    assert verdict.codes == ("contamination.detected",)
    (reason,) = verdict.reasons
    assert reason.details["hits"] == 2
    assert reason.details["locations"] == ["bare-3.jsonl:2"]
    assert verdict.details["by_file"] == {"bare-3.jsonl": 2}


def test_each_marker_that_hits_is_its_own_reason_and_case_can_be_ignored() -> None:
    dirty = {"run.log": b"UNAVAILABLE TOOL 'bash'\n## intent contract\n"}
    assert call(contamination, {"transcripts": dirty}, markers=SKILL_MARKERS).status == "pass"
    verdict = call(contamination, {"transcripts": dirty}, markers=SKILL_MARKERS, ignore_case=True)
    assert len(verdict.reasons) == 2


def test_locations_are_capped_but_the_count_is_not() -> None:
    dirty = {"run.log": b"unavailable tool 'bash'\n" * 36}
    verdict = call(contamination, {"transcripts": dirty}, markers=SKILL_MARKERS, max_locations=3)
    (reason,) = verdict.reasons
    assert (reason.details["hits"], len(reason.details["locations"])) == (36, 3)
    assert "36 hit(s)" in reason.message and "first at run.log:1" in reason.message


@pytest.mark.parametrize(
    ("inputs", "params", "code"),
    [
        ({"transcripts": CLEAN}, {"markers": []}, "params.invalid"),
        ({"transcripts": CLEAN}, {"markers": ["("]}, "params.invalid"),
        ({"transcripts": CLEAN}, {"markers": ["x*"]}, "params.invalid"),
        ({"transcripts": {}}, {"markers": SKILL_MARKERS}, "input.invalid"),
        ({"transcripts": {"a.log": b"\xff\xfe"}}, {"markers": SKILL_MARKERS}, "input.invalid"),
        # an empty transcript shows nothing, so it cannot show a clean run
        ({"transcripts": {"a.log": b""}}, {"markers": SKILL_MARKERS}, "input.invalid"),
        (
            {"transcripts": {**CLEAN, "b.log": b" \n\n"}},
            {"markers": SKILL_MARKERS},
            "input.invalid",
        ),
        # lines are searched one at a time: a marker spanning a line break never hits
        ({"transcripts": CLEAN}, {"markers": ["## Intent\ncontract"]}, "params.invalid"),
        ({"transcripts": CLEAN}, {"markers": ["## Intent\\ncontract"]}, "params.invalid"),
        # the same marker twice would count every hit twice
        ({"transcripts": CLEAN}, {"markers": ["intent-router", "intent-router"]}, "params.invalid"),
    ],
)
def test_a_contamination_check_that_cannot_fail_is_refused(
    inputs: dict[str, Any], params: dict[str, Any], code: str
) -> None:
    with pytest.raises(CheckerInputError) as caught:
        call(contamination, inputs, **params)
    assert caught.value.code == code


# --------------------------------------------------------------------------- group rates

RUNS = [
    {"id": f"bare-{i}", "group": "bare", "checks": {"failure_policy": False, "shared_redis": True}}
    for i in range(1, 6)
] + [
    {"id": f"skill-{i}", "group": "skill", "checks": {"failure_policy": True, "shared_redis": True}}
    for i in range(1, 4)
]


def test_bare_0_of_5_and_skill_3_of_3_as_claimed() -> None:
    verdict = call(
        group_rates, {"runs": RUNS}, check="failure_policy", claimed={"bare": "0/5", "skill": "3/3"}
    )
    assert verdict.status == "pass"
    groups = verdict.details["groups"]
    assert (groups["bare"]["sample_size"], groups["skill"]["sample_size"]) == (5, 3)
    assert "no effect size" in verdict.details["note"]


def test_overstated_claim_fails_rates_mismatch() -> None:
    verdict = call(
        group_rates, {"runs": RUNS}, check="failure_policy", claimed={"bare": "1/5", "skill": "3/3"}
    )
    assert verdict.codes == ("rates.mismatch",)
    assert verdict.reasons[0].details["group"] == "bare"


def test_claim_with_another_sample_size_fails_even_with_the_same_rate() -> None:
    verdict = call(
        group_rates, {"runs": RUNS}, check="shared_redis", claimed={"bare": "6/6", "skill": "3/3"}
    )
    assert verdict.codes == ("rates.mismatch",)


def test_claimed_group_without_runs_and_unclaimed_group_fail() -> None:
    verdict = call(
        group_rates, {"runs": RUNS}, check="shared_redis", claimed={"bare": "5/5", "intent": "3/3"}
    )
    assert verdict.codes == ("rates.group_missing", "rates.group_unclaimed")


@pytest.mark.parametrize(
    ("runs", "claimed", "code"),
    [
        (
            [*RUNS, {"id": "bare-6", "group": "bare", "checks": {}}],
            {"bare": "0/6"},
            "input.invalid",
        ),
        ([*RUNS, RUNS[0]], {"bare": "0/6"}, "input.invalid"),
        (RUNS, {"bare": "zero of five"}, "params.invalid"),
        (RUNS, {"bare": "6/5"}, "params.invalid"),
        (RUNS, {}, "params.invalid"),
    ],
)
def test_unscored_runs_and_malformed_claims_are_refused(
    runs: list[Any], claimed: dict[str, Any], code: str
) -> None:
    with pytest.raises(CheckerInputError) as caught:
        call(group_rates, {"runs": runs}, check="failure_policy", claimed=claimed)
    assert caught.value.code == code


# --------------------------------------------------------------------------- coverage of codes


def test_every_declared_reason_code_is_produced_by_some_input() -> None:
    produced: set[str] = set()
    for change in (
        {
            "state": "ROUTE",
            "questions": ["a", "b"],
            "open_fields": [],
            "resolved_by_probe": [],
            "evidence": ["x y", "nope.ts"],
        },
        {"status": "not_triggered"},
        {"status": "degraded"},
        {"status": "timeout", "evidence": []},
        {"status": "harness_error", "evidence": []},
    ):
        produced |= set(one(change).codes)
    for kinds in (["hallucinated"], ["fail"], ["timeout"]):
        produced |= set(threshold(kinds, 1).codes)
    produced |= set(threshold(["pass", "fail"], 2).codes)
    produced |= set(
        call(
            contamination, {"transcripts": {"a": b"## Intent contract"}}, markers=SKILL_MARKERS
        ).codes
    )
    produced |= set(
        call(
            group_rates, {"runs": RUNS}, check="shared_redis", claimed={"bare": "4/5", "x": "1/1"}
        ).codes
    )
    declared = {
        code
        for key in (
            "intent-expectations@1",
            "suite-threshold@1",
            "contamination@1",
            "group-rates@1",
        )
        for code in registry()[key].reasons
    }
    assert produced == declared


def test_judging_every_case_needs_an_output_for_every_case() -> None:
    other = {**copy.deepcopy(GOOD_CASE), "id": "other"}
    inputs = {"cases": [GOOD_CASE, other], "outputs": [GOOD_OUTPUT], "fixture": TREE}
    assert "no recorded output for case(s) ['other']" in _refused("input.invalid", inputs)
    assert call(intent_expectations, inputs, case="add-caching-auto").status == "pass"


def test_not_triggered_message_does_not_claim_expectations_failed() -> None:
    verdict = one({"status": "not_triggered", "evidence": []})
    assert "expectations not evaluated" in verdict.message
    assert "held" not in verdict.message


def test_contamination_locations_are_editor_line_numbers() -> None:
    # \x0b and \x1c are line breaks for str.splitlines but not for an editor
    dirty = {"run.log": b"a\x0bb\x1cc\nunavailable tool 'bash'\n"}
    verdict = call(contamination, {"transcripts": dirty}, markers=SKILL_MARKERS)
    assert verdict.reasons[0].details["locations"] == ["run.log:2"]
    assert verdict.details["lines_scanned"] == 2
