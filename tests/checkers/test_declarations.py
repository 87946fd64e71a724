"""A checker's declaration is checked when ``@checker`` runs (when its module is imported),
not when a bundle first uses it: it must carry a counterexample (with a docstring, shown
in the reference) and example params it accepts; the codes a param ``states`` must be among
its declared reasons; its role names and param names must be unique."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

import checkers
from checkers.api import (
    Checker,
    InputKind,
    Param,
    Reason,
    Role,
    Verdict,
    checker,
    declaration_problems,
)


def _fails(inputs: Mapping[str, Any], params: Mapping[str, Any]) -> Verdict:
    """Fails when asked to."""
    if inputs.get("x"):
        return Verdict.failed("asked to", [Reason("demo.wrong", "asked to")])
    return Verdict.passed("fine")


def _asked_to_fail(params: Mapping[str, Any]) -> Mapping[str, Any]:
    """An input that asks it to fail."""
    return {"x": True}


ROLE = Role("x", InputKind.DATA, "anything")
REASONS = {"demo.wrong": "asked to fail"}


def declare(**changes: Any) -> Checker:
    """A small declaration, with ``changes`` to its keyword arguments (None drops one)."""
    arguments: dict[str, Any] = {
        "roles": [ROLE],
        "reasons": REASONS,
        "counterexample": _asked_to_fail,
        "example_params": [{}],
    }
    arguments.update(changes)
    return checker("demo", 1, **{k: v for k, v in arguments.items() if v is not None})(_fails)


def test_a_well_formed_declaration_is_accepted() -> None:
    found = declare(params=[Param("n", "a count", (int,), 1, at_least=1)])
    assert found.key == "demo@1" and found.example_params == ({},)
    assert declaration_problems(found) == []


def test_a_checker_without_a_counterexample_is_refused_when_declared() -> None:
    with pytest.raises(TypeError, match="counterexample"):
        declare(counterexample=None)  # the argument left out


def test_a_counterexample_of_none_is_refused_when_declared() -> None:
    with pytest.raises(ValueError, match="demo@1: declare counterexample="):
        checker("demo", 1, roles=[ROLE], reasons=REASONS, counterexample=None, example_params=[{}])(  # type: ignore[arg-type]
            _fails
        )


def test_a_counterexample_without_a_docstring_is_refused_when_declared() -> None:
    with pytest.raises(ValueError, match="its counterexample needs a docstring"):
        declare(counterexample=lambda params: {"x": True})


def test_a_checker_without_example_params_is_refused_when_declared() -> None:
    with pytest.raises(TypeError, match="example_params"):
        declare(example_params=None)
    with pytest.raises(ValueError, match="declare example_params="):
        declare(example_params=[])


def test_example_params_the_checker_refuses_are_refused_when_declared() -> None:
    with pytest.raises(ValueError, match=r"example params .* are refused: .*no param 'nope'"):
        declare(example_params=[{"nope": 1}])
    with pytest.raises(ValueError, match="outside its range"):
        declare(params=[Param("n", "a count", (int,), at_least=1)], example_params=[{"n": 0}])


def test_states_naming_an_undeclared_reason_are_refused_when_declared() -> None:
    claimed = Param("claimed", "a figure", (dict,), states=("demo.mismatch",))
    with pytest.raises(ValueError, match=r"param 'claimed' states demo.mismatch, not among"):
        declare(params=[claimed], example_params=[{"claimed": {}}])


def test_two_roles_of_one_name_are_refused_when_declared() -> None:
    with pytest.raises(ValueError, match="role names must be unique, observed x twice"):
        declare(roles=[ROLE, ROLE._replace(kind=InputKind.TEXT)])


def test_two_params_of_one_name_are_refused_when_declared() -> None:
    n = Param("n", "a count", (int,), 1, at_least=1)
    with pytest.raises(ValueError, match="param names must be unique, observed n twice"):
        declare(params=[n, n])


def test_every_registered_checker_passes_the_declaration_checks() -> None:
    # also the versions made from another with _replace (config_change's reading versions)
    problems = {k: declaration_problems(c) for k, c in checkers.registry().items()}
    assert {k: p for k, p in problems.items() if p} == {}
