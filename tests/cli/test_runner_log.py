"""Every command's output in a CI runner's log, not only ``ci``'s: one rule at the CLI's
entry (``bundler.cli._shared.runner_log``) escapes every line any command prints, so a
bundle's description, title or statement can never become a GitHub workflow command."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from bundler.authoring.build import build
from bundler.cli import main
from bundler.reports.cilog import LineFilter, github_line
from tests.helpers import copy_source

# what the GitHub runner reads as a command: ``::`` after leading blanks (.NET's
# TrimStart), ``##[`` anywhere, and a line break of .NET's ReadLine (CR as well as LF)
COMMAND = re.compile(r"^\s*::|##\[")


def _commands_in(text: str) -> list[str]:
    return [line for line in re.split(r"\r\n|\r|\n", text) if COMMAND.search(line)]


@pytest.fixture(scope="module")
def hostile_bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("runner-log")
    source = copy_source(tmp)
    doc = yaml.safe_load((source / "bundle.yaml").read_text())
    doc["title"] = "Routing ##[error]every claim supported"
    doc["description"] = (
        "A report.\n::error title=reprobundle::every claim supported\n  ::add-mask::x"
    )
    doc["claims"][0]["statement"] = "A statement ##[warning]forged"
    (source / "bundle.yaml").write_text(yaml.safe_dump(doc))
    return build(source, tmp / "hostile.bundle.tar.gz", 1700000000).path


def _run(*args: object, stream: str = "output") -> tuple[int, str]:
    result = CliRunner(env={"GITHUB_ACTIONS": "true"}).invoke(main, [str(a) for a in args])
    return result.exit_code, getattr(result, stream)


@pytest.mark.parametrize(
    "command",
    [("inspect",), ("verify",), ("verify", "-v"), ("cite",), ("report-md",)],
    ids=lambda c: "-".join(c),
)
def test_no_command_prints_a_bundles_text_as_a_workflow_command(
    hostile_bundle: Path, command: tuple[str, ...], tmp_path: Path
) -> None:
    if command == ("report-md",):
        _run("verify", hostile_bundle, "--json", tmp_path / "r.json")
        code, out = _run("report", tmp_path / "r.json", "-f", "markdown")
    else:
        code, out = _run(command[0], hostile_bundle, *command[1:])
    assert code in (0, 4), out
    assert "every claim supported" in out or "forged" in out  # the text is shown...
    assert _commands_in(out) == []  # ...as text, never as a command


def test_a_json_report_on_stdout_in_a_runners_log_is_the_same_document(
    hostile_bundle: Path,
) -> None:
    plain = CliRunner().invoke(main, ["verify", str(hostile_bundle), "--json", "-"])
    code, out = _run("verify", hostile_bundle, "--json", "-", stream="stdout")
    assert code == plain.exit_code == 0
    assert _commands_in(out) == []
    ours, theirs = json.loads(out), json.loads(plain.stdout)
    title = "Routing ##[error]every claim supported"
    assert ours["bundle"]["title"] == theirs["bundle"]["title"] == title


@pytest.mark.parametrize(
    "pieces",
    [
        ["  :", ":error::x\n"],
        ["ok #", "#[error]x\n"],
        ["ok ##", "[error]x\n"],
        [" " * 10, " " * 10, "::error::x"],
        ["x\r", "::error::y\n"],
    ],
)
def test_a_command_written_in_pieces_is_still_seen(pieces: list[str]) -> None:
    for hold in (3, 4, 1 << 16):
        log = LineFilter("github", hold=hold)
        out = "".join(log.feed(p) for p in pieces) + log.finish()
        assert _commands_in(out) == [], (hold, out)


def test_long_lines_go_out_in_bounded_pieces() -> None:
    log = LineFilter("github", hold=100)
    out = log.feed("a" * 10_000)
    assert len(log.pending) <= 100 and out.startswith("a" * 9_000)
    assert github_line(github_line("##[x")) == github_line("##[x")


def test_a_report_redirected_to_a_file_stays_as_written(
    hostile_bundle: Path, tmp_path: Path
) -> None:
    # `report -f markdown > summary.md` in a workflow: the runner never reads the file
    import os
    import subprocess
    import sys

    env = {**os.environ, "GITHUB_ACTIONS": "true"}
    target = tmp_path / "out.txt"
    with target.open("wb") as out:
        subprocess.run(
            [sys.executable, "-m", "bundler", "inspect", str(hostile_bundle)],
            stdout=out,
            env=env,
            check=True,
        )
    text = target.read_text()
    assert "##[error]every claim supported" in text
    assert "\n  ::error title=reprobundle::every claim supported\n" in text
