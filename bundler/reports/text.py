"""The verification as plain text (``verify`` when its output is not a terminal).

Laid out from the report view (``bundler.reports.view``), like every other format, and
wrapped at ``width`` columns (long words such as hashes are never split), so a statement
of a few hundred characters reads as a paragraph, not as one line; ``width`` 0 wraps
nothing.
"""

from __future__ import annotations

import textwrap
from collections.abc import Mapping
from typing import Any

from bundler.reports.common import KIND_WORDS, PREREGISTRATION_TITLE, WHAT_IT_SHOWS, WITHHELD_TITLE
from bundler.reports.view import CaseView, ClaimView, ReportView, as_view

MARK = {"reproduced": "ok", "diverged": "XX", "inconclusive": "??", "withheld": "--"}


def _wrap(text: str, width: int, indent: str, hang: str | None = None) -> list[str]:
    if width <= 0:  # no width known (piped): one line each, for grep and friends
        return [indent + text]
    return textwrap.wrap(
        text,
        width=max(width, 40),
        initial_indent=indent,
        subsequent_indent=hang if hang is not None else indent,
        break_long_words=False,
        break_on_hyphens=False,
    ) or [indent.rstrip()]


def expected_label(case: CaseView) -> str:
    """The expected verdict, and for a case expected to fail what kind it is:
    ``pass``, ``fail (control)``, ``fail (FINDING)``."""
    kind = case.kind
    return "pass" if kind is None else f"fail ({'FINDING' if kind == 'finding' else kind})"


def to_text(report: ReportView | Mapping[str, Any], verbose: bool = False, width: int = 0) -> str:
    """The view laid out as text (a JSON report is made into its view first). Every string
    of the report (most come from the bundle) has passed through ``one_line``, so none can
    start a line of its own and pass for a verdict or signature line."""
    view = as_view(report)
    out = _bundle_lines(view, width)
    out += ["", *_case_lines(view, verbose, width)]
    if view.findings:
        out += ["", *_finding_lines(view.findings, width)]
    out += ["", *_claim_lines(view, width)]
    for title, section in (
        (WITHHELD_TITLE, view.withheld),
        (PREREGISTRATION_TITLE, view.preregistration),
    ):
        if section:
            out += ["", title, *_wrap(section.head, width, "  ", "  ")]
            for line in section.lines:
                out += _wrap(line, width, "  - ", "    ")
    out += ["", *_scope_lines(view, width)]
    out += ["", *_wrap(view.verdict_line, width, "", "  ")]
    return "\n".join(out)


def _bundle_lines(view: ReportView, width: int) -> list[str]:
    """Which bundle, built where, its integrity, signature, warnings and bundled code."""
    bundle, env = view.bundle, view.build_environment
    assert bundle is not None
    head = "         "
    out = [
        *_wrap(f"Bundle   {bundle.name} {bundle.version}: {bundle.title}", width, "", head),
        f"Identity sha256:{bundle.identity}",
        *_wrap(
            f"Built    with {env.get('tool')} on Python {env.get('python')} "
            f"({env.get('platform')})",
            width,
            "",
            head,
        ),
        *_wrap(f"Integrity: {view.integrity_words}", width, "", "  "),
    ]
    if view.signature_summary is not None:
        out += _wrap(f"Signature: {view.signature_summary}", width, "", "  ")
        out += [
            line
            for note in view.signature_notes
            for line in _wrap(f"note: {note}", width, "  ", "    ")
        ]
    out += [line for w in view.warnings for line in _wrap(f"warning: {w}", width, "", "  ")]
    code = view.bundled_code
    return out + (_code_lines(code, width) if code else [])


def _code_lines(code: Mapping[str, Any], width: int) -> list[str]:
    out = [f"Bundled code: {code['why']}"]
    verb = "ran" if code["allowed"] else "would run"
    out += [
        f"  {verb} {e['checker']} = {e['entry']} (sha256:{e['sha256']})" for e in code["entries"]
    ]
    if code["allowed"]:
        iso = code["isolation"]
        out += _wrap(
            "in separate processes: python -I, scrubbed environment, fresh folders, "
            f"{iso['timeout_seconds']:g} s, {iso['memory_bytes']} bytes of memory, "
            f"network namespace {'yes' if iso['network_namespace'] else 'NO'}, "
            f"PID namespace {'yes' if iso['pid_namespace'] else 'NO'}, "
            f"file-system jail {'yes' if iso.get('file_system_jail') else 'NO'}, "
            f"at most {iso.get('processes')} processes; not a sandbox",
            width,
            "  ",
            "    ",
        )
    return out


def _case_lines(view: ReportView, verbose: bool, width: int) -> list[str]:
    """The cases line, then a row per case shown, with what needs a look under it."""
    cases = view.cases
    shown = cases if verbose else view.shown
    out = _wrap(f"Cases: {view.verdicts}", width, "", "  ")
    # piped with no width: a column as wide as the longest id (one line per case, for grep);
    # wrapped at a width: at most 28, a longer id on a line of its own (issue 43, friction 10)
    longest = max([4, *(len(c.id) for c in shown)])
    id_width = longest if width <= 0 else min(28, longest)
    if shown:
        header = f"       {'outcome':<12} {'case':<{id_width}}  {'expected':<14} observed"
        out += _wrap(header, width, "", "           ")
    for case in shown:
        row = f"  [{MARK[case.outcome]}] {case.outcome:<12} "
        if len(case.id) > id_width:  # on a line of its own: the columns stay in line
            out.append(row + case.id)
            row = " " * len(row)
        out += _wrap(
            f"{row}{case.id if len(case.id) <= id_width else '':<{id_width}}  "
            f"{expected_label(case):<14} {case.observed}",
            width,
            "",
            "           ",
        )
        out += _case_details(case, verbose, width)
    if len(shown) < len(cases):
        out.append(
            f"  ({len(cases) - len(shown)} more cases reproduced as expected; --verbose lists them)"
        )
    return out


def _case_details(case: CaseView, verbose: bool, width: int) -> list[str]:
    details = []
    if case.outcome != "reproduced" or verbose:
        details.append(case.outcome_text)
    if case.kind == "finding":
        details.append(KIND_WORDS["finding"])
    out = [line for text in details for line in _wrap(text, width, "         ", "           ")]
    if case.verdict == "fail" or verbose or case.outcome != "reproduced":
        limit = 10 if verbose else 3
        reasons = case.extra_reasons
        for reason in reasons[:limit]:
            out += _wrap(f"{reason.code}: {reason.message}", width, "         ", "           ")
        if len(reasons) > limit:
            out.append(f"         ... and {len(reasons) - limit} more (--verbose)")
    return out


def _finding_lines(found: tuple[CaseView, ...], width: int) -> list[str]:
    out = ["Findings: real outputs the author judges wrong"]
    for case in found:
        agrees = (
            "the checker agrees"
            if case.outcome == "reproduced"
            else f"{case.outcome}: the checker does not confirm it here"
        )
        out += _wrap(f"{case.id}: {case.observed} ({agrees})", width, "  - ", "    ")
    return out


def _claim_lines(view: ReportView, width: int) -> list[str]:
    out = ["Claims"]
    for claim in view.claims:
        out += _claim(claim, width)
    return out


def _claim(claim: ClaimView, width: int) -> list[str]:
    pre = claim.preregistration
    out = [f"  {claim.status:<13} {claim.id}" + (f" [{pre}]" if pre else "")]
    out += _wrap(claim.verdicts, width, "      ")
    out += _wrap(claim.statement, width, "      ")
    if claim.checked_by:
        out.append(f"      {claim.checked_by}")
    if claim.status != "supported":
        out += _wrap(f"why: {claim.why}", width, "      ", "        ")
    for limit in claim.limits:
        out += _wrap(f"limit: {limit}", width, "      ", "        ")
    if claim.waiver:
        out += _wrap(f"negative control waived: {claim.waiver}", width, "      ", "        ")
    if claim.controls_text:
        out += _wrap(claim.controls_text, width, "      ", "        ")
    return out


def _scope_lines(view: ReportView, width: int) -> list[str]:
    out = ["What this bundle cannot support"]
    for item in view.cannot_support or ["(the bundle states nothing here)"]:
        out += _wrap(item, width, "  - ", "    ")
    return out + _wrap(WHAT_IT_SHOWS, width, "  - ", "    ")
