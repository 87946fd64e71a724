"""Turn a verification into words (text for a terminal) and data (the JSON report).

The JSON report's layout is a format of its own (``REPORT_FORMAT``), documented in
``manifests/REPORT.md``; change it only by changing that version.
"""

from __future__ import annotations

from typing import Any

from .errors import BundlerError
from .runner import CaseResult
from .verify import Verification

REPORT_FORMAT = "reprobundle-report/1.1"  # 1.1: signature, bundled_code, checked_by

_MARK = {"reproduced": "ok", "diverged": "XX", "inconclusive": "??"}
_VERDICT_LINE = {
    "supported": "every claim supported",
    "contradicted": "a claim is contradicted",
    "inconclusive": "inconclusive: nothing contradicted, but something could not be checked here",
}


INDEPENDENT = "independently checked"
OWN_CODE = "checked by the bundle's own code"


def checked_by(checker: str) -> str:
    return OWN_CODE if checker.startswith("bundle:") else INDEPENDENT


def _claim_checked_by(verification: Verification, case_ids: tuple[str, ...]) -> str:
    wanted = set(case_ids)  # a set: claims of 40,000 cases stay linear
    kinds = {checked_by(r.case.checker) for r in verification.cases if r.case.id in wanted}
    return kinds.pop() if len(kinds) == 1 else f"partly {OWN_CODE}"


def _code_dict(verification: Verification) -> dict[str, Any] | None:
    code = verification.code
    if code is None:
        return None
    return {
        "allowed": code.allowed,
        "why": code.why,
        "entries": [{"checker": c, "entry": e, "sha256": h} for c, e, h in code.entries],
        "isolation": code.isolation,
        "workers_started": code.workers_started,
    }


def _case_dict(result: CaseResult) -> dict[str, Any]:
    case, verdict = result.case, result.verdict
    return {
        "id": case.id,
        "checker": case.checker,
        "checked_by": checked_by(case.checker),
        "expect": case.expect,
        "expect_reasons": list(case.expect_reasons),
        "verdict": verdict.status,
        "reasons": [
            {"code": r.code, "message": r.message, "details": r.details} for r in verdict.reasons
        ],
        "message": verdict.message,
        "details": verdict.details,
        "outcome": result.outcome,
        "explanation": result.explanation,
    }


def to_json(verification: Verification) -> dict[str, Any]:
    manifest = verification.extracted.manifest
    return {
        "report_format": REPORT_FORMAT,
        "result": verification.status,
        "exit_code": verification.exit_code,
        "bundle": {
            "file": verification.bundle_file.name,
            "name": manifest.name,
            "version": manifest.version,
            "title": manifest.title,
            "format": manifest.format,
            "identity": verification.extracted.identity,
            "files": len(manifest.files),
            "bytes": verification.extracted.total_bytes,
        },
        "integrity": "every listed file is present with the SHA-256 and size the manifest gives",
        "signature": verification.signature.to_dict(),
        "warnings": list(manifest.warnings),
        "build_environment": dict(manifest.environment),
        "verify_environment": verification.environment,
        "cases": [_case_dict(r) for r in verification.cases],
        "claims": [
            {
                "id": c.claim.id,
                "statement": c.claim.statement,
                "status": c.status,
                "why": c.why,
                "cases": list(c.claim.cases),
                "total": c.total,
                "reproduced": c.reproduced,
                "diverged": c.diverged,
                "inconclusive": c.inconclusive,
                "negative_controls": c.negative_controls,
                "negative_control_waiver": c.waiver,
                "limits": list(c.claim.limits),
                "checked_by": _claim_checked_by(verification, c.claim.cases),
            }
            for c in verification.claims
        ],
        "cannot_support": list(manifest.cannot_support),
        "workdir": str(verification.workdir) if verification.workdir else None,
    } | ({"bundled_code": _code_dict(verification)} if verification.code else {})


def rejection_json(error: BundlerError, exit_code: int) -> dict[str, Any]:
    return {
        "report_format": REPORT_FORMAT,
        "result": "rejected" if exit_code == 3 else "error",
        "exit_code": exit_code,
        "message": error.headline,
        "problems": [
            {"where": p.where, "code": p.code, "message": p.message} for p in error.problems
        ],
    }


def to_text(verification: Verification, verbose: bool = False) -> str:
    manifest = verification.extracted.manifest
    env = manifest.environment
    out: list[str] = []
    out.append(f"Bundle   {manifest.name} {manifest.version}: {manifest.title}")
    out.append(f"Identity sha256:{verification.extracted.identity}")
    out.append(
        f"Built    with {env.get('tool')} on Python {env.get('python')} ({env.get('platform')})"
    )
    out.append(
        f"Integrity: all {len(manifest.files)} files ({verification.extracted.total_bytes} bytes) "
        "match the manifest's SHA-256 and sizes"
    )
    out.append(f"Signature: {verification.signature.describe()}")
    for note in verification.signature.notes:
        out.append(f"  note: {note}")
    for warning in manifest.warnings:
        out.append(f"warning: {warning}")
    if verification.code is not None:
        code = verification.code
        out.append(f"Bundled code: {code.why}")
        for checker, entry, digest in code.entries:
            verb = "ran" if code.allowed else "would run"
            out.append(f"  {verb} {checker} = {entry} (sha256:{digest})")
        if code.allowed:
            iso = code.isolation
            out.append(
                "  in separate processes: python -I, scrubbed environment, fresh folders, "
                f"{iso['timeout_seconds']:g} s, {iso['memory_bytes']} bytes of memory, "
                f"network namespace {'yes' if iso['network_namespace'] else 'NO'}, "
                f"PID namespace {'yes' if iso['pid_namespace'] else 'NO'}, "
                f"file-system jail {'yes' if iso.get('file_system_jail') else 'NO'}, "
                f"at most {iso.get('processes')} processes"
            )

    counts = {k: sum(1 for r in verification.cases if r.outcome == k) for k in _MARK}
    out.append("")
    out.append(
        f"Cases: {counts['reproduced']} of {len(verification.cases)} reproduced, "
        f"{counts['diverged']} diverged, {counts['inconclusive']} inconclusive"
    )
    width = max((len(r.case.id) for r in verification.cases), default=4)
    for result in verification.cases:
        if verbose or result.outcome != "reproduced":
            out.append(
                f"  [{_MARK[result.outcome]}] {result.case.id:<{width}}  {result.case.checker:<24} "
                f"{result.outcome}: {result.explanation}"
            )
            if verbose or result.outcome == "diverged":
                for reason in result.verdict.reasons[:10]:
                    out.append(f"         {reason.code}: {reason.message}")

    out.append("")
    out.append("Claims")
    id_width = max([5, *(len(c.claim.id) for c in verification.claims)])
    out.append(f"  {'STATUS':<13} {'CLAIM':<{id_width}}  CASES")
    for claim in verification.claims:
        denominators = f"{claim.reproduced}/{claim.total} reproduced"
        if claim.inconclusive:
            denominators += f", {claim.inconclusive} inconclusive"
        if claim.diverged:
            denominators += f", {claim.diverged} diverged"
        out.append(f"  {claim.status:<13} {claim.claim.id:<{id_width}}  {denominators}")
        out.append(f"      {claim.claim.statement}")
        if verification.code is not None:
            out.append(f"      {_claim_checked_by(verification, claim.claim.cases)}")
        out.append(f"      why: {claim.why}")
        for limit in claim.claim.limits:
            out.append(f"      limit: {limit}")
        if claim.waiver:
            out.append(f"      negative control waived: {claim.waiver}")

    out.append("")
    out.append("What this bundle cannot support")
    for item in manifest.cannot_support:
        out.append(f"  - {item}")
    if not manifest.cannot_support:
        out.append("  - (the bundle states nothing here)")
    out.append(
        "  - Re-running checkers on stored inputs is not re-running what produced those inputs."
    )
    out.append("")
    supported = sum(1 for c in verification.claims if c.status == "supported")
    out.append(
        verdict_line(verification)
        + f" ({supported} of {len(verification.claims)} claims supported)"
    )
    return "\n".join(out)


def verdict_line(verification: Verification) -> str:
    return f"Result: {_VERDICT_LINE[verification.status]}"
