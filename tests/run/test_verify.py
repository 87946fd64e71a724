from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import checkers
from bundler.errors import BundleRejected, UsageError
from bundler.run.verify import verify
from tests.helpers import edit_manifest, read_entries, write_entries


def case_of(doc: dict[str, Any], case_id: str) -> dict[str, Any]:
    return next(c for c in doc["cases"] if c["id"] == case_id)


def test_quickstart_verifies_with_every_claim_supported(quickstart_bundle: Path) -> None:
    result = verify(quickstart_bundle)
    assert result.status == "supported" and result.exit_code == 0
    assert [c.status for c in result.claims] == ["supported", "supported"]
    assert all(r.outcome == "reproduced" for r in result.cases)


def test_wrong_expected_verdict_contradicts_the_claim(
    quickstart_bundle: Path, tmp_path: Path
) -> None:
    def flip(doc: dict[str, Any]) -> None:
        case_of(doc, "reformatted-candidate-passes")["expect"] = "fail"

    result = verify(edit_manifest(quickstart_bundle, tmp_path / "x.bundle.tar.gz", flip))
    assert result.status == "contradicted" and result.exit_code == 1
    assert {c.claim.id: c.status for c in result.claims} == {
        "accepts-equivalent-content": "contradicted",
        "order-and-types-matter": "contradicted",
    }


def test_failing_for_another_reason_diverges(quickstart_bundle: Path, tmp_path: Path) -> None:
    def other_reason(doc: dict[str, Any]) -> None:
        case_of(doc, "dropped-rule-is-caught")["expect_reasons"] = ["content.added"]

    result = verify(edit_manifest(quickstart_bundle, tmp_path / "x.bundle.tar.gz", other_reason))
    dropped = next(r for r in result.cases if r.case.id == "dropped-rule-is-caught")
    assert dropped.outcome == "diverged"
    assert "observed fail ['content.removed']" in dropped.explanation
    assert result.claims[0].status == "contradicted"


def test_checker_that_raises_is_inconclusive_not_evidence(
    quickstart_bundle: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = checkers.get("structured-equal@1")
    assert real is not None

    def boom(inputs: Any, params: Any) -> Any:
        raise ZeroDivisionError("division by zero")

    broken = real._replace(function=boom)
    registry = {**checkers.registry(), real.key: broken}
    monkeypatch.setattr(checkers, "get", registry.get)
    result = verify(quickstart_bundle)
    assert result.status == "inconclusive" and result.exit_code == 4
    assert all(r.outcome == "inconclusive" for r in result.cases)
    assert result.cases[0].verdict.codes == ("checker.raised",)
    assert all(c.reproduced == 0 and c.diverged == 0 for c in result.claims)


def test_unreadable_input_is_inconclusive(quickstart_bundle: Path, tmp_path: Path) -> None:
    bundle = edit_manifest(
        quickstart_bundle,
        tmp_path / "x.bundle.tar.gz",
        lambda d: None,
        files={"inputs/candidate-dropped-rule.yaml": b"a: [unclosed\n"},
    )
    result = verify(bundle)
    dropped = next(r for r in result.cases if r.case.id == "dropped-rule-is-caught")
    assert dropped.outcome == "inconclusive"
    assert dropped.verdict.codes == ("input.unreadable",)
    assert "inputs/candidate-dropped-rule.yaml:2" in dropped.verdict.message
    assert result.exit_code == 4


def test_unknown_checker_version_is_inconclusive(quickstart_bundle: Path, tmp_path: Path) -> None:
    def future(doc: dict[str, Any]) -> None:
        case_of(doc, "dropped-rule-is-caught")["checker"] = "structured-equal@9"

    result = verify(edit_manifest(quickstart_bundle, tmp_path / "x.bundle.tar.gz", future))
    dropped = next(r for r in result.cases if r.case.id == "dropped-rule-is-caught")
    assert dropped.verdict.codes == ("checker.unavailable",)
    assert result.status == "inconclusive"


def test_claim_without_negative_control_in_a_hand_made_bundle(
    quickstart_bundle: Path, tmp_path: Path
) -> None:
    def strip(doc: dict[str, Any]) -> None:
        doc["claims"][0]["cases"] = ["reformatted-candidate-passes"]

    result = verify(edit_manifest(quickstart_bundle, tmp_path / "x.bundle.tar.gz", strip))
    assert result.claims[0].status == "inconclusive"
    assert result.exit_code == 4


def test_non_empty_workdir_is_refused(quickstart_bundle: Path, tmp_path: Path) -> None:
    (tmp_path / "stale.yaml").write_text("old")
    with pytest.raises(UsageError, match="not empty"):
        verify(quickstart_bundle, workdir=tmp_path)
    assert (tmp_path / "stale.yaml").read_text() == "old"


def test_workdir_is_removed_unless_kept(quickstart_bundle: Path, tmp_path: Path) -> None:
    work = tmp_path / "w"
    verify(quickstart_bundle, workdir=work)
    assert not work.exists()
    kept = verify(quickstart_bundle, workdir=work, keep=True)
    assert kept.workdir == work
    assert (work / "quickstart-1.0.0" / "inputs" / "expected.yaml").is_file()


def test_a_kept_workdir_of_a_rejected_bundle_is_named(
    quickstart_bundle: Path, tmp_path: Path
) -> None:
    entries = read_entries(quickstart_bundle)
    changed = next(e for e in entries if e.name.endswith("inputs/expected.yaml"))
    changed.data = changed.data.replace(b"3", b"4", 1)
    bundle = write_entries(entries, tmp_path / "changed.bundle.tar.gz")
    work = tmp_path / "w"
    with pytest.raises(BundleRejected) as caught:
        verify(bundle, workdir=work, keep=True)
    assert ("workdir.kept", f"the work directory is kept at {work}") in [
        (p.code, p.message) for p in caught.value.problems
    ]
    assert (work / "quickstart-1.0.0" / "inputs" / "expected.yaml").is_file()
    with pytest.raises(BundleRejected) as caught:
        verify(bundle, workdir=tmp_path / "w2")
    assert "workdir.kept" not in [p.code for p in caught.value.problems]
    assert not (tmp_path / "w2").exists()


def test_verify_does_not_depend_on_the_working_directory(
    quickstart_bundle: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert verify(quickstart_bundle).status == "supported"
    assert list(tmp_path.iterdir()) == []


def test_a_bundle_can_be_verified_from_standard_input(quickstart_bundle: Path) -> None:
    """``verify -`` reads the bundle from a pipe, once, without seeking."""
    import subprocess
    import sys

    def run(data: bytes) -> subprocess.CompletedProcess[bytes]:
        return subprocess.run(
            [sys.executable, "-m", "bundler", "verify", "-", "--json", "-", "-q"],
            input=data,
            capture_output=True,
            check=False,
        )

    data = quickstart_bundle.read_bytes()
    done = run(data)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["result"] == "supported"
    truncated = run(data[: len(data) // 2])
    assert truncated.returncode == 3
    assert json.loads(truncated.stdout)["problems"][0]["code"] == "archive.truncated"
    assert b"is empty" in run(b"").stderr
