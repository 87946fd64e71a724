"""One error base for everything the library refuses, carrying its problems as data.

The CLI catches ``BundlerError`` once and maps ``exit_code`` to the process exit;
every other exception is a bug and is reported as one.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import ClassVar, NamedTuple

from bundler.codes import Ends

# What text from a bundle may never carry into any report format or terminal: control
# characters (C0, DEL, C1: line breaks, escape sequences), the line and paragraph
# separators, and the characters that reorder or hide text (bidirectional embeddings,
# overrides, isolates and marks; the zero-width space, joiners, word joiner and byte-order
# mark). Every format shows them as escapes (``one_line``; JSON as ``\uXXXX`` escapes of
# the same characters). Those beyond the C0 controls:
UNSAFE_ABOVE_C0 = "\x7f-\x9f\u061c\u200b-\u200f\u2028\u2029\u202a-\u202e\u2060\u2066-\u2069\ufeff"
_BREAKS = re.compile(f"[\x00-\x1f{UNSAFE_ABOVE_C0}]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def one_line(text: object) -> str:
    """Text from a bundle for one line of terminal or plain output: every control
    character, newline included, shown as an escape (``\\n``, ``\\x1b``, ``\\u202e``),
    so a title, id, statement or message can never start a line of its own and pass
    for a verdict or signature line."""

    def escape(match: re.Match[str]) -> str:
        char = match.group()
        if char in _NAMED:
            return _NAMED[char]
        return f"\\x{ord(char):02x}" if ord(char) < 0x100 else f"\\u{ord(char):04x}"

    return _BREAKS.sub(escape, str(text))


def os_reason(exc: OSError) -> str:
    """What an OS error means, in words for the person who gave the path."""
    import errno

    if exc.errno == errno.ENOTDIR:
        return "a part of the path is a file, not a folder"
    if exc.errno == errno.EISDIR:
        return "it is a folder; give the path of a file"
    return exc.strerror or str(exc)


def did_you_mean(word: object, known: Iterable[str]) -> str:
    """`` (did you mean 'x'?)`` for the known word closest to a misspelt one, else ``""``:
    the one wording of every suggestion (keys, case ids, reason codes, checkers)."""
    import difflib

    close = difflib.get_close_matches(str(word), list(known), n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


class Problem(NamedTuple):
    """One thing wrong with an input: where, a stable code, and what was observed."""

    where: str  # a file, member or manifest path, with a line when known
    code: str
    message: str

    def __str__(self) -> str:
        return f"{self.where}: {self.message} [{self.code}]" if self.where else self.message


class BundlerError(Exception):
    """Base of every refusal. ``problems`` lists each thing wrong, all at once. How it
    ends a command is the codes table's (``bundler/codes.py``): ``exit_code`` follows
    from ``ends``."""

    ends: ClassVar[Ends] = Ends.USAGE
    exit_code: ClassVar[int] = Ends.USAGE.exit_code
    headline = "error"

    def __init_subclass__(cls) -> None:
        super().__init_subclass__()
        cls.exit_code = cls.ends.exit_code

    def __init__(self, headline: str, problems: list[Problem] | None = None) -> None:
        super().__init__(headline)
        self.headline = headline
        self.problems = list(problems or [])

    def diagnostics(self) -> str:
        """The headline and one line per problem; text from a bundle (a member name, a
        value) is escaped, so it cannot add a line of its own."""
        lines = [one_line(self.headline)]
        lines += [f"  - {one_line(p)}" for p in self.problems]
        return "\n".join(lines)


class UsageError(BundlerError):
    """The caller asked for something impossible (a non-empty work directory, ...)."""

    ends = Ends.USAGE


class SourceError(BundlerError):
    """A bundle source (bundle.yaml and its files) cannot be built."""

    ends = Ends.USAGE


class BundleRejected(BundlerError):
    """The bundle failed integrity, format, signature or trust checks; nothing ran."""

    ends = Ends.REJECTED


class BuildRefused(BundlerError):
    """The new bundle did not verify at home; no file was left behind."""

    ends = Ends.BUILD
