"""A YAML input shared by many cases is parsed once (inputs._parse_yaml), and that changes
nothing a case can observe: each case gets its own copy, a file read under other rules is
read again under those rules, and changed bytes are parsed again."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pytest

from bundler.format.manifest import Case
from bundler.run import inputs
from checkers import get


def load(tmp_path: Path, checker: str, text: str) -> dict[str, Any]:
    """The loaded inputs of a state-unchanged case reading ``text`` as both documents."""
    (tmp_path / "state.yaml").write_text(text)
    (tmp_path / "other.yaml").write_text("fields: {h: x}\n")
    listed = {
        name: hashlib.sha256((tmp_path / name).read_bytes()).hexdigest()
        for name in ("state.yaml", "other.yaml")
    }
    found = get(checker)
    assert found is not None
    case = Case(
        id="c",
        checker=checker,
        inputs={"before": "state.yaml", "after": "other.yaml"},
        params={},
        expect="pass",
    )
    return inputs.load_inputs(found, case, tmp_path, listed)


def test_a_checker_that_changes_its_input_changes_nothing_another_case_reads(
    tmp_path: Path,
) -> None:
    text = "fields: {h: x, rules: [a, b]}\nowner: test_a_checker_that_changes\n"
    first = load(tmp_path, "state-unchanged@2", text)["before"]
    first["fields"]["rules"].append("c")
    first["owner"] = "someone else"
    again = load(tmp_path, "state-unchanged@2", text)["before"]
    assert again == {
        "fields": {"h": "x", "rules": ["a", "b"]},
        "owner": "test_a_checker_that_changes",
    }
    assert again is not first


def test_a_file_read_under_other_rules_is_read_again_under_those(tmp_path: Path) -> None:
    text = "fields: &f {h: x}\nsame: *f\nowner: test_a_file_read_under_other_rules\n"
    assert load(tmp_path, "state-unchanged@2", text)["before"]["same"] == {"h": "x"}
    with pytest.raises(Exception, match="aliases"):  # @1 refuses aliases, remembered or not
        load(tmp_path, "state-unchanged@1", text)


def test_changed_bytes_are_parsed_again(tmp_path: Path) -> None:
    assert load(tmp_path, "state-unchanged@2", "n: 1\n")["before"] == {"n": 1}
    assert load(tmp_path, "state-unchanged@2", "n: 2\n")["before"] == {"n": 2}


def test_only_small_files_are_kept_and_only_a_few(tmp_path: Path) -> None:
    inputs._PARSED.clear()  # what earlier tests of this process left (a list, say)
    big = "k: " + "x" * inputs._PARSED_CHARACTERS + "\n"
    load(tmp_path, "state-unchanged@2", big)
    assert all(len(value.get("k", "")) < 1000 for value in inputs._PARSED.values())
    for n in range(40):
        load(tmp_path, "state-unchanged@2", f"n: {n}\n")
    assert len(inputs._PARSED) <= 16


def test_a_small_file_that_aliases_make_large_is_not_kept(tmp_path: Path) -> None:
    row = "[" + ", ".join(["1"] * 100) + "]"
    table = "[" + ", ".join(["*r"] * 100) + "]"
    text = f"r: &r {row}\nt: &t {table}\nall: [*t, *t, *t]\nowner: test_a_small_file_that\n"
    loaded = load(tmp_path, "state-unchanged@2", text)["before"]
    assert len(loaded["all"]) == 3 and len(loaded["all"][0]) == 100  # read, aliases expanded
    assert not any(
        isinstance(value, dict) and value.get("owner") == "test_a_small_file_that"
        for value in inputs._PARSED.values()
    )
