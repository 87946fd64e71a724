"""Renderers of the JSON report (``reprobundle-report/1``) into the other formats.

Every renderer here is pure: it takes the report *data* that ``bundler.report.to_json``
(or ``rejection_json``) returns, and gives text. Building from the data rather than
from the live objects means a stored JSON report renders exactly like a fresh one,
and each format cannot show anything the JSON report does not carry.

One module per output format: ``markdown`` (a report's appendix), ``junit`` (CI),
``html`` (one self-contained page), ``terminal`` (rich tables), ``difftext`` (the text
of ``reprobundle diff``).
"""

from __future__ import annotations

from .html import DETAILS_RENDERERS, register_details_renderer, to_html
from .junit import to_junit
from .markdown import to_markdown

__all__ = [
    "DETAILS_RENDERERS",
    "register_details_renderer",
    "to_html",
    "to_junit",
    "to_markdown",
]
