"""Every checker version added for issue 19 declares a counterexample, and it works:
for the params of the example bundles and for defaults, the inputs it gives make the
checker fail with one of its own reason codes (not an error)."""

from __future__ import annotations

from typing import Any

import pytest
from v2_support import full_params, get, run

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
    from v2_support import run

    for key in ("merge-reconstruct", "call-args-schema"):
        old, new = get(f"{key}@1"), get(f"{key}@2")
        assert new.function is old.function
        assert [p.name for p in new.params] == [p.name for p in old.params]
        assert dict(new.reasons) == dict(old.reasons)
        assert all(r.reading.yaml_aliases for r in new.roles if r.kind.value == "data")
        assert not any(r.reading.yaml_aliases for r in old.roles)
    inputs = {"original": {"a": 1}, "request": {"a": 2}, "expected": {"a": 2}}
    assert run("merge-reconstruct@2", inputs).status == "pass"
