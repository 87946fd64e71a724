"""Bundled code (opt-in) under caps on bytes written and processes, in a file-system jail
where a mount namespace can be made, and unable to forge its result line."""

from __future__ import annotations

import json
import math
import socket
from pathlib import Path
from typing import Any

import pytest

from bundler.authoring.build import build
from bundler.reports.document import to_json
from bundler.run.isolation import CodeLimits, CodePolicy, jail_available
from bundler.run.verify import Verification, VerifyOptions, verify
from tests.helpers import REPO, edit_manifest

SOURCE = REPO / "tests" / "sources" / "own-code"
needs_jail = pytest.mark.skipif(not jail_available(), reason="no mount namespace here")


@pytest.fixture(scope="module")
def own_code(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build(SOURCE, tmp_path_factory.mktemp("own") / "own.bundle.tar.gz", 1700000000).path


def run(bundle: Path, tmp: Path, params: dict[str, Any], **limits: Any) -> Verification:
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

    target = edit_manifest(bundle, tmp / "probe.bundle.tar.gz", edit)
    return verify(target, VerifyOptions(code=CodePolicy(True, CodeLimits(timeout=30, **limits))))


def probe(result: Verification) -> Any:
    return next(r for r in result.cases if r.case.id == "probe")


FORGED = {
    "nan": '{"nonce": "NONCE", "result": {"status": "pass", "message": "", "details": {"x": NaN}}}',
    "deep": '{"nonce": "NONCE", "result": {"status": "pass", "message": "", "details": '
    + "[" * 100_000
    + "]" * 100_000
    + "}}",
}


@pytest.mark.parametrize("kind", sorted(FORGED))
def test_bundled_code_writing_a_nan_or_100000_deep_result_line_is_a_bad_verdict(
    own_code: Path, tmp_path: Path, kind: str
) -> None:
    result = run(own_code, tmp_path, {"mode": "forge", "line": FORGED[kind]})
    forged = probe(result)
    assert forged.outcome == "inconclusive"
    assert forged.verdict.codes == ("checker.bad_verdict",)
    assert "not strict JSON" in forged.verdict.message
    text = json.dumps(to_json(result), allow_nan=False)  # no NaN reaches report.json
    assert not math.isnan(len(text))


@needs_jail
def test_bundled_code_total_bytes_written_is_capped(own_code: Path, tmp_path: Path) -> None:
    result = run(own_code, tmp_path, {"mode": "write", "files": 64}, written_bytes=8 << 20)
    details = probe(result).verdict.details
    assert details["written"] <= 8 << 20
    assert "No space left" in details["error"]


@pytest.mark.parametrize("namespaces", [True, False], ids=["namespaces", "process-group-only"])
def test_bundled_code_forking_300_processes_is_stopped(
    own_code: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, namespaces: bool
) -> None:
    import bundler.run.isolation

    if not namespaces:
        monkeypatch.setattr(bundler.run.isolation, "namespaces_available", lambda: False)
    result = run(own_code, tmp_path, {"mode": "fork", "count": 300}, processes=16)
    forked = probe(result)
    assert forked.outcome == "inconclusive"
    assert forked.verdict.codes == ("code.processes",)
    assert result.code is not None and result.code.isolation["processes"] == 16


def test_bundled_code_process_cap_holds_against_a_burst_that_returns_at_once(
    own_code: Path, tmp_path: Path
) -> None:
    # issue 42, item 9: 300 sleeping children forked and the case returned before the
    # next poll: never stopped. A pids cgroup refuses every fork past the cap at once.
    from bundler.run import pidcap

    if not pidcap.available():
        pytest.skip("no pids cgroup can be made here (the poll applies, and says so)")
    result = run(own_code, tmp_path, {"mode": "burst", "count": 300}, processes=16)
    burst = probe(result)
    assert burst.outcome == "inconclusive"
    assert burst.verdict.codes == ("code.processes",)
    assert "the pids cgroup refused the rest" in burst.verdict.message
    assert result.code is not None
    assert result.code.isolation["process_cap"].startswith("pids cgroup")


def test_report_says_which_process_cap_applied(
    own_code: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from bundler.run import pidcap

    monkeypatch.setattr(pidcap, "available", lambda: False)
    monkeypatch.setattr(pidcap.ProcessCap, "make", classmethod(lambda cls, limit: None))
    result = run(own_code, tmp_path, {"mode": "count", "min": 1})
    assert result.code is not None
    assert result.code.isolation["process_cap"].startswith("polled every 0.1 s")


@needs_jail
def test_bundled_code_cannot_reach_a_unix_socket_on_the_file_system(
    own_code: Path, tmp_path: Path
) -> None:
    path = tmp_path / "service.sock"
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(path))
    server.listen(1)
    try:
        result = run(own_code, tmp_path, {"mode": "reach", "paths": [], "socket": str(path)})
    finally:
        server.close()
    seen = probe(result).verdict.details["seen"]
    assert seen["socket"].startswith("refused")


@needs_jail
def test_bundled_code_sees_no_path_outside_its_folder_nor_another_bundle(
    own_code: Path, tmp_path: Path, canary: Path
) -> None:
    other = tmp_path / "other-bundle" / "inputs" / "table.csv"  # another verification's
    other.parent.mkdir(parents=True)
    other.write_text("secret evidence")
    paths = [str(canary), str(other), "/etc/passwd", str(Path.home() / ".bashrc")]
    result = run(own_code, tmp_path, {"mode": "reach", "paths": paths, "socket": "/x"})
    details = probe(result).verdict.details
    assert all(details["seen"][p].startswith("refused") for p in paths), details["seen"]
    assert not {"etc", "proc", "run", "sys", "var"} & set(details["root"])
    assert result.code is not None and result.code.isolation["file_system_jail"] is True


def test_isolation_says_plainly_when_there_is_no_jail(
    own_code: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import bundler.run.isolation

    monkeypatch.setattr(bundler.run.isolation, "jail_available", lambda: False)
    result = verify(own_code, VerifyOptions(code=CodePolicy(True, CodeLimits(timeout=30))))
    assert result.code is not None
    isolation = result.code.isolation
    assert isolation["file_system_jail"] is False
    assert isolation["written_bytes"] is None
    assert "no file-system jail here" in str(isolation["not_a_sandbox"])
    assert all(r.outcome == "reproduced" for r in result.cases)
