"""Outcomes -> claim statuses. Pure rules, no I/O.

A claim is ``supported`` only if every case reproduced *and* every check it relies on
has been shown able to fail: for each (checker, params) its passing cases use, one of
its negative controls runs the same checker (same name and version) with the same
params (defaults filled in) and fails for one of that checker's own reasons, not for an
input, param or checker error (``checkers.api.COMMON_ERRORS``); or the claim carries a
``negative_control_waiver``, which the report prints with the pairs it waives. A
control of another check, or one that failed on a parse error, shows nothing about
this one. A control counts only when it names its ``expect_reasons`` (what it shows) and
runs the check of one of the claim's passing cases; the report lists, per claim, the
reasons its counted controls showed. A claim must claim something: one with no passing
case and no finding (only planted controls) is ``inconclusive``, whatever its manifest's
format says. ``inconclusive`` never counts as support nor as contradiction, and every
status carries its denominators.

A passing case whose checker version has an advisory (``bundler.format.advisories``: an author
can make that version pass against its evidence) never counts toward ``supported``: the
claim is ``inconclusive``, its ``why`` naming the advisory and the version that fixes it,
unless the reviewer accepted that advisory by id (``accepted``); then it is judged as
before and the claim records the advisory as accepted. An advisory describes a false
pass, so a case expected to fail (a control or a finding) is not affected by it.
A contradicted claim stays contradicted: the advisory only withholds support.
A case not run because it reads a withheld file (outcome ``withheld``) makes its claim
inconclusive, naming the files.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, NamedTuple

import checkers
from bundler.errors import UsageError
from bundler.format.advisories import Advisory, by_id, of_checker
from bundler.format.manifest import BUNDLED_PREFIX, Case, Claim, Manifest
from bundler.format.results import CaseResult
from checkers import strictjson
from checkers.api import COMMON_ERRORS

ClaimStatus = Literal["supported", "contradicted", "inconclusive"]


@dataclass(frozen=True)
class ClaimResult:
    """One claim judged from its cases' results, with its denominators."""

    claim: Claim
    status: ClaimStatus
    why: str
    total: int
    reproduced: int
    diverged: int
    inconclusive: int
    negative_controls: int
    waiver: str | None
    # (checker, params as canonical JSON) of passing cases that no control of the
    # claim exercises; a waiver covers them, or the claim is not supported
    uncontrolled: tuple[str, ...] = ()
    # per check of a passing case, the reasons its counted controls showed
    controls_showed: tuple[ControlsShowed, ...] = ()
    # the advisories its passing cases' checker versions have, accepted or not
    advisories: tuple[AdvisoryUse, ...] = ()
    withheld: int = 0  # cases not run: they read files a redacted bundle withholds


class AdvisoryUse(NamedTuple):
    """An advisory on the checker version some passing cases of a claim use."""

    advisory: Advisory
    checker: str
    cases: tuple[str, ...]
    accepted: bool


def advisories_of(cases: Sequence[Case], accepted: Collection[str] = ()) -> tuple[AdvisoryUse, ...]:
    """The advisories on the checker versions of ``cases`` that say something about the
    subject (``claims_something``): those expected to pass, and findings. A finding rests
    on its checker's ``fail`` as a passing case rests on its ``pass``, and an advised
    version can be wrong either way (``inspect-counts@2`` fails every unfinished run);
    only a planted control is left out, since it shows that a check can fail and
    supports nothing by itself."""
    found: dict[tuple[str, str], list[str]] = {}
    by_key: dict[tuple[str, str], Advisory] = {}
    for case in cases:
        planted = case.is_negative_control and not case.is_finding
        if planted or case.checker.startswith(BUNDLED_PREFIX):
            continue
        for advisory in of_checker(case.checker):
            found.setdefault((advisory.id, case.checker), []).append(case.id)
            by_key[advisory.id, case.checker] = advisory
    return tuple(
        AdvisoryUse(by_key[key], key[1], tuple(ids), key[0] in accepted)
        for key, ids in sorted(found.items())
    )


def advisory_dicts(uses: Sequence[AdvisoryUse]) -> list[dict[str, Any]]:
    """Advisory uses as reports, the archive and ``diff`` write them."""
    return [
        {
            "id": u.advisory.id,
            "checker": u.checker,
            "summary": u.advisory.summary,
            "fixed_in": list(u.advisory.fixed_in),
            "cases": list(u.cases),
            "accepted": u.accepted,
        }
        for u in uses
    ]


def accepted_advisories(ids: Sequence[str]) -> tuple[str, ...]:
    """The advisory ids a reviewer accepts (``--accept-advisory``), each a published one:
    an id that names none is a usage error (a typo must not pass for an acceptance)."""
    if not ids:
        return ()  # (every advisory file is parsed only to check given ids)
    known = by_id()
    unknown = [i for i in ids if i not in known]
    if unknown:
        raise UsageError(
            f"--accept-advisory {', '.join(unknown)}: no such advisory (known: "
            f"{', '.join(known) or 'none'}; `reprobundle checkers --advisories` lists them)"
        )
    return tuple(dict.fromkeys(ids))


def advised_why(uses: Sequence[AdvisoryUse]) -> str:
    """Why a claim resting on advised checker versions is not supported, with the fix."""
    parts = [
        f"{u.checker} has advisory {u.advisory.id} ({u.advisory.summary}; fixed in "
        f"{u.advisory.fix}), used by {', '.join(u.cases)}"
        for u in uses
    ]
    flags = " ".join(f"--accept-advisory {i}" for i in dict.fromkeys(u.advisory.id for u in uses))
    return (
        f"not counted as support: {'; '.join(parts)}. Rebuild with the fixed version, or "
        f"give {flags} to judge it as before"
    )


class ControlsShowed(NamedTuple):
    """What the counted controls of one check showed: the reason codes they failed with."""

    check: str
    reasons: tuple[str, ...]
    cases: tuple[str, ...]


def effective_params(case: Case) -> dict[str, Any]:
    """The params a case's checker is called with: a built-in's defaults filled in, so
    ``{}`` and the defaults written out are the same check."""
    found = None if case.checker.startswith(BUNDLED_PREFIX) else checkers.get(case.checker)
    return dict(found.bind(case.params).params) if found else dict(case.params)


def check_of(case: Case) -> str:
    """``checker params`` as one line: what a control must repeat exactly."""
    params = strictjson.canonical(effective_params(case))
    return f"{case.checker} {params}"


def substantive_reasons(case: Case, manifest: Manifest | None) -> frozenset[str]:
    """The reason codes of a case's checker that say the check itself failed."""
    if case.checker.startswith(BUNDLED_PREFIX):
        code = manifest.bundled(case.checker) if manifest else None
        declared: Mapping[str, str] = code.reasons if code else {}
    else:
        found = checkers.get(case.checker)
        declared = found.reasons if found else {}
    return frozenset(declared) - frozenset(COMMON_ERRORS)


def counts_as_control(result: CaseResult, manifest: Manifest | None) -> bool:
    """A reproduced expected failure that names its ``expect_reasons`` and whose verdict
    names one of its checker's substantive reasons: it shows its check can fail, and
    says for what. One that names no reasons shows a failure nobody said to expect."""
    return (
        result.case.is_negative_control
        and bool(result.case.expect_reasons)
        and result.outcome == "reproduced"
        and result.verdict.status == "fail"
        and bool(set(result.verdict.codes) & substantive_reasons(result.case, manifest))
    )


def controlled_checks(results: Sequence[CaseResult], manifest: Manifest | None) -> set[str]:
    """The checks shown able to fail by these results (``counts_as_control``)."""
    return {check_of(r.case) for r in results if counts_as_control(r, manifest)}


def claims_something(cases: Sequence[Case]) -> bool:
    """A passing case or a finding says something about the subject; planted controls
    only show that a checker can fail."""
    return any(not c.is_negative_control or c.is_finding for c in cases)


def _showed(
    results: Sequence[CaseResult], needed: Sequence[str], manifest: Manifest | None
) -> tuple[ControlsShowed, ...]:
    shown = []
    for check in needed:
        mine = [r for r in results if check_of(r.case) == check and counts_as_control(r, manifest)]
        if mine:
            reasons = sorted({code for r in mine for code in r.verdict.codes})
            shown.append(ControlsShowed(check, tuple(reasons), tuple(r.case.id for r in mine)))
    return tuple(shown)


def judge_claim(
    claim: Claim,
    results: Mapping[str, CaseResult],
    manifest: Manifest | None = None,
    accepted: Collection[str] = (),
) -> ClaimResult:
    """One claim's status from its cases' results (see the module's rules); ``accepted``
    names the advisories the reviewer accepted."""
    mine = [results[case_id] for case_id in claim.cases]
    advised = advisories_of([r.case for r in mine], accepted)
    withheld = [u for u in advised if not u.accepted]
    counts = Counter(r.outcome for r in mine)
    controls = sum(1 for r in mine if r.case.is_negative_control)
    total = len(mine)
    needed = list(dict.fromkeys(check_of(r.case) for r in mine if not r.case.is_negative_control))
    shown = controlled_checks(mine, manifest)
    uncontrolled = tuple(check for check in needed if check not in shown)
    waiver = claim.negative_control_waiver if uncontrolled else None
    tally = f"{counts['reproduced']} of {total} cases reproduced"
    if counts["diverged"]:
        diverged = ", ".join(r.case.id for r in mine if r.outcome == "diverged")
        status: ClaimStatus = "contradicted"
        why = f"{tally}; {counts['diverged']} diverged ({diverged})"
    elif counts["withheld"]:
        status = "inconclusive"
        held = [r for r in mine if r.outcome == "withheld"]
        files = sorted({p for r in held for p in r.verdict.details.get("withheld", ())})
        why = (
            f"{tally}; {len(held)} not run: they read withheld file(s) "
            f"({', '.join(r.case.id for r in held)}: {', '.join(files)})"
        )
        if counts["inconclusive"]:
            pending = ", ".join(r.case.id for r in mine if r.outcome == "inconclusive")
            why += f"; {counts['inconclusive']} inconclusive ({pending})"
    elif counts["inconclusive"]:
        status = "inconclusive"
        pending = ", ".join(r.case.id for r in mine if r.outcome == "inconclusive")
        why = f"{tally}; {counts['inconclusive']} inconclusive ({pending})"
    elif total == 0:
        status, why = "inconclusive", "the claim names no case"
    elif not claims_something([r.case for r in mine]):
        status = "inconclusive"
        why = (
            f"{tally}, but every one is a planted control: they show that a checker can "
            "fail on a planted input and nothing about the subject (a claim needs a passing "
            "case or a finding)"
        )
    elif uncontrolled and not claim.negative_control_waiver:
        status = "inconclusive"
        unnamed = [
            r.case.id
            for r in mine
            if r.case.is_negative_control
            and not r.case.expect_reasons
            and check_of(r.case) in uncontrolled
        ]
        why = (
            f"{tally}, but no negative control of this claim shows that "
            f"{'; '.join(uncontrolled)} can fail (a control must run the same checker with "
            "the same params and fail for one of its own reasons), and no waiver"
        )
        if unnamed:
            why += (
                f"; {', '.join(unnamed)} name(s) no expect_reasons, so what they show is "
                "not said and they do not count"
            )
    else:
        status = "supported"
        why = f"{tally}, {controls} of them negative control(s)"
        if uncontrolled:
            why += f"; negative control waived for {'; '.join(uncontrolled)}: {waiver}"
    if withheld and status != "contradicted":
        status, why = "inconclusive", f"{advised_why(withheld)} ({why})"
    elif advised and status != "contradicted":
        taken = ", ".join(dict.fromkeys(u.advisory.id for u in advised))
        why += f"; advisory {taken} accepted by the reviewer"
    return ClaimResult(
        claim=claim,
        status=status,
        why=why,
        total=total,
        reproduced=counts["reproduced"],
        diverged=counts["diverged"],
        inconclusive=counts["inconclusive"],
        negative_controls=controls,
        waiver=waiver,
        uncontrolled=uncontrolled,
        controls_showed=_showed(mine, needed, manifest),
        advisories=advised,
        withheld=counts["withheld"],
    )


def judge_claims(
    manifest: Manifest, results: Sequence[CaseResult], accepted: Collection[str] = ()
) -> list[ClaimResult]:
    by_id = {r.case.id: r for r in results}
    return [judge_claim(claim, by_id, manifest, accepted) for claim in manifest.claims]


def overall(claims: Sequence[ClaimResult]) -> ClaimStatus:
    """The bundle's verdict: contradicted beats inconclusive beats supported. No claim
    at all is never "supported"."""
    statuses = {c.status for c in claims}
    if "contradicted" in statuses:
        return "contradicted"
    if "inconclusive" in statuses or not claims:
        return "inconclusive"
    return "supported"
