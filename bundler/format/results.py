"""What running a case gives, and the rules that judge it. Pure: no I/O.

A checker's answer counts only as a verdict that keeps the checker's promises
(``police``); a verdict counts only against the case's expectation (``judge``). The
runner (built-in checkers) and the bundled-code runner apply the same two rules, and
``bundler.format.claims`` turns the ``CaseResult`` they give into claim statuses.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from bundler.format.manifest import Case
from checkers import strictjson
from checkers.api import Reason, Verdict

# ``withheld``: not run, the case reads a file a redacted bundle left out (issue 45)
Outcome = Literal["reproduced", "diverged", "inconclusive", "withheld"]
STATUSES = ("pass", "fail", "error")


@dataclass(frozen=True)
class CaseResult:
    """One case re-run: its verdict, and whether that is the outcome it expects."""

    case: Case
    verdict: Verdict
    outcome: Outcome
    explanation: str


def police(
    key: str, verdict: Any, declared: Collection[str], details: Mapping[str, Any] | None = None
) -> Verdict:
    """``verdict`` if it keeps a checker's promises: a ``Verdict`` whose status is pass,
    fail or error, a fail with at least one reason, only ``declared`` reason codes, and
    details that are plain JSON data (finite numbers: every number in every report is
    JSON); otherwise a ``checker.bad_verdict`` error that says which promise it broke
    (with ``details`` attached, such as the bundled code's output). This is the one
    place results of built-in checkers and of bundled code enter a report."""
    why = None
    if not isinstance(verdict, Verdict):
        why = f"returned {type(verdict).__name__}, expected a verdict"
    elif verdict.status not in STATUSES:
        why = f"returned status {verdict.status!r}; expected pass, fail or error"
    elif verdict.status == "fail" and not verdict.reasons:
        why = "failed without a reason"
    else:
        undeclared = sorted({r.code for r in verdict.reasons} - set(declared))
        if undeclared:
            why = f"returned undeclared reason code(s) {undeclared}"
    if why is None:
        try:
            return Verdict(
                verdict.status,
                verdict.message,
                tuple(
                    Reason(r.code, r.message, strictjson.plain(r.details)) for r in verdict.reasons
                ),
                strictjson.plain(verdict.details),
            )
        except ValueError as exc:
            why = f"returned details that are not data: {exc}"
    return bad_verdict(key, why, details)


def bad_verdict(key: str, why: str, details: Mapping[str, Any] | None = None) -> Verdict:
    """The error verdict of a checker that broke its promises: ``KEY why``."""
    return Verdict.errored("checker.bad_verdict", f"{key} {why}", **dict(details or {}))


def judge(case: Case, verdict: Verdict) -> tuple[Outcome, str]:
    """Compare a verdict with the case's expectation."""
    observed = verdict.status + (f" {list(verdict.codes)}" if verdict.reasons else "")
    if verdict.status == "error":
        if set(verdict.codes) & {"code.not_allowed", "input.tampered"}:
            return "inconclusive", verdict.message  # already says why, in the report's words
        return "inconclusive", f"the checker could not decide: {verdict.message}"
    if case.expect == "pass":
        if verdict.status == "pass":
            return "reproduced", "passed as expected"
        return "diverged", f"expected pass, observed {observed}"
    if verdict.status == "pass":
        return "diverged", "expected fail, observed pass"
    if case.expect_reasons and set(case.expect_reasons) != set(verdict.codes):
        return "diverged", f"expected fail {sorted(case.expect_reasons)}, observed {observed}"
    return "reproduced", f"failed as expected {list(verdict.codes)}"
