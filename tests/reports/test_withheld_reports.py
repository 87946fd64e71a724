"""Issue 45 item 4: every report format and every attestation says what was withheld.

A redacted bundle's report names the withheld files with their digests and reasons, the
claims that could not be checked here and why; its attestation is WARNED and lists the
files; one made with ``--disclose`` says the withheld files were checked.
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import pytest

from bundler.reports.document import to_json
from bundler.reports.formats import render
from bundler.reports.schema import schema_problems
from bundler.reports.text import to_text
from bundler.run.verify import VerifyOptions, verify
from bundler.signatures import attestation as att
from tests.run.test_withheld import SECRETS, make_redacted


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    made = make_redacted(tmp_path_factory.mktemp("withheld-reports"))
    redacted = to_json(verify(made["redacted"], VerifyOptions(policy=made["policy"])))
    disclosed = to_json(
        verify(made["redacted"], VerifyOptions(policy=made["policy"]), disclose=made["disclosed"])
    )
    full = to_json(verify(made["signed"], VerifyOptions(policy=made["policy"])))
    return {"redacted": redacted, "disclosed": disclosed, "full": full, "made": made}


def test_the_json_report_names_each_withheld_file_its_digest_and_the_claims_left(
    reports: dict[str, Any],
) -> None:
    report = reports["redacted"]
    assert schema_problems(report) == []
    held = report["withheld"]
    assert held["disclosed"] is False
    assert [f["path"] for f in held["files"]] == list(SECRETS)
    assert all(len(f["sha256"]) == 64 and f["reason"] == "held-out set" for f in held["files"])
    assert held["claims"] == ["secret-claim"]
    assert held["cases"] == ["secret-pass", "secret-control"]
    assert "withheld file(s)" in report["integrity"] and "(signed)" in report["integrity"]
    secret = next(c for c in report["claims"] if c["id"] == "secret-claim")
    assert secret["withheld"] == 2 and secret["status"] == "inconclusive"
    assert "withheld" not in next(c for c in report["claims"] if c["id"] == "public-claim")


def test_a_report_without_withheld_files_has_no_withheld_fields(reports: dict[str, Any]) -> None:
    report = reports["full"]
    assert "withheld" not in report
    assert all("withheld" not in c for c in report["claims"])


@pytest.mark.parametrize("fmt", ["text", "markdown", "junit", "html"])
def test_every_format_shows_the_withheld_files_digests_and_claims(
    reports: dict[str, Any], fmt: str
) -> None:
    report = reports["redacted"]
    text = to_text(report) if fmt == "text" else render(fmt, report)
    for f in report["withheld"]["files"]:
        assert f["sha256"] in text.replace("<wbr>", ""), fmt
    assert "inputs/secret/candidate.json" in text.replace("<wbr>", "").replace("\\_", "_")
    assert "held-out set" in text
    assert "secret-claim" in text
    assert "withheld" in text.lower()


@pytest.mark.parametrize("fmt", ["text", "markdown", "junit", "html"])
def test_every_format_says_the_withheld_files_were_disclosed_and_checked(
    reports: dict[str, Any], fmt: str
) -> None:
    report = reports["disclosed"]
    text = to_text(report) if fmt == "text" else render(fmt, report)
    assert "disclosed" in text, fmt


def test_the_text_result_line_counts_the_withheld_files(reports: dict[str, Any]) -> None:
    assert (
        to_text(reports["redacted"])
        .splitlines()[-1]
        .endswith("3 file(s) withheld; signed by a trusted key (author)")
    )
    assert "3 withheld file(s) disclosed and checked" in to_text(reports["disclosed"])


def test_junit_skips_the_withheld_cases(reports: dict[str, Any]) -> None:
    xml = render("junit", reports["redacted"])
    assert xml.count("<skipped") == 2
    assert "<error" not in xml and "<failure" not in xml


def _statement(report: dict[str, Any], predicate: str = "test-result") -> dict[str, Any]:
    subject = att.subject_of(report, "b.bundle.tar.zst", "d" * 64)
    when = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
    return att.statement(report, subject, {}, predicate, when)


def _withheld_descriptor(statement: dict[str, Any]) -> dict[str, Any]:
    found = [
        d for d in statement["predicate"]["configuration"] if d["name"] == att.WITHHELD_DESCRIPTOR
    ]
    assert len(found) == 1
    return found[0]["annotations"]


def test_an_attestation_of_a_redacted_verification_is_warned_and_lists_the_files(
    reports: dict[str, Any],
) -> None:
    statement = _statement(reports["redacted"])
    assert statement["predicate"]["result"] == "WARNED"
    assert "case:secret-pass" in statement["predicate"]["warnedTests"]
    held = _withheld_descriptor(statement)
    assert held["disclosed"] is False
    assert [f["sha256"] for f in held["files"]] == [
        f["sha256"] for f in reports["redacted"]["withheld"]["files"]
    ]
    att.check_statement(json.loads(json.dumps(statement)))


def test_a_redacted_verification_with_every_claim_supported_is_still_warned(
    reports: dict[str, Any],
) -> None:
    report = json.loads(json.dumps(reports["redacted"]))
    report["claims"] = [c for c in report["claims"] if c["id"] == "public-claim"]
    report["result"], report["exit_code"] = "supported", 0
    assert _statement(report)["predicate"]["result"] == "WARNED"
    assert _statement(report, "vsa")["predicate"]["verificationResult"] == "FAILED"


def test_an_attestation_made_with_disclose_says_the_withheld_files_were_checked(
    reports: dict[str, Any],
) -> None:
    statement = _statement(reports["disclosed"])
    assert statement["predicate"]["result"] == "PASSED"
    held = _withheld_descriptor(statement)
    assert held["disclosed"] is True
    assert "checked against their SHA-256" in held["summary"]


def test_verify_attest_on_the_command_line_of_a_redacted_bundle(
    reports: dict[str, Any], tmp_path: Path
) -> None:
    from click.testing import CliRunner

    from bundler.cli import main
    from bundler.signatures.signing import new_private_key, private_key_pem

    key = tmp_path / "me.key"
    key.write_bytes(private_key_pem(new_private_key(), None))
    out = tmp_path / "a.intoto.json"
    bundle = reports["made"]["redacted"]
    done = CliRunner().invoke(
        main, ["verify", str(bundle), "-q", "--attest", str(out), "--attest-key", str(key)]
    )
    assert done.exit_code == 4, done.output
    envelope = json.loads(out.read_text())
    import base64

    statement = json.loads(base64.b64decode(envelope["payload"]))
    assert statement["predicate"]["result"] == "WARNED"
    assert _withheld_descriptor(statement)["files"]
