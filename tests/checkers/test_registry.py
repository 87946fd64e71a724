"""The table that says which module holds each checker matches what the modules define."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
import types
from typing import Any

import pytest

import checkers


def test_every_checker_is_found_in_the_family_the_table_names() -> None:
    defined = {key: family for family in checkers.FAMILIES for key in checkers.defined_in(family)}
    assert defined == checkers.FAMILY_OF
    for key in checkers.FAMILY_OF:
        found = checkers.get(key)
        assert found is not None and found.key == key
    assert checkers.get("no-such-checker@1") is None
    assert checkers.get("structured-equal@9") is None


def test_asking_for_one_checker_loads_only_its_family() -> None:
    code = (
        "import sys, checkers; checkers.get('structured-equal@1'); "
        "print(sorted(m for m in sys.modules if m.startswith('checkers.')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "checkers.structured" in out.stdout
    assert "checkers.config_change" not in out.stdout


def test_two_checkers_with_one_key_in_a_family_are_refused(monkeypatch: Any) -> None:
    one = checkers.get("structured-equal@1")
    assert one is not None
    family = types.ModuleType("checkers.twice")
    family.first = one  # type: ignore[attr-defined]
    family.alias = one  # type: ignore[attr-defined]  # one checker under two names is fine
    monkeypatch.setitem(sys.modules, "checkers.twice", family)
    assert checkers.defined_in("twice") == {one.key: one}
    checkers.defined_in.cache_clear()
    family.second = dataclasses.replace(one, summary="another")  # type: ignore[attr-defined]
    with pytest.raises(RuntimeError, match="structured-equal@1 is registered twice"):
        checkers.defined_in("twice")


def test_one_key_defined_by_two_families_is_refused(monkeypatch: Any) -> None:
    one = checkers.get("structured-equal@1")
    assert one is not None
    family = types.ModuleType("checkers.twice")
    family.copy = dataclasses.replace(one, summary="another")  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "checkers.twice", family)
    monkeypatch.setattr(checkers, "FAMILIES", (*checkers.FAMILIES, "twice"))
    with pytest.raises(RuntimeError, match="structured-equal@1 is registered twice"):
        checkers.registry.__wrapped__()
