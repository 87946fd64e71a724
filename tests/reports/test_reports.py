"""The report formats: Markdown for a report's appendix, JUnit XML for CI, the HTML page,
the versioned JSON report schema and the `report` command. (The HTML page in a real
browser: tests/reports/test_html_browser.py; goldens: tests/reports/test_golden_reports.py.)"""

from __future__ import annotations

import copy
import html
import json
import re
from pathlib import Path
from typing import Any

import pytest
import xmlschema
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bundler.cli import main
from bundler.container.extract import extract
from bundler.errors import BundleRejected, one_line
from bundler.reports.document import rejection_json, to_json
from bundler.reports.drawings import DETAILS_RENDERERS, register_details_renderer
from bundler.reports.html import environment_rows, to_html
from bundler.reports.junit import to_junit
from bundler.reports.markdown import to_markdown
from bundler.reports.schema import read_report, schema_problems
from bundler.run.verify import verify
from tests.helpers import REPO, edit_manifest

JUNIT = xmlschema.XMLSchema(str(REPO / "tests" / "schemas" / "junit.xsd"))


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture(scope="module")
def supported(quickstart_bundle: Path) -> dict[str, Any]:
    return to_json(verify(quickstart_bundle))


@pytest.fixture(scope="module")
def contradicted(
    quickstart_bundle: Path, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, Any]:
    def flip(doc: dict[str, Any]) -> None:
        doc["cases"][1]["expect"] = "pass"  # dropped-rule-is-caught now expects pass
        del doc["cases"][1]["expect_reasons"]

    target = tmp_path_factory.mktemp("flip") / "flipped.bundle.tar.gz"
    return to_json(verify(edit_manifest(quickstart_bundle, target, flip)))


@pytest.fixture(scope="module")
def inconclusive(
    quickstart_bundle: Path, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, Any]:
    def unknown_checker(doc: dict[str, Any]) -> None:
        doc["cases"][2]["checker"] = "no-such-checker@1"

    target = tmp_path_factory.mktemp("inc") / "inconclusive.bundle.tar.gz"
    return to_json(verify(edit_manifest(quickstart_bundle, target, unknown_checker)))


@pytest.fixture(scope="module")
def rejected(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    bad = tmp_path_factory.mktemp("rej") / "garbage.bundle.tar.gz"
    bad.write_bytes(b"not a bundle")
    with pytest.raises(BundleRejected) as caught:
        verify(bad)
    return rejection_json(caught.value, 3)


# --- the JSON report schema ---------------------------------------------------------


def test_every_kind_of_report_follows_the_schema(
    supported: dict[str, Any],
    contradicted: dict[str, Any],
    inconclusive: dict[str, Any],
    rejected: dict[str, Any],
) -> None:
    for report in (supported, contradicted, inconclusive, rejected):
        assert schema_problems(json.loads(json.dumps(report))) == []
    assert [supported["result"], contradicted["result"], inconclusive["result"]] == [
        "supported",
        "contradicted",
        "inconclusive",
    ]


def test_report_with_an_unknown_field_breaks_the_schema(supported: dict[str, Any]) -> None:
    report = {**supported, "surprise": 1}
    assert [p.where for p in schema_problems(report)] == ["(top level)"]


def test_report_whose_claim_names_a_missing_case_is_refused(supported: dict[str, Any]) -> None:
    report = copy.deepcopy(supported)
    report["claims"][0]["cases"].append("ghost")
    problems = schema_problems(report)
    assert [(p.where, p.code) for p in problems] == [("claims[0].cases[2]", "report.unknown_case")]


def test_report_whose_headline_contradicts_its_claims_is_refused(
    contradicted: dict[str, Any],
) -> None:
    """Defect 5 of issue 43: a report saying ``result: supported`` over a contradicted
    claim was rendered as "Result: every claim supported: 0 of 1 claims supported ...
    1 diverged" without a word."""
    report = copy.deepcopy(contradicted)
    report["result"], report["exit_code"] = "supported", 0
    problems = schema_problems(report)
    assert [(p.where, p.code) for p in problems] == [("result", "report.inconsistent")]
    assert "the claims make it contradicted" in problems[0].message
    with pytest.raises(BundleRejected) as caught:
        read_report(json.dumps(report).encode(), "r.json")
    assert "report.inconsistent" in caught.value.diagnostics()
    assert "is a JSON report that contradicts itself" in caught.value.diagnostics()


def test_report_whose_counts_contradict_its_cases_is_refused(
    supported: dict[str, Any], contradicted: dict[str, Any]
) -> None:
    report = copy.deepcopy(supported)
    report["claims"][0]["reproduced"] -= 1
    report["claims"][0]["diverged"] += 1
    assert [p.where for p in schema_problems(report)] == [
        "claims[0].reproduced",
        "claims[0].diverged",
    ]
    report = copy.deepcopy(contradicted)
    claim = next(c for c in report["claims"] if c["status"] == "contradicted")
    claim["status"] = "inconclusive"
    report["result"], report["exit_code"] = "inconclusive", 4
    assert "a claim is contradicted exactly when one of its cases diverged" in " ".join(
        p.message for p in schema_problems(report)
    )
    report = copy.deepcopy(supported)
    report["exit_code"] = 1
    assert [p.where for p in schema_problems(report)] == ["exit_code"]


def test_stored_report_with_duplicate_keys_is_refused() -> None:
    from bundler.errors import BundleRejected

    with pytest.raises(BundleRejected) as caught:
        read_report(b'{"result": "error", "result": "supported"}', "r.json")
    assert "duplicate key 'result'" in caught.value.diagnostics()


# --- Markdown -----------------------------------------------------------------------


def test_markdown_names_identity_command_denominators_and_scope(supported: dict[str, Any]) -> None:
    text = to_markdown(supported)
    identity = supported["bundle"]["identity"]
    assert f"`sha256:{identity}`" in text
    assert f"reprobundle verify {supported['bundle']['file']}\n" in text
    assert "| `accepts-equivalent-content`: A candidate" in text
    assert (
        "| **supported** | 2 of 2 verdicts reproduced (1 pass, 1 fail as expected: 1 control) "
        "| 0 | 1 |"
    ) in text
    assert (
        "| **supported** | 3 of 3 verdicts reproduced (1 pass, 2 fail as expected: 2 controls) "
        "| 0 | 2 |"
    ) in text
    assert "does not mean the system or model that produced the inputs would produce them" in text
    assert "Signatures | unsigned" in text


def test_markdown_pins_the_identity_when_the_verifier_can(supported: dict[str, Any]) -> None:
    text = to_markdown(supported, expect_identity=True)
    assert f"--expect-manifest-sha256 {supported['bundle']['identity']}" in text


def test_markdown_states_what_is_not_supported(
    contradicted: dict[str, Any], inconclusive: dict[str, Any]
) -> None:
    text = to_markdown(contradicted)
    assert "**Result: a claim is contradicted**" in text
    assert "| **contradicted** | 1 of 2 verdicts reproduced (1 pass), 1 diverged | 0 | 0 |" in text
    assert "contradicted: 1 of 2 cases reproduced; 1 diverged (dropped-rule-is-caught)" in text
    text = to_markdown(inconclusive)
    assert (
        "| **inconclusive** | 2 of 3 verdicts reproduced (1 pass, 1 fail as expected: 1 control), "
        "1 inconclusive | 1 | 2 |" in text
    )


def test_markdown_cannot_be_broken_by_a_statement(supported: dict[str, Any]) -> None:
    report = copy.deepcopy(supported)
    report["claims"][0]["statement"] = "a | b\n| --- |\n<script>x</script> `code`"
    line = next(x for x in to_markdown(report).splitlines() if "accepts-equivalent" in x)
    assert line.count("|") - line.count("\\|") == 6  # the row keeps its five cells
    assert "<script>" not in line and "\\<script\\>" in line


def test_markdown_of_a_rejection_lists_the_problems(rejected: dict[str, Any]) -> None:
    text = to_markdown(rejected)
    assert "the bundle was rejected: nothing ran" in text
    assert "(`archive.not_compressed_tar`)" in text


# --- JUnit --------------------------------------------------------------------------


def suites(xml: str) -> dict[str, Any]:
    return JUNIT.to_dict(xml)  # type: ignore[no-any-return]


@pytest.mark.parametrize("kind", ["supported", "contradicted", "inconclusive", "rejected"])
def test_junit_follows_the_junit_schema(kind: str, request: pytest.FixtureRequest) -> None:
    xml = to_junit(request.getfixturevalue(kind))
    JUNIT.validate(xml)


def test_junit_counts_each_case_once_in_a_suite_per_claim(supported: dict[str, Any]) -> None:
    data = suites(to_junit(supported))
    names = [s["@name"] for s in data["testsuite"]]
    assert names == [
        "quickstart-1.0.0.accepts-equivalent-content",
        "quickstart-1.0.0.order-and-types-matter",
    ]
    # reformatted-candidate-passes backs both claims: counted in the first only
    assert [len(s["testcase"]) for s in data["testsuite"]] == [2, 2]
    assert (data["@tests"], data["@failures"], data["@errors"]) == (4, 0, 0)
    assert int(data["@tests"]) == len(supported["cases"])
    second = {p["@name"]: p["@value"] for p in data["testsuite"][1]["properties"]["property"]}
    assert second["claim.case_counted_in"] == (
        "reformatted-candidate-passes (quickstart-1.0.0.accepts-equivalent-content)"
    )
    properties = {p["@name"]: p["@value"] for p in data["testsuite"][0]["properties"]["property"]}
    assert properties["bundle.identity"] == f"sha256:{supported['bundle']['identity']}"


def test_junit_diverged_is_a_failure_with_reasons(contradicted: dict[str, Any]) -> None:
    data = suites(to_junit(contradicted))
    first = data["testsuite"][0]
    assert (first["@failures"], first["@errors"]) == (1, 0)
    failed = next(c for c in first["testcase"] if "failure" in c)
    assert failed["@name"] == "dropped-rule-is-caught"
    assert failed["failure"]["@message"].startswith("expected pass, observed fail")
    assert "content.removed: decisions[3]" in failed["failure"]["$"]


def test_junit_inconclusive_is_an_error(inconclusive: dict[str, Any]) -> None:
    data = suites(to_junit(inconclusive))
    errored = [c for s in data["testsuite"] for c in s["testcase"] if "error" in c]
    assert [c["@name"] for c in errored] == ["reordered-rules-are-caught"]
    assert "no checker no-such-checker@1" in errored[0]["error"]["@message"]


def test_junit_code_not_allowed_is_skipped_not_errored(inconclusive: dict[str, Any]) -> None:
    report = copy.deepcopy(inconclusive)
    case = next(c for c in report["cases"] if c["outcome"] == "inconclusive")
    case["reasons"] = [{"code": "code.not_allowed", "message": "needs --allow-code", "details": {}}]
    data = suites(to_junit(report))
    assert data["@skipped"] == 1 and data["@errors"] == 0


def test_junit_survives_control_characters_in_messages(contradicted: dict[str, Any]) -> None:
    report = copy.deepcopy(contradicted)
    case = next(c for c in report["cases"] if c["outcome"] == "diverged")
    case["explanation"] = "bell \x07 nul \x00 and \ud800"
    xml = to_junit(report)
    JUNIT.validate(xml)
    assert "bell \\x07 nul \\x00" in xml


# --- HTML (static checks; the browser test renders it) -------------------------------


def test_html_has_no_external_reference_and_forbids_fetches(supported: dict[str, Any]) -> None:
    page = to_html(supported)
    assert "<script" not in page.lower()
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:|//)""", page, re.I)
    assert "@import" not in page and "url(" not in page
    assert "default-src 'none'" in page


def test_html_escapes_text_from_the_bundle(supported: dict[str, Any]) -> None:
    report = copy.deepcopy(supported)
    report["claims"][0]["statement"] = '<img src=x onerror="alert(1)">'
    report["bundle"]["title"] = "</title><script>alert(1)</script>"
    page = to_html(report)
    assert "<img src=x" not in page and "&lt;img src=x onerror=&quot;alert(1)&quot;&gt;" in page
    assert "<script>alert" not in page


def test_html_highlights_environment_differences(supported: dict[str, Any]) -> None:
    report = copy.deepcopy(supported)
    report["build_environment"]["python"] = "3.0.0"
    rows = {key: (built, here) for key, built, here in environment_rows(report)}
    assert rows["python"] == ("3.0.0", report["verify_environment"]["python"])
    built, here = rows["libraries.deepdiff"]  # recorded at build and at verify
    assert built and here == report["verify_environment"]["libraries"]["deepdiff"]
    assert rows["checkers.structured-equal@1"] == ("built-in", "built-in")
    page = to_html(report)
    assert re.search(r'<tr class="differs"><th scope="row">python</th>', page)
    assert not re.search(r'<tr class="differs"><th scope="row">implementation</th>', page)


def test_details_renderer_draws_under_its_checkers_cases(supported: dict[str, Any]) -> None:
    seen: list[str] = []

    def draw(case: dict[str, Any]) -> str:
        seen.append(case["id"])
        return '<svg class="test-drawing" viewBox="0 0 10 10"><circle r="4"/></svg>'

    page = to_html(supported, renderers={"structured-equal": draw})
    assert seen == [c["id"] for c in supported["cases"]]
    assert page.count('<figure class="drawing"><svg class="test-drawing"') == 4


def test_a_failing_drawing_is_a_note_not_a_broken_page(supported: dict[str, Any]) -> None:
    def broken(case: dict[str, Any]) -> str:
        raise ValueError("no positions")

    page = to_html(supported, renderers={"structured-equal": broken})
    assert "(no drawing: ValueError: no positions)" in page
    assert page.rstrip().endswith("</html>")


def test_details_renderers_register_by_checker_name() -> None:
    @register_details_renderer("test-only-checker")
    def draw(case: dict[str, Any]) -> None:
        return None

    try:
        assert DETAILS_RENDERERS["test-only-checker"] is draw
    finally:
        del DETAILS_RENDERERS["test-only-checker"]


def test_html_of_a_rejection_names_the_problems(rejected: dict[str, Any]) -> None:
    page = to_html(rejected)
    assert "the bundle was rejected: nothing ran" in page and "archive.not_compressed_tar" in page


# --- the CLI ------------------------------------------------------------------------


def test_verify_writes_every_format(quickstart_bundle: Path, tmp_path: Path) -> None:
    out = {k: tmp_path / f"r.{k}" for k in ("json", "md", "xml", "html")}
    code, stdout, _ = run(
        "verify",
        str(quickstart_bundle),
        "-q",
        "--json",
        str(out["json"]),
        "--markdown",
        str(out["md"]),
        "--junit",
        str(out["xml"]),
        "--html",
        str(out["html"]),
    )
    assert (
        code == 0
        and stdout == "Result: every claim supported (2 of 2 claims supported); unsigned\n"
    )
    report = json.loads(out["json"].read_text())
    # this verifier has --expect-manifest-sha256, so the command shown pins the identity
    assert out["md"].read_text() == to_markdown(report, expect_identity=True)
    JUNIT.validate(str(out["xml"]))
    assert out["html"].read_text() == to_html(report, expect_identity=True)


def test_verify_refuses_two_outputs_on_stdout(quickstart_bundle: Path) -> None:
    code, _, err = run("verify", str(quickstart_bundle), "--json", "-", "--junit", "-")
    assert code == 2 and "only one output can go to stdout" in err


def test_rejected_bundle_still_writes_junit_for_ci(tmp_path: Path) -> None:
    bad = tmp_path / "bad.bundle.tar.gz"
    bad.write_bytes(b"\x1f\x8bnot really gzip")
    junit = tmp_path / "junit.xml"
    code, _, _ = run("verify", str(bad), "--junit", str(junit))
    assert code == 3
    data = suites(junit.read_text())
    assert data["@errors"] == 1 and data["testsuite"][0]["@name"] == "bundle"


def test_report_command_from_bundle_and_from_json_agree(
    quickstart_bundle: Path, tmp_path: Path
) -> None:
    code, from_bundle, _ = run("report", str(quickstart_bundle))
    assert code == 0 and from_bundle.startswith("### Reproducibility bundle: quickstart 1.0.0")
    stored = tmp_path / "r.json"
    run("verify", str(quickstart_bundle), "--json", str(stored), "-q")
    code, from_json, _ = run("report", str(stored))
    assert code == 0 and from_json == from_bundle
    code, _, err = run("report", str(stored), "-f", "html", "-o", str(tmp_path / "r.html"))
    assert code == 0 and "wrote" in err
    assert (tmp_path / "r.html").read_text().startswith("<!DOCTYPE html>")


def test_report_command_exit_code_follows_the_verification(
    quickstart_bundle: Path, tmp_path: Path
) -> None:
    def flip(doc: dict[str, Any]) -> None:
        doc["cases"][0]["expect"] = "fail"

    flipped = edit_manifest(quickstart_bundle, tmp_path / "f.bundle.tar.gz", flip)
    code, out, _ = run("report", str(flipped))
    assert code == 1 and "**contradicted**" in out


def test_report_command_refuses_a_file_that_is_not_a_report(tmp_path: Path) -> None:
    bad = tmp_path / "notes.json"
    bad.write_text('{"report_format": "reprobundle-report/1", "result": "supported"}')
    code, out, err = run("report", str(bad))
    assert code == 3 and out == ""  # neither a bundle nor a report: rejected, as verify does
    assert "'bundle' is a required property" in err and "Traceback" not in err


def test_report_command_of_a_rejected_bundle_exits_3(tmp_path: Path) -> None:
    bad = tmp_path / "bad.bundle.tar.gz"
    bad.write_bytes(b"\x1f\x8b\x08\x00garbage")
    code, out, _ = run("report", str(bad))
    assert code == 3 and "not verified" in out


def test_inspect_and_report_agree_on_identity(quickstart_bundle: Path, tmp_path: Path) -> None:
    extracted = extract(quickstart_bundle, tmp_path)
    _, out, _ = run("report", str(quickstart_bundle))
    assert f"sha256:{extracted.identity}" in out


# --- any text from a bundle, in every format ----------------------------------------


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(text=st.text(min_size=1, max_size=40))
def test_any_text_renders_safely_in_every_format(text: str, supported: dict[str, Any]) -> None:
    report = copy.deepcopy(supported)
    report["bundle"]["title"] = text
    report["claims"][0]["statement"] = text
    report["claims"][0]["limits"] = [text]
    report["cases"][1]["reasons"][0]["message"] = text
    report["cases"][1]["explanation"] = text
    JUNIT.validate(to_junit(report))
    markdown = to_markdown(report)
    row = next(x for x in markdown.splitlines() if x.startswith("| `accepts-equivalent"))
    assert len(re.findall(r"(?<!\\)\|", row)) == 6  # still five cells
    page = to_html(report)
    assert "<script" not in page.lower()
    assert html.escape(one_line(text), quote=True) in page
    assert page.count('<tr class="claim ') == len(report["claims"])


def test_the_docs_name_the_report_format_verify_writes() -> None:
    """Defect 9 of issue 43: the README said ``reprobundle-report/1.2`` and REPORT.md said a
    rejection is ``1.1`` while every report ``verify`` writes, a rejection too, is 1.3."""
    import re

    from bundler.reports.document import REPORT_FORMAT
    from tests.helpers import REPO

    for doc in ("README.md", "manifests/REPORT.md"):
        text = (REPO / doc).read_text("utf-8")
        stated = set(re.findall(r'`"?(reprobundle-report/1\.\d+)"?`', text))
        assert stated <= {REPORT_FORMAT, "reprobundle-report/1.1"} and REPORT_FORMAT in stated
        for line in text.splitlines():
            if "| `report_format` |" in line or "(format `reprobundle-report" in line:
                assert f"{REPORT_FORMAT}" in line, f"{doc}: {line}"


def test_html_says_what_controls_showed_in_words_with_params_only_to_tell_checks_apart(
    supported: dict[str, Any],
) -> None:
    """Issue 43 (the HTML report): "controls showed" printed each check's params as raw
    JSON (``inspect-metric@2 {"claimed": 0.8333333333333334, ...}``, or ``{}``)."""
    from bundler.reports.common import controls_words

    claim = {
        "controls_showed": [
            {"check": 'm@2 {"lists": "replace", "key": "name"}', "reasons": ["a"], "cases": ["x"]},
            {"check": 'm@2 {"lists": "by_key", "key": "name"}', "reasons": ["b"], "cases": ["y"]},
            {"check": "s@1 {}", "reasons": ["c"], "cases": ["z"]},
        ]
    }
    assert controls_words(claim) == [
        'The controls show that m@2 (with lists "replace") can fail: a (x).',
        'The controls show that m@2 (with lists "by_key") can fail: b (y).',
        "The controls show that s@1 can fail: c (z).",
    ]
    html = to_html(supported)  # a code stays whole: the sentence wraps at its spaces
    assert "The controls show that structured-equal@1 can fail: content.removed" in html
    assert "structured-equal@1 {}" not in html


def test_html_verify_line_allows_code_and_the_scope_sentence_is_said_once(
    supported: dict[str, Any],
) -> None:
    """Defect 9 of issue 43: the "Verify it" line of a bundle with its own code left out
    ``--allow-code`` (the command as shown would not run its cases), and the page said the
    fixed scope sentence twice (the scope and the footer)."""
    from bundler.reports.common import WHAT_IT_SHOWS

    html = to_html(supported)
    assert html.count(WHAT_IT_SHOWS) == 1
    assert "--allow-code" not in html
    with_code = {**supported, "bundled_code": {"allowed": False, "entries": []}}
    line = to_html(with_code).split("<dt>Verify it</dt>")[1].split("</dd>")[0]
    assert "--allow-code" in line.replace("<wbr>", "")
