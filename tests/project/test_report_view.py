"""One report view, built once; every renderer only lays it out (issue 44, item 6).

Read from the code's own imports and calls (an AST scan: nothing is imported or run):

- the renderers of a verification (``RENDERERS``) take a ``ReportView`` and import from
  ``bundler.reports.common`` only its constant words (``WORDS``): none calls a function
  that derives a fact from the report's data (the verdict line, the counts, the
  integrity, signature, withheld or pre-registration texts, a case's outcome in words);
  the view (``bundler.reports.view``) derives each once;
- outside the view, a module imports from ``bundler.reports.common`` only what
  ``ALLOWED`` lists for it, with the reason: a new caller of a derivation is a renderer
  re-deriving what the view holds, or a new entry in this table.

Each rule is tried on a planted violation, so that it cannot pass by finding nothing.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
COMMON = "bundler.reports.common"
VIEW = "bundler.reports.view"

# the modules that lay out a verification's report; each takes the view
RENDERERS = {
    "bundler.reports.text": "to_text",
    "bundler.reports.terminal": "render",
    "bundler.reports.markdown": "to_markdown",
    "bundler.reports.html": "to_html",
    "bundler.reports.junit": "to_junit",
}

# the constant words a renderer shows as they are (titles, fixed sentences)
WORDS = frozenset({"KIND_WORDS", "PREREGISTRATION_TITLE", "WHAT_IT_SHOWS", "WITHHELD_TITLE"})

# every other module that imports from common, and what (the view itself takes anything)
ALLOWED: Mapping[str, frozenset[str]] = {
    # the claims' "verdicts" field of the JSON report: the words the view shows
    "bundler.reports.document": frozenset({"verdicts_text"}),
    # build's "verified at home" line and the archive's history of a claim: not a report
    "bundler.cli.build": frozenset({"verdicts_text"}),
    "bundler.store.reverify": frozenset({"verdicts_text"}),
    # a stored report's signature words said to be the report's, before it is rendered
    "bundler.cli.report": frozenset({"as_stated"}),
}


def module_sources(root: Path = REPO) -> dict[str, str]:
    out = {}
    for path in sorted((root / "bundler").rglob("*.py")):
        parts = list(path.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path.read_text(encoding="utf-8")
    return out


def common_names(source: str) -> Iterator[str]:
    """Each name ``source`` takes from ``bundler.reports.common``: imported from it, or
    reached as an attribute of the module imported whole (``common.verdict_line``)."""
    tree = ast.parse(source)
    aliases = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == COMMON:
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module == "bundler.reports":
            for alias in node.names:
                if alias.name == "common":
                    aliases.add(alias.asname or "common")
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == COMMON:
                    aliases.add(alias.asname or COMMON)
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and ast.unparse(node.value) in aliases:
            yield node.attr


def entry_takes_the_view(source: str, entry: str) -> bool:
    """Whether the renderer's entry function's first parameter is annotated with
    ``ReportView`` and the function makes its view with ``as_view``."""
    for node in ast.parse(source).body:
        if isinstance(node, ast.FunctionDef) and node.name == entry:
            first = node.args.args[0].annotation if node.args.args else None
            calls = {ast.unparse(n.func) for n in ast.walk(node) if isinstance(n, ast.Call)}
            return first is not None and "ReportView" in ast.unparse(first) and "as_view" in calls
    return False


def problems(sources: Mapping[str, str]) -> list[str]:
    """Every import of a derivation from common outside the view, and every renderer
    whose entry does not take the view."""
    out = []
    for module, source in sorted(sources.items()):
        if module in (COMMON, VIEW) or "common" not in source:  # no way to reach it
            continue
        allowed = WORDS if module in RENDERERS else ALLOWED.get(module, frozenset())
        out += [
            f"{module} takes {name} from {COMMON}: "
            + (
                "a renderer lays out the view (bundler.reports.view) and derives nothing"
                if module in RENDERERS
                else "derived facts come from the view (or list the use in ALLOWED, with why)"
            )
            for name in dict.fromkeys(common_names(source))
            if name not in allowed
        ]
    for module, entry in RENDERERS.items():
        if module in sources and not entry_takes_the_view(sources[module], entry):
            out.append(f"{module}.{entry} does not take a ReportView (made with as_view)")
    return out


def test_renderers_lay_out_the_view_and_derive_nothing_from_common() -> None:
    found = module_sources()
    assert set(RENDERERS) <= set(found), "a renderer listed here was moved or renamed"
    assert problems(found) == []


def test_each_allowed_use_of_common_is_still_made() -> None:
    """An entry of ``ALLOWED`` that nothing uses any more is dropped, so the table stays
    the list of what is true."""
    found = module_sources()
    for module, names in ALLOWED.items():
        assert names <= set(common_names(found[module])), module


GOOD_RENDERER = """
from bundler.reports.common import WHAT_IT_SHOWS
from bundler.reports.view import ReportView, as_view

def to_text(report: ReportView | dict, verbose: bool = False) -> str:
    view = as_view(report)
    return view.verdict_line + WHAT_IT_SHOWS
"""


@pytest.mark.parametrize(
    ("planted", "said"),
    [
        (
            GOOD_RENDERER.replace("WHAT_IT_SHOWS\n", "WHAT_IT_SHOWS, verdict_line\n", 1),
            "bundler.reports.text takes verdict_line from bundler.reports.common",
        ),
        (
            GOOD_RENDERER + "\nfrom bundler.reports import common\nX = common.verdicts_text([])\n",
            "bundler.reports.text takes verdicts_text from bundler.reports.common",
        ),
        (
            GOOD_RENDERER + "\nimport bundler.reports.common as c\nY = c.findings({})\n",
            "bundler.reports.text takes findings from bundler.reports.common",
        ),
        (
            GOOD_RENDERER.replace("view = as_view(report)", "view = report"),
            "bundler.reports.text.to_text does not take a ReportView",
        ),
        (
            GOOD_RENDERER.replace("report: ReportView | dict", "report: dict"),
            "bundler.reports.text.to_text does not take a ReportView",
        ),
    ],
)
def test_a_renderer_that_derives_a_fact_itself_is_found(planted: str, said: str) -> None:
    found = module_sources()
    assert problems(found) == []
    found["bundler.reports.text"] = planted
    assert any(p.startswith(said) for p in problems(found)), problems(found)


def test_a_module_outside_the_table_that_calls_a_derivation_is_found() -> None:
    found = module_sources()
    found["bundler.cli.ci"] += "\nfrom bundler.reports.common import result_words\n"
    assert problems(found) == [
        "bundler.cli.ci takes result_words from bundler.reports.common: derived facts come "
        "from the view (or list the use in ALLOWED, with why)"
    ]
