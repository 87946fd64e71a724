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
    and every ``##[`` as ``#\\u0023[``, so the runner finds no workflow command in it.
    (``\\u0023`` is the one-line rule's notation for ``#``, and a JSON escape of it: a
    JSON document printed in the log still reads as the same document.)"""
    line = _GITHUB_COMMAND.sub(r"\1\\::", one_line(text))
    return line.replace("##[", "#\\u0023[")


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


class LineFilter:
    """Everything a command writes to a CI runner's log, cut into lines and escaped by
    ``runner``'s rule: the one place that holds for every command and every message
    (click's own usage errors, warnings, rich's wrapped table lines), not only for those
    that escape their text themselves (escaping twice changes nothing). Pure: ``feed``
    takes written text and returns the text to pass on. A line is held until it ends, so
    a ``::`` written in two pieces is still seen at the start of its line; a line longer
    than ``hold`` characters goes out in pieces, each piece's trailing ``:`` and ``#``
    shown as ``\\u003a`` and ``\\u0023`` (no ``::`` or ``##[`` can be joined across
    pieces), and the start-of-line rule applies until something other than blanks went
    out."""

    def __init__(self, runner: str, hold: int = 1 << 16) -> None:
        self.escape = RUNNERS[runner]
        self.hold = max(hold, 1)
        self.pending = ""
        self.at_start = True  # nothing but blanks of the current line went out

    def _piece(self, text: str) -> str:
        # (within a line, nothing in the piece is at the line's start)
        out = self.escape(text) if self.at_start else self.escape("x" + text)[1:]
        self.at_start = self.at_start and not text.strip()
        return out

    def feed(self, text: str) -> str:
        out = []
        *ended, self.pending = (self.pending + text).split("\n")
        for part in ended:
            out.append(self._piece(part) + "\n")
            self.at_start = True
        if len(self.pending) > self.hold:
            head, self.pending = self.pending, ""
            tail = len(head) - len(head.rstrip(":#"))
            out.append(self._piece(head[: len(head) - tail]))
            out.append("".join(f"\\u{ord(c):04x}" for c in head[len(head) - tail :]))
            self.at_start = self.at_start and not tail
        return "".join(out)

    def finish(self) -> str:
        """The last line, unended (the command is done)."""
        rest, self.pending = self.pending, ""
        text = self._piece(rest) if rest else ""
        self.at_start = True
        return text
