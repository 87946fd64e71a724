"""Pre-register a bundle source: its claims and checks, fixed before the evidence exists.

What is fixed is what the source says it will check (``format.preregistration``), never
the content of the evidence. Two kinds of file exist before the evidence and can be fixed
by their digests, so that a later edit shows as a change after pre-registration:

- reference inputs the author chooses (``fix``): an ``expected`` file, a schema, a list
  of reference scenarios: files a case compares its evidence against;
- bundled code: every Python file in a code entry's folder and below (what the verifier
  runs it with, ``BundledChecker.code_files``).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Collection, Sequence
from pathlib import Path
from typing import Any

from bundler.authoring.source import read_source
from bundler.errors import Problem, SourceError
from bundler.format import preregistration as model
from bundler.format.hashing import sha256_file
from bundler.format.manifest import BundledChecker
from bundler.format.paths import path_problem

MAX_CODE_FILES = 10_000  # Python files under one code entry's folder a pre-registration fixes


def preregister_source(
    source: Path,
    written: str | None = None,
    fix: Sequence[str] = (),
    accepted_advisories: Collection[str] = (),
) -> dict[str, Any]:
    """The pre-registration of the source folder ``source`` (none of its evidence need
    exist), with the digests of the reference inputs ``fix`` (paths in the source, each a
    file a case names as an input) and of its bundled code fixed. Raises ``SourceError``
    naming every problem. A case on an advised checker version is refused as ``build``
    refuses it, unless its advisory is in ``accepted_advisories``."""
    source = Path(source)
    document = read_source(source, evidence=False, accepted_advisories=accepted_advisories).document
    names = model.input_names(document["cases"])
    problems: list[Problem] = []
    fixed: dict[str, tuple[str, int]] = {}
    for path in dict.fromkeys(fix):
        where = f"--fix {path}"
        if path not in names:
            problems.append(
                Problem(
                    where,
                    "preregistration.fix",
                    "is not a file a case names as an input; fix the files cases compare "
                    f"against, named as bundle.yaml names them (e.g. {sorted(names)[0]!r})"
                    if names
                    else "is not a file a case names as an input",
                )
            )
            continue
        _hash_into(fixed, source, path, where, problems)
    for code in document.get("code") or ():
        entry = BundledChecker(code["name"], code["entry"], code.get("reasons", {}))
        if not (source / entry.path).is_file():
            problems.append(
                Problem(
                    f"code {entry.name}",
                    "preregistration.fix",
                    f"its entry file {entry.path!r} does not exist: bundled code is "
                    "pre-registered with its digest, so it must be written first",
                )
            )
            continue
        for path in _code_files(source, entry, problems):
            _hash_into(fixed, source, path, f"code {entry.name}", problems)
    if problems:
        raise SourceError(f"cannot pre-register {source}", problems)
    doc = model.from_document(document, written, fixed)
    try:  # never write what `build --preregistration` and `verify` would refuse to read
        model.parse(model.canonical(doc))
    except ValueError as exc:
        raise SourceError(
            f"cannot pre-register {source}",
            [Problem("bundle.yaml", "preregistration.format", str(exc))],
        ) from None
    return doc


def _hash_into(
    fixed: dict[str, tuple[str, int]], root: Path, path: str, where: str, problems: list[Problem]
) -> None:
    """The digest of the regular file ``root/path`` (never through a link) into ``fixed``."""
    why = path_problem(path)
    full = root / path
    try:
        if why is None and not stat.S_ISREG(os.lstat(full).st_mode):
            why = "is not a regular file (a link or a folder cannot be fixed)"
        if why is None:
            fixed[path] = sha256_file(full)
            return
    except OSError as exc:
        why = f"cannot be read: {exc.strerror}"
    problems.append(Problem(where, "preregistration.fix", f"{path!r} {why}"))


def _code_files(root: Path, entry: BundledChecker, problems: list[Problem]) -> list[str]:
    """Every Python file (regular, not through a link) in ``entry``'s folder and below."""
    folder = entry.path.rpartition("/")[0]
    found: list[str] = []
    for top, dirs, files in os.walk(root / folder):
        dirs[:] = sorted(d for d in dirs if not (Path(top) / d).is_symlink())
        rel = Path(top).relative_to(root).as_posix()
        found += [f"{rel}/{f}" if rel != "." else f for f in sorted(files) if f.endswith(".py")]
        if len(found) > MAX_CODE_FILES:
            problems.append(
                Problem(
                    f"code {entry.name}",
                    "preregistration.fix",
                    f"its folder {folder or '.'!r} holds more than {MAX_CODE_FILES} Python files",
                )
            )
            return []
    return entry.code_files(found)
