"""One test per attack of issue 32 on what the tool writes and reads besides the bundle's
own integrity (``test_attacks.py``): the numbers and text of every report, ``diff``,
memory, the archive's own files and read errors. Each is named after the attack and
fails on the code before the fix."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from bundler.authoring.build import build
from bundler.cli import main
from bundler.format.results import police
from bundler.reports.document import to_json
from bundler.reports.formats import json_text
from bundler.run.sandbox import CodeLimits, CodePolicy
from bundler.run.verify import verify
from checkers.api import Reason, Verdict
from tests.helpers import REPO, edit_manifest

OWN_CODE = REPO / "tests" / "sources" / "own-code"


def run(*args: object) -> tuple[int, str]:
    result = CliRunner().invoke(main, [str(a) for a in args])
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise AssertionError(f"{args}: raised {result.exception!r}") from result.exception
    return result.exit_code, result.output


@pytest.fixture(scope="module")
def own_code(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build(OWN_CODE, tmp_path_factory.mktemp("own") / "own.bundle.tar.gz", 1700000000).path


def with_probe(bundle: Path, target: Path, params: dict[str, Any]) -> Path:
    def edit(doc: dict[str, Any]) -> None:
        doc["cases"].append(
            {
                "id": "probe",
                "checker": "bundle:row-count",
                "inputs": {"table": "inputs/table.csv"},
                "params": params,
                "expect": "pass",
            }
        )

    return edit_manifest(bundle, target, edit)


# -- 9: every number in every report is finite JSON -----------------------------------


@pytest.mark.parametrize("number", ["1e999", "-1e999", "1" + "0" * 400 + ".0"])
def test_bundled_code_forging_a_result_line_with_an_infinite_number_is_a_bad_verdict(
    own_code: Path, tmp_path: Path, number: str
) -> None:
    """``1e999`` is no NaN token, but every JSON reader in Python reads it as infinity,
    which the report would write as ``Infinity`` (not JSON)."""
    line = (
        '{"nonce": "NONCE", "result": {"status": "pass", "message": "", '
        f'"details": {{"x": {number}}}}}}}'
    )
    bundle = with_probe(own_code, tmp_path / "b.bundle.tar.gz", {"mode": "forge", "line": line})
    result = verify(bundle, code=CodePolicy(True, CodeLimits(timeout=30)))
    probe = next(r for r in result.cases if r.case.id == "probe")
    assert probe.outcome == "inconclusive"
    assert probe.verdict.codes == ("checker.bad_verdict",)
    assert "too large" in probe.verdict.message
    text = json_text(to_json(result))
    assert "Infinity" not in text and "NaN" not in text
    json.loads(text, parse_constant=lambda name: pytest.fail(f"{name} in the report"))


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -float("inf")], ids=str)
def test_checker_details_holding_a_non_finite_number_are_a_bad_verdict(bad: float) -> None:
    """The one place results enter (``police``, for built-in checkers and bundled code
    alike) lets no non-finite number through, in a verdict's details or a reason's."""
    in_details = Verdict("pass", "", (), {"score": bad})
    in_reason = Verdict("fail", "", (Reason("x.bad", "bad", {"score": [bad]}),))
    for verdict in (in_details, in_reason):
        policed = police("bundle:any", verdict, {"x.bad"})
        assert policed.status == "error"
        assert policed.codes == ("checker.bad_verdict",)
        assert "not data" in policed.message


def test_stored_report_with_an_infinite_number_is_refused_not_rewritten(
    quickstart_bundle: Path, tmp_path: Path
) -> None:
    stored = tmp_path / "report.json"
    code, _ = run("verify", quickstart_bundle, "--json", stored)
    assert code == 0
    text = stored.read_text().replace('"details": {}', '"details": {"x": 1e999}', 1)
    assert "1e999" in text
    stored.write_text(text)
    for fmt in ("json", "markdown", "html", "junit"):
        code, output = run("report", stored, "-f", fmt, "-o", tmp_path / f"again.{fmt}")
        assert code == 2, output
        assert "too large" in output
        assert not (tmp_path / f"again.{fmt}").exists()


def test_json_writer_refuses_nan_rather_than_writing_what_no_json_reader_takes() -> None:
    with pytest.raises(ValueError):
        json_text({"x": float("nan")})
