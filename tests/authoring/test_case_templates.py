"""Case templates (``each``) expand at build into ordinary cases; a claim may name them with
a ``*`` pattern; every mistake in a template is reported with its line. Also the source
messages that name the real problem and the fix."""

from __future__ import annotations

from pathlib import Path

import pytest

from bundler.authoring.foreach import expand_cases
from bundler.authoring.source import read_source
from bundler.errors import SourceError
from tests.helpers import REPO

CONFIG_EDITS = REPO / "bundles" / "config-edits"

HEAD = """name: t
version: 1.0.0
title: templates
files: [inputs/**]
cases:
"""
CLAIMS = """claims:
  - id: c
    statement: s
    cases: {cases}
"""


def source(tmp_path: Path, cases: str, claim_cases: str = "[run-*, bad]") -> Path:
    folder = tmp_path / "src"
    (folder / "inputs").mkdir(parents=True)
    for name in ("run-1.yaml", "run-2.yaml", "expected.yaml", "bad.yaml"):
        (folder / "inputs" / name).write_text("a: 1\n" if name != "bad.yaml" else "a: 2\n")
    (folder / "bundle.yaml").write_text(HEAD + cases + CLAIMS.format(cases=claim_cases))
    return folder


TEMPLATE = """  - id: run-{n}
    checker: structured-equal@1
    inputs: {actual: "inputs/run-{n}.yaml", expected: inputs/expected.yaml}
    expect: pass
    each: [{n: 1}, {n: 2}]
  - id: bad
    checker: structured-equal@1
    inputs: {actual: inputs/bad.yaml, expected: inputs/expected.yaml}
    expect: fail
    expect_reasons: [content.changed]
"""


def problems_of(folder: Path) -> list[str]:
    with pytest.raises(SourceError) as caught:
        read_source(folder)
    return [str(p) for p in caught.value.problems]


def test_a_template_expands_into_ordinary_cases_and_a_pattern_names_them(tmp_path: Path) -> None:
    plan = read_source(source(tmp_path, TEMPLATE))
    cases = plan.document["cases"]
    assert [c["id"] for c in cases] == ["run-1", "run-2", "bad"]
    assert cases[1]["inputs"] == {"actual": "inputs/run-2.yaml", "expected": "inputs/expected.yaml"}
    assert all("each" not in c for c in cases)  # the manifest holds ordinary cases only
    assert plan.document["claims"][0]["cases"] == ["run-1", "run-2", "bad"]


def test_the_six_run_example_expands_to_five_runs_a_finding_and_a_control() -> None:
    plan = read_source(CONFIG_EDITS)
    cases = {c["id"]: c for c in plan.document["cases"]}
    assert list(cases) == [f"run-{n}" for n in range(1, 7)] + ["unedited-config-is-caught"]
    assert cases["run-6"]["kind"] == "finding"
    assert "kind" not in cases["unedited-config-is-caught"]  # control is the default
    assert plan.document["format"] == "reprobundle/1.2"


def test_a_value_without_its_placeholder_and_a_placeholder_without_a_value(
    tmp_path: Path,
) -> None:
    broken = TEMPLATE.replace("each: [{n: 1}, {n: 2}]", "each: [{n: 1}, {m: 2}]")
    found = problems_of(source(tmp_path, broken))
    assert "bundle.yaml:10: no value for {n} [case.each]" in found
    assert any("bundle.yaml:10: 'm' is not used: write {m}" in p for p in found), found


def test_a_template_needs_a_placeholder_in_its_id(tmp_path: Path) -> None:
    found = problems_of(source(tmp_path, TEMPLATE.replace("id: run-{n}", "id: run"), "[run, bad]"))
    assert any(
        p.startswith("bundle.yaml:6:") and "needs a placeholder in its id" in p for p in found
    ), found


def test_each_must_be_a_list_of_mappings(tmp_path: Path) -> None:
    found = problems_of(source(tmp_path, TEMPLATE.replace("[{n: 1}, {n: 2}]", "[1, 2]")))
    assert (
        found.count("bundle.yaml:10: each entry must be a mapping such as {n: 1} [case.each]") == 2
    )
    assert expand_cases([{"id": "x-{n}", "each": []}])[2][0][1] == "case.each"


def test_a_problem_of_an_expanded_case_names_the_template_line(tmp_path: Path) -> None:
    broken = TEMPLATE.replace('"inputs/run-{n}.yaml"', '"inputs/run-{n}.yml"')
    found = problems_of(source(tmp_path, broken))
    missing = [p for p in found if "does not exist in the source folder" in p]
    assert len(missing) == 2 and all(p.startswith("bundle.yaml:8:") for p in missing), found


def test_a_claim_pattern_that_matches_nothing(tmp_path: Path) -> None:
    found = problems_of(source(tmp_path, TEMPLATE, "[runs-*, bad]"))
    assert any("no case id matches 'runs-*'" in p for p in found), found


def test_expanded_templates_build_and_verify(tmp_path: Path) -> None:
    from bundler.authoring.build import build

    built = build(source(tmp_path, TEMPLATE), tmp_path / "t.bundle.tar.zst")
    assert [c.id for c in built.manifest.cases] == ["run-1", "run-2", "bad"]
    assert built.home.status == "supported"


# --- messages that name the real problem and the fix ----------------------------------


def test_an_unquoted_version_is_told_to_be_quoted(tmp_path: Path) -> None:
    folder = source(tmp_path, TEMPLATE)
    text = (folder / "bundle.yaml").read_text().replace("version: 1.0.0", "version: 1.0")
    (folder / "bundle.yaml").write_text(text)
    found = problems_of(folder)
    assert any(
        'YAML read 1.0 as a float, not as text; put it in quotes: version: "1.0.0"' in p
        and p.startswith("bundle.yaml:2:")
        for p in found
    ), found
    assert not any("is not of type" in p for p in found)


def test_a_checker_without_a_version_is_told_the_version(tmp_path: Path) -> None:
    folder = source(tmp_path, TEMPLATE.replace("structured-equal@1", "structured-equal", 1))
    found = problems_of(folder)
    assert any(
        "'structured-equal' needs a version: checker: structured-equal@2 "  # the newest
        "(see `reprobundle checkers structured-equal`)" in p
        for p in found
    ), found
    assert not any("does not match" in p for p in found)


def test_kind_belongs_to_a_case_expected_to_fail(tmp_path: Path) -> None:
    folder = source(
        tmp_path, TEMPLATE.replace("    expect: pass\n", "    expect: pass\n    kind: finding\n")
    )
    found = problems_of(folder)
    assert any("only a case that expects fail is a control or a finding" in p for p in found)


def test_a_template_of_too_many_cases_is_refused_before_it_is_expanded() -> None:
    from bundler.authoring import foreach

    rows = [{"n": n} for n in range(foreach.MAX_CASES + 1)]
    cases, _, problems = expand_cases([{"id": "run-{n}", "each": rows}])
    assert cases == [] and problems == [
        (("cases", 0, "each"), "case.each", f"more than {foreach.MAX_CASES} cases in all")
    ]
