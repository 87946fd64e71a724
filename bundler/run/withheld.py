"""A redacted bundle at verify time: the cases its withheld files keep from running, and
disclosure (the withheld files handed to the verifier, each checked before use).

A case that reads a withheld file is not run: its outcome is ``withheld``, and its claim
is inconclusive naming the files (``bundler.format.claims``). With ``--disclose DIR`` the
withheld files are read from ``DIR``, each checked against the size and SHA-256 the
(signed) manifest gives it before any case runs, and written into the work folder: a
mismatch rejects the bundle, and otherwise every case runs as in the full bundle.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

from bundler.container.extract import Extracted
from bundler.container.writer import Writer
from bundler.errors import BundleRejected, Problem, UsageError
from bundler.format.hashing import CHUNK
from bundler.format.manifest import Case
from bundler.format.results import CaseResult
from bundler.format.withheld import Withheld, withheld_paths_of_case
from checkers.api import Verdict

__all__ = ["disclose", "kept_back", "withheld_result"]


def kept_back(cases: tuple[Case, ...], withheld: Withheld | None) -> dict[str, list[str]]:
    """Case id -> the withheld files it reads, for each case that reads one."""
    if withheld is None:
        return {}
    gone = withheld.paths
    out = {}
    for case in cases:
        paths = withheld_paths_of_case(case.inputs, gone)
        if paths:
            out[case.id] = paths
    return out


def withheld_result(case: Case, paths: list[str]) -> CaseResult:
    """The result of a case not run because it reads withheld files."""
    named = ", ".join(paths)
    verdict = Verdict.errored(
        "input.withheld", f"reads withheld file(s) {named}", withheld=list(paths)
    )
    return CaseResult(case, verdict, "withheld", f"not run: it reads withheld file(s) {named}")


def disclose(extracted: Extracted, folder: Path) -> tuple[str, ...]:
    """Write each withheld file of ``extracted`` from ``folder`` into its work folder,
    checked against the manifest's size and SHA-256; returns the paths disclosed. Raises
    ``UsageError`` when the bundle withholds nothing, ``BundleRejected`` (every problem at
    once) when a file is missing from ``folder`` or differs."""
    record = extracted.withheld
    if record is None:
        raise UsageError(
            f"--disclose {folder}: the bundle withholds no file; verify it without --disclose"
        )
    if not folder.is_dir():
        raise UsageError(f"--disclose {folder}: not a folder")
    writer = Writer(extracted.root)
    problems = []
    try:
        for entry in record.files:
            where = f"{folder}/{entry.path}"
            try:
                got = writer.write(entry.path, _chunks(folder / entry.path, entry.size))
            except _TooLarge:
                got = None
                problems.append(
                    Problem(
                        where,
                        "withheld.disclosed",
                        f"is larger than the manifest's {entry.size} bytes",
                    )
                )
            except OSError as exc:
                problems.append(
                    Problem(where, "withheld.disclosed", f"cannot be read: {exc.strerror or exc}")
                )
                continue
            if got is not None and got != entry.sha256:
                problems.append(
                    Problem(
                        where,
                        "withheld.disclosed",
                        f"SHA-256 is {got}, the manifest says {entry.sha256}: this is not the "
                        "withheld file",
                    )
                )
    finally:
        writer.close()
    if problems:
        raise BundleRejected(
            f"the disclosed files do not match the bundle: {len(problems)} problem(s)", problems
        )
    return tuple(f.path for f in record.files)


class _TooLarge(Exception):
    pass


def _chunks(path: Path, size: int) -> Iterator[memoryview]:
    """The bytes of ``path`` in pieces, never more than ``size`` (then ``_TooLarge``); a
    link is not followed at the last component (a file handed over is a file)."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    try:
        left = size
        while True:
            chunk = os.read(fd, min(CHUNK, left + 1))
            if not chunk:
                return
            if len(chunk) > left:
                raise _TooLarge
            left -= len(chunk)
            yield memoryview(chunk)
    finally:
        os.close(fd)
