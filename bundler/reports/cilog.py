"""Lines for a CI runner's log: nothing a bundle or a file name says becomes a command.

A CI runner reads its jobs' output as more than text. GitHub Actions runs a *workflow
command* from any line that starts (after leading blanks) with ``::`` (``::error``,
``::add-mask::``, ``::warning::``, ``::stop-commands::``) and, in its older syntax, from
``##[`` anywhere in a line; GitLab reads ANSI escape sequences and its log section markers
(``section_start:…`` ended by a carriage return and ``ESC[0K``). A bundle file name or a
member name holding a newline and ``::error title=…::`` would otherwise make the job's
page say what was never verified.

One escaping function per runner (``RUNNERS``), applied to every line a command prints
(``lines``): first the one-line rule every format uses (``errors.one_line``: line breaks,
escape sequences, bidirectional and other control characters shown as ``\\n``,
``\\x1b``, ``\\u202e``), so no text can start a line of its own or draw a marker; then
the runner's own rule. ``runner_of`` picks the runner from the environment the runner
sets (``GITHUB_ACTIONS``, ``GITLAB_CI``). Pure: text in, text out.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping

from bundler.errors import one_line

_GITHUB_COMMAND = re.compile(r"^(\s*)::")  # .NET's TrimStart, then "::"


def plain_line(text: str) -> str:
    """A line for a terminal or a plain log: the one-line rule."""
    return one_line(text)


def github_line(text: str) -> str:
    """A line for GitHub Actions: the one-line rule, a leading ``::`` shown as ``\\::``
    and every ``##[`` as ``#\\#[``, so the runner finds no workflow command in it."""
    line = _GITHUB_COMMAND.sub(r"\1\\::", one_line(text))
    return line.replace("##[", "#\\#[")


def gitlab_line(text: str) -> str:
    """A line for GitLab CI: the one-line rule (no ESC, no carriage return), so no colour,
    cursor move or section marker (``section_start:…\\r\\x1b[0K``) can be formed."""
    return one_line(text)


RUNNERS: Mapping[str, Callable[[str], str]] = {
    "plain": plain_line,
    "github": github_line,
    "gitlab": gitlab_line,
}


def runner_of(environ: Mapping[str, str]) -> str:
    """Which runner's log the output goes to, from the variables each sets."""
    if environ.get("GITHUB_ACTIONS") == "true":
        return "github"
    if environ.get("GITLAB_CI") == "true":
        return "gitlab"
    return "plain"


def line(text: str, runner: str) -> str:
    """One line for ``runner``'s log: a newline inside ``text`` is shown, never kept."""
    return RUNNERS[runner](text)


def lines(text: str, runner: str) -> str:
    """``text`` whose newlines are ours (``BundlerError.diagnostics``: each piece from
    outside already on one line) with each line escaped for ``runner``."""
    escape = RUNNERS[runner]
    return "\n".join(escape(part) for part in text.split("\n"))
