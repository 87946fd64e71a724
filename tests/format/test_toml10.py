"""A manifest is TOML 1.0: TOML 1.1's additions, which tomli reads from its 2.3, are named
(FORMAT.md, "The manifest"); strings and comments that merely look like them are not."""

from __future__ import annotations

import pytest
import tomli

from bundler.format.toml10 import feature_of_1_1, integer_beyond_64_bits


@pytest.mark.parametrize(
    ("text", "feature"),
    [
        ("x = {a = 1,}", "trailing comma"),
        ("x = {a = 1, }", "trailing comma"),
        ("x = {a = 1,\nb = 2}", "several lines"),
        ("x = {a = 1 # c\n}", "several lines"),
        ('x = "a\\e"', "\\e"),
        ('x = """a\\x41"""', "\\x"),
        ("x = 07:32", "without seconds"),
        ("x = 1979-05-27T07:32", "without seconds"),
    ],
)
def test_a_toml_1_1_feature_is_named(text: str, feature: str) -> None:
    tomli.loads(text)  # (what the reader accepts)
    found = feature_of_1_1(text)
    assert found is not None and feature in found


@pytest.mark.parametrize(
    "text",
    [
        'x = "{a = 1,}"',
        "x = '{' # ,}",
        'x = """a,}\n{b"""',
        "x = 'a\\e'",
        'x = "a\\\\e"',
        "x = '''a\\x41'''",
        'x = "12:30"',
        "x = 1979-05-27T07:32:00-07:00",
        "x = 07:32:00",
        "x = {a = [1,\n2]}",
        'x = {a = """x\ny"""}',
        "x = [1,\n2,\n]",
        '"12:30" = 1',
        "# {,} 07:32\nx = 1",
    ],
)
def test_toml_1_0_is_not_refused(text: str) -> None:
    tomli.loads(text)
    assert feature_of_1_1(text) is None


@pytest.mark.parametrize(
    ("text", "beyond"),
    [
        ("x = 9223372036854775807", False),
        ("x = -9223372036854775808", False),
        ("x = 9223372036854775808", True),
        ("x = -9223372036854775809", True),
        ("x = 0xFFFF_FFFF_FFFF_FFFF", True),
        ("x = 0x7FFF_FFFF_FFFF_FFFF", False),
        ('x = "99999999999999999999999"', False),
        ("x = [[{a = 99999999999999999999999}]]", True),
    ],
)
def test_an_integer_beyond_64_bits_is_named(text: str, beyond: bool) -> None:
    found = integer_beyond_64_bits(text, tomli.loads(text))
    assert (found is not None) == beyond
