"""Golden tests: each example bundle's JSON, Markdown and JUnit reports equal the files
checked in under tests/golden/<bundle>/ (volatile fields normalised).

After an intended change, regenerate with `python tests/golden/regenerate.py [NAME]`
and review the diff before committing it.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.golden.regenerate import FILES, GOLDEN, example_sources, normalise, render

NAMES = [source.name for source in example_sources()]


def test_every_example_bundle_is_covered() -> None:
    assert NAMES, "no example bundle in bundles/"


@pytest.mark.parametrize("name", NAMES)
def test_reports_equal_the_golden_files(name: str, example_reports: dict[str, Any]) -> None:
    folder = GOLDEN / name
    missing = [f for f in FILES if not (folder / f).is_file()]
    assert not missing, (
        f"no golden {', '.join(missing)} for bundles/{name}: run "
        f"`python tests/golden/regenerate.py {name}` and review the files it writes"
    )
    fresh = render(normalise(example_reports[name]))
    for file_name in FILES:
        expected = (folder / file_name).read_text(encoding="utf-8")
        assert fresh[file_name] == expected, (
            f"{file_name} of bundles/{name} differs from tests/golden/{name}/{file_name}; "
            f"if the change is intended, run `python tests/golden/regenerate.py {name}`"
        )


def test_normalise_hides_only_volatile_fields(example_reports: dict[str, Any]) -> None:
    report = example_reports["quickstart"]
    normal = normalise(report)
    assert normal["bundle"]["identity"] == "0" * 64 != report["bundle"]["identity"]
    assert normal["verify_environment"]["python"] == "<python>"
    assert normal["cases"] == report["cases"] and normal["claims"] == report["claims"]
