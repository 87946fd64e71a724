"""fault-report@2 and trial-stats@2 (seed 001): what real runners write gets a verdict,
pins close the false accepts, the judge is linear, and pass@k is unbiased for n >= k."""

from __future__ import annotations

import copy
import json
import math
from collections.abc import Mapping
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from v2_support import get, run

from bundler.format import strictjson
from checkers.fault_injection import judge as judge_v1
from checkers.fault_injection import parse_report as parse_v1
from checkers.fault_injection_v2 import (
    failure_type,
    judge,
    parse_report,
    pass_at_k,
    pass_hat_k,
)

REPORT_1, REPORT_2 = "fault-report@1", "fault-report@2"
STATS_1, STATS_2 = "trial-stats@1", "trial-stats@2"

SCENARIOS = [f"test_scenario_{i}" for i in range(10)]
ASSERTION = (
    "tests/test_inventory.py:60: in test_x\n    assert len(reservations) == 1\n"
    "E   AssertionError: reservations for key k-401: expected 1, observed 0"
)
CONNECTION = (
    "tests/test_inventory.py:31: in test_x\n    response = client.post(...)\n"
    "E   requests.exceptions.ConnectionError: HTTPConnectionPool(host='127.0.0.1', port=8001)"
)


def report(fault: str = "none", failed: Mapping[str, Any] | None = None, **top: Any) -> Any:
    """A complete report of the 10 scenarios; ``failed`` maps test -> traceback."""
    failed = failed or {}
    records = []
    for name in SCENARIOS:
        if name in failed:
            records.append({"test": name, "status": "failed", "traceback": failed[name]})
        else:
            records.append({"test": name, "status": "passed", "traceback": None})
    value: dict[str, Any] = {
        "fault": fault,
        "planned": 10,
        "executed": 10,
        "complete": True,
        "blocked": False,
        "records": records,
    }
    value.update(top)
    return value


# --------------------------------------------------------------------------- what is read


@pytest.mark.parametrize(
    ("change", "earned"),
    [
        ({"blocked": None}, "defect_detected"),
        ({"blocked": {}}, "defect_detected"),
        ({"blocked": {"test_scenario_3": "fixture missing"}}, "incomplete"),
    ],
)
def test_fields_the_judgement_reads_in_another_shape_still_get_a_verdict(
    change: dict[str, Any], earned: str
) -> None:
    value = report("missing-record", {"test_scenario_3": ASSERTION}, **change)
    assert run(REPORT_1, {"report": value}, want=earned).codes == ("input.invalid",)
    assert run(REPORT_2, {"report": value}, want=earned).status == "pass"


@pytest.mark.parametrize("traceback", [["line 1", "E   AssertionError: x"], {"type": "Assert"}])
def test_a_traceback_that_is_not_text_is_not_read_unless_a_pin_asks(traceback: Any) -> None:
    value = report("reject-writes", {"test_scenario_1": traceback})
    assert run(REPORT_1, {"report": value}, want="defect_detected").codes == ("input.invalid",)
    assert run(REPORT_2, {"report": value}, want="defect_detected").status == "pass"
    asked = run(REPORT_2, {"report": value}, want="defect_detected", assertion_failures=True)
    if isinstance(traceback, list):
        assert asked.status == "pass"  # lines are joined and read
    else:
        assert asked.codes == ("input.invalid",) and "reads its traceback" in asked.message


def test_a_nan_duration_in_a_real_json_report_is_read_when_the_version_opts_in() -> None:
    text = json.dumps(report()).replace('"fault"', '"duration": NaN, "fault"')
    with pytest.raises(ValueError):
        strictjson.loads(text)  # what the runner does for fault-report@1: input.unreadable
    assert get(REPORT_1).roles[0].reading.json_constants is False
    assert get(REPORT_2).roles[0].reading.json_constants is True
    value = strictjson.loads(text, constants=True)
    assert run(REPORT_2, {"report": value}, want="baseline_pass").status == "pass"
    assert run(
        REPORT_2, {"report": {**value, "planned": math.nan}}, want="baseline_pass"
    ).codes == ("input.invalid",)


@pytest.mark.parametrize(
    ("change", "fragment"),
    [
        ({"complete": "false"}, "report.complete"),
        ({"blocked": "false"}, "report.blocked"),
        ({"planned": 10.0}, "report.planned"),
        ({"planned": True}, "report.planned"),
        ({"fault": None}, "report.fault"),
    ],
)
def test_stricter_than_the_seed_where_a_read_field_is_ambiguous(
    change: dict[str, Any], fragment: str
) -> None:
    verdict = run(REPORT_2, {"report": report(**change)}, want="baseline_pass")
    assert verdict.codes == ("input.invalid",) and fragment in verdict.message


# --------------------------------------------------------------------------- linear cost


class CountingName(str):
    """A test name that counts the equality comparisons made with it."""

    calls = 0

    def __eq__(self, other: object) -> bool:
        CountingName.calls += 1
        return str.__eq__(self, other)

    __hash__ = str.__hash__


def comparisons(judge_of: Any, n: int) -> int:
    records = [{"test": CountingName(f"t{i}"), "status": "passed"} for i in range(n)]
    value = {
        "fault": "none",
        "planned": n,
        "executed": n,
        "complete": True,
        "blocked": False,
        "records": records,
    }
    CountingName.calls = 0
    judge_of(value)
    return CountingName.calls


def test_duplicate_name_check_makes_a_linear_number_of_comparisons() -> None:
    def v1(value: Any) -> Any:
        return judge_v1(parse_v1(value))

    def v2(value: Any) -> Any:
        return judge(parse_report(value))

    assert comparisons(v1, 400) >= 400 * 399  # today's check: every name against every name
    assert comparisons(v2, 400) <= 400
    assert comparisons(v2, 4000) <= 4000


@settings(max_examples=25, deadline=None)
@given(st.integers(min_value=1, max_value=300), st.integers(min_value=0, max_value=5))
def test_judge_cost_is_linear_in_the_report_size(n: int, duplicates: int) -> None:
    names = [CountingName(f"t{i}") for i in range(n)] + [CountingName("t0")] * duplicates
    records = [{"test": name, "status": "failed", "traceback": ASSERTION} for name in names]
    value = {
        "fault": "missing-record",
        "planned": len(names),
        "executed": len(names),
        "complete": True,
        "blocked": False,
        "records": records,
    }
    CountingName.calls = 0
    verdict = run(
        REPORT_2,
        {"report": value},
        want="incomplete" if duplicates else "defect_detected",
        assertion_failures=True,
        expected_failures={"missing-record": len(names)},
        failing_tests=[] if duplicates else [str(t) for t in names],
    )
    assert verdict.status == "pass", verdict.message
    assert CountingName.calls <= 4 * len(names)


# --------------------------------------------------------------------------- pins


def test_a_connection_error_recorded_as_failed_is_not_a_detection() -> None:
    value = report("reject-writes", {"test_scenario_1": CONNECTION})
    assert run(REPORT_1, {"report": value}, want="defect_detected").status == "pass"  # false accept
    verdict = run(REPORT_2, {"report": value}, want="defect_detected", assertion_failures=True)
    assert verdict.codes == ("pin.not_assertion",)
    assert "ends in ConnectionError" in verdict.message


def test_an_assertion_failure_is_a_detection() -> None:
    value = report("reject-writes", {"test_scenario_1": ASSERTION})
    verdict = run(REPORT_2, {"report": value}, want="defect_detected", assertion_failures=True)
    assert verdict.status == "pass"


@pytest.mark.parametrize(
    ("traceback", "found"),
    [
        (ASSERTION, "AssertionError"),
        (CONNECTION, "ConnectionError"),
        (
            ">       assert 0 == 1\nE       assert 0 == 1\n\ntests/test_a.py:2: AssertionError",
            "AssertionError",
        ),
        ("E       assert 0 == 1", "AssertionError"),
        (
            "Traceback (most recent call last):\n  File ...\nAssertionError: 1 != 2",
            "AssertionError",
        ),
        ("E   ModuleNotFoundError: No module named 'inventory'", "ModuleNotFoundError"),
        ("E   assert x\nduring handling\nE   TimeoutError: read timed out", "TimeoutError"),
        ("something went wrong", None),
        ("", None),
    ],
)
def test_failure_type_reads_the_exception_the_traceback_ends_in(
    traceback: str, found: str | None
) -> None:
    assert failure_type(traceback) == found


def test_a_failed_test_without_a_traceback_does_not_show_an_assertion() -> None:
    value = report("reject-writes", {"test_scenario_1": None})
    verdict = run(REPORT_2, {"report": value}, want="defect_detected", assertion_failures=True)
    assert verdict.codes == ("pin.not_assertion",) and "has no traceback" in verdict.message


EXPECTED = {"none": 0, "reject-writes": 1, "double-reserve": 1, "missing-record": 4}


def test_the_failure_count_per_fault_is_pinned_without_naming_tests() -> None:
    four = {f"test_scenario_{i}": ASSERTION for i in (3, 4, 5, 6)}
    two = {f"test_scenario_{i}": ASSERTION for i in (3, 4)}
    pins = {"want": "defect_detected", "expected_failures": EXPECTED}
    assert (
        run(REPORT_1, {"report": report("missing-record", two)}, want="defect_detected").status
        == "pass"
    )
    assert run(REPORT_2, {"report": report("missing-record", four)}, **pins).status == "pass"
    verdict = run(REPORT_2, {"report": report("missing-record", two)}, **pins)
    assert verdict.codes == ("pin.failure_count",) and "2 test(s) failed" in verdict.message
    other = run(REPORT_2, {"report": report("slow-disk", two)}, **pins, known_faults=["slow-disk"])
    assert other.codes == ("pin.failure_count",) and "pins no count" in other.message


def test_the_planned_count_and_the_scenario_list_are_pinned() -> None:
    # a runner that planned and ran 9 of the 10 reference scenarios is "complete" to @1
    nine = report(planned=9, executed=9)
    nine["records"] = nine["records"][:9]
    assert run(REPORT_1, {"report": nine}, want="baseline_pass").status == "pass"  # false accept
    planned = run(REPORT_2, {"report": nine}, want="baseline_pass", planned=10)
    assert planned.codes == ("pin.planned",)
    listed = run(REPORT_2, {"report": nine}, want="baseline_pass", scenarios=SCENARIOS)
    assert listed.codes == ("pin.scenarios",) and "missing test_scenario_9" in listed.message
    ten = run(REPORT_2, {"report": report()}, want="baseline_pass", planned=10, scenarios=SCENARIOS)
    assert ten.status == "pass"


def test_renamed_scenarios_are_caught_by_the_list() -> None:
    value = report()
    value["records"][0]["test"] = "test_something_else"
    verdict = run(REPORT_2, {"report": value}, want="baseline_pass", scenarios=SCENARIOS)
    assert (
        verdict.codes == ("pin.scenarios",) and "not pinned test_something_else" in verdict.message
    )


@pytest.mark.parametrize(
    "params",
    [
        {"planned": 0},
        {"planned": 9, "scenarios": SCENARIOS},
        {"scenarios": ["a", "a"]},
        {"expected_failures": {"none": -1}},
        {"expected_failures": {"none": True}},
    ],
)
def test_bad_pins_are_params_invalid(params: dict[str, Any]) -> None:
    verdict = run(REPORT_2, {"report": report()}, want="baseline_pass", **params)
    assert verdict.codes == ("params.invalid",)


def test_the_judgement_is_still_the_seeds() -> None:
    for fault, failed, want in [
        ("none", {}, "baseline_pass"),
        ("none", {"test_scenario_0": ASSERTION}, "baseline_fail"),
        ("double-reserve", {}, "defect_missed"),
        ("double-reserve", {"test_scenario_5": ASSERTION}, "defect_detected"),
        ("made-up", {"test_scenario_5": ASSERTION}, "unknown_fault"),
    ]:
        value = report(fault, failed)
        assert run(REPORT_2, {"report": value}, want=want).status == "pass"
        assert judge(parse_report(value)).name == judge_v1(parse_v1(value)).name == want
    errored = report("none")
    errored["records"][0]["status"] = "error"
    assert judge(parse_report(errored)).name == "execution_error_or_skip"


# --------------------------------------------------------------------------- trial-stats


def humaneval_like(results: Mapping[str, list[Any]], config: Any = None) -> list[Any]:
    """Per-sample records as a harness writes them: task_id, a 0-based sample index,
    the result text, and the run's config once in a header line."""
    lines: list[Any] = []
    if config is not None:
        lines.append((1, {"config": config, "started": "2026-11-01T10:00:00Z"}))
    for task, outcomes in results.items():
        for index, outcome in enumerate(outcomes):
            record = {"task_id": task, "sample_index": index, "result": outcome}
            lines.append((len(lines) + 1, {**record, "duration_s": math.nan}))
    return lines


MAPPING = {"task": "task_id", "sample": "sample_index", "outcome": "result"}
CONFIG = {"model": "model-a", "temperature": 0.8}


def test_real_harness_records_are_read_through_the_field_mapping() -> None:
    lines = humaneval_like(
        {
            "HumanEval/0": ["passed", "failed: AssertionError", "passed", "timed out"],
            "HumanEval/1": ["failed: NameError", "failed: x", "passed", "passed"],
        },
        CONFIG,
    )
    verdict = run(
        STATS_2,
        {"trials": lines},
        k=2,
        fields=MAPPING,
        first_sample=0,
        outcomes={"timed out": "failure"},
        claimed={"tasks": 2, "pass_at_k": 5 / 6, "pass_hat_k": 1 / 6, "mean_success_rate": 0.5},
    )
    assert verdict.status == "pass", verdict.message
    assert verdict.details["config"] == CONFIG
    # @1 cannot read them at all
    assert run(STATS_1, {"trials": lines}, k=2, claimed={"tasks": 2}).codes == ("input.invalid",)


def test_an_unmapped_result_is_refused_with_the_fix() -> None:
    lines = humaneval_like({"HumanEval/0": ["passed", "timed out"]}, CONFIG)
    verdict = run(
        STATS_2, {"trials": lines}, k=2, fields=MAPPING, first_sample=0, claimed={"tasks": 1}
    )
    assert verdict.codes == ("input.invalid",) and "add it to 'outcomes'" in verdict.message


def test_a_dropped_sample_is_refused_not_silently_absent() -> None:
    lines = humaneval_like({"HumanEval/0": ["passed", "failed: x", "passed"]}, CONFIG)
    del lines[2]  # sample 1 (a failure) is gone; 0 and 2 remain
    verdict = run(
        STATS_2, {"trials": lines}, k=2, fields=MAPPING, first_sample=0, claimed={"tasks": 1}
    )
    assert verdict.codes == ("input.invalid",) and "lacks sample(s) 1" in verdict.message


def test_n_greater_than_k_uses_the_unbiased_estimator() -> None:
    # 5 samples, 2 successes: pass@2 = 1 - C(3,2)/C(5,2) = 0.7; pass^2 = C(2,2)/C(5,2) = 0.1
    lines = humaneval_like(
        {"t": ["passed", "failed: x", "passed", "failed: x", "failed: x"]}, CONFIG
    )
    params = {"k": 2, "fields": MAPPING, "first_sample": 0}
    good = run(STATS_2, {"trials": lines}, **params, claimed={"pass_at_k": 0.7, "pass_hat_k": 0.1})
    assert good.status == "pass", good.message
    # @1 refuses more than k trials; the naive "any success" figure (1.0) is a mismatch in @2
    naive = run(STATS_2, {"trials": lines}, **params, claimed={"pass_at_k": 1.0})
    assert naive.codes == ("stats.mismatch",)


@settings(max_examples=60, deadline=None)
@given(
    st.integers(min_value=1, max_value=12).flatmap(
        lambda n: st.tuples(
            st.just(n), st.integers(min_value=0, max_value=n), st.integers(min_value=1, max_value=n)
        )
    )
)
def test_estimators_equal_the_exact_subset_average(case: tuple[int, int, int]) -> None:
    import itertools
    from fractions import Fraction

    n, c, k = case
    outcomes = [True] * c + [False] * (n - c)
    subsets = list(itertools.combinations(outcomes, k))
    assert pass_at_k(n, c, k) == Fraction(sum(any(s) for s in subsets), len(subsets))
    assert pass_hat_k(n, c, k) == Fraction(sum(all(s) for s in subsets), len(subsets))


def test_with_n_equal_k_the_figures_are_the_at_1_counts() -> None:
    trials = [
        (i + 1, {"task": task, "trial": t, "outcome": outcome, "config": CONFIG})
        for i, (task, t, outcome) in enumerate(
            [
                ("a", 1, "success"),
                ("a", 2, "failure"),
                ("b", 1, "success"),
                ("b", 2, "success"),
                ("c", 1, "failure"),
                ("c", 2, "failure"),
            ]
        )
    ]
    claimed = {"tasks": 3, "pass_at_k": 2 / 3, "pass_hat_k": 1 / 3, "success_rate": 0.5}
    assert run(STATS_1, {"trials": trials}, k=2, claimed=claimed).status == "pass"
    assert run(STATS_2, {"trials": trials}, k=2, claimed=claimed).status == "pass"


def test_mean_of_task_means_differs_from_the_pooled_rate() -> None:
    lines = humaneval_like({"a": ["passed", "passed"], "b": ["passed"] + ["failed: x"] * 3}, CONFIG)
    params = {"k": 2, "fields": MAPPING, "first_sample": 0}
    verdict = run(
        STATS_2,
        {"trials": lines},
        **params,
        claimed={"success_rate": 0.5, "mean_success_rate": 0.625},
    )
    assert verdict.status == "pass", verdict.message
    swapped = run(STATS_2, {"trials": lines}, **params, claimed={"mean_success_rate": 0.5})
    assert swapped.codes == ("stats.mismatch",)


@pytest.mark.parametrize("tolerance", [0.05, 0.5, 1.0, math.nan, -0.001])
def test_a_tolerance_wide_enough_to_accept_anything_is_refused(tolerance: float) -> None:
    lines = humaneval_like({"a": ["passed", "failed: x"]}, CONFIG)
    # @1 lets a tolerance of 0.5 accept a claimed 0.5 whatever the records say
    verdict = run(
        STATS_2,
        {"trials": lines},
        k=2,
        fields=MAPPING,
        first_sample=0,
        claimed={"pass_hat_k": 0.5},
        tolerance=tolerance,
    )
    assert verdict.codes == ("params.invalid",)


def test_at_1_accepts_a_half_tolerance_claim_the_records_do_not_support() -> None:
    trials = [(1, {"task": "a", "trial": 1, "outcome": "failure", "config": CONFIG})]
    assert (
        run(STATS_1, {"trials": trials}, k=1, claimed={"pass_at_k": 0.5}, tolerance=0.5).status
        == "pass"
    )
    assert run(
        STATS_2, {"trials": trials}, k=1, claimed={"pass_at_k": 0.5}, tolerance=0.5
    ).codes == ("params.invalid",)


def test_a_record_config_other_than_the_headers_is_mixed() -> None:
    lines = humaneval_like({"a": ["passed", "passed"]}, CONFIG)
    lines[2] = (lines[2][0], {**lines[2][1], "config": {**CONFIG, "temperature": 0.2}})
    verdict = run(
        STATS_2, {"trials": lines}, k=2, fields=MAPPING, first_sample=0, claimed={"tasks": 1}
    )
    assert verdict.codes == ("stats.config_mixed",)


def test_no_config_anywhere_is_refused() -> None:
    lines = humaneval_like({"a": ["passed", "passed"]})
    verdict = run(
        STATS_2, {"trials": lines}, k=2, fields=MAPPING, first_sample=0, claimed={"tasks": 1}
    )
    assert verdict.codes == ("input.invalid",) and "config" in verdict.message


def test_samples_numbered_by_file_order_when_the_harness_writes_no_index() -> None:
    lines = [(1, {"config": CONFIG})] + [
        (i + 2, {"task_id": "a", "passed": outcome})
        for i, outcome in enumerate([True, False, True])
    ]
    fields = {"task": "task_id", "sample": "", "outcome": "passed"}
    verdict = run(
        STATS_2,
        {"trials": copy.deepcopy(lines)},
        k=3,
        fields=fields,
        claimed={"pass_at_k": 1.0, "pass_hat_k": 0.0},
    )
    assert verdict.status == "pass", verdict.message


# --------------------------------------------------------------------------- noise

JSON_NOISE = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=8,
)
READ = {"fault", "planned", "executed", "complete", "blocked", "records"}


@settings(max_examples=60, deadline=None)
@given(
    st.dictionaries(st.text(max_size=8).filter(lambda k: k not in READ), JSON_NOISE, max_size=4),
    st.lists(
        st.dictionaries(st.sampled_from(["duration", "stdout", "x"]), JSON_NOISE),
        min_size=10,
        max_size=10,
    ),
    st.lists(JSON_NOISE, min_size=10, max_size=10),
)
def test_noise_in_fields_the_verdict_does_not_read_never_changes_it(
    top: dict[str, Any], extra: list[dict[str, Any]], tracebacks: list[Any]
) -> None:
    pins = {
        "want": "defect_detected",
        "planned": 10,
        "expected_failures": {"missing-record": 1},
        "assertion_failures": True,
    }
    value = report("missing-record", {"test_scenario_4": ASSERTION})
    assert run(REPORT_2, {"report": value}, **pins).status == "pass"
    noisy = copy.deepcopy(value)
    noisy.update(top)
    for record, more, traceback in zip(noisy["records"], extra, tracebacks, strict=True):
        record.update(more)
        if record["status"] == "passed":
            record["traceback"] = traceback  # never read for a test that passed
    verdict = run(REPORT_2, {"report": noisy}, **pins)
    assert verdict.status == "pass", verdict.message
