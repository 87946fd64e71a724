"""Built-in drawings for the HTML page, one per checker family that has a picture.

A drawing takes a case's report data (``id``, ``checker``, ``verdict``, ``reasons``,
``details`` ...) and returns inline SVG markup, or None when it has nothing to draw.
It must escape every text it takes from the data (``html.escape``). The registry is here,
below the page that shows the drawings, so the page imports it and not the other way
round. To add one:

    from bundler.reports.drawings import register_details_renderer

    @register_details_renderer("trajectory-skeleton")
    def skeleton(case: Mapping[str, Any]) -> str | None:
        ...

"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from html import escape
from typing import Any

DetailsRenderer = Callable[[Mapping[str, Any]], str | None]
DETAILS_RENDERERS: dict[str, DetailsRenderer] = {}


def register_details_renderer(checker_name: str) -> Callable[[DetailsRenderer], DetailsRenderer]:
    """Register the drawing shown under each case of ``checker_name`` (no ``@version``)."""

    def decorate(function: DetailsRenderer) -> DetailsRenderer:
        DETAILS_RENDERERS[checker_name] = function
        return function

    return decorate


_BOX_W, _BOX_H, _GAP = 150, 46, 30
# A report is untrusted input: a drawing shows at most this many states (the rest are
# counted in words), so the page grows with the report's cases, not with a list inside one.
MAX_STATES_DRAWN = 40


@register_details_renderer("trajectory-skeleton")
def trajectory_skeleton(case: Mapping[str, Any]) -> str | None:
    """The essential states in order: reached ones solid with the step where they were
    matched, missing ones dashed and red."""
    positions = (case.get("details") or {}).get("positions")
    if not isinstance(positions, list) or not positions:
        return None
    total = len(positions)
    positions = positions[:MAX_STATES_DRAWN]
    width = len(positions) * (_BOX_W + _GAP) - _GAP + 2
    parts = [
        f'<svg role="img" viewBox="0 0 {width} {_BOX_H + 24}" width="100%" '
        f'style="max-width:{width}px" xmlns="http://www.w3.org/2000/svg">',
        f"<title>Essential states of the skeleton for {escape(str(case.get('id', '')))}</title>",
    ]
    for i, position in enumerate(positions):
        if not isinstance(position, Mapping):
            return None
        x = 1 + i * (_BOX_W + _GAP)
        step = position.get("step")
        reached = step is not None
        stroke, fill = ("#1a7f37", "#dafbe1") if reached else ("#b42318", "#fde4e1")
        dash = "" if reached else ' stroke-dasharray="5 4"'
        label = str(position.get("label") or position.get("state") or "?")
        label = label if len(label) <= 20 else label[:19] + "…"
        note = f"step {step}" if reached else "never reached"
        parts += [
            f'<rect x="{x}" y="1" width="{_BOX_W}" height="{_BOX_H}" rx="7" fill="{fill}" '
            f'stroke="{stroke}" stroke-width="2"{dash}/>',
            f'<text x="{x + _BOX_W / 2}" y="21" text-anchor="middle" font-size="14" '
            f'font-weight="600" fill="#1f2328">{escape(label)}</text>',
            f'<text x="{x + _BOX_W / 2}" y="38" text-anchor="middle" font-size="12" '
            f'fill="{stroke}">{escape(note)}</text>',
        ]
        if i:
            mid = 1 + _BOX_H / 2
            parts.append(
                f'<line x1="{x - _GAP + 2}" y1="{mid}" x2="{x - 8}" y2="{mid}" '
                'stroke="#59636e" stroke-width="2"/>'
                f'<path d="M{x - 9},{mid - 5} L{x - 2},{mid} L{x - 9},{mid + 5} z" fill="#59636e"/>'
            )
    notes = []
    coverage = (case.get("details") or {}).get("coverage") or {}
    if isinstance(coverage, Mapping) and "matched" in coverage:
        notes.append(
            f"{escape(str(coverage.get('matched')))} of {escape(str(coverage.get('essential')))} "
            "essential states reached in order"
        )
    if total > len(positions):
        notes.append(
            f"the first {len(positions)} of {total} states drawn (a drawing shows at most "
            f"{MAX_STATES_DRAWN})"
        )
    if notes:
        parts.append(
            f'<text x="1" y="{_BOX_H + 20}" font-size="12" fill="#59636e">{"; ".join(notes)}</text>'
        )
    parts.append("</svg>")
    return "".join(parts)
