"""What a command writes matches the name it writes to, and a message says what to give
instead (issue 43: frictions 2, 3, 8, 13)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from bundler.cli import main
from tests.helpers import copy_source


def cli(*args: object) -> Any:
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


# --- friction 3: the format follows the output's extension; a contradiction is refused --


@pytest.mark.parametrize(
    ("name", "start"),
    [("x.html", "<!DOCTYPE html>"), ("x.xml", "<?xml"), ("x.json", "{"), ("x.md", "### ")],
)
def test_report_format_follows_the_output_extension(
    quickstart_bundle: Path, tmp_path: Path, name: str, start: str
) -> None:
    target = tmp_path / name
    done = cli("report", quickstart_bundle, "-o", target, "-q")
    assert done.exit_code == 0, done.output
    assert target.read_text().lstrip().startswith(start), target.read_text()[:80]


def test_report_format_that_contradicts_the_extension_is_refused(
    quickstart_bundle: Path, tmp_path: Path
) -> None:
    target = tmp_path / "x.html"
    done = cli("report", quickstart_bundle, "-o", target, "-f", "markdown")
    assert done.exit_code == 2, done.output
    assert "extension says HTML" in done.output and not target.exists()


@pytest.mark.parametrize(("flag", "name"), [("--json", "r.html"), ("--html", "r.md")])
def test_verify_output_whose_extension_says_another_format_is_refused(
    quickstart_bundle: Path, tmp_path: Path, flag: str, name: str
) -> None:
    done = cli("verify", quickstart_bundle, flag, tmp_path / name, "-q")
    assert done.exit_code == 2, done.output
    assert "its extension says" in done.output and not (tmp_path / name).exists()


# --- friction 13: the message names the command the user meant ----------------------------


def test_verify_of_a_json_report_suggests_reprobundle_report(
    quickstart_bundle: Path, tmp_path: Path
) -> None:
    report = tmp_path / "report.json"
    assert cli("verify", quickstart_bundle, "--json", report, "-q").exit_code == 0
    done = cli("verify", report)
    assert done.exit_code == 3
    assert "reprobundle report report.json" in done.output


def test_build_of_bundle_yaml_says_give_the_folder(tmp_path: Path) -> None:
    source = copy_source(tmp_path)
    done = cli("build", source / "bundle.yaml")
    assert done.exit_code == 2
    assert "give the folder, not bundle.yaml" in done.output


@pytest.mark.parametrize("make", ["nothing", "empty folder"])
def test_build_of_a_missing_source_says_it_does_not_exist(tmp_path: Path, make: str) -> None:
    source = tmp_path / "src"
    if make == "empty folder":
        source.mkdir()
    done = cli("build", source)
    assert done.exit_code == 2
    assert "does not exist" in done.output


# --- friction 8: a work folder the user named is never left unnamed ------------------------


def test_keep_and_ctrl_c_print_where_the_half_written_folder_is(
    quickstart_bundle: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def interrupted(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr("bundler.run.verify.run_cases", interrupted)
    work = tmp_path / "w"
    done = CliRunner().invoke(
        main, ["verify", str(quickstart_bundle), "--keep", "--workdir", str(work)]
    )
    assert done.exit_code == 130, done.output
    assert f"the work directory is kept at {work}" in done.output
    assert (work / "quickstart-1.0.0" / "inputs" / "expected.yaml").is_file()


def test_ctrl_c_without_keep_leaves_no_folder_and_names_none(
    quickstart_bundle: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def interrupted(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr("bundler.run.verify.run_cases", interrupted)
    work = tmp_path / "w"
    done = CliRunner().invoke(main, ["verify", str(quickstart_bundle), "--workdir", str(work)])
    assert done.exit_code == 130, done.output
    assert "kept" not in done.output and not work.exists()


@pytest.mark.parametrize("before", [False, True])
def test_workdir_without_keep_says_what_became_of_the_folder(
    quickstart_bundle: Path, tmp_path: Path, before: bool
) -> None:
    work = tmp_path / "w"
    if before:
        work.mkdir()
    done = cli("verify", quickstart_bundle, "--workdir", work, "-q")
    assert done.exit_code == 0, done.output
    assert work.exists() is before, "never delete a folder this run did not make"
    said = "emptied (it was there before)" if before else "removed (made for this run)"
    assert f"work directory {work} {said}; --keep keeps its files" in done.output


# --- friction 2: an output replaces only what such a command wrote --------------------------


def test_build_output_that_is_an_unrelated_file_is_refused(tmp_path: Path) -> None:
    source = copy_source(tmp_path)
    notes = tmp_path / "notes.bundle.tar.zst"
    notes.write_text("my notes")
    done = cli("build", source, "-o", notes)
    assert done.exit_code == 2, done.output
    assert "exists and is not a bundle" in done.output and "--force" in done.output
    assert notes.read_text() == "my notes"
    assert cli("build", source, "-o", notes, "--force").exit_code == 0
    assert notes.read_bytes()[:4] == b"\x28\xb5\x2f\xfd"
    assert cli("build", source, "-o", notes).exit_code == 0, "a bundle over a bundle is fine"


@pytest.mark.parametrize("name", ["notes.txt", "out.zip", "bundle"])
def test_build_output_whose_name_does_not_say_bundle_is_refused(tmp_path: Path, name: str) -> None:
    source = copy_source(tmp_path)
    done = cli("build", source, "-o", tmp_path / name)
    assert done.exit_code == 2, done.output
    assert "NAME.bundle.tar.zst" in done.output and not (tmp_path / name).exists()


def test_build_compression_that_contradicts_the_name_is_refused(tmp_path: Path) -> None:
    source = copy_source(tmp_path)
    done = cli("build", source, "-o", tmp_path / "x.bundle.tar.zst", "--compression", "gzip")
    assert done.exit_code == 2, done.output
    assert "NAME.bundle.tar.gz" in done.output


def test_archive_export_over_an_unrelated_file_is_refused(
    quickstart_bundle: Path, tmp_path: Path
) -> None:
    archive = tmp_path / "archive"
    assert cli("archive", "--archive", archive, "init").exit_code == 0
    assert cli("archive", "--archive", archive, "add", quickstart_bundle).exit_code == 0
    notes = tmp_path / "notes.bundle.tar.gz"
    notes.write_text("my notes")
    export = ("archive", "--archive", archive, "export", "quickstart@1.0.0", "-o")
    done = cli(*export, notes)
    assert done.exit_code == 2, done.output
    assert "exists and is not a bundle" in done.output and notes.read_text() == "my notes"
    assert cli(*export, tmp_path / "out.zip").exit_code == 2
    assert cli(*export, notes, "--force").exit_code == 0


def test_a_file_output_given_as_dash_is_refused_not_written_as_a_file_named_dash(
    quickstart_bundle: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`archive export NAME@V -o -` wrote a file named `-` (and so would `build -o -`):
    a command whose output is a file says so, exit 2, naming the fix."""
    archive = tmp_path / "archive"
    assert cli("archive", "--archive", archive, "init").exit_code == 0
    assert cli("archive", "--archive", archive, "add", quickstart_bundle).exit_code == 0
    monkeypatch.chdir(tmp_path)
    commands = [
        ("archive", "--archive", archive, "export", "quickstart@1.0.0", "-o", "-"),
        ("build", copy_source(tmp_path), "-o", "-"),
        ("archive", "--archive", archive, "checkpoint", "-o", "-"),
    ]
    for command in commands:
        done = cli(*command)
        assert done.exit_code == 2, (command, done.output)
        assert "-o -: " in done.output and "not to standard output" in done.output
        assert "give the file's name" in done.output
        assert not (tmp_path / "-").exists(), command
    assert "-o NAME.bundle.tar.zst" in cli(*commands[0]).output


@pytest.mark.parametrize(
    ("command", "name"),
    [
        (("verify", "{b}", "-q", "--json"), "r.json"),
        (("verify", "{b}", "-q", "--html"), "r.html"),
        (("verify", "{b}", "-q", "--junit"), "r.xml"),
        (("verify", "{b}", "-q", "--markdown"), "r.md"),
        (("report", "{b}", "-q", "-o"), "r.md"),
        (("diff", "{b}", "{b}", "-q", "--json"), "d.json"),
    ],
)
def test_report_output_over_an_unrelated_file_is_refused(
    quickstart_bundle: Path, tmp_path: Path, command: tuple[str, ...], name: str
) -> None:
    target = tmp_path / name
    target.write_text("my notes")
    args = [str(quickstart_bundle) if a == "{b}" else a for a in command]
    done = cli(*args, target)
    assert done.exit_code == 2, done.output
    assert "exists and is not a" in done.output and target.read_text() == "my notes"
    assert cli(*args, target, "--force").exit_code == 0
    assert cli(*args, target).exit_code == 0, "a report over a report of its kind is fine"


def test_sign_output_over_an_unrelated_file_is_refused(
    quickstart_bundle: Path, tmp_path: Path
) -> None:
    from tests.helpers import key_files

    keys = key_files(tmp_path, "alice")
    target = tmp_path / "signed.bundle.tar.gz"
    target.write_text("my notes")
    sign = ("sign", quickstart_bundle, "--key", f"{keys['alice']}.key", "-o", target)
    done = cli(*sign)
    assert done.exit_code == 2, done.output
    assert target.read_text() == "my notes"
    assert cli(*sign, "--force").exit_code == 0


def test_two_lm_eval_runs_default_to_different_names(tmp_path: Path) -> None:
    import shutil

    from tests.helpers import REPO

    data = REPO / "tests" / "data" / "lm_eval"
    names = []
    for run in ("full", "limit"):
        shutil.copytree(data / run, tmp_path / run)
        done = cli("import", "lm-eval", tmp_path / run)
        assert done.exit_code == 0, done.output
        made = [p for p in tmp_path.iterdir() if p.name.startswith("lm-eval-") and p not in names]
        assert len(made) == 1, made
        names.append(made[0])
        assert f"name: {made[0].name}" in (made[0] / "bundle.yaml").read_text()
    assert names[0].name != names[1].name
    assert names[0].name == "lm-eval-2026-12-01t20-28-25-019075"


def test_preregister_checkpoint_and_model_outputs_over_an_unrelated_file_are_refused(
    quickstart_bundle: Path, tmp_path: Path
) -> None:
    from tests.helpers import REPO

    notes = tmp_path / "notes.json"
    runs = sorted((REPO / "bundles" / "trajectory-skeleton").rglob("*.yaml"))
    traces = [p for p in runs if p.parent.name != "trajectory-skeleton"][:2]
    archive = tmp_path / "archive"
    assert cli("archive", "--archive", archive, "init").exit_code == 0
    commands = [
        ("preregister", copy_source(tmp_path), "-o", notes),
        ("archive", "--archive", archive, "checkpoint", "-o", notes),
        ("trajectory", "learn", *traces, "-o", notes),
    ]
    for command in commands:
        notes.write_text("my notes")
        done = cli(*command)
        assert done.exit_code == 2, (command, done.output)
        assert "exists and is not a" in done.output and notes.read_text() == "my notes"
        done = cli(*command, "--force")
        assert done.exit_code == 0, (command, done.output)
        assert cli(*command).exit_code == 0, ("its own kind is replaced", command)


def test_detached_signature_over_an_unrelated_file_is_refused(
    quickstart_bundle: Path, tmp_path: Path
) -> None:
    import shutil

    from tests.helpers import key_files

    keys = key_files(tmp_path, "alice")
    bundle = tmp_path / quickstart_bundle.name
    shutil.copy(quickstart_bundle, bundle)
    beside = tmp_path / f"{bundle.name}.sig.json"
    beside.write_text("my notes")
    sign = ("sign", bundle, "--key", f"{keys['alice']}.key", "--detached")
    done = cli(*sign)
    assert done.exit_code == 2, done.output
    assert "exists and is not a signature file" in done.output
    assert beside.read_text() == "my notes"
    assert cli(*sign, "--force").exit_code == 0
    assert cli(*sign).exit_code == 0, "a signature over a signature is fine"


def test_init_names_the_bundle_after_its_folder(tmp_path: Path) -> None:
    for folder in ("first-study", "Second Study"):
        done = cli("init", tmp_path / folder)
        assert done.exit_code == 0, done.output
    first = (tmp_path / "first-study" / "bundle.yaml").read_text()
    second = (tmp_path / "Second Study" / "bundle.yaml").read_text()
    assert "\nname: first-study\n" in first and "\nname: second-study\n" in second
    assert "first-study-0.1.0.bundle.tar.zst" in first, "the comment names the file build writes"
    done = cli("build", tmp_path / "Second Study", "-o", tmp_path / "s.bundle.tar.zst", "-q")
    assert done.exit_code == 0, done.output


def test_two_promptfoo_runs_default_to_different_names(tmp_path: Path) -> None:
    import shutil

    from tests.helpers import REPO

    made = []
    for run in ("run-a", "run-b"):
        (tmp_path / run).mkdir()
        shutil.copy(REPO / "tests" / "data" / "promptfoo" / "results.json", tmp_path / run)
        done = cli("import", "promptfoo", tmp_path / run / "results.json")
        assert done.exit_code == 0, done.output
        source = tmp_path / run / f"promptfoo-{run}-results"
        assert f"\nname: promptfoo-{run}-results\n" in (source / "bundle.yaml").read_text()
        made.append(source)
    assert len(made) == 2


def test_two_inspect_logs_of_one_task_default_to_different_names(tmp_path: Path) -> None:
    import shutil

    from tests.helpers import REPO

    log = REPO / "tests" / "data" / "inspect" / "mixed.eval"
    names = []
    for stamp in ("2026-12-01T09-27-49", "2026-12-02T10-00-00"):
        copy = tmp_path / f"{stamp}_task_x.eval"
        shutil.copy(log, copy)
        done = cli("import", "inspect", copy)
        assert done.exit_code == 0, done.output
        name = f"inspect-{stamp.lower()}-task-x"
        assert f"\nname: {name}\n" in (tmp_path / name / "bundle.yaml").read_text()
        names.append(name)
    assert names[0] != names[1]


def test_attestation_output_over_an_unrelated_file_is_refused(
    quickstart_bundle: Path, tmp_path: Path
) -> None:
    from tests.helpers import key_files

    keys = key_files(tmp_path, "reviewer")
    target = tmp_path / "a.intoto.json"
    target.write_text("my notes")
    args = ("verify", quickstart_bundle, "-q", "--attest", target)
    done = cli(*args, "--attest-key", f"{keys['reviewer']}.key")
    assert done.exit_code == 2, done.output
    assert "exists and is not an attestation" in done.output and target.read_text() == "my notes"
    assert cli(*args, "--attest-key", f"{keys['reviewer']}.key", "--force").exit_code == 0
    assert cli(*args, "--attest-key", f"{keys['reviewer']}.key").exit_code == 0
