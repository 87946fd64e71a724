"""The Markdown block for a report's appendix (``reprobundle report``, ``verify --markdown``).

It states what a reader needs to trust a sentence of the report: which bundle (name,
version, identity), who signed it, the exact command to check it, every claim with
its denominators, and the limits, worded so that "the checker behaves as stated on
stored inputs" cannot be read as "the model does it again".
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from bundler.errors import one_line
from bundler.reports.common import KIND_WORDS, PREREGISTRATION_TITLE, WHAT_IT_SHOWS, WITHHELD_TITLE
from bundler.reports.view import ReportView, as_view

_SPECIAL = re.compile(r"([\\`*_\[\]<>|#&])")
# an HTML character reference, as CommonMark reads one (named, decimal or hexadecimal)
_REFERENCE = re.compile(r"&(?:#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[A-Za-z][A-Za-z0-9]{0,31});")


def _reference(match: re.Match[str]) -> str:
    """A character reference shown as the character it names would be: an escape
    (``\\u200f``) when ``one_line`` escapes that character, else the reference's own
    text (its ``&`` is escaped below, so no reference is ever decoded)."""
    import html

    named = html.unescape(match.group())
    if len(named) == 1 and one_line(named) != named:
        return one_line(named)
    return match.group()


def escape(text: object) -> str:
    """Plain text safe inside a Markdown paragraph or table cell (one line): every
    character Markdown reads as syntax is escaped, ``&`` included, so that a character
    reference (``&rlm;``, ``&#x202e;``) is never decoded into the character the one-line
    rule refuses to show raw; it is shown as that rule shows the character itself."""
    text = _REFERENCE.sub(_reference, " ".join(str(text).split()))
    return _SPECIAL.sub(r"\\\1", text)


def cell(text: object, monospace: bool = False) -> str:
    """Text for one cell of a Markdown table, by one rule for every table (the report's
    and the CI step summary's): plain text is ``escape``d; ``monospace`` text is an inline code
    span, unless it holds a ``|``, which no code span in a table can hold safely (GitHub
    splits the row at it, and a backslash before it changes how the row is split), so it is
    escaped plain text instead. Nothing in the text can end the cell or the row."""
    value = one_line(text)
    if monospace and "|" not in value:
        return code(value)
    return escape(value)


def code(text: object) -> str:
    """An inline code span that holds any text (a longer fence than any backtick run)."""
    value = " ".join(str(text).split())
    longest = max((len(run) for run in re.findall(r"`+", value)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if value.startswith("`") or value.endswith("`") else ""
    return f"{fence}{pad}{value}{pad}{fence}"


def to_markdown(report: ReportView | Mapping[str, Any], expect_identity: bool = False) -> str:
    """The appendix block (a JSON report is made into its view first). ``expect_identity``
    adds ``--expect-manifest-sha256`` to the command (only when the verifier has that
    option). Every text has passed through ``one_line``, as in every format."""
    view = as_view(report)
    if view.rejected:
        return _rejection(view)
    out = _summary(view)
    out += _how_to_verify(view, expect_identity)
    out += _claims(view)
    if view.withheld:
        out += ["", f"**{WITHHELD_TITLE}**", "", escape(view.withheld.head), ""]
        out += [f"- {escape(line)}" for line in view.withheld.lines]
    out += _findings(view)
    out += _cases(view)
    out += _limits(view)
    if view.preregistration:
        out += ["", f"**{PREREGISTRATION_TITLE}**", "", escape(view.preregistration.head), ""]
        out += [f"- {escape(line)}" for line in view.preregistration.lines]
    out += ["", "**What this bundle cannot support**", ""]
    out += [f"- {escape(item)}" for item in view.cannot_support] or [
        "- (the bundle states nothing here)"
    ]
    out += [f"- {WHAT_IT_SHOWS}", ""]
    return "\n".join(out)


def _summary(view: ReportView) -> list[str]:
    """The heading, the result and the table of what the bundle is."""
    bundle, env = view.bundle, view.verify_environment
    assert bundle is not None
    counted = view.preregistration_counts
    return [
        f"### Reproducibility bundle: {escape(bundle.name)} {escape(bundle.version)}",
        "",
        f"> **Result: {view.status_words}**: {view.supported} of {len(view.claims)} claims "
        f"supported; {view.verdicts}" + (f"; **{counted}**" if counted else ""),
        "",
        "| | |",
        "| --- | --- |",
        f"| Bundle | {cell(bundle.name, True)} version {cell(bundle.version)}, "
        f"format {cell(bundle.format, True)} |",
        f"| Title | {cell(bundle.title)} |",
        f"| Identity | {cell('sha256:' + bundle.identity, True)} (SHA-256 of the manifest) |",
        f"| Signatures | {cell(view.signature_text)} |",
        f"| Contents | {bundle.files} files, {bundle.bytes} bytes, each matching the "
        f"manifest's SHA-256{_withheld_words(view)} |",
        f"| Verified with | {cell(env.get('tool', ''))}, Python {cell(env.get('python', ''))}"
        f" on {cell(env.get('platform', ''))} |",
        "",
    ]


def _withheld_words(view: ReportView) -> str:
    if not view.withheld:
        return ""
    if view.disclosed:
        return f" ({view.withheld_files} withheld, disclosed and checked)"
    return f", except {view.withheld_files} withheld (bound by their SHA-256 in the manifest)"


def _how_to_verify(view: ReportView, expect_identity: bool) -> list[str]:
    return [
        "**How to verify** (install reprobundle as its README says, then run)",
        "",
        "```sh",
        view.verify_command_pinned if expect_identity else view.verify_command,
        "```",
        "",
        "Exit code 0 means every claim below is supported; 1 a claim is contradicted; "
        "3 the bundle was rejected (nothing ran); 4 inconclusive. The identity printed "
        "must equal the one above. A case *reproduced* when the checker's verdict matched "
        "the author's expectation; that is not the same as the output being correct.",
        "",
    ]


def _claims(view: ReportView) -> list[str]:
    out = [
        "**Claims**",
        "",
        "| Claim | Status | Verdicts | Inconclusive | Negative controls |",
        "| --- | --- | --- | --- | --- |",
    ]
    for claim in view.claims:
        pre = claim.preregistration
        status = f"**{claim.status}**" + (f" ({pre})" if pre else "")
        out.append(
            f"| {cell(claim.id, True)}: {cell(claim.statement)} | {status} | "
            f"{cell(claim.verdicts)} | "
            f"{cell(claim.inconclusive)} | {cell(claim.negative_controls)} |"
        )
    return out


def _findings(view: ReportView) -> list[str]:
    if not view.findings:
        return []
    out = ["", f"**Findings** ({escape(KIND_WORDS['finding'])})", ""]
    for case in view.findings:
        out.append(f"- {code(case.id)}: verdict {code(case.observed)}; {escape(case.outcome_text)}")
        out += [f"  - {code(r.code)}: {escape(r.message)}" for r in case.reasons[:5]]
    return out


def _cases(view: ReportView) -> list[str]:
    out = [
        "",
        "**Cases**",
        "",
        "| Case | Expected | Verdict | Outcome |",
        "| --- | --- | --- | --- |",
    ]
    for case in view.shown:
        expected = "pass" if case.kind is None else f"fail ({case.kind})"
        outcome = cell(case.outcome)
        outcome = outcome if case.outcome == "reproduced" else f"**{outcome}**"
        out.append(
            f"| {cell(case.id, True)} | {cell(expected)} | "
            f"{cell(case.observed, True)} | {outcome} |"
        )
    if len(view.shown) < len(view.cases):
        out += ["", f"({len(view.cases) - len(view.shown)} more cases reproduced as expected.)"]
    return out


def _limits(view: ReportView) -> list[str]:
    out = ["", "**Limits of each claim**", ""]
    for claim in view.claims:
        limits = [escape(limit) for limit in claim.limits] or ["(none stated)"]
        if claim.waiver:
            limits.append("no negative control; waived because: " + escape(claim.waiver))
        if claim.status != "supported":
            limits.append(f"{claim.status}: {escape(claim.why)}")
        if claim.controls_text:
            limits.append(escape(claim.controls_text))
        if claim.checked_by:
            limits.append(escape(claim.checked_by))
        out.append(f"- {code(claim.id)}:")
        out.extend(f"  - {limit}" for limit in limits)
    return out


def _rejection(view: ReportView) -> str:
    out = [
        "### Reproducibility bundle: not verified",
        "",
        f"> **Result: {view.status_words}** (exit {view.exit_code})",
        "",
        escape(view.message),
        "",
    ]
    for problem in view.problems:
        where = f"{code(problem['where'])}: " if problem["where"] else ""
        out.append(f"- {where}{escape(problem['message'])} ({code(problem['code'])})")
    out.append("")
    return "\n".join(out)
