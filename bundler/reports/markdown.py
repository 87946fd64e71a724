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
from bundler.reports.common import (
    KIND_WORDS,
    PREREGISTRATION_TITLE,
    STATUS_WORDS,
    WHAT_IT_SHOWS,
    WITHHELD_TITLE,
    case_kind,
    cases_by_id,
    claim_cases,
    controls_text,
    findings,
    is_rejection,
    observed_text,
    one_line_all,
    outcome_text,
    preregistration_counts,
    preregistration_of,
    preregistration_text,
    shown_cases,
    signature_text,
    verdicts_text,
    verify_command,
    withheld_text,
)

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


def to_markdown(report: Mapping[str, Any], expect_identity: bool = False) -> str:
    """The appendix block. ``expect_identity`` adds ``--expect-manifest-sha256`` to the
    command (only when the verifier has that option). Every text passes through
    ``one_line`` first, as in every format."""
    report = one_line_all(report)
    if is_rejection(report):
        return _rejection(report)
    out = _summary(report)
    out += _how_to_verify(report, expect_identity)
    out += _claims(report)
    held = withheld_text(report)
    if held:
        out += ["", f"**{WITHHELD_TITLE}**", "", escape(held[0]), ""]
        out += [f"- {escape(line)}" for line in held[1]]
    out += _findings(report)
    out += _cases(report)
    out += _limits(report)
    pre = preregistration_text(report)
    if pre:
        out += ["", f"**{PREREGISTRATION_TITLE}**", "", escape(pre[0]), ""]
        out += [f"- {escape(line)}" for line in pre[1]]
    out += ["", "**What this bundle cannot support**", ""]
    out += [f"- {escape(item)}" for item in report["cannot_support"]] or [
        "- (the bundle states nothing here)"
    ]
    out += [f"- {WHAT_IT_SHOWS}", ""]
    return "\n".join(out)


def _summary(report: Mapping[str, Any]) -> list[str]:
    """The heading, the result and the table of what the bundle is."""
    bundle = report["bundle"]
    claims = report["claims"]
    supported = sum(1 for c in claims if c["status"] == "supported")
    env = report.get("verify_environment", {})
    return [
        f"### Reproducibility bundle: {escape(bundle['name'])} {escape(bundle['version'])}",
        "",
        f"> **Result: {STATUS_WORDS[report['result']]}**: {supported} of {len(claims)} claims "
        f"supported; {verdicts_text(report['cases'])}"
        + (f"; **{counted}**" if (counted := preregistration_counts(report)) else ""),
        "",
        "| | |",
        "| --- | --- |",
        f"| Bundle | {cell(bundle['name'], True)} version {cell(bundle['version'])}, "
        f"format {cell(bundle['format'], True)} |",
        f"| Title | {cell(bundle['title'])} |",
        f"| Identity | {cell('sha256:' + bundle['identity'], True)} (SHA-256 of the manifest) |",
        f"| Signatures | {cell(signature_text(report))} |",
        f"| Contents | {bundle['files']} files, {bundle['bytes']} bytes, each matching the "
        f"manifest's SHA-256{_withheld_words(report)} |",
        f"| Verified with | {cell(env.get('tool', ''))}, Python {cell(env.get('python', ''))}"
        f" on {cell(env.get('platform', ''))} |",
        "",
    ]


def _withheld_words(report: Mapping[str, Any]) -> str:
    held = report.get("withheld")
    if not held:
        return ""
    if held["disclosed"]:
        return f" ({len(held['files'])} withheld, disclosed and checked)"
    return f", except {len(held['files'])} withheld (bound by their SHA-256 in the manifest)"


def _how_to_verify(report: Mapping[str, Any], expect_identity: bool) -> list[str]:
    return [
        "**How to verify** (install reprobundle as its README says, then run)",
        "",
        "```sh",
        verify_command(report, expect_identity),
        "```",
        "",
        "Exit code 0 means every claim below is supported; 1 a claim is contradicted; "
        "3 the bundle was rejected (nothing ran); 4 inconclusive. The identity printed "
        "must equal the one above. A case *reproduced* when the checker's verdict matched "
        "the author's expectation; that is not the same as the output being correct.",
        "",
    ]


def _claims(report: Mapping[str, Any]) -> list[str]:
    out = [
        "**Claims**",
        "",
        "| Claim | Status | Verdicts | Inconclusive | Negative controls |",
        "| --- | --- | --- | --- | --- |",
    ]
    by_id = cases_by_id(report)
    for claim in report["claims"]:
        pre = preregistration_of(report, claim["id"])
        status = f"**{claim['status']}**" + (f" ({pre})" if pre else "")
        out.append(
            f"| {cell(claim['id'], True)}: {cell(claim['statement'])} | {status} | "
            f"{cell(verdicts_text(claim_cases(by_id, claim)))} | "
            f"{cell(claim['inconclusive'])} | {cell(claim['negative_controls'])} |"
        )
    return out


def _findings(report: Mapping[str, Any]) -> list[str]:
    found = findings(report)
    if not found:
        return []
    out = ["", f"**Findings** ({escape(KIND_WORDS['finding'])})", ""]
    for case in found:
        out.append(
            f"- {code(case['id'])}: verdict {code(observed_text(case))}; "
            f"{escape(outcome_text(case))}"
        )
        out += [f"  - {code(r['code'])}: {escape(r['message'])}" for r in case["reasons"][:5]]
    return out


def _cases(report: Mapping[str, Any]) -> list[str]:
    out = [
        "",
        "**Cases**",
        "",
        "| Case | Expected | Verdict | Outcome |",
        "| --- | --- | --- | --- |",
    ]
    shown = shown_cases(report)
    for case in shown:
        kind = case_kind(case)
        expected = "pass" if kind is None else f"fail ({kind})"
        outcome = cell(case["outcome"])
        outcome = outcome if case["outcome"] == "reproduced" else f"**{outcome}**"
        out.append(
            f"| {cell(case['id'], True)} | {cell(expected)} | "
            f"{cell(observed_text(case), True)} | {outcome} |"
        )
    if len(shown) < len(report["cases"]):
        out += ["", f"({len(report['cases']) - len(shown)} more cases reproduced as expected.)"]
    return out


def _limits(report: Mapping[str, Any]) -> list[str]:
    out = ["", "**Limits of each claim**", ""]
    for claim in report["claims"]:
        limits = [escape(limit) for limit in claim["limits"]] or ["(none stated)"]
        if claim.get("negative_control_waiver"):
            limits.append(
                "no negative control; waived because: " + escape(claim["negative_control_waiver"])
            )
        if claim["status"] != "supported":
            limits.append(f"{claim['status']}: {escape(claim['why'])}")
        if controls_text(claim):
            limits.append(escape(controls_text(claim)))
        if report.get("bundled_code") and claim.get("checked_by"):
            limits.append(escape(claim["checked_by"]))
        out.append(f"- {code(claim['id'])}:")
        out.extend(f"  - {limit}" for limit in limits)
    return out


def _rejection(report: Mapping[str, Any]) -> str:
    out = [
        "### Reproducibility bundle: not verified",
        "",
        f"> **Result: {STATUS_WORDS[report['result']]}** (exit {report['exit_code']})",
        "",
        escape(report["message"]),
        "",
    ]
    for problem in report.get("problems", []):
        where = f"{code(problem['where'])}: " if problem["where"] else ""
        out.append(f"- {where}{escape(problem['message'])} ({code(problem['code'])})")
    out.append("")
    return "\n".join(out)
