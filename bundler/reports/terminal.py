"""The verification as rich tables for a terminal (``verify`` when stdout is one).

Colours come from rich, which leaves them out when the output is not a terminal and
whenever ``NO_COLOR`` is set; the words carry every status on their own, so nothing is
lost without colour. Piped output uses the plain text of ``bundler.reports.text``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from rich.console import Console, Group
from rich.table import Table
from rich.text import Text

from bundler.reports.common import PREREGISTRATION_TITLE, WHAT_IT_SHOWS, WITHHELD_TITLE
from bundler.reports.view import CaseView, ClaimView, ReportView, as_view

STYLE = {
    "supported": "bold green",
    "reproduced": "green",
    "contradicted": "bold red",
    "diverged": "bold red",
    "inconclusive": "bold yellow",
    "withheld": "yellow",
    "finding": "bold magenta",
}


def render(report: ReportView | Mapping[str, Any], console: Console, verbose: bool = False) -> None:
    """Print the verification (a JSON report is made into its view first): identity, the
    cases that need a look, claims, scope. Every text from the bundle has passed through
    ``one_line`` (no escape sequences, no line breaks), and every line that holds some is
    printed by ``_labelled`` (its wrapped lines stay under the text, after our label):
    bundle text never starts a line of its own, however long or padded it is."""
    view = as_view(report)
    _print_bundle(view, console)
    console.print()
    _print_cases(view, console, verbose)
    if view.findings:
        console.print()
        _print_findings(view.findings, console)
    console.print()
    console.print(_claims_table(view))
    console.print()
    for title, section in (
        (WITHHELD_TITLE, view.withheld),
        (PREREGISTRATION_TITLE, view.preregistration),
    ):
        if section:
            console.print(Text(title, style="bold"))
            console.print(Text(section.head))
            for line in section.lines:
                _item(console, Text(line))
            console.print()
    _print_scope(view, console)
    console.print()
    words = view.status_words
    rest = view.verdict_line.removeprefix(f"Result: {words}")
    style = STYLE.get(view.result, "bold")
    _labelled(console, Text("Result: ", "bold"), Text.assemble((words, style), rest))


def _print_bundle(view: ReportView, console: Console) -> None:
    """Which bundle, built where, its integrity, signature, bundled code and warnings."""
    bundle, env = view.bundle, view.build_environment
    assert bundle is not None
    _labelled(
        console,
        Text("Bundle   ", "bold"),
        f"{bundle.name} {bundle.version}: {bundle.title}",
    )
    _labelled(console, Text("Identity ", "bold"), f"sha256:{bundle.identity}")
    _labelled(
        console,
        "Built    ",
        f"with {env.get('tool')} on Python {env.get('python')} ({env.get('platform')})",
    )
    _labelled(console, "Integrity: ", view.integrity_words)
    if view.signature_summary is not None:
        _labelled(console, "Signature: ", view.signature_summary)
    code = view.bundled_code
    if code:
        _labelled(console, Text("Bundled code: ", "yellow"), Text(code["why"], "yellow"))
        for entry in code["entries"]:
            verb = "ran" if code["allowed"] else "would run"
            _labelled(console, f"  {verb} ", f"{entry['checker']} = {entry['entry']}")
    for warning in view.warnings:
        _labelled(console, Text("warning: ", "yellow"), Text(warning, "yellow"))


def _print_cases(view: ReportView, console: Console, verbose: bool) -> None:
    shown = view.cases if verbose else view.shown
    _labelled(console, "Cases: ", view.verdicts)
    if shown:
        cases = Table(show_lines=False, expand=True)
        cases.add_column("OUTCOME", no_wrap=True)
        cases.add_column("CASE", overflow="fold", ratio=2)
        # EXPECTED and OBSERVED at least as wide as their longest code (a ratio column takes
        # its width as its minimum), so that a reason code is not cut in two at 80 columns
        # (issue 43, friction 10), as far as the width leaves CASE 12 columns
        room = max(0, (console.width - 5 - 4 * 2 - len("inconclusive") - 12) // 2)
        expected = _widest_token(c.expected for c in shown)
        observed = _widest_token(
            [c.observed] + [f"{r.code}:" for r in c.extra_reasons] for c in shown
        )
        cases.add_column("EXPECTED", overflow="fold", ratio=1, width=min(expected, room) or None)
        cases.add_column("OBSERVED", overflow="fold", ratio=3, width=min(observed, room) or None)
        for case in shown:
            cases.add_row(
                Text(case.outcome, style=STYLE.get(case.outcome, "")),
                _case_label(case),
                Text(case.expected),
                _case_verdict(case, verbose),
            )
        console.print(cases)
    if len(shown) < len(view.cases):
        console.print(
            Text(
                f"({len(view.cases) - len(shown)} more cases reproduced as expected; "
                "--verbose lists them)"
            )
        )


MAX_UNBROKEN = 22


def _widest_token(texts: Iterable[str | list[str]]) -> int:
    """The length of the longest space-free run in ``texts``, at most ``MAX_UNBROKEN``."""
    flat = [t for item in texts for t in ([item] if isinstance(item, str) else item)]
    return min(MAX_UNBROKEN, max((len(w) for t in flat for w in t.split()), default=1))


def _case_label(case: CaseView) -> Text:
    kind = case.kind
    label = Text(case.id, style="bold")
    if kind:
        label.append(
            f"\n{'FINDING' if kind == 'finding' else 'negative control'}",
            style=STYLE["finding"] if kind == "finding" else "dim",
        )
    return label


def _case_verdict(case: CaseView, verbose: bool) -> Text:
    verdict = Text(case.observed, style="bold" if case.verdict == "fail" else "")
    if case.outcome != "reproduced" or verbose:
        verdict.append(f"\n{case.outcome_text}", style="dim")
    if case.verdict == "fail" or case.outcome != "reproduced" or verbose:
        for reason in case.extra_reasons[: 10 if verbose else 3]:
            verdict.append(f"\n{reason.code}: {reason.message}", style="dim")
    return verdict


def _print_findings(found: tuple[CaseView, ...], console: Console) -> None:
    console.print(Text("Findings: real outputs the author judges wrong", style="bold"))
    for case in found:
        _item(
            console,
            Text.assemble((case.id, STYLE["finding"]), f": {case.observed}; {case.outcome_text}"),
        )


def _claims_table(view: ReportView) -> Table:
    claims = Table(title="Claims", title_justify="left", show_lines=True, expand=True)
    claims.add_column("STATUS", no_wrap=True)
    claims.add_column("CLAIM", overflow="fold", ratio=3)
    claims.add_column("VERDICTS", ratio=1)
    for claim in view.claims:
        claims.add_row(_claim_status(claim), Group(*_claim_lines(claim)), Text(claim.verdicts))
    return claims


def _claim_lines(claim: ClaimView) -> list[Text]:
    lines: list[Text] = [Text(claim.id, style="bold"), Text(claim.statement)]
    if claim.status != "supported":
        lines.append(Text(f"why: {claim.why}", style="dim"))
    lines += [Text(f"limit: {limit}", style="dim") for limit in claim.limits]
    if claim.checked_by:
        lines.append(Text(claim.checked_by, style="yellow"))
    if claim.waiver:
        lines.append(Text(f"negative control waived: {claim.waiver}"))
    if claim.controls_text:
        lines.append(Text(claim.controls_text, style="dim"))
    return lines


def _claim_status(claim: ClaimView) -> Text:
    status = Text(claim.status, style=STYLE.get(claim.status, ""))
    pre = claim.preregistration
    if pre:
        loud = pre != "as pre-registered"
        status.append(f"\n{pre}", style="bold yellow" if loud else "dim")
    return status


def _print_scope(view: ReportView, console: Console) -> None:
    console.print(Text("What this bundle cannot support", style="bold"))
    for item in view.cannot_support or ["(the bundle states nothing here)"]:
        _item(console, Text(item))
    _item(console, Text(WHAT_IT_SHOWS))


def _item(console: Console, text: Text) -> None:
    """``  - text``, its wrapped lines under the text, not under the dash."""
    _labelled(console, "  - ", text)


def _labelled(console: Console, label: str | Text, text: str | Text) -> None:
    """``label text`` with the text's wrapped lines under the text: a line that holds
    bundle text starts with our label or with blanks, never with the bundle's words."""
    grid = Table.grid()
    grid.add_column(no_wrap=True)
    grid.add_column()
    grid.add_row(
        Text(label) if isinstance(label, str) else label,
        Text(text) if isinstance(text, str) else text,
    )
    console.print(grid)
