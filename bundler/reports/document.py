"""Turn a verification into data: the JSON report, from which every format is rendered
through its view (``bundler.reports.view``: ``bundler.reports.formats``,
``bundler.reports.text``, ``bundler.reports.terminal``).

The JSON report's layout is a format of its own (``REPORT_FORMAT``), documented in
``manifests/REPORT.md``; change it only by changing that version.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from bundler.codes import EXIT_CODES
from bundler.errors import BundlerError
from bundler.format.claims import advisory_dicts
from bundler.format.results import CaseResult
from bundler.reports.common import verdicts_text

if TYPE_CHECKING:  # only its fields are read: reports import nothing that runs cases
    from bundler.run.verify import Verification

# 1.1: signature, bundled_code, checked_by. 1.2: a case's kind, a claim's verdicts and
# findings, the checkers and libraries of verify_environment.
REPORT_FORMAT = "reprobundle-report/1.4"

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
        "kind": case.kind,
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
    cases = {r.case.id: _case_dict(r) for r in verification.cases}
    report: dict[str, Any] = {
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
        "integrity": _integrity(verification),
        "signature": verification.signature.to_dict(),
        "warnings": list(manifest.warnings),
        "build_environment": dict(manifest.environment),
        "verify_environment": verification.environment,
        "cases": list(cases.values()),
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
                "uncontrolled_checks": list(c.uncontrolled),
                "controls_showed": [
                    {"check": s.check, "reasons": list(s.reasons), "cases": list(s.cases)}
                    for s in c.controls_showed
                ],
                "advisories": advisory_dicts(c.advisories),
                "limits": list(c.claim.limits),
                "checked_by": _claim_checked_by(verification, c.claim.cases),
                "verdicts": verdicts_text([cases[i] for i in c.claim.cases]),
                "findings": [i for i in c.claim.cases if cases[i]["kind"] == "finding"],
            }
            for c in verification.claims
        ],
        "cannot_support": list(manifest.cannot_support),
        "accepted_advisories": list(verification.accepted_advisories),
        "workdir": str(verification.workdir) if verification.workdir else None,
    }
    if verification.code:
        report["bundled_code"] = _code_dict(verification)
    if verification.preregistration:
        report["preregistration"] = _preregistration_dict(verification)
    if verification.extracted.withheld is not None:
        report["withheld"] = _withheld_dict(verification)
    for claim, result in zip(report["claims"], verification.claims, strict=True):
        if result.withheld:
            claim["withheld"] = result.withheld
    return report


INTEGRITY = "every listed file is present with the SHA-256 and size the manifest gives"


def _integrity(verification: Verification) -> str:
    record = verification.extracted.withheld
    if record is None:
        return INTEGRITY
    signed = " (signed)" if verification.extracted.signatures else ""
    if verification.disclosed:
        return (
            f"every listed file matches the SHA-256 and size the manifest{signed} gives: "
            f"{len(record.files)} withheld file(s) were disclosed and checked, the rest are "
            "in the bundle"
        )
    return (
        f"every listed file is present with the SHA-256 and size the manifest gives, except "
        f"{len(record.files)} withheld file(s), whose SHA-256 and size the manifest{signed} "
        "binds; the cases that read them were not run"
    )


def _withheld_dict(verification: Verification) -> dict[str, Any]:
    """A redacted bundle's withheld files, whether they were disclosed, and the cases and
    claims they kept from being checked here."""
    record = verification.extracted.withheld
    assert record is not None
    return {
        "disclosed": bool(verification.disclosed),
        "files": [f.to_dict() for f in record.files],
        "cases": [r.case.id for r in verification.cases if r.outcome == "withheld"],
        "claims": [c.claim.id for c in verification.claims if c.withheld],
    }


UNVERIFIED = "matches a pre-registration no trusted key signed"


def _preregistration_dict(verification: Verification) -> dict[str, Any]:
    """Per claim: as pre-registered, changed after pre-registration (what changed), or not
    pre-registered. A claim is "as pre-registered" only against a pre-registration a
    trusted key signed; against an unsigned or untrusted one it "matches" it, said so."""
    from bundler.format.preregistration import FILE_NAME, fixed_files, time_warnings
    from bundler.reports.diff import AS_PREREGISTERED, NOT_PREREGISTERED, against_preregistration

    check = verification.preregistration
    assert check is not None
    manifest = verification.extracted.manifest
    out: dict[str, Any] = {"file": FILE_NAME}
    if check.found is None:
        code, message = check.problem or ("preregistration.format", "unreadable")
        return out | {
            "refused": {"code": code, "message": message},
            "claims": {c.id: {"status": NOT_PREREGISTERED, "changes": []} for c in manifest.claims},
            "dropped": [],
        }
    found = check.found
    if check.trusted_signers:
        trust = f"signed by a trusted key ({', '.join(check.trusted_signers)})"
    elif check.not_counting:
        trust = f"signed by a trusted key that does not count now ({'; '.join(check.not_counting)})"
    elif found.signatures:
        trust = "signed, but by no key you trust"
    else:
        trust = "unsigned"
    compared = against_preregistration(found.view, manifest, fixed_files(found.doc))
    epoch = manifest.environment.get("source_date_epoch")
    warnings = (
        time_warnings(found.doc.get("written"), check.at, epoch if type(epoch) is int else 0)
        if check.at is not None
        else []
    )
    if not check.trusted_signers:
        for item in [*compared["claims"].values(), *compared.get("fixed", ())]:
            if item["status"] == AS_PREREGISTERED:
                item["status"] = UNVERIFIED
    return out | {
        "identity": found.identity,
        "written": found.doc.get("written"),  # by its author's clock: stated, not attested
        "name": found.view.name,
        "version": found.view.version,
        "trust": trust,
        "trusted": bool(check.trusted_signers),
        "refused": None,
        **compared,
        "warnings": warnings,
    }


def rejection_json(error: BundlerError, exit_code: int) -> dict[str, Any]:
    return {
        "report_format": REPORT_FORMAT,
        "result": "rejected" if exit_code == EXIT_CODES["rejected"] else "error",
        "exit_code": exit_code,
        "message": error.headline,
        "problems": [
            {"where": p.where, "code": p.code, "message": p.message} for p in error.problems
        ],
    }
