"""Issue 45 item 3: ``--disclose DIR`` on every command that verifies a bundle (``verify``,
``report``, ``ci``). Without it a redacted bundle gives the withheld verdicts (the secret
claim inconclusive, exit 4); with it, the full bundle's (exit 0); a disclosed file that
differs from the digest the manifest binds rejects the bundle (exit 3) in each command.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from bundler.cli import main
from tests.run.test_withheld import SECRETS, make_redacted


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return make_redacted(tmp_path_factory.mktemp("disclose"))


@pytest.fixture()
def forged(made: dict[str, Any], tmp_path: Path) -> Path:
    folder = tmp_path / "forged"
    shutil.copytree(made["disclosed"], folder)
    (folder / SECRETS[0]).write_text(json.dumps({"rules": ["secret-a"]}))
    return folder


def claims_of(report: dict[str, Any]) -> dict[str, str]:
    return {c["id"]: c["status"] for c in report["claims"]}


def run_report(bundle: Path, out: Path, *extra: str) -> tuple[int, dict[str, Any], str]:
    done = CliRunner().invoke(main, ["report", str(bundle), "-o", str(out), "-q", *extra])
    return done.exit_code, json.loads(out.read_text()), done.output


def test_report_of_a_redacted_bundle_without_disclose_leaves_the_secret_claim_withheld(
    made: dict[str, Any], tmp_path: Path
) -> None:
    code, report, output = run_report(made["redacted"], tmp_path / "r.json")
    assert code == 4, output
    assert claims_of(report) == {"public-claim": "supported", "secret-claim": "inconclusive"}
    assert [f["path"] for f in report["withheld"]["files"]] == list(SECRETS)


def test_report_with_disclose_gives_the_full_bundles_verdicts(
    made: dict[str, Any], tmp_path: Path
) -> None:
    code, report, output = run_report(
        made["redacted"], tmp_path / "r.json", "--disclose", str(made["disclosed"])
    )
    full_code, full, _ = run_report(made["signed"], tmp_path / "full.json")
    assert code == full_code == 0, output
    assert (
        claims_of(report)
        == claims_of(full)
        == {
            "public-claim": "supported",
            "secret-claim": "supported",
        }
    )
    assert report["withheld"]["disclosed"] is True


def test_report_with_a_disclosed_file_that_differs_rejects(
    made: dict[str, Any], forged: Path, tmp_path: Path
) -> None:
    code, report, output = run_report(
        made["redacted"], tmp_path / "r.json", "--disclose", str(forged)
    )
    assert code == 3, output
    assert report["result"] == "rejected"
    assert [p["code"] for p in report["problems"]] == ["withheld.disclosed"]
    assert SECRETS[0] in report["problems"][0]["where"]


def test_report_of_a_stored_report_refuses_disclose(made: dict[str, Any], tmp_path: Path) -> None:
    stored = tmp_path / "stored.json"
    run_report(made["redacted"], stored)
    done = CliRunner().invoke(
        main, ["report", str(stored), "--disclose", str(made["disclosed"]), "-q"]
    )
    assert done.exit_code == 2, done.output
    assert "stored report, not a bundle" in done.output


def run_ci(bundle: Path, out: Path, *extra: str) -> tuple[int, str, str]:
    summary = out.parent / f"{out.name}-summary.md"
    done = CliRunner().invoke(
        main,
        ["ci", "--out", str(out), "--summary", str(summary), *extra, "--", str(bundle)],
        env={"GITHUB_ACTIONS": None, "GITLAB_CI": None},
    )
    return done.exit_code, done.output, summary.read_text()


def test_ci_of_a_redacted_bundle_without_disclose_leaves_the_secret_claim_withheld(
    made: dict[str, Any], tmp_path: Path
) -> None:
    code, output, summary = run_ci(made["redacted"], tmp_path / "out", "--fail-on", "inconclusive")
    assert code == 1, output
    assert output.startswith("FAIL ") and output.rstrip().endswith(": inconclusive")
    assert "disclosed" not in summary
    for path in SECRETS:
        assert path in summary
    passed, output, _ = run_ci(made["redacted"], tmp_path / "out2")
    assert passed == 0, output  # inconclusive does not fail the default policy


def test_ci_with_disclose_gives_the_full_bundles_verdicts(
    made: dict[str, Any], tmp_path: Path
) -> None:
    code, output, summary = run_ci(
        made["redacted"],
        tmp_path / "out",
        "--fail-on",
        "inconclusive",
        "--disclose",
        str(made["disclosed"]),
    )
    assert code == 0, output
    assert output.startswith("ok ") and output.rstrip().endswith(": supported")
    assert "every claim supported" in summary
    assert "disclosed (--disclose) and checked" in summary


def test_ci_with_a_disclosed_file_that_differs_rejects(
    made: dict[str, Any], forged: Path, tmp_path: Path
) -> None:
    code, output, summary = run_ci(made["redacted"], tmp_path / "out", "--disclose", str(forged))
    assert "rejected" in summary
    assert code == 3, output
    assert "withheld.disclosed" in output
    assert SECRETS[0] in output


def test_verify_with_a_disclosed_file_that_differs_rejects(
    made: dict[str, Any], forged: Path
) -> None:
    done = CliRunner().invoke(main, ["verify", str(made["redacted"]), "--disclose", str(forged)])
    assert done.exit_code == 3, done.output
    assert "withheld.disclosed" in done.output
