"""Every built-in checker can show, for its params, an input on which it fails.

The property: for params the runner accepts, the checker's counterexample exists and the
checker fails on it for one of its own reasons; and where a counterexample says "none",
the params really are vacuous (checked where that can be decided by hand).

Every checker version added for issue 19 declares a counterexample, and it works:
for the params of the example bundles and for defaults, the inputs it gives make the
checker fail with one of its own reason codes (not an error).

The counterexamples of the checker versions added for the seed leftovers (issue 30,
item 7): for the params accepted, they make the checker fail for one of its own reasons;
where they give none, no input could (checked by hand on the params that admit none)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import checkers
from bundler.run.runner import run_checker, vacuity
from checkers import yamlfile
from checkers.api import Checker, failed_substantively
from checkers.fault_injection.report import JUDGEMENTS
from checkers.fault_injection.trials import FIGURES_V2
from checkers.witness import example
from tests.checkers.checker_calls import full_params, get, run

REPO = Path(__file__).resolve().parents[2]
SOURCES = sorted(
    [*REPO.glob("bundles/*/bundle.yaml"), *REPO.glob("bundler/authoring/templates/*/bundle.yaml")]
)


# params of every @1 checker, and of later versions no example uses, so that the property
# covers each one even when no example uses it (any more: a later version replaced it there)
KNOWN_PARAMS: list[tuple[str, dict[str, Any]]] = [
    # the importers' checkers: params as `reprobundle import` writes them
    ("inspect-counts@1", {"claimed": {"total_samples": 4, "errored_samples": 1}}),
    (
        "inspect-metric@1",
        {"scorer": "match", "reducer": "mean", "metric": "accuracy", "claimed": 0.5},
    ),
    ("inspect-rescore@1", {"scorer": "match", "method": "match", "options": {}}),
    ("inspect-status@1", {}),
    ("inspect-counts@2", {"claimed": {"total_samples": 4, "errored_samples": 1}}),
    (
        "inspect-metric@2",
        {"scorer": "match", "reducer": "mean", "metric": "accuracy", "claimed": 0.5},
    ),
    ("inspect-rescore@2", {"scorer": "match", "method": "match", "options": {}}),
    ("inspect-status@2", {}),
    ("inspect-rescore@3", {"scorer": "match", "method": "match", "options": {}}),
    ("inspect-rescore@3", {"scorer": "p", "method": "pattern", "options": {"pattern": "(a+)+$"}}),
    ("lm-eval-counts@1", {"task": "t", "claimed": {"original": 7, "effective": 3}}),
    ("lm-eval-hashes@1", {"task": "t"}),
    ("lm-eval-metric@1", {"task": "t", "metric": "acc", "filter": "none", "claimed": 0.25}),
    ("lm-eval-counts@2", {"task": "t", "claimed": {"original": 7, "effective": 3}}),
    ("lm-eval-metric@2", {"task": "t", "metric": "acc", "filter": "none", "claimed": 0.25}),
    ("promptfoo-assert@1", {}),
    ("promptfoo-stats@1", {"claimed": {"successes": 2, "failures": 1, "errors": 1}}),
    ("promptfoo-assert@2", {}),
    ("promptfoo-assert@2", {"min_rerun": 3}),
    ("promptfoo-stats@2", {}),
    ("promptfoo-assert@3", {}),
    ("promptfoo-stats@2", {"claimed": {"tests": 4, "pass_rate": 0.5}, "tolerance": 0.005}),
    ("call-args-schema@1", {}),
    ("call-args-schema@3", {}),
    ("classification-metrics@1", {"claimed": {"m": {"accuracy": 0.5, "n": 2}}}),
    ("contamination@1", {"markers": ["unavailable tool"]}),
    ("contamination@2", {"markers": ["unavailable tool", "(a+)+$"]}),
    ("fault-report@1", {"want": "defect_detected", "failing_tests": ["t"]}),
    ("fault-report@2", {"want": "defect_detected", "assertion_failures": True}),
    ("fault-report@3", {"want": "defect_detected", "assertion_failures": True}),
    ("group-rates@1", {"check": "c", "claimed": {"bare": "0/5", "skill": "3/3"}}),
    ("intent-expectations@1", {"case": "add-caching-auto"}),
    ("intent-expectations@3", {"case": "add-caching-auto"}),
    ("merge-reconstruct@1", {"lists": "by_key"}),
    ("no-write-attempts@1", {}),
    ("review-matches-submission@1", {}),
    ("state-unchanged@1", {"fields": ["config_hash"]}),
    ("structured-equal@1", {}),
    ("structured-equal@2", {}),
    ("suite-threshold@1", {"min_pass": 14, "total": 17}),
    ("suite-threshold@3", {"total": 12}),
    ("trajectory-skeleton@1", {"identity": ["label", "view"]}),
    ("trajectory-skeleton@3", {"identity": ["label", "view"]}),
    ("trial-stats@1", {"k": 3, "claimed": {"pass_at_k": 0.8, "tasks": 5}}),
    ("trial-stats@3", {"k": 3, "claimed": {"pass_at_k": 0.8}, "fields": {"config": ""}}),
]


def used_params() -> list[tuple[str, dict[str, Any]]]:
    """(checker, params) of every built-in case of every example and template source."""
    found = list(KNOWN_PARAMS)
    for source in SOURCES:
        doc, _ = yamlfile.load(source.read_text("utf-8"))
        for case in doc["cases"]:
            if not case["checker"].startswith("bundle:"):
                found.append((case["checker"], case.get("params", {})))
    return found


def fails_on_its_counterexample(found: Checker, params: dict[str, Any]) -> bool | None:
    """True when the counterexample fails the checker; None when there is none."""
    assert found.counterexample is not None
    full = {p.name: p.default for p in found.params if not p.required} | params
    inputs = found.counterexample(full)
    if inputs is None:
        return None
    return failed_substantively(run_checker(found, inputs, params))


def test_every_registered_checker_declares_a_counterexample() -> None:
    missing = [key for key, found in checkers.registry().items() if found.counterexample is None]
    assert missing == [], f"declare counterexample= for {missing} (see checkers/README.md)"


def test_a_checker_without_a_counterexample_is_refused_as_vacuous() -> None:
    found = checkers.registry()["structured-equal@1"]._replace(counterexample=None)
    refused = vacuity(found, {})
    assert refused is not None and refused.codes == ("params.vacuous",)


@pytest.mark.parametrize(("key", "params"), used_params(), ids=lambda v: str(v)[:60])
def test_params_of_every_example_case_have_a_failing_counterexample(
    key: str, params: dict[str, Any]
) -> None:
    assert fails_on_its_counterexample(checkers.registry()[key], params) is True


def test_every_registered_checker_is_exercised_by_the_property() -> None:
    missing = set(checkers.registry()) - {key for key, _ in used_params()}
    assert not missing, f"use {sorted(missing)} in an example bundle or add it to KNOWN_PARAMS"


# -- hypothesis: random params of the checkers whose params can make them vacuous ----------

WORD = st.text(alphabet="abcXYZ019 -_/.", min_size=1, max_size=8)
PROPERTY = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def check_property(key: str, params: dict[str, Any]) -> bool | None:
    found = checkers.registry()[key]
    if found.bind(params).refused is not None:
        return None
    refused = vacuity(found, params)
    if refused is not None and "params.invalid" in refused.codes:
        return None
    outcome = fails_on_its_counterexample(found, params)
    assert (refused is None) == (outcome is True), (refused, outcome)
    return outcome


@PROPERTY
@given(
    markers=st.lists(
        st.one_of(WORD.map(re.escape), st.sampled_from(["(?!)", "a^b", "x\\bx", "[0-9]+ ms"])),
        min_size=1,
        max_size=4,
        unique=True,
    ),
    ignore_case=st.booleans(),
)
def test_contamination_counterexample_hits_every_marker(
    markers: list[str], ignore_case: bool
) -> None:
    outcome = check_property("contamination@1", {"markers": markers, "ignore_case": ignore_case})
    dead = {"(?!)", "a^b", "x\\bx"} & set(markers)
    if outcome is not None:
        assert outcome is (not dead)


RULE = st.builds(
    lambda method, path: f"{method} {path}",
    st.sampled_from(["GET", "PUT", "POST", "*"]),
    st.sampled_from(["*", "/api/*", "/api/v1/config", "/x/*/y", "/[ab]c"]),
)


@PROPERTY
@given(writes=st.lists(RULE, max_size=3), reads=st.lists(RULE, max_size=3))
def test_no_write_counterexample_is_vacuous_only_when_everything_is_a_read(
    writes: list[str], reads: list[str]
) -> None:
    outcome = check_property("no-write-attempts@1", {"writes": writes, "reads": reads})
    if outcome is None and not writes:
        assert "* *" in reads  # the only way to cover every request as a read


@PROPERTY
@given(
    claimed=st.dictionaries(
        st.sampled_from(["pass_at_k", "pass_hat_k", "success_rate"]),
        st.floats(0, 1, allow_nan=False),
        min_size=1,
    ),
    counts=st.dictionaries(
        st.sampled_from(["trials", "tasks", "environment_failures", "successes"]),
        st.integers(0, 40),
    ),
    tolerance=st.floats(0, 0.999, allow_nan=False),
    k=st.integers(1, 5),
)
def test_trial_stats_counterexample_and_tolerance(
    claimed: dict[str, float], counts: dict[str, int], tolerance: float, k: int
) -> None:
    params = {"k": k, "claimed": {**claimed, **counts}, "tolerance": tolerance}
    outcome = check_property("trial-stats@1", params)
    if tolerance >= 0.05:  # outside the range: refused before the counterexample is asked
        assert outcome is None
    else:  # inside it every fraction 0..1 is at least 0.5 from 0 or from 1
        assert outcome is True


@PROPERTY
@given(
    claimed=st.dictionaries(
        st.sampled_from(["accuracy", "precision", "recall", "f1", "tp", "n"]),
        st.one_of(st.floats(0, 1, allow_nan=False), st.just("undefined"), st.integers(0, 5)),
        min_size=1,
    ),
    tolerance=st.floats(0, 0.0499, allow_nan=False),
)
def test_classification_metrics_counterexample(claimed: dict[str, Any], tolerance: float) -> None:
    params = {"claimed": {"m": claimed}, "tolerance": tolerance}
    outcome = check_property("classification-metrics@1", params)
    assert outcome in (None, True)
    if outcome is None:  # only when the params themselves are wrong
        found = checkers.registry()["classification-metrics@1"]
        refused = vacuity(found, params)
        assert refused is None or "params.vacuous" not in refused.codes


@PROPERTY
@given(
    pattern=st.sampled_from([".*", "^.*$", "[a-z]", "\\d+", "\\s*\\d+(\\.\\d+)? s$", "x"]),
    replace=st.sampled_from(["", "same", "x"]),
)
def test_trajectory_counterexample_is_vacuous_only_when_labels_collapse(
    pattern: str, replace: str
) -> None:
    normalise = [{"pattern": pattern, "replace": replace}]
    outcome = check_property("trajectory-skeleton@1", {"normalise": normalise})
    labels = {re.sub(pattern, replace, label) for label in ("start", "finish", "0", "a b", "/")}
    if len(labels - {""}) >= 2:
        assert outcome is True


@PROPERTY
@given(
    claimed=st.dictionaries(
        WORD,
        st.integers(1, 6).flatmap(lambda n: st.integers(0, n).map(lambda k: f"{k}/{n}")),
        min_size=1,
        max_size=3,
    ),
)
def test_group_rates_counterexample(claimed: dict[str, str]) -> None:
    assert check_property("group-rates@1", {"check": "c", "claimed": claimed}) is True


@PROPERTY
@given(total=st.integers(1, 40), data=st.data())
def test_suite_threshold_counterexample(total: int, data: st.DataObject) -> None:
    min_pass = data.draw(st.integers(1, total))
    params = {"min_pass": min_pass, "total": total}
    assert check_property("suite-threshold@1", params) is True


@PROPERTY
@given(
    want=st.sampled_from(
        [
            "incomplete",
            "execution_error_or_skip",
            "baseline_pass",
            "baseline_fail",
            "defect_detected",
            "defect_missed",
            "unknown_fault",
        ]
    )
)
def test_fault_report_counterexample_for_every_judgement(want: str) -> None:
    assert check_property("fault-report@1", {"want": want}) is True


# -- the witness finder --------------------------------------------------------------------


@pytest.mark.parametrize(
    "pattern",
    [
        "unavailable tool",
        "## Intent contract",
        r"\bfoo\b",
        "[^a]",
        r"(?i)HELLO",
        r"^GET /x$",
        r"(ab|cd)+e{2}[0-9]?z",
        r"(?=abc)abc",
        "a" * 5000,
    ],
)
def test_witness_is_a_line_the_pattern_matches(pattern: str) -> None:
    found = example(pattern)
    assert found is not None and "\n" not in found and re.search(pattern, found)


@pytest.mark.parametrize("pattern", ["(?!)", "a^b", r"a\bb", "x{100000000}", "(unclosed"])
def test_witness_of_a_pattern_that_matches_nothing_is_none(pattern: str) -> None:
    assert example(pattern) is None


# -- every numeric param of every registered checker, across its whole range ---------------


def _numeric_cases() -> list[tuple[str, dict[str, Any], str]]:
    """(checker, params an example uses, a numeric param of it) for every registered
    checker's every numeric param."""
    base: dict[str, dict[str, Any]] = {}
    for key, params in used_params():
        base.setdefault(key, params)
    return [
        (key, base[key], param.name)
        for key, found in sorted(checkers.registry().items())
        if key in base  # one no example uses: named by the test of KNOWN_PARAMS, not a KeyError
        for param in found.params
        if param.numeric
    ]


def test_a_checker_missing_from_known_params_is_named_not_a_key_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Friction 15 of issue 43: forgetting ``KNOWN_PARAMS`` gave a bare ``KeyError`` while
    collecting the tests; now the one test says which checker to add."""
    import sys

    here = sys.modules[__name__]
    monkeypatch.setattr(here, "KNOWN_PARAMS", [])
    monkeypatch.setattr(here, "SOURCES", [])
    assert _numeric_cases() == []
    with pytest.raises(AssertionError, match="add it to KNOWN_PARAMS"):
        test_every_registered_checker_is_exercised_by_the_property()


def test_every_numeric_param_of_every_checker_documents_a_range() -> None:
    found = [(key, name) for key, _, name in _numeric_cases()]
    unbounded = [
        (key, name)
        for key, name in found
        if not any(
            getattr(p, bound) is not None
            for p in checkers.registry()[key].params
            if p.name == name
            for bound in ("at_least", "at_most", "below")
        )
        and name != "claimed"  # a stated figure: any finite value, checked against the evidence
    ]
    assert found and unbounded == []


@pytest.mark.parametrize(("key", "params", "name"), _numeric_cases(), ids=lambda v: str(v)[:40])
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_accepted_params_admit_an_input_that_fails_across_each_range(
    key: str, params: dict[str, Any], name: str, data: st.DataObject
) -> None:
    found = checkers.registry()[key]
    param = next(p for p in found.params if p.name == name)
    low = param.at_least if param.at_least is not None else -100.0
    top = param.at_most if param.at_most is not None else param.below
    high = top if top is not None else low + 200
    whole = float not in param.types
    # whole numbers: the low end of the range and its top (larger values cost time only)
    inside = (
        st.one_of(st.integers(int(low), int(min(high, low + 64))), st.just(int(high)))
        if whole
        else st.floats(low, high, exclude_max=param.below is not None, allow_nan=False)
    )
    bounds = [b for b in (param.at_least, param.at_most, param.below) if b is not None]
    outside = [
        *([param.at_least - 1] if param.at_least is not None else []),
        *([param.at_most + 1] if param.at_most is not None else []),
        *([param.below] if param.below is not None else []),
    ]
    strategies = [inside]
    if bounds:
        strategies.append(st.sampled_from([int(v) if whole else v for v in outside]))
    if not whole:
        strategies.append(st.sampled_from([float("nan"), float("inf")]))
    value = data.draw(st.one_of(*strategies))
    given_params = {**params, name: value}
    if param.out_of_range(value):
        refused = vacuity(found, given_params)
        assert refused is not None and "params.out_of_range" in refused.codes
        return
    if found.bind(given_params).refused is not None:
        return
    refused = vacuity(found, given_params)
    if refused is not None:  # refused params are never run: the property is about accepted ones
        assert set(refused.codes) & {"params.invalid", "params.vacuous"}, refused
        return
    assert fails_on_its_counterexample(found, given_params) is True


CASES: list[tuple[str, dict[str, Any]]] = [
    ("state-unchanged@2", {}),
    ("state-unchanged@2", {"fields": ["config_hash", "versions", "active_version"]}),
    ("no-write-attempts@2", {}),
    ("no-write-attempts@2", {"writes": ["* /api/*/config"], "reads": ["GET *"]}),
    ("review-matches-submission@2", {}),
    ("fault-report@2", {"want": "baseline_pass"}),
    ("fault-report@2", {"want": "incomplete"}),
    (
        "fault-report@2",
        {
            "want": "defect_detected",
            "assertion_failures": True,
            "expected_failures": {"none": 0, "missing-record": 4},
            "planned": 10,
        },
    ),
    ("trial-stats@2", {"k": 3, "claimed": {"pass_at_k": 0.8}}),
    (
        "trial-stats@2",
        {
            "k": 1,
            "claimed": {"tasks": 2},
            "fields": {"task": "task_id", "sample": "", "outcome": "passed"},
        },
    ),
    (
        "trial-stats@2",
        {
            "k": 2,
            "claimed": {"pass_hat_k": 0.5},
            "fields": {"task": "task_id", "sample": "sample_index", "outcome": "result"},
            "first_sample": 0,
        },
    ),
    ("classification-metrics@2", {"claimed": {"m": {"accuracy": 1.0}}}),
    ("classification-metrics@2", {"claimed": {"m": {"f1": "undefined"}}}),
    ("classification-metrics@2", {"claimed": {"m": {"n": 2}, "k": {"tn": 1}}}),
    ("trajectory-skeleton@2", {}),
    ("trajectory-skeleton@2", {"identity": ["label", "view"]}),
    (
        "trajectory-skeleton@2",
        {"identity": ["label", "view"], "normalise": [{"field": "label", "pattern": "^o"}]},
    ),
    ("trajectory-skeleton@3", {}),
    (
        "trajectory-skeleton@3",
        {"identity": ["label", "view"], "normalise": [{"field": "label", "pattern": "^o"}]},
    ),
    ("no-write-attempts@2", {"writes": [], "reads": ["GET *"]}),
    ("merge-reconstruct@2", {}),
    ("merge-reconstruct@2", {"mappings": "replace"}),
    ("merge-reconstruct@2", {"lists": "by_key", "list_key": "name"}),
    ("call-args-schema@2", {}),
    ("call-args-schema@2", {"stages": ["local_receipt"]}),
]


@pytest.mark.parametrize(("key", "params"), CASES)
def test_counterexample_makes_the_checker_fail_with_its_own_reason(
    key: str, params: dict[str, Any]
) -> None:
    check = get(key)
    assert check.counterexample is not None, f"{key} declares no counterexample"
    full = full_params(check, **params)
    inputs = check.counterexample(full)
    assert inputs is not None, f"{key}: no counterexample for {params}"
    verdict = run(check, inputs, **params)
    assert verdict.status == "fail", verdict.message
    assert set(verdict.codes) <= set(check.reasons)


def test_every_new_version_declares_a_counterexample() -> None:
    import checkers

    new = list(checkers.MODULE_OF)  # every registered version: the @2s of issue 19 and later
    assert len(new) >= 11
    assert all(get(key).counterexample is not None for key in new)


def test_params_no_input_can_fail_have_no_counterexample() -> None:
    nothing = full_params("no-write-attempts@2", writes=[], reads=["* *"])
    assert get("no-write-attempts@2").counterexample is not None
    assert get("no-write-attempts@2").counterexample(nothing) is None


def test_reading_versions_decide_as_version_1_and_read_aliases() -> None:
    from tests.checkers.checker_calls import run

    for key in ("merge-reconstruct", "call-args-schema"):
        old, new = get(f"{key}@1"), get(f"{key}@2")
        assert new.function is old.function
        assert [p.name for p in new.params] == [p.name for p in old.params]
        assert dict(new.reasons) == dict(old.reasons)
        assert all(r.reading.yaml_aliases for r in new.roles if r.kind.value == "data")
        assert not any(r.reading.yaml_aliases for r in old.roles)
    inputs = {"original": {"a": 1}, "request": {"a": 2}, "expected": {"a": 2}}
    assert run("merge-reconstruct@2", inputs).status == "pass"


CASES_SEED_VERSIONS: list[tuple[str, dict[str, Any]]] = [
    ("structured-equal@2", {}),
    *(("fault-report@3", {"want": want}) for want in JUDGEMENTS),
    (
        "fault-report@3",
        {
            "want": "defect_detected",
            "assertion_failures": True,
            "expected_failures": {"none": 0, "missing-record": 4},
            "planned": 10,
        },
    ),
    ("trial-stats@3", {"k": 3, "claimed": {"pass_at_k": 0.8}}),
    ("trial-stats@3", {"k": 3, "claimed": {"pass_at_k": 0.8}, "fields": {"config": ""}}),
    (
        "trial-stats@3",
        {
            "k": 1,
            "claimed": {"tasks": 2},
            "fields": {"task": "task_id", "sample": "", "outcome": "passed", "config": ""},
        },
    ),
    (
        "trial-stats@3",
        {
            "k": 2,
            "claimed": {"pass_hat_k": 0.5},
            "fields": {"task": "task_id", "sample": "sample_index", "outcome": "result"},
            "first_sample": 0,
        },
    ),
    ("trial-stats@3", {"k": 1000, "claimed": {"environment_failures": 0}}),
    ("trial-stats@3", {"k": 2, "claimed": {"tasks_excluded": 0}}),
]


@pytest.mark.parametrize(("key", "params"), CASES_SEED_VERSIONS, ids=lambda v: str(v)[:50])
def test_counterexample_makes_the_checker_fail_with_its_own_reason_seed_versions(
    key: str, params: dict[str, Any]
) -> None:
    check = get(key)
    assert check.counterexample is not None
    inputs = check.counterexample(full_params(check, **params))
    assert inputs is not None, f"{key}: no counterexample for {params}"
    verdict = run(check, inputs, **params)
    assert verdict.status == "fail", verdict.message
    assert set(verdict.codes) <= set(check.reasons)
    assert vacuity(check, params) is None


def test_trial_stats_3_counterexample_contradicts_the_claim_not_the_config() -> None:
    # @2's counterexample fails only on two configurations, so with no config field it
    # had none; @3's contradicts a claimed figure, config or not
    params = {"k": 3, "claimed": {"pass_at_k": 0.8}, "fields": {"config": ""}}
    old = vacuity(get("trial-stats@2"), params)
    assert old is not None and old.codes == ("params.vacuous",)
    inputs = get("trial-stats@3").counterexample(full_params("trial-stats@3", **params))
    assert inputs is not None
    assert run("trial-stats@3", inputs, **params).codes == ("stats.mismatch",)


def test_a_claim_no_trial_set_can_contradict_is_refused_as_vacuous() -> None:
    # k = 1 with environment failures counted as failures: every task holds one counted
    # sample, so none is ever left out and "no task left out" shows nothing
    params = {"k": 1, "claimed": {"tasks_excluded": 0}, "environment_failures": "count_as_failure"}
    refused = vacuity(get("trial-stats@3"), params)
    assert refused is not None and refused.codes == ("params.vacuous",)
    assert vacuity(get("trial-stats@3"), {**params, "k": 2}) is None


@pytest.mark.parametrize("k", [0, 1001])
def test_trial_stats_3_k_outside_its_range_has_no_counterexample_and_is_invalid(k: int) -> None:
    params = {"k": k, "claimed": {"tasks": 1}}
    assert get("trial-stats@3").counterexample(full_params("trial-stats@3", **params)) is None
    assert run("trial-stats@3", {"trials": []}, **params).codes == ("params.invalid",)


FRACTIONS = [name for name, (count, _) in FIGURES_V2.items() if not count]
COUNTS = [name for name, (count, _) in FIGURES_V2.items() if count]


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    fractions=st.dictionaries(st.sampled_from(FRACTIONS), st.floats(0, 1, allow_nan=False)),
    counts=st.dictionaries(st.sampled_from(COUNTS), st.integers(0, 12)),
    tolerance=st.floats(0, 0.0499, allow_nan=False),
    k=st.integers(1, 4),
    rule=st.sampled_from(["exclude", "count_as_failure"]),
    config=st.sampled_from(["config", "", "cfg"]),
)
def test_trial_stats_3_counterexample_contradicts_any_claimed_fraction(
    fractions: dict[str, float],
    counts: dict[str, int],
    tolerance: float,
    k: int,
    rule: str,
    config: str,
) -> None:
    claimed = {**fractions, **counts}
    if not claimed:
        return
    params = {
        "k": k,
        "claimed": claimed,
        "tolerance": tolerance,
        "environment_failures": rule,
        "fields": {"config": config},
    }
    check = get("trial-stats@3")
    inputs = check.counterexample(full_params(check, **params))
    refused = vacuity(check, params)
    if inputs is None:
        # only a claim made of counts no small trial set moves can have none
        assert not fractions
        assert refused is not None and refused.codes == ("params.vacuous",)
        return
    verdict = run(check, inputs, **params)
    assert verdict.codes == ("stats.mismatch",), verdict.message
    # each stated figure must be able to fail on its own (issue 30 item 3): a claimed
    # fraction always can; a count no small trial set moves (tasks_excluded: 0 with
    # count_as_failure) makes the params vacuous, naming that count
    if refused is not None:
        assert refused.codes == ("params.vacuous",)
        assert any(f"claimed.{name}" in refused.message for name in counts), refused.message
