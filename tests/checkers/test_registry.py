"""A checker is declared once, in its module; the index that says where each lives, the
README's reference and the codes reference are generated from the declarations, and a
stale one fails here naming the command that regenerates it."""

from __future__ import annotations

import subprocess
import sys
import types
from typing import Any

import pytest

import checkers
from bundler import generate


def test_the_index_names_the_module_that_declares_each_checker() -> None:
    committed = generate.INDEX.read_text(encoding="utf-8")
    assert committed == generate.index_source(generate.declared()), (
        f"checkers/_index.py is stale: run {generate.COMMAND}"
    )
    for key, module in checkers.MODULE_OF.items():
        found = checkers.get(key)
        assert found is not None and found.key == key and found.module == module
    assert checkers.get("no-such-checker@1") is None
    assert checkers.get("structured-equal@9") is None


def test_the_readme_reference_is_generated_from_the_declarations() -> None:
    assert generate.README.read_text(encoding="utf-8") == generate.generated()[generate.README], (
        f"checkers/README.md's reference is stale: run {generate.COMMAND}"
    )


def test_a_new_checker_module_is_found_by_the_scan_and_stales_the_index(monkeypatch: Any) -> None:
    """Adding a checker is writing its module: the scan finds it and the committed
    index no longer matches, until it is regenerated."""
    one = checkers.get("structured-equal@1")
    assert one is not None
    module = types.ModuleType("checkers.structured.extra")

    def extra(inputs: Any, params: Any) -> Any:
        """Extra."""

    extra.__module__ = module.__name__
    module.extra = one._replace(version=99, function=extra)  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, module.__name__, module)
    found = generate.declared([*generate.modules(), module.__name__])
    assert found["structured-equal@99"] == "checkers.structured.extra"
    assert generate.index_source(found) != generate.INDEX.read_text(encoding="utf-8")


def test_asking_for_one_checker_loads_only_its_module() -> None:
    code = (
        "import sys, checkers; checkers.get('structured-equal@1'); "
        "print(sorted(m for m in sys.modules if m.startswith('checkers.')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "checkers.structured.checks" in out.stdout
    assert "checkers.config_change" not in out.stdout
    code = code.replace("structured-equal@1", "merge-reconstruct@1")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "checkers.config_change.merge" in out.stdout
    assert "checkers.config_change.writes" not in out.stdout


def test_two_checkers_with_one_key_in_a_module_are_refused(monkeypatch: Any) -> None:
    one = checkers.get("structured-equal@1")
    assert one is not None
    module = types.ModuleType("checkers.twice")
    module.first = one  # type: ignore[attr-defined]
    module.alias = one  # type: ignore[attr-defined]  # one checker under two names is fine
    monkeypatch.setitem(sys.modules, "checkers.twice", module)
    assert checkers.defined_in("checkers.twice") == {one.key: one}
    checkers.defined_in.cache_clear()
    module.second = one._replace(summary="another")  # type: ignore[attr-defined]
    with pytest.raises(RuntimeError, match="structured-equal@1 is registered twice"):
        checkers.defined_in("checkers.twice")
    checkers.defined_in.cache_clear()


def test_one_key_declared_by_two_modules_is_refused(monkeypatch: Any) -> None:
    one = checkers.get("structured-equal@1")
    assert one is not None
    module = types.ModuleType("checkers.structured.copy")

    def copy(inputs: Any, params: Any) -> Any:
        """Copy."""

    copy.__module__ = module.__name__
    module.copy = one._replace(function=copy)  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, module.__name__, module)
    with pytest.raises(RuntimeError, match="structured-equal@1 is registered twice"):
        generate.declared([*generate.modules(), module.__name__])
    checkers.defined_in.cache_clear()


def test_the_layout_lists_each_check_module_with_the_versions_it_declares() -> None:
    modules = generate.declared()
    text = generate.layout(modules)
    assert "merge.py: merge-reconstruct@1, @2" in text
    assert "models: report.py, tally.py, trials.py" in text  # model modules declare none
    with_new = generate.layout({**modules, "merge-reconstruct@9": "checkers.config_change.merge"})
    assert "merge.py: merge-reconstruct@1, @2, @9" in with_new  # a new version is listed


def test_the_counterexample_table_has_a_row_for_every_checker() -> None:
    table = generate.counterexamples(checkers.registry())
    for key, found in checkers.registry().items():
        assert f"`{key}`" in table
        first = " ".join((found.counterexample.__doc__ or "").split()[:4]).replace("``", "`")
        assert first in table, key


@pytest.mark.parametrize(
    ("begin", "end"),
    [
        (generate.LAYOUT_BEGIN, generate.LAYOUT_END),
        (generate.TABLE_BEGIN, generate.TABLE_END),
    ],
)
def test_a_hand_edited_layout_or_counterexample_table_is_stale(begin: str, end: str) -> None:
    readme = generate.README.read_text(encoding="utf-8")
    edited = generate.with_section(readme, begin, end, f"{begin}\nby hand\n{end}\n")
    modules = generate.declared()
    assert generate.readme_text(readme, modules) == readme  # the committed one is current
    assert generate.readme_text(edited, modules) == readme  # the hand edit is written over
