"""The report view: every fact a rendering shows, derived once from the JSON report.

``report_view`` is the one place a JSON report (``document.to_json``, ``rejection_json``,
or a stored report read by ``schema.read_report``) becomes what the renderers lay out: the
verdict line, the result in words, every count and denominator, the integrity, signature,
withheld and pre-registration texts, the "verify it" command, and per claim and per case
the words every format shows. A verification goes through its JSON report, so a stored
report renders exactly like a fresh one (one path). Every string from the report passes
through ``one_line`` first, so no renderer can forget to.

The renderers (``text``, ``terminal``, ``markdown``, ``html``, ``junit``) take a
``ReportView`` and only lay it out: none of them derives a fact of its own from the
report's data (``tests/project/test_report_view.py``), so no format can say more, or
less, than another. The words themselves are ``bundler.reports.common``'s.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

from bundler.reports import common


class Reason(NamedTuple):
    """A reason a checker gave: its stable code and its message."""

    code: str
    message: str


class Section(NamedTuple):
    """A section every format shows in the same words: its headline, then one item a line."""

    head: str
    lines: tuple[str, ...]


class CaseView(NamedTuple):
    """One case, as every format shows it."""

    id: str
    checker: str
    outcome: str  # reproduced, diverged, inconclusive, withheld
    verdict: str  # the checker's: pass, fail, error
    kind: str | None  # control or finding for a case expected to fail, else None
    expected: str  # ``fail [a, b]``: the expected verdict and reason codes
    observed: str  # ``fail [a, b]``: the verdict the checker gave here
    outcome_text: str  # the outcome in words that cannot be read as "correct"
    explanation: str
    message: str | None
    reasons: tuple[Reason, ...]  # every reason
    extra_reasons: tuple[Reason, ...]  # those ``outcome_text`` does not already say
    data: Mapping[str, Any]  # the case's report data (one line each), for a drawing


class ClaimView(NamedTuple):
    """One claim, as every format shows it."""

    id: str
    statement: str
    status: str
    why: str
    limits: tuple[str, ...]
    waiver: str | None  # why no negative control is needed, when the author waived one
    case_ids: tuple[str, ...]  # as the claim names them (a case may be named twice)
    cases: tuple[CaseView, ...]  # the cases it names that the report holds
    verdicts: str  # ``2 of 2 verdicts reproduced (...)``
    preregistration: str | None  # its pre-registration status, without one None
    preregistration_lines: tuple[str, ...]  # the pre-registration lines about it
    controls_text: str  # ``controls showed: ...`` (empty for a report before 1.3)
    controls_words: tuple[str, ...]  # the same, a sentence per check
    checked_by: str | None  # who checked it, said only when the bundle holds code
    not_accepted: tuple[str, ...]  # the advisories on its checks the verifier did not accept
    withheld: int  # how many of its cases read a withheld file (were not run here)
    inconclusive: Any
    negative_controls: Any


class BundleView(NamedTuple):
    name: str
    version: str
    title: str
    identity: str
    file: str
    format: str
    files: int
    bytes: int


class ReportView(NamedTuple):
    """A JSON report, every fact a format shows already derived (``report_view``)."""

    source: Mapping[str, Any]  # the report as given: what the JSON format writes
    result: str
    status_words: str  # ``every claim supported``
    exit_code: Any
    report_format: str
    rejected: bool  # nothing ran (exit 3 or 2): only the fields below up to ``problems``
    message: str = ""
    problems: tuple[Mapping[str, Any], ...] = ()
    result_words: str = ""  # ``supported, 1 finding``: the line ``ci`` prints per bundle
    verdict_line: str = ""  # the text's last line, all that ``verify -q`` prints
    bundle: BundleView | None = None
    build_environment: Mapping[str, Any] = {}
    verify_environment: Mapping[str, Any] = {}
    integrity: str = ""  # as the report states it
    integrity_words: str = ""  # how many files match, how many are withheld
    signature_summary: str | None = None  # None when the report has no signature field
    signature_notes: tuple[str, ...] = ()
    signature_text: str = ""  # the signer status, also from reports before 1.1
    warnings: tuple[str, ...] = ()
    bundled_code: Mapping[str, Any] | None = None
    cases: tuple[CaseView, ...] = ()
    shown: tuple[CaseView, ...] = ()  # every case when few, else those that need a look
    by_id: Mapping[str, CaseView] = {}
    findings: tuple[CaseView, ...] = ()
    claims: tuple[ClaimView, ...] = ()
    supported: int = 0  # how many claims are supported
    verdicts: str = ""  # every case's verdicts, counted
    preregistration_counts: str | None = None  # claims changed or not pre-registered
    preregistration: Section | None = None
    preregistration_notes: tuple[str, ...] = ()  # its lines about no one claim
    withheld: Section | None = None
    withheld_files: int = 0
    disclosed: bool = False
    not_accepted: tuple[str, ...] = ()  # advisories that make a claim inconclusive here
    verify_command: str = ""  # the command that checks the bundle
    verify_command_pinned: str = ""  # the same, pinned to the bundle's identity
    cannot_support: tuple[str, ...] = ()


def as_view(report: ReportView | Mapping[str, Any]) -> ReportView:
    """``report`` itself when it is a view, else its view: a renderer's entry takes either."""
    return report if isinstance(report, ReportView) else report_view(report)


def report_view(report: Mapping[str, Any]) -> ReportView:
    """The view of a JSON report (of a verification, or a rejection), built once."""
    source, report = report, common.one_line_all(report)
    result = str(report["result"])
    head = {
        "source": source,
        "result": result,
        "status_words": common.STATUS_WORDS[result],
        "exit_code": report.get("exit_code"),
        "report_format": report.get("report_format", ""),
        "result_words": common.result_words(report),
    }
    if common.is_rejection(report):
        return ReportView(
            **head,
            rejected=True,
            message=report.get("message", ""),
            problems=tuple(report.get("problems", [])),
        )
    cases = tuple(_case(c) for c in report["cases"])
    by_id = {c.id: c for c in cases}
    pre = common.preregistration_text(report)
    held = report.get("withheld")
    signature = report.get("signature") or {}
    claims = report["claims"]
    pre_lines = _by_claim(claims, pre)
    return ReportView(
        **head,
        rejected=False,
        verdict_line=common.verdict_line(report),
        bundle=_bundle(report.get("bundle", {})),
        build_environment=report.get("build_environment", {}),
        verify_environment=report.get("verify_environment", {}),
        integrity=report.get("integrity", ""),
        integrity_words=common.integrity_words(report),
        signature_summary=str(signature.get("summary")) if signature else None,
        signature_notes=tuple(signature.get("notes", [])),
        signature_text=common.signature_text(report),
        warnings=tuple(report.get("warnings", [])),
        bundled_code=report.get("bundled_code"),
        cases=cases,
        shown=_shown(cases),
        by_id=by_id,
        findings=tuple(c for c in cases if c.kind == "finding"),
        claims=tuple(_claim(report, c, by_id, pre_lines) for c in claims),
        supported=sum(1 for c in claims if c["status"] == "supported"),
        verdicts=common.verdicts_text(report["cases"]),
        preregistration_counts=common.preregistration_counts(report),
        preregistration=_section(pre),
        preregistration_notes=_preregistration_notes(report, pre),
        withheld=_section(common.withheld_text(report)),
        withheld_files=len(held["files"]) if held else 0,
        disclosed=bool(held and held["disclosed"]),
        not_accepted=tuple(common.not_accepted(claims)),
        verify_command=common.verify_command(report),
        verify_command_pinned=common.verify_command(report, expect_identity=True),
        cannot_support=tuple(report.get("cannot_support") or ()),
    )


def _section(text: tuple[str, list[str]] | None) -> Section | None:
    return Section(text[0], tuple(text[1])) if text else None


def _bundle(bundle: Mapping[str, Any]) -> BundleView:
    values: dict[str, Any] = {field: bundle.get(field) for field in BundleView._fields}
    return BundleView(**values)


def _reasons(reasons: Any) -> tuple[Reason, ...]:
    return tuple(Reason(r["code"], r["message"]) for r in reasons)


def _case(case: Mapping[str, Any]) -> CaseView:
    return CaseView(
        id=case["id"],
        checker=case.get("checker", ""),
        outcome=case["outcome"],
        verdict=case.get("verdict", ""),
        kind=common.case_kind(case),
        expected=common.expected_text(case) if "expect" in case else "",
        observed=common.observed_text(case),
        outcome_text=common.outcome_text(case),
        explanation=case.get("explanation", ""),
        message=case.get("message"),
        reasons=_reasons(case.get("reasons", [])),
        extra_reasons=_reasons(common.reasons_beyond_outcome(case)),
        data=case,
    )


def _claim(
    report: Mapping[str, Any],
    claim: Mapping[str, Any],
    by_id: Mapping[str, CaseView],
    pre_lines: Mapping[str, list[str]],
) -> ClaimView:
    mine = tuple(by_id[i] for i in claim["cases"] if i in by_id)
    return ClaimView(
        id=claim["id"],
        statement=claim["statement"],
        status=claim["status"],
        why=claim.get("why", ""),
        limits=tuple(claim.get("limits", [])),
        waiver=claim.get("negative_control_waiver") or None,
        case_ids=tuple(claim["cases"]),
        cases=mine,
        verdicts=common.verdicts_text([c.data for c in mine]),
        preregistration=common.preregistration_of(report, claim["id"]),
        preregistration_lines=tuple(pre_lines.get(claim["id"], ())),
        controls_text=common.controls_text(claim),
        controls_words=tuple(common.controls_words(claim)),
        checked_by=claim.get("checked_by") if report.get("bundled_code") else None,
        not_accepted=tuple(common.not_accepted([claim])),
        withheld=claim.get("withheld") or 0,
        inconclusive=claim.get("inconclusive"),
        negative_controls=claim.get("negative_controls"),
    )


def _preregistration_notes(
    report: Mapping[str, Any], pre: tuple[str, list[str]] | None
) -> tuple[str, ...]:
    """The pre-registration's lines about no claim it names (who signed it, its time, the
    scope, dropped claims)."""
    if not pre:
        return ()
    claims = tuple(f"{c}: " for c in report["preregistration"]["claims"])
    return tuple(line for line in pre[1] if not line.startswith(claims))


def _by_claim(
    claims: list[Mapping[str, Any]], pre: tuple[str, list[str]] | None
) -> dict[str, list[str]]:
    """The pre-registration lines of each claim (those starting ``ID: ``), found in one
    pass over the lines: each line is tried at each of its ``": "``, not against every
    claim."""
    ids = {c["id"] for c in claims}
    out: dict[str, list[str]] = {}
    for line in pre[1] if pre else []:
        at = line.find(": ")
        while at >= 0:
            if line[:at] in ids:
                out.setdefault(line[:at], []).append(line)
            at = line.find(": ", at + 1)
    return out


# Up to this many cases, every format lists every case; past it, those that need a look.
LIST_ALL_UP_TO = 50


def _shown(cases: tuple[CaseView, ...]) -> tuple[CaseView, ...]:
    """Every case when there are few; else the ones that need a look: not reproduced, or a
    finding (``--verbose`` lists every case: ``ReportView.cases``)."""
    if len(cases) <= LIST_ALL_UP_TO:
        return cases
    return tuple(c for c in cases if c.outcome != "reproduced" or c.kind == "finding")
