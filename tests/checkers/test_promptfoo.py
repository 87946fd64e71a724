"""promptfoo-stats@1, promptfoo-assert@1 and `reprobundle import promptfoo`.

``tests/data/promptfoo/results.json`` was written by promptfoo 0.121.20 itself
(``npx promptfoo eval -c promptfooconfig.yaml -o results.json --no-cache``, offline, with
the custom provider ``flaky.js`` beside it; promptfoo is a 1.4 GB Node install, so the file
is committed rather than made at test time): 6 tests, 3 passed, 2 failed, 1 errored.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import checkers
from bundler.authoring.build import build
from bundler.cli import main
from bundler.errors import BuildRefused
from bundler.importers.promptfoo import import_promptfoo
from bundler.run.runner import run_checker
from checkers.api import COMMON_ERRORS, Verdict
from checkers.promptfoo.assertions import rerun_problem

DATA = Path(__file__).resolve().parent.parent / "data" / "promptfoo"
RESULTS = DATA / "results.json"
TOTALS = {"tests": 6, "successes": 3, "failures": 2, "errors": 1, "pass_rate": 0.5}


def run(key: str, data: bytes, **params: Any) -> Verdict:
    found = checkers.get(key)
    assert found is not None
    return run_checker(found, {"results": data}, params)


def one_row(output: Any, assertion: dict[str, Any], passed: bool) -> bytes:
    row = {
        "success": passed,
        "response": {"output": output},
        "gradingResult": {"componentResults": [{"pass": passed, "assertion": assertion}]},
    }
    return json.dumps({"results": {"version": 3, "results": [row]}}).encode()


def test_totals_of_a_real_file_are_recounted() -> None:
    verdict = run("promptfoo-stats@1", RESULTS.read_bytes(), claimed=TOTALS)
    assert verdict.status == "pass", verdict.message
    assert verdict.details["pass_rate_without_errors"] == pytest.approx(3 / 5)


def test_a_pass_rate_that_leaves_errors_out_of_the_denominator_fails() -> None:
    verdict = run("promptfoo-stats@1", RESULTS.read_bytes(), claimed={"pass_rate": 0.6})
    assert verdict.codes == ("promptfoo.count_mismatch",)
    assert "pass_rate: claimed 0.6, the rows give 0.5" in verdict.reasons[0].message


def test_every_deterministic_assertion_of_a_real_file_follows_from_its_output() -> None:
    verdict = run("promptfoo-assert@1", RESULTS.read_bytes())
    assert verdict.status == "pass", verdict.message
    assert verdict.details == {"rerun": 11, "not_rerun": {"javascript": 1}}


@pytest.mark.parametrize(
    ("output", "assertion", "passed"),
    [
        ("yes", {"type": "equals", "value": "yes"}, True),
        ("yes ", {"type": "equals", "value": "yes"}, False),
        ("Paris", {"type": "icontains", "value": "paris"}, True),
        ("Paris", {"type": "contains", "value": "paris"}, False),
        ("a b", {"type": "contains-all", "value": ["a", "c"]}, False),
        ("A b", {"type": "icontains-all", "value": ["a", "B"]}, True),
        ("a b", {"type": "contains-any", "value": ["c", "b"]}, True),
        ("Rome", {"type": "not-starts-with", "value": "Ro"}, False),
        ("ANSWER: 9", {"type": "regex", "value": r"ANSWER: \d+"}, True),
        ("answer: 9", {"type": "regex", "value": r"ANSWER: \d+"}, False),
        ('{"a": 1}', {"type": "is-json"}, True),
        ("NaN", {"type": "is-json"}, False),
        ("x", {"type": "not-contains", "value": "y"}, True),
    ],
)
def test_assertions_are_rerun_as_promptfoo_decides_them(
    output: str, assertion: dict[str, Any], passed: bool
) -> None:
    assert run("promptfoo-assert@1", one_row(output, assertion, passed)).status == "pass"
    verdict = run("promptfoo-assert@1", one_row(output, assertion, not passed))
    assert verdict.codes == ("promptfoo.assert_mismatch",)


@pytest.mark.parametrize(
    "assertion",
    [
        {"type": "llm-rubric", "value": "is polite"},
        {"type": "javascript", "value": "output.length > 3"},
        {"type": "contains", "value": "{{name}}"},
        {"type": "contains", "value": "x", "transform": "output.trim()"},
        {"type": "regex", "value": "end$"},
        {"type": "icontains", "value": "İstanbul"},
        {"type": "is-json", "value": {"type": "object"}},
        {"type": "contains-any", "value": "a, b"},
    ],
)
def test_what_is_not_reimplemented_is_counted_never_judged(assertion: dict[str, Any]) -> None:
    assert rerun_problem(assertion) is not None
    only = one_row("whatever", assertion, True)
    verdict = run("promptfoo-assert@1", only)
    assert (
        verdict.status == "error"
        and "only 0 assertion result(s) could be re-run" in verdict.message
    )


def test_unknown_results_version_is_refused_by_name() -> None:
    data = json.dumps({"results": {"version": 4, "results": []}}).encode()
    verdict = run("promptfoo-stats@1", data, claimed={"tests": 0})
    assert verdict.status == "error" and "results version 4 is not one" in verdict.message


@pytest.mark.parametrize(
    ("key", "params"),
    [
        ("promptfoo-stats@1", {"claimed": TOTALS}),
        ("promptfoo-stats@1", {"claimed": {"errors": 0}}),
        ("promptfoo-stats@1", {"claimed": {"failures": 3}}),
        ("promptfoo-stats@1", {"claimed": {"pass_rate": 1.0}}),
        ("promptfoo-stats@1", {"claimed": {"pass_rate": 0.25}}),
        ("promptfoo-assert@1", {}),
        ("promptfoo-assert@1", {"min_rerun": 1}),
    ],
)
def test_counterexample_makes_the_checker_fail_for_a_reason_of_its_own(
    key: str, params: dict[str, Any]
) -> None:
    found = checkers.get(key)
    assert found is not None and found.counterexample is not None
    full = {p.name: p.default for p in found.params if not p.required} | params
    inputs = found.counterexample(full)
    assert inputs is not None
    verdict = run_checker(found, inputs, params)
    assert verdict.status == "fail", verdict.message
    assert set(verdict.codes) <= set(found.reasons) and not set(verdict.codes) & set(COMMON_ERRORS)


def test_import_then_build_supports_both_claims(tmp_path: Path) -> None:
    imported = import_promptfoo(RESULTS, tmp_path / "source")
    assert imported.claims == ["pass-rate", "assertions"] and imported.notes == []
    assert (tmp_path / "source" / "inputs" / "results.json").read_bytes() == RESULTS.read_bytes()
    result = build(tmp_path / "source", tmp_path / "pf.bundle.tar.gz", 1700000000)
    assert result.home.status == "supported"
    claims = {c.claim.id: c.claim for c in result.home.claims}
    assert claims["pass-rate"].statement.startswith("3 of 6 tests passed (50.0%)")
    assert any("3/5 = 60.0%" in limit for limit in claims["pass-rate"].limits)
    assert any("javascript x1" in limit for limit in claims["assertions"].limits)


def test_stated_totals_that_disagree_with_the_rows_contradict_the_claim(tmp_path: Path) -> None:
    document = json.loads(RESULTS.read_text())
    document["results"]["stats"]["successes"] = 4  # the rows give 3
    (tmp_path / "edited.json").write_text(json.dumps(document))
    imported = import_promptfoo(tmp_path / "edited.json", tmp_path / "source")
    assert any(n.startswith("totals:") for n in imported.notes)
    with pytest.raises(BuildRefused) as refused:
        build(tmp_path / "source", tmp_path / "pf.bundle.tar.gz", 1700000000)
    bad = {(p.where, p.code) for p in refused.value.problems}
    assert ("claim pass-rate", "claim.contradicted") in bad
    assert ("claim assertions", "claim.contradicted") not in bad


def test_cli_import_promptfoo(tmp_path: Path) -> None:
    done = CliRunner().invoke(
        main, ["import", "promptfoo", str(RESULTS), "-o", str(tmp_path / "s")]
    )
    assert done.exit_code == 0, done.output
    assert "2 claims (pass-rate, assertions)" in done.output
    (tmp_path / "bad.json").write_text('{"results": {"version": 2, "results": []}}')
    bad = CliRunner().invoke(
        main, ["import", "promptfoo", str(tmp_path / "bad.json"), "-o", str(tmp_path / "t")]
    )
    assert bad.exit_code == 2 and "results version 2 is not one" in bad.output


def test_a_field_of_the_wrong_type_is_refused_or_ignored_never_a_traceback(tmp_path: Path) -> None:
    from bundler.errors import SourceError
    from tests.inspect_support import WRONG, paths_of

    original = json.loads(RESULTS.read_text())
    paths = [p for p in paths_of(original) if p[0] in ("results", "metadata", "config")][:120]
    refused = 0
    for i, path in enumerate(paths):
        mutant = json.loads(json.dumps(original))
        node = mutant
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = WRONG.get(type(node[path[-1]]), {"x": 1})
        (tmp_path / f"m{i}.json").write_text(json.dumps(mutant))
        try:
            import_promptfoo(tmp_path / f"m{i}.json", tmp_path / f"s{i}")
        except SourceError:
            refused += 1
    assert refused >= 5
