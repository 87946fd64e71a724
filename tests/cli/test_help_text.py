"""Every command's ``--help`` is what ``tests/golden/help.txt`` records, byte for byte
(``tests/golden/regenerate_help.py`` says how to record an intended change)."""

from __future__ import annotations

from tests.golden.regenerate_help import HELP, recorded


def test_every_help_is_as_recorded() -> None:
    assert HELP.is_file(), "run `python tests/golden/regenerate_help.py` and review the file"
    expected = HELP.read_text(encoding="utf-8")
    found = recorded()
    if found != expected:
        changed = [
            section.partition("\n")[0]
            for section in found.split("=== ")
            if section and f"=== {section}" not in expected
        ]
        raise AssertionError(
            f"--help differs from tests/golden/help.txt for: {changed}; if intended, run "
            "`python tests/golden/regenerate_help.py` and review the diff"
        )
