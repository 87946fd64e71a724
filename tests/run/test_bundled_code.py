"""Bundled checker code: refused unless allowed, and when allowed, run apart and limited."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import tomli_w
from click.testing import CliRunner

import bundler.run.isolation
from bundler.authoring.build import build
from bundler.cli import main
from bundler.reports.document import to_json
from bundler.run.isolation import CodeLimits, CodePolicy, namespaces_available
from bundler.run.verify import Verification, VerifyOptions, verify
from bundler.signatures.signfile import sign_bundle
from bundler.signatures.signing import new_private_key, public_of
from bundler.signatures.trust import Policy
from bundler.signatures.truststore import load_store
from tests.helpers import REPO, edit_manifest

SOURCE = REPO / "tests" / "sources" / "own-code"
ALLOW = CodePolicy(allow=True, limits=CodeLimits(timeout=20))


@pytest.fixture(scope="module")
def own_code(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build(SOURCE, tmp_path_factory.mktemp("own") / "own.bundle.tar.gz", 1700000000).path


def with_cases(bundle: Path, target: Path, *cases: tuple[str, dict[str, Any]]) -> Path:
    """The bundle plus extra cases (id, params) of the bundled checker."""

    def edit(doc: dict[str, Any]) -> None:
        for case_id, params in cases:
            doc["cases"].append(
                {
                    "id": case_id,
                    "checker": "bundle:row-count",
                    "inputs": {"table": "inputs/table.csv"},
                    "params": params,
                    "expect": "pass",
                }
            )

    return edit_manifest(bundle, target, edit)


def case(result: Verification, case_id: str) -> Any:
    return next(r for r in result.cases if r.case.id == case_id)


def test_bundled_code_is_refused_without_opt_in(own_code: Path) -> None:
    result = verify(own_code)
    assert result.exit_code == 4
    assert [r.outcome for r in result.cases] == ["inconclusive", "inconclusive"]
    assert result.cases[0].explanation.startswith("bundled code not allowed")
    report = to_json(result)
    assert report["bundled_code"]["allowed"] is False
    [entry] = report["bundled_code"]["entries"]
    assert entry["entry"] == "code/rows.py:check" and len(entry["sha256"]) == 64
    assert report["claims"][0]["checked_by"] == "checked by the bundle's own code"


def test_bundled_code_runs_with_allow_code(own_code: Path) -> None:
    result = verify(own_code, VerifyOptions(code=ALLOW))
    assert result.exit_code == 0
    assert [r.outcome for r in result.cases] == ["reproduced", "reproduced"]
    report = to_json(result)
    assert report["cases"][0]["checked_by"] == "checked by the bundle's own code"
    assert report["bundled_code"]["isolation"]["python_isolated_mode"] is True
    assert report["bundled_code"]["workers_started"] == 1


def test_built_in_claims_say_independently_checked(quickstart_bundle: Path) -> None:
    report = to_json(verify(quickstart_bundle))
    assert {c["checked_by"] for c in report["claims"]} == {"independently checked"}
    assert "bundled_code" not in report


def _store(tmp_path: Path, key: Any, allow_code: bool) -> Policy:
    path = tmp_path / "trust.toml"
    entry = {"name": "author", "public_key": f"ed25519:{public_of(key).b64}"}
    path.write_text(tomli_w.dumps({"key": [{**entry, "allow_code": allow_code}]}))
    return Policy(load_store(path))


def test_trusted_signer_allowed_to_run_code_lets_it_run(own_code: Path, tmp_path: Path) -> None:
    key = new_private_key()
    signed, _ = sign_bundle(own_code, key, out=tmp_path / "signed.bundle.tar.gz")
    result = verify(signed, VerifyOptions(policy=_store(tmp_path, key, allow_code=True)))
    assert result.exit_code == 0
    assert result.code is not None and "author" in result.code.why


def test_trusted_signer_without_code_permission_does_not(own_code: Path, tmp_path: Path) -> None:
    key = new_private_key()
    signed, _ = sign_bundle(own_code, key, out=tmp_path / "signed.bundle.tar.gz")
    result = verify(signed, VerifyOptions(policy=_store(tmp_path, key, allow_code=False)))
    assert result.signature.state == "trusted"
    assert result.exit_code == 4


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")


@pytest.mark.parametrize("namespaces", [True, False], ids=["namespaces", "process-group-only"])
def test_timeout_kills_the_checker_and_its_grandchild(
    own_code: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, namespaces: bool
) -> None:
    if namespaces and not namespaces_available():
        pytest.skip("no user/network/PID namespaces on this system")
    if not namespaces:
        monkeypatch.setattr(bundler.run.isolation, "namespaces_available", lambda: False)
    # the grandchild tells its host pid through a file of the test's: no file-system jail
    monkeypatch.setattr(bundler.run.isolation, "jail_available", lambda: False)
    pidfile = tmp_path / "grandchild.pid"
    bundle = with_cases(
        own_code,
        tmp_path / "b.bundle.tar.gz",
        ("hangs", {"mode": "grandchild", "pidfile": str(pidfile)}),
    )
    result = verify(bundle, VerifyOptions(code=CodePolicy(True, CodeLimits(timeout=3))))
    hung = case(result, "hangs")
    assert hung.outcome == "inconclusive"
    assert hung.verdict.codes == ("code.timeout",)
    pid = int(pidfile.read_text())
    for _ in range(200):  # the kernel reaps asynchronously; wait, but assert no timing
        if not _alive(pid):
            break
        time.sleep(0.05)
    assert not _alive(pid), f"grandchild {pid} survived"
    assert case(result, "enough-rows").outcome == "reproduced"


def test_memory_hog_is_inconclusive(own_code: Path, tmp_path: Path) -> None:
    bundle = with_cases(
        own_code, tmp_path / "b.bundle.tar.gz", ("hog", {"mode": "memory", "bytes": 2 << 30})
    )
    result = verify(
        bundle, VerifyOptions(code=CodePolicy(True, CodeLimits(timeout=20, memory_bytes=256 << 20)))
    )
    hog = case(result, "hog")
    assert hog.outcome == "inconclusive"
    assert "memory" in hog.verdict.message


def test_huge_output_is_capped_and_the_truncation_reported(own_code: Path, tmp_path: Path) -> None:
    bundle = with_cases(
        own_code, tmp_path / "b.bundle.tar.gz", ("loud", {"mode": "output", "bytes": 5 << 20})
    )
    result = verify(
        bundle, VerifyOptions(code=CodePolicy(True, CodeLimits(timeout=20, output_bytes=1000)))
    )
    loud = case(result, "loud")
    assert loud.outcome == "reproduced"
    assert loud.verdict.details["output_truncated"] is True
    assert loud.verdict.details["output_bytes"] >= 5 << 20
    assert len(loud.verdict.details["output"]) == 1000


def test_checker_that_writes_its_inputs_is_input_tampered(own_code: Path, tmp_path: Path) -> None:
    bundle = with_cases(own_code, tmp_path / "b.bundle.tar.gz", ("tamper", {"mode": "tamper"}))
    result = verify(bundle, VerifyOptions(code=ALLOW))
    tampered = case(result, "tamper")
    assert tampered.outcome == "inconclusive"
    assert tampered.verdict.codes == ("input.tampered",)
    assert "input tampered" in tampered.explanation
    # the next case got a fresh copy, not the tampered one
    assert case(result, "enough-rows").outcome == "reproduced"


def test_checker_sees_a_scrubbed_environment_and_only_its_inputs(
    own_code: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("REVIEWER_SECRET_TOKEN", "s3cret")
    bundle = with_cases(own_code, tmp_path / "b.bundle.tar.gz", ("env", {"mode": "environment"}))
    workdir = tmp_path / "work"
    result = verify(bundle, VerifyOptions(code=ALLOW), workdir=workdir)
    details = case(result, "env").verdict.details
    assert set(details["environ"]) <= {"PATH", "HOME", "TMPDIR", "LANG", "LC_ALL", "LC_CTYPE"}
    assert details["files"] == ["inputs"]
    assert not details["cwd"].startswith(str(workdir))
    assert str(workdir) not in json.dumps(details["path"])


def test_persistent_worker_serves_cases_and_restarts_after_a_crash(
    own_code: Path, tmp_path: Path
) -> None:
    bundle = with_cases(
        own_code,
        tmp_path / "b.bundle.tar.gz",
        ("a", {"mode": "token"}),
        ("b", {"mode": "token"}),
        ("c", {"mode": "crash"}),
        ("d", {"mode": "token"}),
    )
    result = verify(bundle, VerifyOptions(code=ALLOW))
    tokens = [case(result, i).verdict.details.get("token") for i in "abd"]
    assert tokens[0] == tokens[1] != tokens[2]
    crashed = case(result, "c")
    assert crashed.verdict.codes == ("code.crashed",) and "status 3" in crashed.verdict.message
    assert result.code is not None and result.code.workers_started == 2


def test_raising_checker_is_inconclusive(own_code: Path, tmp_path: Path) -> None:
    bundle = with_cases(own_code, tmp_path / "b.bundle.tar.gz", ("odd", {"mode": "no-such"}))
    odd = case(verify(bundle, VerifyOptions(code=ALLOW)), "odd")
    assert odd.outcome == "inconclusive" and "ValueError" in odd.verdict.message


def test_network_namespace_cuts_the_network(own_code: Path, tmp_path: Path) -> None:
    if not namespaces_available():
        pytest.skip("no network namespace on this system")
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        port = server.getsockname()[1]
        bundle = with_cases(
            own_code, tmp_path / "b.bundle.tar.gz", ("net", {"mode": "network", "port": port})
        )
        details = case(verify(bundle, VerifyOptions(code=ALLOW)), "net").verdict.details
    assert details["connected"] is False


def test_verifier_never_imports_bundle_code(own_code: Path) -> None:
    before = set(sys.modules)
    verify(own_code, VerifyOptions(code=ALLOW))
    assert "bundled_checker" not in sys.modules
    assert not any(m == "rows" or m.startswith("code.") for m in set(sys.modules) - before)


def test_cli_allow_code_and_report(own_code: Path) -> None:
    run: Callable[..., Any] = CliRunner().invoke
    refused = run(main, ["verify", str(own_code)])
    assert refused.exit_code == 4 and "would run bundle:row-count" in refused.stdout
    allowed = run(main, ["verify", str(own_code), "--allow-code", "--json", "-"])
    assert allowed.exit_code == 0
    assert json.loads(allowed.stdout)["bundled_code"]["allowed"] is True


def test_source_naming_unknown_bundled_code_is_refused(tmp_path: Path) -> None:
    import shutil

    from bundler.errors import SourceError

    src = tmp_path / "src"
    shutil.copytree(SOURCE, src)
    text = (
        (src / "bundle.yaml")
        .read_text()
        .replace("checker: bundle:row-count", "checker: bundle:nope", 1)
    )
    (src / "bundle.yaml").write_text(text)
    with pytest.raises(SourceError) as caught:
        build(src, tmp_path / "x.bundle.tar.gz")
    assert "code.unknown" in [p.code for p in caught.value.problems]
    assert not os.path.exists(tmp_path / "x.bundle.tar.gz")


def test_request_larger_than_a_pipe_buffer_reaches_bundled_code(
    own_code: Path, tmp_path: Path
) -> None:
    bundle = with_cases(
        own_code,
        tmp_path / "b.bundle.tar.gz",
        ("big", {"mode": "token", "blob": "x" * (300 << 10)}),
    )
    assert case(verify(bundle, VerifyOptions(code=ALLOW)), "big").outcome == "reproduced"


def test_reports_with_code_and_signatures_follow_the_report_schema(
    own_code: Path, tmp_path: Path
) -> None:
    from bundler.reports.schema import schema_problems

    key = new_private_key()
    signed, _ = sign_bundle(own_code, key, out=tmp_path / "signed.bundle.tar.gz")
    for result in (
        verify(own_code),
        verify(own_code, VerifyOptions(code=ALLOW)),
        verify(signed, VerifyOptions(policy=_store(tmp_path, key, allow_code=True))),
    ):
        report = json.loads(json.dumps(to_json(result)))
        assert schema_problems(report) == []
        assert report["report_format"] == "reprobundle-report/1.4"


def _processes_naming(marker: str) -> list[int]:
    found = []
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            if marker in (proc / "cmdline").read_bytes().decode(errors="replace") and _alive(
                int(proc.name)
            ):
                found.append(int(proc.name))
        except (OSError, ValueError):
            continue
    return found


def test_verify_killed_inside_a_case_leaves_no_process_running(
    own_code: Path, tmp_path: Path
) -> None:
    """SIGKILL cannot be caught, so verify can stop nothing itself: the bundled checker's
    worker (and unshare above it) must end with it even in the middle of a case, where the
    worker does not read its request pipe. The kill comes just after the third case (the
    one that sleeps) is sent to the worker: its first read is the worker's ready line."""
    bundle = with_cases(
        own_code, tmp_path / "b.bundle.tar.gz", ("sleeps", {"mode": "sleep", "seconds": 600})
    )
    temp = tmp_path / "temp"
    temp.mkdir()
    point = ["bundler.run.worker:Worker._read_line", "before", "4"]
    command = ["verify", str(bundle), "--allow-code"]
    killed = subprocess.run(
        [sys.executable, "-m", "tests.kill_at", *point, "--", *command],
        env={**os.environ, "PYTHONPATH": str(REPO), "TMPDIR": str(temp)},
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    left = _processes_naming(str(temp))
    for _ in range(2400):  # a process whose parent died ends on its own, not at once
        if not left:
            break
        time.sleep(0.05)
        left = _processes_naming(str(temp))
    for pid in left:  # so that a failure leaves nothing running
        os.kill(pid, signal.SIGKILL)
    assert left == [], "a process outlived the killed verification"
