"""Every problem in a bundle source is reported at once, with its line, never as a traceback."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from bundler.authoring.source import read_source
from bundler.errors import SourceError
from tests.helpers import copy_source


def problems_of(source: Path) -> list[str]:
    with pytest.raises(SourceError) as caught:
        read_source(source)
    return [str(p) for p in caught.value.problems]


def rewrite(source: Path, old: str, new: str) -> None:
    text = (source / "bundle.yaml").read_text()
    assert old in text, old
    (source / "bundle.yaml").write_text(text.replace(old, new, 1))


def test_quickstart_source_is_valid() -> None:
    plan = read_source(Path(__file__).parents[2] / "bundles" / "quickstart")
    assert "inputs/expected.yaml" in plan.files
    assert len(plan.document["cases"]) == 4


def test_unknown_key_gets_did_you_mean_and_line(tmp_path: Path) -> None:
    source = copy_source(tmp_path)
    rewrite(source, "    expect: pass", "    expcet: pass")
    found = problems_of(source)
    assert any(
        "unknown key 'expcet' (did you mean 'expect'?)" in p and "bundle.yaml:18" in p
        for p in found
    ), found


def test_all_problems_are_reported_together(tmp_path: Path) -> None:
    source = copy_source(tmp_path)
    rewrite(source, "id: dropped-rule-is-caught", "id: reformatted-candidate-passes")
    rewrite(source, "checker: structured-equal@1", "checker: structured-equl@1")
    rewrite(
        source,
        "cases: [reformatted-candidate-passes, dropped-rule-is-caught]",
        "cases: [reformatted-candidate-passes, no-such-case]",
    )
    found = "\n".join(problems_of(source))
    assert "case id 'reformatted-candidate-passes' is used twice" in found
    assert "unknown checker 'structured-equl@1' (did you mean 'structured-equal@1'?)" in found
    assert "no case has id 'no-such-case'" in found


def test_misspelt_case_id_and_reason_code_get_a_did_you_mean_and_nothing_else(
    tmp_path: Path,
) -> None:
    """Friction 5 of issue 43: no did-you-mean for case ids or reason codes
    (``content.remove``), and an unknown case id added a confusing
    ``claim.nothing_claimed`` (the claim's remaining cases being controls)."""
    source = copy_source(tmp_path)
    rewrite(source, "expect_reasons: [content.removed]", "expect_reasons: [content.remove]")
    rewrite(
        source,
        "cases: [reformatted-candidate-passes, dropped-rule-is-caught]",
        "cases: [reformatted-candidate-pases, dropped-rule-is-caught]",
    )
    found = "\n".join(problems_of(source))
    assert "reason 'content.remove' (did you mean 'content.removed'?)" in found
    assert (
        "no case has id 'reformatted-candidate-pases' "
        "(did you mean 'reformatted-candidate-passes'?)" in found
    )
    assert "claim.nothing_claimed" not in found


def test_case_naming_a_missing_file(tmp_path: Path) -> None:
    source = copy_source(tmp_path)
    rewrite(source, "inputs/candidate-reformatted.json", "inputs/nope.json")
    found = problems_of(source)
    assert any(
        "'inputs/nope.json' does not exist in the source folder" in p and "fix the path" in p
        for p in found
    ), found


def test_case_naming_a_file_no_pattern_takes(tmp_path: Path) -> None:
    source = copy_source(tmp_path)
    (source / "extra.json").write_text("{}")
    rewrite(source, "inputs/candidate-reformatted.json", "extra.json")
    found = problems_of(source)
    assert any(
        "'extra.json' exists but no pattern under files takes it; add it" in p for p in found
    ), found


def test_claim_without_negative_control_is_refused(tmp_path: Path) -> None:
    source = copy_source(tmp_path)
    rewrite(
        source,
        "cases: [reformatted-candidate-passes, dropped-rule-is-caught]",
        "cases: [reformatted-candidate-passes]",
    )
    found = problems_of(source)
    assert any(
        "has no negative control" in p and "accepts-equivalent-content" in p for p in found
    ), found


def test_waiver_makes_a_claim_without_negative_control_acceptable(tmp_path: Path) -> None:
    source = copy_source(tmp_path)
    rewrite(
        source,
        "cases: [reformatted-candidate-passes, dropped-rule-is-caught]",
        "cases: [reformatted-candidate-passes]\n    negative_control_waiver: shown elsewhere",
    )
    claims = {c["id"]: c for c in read_source(source).document["claims"]}
    assert claims["accepts-equivalent-content"]["negative_control_waiver"] == "shown elsewhere"


@pytest.mark.parametrize("path", ["/etc/passwd", "../outside.yaml", "inputs/../../x.yaml"])
def test_paths_escaping_the_source_are_refused(tmp_path: Path, path: str) -> None:
    source = copy_source(tmp_path)
    rewrite(source, "inputs/candidate-reformatted.json", path)
    found = "\n".join(problems_of(source))
    assert "absolute path" in found or "'..' component" in found


def test_glob_escaping_the_source_is_refused(tmp_path: Path) -> None:
    source = copy_source(tmp_path)
    rewrite(source, "  - inputs/**", "  - inputs/**\n  - ../**")
    assert any("'..' component" in p for p in problems_of(source))


def test_symlink_in_source_is_refused(tmp_path: Path) -> None:
    source = copy_source(tmp_path)
    secret = tmp_path / "secret.txt"
    secret.write_text("private")
    os.symlink(secret, source / "inputs" / "link.yaml")
    found = problems_of(source)
    assert any("'inputs/link.yaml' is a link" in p for p in found), found


def test_duplicate_yaml_key_is_refused_with_line(tmp_path: Path) -> None:
    source = copy_source(tmp_path)
    rewrite(source, "version: 1.0.0", "version: 1.0.0\nversion: 2.0.0")
    assert problems_of(source) == [
        "bundle.yaml:5: duplicate key 'version' (first on line 4) [yaml]"
    ]


def test_bad_version_and_expect_values(tmp_path: Path) -> None:
    source = copy_source(tmp_path)
    rewrite(source, "version: 1.0.0", "version: one")
    rewrite(source, "    expect: pass", "    expect: maybe")
    found = "\n".join(problems_of(source))
    assert "version: 'one' is not a semantic version MAJOR.MINOR.PATCH" in found
    assert "'maybe' is not one of ['pass', 'fail']" in found


def test_unknown_param_and_reason_are_refused(tmp_path: Path) -> None:
    source = copy_source(tmp_path)
    rewrite(
        source,
        "    expect_reasons: [content.removed]",
        "    expect_reasons: [content.vanished]\n    params: {tolerance: 1}",
    )
    found = "\n".join(problems_of(source))
    assert "structured-equal@1 has no param 'tolerance'" in found
    assert "never returns reason 'content.vanished'" in found


def test_unknown_role_and_missing_role(tmp_path: Path) -> None:
    source = copy_source(tmp_path)
    rewrite(
        source,
        "{actual: inputs/candidate-reformatted.json, expected: inputs/expected.yaml}",
        "{actual: inputs/candidate-reformatted.json, expectd: inputs/expected.yaml}",
    )
    found = "\n".join(problems_of(source))
    assert "needs input 'expected'" in found
    assert "has no input 'expectd'" in found


def test_reserved_file_name_is_refused(tmp_path: Path) -> None:
    source = copy_source(tmp_path)
    (source / "README.md").write_text("mine")
    rewrite(source, "  - inputs/**", "  - inputs/**\n  - README.md")
    assert any("'README.md' is reserved" in p for p in problems_of(source))


def test_missing_bundle_yaml(tmp_path: Path) -> None:
    with pytest.raises(SourceError, match=r"bundle\.yaml is missing"):
        read_source(tmp_path)


def test_not_yaml_at_all(tmp_path: Path) -> None:
    (tmp_path / "bundle.yaml").write_text("name: [unclosed\n")
    found = problems_of(tmp_path)
    assert found[0].startswith("bundle.yaml:2: not valid YAML")


def test_a_file_named_in_nfd_is_named_with_its_escapes_and_the_rename(tmp_path: Path) -> None:
    """Friction 6 of issue 43: "'inputs/été.yaml' is not in Unicode NFC" looked identical to
    the right name and gave no fix (macOS writes decomposed names)."""
    import unicodedata

    source = copy_source(tmp_path)
    nfd = unicodedata.normalize("NFD", "inputs/été.yaml")
    (source / "inputs" / "expected.yaml").rename(source / nfd)
    rewrite(source, "expected: inputs/expected.yaml", "expected: inputs/été.yaml")
    found = problems_of(source)
    assert len(found) == 1, found
    assert "'inputs/e\\u0301te\\u0301.yaml', a letter and a combining mark" in found[0]
    assert "not 'inputs/\\xe9t\\xe9.yaml'" in found[0]
    assert "os.rename(" in found[0] and 'u.normalize("NFC", n)' in found[0]


def test_a_yaml_tab_is_named_as_a_tab(tmp_path: Path) -> None:
    source = copy_source(tmp_path)
    text = (source / "bundle.yaml").read_text()
    (source / "bundle.yaml").write_text(text.replace("\nversion:", "\n\tversion:", 1))
    with pytest.raises(SourceError) as caught:
        read_source(source)
    assert "a tab where YAML reads indentation" in caught.value.diagnostics()
    assert "replace the tab with spaces" in caught.value.diagnostics()
