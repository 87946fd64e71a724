"""One error base for everything the library refuses, carrying its problems as data.

The CLI catches ``BundlerError`` once and maps ``exit_code`` to the process exit;
every other exception is a bug and is reported as one.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Problem:
    """One thing wrong with an input: where, a stable code, and what was observed."""

    where: str  # a file, member or manifest path, with a line when known
    code: str
    message: str

    def __str__(self) -> str:
        return f"{self.where}: {self.message} [{self.code}]" if self.where else self.message


class BundlerError(Exception):
    """Base of every refusal. ``problems`` lists each thing wrong, all at once."""

    exit_code = 2
    headline = "error"

    def __init__(self, headline: str, problems: list[Problem] | None = None) -> None:
        super().__init__(headline)
        self.headline = headline
        self.problems = list(problems or [])

    def diagnostics(self) -> str:
        """The headline and one line per problem; text from a bundle (a member name, a
        value) is escaped, so it cannot add a line of its own."""
        from bundler.reports.common import one_line

        lines = [one_line(self.headline)]
        lines += [f"  - {one_line(p)}" for p in self.problems]
        return "\n".join(lines)


class UsageError(BundlerError):
    """The caller asked for something impossible (a non-empty work directory, ...)."""

    exit_code = 2


class SourceError(BundlerError):
    """A bundle source (bundle.yaml and its files) cannot be built."""

    exit_code = 2


class BundleRejected(BundlerError):
    """The bundle failed integrity, format, signature or trust checks; nothing ran."""

    exit_code = 3


class BuildRefused(BundlerError):
    """The new bundle did not verify at home; no file was left behind."""

    exit_code = 1
