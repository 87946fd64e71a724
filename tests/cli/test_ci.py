"""Verify in CI in one step: `reprobundle ci`, the GitHub Action that runs it (action.yml)
and the README's GitHub workflow and GitLab job, each parsed and its script run here on
example bundles with a temporary summary file."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from bundler.authoring.build import build
from bundler.signatures.signfile import sign_bundle
from bundler.signatures.signing import new_private_key, private_key_pem, public_of

REPO = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent


def readme_yaml(first_line: str) -> str:
    """The README's yaml block that starts with ``first_line``."""
    blocks = re.findall(r"```yaml\n(.*?)```", (REPO / "README.md").read_text("utf-8"), re.S)
    return next(b for b in blocks if b.startswith(first_line))


@pytest.fixture(scope="module")
def bundles(tmp_path_factory: pytest.TempPathFactory, quickstart_bundle: Path) -> dict[str, Path]:
    """A supported bundle (signed by alice), an inconclusive one (bundled code, not allowed)
    and a rejected one (a flipped byte), with alice's key files."""
    folder = tmp_path_factory.mktemp("ci")
    key = new_private_key()
    (folder / "alice.key").write_bytes(private_key_pem(key, None))
    (folder / "alice.pub").write_text(public_of(key).pem())
    signed = folder / "quickstart.bundle.tar.gz"
    sign_bundle(quickstart_bundle, key, signed)
    own = build(REPO / "tests" / "sources" / "own-code", folder / "own.bundle.tar.gz", 1700000000)
    data = quickstart_bundle.read_bytes()
    broken = folder / "broken.bundle.tar.gz"
    broken.write_bytes(data[:100] + bytes([data[100] ^ 1]) + data[101:])
    return {
        "supported": signed,
        "inconclusive": own.path,
        "rejected": broken,
        "key": folder / "alice.key",
        "pub": folder / "alice.pub",
    }


def ci(
    *args: str, cwd: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "bundler", "ci", *args],
        cwd=cwd,
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
    )


def test_ci_writes_reports_summary_and_attestation(
    bundles: dict[str, Path], tmp_path: Path
) -> None:
    summary = tmp_path / "summary.md"
    summary.write_text("earlier step\n")
    done = ci(
        str(bundles["supported"]),
        "--trust",
        str(bundles["pub"]),
        "--out",
        "out",
        "--attest-key",
        str(bundles["key"]),
        cwd=tmp_path,
        env={"GITHUB_STEP_SUMMARY": str(summary)},
    )
    assert done.returncode == 0, done.stderr
    assert "ok   " in done.stdout and ": supported" in done.stdout
    assert (tmp_path / "out" / "quickstart.junit.xml").read_text().startswith("<?xml")
    assert "<html" in (tmp_path / "out" / "quickstart.html").read_text()
    assert (tmp_path / "out" / "quickstart.intoto.json").is_file()
    text = summary.read_text()
    assert text.startswith("earlier step\n"), "the summary is appended to, never replaced"
    assert "supported" in text and "|" in text


@pytest.mark.parametrize(
    ("which", "fail_on", "code"),
    [
        ("inconclusive", "contradicted", 0),
        ("inconclusive", "inconclusive", 1),
        ("rejected", "contradicted", 3),
        ("supported", "inconclusive", 0),
    ],
)
def test_ci_fails_the_job_by_the_stated_policy(
    bundles: dict[str, Path], tmp_path: Path, which: str, fail_on: str, code: int
) -> None:
    done = ci(str(bundles[which]), "--fail-on", fail_on, "--summary", "s.md", cwd=tmp_path)
    assert done.returncode == code, done.stdout + done.stderr
    assert (tmp_path / "out" / "x").exists() is False
    reports = tmp_path / "reprobundle-reports"
    assert len(list(reports.glob("*.junit.xml"))) == 1, "a report even for a rejected bundle"
    assert (tmp_path / "s.md").read_text().strip()


def test_ci_refuses_a_folder_that_is_no_bundle(tmp_path: Path) -> None:
    done = ci(str(tmp_path), cwd=tmp_path)
    assert done.returncode == 2
    assert "not a file" in done.stderr


# --- the GitHub Action ------------------------------------------------------------------


def action() -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load((REPO / "action.yml").read_text("utf-8"))
    return loaded


def test_action_is_composite_and_installs_from_its_own_ref() -> None:
    doc = action()
    assert doc["runs"]["using"] == "composite"
    install, run = doc["runs"]["steps"]
    assert '"$ACTION_PATH"' in install["run"] and "github.action_path" in str(install["env"])
    assert 'ci "${args[@]}" -- "${files[@]}"' in run["run"], "bundle files only after --"
    for step in doc["runs"]["steps"]:
        assert step["shell"] == "bash"
        assert "${{" not in step["run"], "inputs reach the script through env, never inline"
    declared = set(doc["inputs"])
    used = set(re.findall(r"inputs\.([a-z-]+)", str(doc["runs"])))
    assert used == declared


def run_action_script(
    tmp_path: Path, env_extra: dict[str, str] | None = None, **inputs: str
) -> tuple[subprocess.CompletedProcess[str], Path, Path]:
    step = action()["runs"]["steps"][1]
    summary, output = tmp_path / "summary.md", tmp_path / "output"
    defaults = {k: str(v.get("default", "")) for k, v in action()["inputs"].items()}
    values = {**defaults, **inputs}
    env = {
        **os.environ,
        "GITHUB_STEP_SUMMARY": str(summary),
        "GITHUB_OUTPUT": str(output),
        "REPROBUNDLE": str(BIN / "reprobundle"),
        **(env_extra or {}),
    }
    for name, value in values.items():
        env[f"INPUT_{name.upper().replace('-', '_')}"] = value
    done = subprocess.run(
        ["bash", "-c", step["run"]], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    return done, summary, output


def test_action_script_verifies_and_reports(bundles: dict[str, Path], tmp_path: Path) -> None:
    shutil.copy(bundles["supported"], tmp_path / "a.bundle.tar.gz")
    done, summary, output = run_action_script(
        tmp_path,
        bundles="*.bundle.tar.gz",
        trust=str(bundles["pub"]),
        **{"require-signature": "true", "fail-on": "inconclusive"},
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "reports=reprobundle-reports" in output.read_text()
    assert (tmp_path / "reprobundle-reports" / "a.junit.xml").is_file()
    assert "supported" in summary.read_text()


def test_action_script_fails_the_step_on_an_unsigned_bundle_when_signatures_are_required(
    bundles: dict[str, Path], tmp_path: Path
) -> None:
    done, _, _ = run_action_script(
        tmp_path,
        bundles=str(bundles["inconclusive"]),
        trust=str(bundles["pub"]),
        **{"require-signature": "true"},
    )
    assert done.returncode == 3, done.stdout + done.stderr
    assert "signature.required" in done.stderr


# --- a hostile file tree: nothing a name says reaches the log as a command or an option ---

COMMAND_NAME = "x\n::error title=reprobundle::every claim supported\n.bundle.tar.gz"


def runner_commands(log: str) -> list[str]:
    """The lines of ``log`` a runner would act on: GitHub's workflow commands (``::`` at
    the start after blanks, ``##[`` anywhere) and any escape or carriage return."""
    found = [ln for ln in log.splitlines() if ln.lstrip().startswith("::") or "##[" in ln]
    return found + [ln for ln in log.split("\n") if "\x1b" in ln or "\r" in ln]


def test_action_file_name_cannot_become_an_option(bundles: dict[str, Path], tmp_path: Path) -> None:
    """`--trust=.k.bundle.tar.gz` matched by the bundles glob, beside the attacker's key
    `.k.bundle.tar.gz` and a bundle signed with it: the key must not be trusted."""
    mallory = new_private_key()
    (tmp_path / ".k.bundle.tar.gz").write_text(public_of(mallory).pem())
    (tmp_path / "--trust=.k.bundle.tar.gz").write_text("not a bundle")
    (tmp_path / "--require-signature.bundle.tar.gz").write_text("not a bundle")
    sign_bundle(bundles["inconclusive"], mallory, tmp_path / "evil.bundle.tar.gz")
    done, _, _ = run_action_script(
        tmp_path,
        bundles="*.bundle.tar.gz",
        trust=str(bundles["pub"]),
        **{"require-signature": "true"},
    )
    assert done.returncode == 3, done.stdout + done.stderr
    assert "FAIL evil.bundle.tar.gz: rejected" in done.stdout
    assert "FAIL --trust=.k.bundle.tar.gz: rejected" in done.stdout, "a file, not an option"
    assert "signature" in done.stderr


def test_action_log_carries_no_workflow_command_from_a_file_name(
    bundles: dict[str, Path], tmp_path: Path
) -> None:
    shutil.copy(bundles["rejected"], tmp_path / COMMAND_NAME)
    shutil.copy(bundles["supported"], tmp_path / "##[error]y.bundle.tar.gz")
    shutil.copy(bundles["supported"], tmp_path / "\x1b[31m::add-mask::z.bundle.tar.gz")
    done, _, _ = run_action_script(tmp_path, {"GITHUB_ACTIONS": "true"}, bundles="*.bundle.tar.gz")
    assert done.returncode == 3, done.stdout + done.stderr
    log = done.stdout + done.stderr
    assert runner_commands(log) == [], log
    assert "every claim supported" in log, "the name is shown, escaped, not dropped"
    reports = os.listdir(tmp_path / "reprobundle-reports")
    assert all(n.isprintable() and ":" not in n for n in reports), reports
    assert len(reports) == 6


def test_ci_log_for_gitlab_carries_no_escape_or_section_marker(
    bundles: dict[str, Path], tmp_path: Path
) -> None:
    name = "q\r\x1b]8;;x\x07section_start:1:evil\r\x1b[0K.bundle.tar.gz"
    shutil.copy(bundles["rejected"], tmp_path / name)
    done = subprocess.run(
        [sys.executable, "-m", "bundler", "ci", name],
        cwd=tmp_path,
        env={**os.environ, "GITLAB_CI": "true", "GITHUB_ACTIONS": ""},
        capture_output=True,
    )
    assert done.returncode == 3, done.stdout + done.stderr
    log = done.stdout + done.stderr
    assert b"\x1b" not in log and b"\r" not in log and b"\x07" not in log, log
    assert b"section_start:1:evil" in done.stdout


def test_ci_writes_no_report_through_a_link_planted_in_its_folder(
    bundles: dict[str, Path], tmp_path: Path
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "keep.txt").write_text("precious")
    out = tmp_path / "reprobundle-reports"
    out.mkdir()
    (out / "q.html").symlink_to(elsewhere / "keep.txt")
    shutil.copy(bundles["supported"], tmp_path / "q.bundle.tar.gz")
    done = ci("q.bundle.tar.gz", cwd=tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "symbolic link" in done.stderr
    assert (elsewhere / "keep.txt").read_text() == "precious"


def test_ci_writes_no_report_through_an_out_folder_that_is_a_link(
    bundles: dict[str, Path], tmp_path: Path
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (tmp_path / "reprobundle-reports").symlink_to(elsewhere)
    shutil.copy(bundles["supported"], tmp_path / "q.bundle.tar.gz")
    done = ci("q.bundle.tar.gz", cwd=tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "symbolic link" in done.stderr
    assert list(elsewhere.iterdir()) == []


def test_ci_removes_an_older_attestation_of_a_bundle_it_now_rejects(
    bundles: dict[str, Path], tmp_path: Path
) -> None:
    shutil.copy(bundles["supported"], tmp_path / "q.bundle.tar.gz")
    key = ("--attest-key", str(bundles["key"]))
    assert ci("q.bundle.tar.gz", *key, cwd=tmp_path).returncode == 0
    attested = tmp_path / "reprobundle-reports" / "q.intoto.json"
    assert attested.is_file()
    shutil.copy(bundles["rejected"], tmp_path / "q.bundle.tar.gz")
    done = ci("q.bundle.tar.gz", *key, cwd=tmp_path)
    assert done.returncode == 3
    assert not attested.exists(), "an attestation of an earlier run must not stay beside it"
    assert "removed" in done.stderr and "q.intoto.json" in done.stderr


def test_ci_line_counts_findings(example_bundle: Any, tmp_path: Path) -> None:
    done = ci(str(example_bundle("config-edits")), cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert re.search(r": supported, \d+ findings?$", done.stdout.strip()), done.stdout


def actionlint() -> str:
    found = shutil.which("actionlint", path=str(BIN)) or shutil.which("actionlint")
    if not found:
        pytest.fail("actionlint is not installed: pip install -e '.[test]'")
    return found


def lint(workflow: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    target = tmp_path / ".github" / "workflows" / "bundles.yml"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(workflow)
    return subprocess.run(
        [actionlint(), "-no-color", str(target)], cwd=tmp_path, capture_output=True, text=True
    )


def test_readme_workflow_passes_actionlint(tmp_path: Path) -> None:
    done = lint(readme_yaml("# .github/workflows/bundles.yml"), tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr


def test_actionlint_catches_a_broken_workflow(tmp_path: Path) -> None:
    broken = readme_yaml("# .github/workflows/bundles.yml").replace(
        "steps.bundles.outputs.reports", "steps.nothing.outputs.reports"
    )
    done = lint(broken, tmp_path)
    assert done.returncode != 0
    assert "nothing" in done.stdout


def test_readme_workflow_uses_the_action_inputs_it_declares() -> None:
    doc = yaml.safe_load(readme_yaml("# .github/workflows/bundles.yml"))
    step = next(s for s in doc["jobs"]["verify"]["steps"] if s.get("id") == "bundles")
    assert set(step["with"]) <= set(action()["inputs"])


# --- GitLab CI --------------------------------------------------------------------------


def test_readme_gitlab_job_runs_its_script(bundles: dict[str, Path], tmp_path: Path) -> None:
    doc = yaml.safe_load(readme_yaml("# .gitlab-ci.yml"))
    job = doc["verify-bundles"]
    (tmp_path / "dist").mkdir()
    (tmp_path / "keys").mkdir()
    shutil.copy(bundles["supported"], tmp_path / "dist" / "q.bundle.tar.zst")
    shutil.copy(bundles["pub"], tmp_path / "keys" / "alice.pub")
    script = [line for line in job["script"] if "pip install" not in line]
    assert len(script) == len(job["script"]) - 1
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}"}
    env.pop("GITHUB_STEP_SUMMARY", None)
    done = subprocess.run(
        ["bash", "-euc", "\n".join(script)], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stdout + done.stderr
    junit = list(tmp_path.glob(job["artifacts"]["reports"]["junit"]))
    assert [p.name for p in junit] == ["q.junit.xml"]
    assert (tmp_path / "reprobundle-reports" / "summary.md").read_text().strip()


def test_ci_appends_no_summary_through_a_planted_link(
    bundles: dict[str, Path], tmp_path: Path
) -> None:
    elsewhere = tmp_path / "elsewhere.txt"
    elsewhere.write_text("precious\n")
    (tmp_path / "reprobundle-reports").mkdir()
    (tmp_path / "reprobundle-reports" / "summary.md").symlink_to(elsewhere)
    shutil.copy(bundles["supported"], tmp_path / "q.bundle.tar.gz")
    done = ci("q.bundle.tar.gz", "--summary", "reprobundle-reports/summary.md", cwd=tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "symbolic link" in done.stderr
    assert elsewhere.read_text() == "precious\n"
    assert not (tmp_path / "reprobundle-reports" / "q.html").exists(), "refused before any work"


def test_ci_writes_no_report_through_a_link_on_the_way_to_its_folder(
    bundles: dict[str, Path], tmp_path: Path
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    work = tmp_path / "checkout"
    work.mkdir()
    (work / "reports").symlink_to(elsewhere)
    shutil.copy(bundles["supported"], work / "q.bundle.tar.gz")
    done = ci("q.bundle.tar.gz", "--out", "reports/ci", cwd=work)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "symbolic link" in done.stderr
    assert list(elsewhere.iterdir()) == []


def test_every_command_error_is_escaped_for_the_github_log(tmp_path: Path) -> None:
    """Not only `ci`: an error any command prints in a GitHub job carries no command."""
    done = subprocess.run(
        [sys.executable, "-m", "bundler", "verify", "a ##[error]b::c.bundle.tar.zst"],
        cwd=tmp_path,
        env={**os.environ, "GITHUB_ACTIONS": "true"},
        capture_output=True,
        text=True,
    )
    assert done.returncode == 2, done.stderr
    assert runner_commands(done.stdout + done.stderr) == [], done.stderr
    assert "does not exist" in done.stderr


def test_action_writes_no_report_through_links_planted_in_the_checkout(
    bundles: dict[str, Path], tmp_path: Path
) -> None:
    """The whole hostile tree at once, through the action's own script: a report's name
    and the summary planted as links to a file outside."""
    elsewhere = tmp_path / "elsewhere.txt"
    elsewhere.write_text("precious\n")
    work = tmp_path / "checkout"
    (work / "reprobundle-reports").mkdir(parents=True)
    (work / "reprobundle-reports" / "q.html").symlink_to(elsewhere)
    (work / "reprobundle-reports" / "q.junit.xml").symlink_to(elsewhere)
    shutil.copy(bundles["supported"], work / "q.bundle.tar.gz")
    done, _, _ = run_action_script(work, bundles="*.bundle.tar.gz")
    assert done.returncode == 2, done.stdout + done.stderr
    assert "symbolic link" in done.stderr
    assert elsewhere.read_text() == "precious\n"
