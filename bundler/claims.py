"""Outcomes -> claim statuses. Pure rules, no I/O.

A claim is ``supported`` only if every case reproduced *and* something shows its
checkers can fail (a negative control) or the author waived that with a reason.
``inconclusive`` never counts as support nor as contradiction, and every status
carries its denominators.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from .manifest import Claim, Manifest
from .runner import CaseResult

ClaimStatus = Literal["supported", "contradicted", "inconclusive"]


@dataclass(frozen=True)
class ClaimResult:
    claim: Claim
    status: ClaimStatus
    why: str
    total: int
    reproduced: int
    diverged: int
    inconclusive: int
    negative_controls: int
    waiver: str | None


def judge_claim(claim: Claim, results: Mapping[str, CaseResult]) -> ClaimResult:
    mine = [results[case_id] for case_id in claim.cases]
    counts = Counter(r.outcome for r in mine)
    controls = sum(1 for r in mine if r.case.is_negative_control)
    total = len(mine)
    tally = f"{counts['reproduced']} of {total} cases reproduced"
    if counts["diverged"]:
        diverged = ", ".join(r.case.id for r in mine if r.outcome == "diverged")
        status: ClaimStatus = "contradicted"
        why = f"{tally}; {counts['diverged']} diverged ({diverged})"
    elif counts["inconclusive"]:
        status = "inconclusive"
        pending = ", ".join(r.case.id for r in mine if r.outcome == "inconclusive")
        why = f"{tally}; {counts['inconclusive']} inconclusive ({pending})"
    elif total == 0:
        status, why = "inconclusive", "the claim names no case"
    elif controls == 0 and not claim.negative_control_waiver:
        status = "inconclusive"
        why = f"{tally}, but no negative control shows its checkers can fail, and no waiver"
    else:
        status = "supported"
        why = f"{tally}, {controls} of them negative control(s)"
        if controls == 0:
            why += f"; negative control waived: {claim.negative_control_waiver}"
    return ClaimResult(
        claim=claim,
        status=status,
        why=why,
        total=total,
        reproduced=counts["reproduced"],
        diverged=counts["diverged"],
        inconclusive=counts["inconclusive"],
        negative_controls=controls,
        waiver=claim.negative_control_waiver if controls == 0 else None,
    )


def judge_claims(manifest: Manifest, results: Sequence[CaseResult]) -> list[ClaimResult]:
    by_id = {r.case.id: r for r in results}
    return [judge_claim(claim, by_id) for claim in manifest.claims]


def overall(claims: Sequence[ClaimResult]) -> ClaimStatus:
    """The bundle's verdict: contradicted beats inconclusive beats supported. No claim
    at all is never "supported"."""
    statuses = {c.status for c in claims}
    if "contradicted" in statuses:
        return "contradicted"
    if "inconclusive" in statuses or not claims:
        return "inconclusive"
    return "supported"
