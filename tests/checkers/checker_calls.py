"""Calling a checker the way the runner does, for the tests of the ``@2`` versions."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import checkers
from bundler.run.runner import run_checker
from checkers.api import Checker, CheckerInputError, Verdict


def get(key: str) -> Checker:
    found = checkers.get(key)
    assert found is not None, key
    return found


def run(check: Checker | str, inputs: Mapping[str, Any], **params: Any) -> Verdict:
    """Defaults filled, input errors turned into ``error`` verdicts, codes and details
    held to the contract (declared codes, plain JSON without NaN)."""
    check = get(check) if isinstance(check, str) else check
    unknown = set(params) - {p.name for p in check.params}
    assert not unknown, f"test passes undeclared params {unknown}"
    full = full_params(check, **params)
    try:
        verdict = check.function(inputs, full)
    except CheckerInputError as exc:
        assert exc.code in check.all_reasons, exc.code
        return Verdict.errored(exc.code, exc.message)
    for reason in verdict.reasons:
        assert reason.code in check.reasons, f"undeclared code {reason.code}"
        json.dumps(dict(reason.details), allow_nan=False)
    json.dumps(dict(verdict.details), allow_nan=False)
    return verdict


def full_params(check: Checker | str, **params: Any) -> dict[str, Any]:
    check = get(check) if isinstance(check, str) else check
    out = {p.name: p.default for p in check.params if not p.required}
    out.update(params)
    return out


def on_counterexample(key: str, params: dict[str, Any]) -> tuple[Checker, Verdict]:
    """The checker ``key`` and its verdict on its own counterexample for ``params``, run
    as the runner runs it (defaults filled for the counterexample, the params as given)."""
    found = get(key)
    assert found.counterexample is not None
    inputs = found.counterexample(full_params(found, **params))
    assert inputs is not None
    return found, run_checker(found, inputs, params)
