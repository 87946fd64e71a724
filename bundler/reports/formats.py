"""The JSON report in any of the file formats, by name: the one dispatch that ``verify``
(``--json``, ``--markdown``, ``--junit``, ``--html``) and ``report -f`` share.

Each renderer is imported only when its format is asked for.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from bundler.errors import UNSAFE_ABOVE_C0

if TYPE_CHECKING:
    from bundler.reports.view import ReportView

# format -> its name in a sentence ("cannot write the JUnit report to ...")
FORMATS = {"markdown": "Markdown", "html": "HTML", "junit": "JUnit", "json": "JSON"}

# a file name's extension -> the format such a file holds (an output named so is that format)
SUFFIXES = {
    ".md": "markdown",
    ".markdown": "markdown",
    ".html": "html",
    ".htm": "html",
    ".xml": "junit",
    ".json": "json",
}


def format_of_name(name: str) -> str | None:
    """The report format a file name's extension says (``x.html``: html), or None."""
    lowered = name.lower()
    return next((fmt for suffix, fmt in SUFFIXES.items() if lowered.endswith(suffix)), None)


def format_problem(name: str, fmt: str, option: str) -> str | None:
    """Why writing ``fmt`` to a file called ``name`` would mislead (its extension says
    another format), or None: a Markdown report in ``x.html`` opens as a broken page."""
    said = format_of_name(name)
    if said is None or said == fmt:
        return None
    ends = sorted(s for s, f in SUFFIXES.items() if f == fmt)
    return (
        f"{option} {name}: its extension says {FORMATS[said]}, but this writes {FORMATS[fmt]}; "
        f"name it ...{' or ...'.join(ends)}, or ask for the format its name says"
    )


# JSON escapes C0 controls itself; the others occur only inside strings
_UNSAFE_IN_JSON = re.compile(f"[{UNSAFE_ABOVE_C0}]")


def json_text(data: Any) -> str:
    """JSON as every command writes it: indented, UTF-8 as is, one final newline. Every
    number is finite JSON (a NaN raises ValueError: a bug, never a file no JSON reader
    takes), and control and bidirectional characters are ``\\uXXXX`` escapes, so the
    file shown in a terminal or an editor hides nothing (read back, the text is equal)."""
    text = json.dumps(data, indent=2, ensure_ascii=False, allow_nan=False)
    return _UNSAFE_IN_JSON.sub(lambda m: f"\\u{ord(m.group()):04x}", text) + "\n"


def render(fmt: str, report: ReportView | Mapping[str, Any], expect_identity: bool = False) -> str:
    """``report`` (the JSON report data, or its view, ``bundler.reports.view``) as ``fmt``,
    one of ``FORMATS``. ``expect_identity``: the verify command shown pins the bundle's
    identity. Give the view when one report is written in several formats: it is built once."""
    from bundler.reports.view import ReportView

    if fmt == "json":
        return json_text(report.source if isinstance(report, ReportView) else report)
    if fmt == "markdown":
        from bundler.reports.markdown import to_markdown

        return to_markdown(report, expect_identity=expect_identity)
    if fmt == "html":
        from bundler.reports.html import to_html

        return to_html(report, expect_identity=expect_identity)
    if fmt == "junit":
        from bundler.reports.junit import to_junit

        return to_junit(report)
    raise ValueError(f"no report format {fmt!r} (there are {', '.join(FORMATS)})")
