"""The table that says which module holds each checker matches what the modules define."""

from __future__ import annotations

import subprocess
import sys

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
