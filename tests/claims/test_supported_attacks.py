""" "Supported" must mean supported: each attack of issue 17, tried as a bundle author would.

Every test builds (or hand-edits) a bundle that today's rules would judge supported while
its evidence shows nothing, and checks it is refused at build, judged inconclusive at
verify, or printed so that it cannot pass for what it is not.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from bundler.authoring.build import build
from bundler.cli import main
from bundler.errors import BuildRefused, BundleRejected, SourceError
from bundler.run.verify import VerifyOptions, verify
from bundler.signatures.signfile import sign_bundle
from bundler.signatures.signing import new_private_key, public_of
from tests.helpers import REPO, copy_source, edit_manifest, read_entries, write_entries

Doc = dict[str, Any]


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.stdout, result.stderr


def hand_made(quickstart: Path, tmp: Path, edit: Callable[[Doc], None], **files: bytes) -> Path:
    """The quickstart bundle with its manifest edited by hand (hashes kept honest), as an
    author who skips `build` would make it."""
    return edit_manifest(quickstart, tmp / "hand-made.bundle.tar.gz", edit, files or None)


def claim_of(report_or_result: Any, claim_id: str) -> Any:
    return next(c for c in report_or_result.claims if c.claim.id == claim_id)


def one_claim(doc: Doc, cases: list[Doc], waiver: str | None = None) -> None:
    """Replace the cases and claims by ``cases`` and one claim over all of them."""
    doc["cases"] = cases
    claim: Doc = {
        "id": "the-claim",
        "statement": "The check holds.",
        "cases": [c["id"] for c in cases],
        "limits": [],
    }
    if waiver:
        claim["negative_control_waiver"] = waiver
    doc["claims"] = [claim]


TRACE = b"".join(
    json.dumps({"order": n, "method": "PUT", "path": "/api/v1/config", "status": 200}).encode()
    + b"\n"
    for n in (1, 2, 3)
)


def case(
    case_id: str, checker: str, inputs: Doc, params: Doc, expect: str, reasons: tuple[str, ...] = ()
) -> Doc:
    doc = {"id": case_id, "checker": checker, "inputs": inputs, "params": params, "expect": expect}
    return doc | ({"expect_reasons": list(reasons)} if reasons else {})


# -- 2. no vacuous params ------------------------------------------------------------------


def test_no_write_rules_that_match_every_request_as_a_read_pass_nothing(
    quickstart_bundle: Path, tmp_path: Path
) -> None:
    vacuous = {"writes": [], "reads": ["* *"]}

    def edit(doc: Doc) -> None:
        trace = {"trace": "inputs/trace.jsonl"}
        one_claim(
            doc,
            [
                case("three-puts-pass", "no-write-attempts@1", trace, vacuous, "pass"),
                case("puts-fail", "no-write-attempts@1", trace, {}, "fail"),
            ],
            waiver="none needed",
        )

    bundle = hand_made(quickstart_bundle, tmp_path, edit, **{"inputs/trace.jsonl": TRACE})
    result = verify(bundle)
    passing = next(r for r in result.cases if r.case.id == "three-puts-pass")
    assert passing.verdict.codes == ("params.vacuous",)
    assert passing.outcome == "inconclusive" and result.status == "inconclusive"


@pytest.mark.parametrize(
    ("checker", "params", "inputs"),
    [
        ("contamination@1", {"markers": ["(?!)"]}, {"transcripts": "inputs"}),
        ("contamination@1", {"markers": ["unavailable tool", "a^b"]}, {"transcripts": "inputs"}),
        (
            "trajectory-skeleton@1",
            {"normalise": [{"pattern": ".*", "replace": "screen"}]},
            {
                "references": ["inputs/expected.yaml", "inputs/candidate-reordered.yaml"],
                "trace": "inputs/candidate-dropped-rule.yaml",
            },
        ),
        (
            "no-write-attempts@1",
            {"writes": [], "reads": ["* *"]},
            {"trace": "inputs/expected.yaml"},
        ),
    ],
    ids=[
        "marker-that-never-matches",
        "one-dead-marker-among-live-ones",
        "normaliser-to-one-label",
        "every-request-a-read",
    ],
)
def test_vacuous_params_are_refused_at_build_naming_the_case(
    tmp_path: Path, checker: str, params: Doc, inputs: Doc
) -> None:
    source = copy_source(tmp_path)
    doc = (source / "bundle.yaml").read_text()
    extra = json.dumps([case("vacuous", checker, inputs, params, "pass")], ensure_ascii=False)
    doc = doc.replace("cases:\n", f"cases:\n  - {json.dumps(json.loads(extra)[0])}\n", 1)
    (source / "bundle.yaml").write_text(doc)
    with pytest.raises(SourceError) as caught:
        build(source, tmp_path / "out.bundle.tar.gz")
    found = [p for p in caught.value.problems if p.code == "case.params.vacuous"]
    assert found and "cannot fail under these params" in found[0].message, caught.value.problems


def test_trial_stats_tolerance_near_1_passes_no_claim_at_verify(
    quickstart_bundle: Path, tmp_path: Path
) -> None:
    failed = b"".join(
        json.dumps({"task": f"t{t}", "trial": n, "outcome": "failure", "config": {}}).encode()
        + b"\n"
        for t in range(1, 11)
        for n in (1, 2, 3)
    )
    params = {"k": 3, "claimed": {"pass_at_k": 0.95}, "tolerance": 0.99}

    def edit(doc: Doc) -> None:
        one_claim(
            doc,
            [case("pass-at-3", "trial-stats@1", {"trials": "inputs/t.jsonl"}, params, "pass")],
            waiver="w",
        )

    result = verify(hand_made(quickstart_bundle, tmp_path, edit, **{"inputs/t.jsonl": failed}))
    # a tolerance that wide is outside the documented range (below 0.05) before it is vacuous
    assert result.cases[0].verdict.codes == ("params.out_of_range",)
    assert result.status == "inconclusive"


# -- 1. controls control -------------------------------------------------------------------


def test_control_running_another_checker_does_not_count(
    quickstart_bundle: Path, tmp_path: Path
) -> None:
    def edit(doc: Doc) -> None:
        one_claim(
            doc,
            [
                case(
                    "equal",
                    "structured-equal@1",
                    {
                        "actual": "inputs/candidate-reformatted.json",
                        "expected": "inputs/expected.yaml",
                    },
                    {},
                    "pass",
                ),
                case(
                    "unrelated-control",
                    "no-write-attempts@1",
                    {"trace": "inputs/trace.jsonl"},
                    {},
                    "fail",
                ),
            ],
        )

    result = verify(hand_made(quickstart_bundle, tmp_path, edit, **{"inputs/trace.jsonl": TRACE}))
    claim = claim_of(result, "the-claim")
    assert claim.status == "inconclusive"
    assert "structured-equal@1 {}" in claim.why and "same params" in claim.why
    assert claim.uncontrolled == ("structured-equal@1 {}",)


def test_control_with_the_same_checker_but_other_params_does_not_count(
    quickstart_bundle: Path, tmp_path: Path
) -> None:
    trace = {"trace": "inputs/trace.jsonl"}

    def edit(doc: Doc) -> None:
        one_claim(
            doc,
            [
                case(
                    "no-writes",
                    "no-write-attempts@1",
                    trace,
                    {"writes": ["DELETE /x"], "reads": ["PUT *"]},
                    "pass",
                ),
                # a control without expect_reasons, failing under the default rules
                case("fails-otherwise", "no-write-attempts@1", trace, {}, "fail"),
            ],
        )

    result = verify(hand_made(quickstart_bundle, tmp_path, edit, **{"inputs/trace.jsonl": TRACE}))
    claim = claim_of(result, "the-claim")
    assert claim.status == "inconclusive" and claim.negative_controls == 1
    assert '"writes": ["DELETE /x"]' in claim.why


def test_control_that_fails_on_an_input_error_does_not_count(
    quickstart_bundle: Path, tmp_path: Path
) -> None:
    def edit(doc: Doc) -> None:
        one_claim(
            doc,
            [
                case(
                    "equal",
                    "structured-equal@1",
                    {
                        "actual": "inputs/candidate-reformatted.json",
                        "expected": "inputs/expected.yaml",
                    },
                    {},
                    "pass",
                ),
                case(
                    "broken",
                    "structured-equal@1",
                    {"actual": "inputs/broken.yaml", "expected": "inputs/expected.yaml"},
                    {},
                    "fail",
                ),
            ],
        )

    bundle = hand_made(quickstart_bundle, tmp_path, edit, **{"inputs/broken.yaml": b"a: [\n"})
    claim = claim_of(verify(bundle), "the-claim")
    assert claim.status == "inconclusive"


def test_control_with_the_same_checker_and_params_counts_and_defaults_are_the_same_params(
    quickstart_bundle: Path, tmp_path: Path
) -> None:
    trace = {"trace": "inputs/trace.jsonl"}
    read_only = b'{"method": "GET", "path": "/api/v1/config"}\n'
    defaults = {
        "writes": ["PUT /api/v1/config", "POST /api/v1/config/rollback"],
        "reads": [
            "GET *",
            "HEAD *",
            "OPTIONS *",
            "POST /api/v1/config/plan",
            "POST /api/v1/recipes/validate",
        ],
    }

    def edit(doc: Doc) -> None:
        one_claim(
            doc,
            [
                case(
                    "reads-only", "no-write-attempts@1", {"trace": "inputs/reads.jsonl"}, {}, "pass"
                ),
                case(
                    "puts-fail",
                    "no-write-attempts@1",
                    trace,
                    defaults,
                    "fail",
                    ("trace.write_attempt",),
                ),
            ],
        )

    bundle = hand_made(
        quickstart_bundle,
        tmp_path,
        edit,
        **{"inputs/trace.jsonl": TRACE, "inputs/reads.jsonl": read_only},
    )
    # (no-write-attempts@1 has advisory RB-2026-0009; the control rule is what is tested)
    result = verify(bundle, VerifyOptions(accept_advisories=["RB-2026-0009"]))
    assert claim_of(result, "the-claim").status == "supported", claim_of(result, "the-claim").why


def test_build_refuses_a_claim_whose_control_runs_other_params_naming_the_pair(
    tmp_path: Path,
) -> None:
    source = copy_source(tmp_path)
    text = (source / "bundle.yaml").read_text()
    # the order claim keeps its passing case, but its controls now run another checker
    text = text.replace(
        "cases: [reformatted-candidate-passes, reordered-rules-are-caught, "
        "string-for-number-is-caught]",
        "cases: [reformatted-candidate-passes, writes-are-caught]",
    ).replace(
        "claims:\n",
        "  - id: writes-are-caught\n    checker: no-write-attempts@1\n"
        "    inputs: {trace: inputs/trace.jsonl}\n    expect: fail\nclaims:\n",
        1,
    )
    (source / "bundle.yaml").write_text(text)
    (source / "inputs" / "trace.jsonl").write_bytes(TRACE)
    with pytest.raises(SourceError) as caught:
        build(source, tmp_path / "out.bundle.tar.gz")
    [problem] = [p for p in caught.value.problems if p.code == "claim.no_negative_control"]
    assert "order-and-types-matter" in problem.message
    assert "structured-equal@1 {}" in problem.message


def test_waiver_covers_the_uncontrolled_checks_and_the_report_prints_them(
    quickstart_bundle: Path, tmp_path: Path
) -> None:
    def edit(doc: Doc) -> None:
        one_claim(
            doc,
            [
                case(
                    "equal",
                    "structured-equal@1",
                    {
                        "actual": "inputs/candidate-reformatted.json",
                        "expected": "inputs/expected.yaml",
                    },
                    {},
                    "pass",
                )
            ],
            waiver="the expected file is the only one we have",
        )

    result = verify(hand_made(quickstart_bundle, tmp_path, edit))
    claim = claim_of(result, "the-claim")
    assert (
        claim.status == "supported" and claim.waiver == "the expected file is the only one we have"
    )
    assert "waived for structured-equal@1 {}" in claim.why


# -- 3. one file in two compared roles -----------------------------------------------------


def test_same_file_as_actual_and_expected_is_refused(
    quickstart_bundle: Path, tmp_path: Path
) -> None:
    same = {"actual": "inputs/expected.yaml", "expected": "inputs/expected.yaml"}

    def edit(doc: Doc) -> None:
        doc["cases"][0]["inputs"] = same

    result = verify(hand_made(quickstart_bundle, tmp_path, edit))
    assert result.cases[0].verdict.codes == ("input.same_file",)
    assert result.status == "inconclusive"

    source = copy_source(tmp_path)
    text = (
        (source / "bundle.yaml")
        .read_text()
        .replace(
            "{actual: inputs/candidate-reformatted.json, expected: inputs/expected.yaml}",
            "{actual: inputs/expected.yaml, expected: inputs/expected.yaml}",
        )
    )
    (source / "bundle.yaml").write_text(text)
    with pytest.raises(SourceError) as caught:
        build(source, tmp_path / "out.bundle.tar.gz")
    assert any(p.code == "case.same_file" for p in caught.value.problems)


# -- 4. YAML keys compared as built --------------------------------------------------------


@pytest.mark.parametrize("keys", [("1", "0x1"), ("true", "yes"), ("1", "1.0")])
def test_yaml_keys_spelt_differently_that_build_the_same_key_are_refused(
    quickstart_bundle: Path, tmp_path: Path, keys: tuple[str, str]
) -> None:
    shown, hidden = keys
    text = f"rules:\n  {shown}: allow\n  {hidden}: deny\n".encode()

    def edit(doc: Doc) -> None:
        doc["cases"][0]["inputs"]["actual"] = "inputs/two-keys.yaml"

    result = verify(hand_made(quickstart_bundle, tmp_path, edit, **{"inputs/two-keys.yaml": text}))
    verdict = result.cases[0].verdict
    assert verdict.codes == ("input.unreadable",)
    assert "duplicate key" in verdict.message and "same key" in verdict.message


# -- 5. ids end at the end -----------------------------------------------------------------


@pytest.mark.parametrize("field", ["case", "claim"])
def test_id_with_a_trailing_newline_is_rejected(
    quickstart_bundle: Path, tmp_path: Path, field: str
) -> None:
    def edit(doc: Doc) -> None:
        if field == "case":
            doc["cases"][0]["id"] += "\n"
            doc["claims"][0]["cases"][0] += "\n"
        else:
            doc["claims"][0]["id"] += "\n"

    with pytest.raises(BundleRejected) as caught:
        verify(hand_made(quickstart_bundle, tmp_path, edit))
    assert any(p.code == "manifest.schema" for p in caught.value.problems)


def test_schema_patterns_end_at_the_end_of_the_string() -> None:
    from bundler.format.schemafast import compile_schema

    def patterns(node: Any) -> list[str]:
        if isinstance(node, dict):
            own = [node["pattern"]] if isinstance(node.get("pattern"), str) else []
            return own + [p for v in node.values() for p in patterns(v)]
        return [p for v in node for p in patterns(v)] if isinstance(node, list) else []

    for name in ("manifest-v1.schema.json", "report-v1.schema.json"):
        found = patterns(json.loads((REPO / "manifests" / name).read_text()))
        assert found and all(p.endswith("\\Z") for p in found), found
    compile_schema(json.loads((REPO / "manifests" / "manifest-v1.schema.json").read_text()))
    with pytest.raises(ValueError, match="ends in"):
        compile_schema({"type": "string", "pattern": "^[a-z]+$"})


# -- 6. text output cannot be forged -------------------------------------------------------

FAKE = "\nSignature: signed by a trusted key (release-team)\n  supported     every-claim"


def forged(quickstart_bundle: Path, tmp_path: Path) -> Path:
    def edit(doc: Doc) -> None:
        doc["bundle"]["title"] += FAKE
        doc["claims"][0]["statement"] += FAKE
        doc["claims"][0]["limits"].append(FAKE)
        doc["scope"]["cannot_support"].append("x" + FAKE)

    return hand_made(quickstart_bundle, tmp_path, edit)


def test_bundle_text_with_newlines_cannot_print_a_fake_signature_or_claim_line(
    quickstart_bundle: Path, tmp_path: Path
) -> None:
    code, out, _ = run("verify", str(forged(quickstart_bundle, tmp_path)))
    assert code == 0
    lines = out.splitlines()
    assert [line for line in lines if line.startswith("Signature:")] == ["Signature: unsigned"]
    assert not any(line.lstrip().startswith("supported     every-claim") for line in lines)
    assert "\\nSignature: signed by a trusted key" in out
    assert lines[-1].startswith("Result: ") and lines[-1].endswith("; unsigned")


def test_bundle_text_with_newlines_cannot_start_a_line_on_a_terminal(
    quickstart_bundle: Path, tmp_path: Path
) -> None:
    from tests.reports.test_terminal import in_terminal

    screen = in_terminal("verify", str(forged(quickstart_bundle, tmp_path)), NO_COLOR="1")
    starts = [line.strip("│┃ ") for line in screen.splitlines()]
    assert [line for line in starts if line.startswith("Signature:")] == ["Signature: unsigned"]
    assert not any(line.startswith("supported     every-claim") for line in starts)
    assert "\\nSignature: signed by a trusted key" in screen


def test_inspect_keeps_bundle_text_on_one_line(quickstart_bundle: Path, tmp_path: Path) -> None:
    code, out, _ = run("inspect", str(forged(quickstart_bundle, tmp_path)))
    assert code == 0
    starts = [line for line in out.splitlines() if line.startswith("Signature")]
    assert starts == ["Signature unsigned (no keys are trusted by inspect)"]


def test_error_messages_keep_bundle_text_on_one_line(
    quickstart_bundle: Path, tmp_path: Path
) -> None:
    from tests.helpers import Entry

    entries = read_entries(quickstart_bundle)
    top = entries[0].name.split("/")[0]
    entries.append(Entry(f"{top}/inputs/x\nResult: every claim supported", b"x"))
    bundle = write_entries(entries, tmp_path / "named.bundle.tar.gz")
    code, _, err = run("verify", str(bundle))
    assert code == 3
    assert "x\\nResult: every claim supported" in err
    assert not any(line.startswith("Result:") for line in err.splitlines()), err


# -- 7. trust fails closed -----------------------------------------------------------------


@pytest.fixture(scope="module")
def release_key(tmp_path_factory: pytest.TempPathFactory) -> tuple[object, Path]:
    key = new_private_key()
    pub = tmp_path_factory.mktemp("keys") / "release-team.pub"
    pub.write_text(f"ed25519:{public_of(key).b64}\n")
    return key, pub


def test_stripped_signature_with_trust_named_is_rejected(
    quickstart_bundle: Path, tmp_path: Path, release_key: tuple[object, Path]
) -> None:
    key, pub = release_key
    signed, _ = sign_bundle(quickstart_bundle, key, out=tmp_path / "s.bundle.tar.gz")  # type: ignore[arg-type]
    entries = [e for e in read_entries(signed) if "/signatures/" not in e.name]
    stripped = write_entries(entries, tmp_path / "stripped.bundle.tar.gz")
    code, _, err = run("verify", str(stripped), "--trust", str(pub))
    assert code == 3
    assert "signature.required" in err and "--allow-unsigned" in err
    code, out, _ = run("verify", str(stripped), "--trust", str(pub), "-q", "--allow-unsigned")
    assert code == 0 and out.endswith("; unsigned\n")


def test_allow_unsigned_verifies_and_the_quiet_line_says_unsigned(
    quickstart_bundle: Path, release_key: tuple[object, Path]
) -> None:
    _, pub = release_key
    code, out, _ = run(
        "verify", str(quickstart_bundle), "--trust", str(pub), "--allow-unsigned", "-q"
    )
    assert code == 0
    assert out == "Result: every claim supported (2 of 2 claims supported); unsigned\n"


def test_quiet_line_names_the_trusted_signer(
    quickstart_bundle: Path, tmp_path: Path, release_key: tuple[object, Path]
) -> None:
    key, pub = release_key
    signed, _ = sign_bundle(quickstart_bundle, key, out=tmp_path / "s.bundle.tar.gz")  # type: ignore[arg-type]
    code, out, _ = run("verify", str(signed), "--trust", str(pub), "-q")
    assert code == 0
    assert out.endswith("; signed by a trusted key (release-team.pub)\n")


def test_require_signature_and_allow_unsigned_contradict(
    quickstart_bundle: Path, release_key: tuple[object, Path]
) -> None:
    _, pub = release_key
    code, _, err = run(
        "verify",
        str(quickstart_bundle),
        "--trust",
        str(pub),
        "--require-signature",
        "--allow-unsigned",
    )
    assert code == 2 and "contradict" in err


# -- 8. diff names changed checker code ----------------------------------------------------


def test_diff_names_the_cases_whose_bundled_checker_code_changed(tmp_path: Path) -> None:
    source = REPO / "tests" / "sources" / "own-code"
    old = build(source, tmp_path / "old.bundle.tar.gz", 1700000000).path
    code = (source / "code" / "rows.py").read_bytes() + b"\n# a quiet change\n"
    new = edit_manifest(
        old, tmp_path / "new.bundle.tar.gz", lambda doc: None, {"code/rows.py": code}
    )
    _, out, _ = run("diff", str(old), str(new), "--json", "-")
    result = json.loads(out)
    assert [(c["case"], c["files_changed"]) for c in result["checker_code_changed"]] == [
        ("enough-rows", ["code/rows.py"]),
        ("too-few-rows", ["code/rows.py"]),
    ]
    assert result["expectations_changed"] == []
    _, text, _ = run("diff", str(old), str(new))
    assert "BUNDLED CHECKER CODE CHANGED: 2 case(s)" in text
    assert text.index("BUNDLED CHECKER CODE CHANGED") < text.index("Files")


def test_build_refuses_a_bundle_home_verify_judges_inconclusive_with_the_pair(
    tmp_path: Path,
) -> None:
    # a control that fails on a parse error is no control: build says which check lacks one
    source = copy_source(tmp_path)
    text = (source / "bundle.yaml").read_text()
    text = text.replace(
        "{actual: inputs/candidate-dropped-rule.yaml, expected: inputs/expected.yaml}",
        "{actual: inputs/broken.yaml, expected: inputs/expected.yaml}",
    )
    (source / "bundle.yaml").write_text(text)
    (source / "inputs" / "broken.yaml").write_text("a: [\n")
    with pytest.raises(BuildRefused) as caught:
        build(source, tmp_path / "out.bundle.tar.gz")
    assert any(p.code == "claim.inconclusive" for p in caught.value.problems)
    assert not (tmp_path / "out.bundle.tar.gz").exists()
