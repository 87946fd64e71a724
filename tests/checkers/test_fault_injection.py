"""fault-report@1 and trial-stats@1 (seed 001): judgements, detections, pass@k / pass^k."""

from __future__ import annotations

import copy
import itertools
import json
from collections.abc import Mapping
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from checkers import get
from checkers.api import Checker, CheckerInputError, Verdict
from checkers.fault_injection.report import JUDGEMENTS, SEED_FAULTS, judge, parse_report
from checkers.fault_injection.trials import independent_pass_at_k, independent_pass_hat_k

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
    value: dict[str, Any] = {
        "fault": fault,
        "planned": 10,
        "executed": 10,
        "complete": True,
        "blocked": False,
        "records": records,
    }
    value.update(overrides)
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
