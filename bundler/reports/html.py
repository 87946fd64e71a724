"""One self-contained HTML page of a verification (``verify --html FILE``).

No scripts, fonts, images or styles from anywhere else: the page works offline and as
an e-mail attachment, and its Content-Security-Policy forbids every fetch, so even a
drawing that went wrong cannot reach the network. Every text from the bundle is escaped.

Drawings: ``DETAILS_RENDERERS`` maps a checker *name* (without ``@version``) to a
function taking the case's report data and returning markup (an inline ``<svg>``)
shown under that case, or None. A renderer must escape every text it draws; one that
raises is shown as a note, never as a broken page. Register with
``@register_details_renderer("trajectory-skeleton")``; the registry and the built-in
drawings live in ``bundler.reports.drawings``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from html import escape
from typing import Any

from bundler.reports.common import KIND_WORDS, PREREGISTRATION_TITLE, WHAT_IT_SHOWS, WITHHELD_TITLE
from bundler.reports.drawings import DETAILS_RENDERERS, DetailsRenderer
from bundler.reports.view import CaseView, ClaimView, ReportView, Section, as_view

CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; form-action 'none'"


def e(value: object) -> str:
    return escape(str(value), quote=True)


_BREAK_AFTER = re.compile(r"([./@_:,=-])")


def breakable(value: object) -> str:
    """Escaped text that may wrap only after ``. / @ _ : , = -`` (keys, platform strings,
    file names), never in the middle of a word."""
    return _BREAK_AFTER.sub(r"\1<wbr>", e(value))


def digest(value: str) -> str:
    """A hash in groups of 16 digits that wrap as groups; copying it gives the digits
    alone (``<wbr>`` adds no character)."""
    return "<wbr>".join(e(value[i : i + 16]) for i in range(0, len(value), 16))


def command(words: str) -> str:
    """The verify command, one option per line, as a shell reads it."""
    return e(words.replace(" --", " \\\n  --"))


_CSS = """
:root{--ok:#1a7f37;--ok-bg:#dafbe1;--bad:#b42318;--bad-bg:#fde4e1;--unk:#8a5a00;
--unk-bg:#fff1c2;--ink:#1f2328;--muted:#59636e;--line:#d1d9e0;--bg:#f6f8fa}
*{box-sizing:border-box}
body{margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;
color:var(--ink);background:#fff;overflow-wrap:break-word}
main,header>div{max-width:72rem;margin:0 auto;padding:0 1rem}
header{padding:1.25rem 0;border-bottom:4px solid var(--line)}
header.supported{background:var(--ok-bg);border-color:var(--ok)}
header.contradicted,header.rejected,header.error{background:var(--bad-bg);border-color:var(--bad)}
header.inconclusive{background:var(--unk-bg);border-color:var(--unk)}
.verdict{font-size:1.5rem;font-weight:700;margin:0}
h1{font-size:1.15rem;margin:.25rem 0}
h2{font-size:1.2rem;margin:2rem 0 .5rem;border-bottom:1px solid var(--line)}
.muted,.why{color:var(--muted)}
code,.mono{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.9em}
pre{background:var(--bg);padding:.75rem;border-radius:6px;overflow-x:auto;white-space:pre;
max-width:100%}
.digest{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.9em;
word-break:keep-all}
dl.facts{display:grid;grid-template-columns:max-content minmax(0,1fr);gap:.25rem 1rem;margin:0}
dl.facts dt{font-weight:600}dl.facts dd{margin:0;min-width:0}
table{border-collapse:collapse;width:100%}
th,td{text-align:left;vertical-align:top;padding:.5rem;border-bottom:1px solid var(--line)}
th{background:var(--bg)}
.badge{display:inline-block;padding:.1rem .5rem;border-radius:1rem;font-weight:700;
font-size:.85rem;white-space:nowrap;border:1px solid}
.supported .badge,.reproduced .badge{color:var(--ok);background:var(--ok-bg)}
.contradicted .badge,.diverged .badge{color:var(--bad);background:var(--bad-bg)}
.inconclusive .badge{color:var(--unk);background:var(--unk-bg)}
.badge.kind{color:var(--muted);background:#fff;font-weight:600}
.badge.finding{color:#fff;background:#6e40c9;border-color:#6e40c9}
.claim .badge.prereg{margin-top:.3rem;font-weight:600;color:var(--muted);background:#fff;
white-space:normal;max-width:9rem;border-radius:.4rem}
.claim .badge.prereg.changed{color:#fff;background:#9a6700}
.prereg-count{font-weight:700;color:#9a6700}
section#findings li{margin:.25rem 0}
.verdict-of{font-weight:700}
tr.claim.contradicted{background:var(--bad-bg)}tr.claim.inconclusive{background:var(--unk-bg)}
.statement{margin:.25rem 0}
ul{margin:.25rem 0;padding-left:1.25rem}
article.case{border:1px solid var(--line);border-left:6px solid var(--line);border-radius:6px;
padding:.5rem .75rem;margin:.5rem 0}
article.case.reproduced{border-left-color:var(--ok)}
article.case.diverged{border-left-color:var(--bad);background:var(--bad-bg)}
article.case.inconclusive{border-left-color:var(--unk);background:var(--unk-bg)}
article.case.finding{border-left-color:#6e40c9;background:#f3efff}
article.case.reproduced.finding .badge{color:#6e40c9;background:#fff}
article.case.finding .badge.kind.finding{color:#fff;background:#6e40c9}
article.case h3{font-size:1rem;margin:0 0 .25rem}
p.controls{overflow-wrap:anywhere}
article.case summary{cursor:pointer}article.case summary h3{display:inline;margin:0}
.cols{display:grid;grid-template-columns:repeat(auto-fit,minmax(14rem,1fr));gap:.25rem 1rem}
tr.differs td{background:var(--unk-bg);font-weight:600}
figure{margin:.5rem 0;overflow-x:auto}figure svg{max-width:100%;height:auto}
footer{max-width:72rem;margin:2rem auto;padding:1rem;color:var(--muted);
border-top:1px solid var(--line);font-size:.9rem}
@media (max-width:40rem){
body{font-size:15px}
table.claims thead{display:none}
table.claims tr,table.claims td{display:block;border:0;padding:.2rem .5rem}
table.claims tr{border-bottom:1px solid var(--line);padding:.5rem 0}
dl.facts{grid-template-columns:minmax(0,1fr)}dl.facts dt{margin-top:.4rem}
table.env th,table.env td{padding:.35rem .25rem;font-size:.85rem}
}
"""


def to_html(
    report: ReportView | Mapping[str, Any],
    expect_identity: bool = False,
    renderers: Mapping[str, DetailsRenderer] | None = None,
) -> str:
    """The page (a JSON report is made into its view first); every text has passed through
    ``one_line``, as in every format (no control or bidirectional character reaches the
    page)."""
    use = DETAILS_RENDERERS if renderers is None else renderers
    view = as_view(report)
    if view.rejected:
        title = f"Bundle not verified: {view.status_words}"
        body = _rejection(view)
    else:
        assert view.bundle is not None
        title = f"{view.bundle.name} {view.bundle.version}: {view.status_words}"
        body = "\n".join(
            [
                _banner(view),
                "<main>",
                _bundle_section(view, expect_identity),
                _claims_section(view),
                _section("withheld", WITHHELD_TITLE, view.withheld, breakable, ' class="mono"'),
                _findings_section(view),
                _cases_section(view, use),
                _environment_section(view),
                _section("preregistration", PREREGISTRATION_TITLE, view.preregistration, e, ""),
                _scope_section(view),
                "</main>",
            ]
        )
    tool = view.verify_environment.get("tool", "reprobundle")
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="{CSP}">
<meta name="referrer" content="no-referrer">
<meta name="generator" content="reprobundle">
<title>{e(title)}</title>
<style>{_CSS}</style>
</head>
<body>
{body}
<footer>Written by {e(tool)} from the report format {e(view.report_format)}.</footer>
</body>
</html>
"""


def _banner(view: ReportView) -> str:
    assert view.bundle is not None
    bundle = view.bundle
    warnings = "".join(f'<p class="warning">warning: {e(w)}</p>' for w in view.warnings)
    found = view.findings
    named = ", ".join(f'<a href="#case-{e(c.id)}">{e(c.id)}</a>' for c in found[:10])
    noted = f"<p>Findings (outputs the author judges wrong): {named}</p>" if found else ""
    counted = view.preregistration_counts
    changed = f'<p class="prereg-count">{e(counted)}</p>' if counted else ""
    return f"""<header class="{e(view.result)}" id="summary"><div>
<p class="verdict">Result: {e(view.status_words)}</p>
<h1>{e(bundle.title)}</h1>
<p><strong>{e(bundle.name)} {e(bundle.version)}</strong> ·
{view.supported} of {len(view.claims)} claims supported ·
{e(view.verdicts)}</p>{changed}{noted}{warnings}
</div></header>"""


def _bundle_section(view: ReportView, expect_identity: bool) -> str:
    assert view.bundle is not None
    bundle = view.bundle
    verify = view.verify_command_pinned if expect_identity else view.verify_command
    return f"""<section id="bundle"><h2>Bundle</h2><dl class="facts">
<dt>Identity</dt><dd class="digest">sha256:<wbr>{digest(bundle.identity)}</dd>
<dt>File</dt><dd class="mono">{breakable(bundle.file)}</dd>
<dt>Format</dt><dd class="mono">{e(bundle.format)}</dd>
<dt>Contents</dt><dd>{bundle.files} files, {bundle.bytes} bytes: {e(view.integrity)}</dd>
<dt>Signatures</dt><dd>{e(view.signature_text)}</dd>
<dt>Verify it</dt><dd><pre>{command(verify)}</pre></dd>
</dl></section>"""


def _preregistration_badge(claim: ClaimView) -> str:
    """The claim's pre-registration status beside its status (none without one)."""
    pre = claim.preregistration
    if pre is None:
        return ""
    kind = "as" if pre == "as pre-registered" else "changed"
    return f'<br><span class="badge prereg {kind}">{e(pre)}</span>'


def _claims_section(view: ReportView) -> str:
    rows = []
    for claim in view.claims:
        limits = "".join(f"<li>{e(limit)}</li>" for limit in claim.limits)
        if claim.waiver:
            limits += f"<li>negative control waived: {e(claim.waiver)}</li>"
        if limits:  # labelled: not part of the claim, what it does not cover
            limits = '<p class="limits-label muted">Limits of this claim:</p>' + (
                f'<ul class="limits">{limits}</ul>'
            )
        limits += "".join(f'<p class="controls">{e(s)}</p>' for s in claim.controls_words)
        cases = ", ".join(f'<a href="#case-{e(c)}">{e(c)}</a>' for c in claim.case_ids[:50])
        if len(claim.case_ids) > 50:
            cases += f" and {len(claim.case_ids) - 50} more"
        why = "" if claim.status == "supported" else f'<p class="why">why: {e(claim.why)}</p>'
        rows.append(
            f"""<tr class="claim {e(claim.status)}" id="claim-{e(claim.id)}" \
data-status="{e(claim.status)}">
<td><span class="badge">{e(claim.status)}</span>{_preregistration_badge(claim)}</td>
<td><strong class="mono">{e(claim.id)}</strong><p class="statement">{e(claim.statement)}</p>
{why}{limits}</td>
<td><span class="denominators">{e(claim.verdicts)}</span>
<br><span class="muted">{cases}</span></td></tr>"""
        )
    return f"""<section id="claims"><h2>Claims</h2>
<table class="claims"><thead><tr><th>Status</th><th>Claim</th><th>Cases</th></tr></thead>
<tbody>
{chr(10).join(rows)}
</tbody></table></section>"""


# The drawings of one page hold at most this many characters in all (each drawing is
# capped by its renderer too): past it, a case's drawing is left out, in words.
DRAWINGS_CHARS = 2 << 20


class _Drawings:
    """The drawings of one page, within ``DRAWINGS_CHARS``."""

    def __init__(self, renderers: Mapping[str, DetailsRenderer]) -> None:
        self.renderers = renderers
        self.left = DRAWINGS_CHARS

    def of(self, case: CaseView) -> str:
        renderer = self.renderers.get(str(case.checker).split("@")[0])
        if renderer is None:
            return ""
        if self.left <= 0:
            return (
                '<p class="muted">(drawing left out: this page draws at most '
                f"{DRAWINGS_CHARS:,} characters of drawings)</p>"
            )
        try:
            markup = renderer(case.data)
        except Exception as exc:  # a drawing is never worth a broken page
            return f'<p class="muted">(no drawing: {e(type(exc).__name__)}: {e(exc)})</p>'
        if not markup:
            return ""
        self.left -= len(markup)
        return f'<figure class="drawing">{markup}</figure>'


def _reasons(case: CaseView, limit: int) -> str:
    reasons = case.extra_reasons
    items = "".join(f"<li><code>{e(r.code)}</code>: {e(r.message)}</li>" for r in reasons[:limit])
    more = len(reasons) - limit
    return items + (f"<li>… and {more} more</li>" if more > 0 else "")


def _findings_section(view: ReportView) -> str:
    if not view.findings:
        return ""
    items = "".join(
        f"""<li><a class="mono" href="#case-{e(c.id)}">{e(c.id)}</a>: the checker's verdict
<code>{e(c.observed)}</code>; {e(c.outcome_text)}<ul>{_reasons(c, 5)}</ul></li>"""
        for c in view.findings
    )
    return f"""<section id="findings"><h2>Findings</h2>
<p class="muted">{e(KIND_WORDS["finding"])}. A reproduced finding means the checker fails this
output as the author does.</p><ul>{items}</ul></section>"""


def folds(case: CaseView) -> bool:
    """Whether a case's card starts folded: only a reproduced pass, the case that needs no
    look (a page of 70 cards is long to scan); diverged and inconclusive cases, findings and
    controls stay open."""
    return case.outcome == "reproduced" and case.kind is None


def _cases_section(view: ReportView, renderers: Mapping[str, DetailsRenderer]) -> str:
    drawings = _Drawings(renderers)
    articles = [_case_article(case, drawings) for case in view.cases]
    return f'<section id="cases"><h2>Cases</h2>\n{chr(10).join(articles)}\n</section>'


def _case_article(case: CaseView, drawings: _Drawings) -> str:
    reasons = _reasons(case, 50)
    said = case.message and case.message in case.outcome_text
    message = f"<p>{e(case.message)}</p>" if case.message and not said else ""
    kind = case.kind
    label = {"finding": "finding", "control": "negative control"}.get(kind or "", "")
    kind_badge = f' <span class="badge kind {e(kind)}">{e(label)}</span>' if kind else ""
    heading = f"""<h3><span class="badge">{e(case.outcome)}</span>{kind_badge}
<span class="mono">{breakable(case.id)}</span></h3>"""
    body = f"""<div class="cols"><div><strong>verdict</strong>
<code class="verdict-of">{e(case.observed)}</code></div>
<div><strong>expected</strong> <code>{e(case.expected)}</code></div>
<div><strong>checker</strong> <code>{e(case.checker)}</code></div></div>
<p class="explanation">{e(case.outcome_text)}</p>{message}
{f'<ul class="reasons">{reasons}</ul>' if reasons else ""}{drawings.of(case)}"""
    if folds(case):  # a reproduced pass: one line until opened
        body = f"<details><summary>{heading}</summary>\n{body}\n</details>"
    else:
        body = f"{heading}\n{body}"
    return f"""<article class="case {e(case.outcome)} {e(kind or "pass")}" \
id="case-{e(case.id)}">
{body}
</article>"""


def _flatten(value: Any, prefix: str = "") -> dict[str, str]:
    if isinstance(value, Mapping):
        out: dict[str, str] = {}
        for key, item in value.items():
            out.update(_flatten(item, f"{prefix}.{key}" if prefix else str(key)))
        return out
    return {prefix: str(value)}


def environment_rows(
    report: ReportView | Mapping[str, Any],
) -> list[tuple[str, str | None, str | None]]:
    """(field, at build, at verify) for every field either side recorded."""
    view = as_view(report)
    built = _flatten(view.build_environment)
    here = _flatten(view.verify_environment)
    keys = list(here) + [k for k in built if k not in here]
    return [(k, built.get(k), here.get(k)) for k in keys]


def _environment_section(view: ReportView) -> str:
    rows = []
    for key, built, here in environment_rows(view):
        differs = built is not None and here is not None and built != here
        rows.append(
            f'<tr class="{"differs" if differs else "same"}"><th scope="row">{breakable(key)}</th>'
            f'<td class="mono">{breakable(built) if built is not None else "—"}</td>'
            f'<td class="mono">{breakable(here) if here is not None else "—"}</td></tr>'
        )
    return f"""<section id="environment"><h2>Environment: built vs verified</h2>
<p class="muted">Rows where both sides recorded a value and the values differ are highlighted.</p>
<div style="overflow-x:auto"><table class="env"><thead><tr><th>field</th><th>built with</th>
<th>verified with</th></tr></thead><tbody>
{chr(10).join(rows)}
</tbody></table></div></section>"""


def _section(
    anchor: str, title: str, section: Section | None, item: Callable[[object], str], attrs: str
) -> str:
    """The withheld evidence or the pre-registration: its headline, then a list."""
    if not section:
        return ""
    items = "".join(f"<li{attrs}>{item(line)}</li>" for line in section.lines)
    return f"""<section id="{anchor}"><h2>{title}</h2>
<p>{e(section.head)}</p><ul>{items}</ul></section>"""


def _scope_section(view: ReportView) -> str:
    items = "".join(f"<li>{e(item)}</li>" for item in view.cannot_support)
    items = items or "<li>(the bundle states nothing here)</li>"
    return f"""<section id="scope"><h2>What this bundle cannot support</h2>
<ul>{items}<li>{e(WHAT_IT_SHOWS)}</li></ul></section>"""


def _rejection(view: ReportView) -> str:
    problems = "".join(
        f"<li>{'<code>' + e(p['where']) + '</code>: ' if p['where'] else ''}{e(p['message'])} "
        f'<span class="muted">[{e(p["code"])}]</span></li>'
        for p in view.problems
    )
    return f"""<header class="{e(view.result)}" id="summary"><div>
<p class="verdict">Result: {e(view.status_words)}</p>
<h1>{e(view.message)}</h1><p>exit {e(view.exit_code)}</p></div></header>
<main><section id="problems"><h2>Problems</h2><ul>{problems}</ul></section></main>"""
