"""The verification as rich tables for a terminal (``verify`` when stdout is one).

Colours come from rich, which leaves them out when the output is not a terminal and
whenever ``NO_COLOR`` is set; the words carry every status on their own, so nothing is
lost without colour. Piped output uses the plain text of ``bundler.report.to_text``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rich.console import Console, Group
from rich.table import Table
from rich.text import Text

from .common import (
    STATUS_WORDS,
    WHAT_IT_SHOWS,
    case_counts,
    denominators,
    expected_text,
    one_line,
)

STYLE = {
    "supported": "bold green",
    "reproduced": "green",
    "contradicted": "bold red",
    "diverged": "bold red",
    "inconclusive": "bold yellow",
}


def render(report: Mapping[str, Any], console: Console, verbose: bool = False) -> None:
    """Print the verification: identity, the cases that need a look, claims, scope.
    Every text from the bundle passes through ``one_line`` (no escape sequences, no line
    breaks: bundle text never starts a line of its own)."""
    report = _printable(report)
    bundle = report["bundle"]
    env = report.get("build_environment", {})
    console.print(
        Text.assemble(
            ("Bundle   ", "bold"), f"{bundle['name']} {bundle['version']}: ", bundle["title"]
        )
    )
    console.print(Text.assemble(("Identity ", "bold"), f"sha256:{bundle['identity']}"))
    console.print(
        Text(
            f"Built    with {env.get('tool')} on Python {env.get('python')} ({env.get('platform')})"
        )
    )
    console.print(
        Text(
            f"Integrity: all {bundle['files']} files ({bundle['bytes']} bytes) match the "
            "manifest's SHA-256 and sizes"
        )
    )
    if report.get("signature"):
        console.print(Text(f"Signature: {report['signature']['summary']}"))
    code = report.get("bundled_code")
    if code:
        console.print(Text(f"Bundled code: {code['why']}", style="yellow"))
        for entry in code["entries"]:
            verb = "ran" if code["allowed"] else "would run"
            console.print(Text(f"  {verb} {entry['checker']} = {entry['entry']}"))
    for warning in report.get("warnings", []):
        console.print(Text(f"warning: {warning}", style="yellow"))

    counts = case_counts(report)
    shown = [c for c in report["cases"] if verbose or c["outcome"] != "reproduced"]
    console.print()
    console.print(
        Text(
            f"Cases: {counts['reproduced']} of {len(report['cases'])} reproduced, "
            f"{counts['diverged']} diverged, {counts['inconclusive']} inconclusive"
        )
    )
    if shown:
        cases = Table(show_lines=True, expand=True)
        cases.add_column("OUTCOME", no_wrap=True)
        cases.add_column("CASE", overflow="fold", ratio=2)
        cases.add_column("WHY", overflow="fold", ratio=3)
        for case in shown:
            why = Text(case["explanation"])
            for reason in case["reasons"][:10]:
                why.append(f"\n{reason['code']}: {reason['message']}", style="dim")
            cases.add_row(
                Text(case["outcome"], style=STYLE.get(case["outcome"], "")),
                Text.assemble(
                    (case["id"], "bold"), f"\n{case['checker']}\nexpects {expected_text(case)}"
                ),
                why,
            )
        console.print(cases)

    claims = Table(title="Claims", title_justify="left", show_lines=True, expand=True)
    claims.add_column("STATUS", no_wrap=True)
    claims.add_column("CLAIM", overflow="fold", ratio=3)
    claims.add_column("CASES", ratio=1)
    for claim in report["claims"]:
        lines: list[Text] = [Text(claim["id"], style="bold"), Text(claim["statement"])]
        lines.append(Text(f"why: {claim['why']}", style="dim"))
        lines += [Text(f"limit: {limit}", style="dim") for limit in claim["limits"]]
        if code and claim.get("checked_by"):
            lines.append(Text(claim["checked_by"], style="yellow"))
        if claim.get("negative_control_waiver"):
            lines.append(Text(f"negative control waived: {claim['negative_control_waiver']}"))
        claims.add_row(
            Text(claim["status"], style=STYLE.get(claim["status"], "")),
            Group(*lines),
            Text(f"{denominators(claim)}; {claim['negative_controls']} negative control(s)"),
        )
    console.print()
    console.print(claims)

    console.print()
    console.print(Text("What this bundle cannot support", style="bold"))
    for item in report["cannot_support"] or ["(the bundle states nothing here)"]:
        console.print(Text(f"  - {item}"))
    console.print(Text(f"  - {WHAT_IT_SHOWS}"))
    console.print()
    supported = sum(1 for c in report["claims"] if c["status"] == "supported")
    console.print(
        Text.assemble(
            ("Result: ", "bold"),
            (STATUS_WORDS[report["result"]], STYLE.get(report["result"], "bold")),
            f" ({supported} of {len(report['claims'])} claims supported); "
            f"{(report.get('signature') or {}).get('summary', 'signature not checked')}",
        )
    )


def _printable(value: Any) -> Any:
    if isinstance(value, str):
        return one_line(value)
    if isinstance(value, Mapping):
        return {k: _printable(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_printable(v) for v in value]
    return value
