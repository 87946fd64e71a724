"""What a new user meets on the command line: each command's help gives its own exit codes;
`report` judges and exits like `verify`; messages name the real problem and the fix;
`checkers NAME` lists every code; `build` names the expect_reasons to add; the verify
environment records the checkers and library versions used."""

from __future__ import annotations

import json
import re
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from bundler.cli import main
from tests.golden.regenerate_help import commands
from tests.helpers import REPO, copy_source


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.stdout, result.stderr


def all_commands() -> list[tuple[str, ...]]:
    """Every command and subcommand, as the words that name it."""
    return commands()[1:]


def exit_codes(words: tuple[str, ...]) -> set[int]:
    code, out, _ = run(*words, "--help")
    assert code == 0
    listed = " ".join(out.split("Exit codes:")[1].split()) if "Exit codes:" in out else ""
    return {int(n) for n in re.findall(r"(?:^|· )([0-9]) ", listed)}


# what each command can exit with (5 is always there: a bug)
OWN_CODES = {
    ("verify",): {0, 1, 2, 3, 4, 5},
    ("report",): {0, 1, 2, 3, 4, 5},
    ("build",): {0, 1, 2, 5},
    ("inspect",): {0, 2, 3, 5},
    ("keygen",): {0, 2, 5},
    ("sign",): {0, 2, 3, 5},
    ("init",): {0, 2, 5},
    ("checkers",): {0, 2, 5},
    ("diff",): {0, 1, 2, 3, 5},
    ("archive", "init"): {0, 2, 5},
    ("archive", "list"): {0, 2, 3, 5},
    ("archive", "verify"): {0, 1, 2, 3, 4, 5},
    ("archive", "log", "verify"): {0, 2, 3, 5},
    ("trajectory", "check"): {0, 1, 2, 5},
    ("preregister",): {0, 2, 5},
    ("attestation", "verify"): {0, 1, 2, 3, 5},
}


def test_every_command_help_gives_exit_codes() -> None:
    missing = [" ".join(words) for words in all_commands() if not exit_codes(words)]
    assert missing == []


@pytest.mark.parametrize("words", list(OWN_CODES), ids=" ".join)
def test_each_command_help_gives_its_own_exit_codes(words: tuple[str, ...]) -> None:
    assert exit_codes(words) == OWN_CODES[words]


def test_no_help_example_names_a_file_nothing_produces() -> None:
    for words in all_commands():
        _, out, _ = run(*words, "--help")
        assert "quickstart-1.1.0" not in out and "mybundle-1.0.0" not in out, words
        for named in re.findall(r"reprobundle (?:verify|inspect|sign|report) (\S+\.tar\.\w+)", out):
            file_name = named.rpartition("/")[2]  # a link's too
            assert file_name.startswith(("starter-0.1.0", "signed")), (words, named)


# --- report judges like verify -------------------------------------------------------


def test_report_takes_every_judging_option_of_verify() -> None:
    from bundler.cli._verifying import verify_options
    from bundler.cli.ci import ci
    from bundler.cli.report import report
    from bundler.cli.verify import verify

    @click.command()
    @verify_options()
    def probe() -> None:
        """Declares nothing but the judging options."""

    judging = {p.name for p in probe.params}
    assert {"trust_files", "allow_code", "case_timeout", "jobs", "accept_advisory"} <= judging
    assert all(judging <= {p.name for p in c.params} for c in (verify, report, ci))
    names = {p.name for p in report.params}
    assert {"trust_files", "trust_store", "allow_code", "require_signature"} <= names
    assert {p.name for p in verify.params} - names == {
        "bundle",
        "workdir",
        "keep",
        "json_target",
        "markdown_target",
        "junit_target",
        "html_target",
        "attest_target",
        "attest_key",
        "attest_predicate",
        # where the bundle comes from and its file pin (verify URL): not how it is judged
        "sha256",
        "identity",
        "trust_on_first_use",
        "no_cache",
        "download_timeout",
    }
    # the withheld files of a redacted bundle (issue 45): an input, not a way of judging,
    # declared apart from the judging options and taken by all three
    assert all("disclose" in {p.name for p in c.params} for c in (verify, report, ci))


def test_report_trusts_the_keys_it_is_given(tmp_path: Path, quickstart_bundle: Path) -> None:
    demo = REPO / "bundles" / "demo-key"
    signed = tmp_path / "signed.bundle.tar.gz"
    code, _, err = run(
        "sign",
        str(quickstart_bundle),
        "--key",
        str(demo / "DEMO-ONLY-not-secret.key"),
        "-o",
        str(signed),
    )
    assert code == 0, err
    code, out, _ = run("report", str(signed), "--trust", str(demo / "DEMO-ONLY-not-secret.pub"))
    assert code == 0 and "| Signatures | signed by a trusted key" in out
    code, out, _ = run("report", str(signed))
    assert code == 0 and "a key you do not trust" in out
    code, out, err = run(
        "report",
        str(quickstart_bundle),
        "--require-signature",
        "--trust",
        str(demo / "DEMO-ONLY-not-secret.pub"),
    )
    assert code == 3 and "signature.required" in out and "reprobundle:" in err


@pytest.mark.parametrize("command", ["verify", "report"])
def test_random_bytes_are_rejected_alike(tmp_path: Path, command: str) -> None:
    junk = tmp_path / "random.bin"
    junk.write_bytes(bytes(range(256)) * 8)
    code, _, err = run(command, str(junk))
    assert code == 3 and "archive.not_compressed_tar" in err


# --- messages ----------------------------------------------------------------------


@pytest.mark.parametrize("command", ["verify", "inspect", "report"])
def test_a_bundle_source_given_to_verify_is_told_to_build(tmp_path: Path, command: str) -> None:
    source = copy_source(tmp_path)
    code, _, err = run(command, str(source))
    assert code == 2
    assert "is not a file but a bundle source (a folder holding bundle.yaml)" in err
    assert f"reprobundle build {source}" in err


def test_keep_with_quiet_still_says_where(quickstart_bundle: Path, tmp_path: Path) -> None:
    work = tmp_path / "work"
    code, out, err = run("verify", str(quickstart_bundle), "--keep", "-q", "--workdir", str(work))
    assert code == 0
    assert out.strip() == "Result: every claim supported (2 of 2 claims supported); unsigned"
    assert f"work directory kept at {work}" in err


def test_checkers_lists_every_code_a_checker_can_give() -> None:
    import checkers

    found = checkers.get("structured-equal@1")
    assert found is not None
    code, out, _ = run("checkers", "structured-equal")
    assert code == 0
    for reason in found.all_reasons:
        assert f"  {reason}: " in out
    assert "error codes (verdict error: the case is inconclusive" in out
    code, _, err = run("checkers", "structured-equl")
    assert code == 2 and "did you mean 'structured-equal'" in err


def test_build_names_the_expect_reasons_to_add(tmp_path: Path) -> None:
    source = copy_source(tmp_path)
    text = (source / "bundle.yaml").read_text()
    (source / "bundle.yaml").write_text(text.replace("    expect_reasons: [content.removed]\n", ""))
    code, _, err = run("build", str(source), "-o", str(tmp_path / "q.bundle.tar.zst"), "-q")
    assert code == 2  # a control that does not say what it shows is refused, with the line
    assert (
        "case 'dropped-rule-is-caught' expects fail but names no expect_reasons" in err
        and "give the case this line: expect_reasons: [content.removed]" in err
    )
    assert not (tmp_path / "q.bundle.tar.zst").exists()


def test_a_refused_build_names_the_reasons_the_control_gave(tmp_path: Path) -> None:
    source = copy_source(tmp_path)
    text = (source / "bundle.yaml").read_text()
    (source / "bundle.yaml").write_text(
        text.replace("expect_reasons: [content.removed]", "expect_reasons: [content.added]")
    )
    code, _, err = run("build", str(source), "-o", str(tmp_path / "q.bundle.tar.zst"))
    assert code == 1
    assert "give the case this line: expect_reasons: [content.removed]" in err


# --- the verify environment --------------------------------------------------------


def test_verify_records_checkers_and_library_versions_beside_the_build(
    quickstart_bundle: Path,
) -> None:
    code, out, _ = run("verify", str(quickstart_bundle), "--json", "-")
    assert code == 0
    report = json.loads(out)
    here, built = report["verify_environment"], report["build_environment"]
    assert here["checkers"] == {"structured-equal@1": "built-in"} == built["checkers"]
    assert set(here["libraries"]) == set(built["libraries"]) and here["libraries"]
    assert all(re.fullmatch(r"[0-9][0-9a-z.+-]*", v) for v in here["libraries"].values())


def test_a_checker_this_verifier_lacks_is_recorded_unavailable() -> None:
    from bundler.run.runner import checker_environment

    found = checker_environment(["structured-equal@1", "structured-equal@99", "bundle:x"], False)
    assert found["checkers"] == {
        "bundle:x": "bundled code (not run here)",
        "structured-equal@1": "built-in",
        "structured-equal@99": "unavailable",
    }
