"""One escaping function per CI runner: nothing inside a line can make the runner act."""

from __future__ import annotations

import pytest

from bundler.reports.cilog import github_line, gitlab_line, lines, runner_of

HOSTILE = [
    "::error title=reprobundle::every claim supported",
    "  ::add-mask::secret",
    "\u3000::warning::x",  # .NET's TrimStart removes any white space
    "x\n::stop-commands::token",
    "x\r::error::y",
    "name ##[error]y",
    "\x1b[31mred\x1b[0m",
    "section_start:1:evil\r\x1b[0K",
    "\u2028::error::after a line separator",
    "x\x85::error::after NEL",
]


@pytest.mark.parametrize("text", HOSTILE)
def test_github_line_holds_no_workflow_command(text: str) -> None:
    line = github_line(text)
    assert "\n" not in line and "\r" not in line and "\x1b" not in line
    assert not line.lstrip().startswith("::") and "##[" not in line
    assert github_line(line) == github_line(github_line(line)), "escaping is stable"


@pytest.mark.parametrize("text", HOSTILE)
def test_gitlab_line_holds_no_escape_or_marker(text: str) -> None:
    line = gitlab_line(text)
    assert not set(line) & {"\n", "\r", "\x1b", "\x07"}


def test_lines_keep_our_line_breaks_and_escape_each_line() -> None:
    text = "reprobundle: the bundle was rejected\n  - ::error::x: bad"
    assert lines(text, "github").split("\n")[0] == "reprobundle: the bundle was rejected"
    assert lines("::error::x\nok", "github") == "\\::error::x\nok"


@pytest.mark.parametrize(
    ("environ", "runner"),
    [
        ({"GITHUB_ACTIONS": "true"}, "github"),
        ({"GITLAB_CI": "true"}, "gitlab"),
        ({}, "plain"),
        ({"GITHUB_ACTIONS": "false"}, "plain"),
    ],
)
def test_runner_is_read_from_the_variables_each_runner_sets(
    environ: dict[str, str], runner: str
) -> None:
    assert runner_of(environ) == runner
