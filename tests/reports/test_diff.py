"""`reprobundle diff OLD NEW`: every kind of change is reported, a flipped expectation
first and loudest; both bundles are checked before anything is compared."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from bundler.authoring.build import build
from bundler.cli import main
from tests.helpers import copy_source, edit_manifest, read_entries, write_entries

Edit = Callable[[dict[str, Any]], None]


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.stdout, result.stderr


def changed(quickstart: Path, tmp: Path, edit: Edit, files: dict[str, bytes] | None = None) -> Path:
    return edit_manifest(quickstart, tmp / "new.bundle.tar.gz", edit, files)


def diff_json(old: Path, new: Path) -> tuple[int, dict[str, Any], str]:
    code, out, err = run("diff", str(old), str(new), "--json", "-")
    return code, json.loads(out), err


def test_identical_bundles_exit_0(quickstart_bundle: Path) -> None:
    code, out, _ = run("diff", str(quickstart_bundle), str(quickstart_bundle))
    assert code == 0 and "identical" in out


def test_flipped_expectation_comes_first_and_loudest(
    quickstart_bundle: Path, tmp_path: Path
) -> None:
    def flip(doc: dict[str, Any]) -> None:
        doc["cases"][1]["expect"] = "pass"
        del doc["cases"][1]["expect_reasons"]
        doc["claims"][1]["limits"].append("a limit added in the same change")

    new = changed(quickstart_bundle, tmp_path, flip)
    code, result, _ = diff_json(quickstart_bundle, new)
    assert code == 1
    assert result["expectations_changed"] == [
        {
            "case": "dropped-rule-is-caught",
            "flipped": True,
            "old": {"expect": "fail", "expect_reasons": ["content.removed"]},
            "new": {"expect": "pass", "expect_reasons": []},
            "claims": ["accepts-equivalent-content"],
        }
    ]
    _, text, _ = run("diff", str(quickstart_bundle), str(new))
    lines = text.splitlines()
    assert lines[3].startswith("EXPECTED VERDICTS CHANGED: 1 case(s), 1 flipped")
    assert lines[4] == (
        "  !! FLIPPED dropped-rule-is-caught: expected fail [content.removed] (control) -> pass "
        "(claims: accepts-equivalent-content)"
    )
    assert text.index("EXPECTED VERDICTS") < text.index("Claims")


def test_changed_reason_codes_are_an_expectation_change_not_a_flip(
    quickstart_bundle: Path, tmp_path: Path
) -> None:
    def other_reason(doc: dict[str, Any]) -> None:
        doc["cases"][2]["expect_reasons"] = ["content.changed", "content.removed"]

    _, result, _ = diff_json(quickstart_bundle, changed(quickstart_bundle, tmp_path, other_reason))
    [item] = result["expectations_changed"]
    assert item["case"] == "reordered-rules-are-caught" and item["flipped"] is False


def test_cases_added_removed_and_changed(quickstart_bundle: Path, tmp_path: Path) -> None:
    def edit(doc: dict[str, Any]) -> None:
        removed = doc["cases"].pop(3)  # string-for-number-is-caught
        doc["claims"][1]["cases"].remove(removed["id"])
        doc["cases"].append({**doc["cases"][0], "id": "another-pass"})
        doc["cases"][0]["params"] = {"ignore": ["x"]}
        doc["cases"][2]["inputs"]["actual"] = "inputs/candidate-dropped-rule.yaml"

    _, result, _ = diff_json(quickstart_bundle, changed(quickstart_bundle, tmp_path, edit))
    assert result["cases"]["added"] == ["another-pass"]
    assert result["cases"]["removed"] == ["string-for-number-is-caught"]
    by_case = {c["case"]: c["changes"] for c in result["cases"]["changed"]}
    assert by_case["reformatted-candidate-passes"] == [
        {"path": "params.ignore", "change": "added", "old": None, "new": ["x"]}
    ]
    assert by_case["reordered-rules-are-caught"][0]["path"] == "inputs.actual"
    claims = {c["claim"]: c for c in result["claims"]["changed"]}
    [claim_1] = [c for c in claims.values() if c["changes"]]
    assert claim_1["changes"][0]["change"] == "removed"
    # a claim is changed when a case it cites is
    assert all(c["cases_changed"] for c in claims.values() if not c["changes"])


def test_input_content_change_is_named_for_each_case_that_reads_it(
    quickstart_bundle: Path, tmp_path: Path
) -> None:
    new = changed(
        quickstart_bundle,
        tmp_path,
        lambda doc: None,
        {"inputs/candidate-reordered.yaml": b"decisions: []\n"},
    )
    _, result, _ = diff_json(quickstart_bundle, new)
    assert result["files"]["changed"][0]["path"] == "inputs/candidate-reordered.yaml"
    assert [(c["case"], c["input_content_changed"]) for c in result["cases"]["changed"]] == [
        ("reordered-rules-are-caught", ["inputs/candidate-reordered.yaml"])
    ]


def test_claims_limits_and_scope_changes(quickstart_bundle: Path, tmp_path: Path) -> None:
    def edit(doc: dict[str, Any]) -> None:
        doc["claims"][0]["statement"] = "A weaker sentence."
        doc["claims"][0]["limits"] = []
        doc["claims"].append({**doc["claims"][1], "id": "new-claim"})
        doc["scope"]["cannot_support"] = ["Something new."]

    code, result, _ = diff_json(quickstart_bundle, changed(quickstart_bundle, tmp_path, edit))
    assert code == 1
    assert result["claims"]["added"] == ["new-claim"]
    [claim] = result["claims"]["changed"]
    assert {c["path"] for c in claim["changes"]} == {"statement", "limits[0]"}
    assert result["scope"]["added"] == ["Something new."]
    assert len(result["scope"]["removed"]) == 2
    _, text, _ = run(
        "diff", str(quickstart_bundle), str(changed(quickstart_bundle, tmp_path, edit))
    )
    assert "  ~ statement: A candidate that differs" in text and "-> A weaker sentence." in text


def test_files_added_removed_and_changed(quickstart_bundle: Path, tmp_path: Path) -> None:
    new = changed(
        quickstart_bundle,
        tmp_path,
        lambda doc: None,
        {"inputs/notes.txt": b"hello", "inputs/expected.yaml": b"decisions: []\n"},
    )
    _, result, _ = diff_json(quickstart_bundle, new)
    assert result["files"]["added"] == ["inputs/notes.txt"]
    assert [f["path"] for f in result["files"]["changed"]] == ["inputs/expected.yaml"]
    _, result, _ = diff_json(new, quickstart_bundle)
    assert result["files"]["removed"] == ["inputs/notes.txt"]
    _, text, _ = run("diff", str(new), str(quickstart_bundle))
    assert "Files\n  - inputs/notes.txt\n  ~ inputs/expected.yaml (14 -> " in text


def test_environment_change(quickstart_bundle: Path, tmp_path: Path) -> None:
    def edit(doc: dict[str, Any]) -> None:
        doc["environment"]["python"] = "3.99.0"
        doc["environment"]["libraries"]["deepdiff"] = "0.1"

    _, result, _ = diff_json(quickstart_bundle, changed(quickstart_bundle, tmp_path, edit))
    assert [c["path"] for c in result["environment"]] == ["libraries.deepdiff", "python"]
    assert result["expectations_changed"] == [] and result["files"]["changed"] == []


def test_two_real_versions_of_a_source(quickstart_bundle: Path, tmp_path: Path) -> None:
    source = copy_source(tmp_path)
    text = (source / "bundle.yaml").read_text()
    (source / "bundle.yaml").write_text(
        text.replace("version: 1.0.0", "version: 1.1.0").replace(
            "other shapes of config are not covered.", "other shapes are not covered."
        )
    )
    new = build(source, tmp_path / "new.bundle.tar.gz", 1700000000).path
    code, result, _ = diff_json(quickstart_bundle, new)
    assert code == 1
    assert {"path": "version", "change": "changed", "old": "1.0.0", "new": "1.1.0"} in result[
        "bundle"
    ]
    assert [f["path"] for f in result["files"]["changed"]] == ["README.md"]
    assert result["claims"]["changed"][0]["claim"] == "accepts-equivalent-content"


@pytest.mark.parametrize("which", ["OLD", "NEW"])
def test_a_tampered_bundle_is_rejected_naming_which(
    which: str, quickstart_bundle: Path, tmp_path: Path
) -> None:
    entries = read_entries(quickstart_bundle)
    entries[2].data += b"!"
    bad = write_entries(entries, tmp_path / "bad.bundle.tar.gz")
    pair = (bad, quickstart_bundle) if which == "OLD" else (quickstart_bundle, bad)
    code, out, err = run("diff", *map(str, pair))
    assert code == 3 and out == ""
    assert err.startswith(f"reprobundle: {which} ({bad}): the bundle was rejected")


def test_missing_file_is_a_usage_error(quickstart_bundle: Path, tmp_path: Path) -> None:
    code, _, err = run("diff", str(quickstart_bundle), str(tmp_path / "nope.bundle.tar.gz"))
    assert code == 2 and "NEW" in err and "is not a file" in err


def test_quiet_prints_only_the_summary(quickstart_bundle: Path, tmp_path: Path) -> None:
    def flip(doc: dict[str, Any]) -> None:
        doc["cases"][0]["expect"] = "fail"

    code, out, _ = run(
        "diff", str(quickstart_bundle), str(changed(quickstart_bundle, tmp_path, flip)), "-q"
    )
    assert code == 1 and out == "Changed: 1 expectations, 2 claims\n"  # the claims citing it
