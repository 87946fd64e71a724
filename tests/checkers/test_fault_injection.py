"""fault-report@1 and trial-stats@1 (seed 001): judgements, detections, pass@k / pass^k.

fault-report@2 and trial-stats@2 (seed 001): what real runners write gets a verdict,
pins close the false accepts, the judge is linear, and pass@k is unbiased for n >= k."""

from __future__ import annotations

import copy
import itertools
import json
import math
from collections.abc import Mapping
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from checkers import get, strictjson
from checkers.api import Checker, CheckerInputError, Verdict
from checkers.fault_injection.report import (
    JUDGEMENTS,
    SEED_FAULTS,
    failure_type,
    judge,
    parse_report,
)
from checkers.fault_injection.report import judge as judge_v1
from checkers.fault_injection.report import judge_v2 as judge_at2
from checkers.fault_injection.report import parse_report as parse_v1
from checkers.fault_injection.report import parse_report_v2 as parse_report_at2
from checkers.fault_injection.trials import (
    independent_pass_at_k,
    independent_pass_hat_k,
    pass_at_k,
    pass_hat_k,
)
from tests.checkers.checker_calls import get as get_at2
from tests.checkers.checker_calls import run as run_at2

FAULT_REPORT = get("fault-report@1")
TRIAL_STATS = get("trial-stats@1")


def run(chk: Checker | None, inputs: Mapping[str, Any], **params: Any) -> Verdict:
    """Call a checker as the runner does: defaults filled in, input errors as verdicts."""
    assert chk is not None
    full = {p.name: p.default for p in chk.params if not p.required}
    full.update(params)
    missing = [p.name for p in chk.params if p.required and p.name not in full]
    assert not missing, missing
    try:
        verdict = chk.function(inputs, full)
    except CheckerInputError as exc:
        verdict = Verdict.errored(exc.code, exc.message)
    assert set(verdict.codes) <= set(chk.all_reasons), verdict.codes
    json.dumps(dict(verdict.details))  # details must be JSON-serialisable
    for reason in verdict.reasons:
        json.dumps(dict(reason.details))
    return verdict


# --------------------------------------------------------------------------- fault-report

SCENARIOS = [
    "test_reserve_within_stock_decrements_available",
    "test_reserve_beyond_stock_is_rejected_and_stock_unchanged",
    "test_release_restores_available",
    "test_reserve_creates_reservation_record",
    "test_release_closes_reservation_record",
    "test_repeated_reserve_with_same_key_reserves_once",
    "test_same_key_different_quantity_returns_409",
    "test_unknown_sku_returns_404",
    "test_negative_quantity_returns_422",
    "test_concurrent_reserves_do_not_oversell",
]


def report(fault: str = "none", failed: Mapping[str, str] | None = None, **overrides: Any) -> Any:
    """A complete 10-scenario report; ``failed`` maps test -> status ("failed", "error"...)."""
    failed = failed or {}
    records = []
    for name in SCENARIOS:
        status = failed.get(name, "passed")
        record: dict[str, Any] = {"test": name, "status": status}
        if status != "passed":
            record["traceback"] = f"AssertionError in {name}"
        records.append(record)
    return complete_report(fault, records, **overrides)


def complete_report(fault: str, records: list[dict[str, Any]], /, **top: Any) -> dict[str, Any]:
    """A runner report of a complete run of ``records`` (10 planned, 10 executed, none
    blocked), ``top`` over its fields."""
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


def fault_verdict(value: Any, want: str, **params: Any) -> Verdict:
    return run(FAULT_REPORT, {"report": value}, want=want, **params)


def test_normal_service_passing_every_scenario_earns_baseline_pass() -> None:
    verdict = fault_verdict(report(), "baseline_pass")
    assert verdict.status == "pass"
    assert verdict.details["passed"] == 10


def test_one_failed_scenario_on_the_normal_service_is_baseline_fail() -> None:
    verdict = fault_verdict(report(failed={SCENARIOS[0]: "failed"}), "baseline_pass")
    assert verdict.status == "fail"
    assert verdict.codes == ("judgement.baseline_fail",)


@pytest.mark.parametrize("fault", SEED_FAULTS)
def test_failed_assertion_under_an_injected_fault_is_a_detection(fault: str) -> None:
    verdict = fault_verdict(report(fault, {SCENARIOS[1]: "failed"}), "defect_detected")
    assert verdict.status == "pass", verdict.message
    assert verdict.details["failed_tests"] == [SCENARIOS[1]]


def test_injected_fault_with_every_scenario_passing_is_defect_missed() -> None:
    verdict = fault_verdict(report("double-reserve"), "defect_detected")
    assert verdict.status == "fail"
    assert verdict.codes == ("judgement.defect_missed",)
    assert fault_verdict(report("double-reserve"), "defect_missed").status == "pass"


def test_fault_outside_known_faults_is_unknown_fault_not_a_detection() -> None:
    value = report("slow-writes", {SCENARIOS[0]: "failed"})
    verdict = fault_verdict(value, "defect_detected")
    assert verdict.codes == ("judgement.unknown_fault",)
    assert fault_verdict(value, "unknown_fault").status == "pass"


def test_known_faults_param_names_the_injected_faults() -> None:
    value = report("slow-writes", {SCENARIOS[0]: "failed"})
    verdict = fault_verdict(value, "defect_detected", known_faults=["slow-writes"])
    assert verdict.status == "pass"
    # the seed's three faults are then no longer known
    verdict = fault_verdict(report("reject-writes"), "defect_missed", known_faults=["slow-writes"])
    assert verdict.codes == ("judgement.unknown_fault",)


def test_connection_error_as_the_only_failure_is_not_a_detection() -> None:
    value = report("reject-writes", {SCENARIOS[1]: "error"})
    verdict = fault_verdict(value, "defect_detected")
    assert verdict.status == "fail"
    assert verdict.codes == ("judgement.execution_error_or_skip",)
    assert SCENARIOS[1] in verdict.message
    assert fault_verdict(value, "execution_error_or_skip").status == "pass"


def test_execution_error_beside_a_failed_assertion_still_does_not_count_as_detection() -> None:
    value = report("missing-record", {SCENARIOS[3]: "failed", SCENARIOS[4]: "error"})
    verdict = fault_verdict(value, "defect_detected")
    assert verdict.codes == ("judgement.execution_error_or_skip",)


@pytest.mark.parametrize("status", ["skipped", "error", "xfailed", "PASSED", "timeout"])
def test_any_status_other_than_passed_or_failed_is_execution_error_or_skip(status: str) -> None:
    verdict = fault_verdict(report("none", {SCENARIOS[5]: status}), "baseline_pass")
    assert verdict.codes == ("judgement.execution_error_or_skip",)


def test_execution_error_on_the_baseline_is_not_a_baseline_pass_or_fail() -> None:
    verdict = fault_verdict(report("none", {SCENARIOS[0]: "error"}), "baseline_fail")
    assert verdict.codes == ("judgement.execution_error_or_skip",)


def _drop_last_record(value: Any) -> Any:
    value["records"] = value["records"][:-1]
    return value


def _duplicate_a_name(value: Any) -> Any:
    value["records"][1]["test"] = value["records"][0]["test"]
    return value


INCOMPLETE = {
    "nothing_planned": lambda v: {**v, "planned": 0, "executed": 0, "records": []},
    "negative_plan": lambda v: {**v, "planned": -1},
    "not_complete": lambda v: {**v, "complete": False},
    "blocked_flag": lambda v: {**v, "blocked": True},
    "blocked_list": lambda v: {**v, "blocked": ["test_concurrent_reserves_do_not_oversell"]},
    "blocked_count": lambda v: {**v, "blocked": 2},
    "executed_fewer_than_planned": lambda v: {**v, "planned": 12},
    "records_fewer_than_executed": _drop_last_record,
    "duplicate_test_names": _duplicate_a_name,
}


@pytest.mark.parametrize("change", INCOMPLETE.values(), ids=INCOMPLETE.keys())
def test_report_that_did_not_run_every_planned_scenario_is_incomplete(change: Any) -> None:
    value = change(report("reject-writes", {SCENARIOS[1]: "failed"}))
    verdict = fault_verdict(value, "defect_detected")
    assert verdict.status == "fail"
    assert verdict.codes == ("judgement.incomplete",)
    assert verdict.details["problems"], "an incomplete judgement says why"


def test_incomplete_takes_precedence_over_an_execution_error() -> None:
    value = report("none", {SCENARIOS[0]: "error"}, complete=False)
    assert fault_verdict(value, "execution_error_or_skip").codes == ("judgement.incomplete",)
    assert fault_verdict(value, "incomplete").status == "pass"


@pytest.mark.parametrize("blocked", [False, [], 0])
def test_empty_or_zero_blocked_is_not_blocked(blocked: Any) -> None:
    assert fault_verdict(report(blocked=blocked), "baseline_pass").status == "pass"


@pytest.mark.parametrize("want", JUDGEMENTS)
def test_every_judgement_is_reachable(want: str) -> None:
    examples = {
        "incomplete": report(complete=False),
        "execution_error_or_skip": report(failed={SCENARIOS[0]: "skipped"}),
        "baseline_pass": report(),
        "baseline_fail": report(failed={SCENARIOS[0]: "failed"}),
        "defect_detected": report("missing-record", {SCENARIOS[3]: "failed"}),
        "defect_missed": report("missing-record"),
        "unknown_fault": report("flaky-network"),
    }
    verdict = fault_verdict(examples[want], want)
    assert verdict.status == "pass"
    assert verdict.details["judgement"] == want
    for other in JUDGEMENTS:
        if other != want:
            assert fault_verdict(examples[want], other).codes == (f"judgement.{want}",)


MISSING_RECORD_FAILURES = {
    "test_reserve_creates_reservation_record": "assert len(records) == 1",
    "test_release_closes_reservation_record": "assert len(open_records) == 0",
    "test_repeated_reserve_with_same_key_reserves_once": "assert available == 7",
    "test_same_key_different_quantity_returns_409": "assert response.status_code == 409",
}


def missing_record_report() -> Any:
    value = report("missing-record", dict.fromkeys(MISSING_RECORD_FAILURES, "failed"))
    for record in value["records"]:
        if record["test"] in MISSING_RECORD_FAILURES:
            record["traceback"] = f"E   {MISSING_RECORD_FAILURES[record['test']]}\nAssertionError"
    return value


def test_four_failures_of_missing_record_are_the_named_assertions() -> None:
    verdict = fault_verdict(
        missing_record_report(),
        "defect_detected",
        failing_tests=list(MISSING_RECORD_FAILURES),
        failure_causes=MISSING_RECORD_FAILURES,
    )
    assert verdict.status == "pass", verdict.message
    assert verdict.details["failed"] == 4
    assert "one injected fault, not 4 defects" in verdict.message


def test_detection_by_a_test_other_than_the_targeted_one_is_other_cause() -> None:
    value = report("reject-writes", {"test_unknown_sku_returns_404": "failed"})
    verdict = fault_verdict(
        value,
        "defect_detected",
        failing_tests=["test_reserve_beyond_stock_is_rejected_and_stock_unchanged"],
    )
    assert verdict.status == "fail"
    assert verdict.codes == ("fault.expected_failure_absent", "fault.other_cause")
    other = next(r for r in verdict.reasons if r.code == "fault.other_cause")
    assert other.details["unexpected"] == ["test_unknown_sku_returns_404"]


def test_extra_failure_beside_the_targeted_one_is_other_cause() -> None:
    value = report("double-reserve", {SCENARIOS[5]: "failed", SCENARIOS[9]: "failed"})
    verdict = fault_verdict(value, "defect_detected", failing_tests=[SCENARIOS[5]])
    assert verdict.codes == ("fault.other_cause",)


def test_targeted_test_that_did_not_fail_is_expected_failure_absent() -> None:
    value = missing_record_report()
    value["records"][3]["status"] = "passed"
    verdict = fault_verdict(value, "defect_detected", failing_tests=list(MISSING_RECORD_FAILURES))
    assert verdict.codes == ("fault.expected_failure_absent",)
    assert "test_reserve_creates_reservation_record (passed)" in verdict.message


def test_failure_whose_traceback_lacks_the_expected_assertion_is_other_cause() -> None:
    value = missing_record_report()
    value["records"][6]["traceback"] = "E   ConnectionResetError: peer closed\nAssertionError"
    verdict = fault_verdict(
        value,
        "defect_detected",
        failing_tests=list(MISSING_RECORD_FAILURES),
        failure_causes=MISSING_RECORD_FAILURES,
    )
    assert verdict.codes == ("fault.other_cause",)
    assert "test_same_key_different_quantity_returns_409" in verdict.message


def test_cause_named_for_a_test_that_passed_is_expected_failure_absent() -> None:
    value = report("reject-writes", {SCENARIOS[7]: "failed"})
    verdict = fault_verdict(
        value, "defect_detected", failure_causes={SCENARIOS[1]: "available after a rejected"}
    )
    assert verdict.codes == ("fault.expected_failure_absent",)
    assert f"{SCENARIOS[1]} (passed)" in verdict.message


def test_failing_tests_are_checked_for_a_failing_baseline_too() -> None:
    value = report(failed={SCENARIOS[2]: "failed"})
    assert fault_verdict(value, "baseline_fail", failing_tests=[SCENARIOS[2]]).status == "pass"
    verdict = fault_verdict(value, "baseline_fail", failing_tests=[SCENARIOS[3]])
    assert verdict.codes == ("fault.expected_failure_absent", "fault.other_cause")


def test_wrong_judgement_is_reported_before_any_cause() -> None:
    verdict = fault_verdict(
        report("missing-record"), "defect_detected", failing_tests=[SCENARIOS[3]]
    )
    assert verdict.codes == ("judgement.defect_missed",)


@pytest.mark.parametrize(
    ("params", "named"),
    [
        ({"want": "detected"}, "want"),
        ({"want": "baseline_pass", "failing_tests": [SCENARIOS[0]]}, "failing_tests"),
        ({"want": "defect_detected", "failing_tests": [1]}, "failing_tests"),
        ({"want": "defect_detected", "failing_tests": ["a", "a"]}, "failing_tests"),
        ({"want": "defect_detected", "failure_causes": {"a": ""}}, "failure_causes"),
        (
            {"want": "defect_detected", "failing_tests": ["a"], "failure_causes": {"b": "x"}},
            "failure_causes",
        ),
        ({"want": "defect_detected", "known_faults": ["none"]}, "known_faults"),
    ],
)
def test_nonsense_params_are_an_error_naming_the_param(params: Any, named: str) -> None:
    verdict = run(FAULT_REPORT, {"report": report("reject-writes")}, **params)
    assert verdict.status == "error"
    assert verdict.codes == ("params.invalid",)
    assert named in verdict.message


def test_malformed_report_is_an_error_naming_every_problem() -> None:
    value = report()
    del value["planned"]
    value["complete"] = "yes"
    value["records"][1]["status"] = None
    value["records"][2] = "test_release_restores_available passed"
    verdict = fault_verdict(value, "baseline_pass")
    assert verdict.status == "error"
    assert verdict.codes == ("input.invalid",)
    for part in ("report.planned: missing", "report.complete", "records[1].status", "records[2]"):
        assert part in verdict.message


def test_count_given_as_true_is_refused_not_read_as_one() -> None:
    verdict = fault_verdict(report(planned=True), "baseline_pass")
    assert verdict.codes == ("input.invalid",)


def test_report_that_is_not_a_mapping_is_an_error() -> None:
    assert fault_verdict([1, 2], "baseline_pass").codes == ("input.invalid",)


def seed_judge(report: Any) -> str:
    """The seed's check_reports.py judge, transcribed verbatim: the oracle."""
    records = report["records"]
    if (
        report["planned"] <= 0
        or not report["complete"]
        or report["blocked"]
        or report["executed"] != report["planned"]
        or len(records) != report["executed"]
        or len({r["test"] for r in records}) != len(records)
    ):
        return "incomplete"
    statuses = [r["status"] for r in records]
    if any(s not in {"passed", "failed"} for s in statuses):
        return "execution_error_or_skip"
    if report["fault"] == "none":
        return "baseline_pass" if all(s == "passed" for s in statuses) else "baseline_fail"
    if report["fault"] in {"reject-writes", "double-reserve", "missing-record"}:
        return "defect_detected" if "failed" in statuses else "defect_missed"
    return "unknown_fault"


reports = st.fixed_dictionaries(
    {
        "fault": st.sampled_from(["none", *SEED_FAULTS, "slow-writes"]),
        "planned": st.integers(-1, 5),
        "executed": st.integers(0, 5),
        "complete": st.booleans(),
        "blocked": st.one_of(st.booleans(), st.integers(0, 2), st.lists(st.just("t1"), max_size=1)),
        "records": st.lists(
            st.fixed_dictionaries(
                {
                    "test": st.sampled_from(["t1", "t2", "t3", "t4", "t5"]),
                    "status": st.sampled_from(["passed", "failed", "error", "skipped"]),
                }
            ),
            max_size=5,
        ),
    }
)


@settings(max_examples=400, deadline=None)
@given(reports)
def test_judgement_agrees_with_the_seed_judge_on_any_report(value: Any) -> None:
    assert judge(parse_report(value)).name == seed_judge(value)


@settings(max_examples=200, deadline=None)
@given(reports)
def test_a_report_with_an_execution_error_is_never_a_detection(value: Any) -> None:
    value = copy.deepcopy(value)
    value["records"].append({"test": "t-conn", "status": "error"})
    assert judge(parse_report(value)).name in ("incomplete", "execution_error_or_skip")


# The test above mostly draws incomplete reports (records rarely match the counts), so
# it seldom reaches the execution-error rule; here every report is complete by
# construction, and the connection error must decide the judgement every time.
complete_reports = st.builds(
    lambda fault, records: {
        "fault": fault,
        "planned": len(records) + 1,
        "executed": len(records) + 1,
        "complete": True,
        "blocked": False,
        "records": [*records, {"test": "t-conn", "status": "error"}],
    },
    st.sampled_from(["none", *SEED_FAULTS]),
    st.lists(
        st.fixed_dictionaries(
            {
                "test": st.sampled_from(["t1", "t2", "t3", "t4", "t5"]),
                "status": st.sampled_from(["passed", "failed"]),
            }
        ),
        max_size=5,
        unique_by=lambda r: r["test"],
    ),
)


@settings(max_examples=200, deadline=None)
@given(complete_reports)
def test_complete_report_with_a_connection_error_is_an_execution_error(value: Any) -> None:
    assert judge(parse_report(value)).name == "execution_error_or_skip"
    verdict = run(FAULT_REPORT, {"report": value}, want="defect_detected")
    assert verdict.codes == ("judgement.execution_error_or_skip",)


# --------------------------------------------------------------------------- trial-stats

CONFIG = {"model": "m-1", "prompt": "inventory-skill v2", "budget_usd": 0.5}


def trials(*rows: tuple[str, int, str], config: Mapping[str, Any] = CONFIG) -> list[Any]:
    return [
        (line, {"task": task, "trial": n, "outcome": outcome, "config": dict(config)})
        for line, (task, n, outcome) in enumerate(rows, start=1)
    ]


def outcomes(task: str, *results: str) -> list[tuple[str, int, str]]:
    short = {"S": "success", "F": "failure", "E": "environment_failure"}
    return [(task, n, short[r]) for n, r in enumerate(results, start=1)]


# Hand-computed: A SSS, B SFS, C FFF, D F E S F (env failure re-run), E S E (short of k=3)
SMALL = trials(
    *outcomes("a", "S", "S", "S"),
    *outcomes("b", "S", "F", "S"),
    *outcomes("c", "F", "F", "F"),
    *outcomes("d", "F", "E", "S", "F"),
    *outcomes("e", "S", "E"),
)
SMALL_FIGURES = {
    "trials": 15,
    "environment_failures": 2,
    "counted_trials": 13,
    "successes": 7,
    "success_rate": 7 / 13,
    "tasks": 4,
    "tasks_excluded": 1,
    "pass_at_k_tasks": 3,
    "pass_at_k": 0.75,
    "pass_hat_k_tasks": 1,
    "pass_hat_k": 0.25,
}


def stats_verdict(rows: Any, **params: Any) -> Verdict:
    return run(TRIAL_STATS, {"trials": rows}, **params)


def test_figures_agree_with_hand_computed_values() -> None:
    verdict = stats_verdict(SMALL, k=3, claimed=SMALL_FIGURES)
    assert verdict.status == "pass", verdict.message
    assert verdict.details["figures"] == pytest.approx(SMALL_FIGURES)
    assert verdict.details["excluded_tasks"] == ["e"]
    per_task = verdict.details["per_task"]
    assert per_task["d"]["counted"] == 3 and per_task["d"]["environment_failures"] == 1
    assert per_task["b"]["success_rate"] == pytest.approx(2 / 3)
    assert per_task["e"]["pass_at_k"] is None
    assert "pass@3 75.0% (3 of 4 tasks)" in verdict.message


def test_environment_failures_counted_as_failures_change_the_denominators() -> None:
    rows = trials(*outcomes("a", "S", "E", "S"), *outcomes("b", "S", "S", "S"))
    verdict = stats_verdict(
        rows,
        k=3,
        environment_failures="count_as_failure",
        claimed={"counted_trials": 6, "success_rate": 5 / 6, "pass_hat_k": 0.5, "tasks": 2},
    )
    assert verdict.status == "pass", verdict.message
    assert verdict.details["figures"]["environment_failures"] == 1
    assert "count as failed" in verdict.details["environment_failures_rule"]
    excluded = stats_verdict(rows, k=3, claimed={"tasks": 1, "tasks_excluded": 1})
    assert excluded.status == "pass", excluded.message


def test_mismatch_names_each_figure_with_claimed_and_recomputed() -> None:
    verdict = stats_verdict(SMALL, k=3, claimed={"pass_at_k": 0.8, "pass_hat_k": 0.25, "tasks": 5})
    assert verdict.status == "fail"
    assert verdict.codes == ("stats.mismatch",)
    messages = [r.message for r in verdict.reasons]
    assert messages == [
        "pass_at_k: claimed 80.0%, recomputed 75.0% (3 of 4 tasks)",
        "tasks: claimed 5, recomputed 4",
    ]
    assert verdict.reasons[0].details == {"figure": "pass_at_k", "claimed": 0.8, "recomputed": 0.75}


def test_repeats_of_one_hard_task_are_not_counted_as_many_tasks() -> None:
    # Twelve trials of task "hard" (3 succeed) and three easy tasks run once each:
    # pooling trials as tasks would claim 6 of 15 "tasks" passed.
    rows = trials(
        *outcomes("hard", *"SFFFSFFFSFFF"),
        *outcomes("easy-1", "S"),
        *outcomes("easy-2", "S"),
        *outcomes("easy-3", "S"),
    )
    verdict = stats_verdict(rows, k=1, claimed={"tasks": 15})
    assert verdict.status == "error"
    assert "'hard' has 12 counted trials" in verdict.message
    per_task = trials(*outcomes("hard", "S", "F", "F"), *outcomes("easy", "S", "S", "S"))
    pooled_claim = {"pass_hat_k": 4 / 6}
    verdict = stats_verdict(per_task, k=3, claimed=pooled_claim)
    assert verdict.codes == ("stats.mismatch",)
    assert "recomputed 50.0% (1 of 2 tasks)" in verdict.message


def test_a_task_left_out_of_pass_at_k_is_named_in_the_pass_message() -> None:
    # A hard task whose environment kept failing drops out of the pass@k denominator;
    # the verdict must not let that happen silently (seed: do not silently exclude
    # hard tasks; report environment failures and the exclusion rule).
    rows = trials(*outcomes("easy", "S", "S", "S"), *outcomes("hard", "F", "E", "E"))
    verdict = stats_verdict(rows, k=3, claimed={"pass_at_k": 1.0, "pass_hat_k": 1.0})
    assert verdict.status == "pass"
    assert "1 task left out" in verdict.message and "hard" in verdict.message
    assert "2 environment failure(s)" in verdict.message


def test_tolerance_absorbs_rounding_of_fractions_but_not_counts() -> None:
    assert stats_verdict(SMALL, k=3, claimed={"success_rate": 0.538}).status == "pass"
    assert stats_verdict(SMALL, k=3, claimed={"success_rate": 0.54}).codes == ("stats.mismatch",)
    loose = stats_verdict(SMALL, k=3, claimed={"success_rate": 0.54}, tolerance=0.005)
    assert loose.status == "pass"
    assert stats_verdict(SMALL, k=3, claimed={"tasks": 4}, tolerance=0.5).status == "pass"


def test_trials_with_different_configurations_are_config_mixed() -> None:
    rows = SMALL + trials(*outcomes("f", "S", "S", "S"), config={**CONFIG, "prompt": "v3"})
    rows = [(n, value) for n, (_, value) in enumerate(rows, start=1)]
    verdict = stats_verdict(rows, k=3, claimed={"tasks": 5})
    assert verdict.status == "fail"
    assert verdict.codes == ("stats.config_mixed",)
    assert "lines 16, 17, 18" in verdict.message


def seed_formula_trials(successes: int, out_of: int, k: int) -> list[Any]:
    """Tasks enumerating every k-trial sequence of `out_of` equally likely results, of which
    `successes` are success: the observed fractions equal the independent-trial formulas."""
    rows = []
    for index, combo in enumerate(itertools.product(range(out_of), repeat=k)):
        for n, slot in enumerate(combo, start=1):
            rows.append((f"t{index:04d}", n, "success" if slot < successes else "failure"))
    return trials(*rows)


def test_seed_example_p08_k3_gives_992_and_512_percent() -> None:
    rows = seed_formula_trials(4, 5, 3)  # p = 4/5, k = 3: 125 tasks
    verdict = stats_verdict(
        rows, k=3, claimed={"pass_at_k": 0.992, "pass_hat_k": 0.512, "success_rate": 0.8}
    )
    assert verdict.status == "pass", verdict.message
    assert verdict.details["figures"]["tasks"] == 125
    assert independent_pass_at_k(0.8, 3) == pytest.approx(0.992)
    assert independent_pass_hat_k(0.8, 3) == pytest.approx(0.512)
    assert verdict.details["if_independent"]["pass_at_k"] == pytest.approx(0.992)


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 3), st.integers(0, 4), st.integers(1, 3))
def test_enumerated_trials_match_the_independent_formulas(
    out_of: int, successes: int, k: int
) -> None:
    successes = min(successes, out_of)
    p = successes / out_of
    verdict = stats_verdict(seed_formula_trials(successes, out_of, k), k=k, claimed={"tasks": 1})
    got = verdict.details["figures"]
    assert got["pass_at_k"] == pytest.approx(independent_pass_at_k(p, k))
    assert got["pass_hat_k"] == pytest.approx(independent_pass_hat_k(p, k))


task_rows = st.dictionaries(
    st.sampled_from(["a", "b", "c", "d", "e"]),
    st.lists(st.sampled_from("SFE"), min_size=1, max_size=4),
    min_size=1,
)


@settings(max_examples=200, deadline=None)
@given(task_rows, st.randoms(use_true_random=False))
def test_figures_do_not_depend_on_line_order_and_pass_hat_never_exceeds_pass_at(
    tasks: dict[str, list[str]], random: Any
) -> None:
    rows = trials(*[row for task, results in tasks.items() for row in outcomes(task, *results)])
    shuffled = rows[:]
    random.shuffle(shuffled)
    a = stats_verdict(rows, k=3, claimed={"trials": len(rows)})
    b = stats_verdict(shuffled, k=3, claimed={"trials": len(rows)})
    if a.status == "error":
        assert b.status == "error"
        return
    assert a.status == "pass"
    assert a.details["figures"] == b.details["figures"]
    figures = a.details["figures"]
    assert figures["tasks"] + figures["tasks_excluded"] == len(tasks)
    assert figures["pass_hat_k_tasks"] <= figures["pass_at_k_tasks"] <= figures["tasks"]
    assert figures["counted_trials"] + figures["environment_failures"] == figures["trials"]


@pytest.mark.parametrize(
    ("params", "named"),
    [
        ({"k": 0, "claimed": {"tasks": 4}}, "k: expected an integer >= 1"),
        ({"k": -2, "claimed": {"tasks": 4}}, "k: expected an integer >= 1"),
        ({"k": 3, "claimed": {}}, "claimed: empty"),
        ({"k": 3, "claimed": {"pass@k": 0.75}}, "'pass@k' is not a figure"),
        ({"k": 3, "claimed": {"pass_at_k": 75}}, "pass_at_k: expected a fraction"),
        ({"k": 3, "claimed": {"tasks": 4.0}}, "tasks: expected a count"),
        ({"k": 3, "claimed": {"tasks": 4}, "tolerance": 2}, "tolerance"),
        ({"k": 3, "claimed": {"tasks": 4}, "environment_failures": "drop"}, "environment_failures"),
    ],
)
def test_nonsense_params_are_an_error_naming_the_problem(params: Any, named: str) -> None:
    verdict = stats_verdict(SMALL, **params)
    assert verdict.status == "error"
    assert verdict.codes == ("params.invalid",)
    assert named in verdict.message


def test_unknown_outcome_is_an_error_naming_the_line() -> None:
    rows = copy.deepcopy(SMALL)
    rows[4][1]["outcome"] = "ok"
    verdict = stats_verdict(rows, k=3, claimed={"tasks": 4})
    assert verdict.status == "error"
    assert verdict.codes == ("input.invalid",)
    assert 'line 5: outcome: "ok" is not one of success, failure, environment_failure' in (
        verdict.message
    )


@pytest.mark.parametrize(
    ("change", "named"),
    [
        (lambda v: v.pop("config"), "config: expected an object"),
        (lambda v: v.update(trial=0), "trial: expected an integer >= 1"),
        (lambda v: v.update(trial=True), "trial: expected an integer >= 1"),
        (lambda v: v.update(task=""), "task: expected a task id"),
        (lambda v: v.update(trial=1), "task 'b' trial 1 already on line 4"),
    ],
)
def test_malformed_trial_record_is_an_error_naming_the_line(change: Any, named: str) -> None:
    rows = copy.deepcopy(SMALL)
    change(rows[5][1])  # line 6: task b, trial 3
    verdict = stats_verdict(rows, k=3, claimed={"tasks": 4})
    assert verdict.codes == ("input.invalid",)
    assert named in verdict.message
    assert "line 6" in verdict.message


def test_no_trials_is_an_error_not_a_pass() -> None:
    verdict = stats_verdict([], k=3, claimed={"tasks": 0})
    assert verdict.codes == ("input.invalid",)


def test_no_task_with_k_counted_trials_is_an_error() -> None:
    rows = trials(*outcomes("a", "S", "E", "S"))
    verdict = stats_verdict(rows, k=3, claimed={"pass_at_k": 1.0})
    assert verdict.codes == ("input.invalid",)
    assert "no task has 3 counted trials" in verdict.message


def test_more_than_k_counted_trials_is_an_error_asking_which_were_used() -> None:
    verdict = stats_verdict(SMALL, k=2, claimed={"tasks": 4})
    assert verdict.codes == ("input.invalid",)
    assert "'a' has 3 counted trials" in verdict.message


REPORT_1, REPORT_2 = "fault-report@1", "fault-report@2"
STATS_1, STATS_2 = "trial-stats@1", "trial-stats@2"

SCENARIOS_AT2 = [f"test_scenario_{i}" for i in range(10)]
ASSERTION = (
    "tests/test_inventory.py:60: in test_x\n    assert len(reservations) == 1\n"
    "E   AssertionError: reservations for key k-401: expected 1, observed 0"
)
CONNECTION = (
    "tests/test_inventory.py:31: in test_x\n    response = client.post(...)\n"
    "E   requests.exceptions.ConnectionError: HTTPConnectionPool(host='127.0.0.1', port=8001)"
)


def report_at2(fault: str = "none", failed: Mapping[str, Any] | None = None, **top: Any) -> Any:
    """A complete report of the 10 scenarios; ``failed`` maps test -> traceback."""
    failed = failed or {}
    records = []
    for name in SCENARIOS_AT2:
        if name in failed:
            records.append({"test": name, "status": "failed", "traceback": failed[name]})
        else:
            records.append({"test": name, "status": "passed", "traceback": None})
    return complete_report(fault, records, **top)


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
    value = report_at2("missing-record", {"test_scenario_3": ASSERTION}, **change)
    assert run_at2(REPORT_1, {"report": value}, want=earned).codes == ("input.invalid",)
    assert run_at2(REPORT_2, {"report": value}, want=earned).status == "pass"


@pytest.mark.parametrize("traceback", [["line 1", "E   AssertionError: x"], {"type": "Assert"}])
def test_a_traceback_that_is_not_text_is_not_read_unless_a_pin_asks(traceback: Any) -> None:
    value = report_at2("reject-writes", {"test_scenario_1": traceback})
    assert run_at2(REPORT_1, {"report": value}, want="defect_detected").codes == ("input.invalid",)
    assert run_at2(REPORT_2, {"report": value}, want="defect_detected").status == "pass"
    asked = run_at2(REPORT_2, {"report": value}, want="defect_detected", assertion_failures=True)
    if isinstance(traceback, list):
        assert asked.status == "pass"  # lines are joined and read
    else:
        assert asked.codes == ("input.invalid",) and "reads its traceback" in asked.message


def test_a_nan_duration_in_a_real_json_report_is_read_when_the_version_opts_in() -> None:
    text = json.dumps(report_at2()).replace('"fault"', '"duration": NaN, "fault"')
    with pytest.raises(ValueError):
        strictjson.loads(text)  # what the runner does for fault-report@1: input.unreadable
    assert get_at2(REPORT_1).roles[0].reading.json_constants is False
    assert get_at2(REPORT_2).roles[0].reading.json_constants is True
    value = strictjson.loads(text, constants=True)
    assert run_at2(REPORT_2, {"report": value}, want="baseline_pass").status == "pass"
    assert run_at2(
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
    verdict = run_at2(REPORT_2, {"report": report_at2(**change)}, want="baseline_pass")
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
        return judge_at2(parse_report_at2(value))

    # @1 compared every name with every name until issue 33 (400 * 399 comparisons)
    assert comparisons(v1, 400) <= 400
    assert comparisons(v1, 4000) <= 4000
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
    verdict = run_at2(
        REPORT_2,
        {"report": value},
        want="incomplete" if duplicates else "defect_detected",
        assertion_failures=True,
        expected_failures={"missing-record": len(names)},
        failing_tests=[] if duplicates else [str(t) for t in names],
    )
    assert verdict.status == "pass", verdict.message
    assert CountingName.calls <= 5 * len(names)  # a few comparisons a name, never one a pair


# --------------------------------------------------------------------------- pins


def test_a_connection_error_recorded_as_failed_is_not_a_detection() -> None:
    value = report_at2("reject-writes", {"test_scenario_1": CONNECTION})
    assert (
        run_at2(REPORT_1, {"report": value}, want="defect_detected").status == "pass"
    )  # false accept
    verdict = run_at2(REPORT_2, {"report": value}, want="defect_detected", assertion_failures=True)
    assert verdict.codes == ("pin.not_assertion",)
    assert "ends in ConnectionError" in verdict.message


def test_an_assertion_failure_is_a_detection() -> None:
    value = report_at2("reject-writes", {"test_scenario_1": ASSERTION})
    verdict = run_at2(REPORT_2, {"report": value}, want="defect_detected", assertion_failures=True)
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
    value = report_at2("reject-writes", {"test_scenario_1": None})
    verdict = run_at2(REPORT_2, {"report": value}, want="defect_detected", assertion_failures=True)
    assert verdict.codes == ("pin.not_assertion",) and "has no traceback" in verdict.message


EXPECTED = {"none": 0, "reject-writes": 1, "double-reserve": 1, "missing-record": 4}


def test_the_failure_count_per_fault_is_pinned_without_naming_tests() -> None:
    four = {f"test_scenario_{i}": ASSERTION for i in (3, 4, 5, 6)}
    two = {f"test_scenario_{i}": ASSERTION for i in (3, 4)}
    pins = {"want": "defect_detected", "expected_failures": EXPECTED}
    assert (
        run_at2(
            REPORT_1, {"report": report_at2("missing-record", two)}, want="defect_detected"
        ).status
        == "pass"
    )
    assert (
        run_at2(REPORT_2, {"report": report_at2("missing-record", four)}, **pins).status == "pass"
    )
    verdict = run_at2(REPORT_2, {"report": report_at2("missing-record", two)}, **pins)
    assert verdict.codes == ("pin.failure_count",) and "2 test(s) failed" in verdict.message
    other = run_at2(
        REPORT_2, {"report": report_at2("slow-disk", two)}, **pins, known_faults=["slow-disk"]
    )
    assert other.codes == ("pin.failure_count",) and "pins no count" in other.message


def test_the_planned_count_and_the_scenario_list_are_pinned() -> None:
    # a runner that planned and ran 9 of the 10 reference scenarios is "complete" to @1
    nine = report_at2(planned=9, executed=9)
    nine["records"] = nine["records"][:9]
    assert (
        run_at2(REPORT_1, {"report": nine}, want="baseline_pass").status == "pass"
    )  # false accept
    planned = run_at2(REPORT_2, {"report": nine}, want="baseline_pass", planned=10)
    assert planned.codes == ("pin.planned",)
    listed = run_at2(REPORT_2, {"report": nine}, want="baseline_pass", scenarios=SCENARIOS_AT2)
    assert listed.codes == ("pin.scenarios",) and "missing test_scenario_9" in listed.message
    ten = run_at2(
        REPORT_2,
        {"report": report_at2()},
        want="baseline_pass",
        planned=10,
        scenarios=SCENARIOS_AT2,
    )
    assert ten.status == "pass"


def test_renamed_scenarios_are_caught_by_the_list() -> None:
    value = report_at2()
    value["records"][0]["test"] = "test_something_else"
    verdict = run_at2(REPORT_2, {"report": value}, want="baseline_pass", scenarios=SCENARIOS_AT2)
    assert (
        verdict.codes == ("pin.scenarios",) and "not pinned test_something_else" in verdict.message
    )


@pytest.mark.parametrize(
    "params",
    [
        {"planned": 0},
        {"planned": 9, "scenarios": SCENARIOS_AT2},
        {"scenarios": ["a", "a"]},
        {"expected_failures": {"none": -1}},
        {"expected_failures": {"none": True}},
    ],
)
def test_bad_pins_are_params_invalid(params: dict[str, Any]) -> None:
    verdict = run_at2(REPORT_2, {"report": report_at2()}, want="baseline_pass", **params)
    assert verdict.codes == ("params.invalid",)


def test_the_judgement_is_still_the_seeds() -> None:
    for fault, failed, want in [
        ("none", {}, "baseline_pass"),
        ("none", {"test_scenario_0": ASSERTION}, "baseline_fail"),
        ("double-reserve", {}, "defect_missed"),
        ("double-reserve", {"test_scenario_5": ASSERTION}, "defect_detected"),
        ("made-up", {"test_scenario_5": ASSERTION}, "unknown_fault"),
    ]:
        value = report_at2(fault, failed)
        assert run_at2(REPORT_2, {"report": value}, want=want).status == "pass"
        assert judge_at2(parse_report_at2(value)).name == judge_v1(parse_v1(value)).name == want
    errored = report_at2("none")
    errored["records"][0]["status"] = "error"
    assert judge_at2(parse_report_at2(errored)).name == "execution_error_or_skip"


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
CONFIG_AT2 = {"model": "model-a", "temperature": 0.8}


def test_real_harness_records_are_read_through_the_field_mapping() -> None:
    lines = humaneval_like(
        {
            "HumanEval/0": ["passed", "failed: AssertionError", "passed", "timed out"],
            "HumanEval/1": ["failed: NameError", "failed: x", "passed", "passed"],
        },
        CONFIG_AT2,
    )
    verdict = run_at2(
        STATS_2,
        {"trials": lines},
        k=2,
        fields=MAPPING,
        first_sample=0,
        outcomes={"timed out": "failure"},
        claimed={"tasks": 2, "pass_at_k": 5 / 6, "pass_hat_k": 1 / 6, "mean_success_rate": 0.5},
    )
    assert verdict.status == "pass", verdict.message
    assert verdict.details["config"] == CONFIG_AT2
    # @1 cannot read them at all
    assert run_at2(STATS_1, {"trials": lines}, k=2, claimed={"tasks": 2}).codes == (
        "input.invalid",
    )


def test_an_unmapped_result_is_refused_with_the_fix() -> None:
    lines = humaneval_like({"HumanEval/0": ["passed", "timed out"]}, CONFIG_AT2)
    verdict = run_at2(
        STATS_2, {"trials": lines}, k=2, fields=MAPPING, first_sample=0, claimed={"tasks": 1}
    )
    assert verdict.codes == ("input.invalid",) and "add it to 'outcomes'" in verdict.message


def test_a_dropped_sample_is_refused_not_silently_absent() -> None:
    lines = humaneval_like({"HumanEval/0": ["passed", "failed: x", "passed"]}, CONFIG_AT2)
    del lines[2]  # sample 1 (a failure) is gone; 0 and 2 remain
    verdict = run_at2(
        STATS_2, {"trials": lines}, k=2, fields=MAPPING, first_sample=0, claimed={"tasks": 1}
    )
    assert verdict.codes == ("input.invalid",) and "lacks sample(s) 1" in verdict.message


def test_n_greater_than_k_uses_the_unbiased_estimator() -> None:
    # 5 samples, 2 successes: pass@2 = 1 - C(3,2)/C(5,2) = 0.7; pass^2 = C(2,2)/C(5,2) = 0.1
    lines = humaneval_like(
        {"t": ["passed", "failed: x", "passed", "failed: x", "failed: x"]}, CONFIG_AT2
    )
    params = {"k": 2, "fields": MAPPING, "first_sample": 0}
    good = run_at2(
        STATS_2, {"trials": lines}, **params, claimed={"pass_at_k": 0.7, "pass_hat_k": 0.1}
    )
    assert good.status == "pass", good.message
    # @1 refuses more than k trials; the naive "any success" figure (1.0) is a mismatch in @2
    naive = run_at2(STATS_2, {"trials": lines}, **params, claimed={"pass_at_k": 1.0})
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
        (i + 1, {"task": task, "trial": t, "outcome": outcome, "config": CONFIG_AT2})
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
    assert run_at2(STATS_1, {"trials": trials}, k=2, claimed=claimed).status == "pass"
    assert run_at2(STATS_2, {"trials": trials}, k=2, claimed=claimed).status == "pass"


def test_mean_of_task_means_differs_from_the_pooled_rate() -> None:
    lines = humaneval_like(
        {"a": ["passed", "passed"], "b": ["passed"] + ["failed: x"] * 3}, CONFIG_AT2
    )
    params = {"k": 2, "fields": MAPPING, "first_sample": 0}
    verdict = run_at2(
        STATS_2,
        {"trials": lines},
        **params,
        claimed={"success_rate": 0.5, "mean_success_rate": 0.625},
    )
    assert verdict.status == "pass", verdict.message
    swapped = run_at2(STATS_2, {"trials": lines}, **params, claimed={"mean_success_rate": 0.5})
    assert swapped.codes == ("stats.mismatch",)


@pytest.mark.parametrize("tolerance", [0.05, 0.5, 1.0, math.nan, -0.001])
def test_a_tolerance_wide_enough_to_accept_anything_is_refused(tolerance: float) -> None:
    lines = humaneval_like({"a": ["passed", "failed: x"]}, CONFIG_AT2)
    # @1 lets a tolerance of 0.5 accept a claimed 0.5 whatever the records say
    verdict = run_at2(
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
    trials = [(1, {"task": "a", "trial": 1, "outcome": "failure", "config": CONFIG_AT2})]
    assert (
        run_at2(STATS_1, {"trials": trials}, k=1, claimed={"pass_at_k": 0.5}, tolerance=0.5).status
        == "pass"
    )
    assert run_at2(
        STATS_2, {"trials": trials}, k=1, claimed={"pass_at_k": 0.5}, tolerance=0.5
    ).codes == ("params.invalid",)


def test_a_record_config_other_than_the_headers_is_mixed() -> None:
    lines = humaneval_like({"a": ["passed", "passed"]}, CONFIG_AT2)
    lines[2] = (lines[2][0], {**lines[2][1], "config": {**CONFIG_AT2, "temperature": 0.2}})
    verdict = run_at2(
        STATS_2, {"trials": lines}, k=2, fields=MAPPING, first_sample=0, claimed={"tasks": 1}
    )
    assert verdict.codes == ("stats.config_mixed",)


def test_no_config_anywhere_is_refused() -> None:
    lines = humaneval_like({"a": ["passed", "passed"]})
    verdict = run_at2(
        STATS_2, {"trials": lines}, k=2, fields=MAPPING, first_sample=0, claimed={"tasks": 1}
    )
    assert verdict.codes == ("input.invalid",) and "config" in verdict.message


def test_samples_numbered_by_file_order_when_the_harness_writes_no_index() -> None:
    lines = [(1, {"config": CONFIG_AT2})] + [
        (i + 2, {"task_id": "a", "passed": outcome})
        for i, outcome in enumerate([True, False, True])
    ]
    fields = {"task": "task_id", "sample": "", "outcome": "passed"}
    verdict = run_at2(
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
    value = report_at2("missing-record", {"test_scenario_4": ASSERTION})
    assert run_at2(REPORT_2, {"report": value}, **pins).status == "pass"
    noisy = copy.deepcopy(value)
    noisy.update(top)
    for record, more, traceback in zip(noisy["records"], extra, tracebacks, strict=True):
        record.update(more)
        if record["status"] == "passed":
            record["traceback"] = traceback  # never read for a test that passed
    verdict = run_at2(REPORT_2, {"report": noisy}, **pins)
    assert verdict.status == "pass", verdict.message
