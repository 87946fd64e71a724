"""The command line as users meet it: exit codes, messages, no tracebacks."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner

import checkers
from bundler.cli import main
from tests.helpers import edit_manifest, read_entries, write_entries


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_installed_console_script_verifies_from_an_unrelated_directory(
    quickstart_bundle: Path, tmp_path: Path
) -> None:
    script = shutil.which("reprobundle") or str(Path(sys.executable).parent / "reprobundle")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    done = subprocess.run(
        [script, "verify", str(quickstart_bundle)],
        cwd=elsewhere,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": ""},
    )
    assert done.returncode == 0, done.stderr
    assert "supported     accepts-equivalent-content" in done.stdout
    assert "What this bundle cannot support" in done.stdout
    assert list(elsewhere.iterdir()) == []


def test_verify_json_report(quickstart_bundle: Path, tmp_path: Path) -> None:
    code, out, _ = run("verify", str(quickstart_bundle), "--json", "-")
    report = json.loads(out)
    assert code == 0
    assert report["report_format"] == "reprobundle-report/1.4"
    assert report["result"] == "supported"
    assert [c["status"] for c in report["claims"]] == ["supported", "supported"]
    assert report["claims"][0]["total"] == 2 and report["claims"][0]["negative_controls"] == 1


def test_tampered_bundle_exits_3_naming_the_file(quickstart_bundle: Path, tmp_path: Path) -> None:
    entries = read_entries(quickstart_bundle)
    entries[2].data += b" "  # one byte more: the size no longer matches
    bad = write_entries(entries, tmp_path / "bad.bundle.tar.gz")
    code, out, err = run("verify", str(bad))
    assert code == 3
    assert entries[2].name in err and "observed 625 bytes, the manifest says 624" in err
    assert "Traceback" not in err + out


def test_rejection_json_names_problems(tmp_path: Path) -> None:
    bad = tmp_path / "x.bundle.tar.gz"
    bad.write_bytes(b"garbage")
    code, out, _ = run("verify", str(bad), "--json", "-")
    assert code == 3
    assert json.loads(out)["problems"][0]["code"] == "archive.not_compressed_tar"


def test_contradicted_exits_1(quickstart_bundle: Path, tmp_path: Path) -> None:
    def flip(doc: dict) -> None:  # type: ignore[type-arg]
        doc["cases"][0]["expect"] = "fail"

    bad = edit_manifest(quickstart_bundle, tmp_path / "x.bundle.tar.gz", flip)
    code, out, _ = run("verify", str(bad))
    assert code == 1
    assert "contradicted" in out and "Result: a claim is contradicted" in out


@pytest.mark.parametrize("command", ["verify", "inspect", "report"])
def test_missing_file_is_a_usage_error(tmp_path: Path, command: str) -> None:
    for path in (tmp_path / "nope.bundle.tar.gz", tmp_path):  # missing, a folder
        code, _, err = run(command, str(path))
        assert code == 2 and f"{path} is not a file" in err


def test_nonempty_workdir_exits_2(quickstart_bundle: Path, tmp_path: Path) -> None:
    (tmp_path / "x").write_text("x")
    code, _, err = run("verify", str(quickstart_bundle), "--workdir", str(tmp_path))
    assert code == 2 and "not empty" in err


def test_build_reports_every_source_problem(tmp_path: Path) -> None:
    (tmp_path / "bundle.yaml").write_text("name: x\nversoin: 1.0.0\n")
    code, _, err = run("build", str(tmp_path), "-o", str(tmp_path / "x.bundle.tar.gz"))
    assert code == 2
    assert "bundle.yaml:2: unknown key 'versoin' (did you mean 'version'?)" in err
    assert "Traceback" not in err


def test_init_then_build_then_verify(tmp_path: Path) -> None:
    source = tmp_path / "mine"
    assert run("init", str(source))[0] == 0
    out = tmp_path / "mine.bundle.tar.gz"
    code, stdout, err = run("build", str(source), "-o", str(out))
    assert code == 0, err
    assert "1 of 1 claims supported" in stdout
    assert run("verify", str(out))[0] == 0


def test_starter_comment_names_the_file_build_writes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = tmp_path / "mine"
    assert run("init", str(source))[0] == 0
    header = (source / "bundle.yaml").read_text().splitlines()[:2]
    assert "reprobundle build ." in header[0]
    named = header[1].split("reprobundle verify ")[1].strip()
    monkeypatch.chdir(source)
    assert run("build", ".")[0] == 0
    assert (source / named).is_file()
    assert run("verify", named)[0] == 0


def test_init_refuses_a_non_empty_folder(tmp_path: Path) -> None:
    (tmp_path / "keep.txt").write_text("mine")
    code, _, err = run("init", str(tmp_path))
    assert code == 2 and "never overwrites" in err
    assert (tmp_path / "keep.txt").read_text() == "mine"


def test_inspect_runs_nothing_and_shows_claims(quickstart_bundle: Path) -> None:
    code, out, _ = run("inspect", str(quickstart_bundle))
    assert code == 0
    assert "Identity  sha256:" in out
    expects = "expects fail [content.removed] (control)"
    assert f"dropped-rule-is-caught: structured-equal@1, {expects}" in out


def test_inspect_leaves_nothing_behind(
    quickstart_bundle: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import tempfile

    temp = tmp_path / "temp"
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    assert run("inspect", str(quickstart_bundle))[0] == 0
    assert list(temp.iterdir()) == []
    cut = tmp_path / "cut.bundle.tar.gz"
    cut.write_bytes(quickstart_bundle.read_bytes()[:-100])
    code, _, err = run("inspect", str(cut))
    assert code == 3 and "archive." in err
    assert list(temp.iterdir()) == []


def test_checkers_lists_codes_and_params(tmp_path: Path) -> None:
    code, out, _ = run("checkers")
    assert code == 0 and "structured-equal@1" in out
    code, out, _ = run("checkers", "structured-equal")
    assert "content.removed:" in out and "actual (data, path)" in out
    code, _, err = run("checkers", "nope")
    assert code == 2 and "no built-in checker" in err


def test_every_command_help_has_an_example() -> None:
    import click

    def paths(group: click.Group, prefix: tuple[str, ...]) -> list[tuple[str, ...]]:
        found = []
        for name, command in group.commands.items():
            found.append((*prefix, name))
            if isinstance(command, click.Group):
                found += paths(command, (*prefix, name))
        return found

    for path in paths(main, ()):
        code, out, _ = run(*path, "--help")
        assert code == 0
        # an example is a command line (the group `attestation` said "Example" only in a
        # subcommand's summary: issue 43, defect 9)
        assert re.search(r"Example:\n +reprobundle ", out), " ".join(path)


def test_closed_pipe_is_not_reported_as_a_bug(
    capfd: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import sys

    from bundler.cli._shared import handle_errors

    monkeypatch.setattr(sys, "stdout", sys.stdout)  # restored after the test

    @handle_errors
    def writes_into_a_closed_pipe() -> None:
        raise BrokenPipeError(32, "Broken pipe")

    with pytest.raises(SystemExit) as caught:
        writes_into_a_closed_pipe()
    assert caught.value.code == 141
    assert sys.stdout.name == "/dev/null"  # what is left to flush goes nowhere
    sys.stdout.close()
    assert "internal error" not in capfd.readouterr().err


def test_archive_option_after_the_subcommand_says_where_it_goes() -> None:
    """Friction 7 of issue 43: ``archive list --archive DIR`` said only "No such option"."""
    code, _, err = run("archive", "list", "--archive", "somewhere")
    assert code == 2
    assert "--archive is an option of `reprobundle archive` itself" in err
    assert "reprobundle archive --archive DIR list" in err


def test_checkers_listing_marks_the_current_version_of_each_checker() -> None:
    """Friction 11 of issue 43: ``checkers`` listed @1 and @2 side by side with nothing
    marking the one a new bundle should name."""
    code, out, _ = run("checkers")
    assert code == 0
    lines = {line.split("  ")[0]: line for line in out.splitlines()}
    assert "(older; @2 is current)" in lines["structured-equal@1"]
    assert "(current)" in lines["structured-equal@2"]
    # a checker of one version (any: a new version of one must not need this test changed)
    versions = Counter(found.name for found in checkers.registry().values())
    alone = min(f"{name}@1" for name, n in versions.items() if n == 1)
    assert "current" not in lines[alone]  # one version: nothing to choose
