"""ADR 0005's rules on a checker and one case's params, beside ``Checker.bind``: a case
may not give one file to two roles its checker compares (``same_file``), and its params
must let the checker fail (``vacuity``: the counterexample fails it for one of its own
reasons, and for each statement the params make, a reason saying that statement is
wrong). Pure: the checker is called only through the ``call`` its caller gives (the
runner's, which polices what comes back), so verify, build and the claim rules apply
the same rules.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from .api import Bound, Checker, CheckerInputError, Verdict, failed_substantively

# A checker called with bound params on inputs: the verdict kept (policed), never raising
# for what the checker does wrong.
Call = Callable[[Bound, Mapping[str, Any]], Verdict]


def same_file(found: Checker, inputs: Mapping[str, Any]) -> str | None:
    """Why a case names one file (or folder) in two roles its checker compares with each
    other, or None. ``inputs`` maps role -> path or list of paths."""
    seen: dict[str, str] = {}
    for role in found.roles:
        ref = inputs.get(role.name)
        if not role.compared or ref is None:
            continue
        for path in dict.fromkeys([ref] if isinstance(ref, str) else list(ref)):
            key = path.rstrip("/")
            if key in seen:
                return (
                    f"{path!r} is given as both {seen[key]!r} and {role.name!r}, which "
                    f"{found.key} compares with each other: the file would be compared with "
                    "itself; give each role its own file"
                )
            seen[key] = role.name
    return None


_VACUITY_CACHE: dict[tuple[Call, str], Verdict | None] = {}


def vacuity(found: Checker, params: Mapping[str, Any], call: Call) -> Verdict | None:
    """None when the checker can fail under ``params`` (its counterexample makes it fail
    for one of its own reasons); otherwise the error verdict the case gets instead:
    ``params.vacuous``, or ``params.invalid`` when the params are wrong. Remembered per
    checker, params and ``call``, so 20,000 cases with the same params pay once."""
    from . import get

    if get(found.key) is not found:  # not the registered one: never remembered
        return _vacuity(found, params, call)
    # one text for equal params whatever their key order (as the reports' canonical JSON)
    key = (
        call,
        f"{found.key} {json.dumps(params, sort_keys=True, ensure_ascii=False, default=str)}",
    )
    if key in _VACUITY_CACHE:
        return _VACUITY_CACHE[key]
    if len(_VACUITY_CACHE) >= 4096:
        _VACUITY_CACHE.clear()
    result = _vacuity(found, params, call)
    _VACUITY_CACHE[key] = result
    return result


def _vacuous(found: Checker, why: str) -> Verdict:
    return Verdict.errored(
        "params.vacuous",
        f"{found.key} cannot fail under these params ({why}): a pass would show nothing; "
        "change the params so that some input fails the check",
    )


def _vacuity(found: Checker, params: Mapping[str, Any], call: Call) -> Verdict | None:
    """The params as given must admit a failing input; and every statement they make (a
    param with ``states``; each entry of a mapping on its own, the rest as given) must
    admit an input that fails with a reason saying that statement is wrong: a check that
    can fail on one claimed figure, or for a reason no figure causes, says nothing of the
    others."""
    bound = found.bind(params)
    refused = bound.refused or can_fail(bound, call)
    if refused is not None:
        return refused
    full = bound.params
    for param in found.params:
        value = full.get(param.name)
        if not param.states or value is None:
            continue
        if isinstance(value, Mapping) and len(value) > 1:
            parts = [
                (f"{param.name}.{k}", {**params, param.name: {k: v}}) for k, v in value.items()
            ]
        else:
            parts = [(param.name, dict(params))]
        for what, part in parts:
            refused = can_fail(found.bind(part), call, param.states, what)
            if refused is not None:
                return refused
    return None


def can_fail(
    bound: Bound, call: Call, codes: tuple[str, ...] = (), what: str = ""
) -> Verdict | None:
    """None when the counterexample of the bound params fails the checker for one of its
    own reasons (one of ``codes``, when given: the reasons that say ``what`` is wrong)."""
    found = bound.checker
    if found.counterexample is None:
        return _vacuous(found, "it declares no counterexample, so nothing shows it can fail")
    try:
        inputs = found.counterexample(bound.params)
    except CheckerInputError as exc:
        code = exc.code if exc.code in found.all_reasons else "params.invalid"
        return Verdict.errored(code, exc.message)
    except RecursionError:
        return _vacuous(found, "its params are nested too deeply to build a failing input")
    except Exception as exc:  # a bug in the counterexample is never a verdict
        return Verdict.errored(
            "checker.raised", f"{found.key}'s counterexample raised {type(exc).__name__}: {exc}"
        )
    about = f"{what}: " if what else ""
    if inputs is None:
        return _vacuous(found, f"{about}no input fails it")
    verdict = call(bound, inputs)
    if failed_substantively(verdict) and (not codes or set(codes) & set(verdict.codes)):
        return None
    # params that are wrong, or a pattern in them that is not run: said as such, not vacuous
    refused = {"params.invalid", "params.out_of_range", "pattern.not_rerun"}
    if verdict.status == "error" and refused & set(verdict.codes):
        return verdict
    observed = verdict.status + (f" {list(verdict.codes)}" if verdict.reasons else "")
    wanted = f"a failure with {' or '.join(codes)}" if codes else "a failure of the check"
    return _vacuous(found, f"{about}its counterexample gives {observed}, not {wanted}")
