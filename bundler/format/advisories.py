"""Checker advisories: published weaknesses of built-in checker versions.

An advisory says that an author can make a checker version say ``pass`` against its
evidence, and which version fixes it. Checker versions are forever (decision record
0002), so an old bundle keeps naming the weak version; the advisory is how verification
knows it is weak and fails closed on it (``bundler.format.claims``) unless a reviewer
accepts the advisory by its id.

One TOML file per advisory in ``checkers/advisories/`` (package data beside the checkers
they judge; this reader lives here because the checkers package does no I/O), named
after its id, in OSV's spirit::

    id = "RB-2026-0001"
    published = "2026-12-06"
    summary = "one line"
    details = \"\"\"what is wrong, how it is exploited\"\"\"
    affected = ["inspect-metric@1"]
    can_make_supported = "what an author can make supported that should not be"
    fixed_in = ["inspect-metric@2"]
    tests = ["tests/advisories/test_advisories.py::test_name"]

``parse`` is the strict rule (no I/O: text in, ``Advisory`` or ``AdvisoryError`` naming the
file out); ``advisories`` reads the shipped files once per process. Every
``affected`` and ``fixed_in`` entry must name a registered checker version.
"""

from __future__ import annotations

import datetime
import re
import tomllib
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from types import MappingProxyType

import checkers
from checkers import MODULE_OF

FOLDER = Path(checkers.__file__).parent / "advisories"  # the shipped files
ID = re.compile(r"RB-[0-9]{4}-[0-9]{4}\Z")
KEY = re.compile(r"[a-z][a-z0-9-]*@[1-9][0-9]*\Z")
TEST = re.compile(r"tests/[A-Za-z0-9_/]+\.py::[A-Za-z_][A-Za-z0-9_]*\Z")
FIELDS = (
    "id",
    "published",
    "summary",
    "details",
    "affected",
    "can_make_supported",
    "fixed_in",
    "tests",
)


class AdvisoryError(ValueError):
    """An advisory file that does not hold: names the file and every problem."""

    def __init__(self, file: str, problems: list[str]) -> None:
        super().__init__(f"{file}: {'; '.join(problems)}")
        self.file = file
        self.problems = problems


@dataclass(frozen=True)
class Advisory:
    """One advisory, as its file states it."""

    id: str
    published: str
    summary: str
    details: str
    affected: tuple[str, ...]
    can_make_supported: str
    fixed_in: tuple[str, ...]
    tests: tuple[str, ...]

    @property
    def fix(self) -> str:
        """The fixing versions as one phrase: ``inspect-metric@2``."""
        return " or ".join(self.fixed_in)

    def to_dict(self) -> dict[str, object]:
        return {name: list(v) if isinstance(v, tuple) else v for name, v in vars(self).items()}


def parse(text: str, file: str, known: Collection[str]) -> Advisory:
    """The advisory ``file`` holds, checked strictly against ``known`` checker versions;
    ``AdvisoryError`` lists every problem."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise AdvisoryError(file, [f"not TOML: {exc}"]) from None
    problems: list[str] = []
    unknown = sorted(set(data) - set(FIELDS))
    if unknown:
        problems.append(f"unknown key(s) {', '.join(unknown)} (expected only {', '.join(FIELDS)})")
    missing = [name for name in FIELDS if name not in data]
    if missing:
        problems.append(f"missing key(s) {', '.join(missing)}")
    for name in ("id", "published", "summary", "details", "can_make_supported"):
        if name in data and (not isinstance(data[name], str) or not data[name].strip()):
            problems.append(f"{name}: expected non-empty text, observed {data[name]!r}")
    lists = {}
    for name in ("affected", "fixed_in", "tests"):
        value = data.get(name, [])
        if not isinstance(value, list) or not value or not all(isinstance(v, str) for v in value):
            problems.append(f"{name}: expected a non-empty list of text, observed {value!r}")
            value = []
        if len(set(value)) != len(value):
            problems.append(f"{name}: names an entry twice")
        lists[name] = tuple(value)
    ident = data.get("id")
    if isinstance(ident, str) and not ID.match(ident):
        problems.append(f"id: expected RB-YYYY-NNNN, observed {ident!r}")
    elif isinstance(ident, str) and file.rsplit("/", 1)[-1] != f"{ident}.toml":
        problems.append(f"id {ident} is not the file's name (expected {ident}.toml)")
    published = data.get("published")
    if isinstance(published, str):
        try:
            datetime.date.fromisoformat(published)
        except ValueError:
            problems.append(f"published: expected a date YYYY-MM-DD, observed {published!r}")
    for name in ("affected", "fixed_in"):
        for key in lists[name]:
            if not KEY.match(key) or key not in known:
                problems.append(f"{name}: {key!r} is not a registered checker version")
    for test in lists["tests"]:
        if not TEST.match(test):
            problems.append(f"tests: expected tests/PATH.py::NAME, observed {test!r}")
    both = set(lists["affected"]) & set(lists["fixed_in"])
    if both:
        problems.append(f"{', '.join(sorted(both))} is both affected and fixed")
    names = {key.split("@")[0] for key in lists["affected"]}
    for key in lists["fixed_in"]:
        if key.split("@")[0] not in names:
            problems.append(f"fixed_in: {key} is no version of an affected checker")
    if problems:
        raise AdvisoryError(file, problems)
    return Advisory(
        id=data["id"],
        published=data["published"],
        summary=data["summary"].strip(),
        details=data["details"].strip(),
        affected=lists["affected"],
        can_make_supported=data["can_make_supported"].strip(),
        fixed_in=lists["fixed_in"],
        tests=lists["tests"],
    )


def parse_all(files: Mapping[str, str], known: Collection[str]) -> tuple[Advisory, ...]:
    """Every file's advisory, by id; every problem of every file in one error."""
    found: dict[str, Advisory] = {}
    problems: list[str] = []
    for file, text in sorted(files.items()):
        try:
            advisory = parse(text, file, known)
        except AdvisoryError as exc:
            problems.append(str(exc))
            continue
        if advisory.id in found:
            problems.append(f"{file}: id {advisory.id} is used twice")
        found[advisory.id] = advisory
    if problems:
        raise AdvisoryError("checkers/advisories", problems)
    return tuple(found[ident] for ident in sorted(found))


@cache
def shipped_files() -> Mapping[str, str]:
    """The advisory files shipped in ``checkers/advisories/``, by name (read beside the
    package: importlib.resources would load zipfile on every verify)."""
    return MappingProxyType(
        {
            f"checkers/advisories/{path.name}": path.read_text(encoding="utf-8")
            for path in sorted(FOLDER.glob("*.toml"))
        }
    )


@cache
def _parsed(file: str) -> Advisory:
    return parse(shipped_files()[file], file, MODULE_OF)


@cache
def advisories() -> tuple[Advisory, ...]:
    """Every shipped advisory, checked against the registered checker versions."""
    return parse_all(shipped_files(), MODULE_OF)


@cache
def by_id() -> Mapping[str, Advisory]:
    return MappingProxyType({a.id: a for a in advisories()})


@cache
def of_checker(key: str) -> tuple[Advisory, ...]:
    """The advisories that name ``key`` (``name@version``) as affected. Only the files
    whose text holds ``key`` are parsed (each strictly): a verify of a bundle on no advised
    version parses none (TOML's multi-line strings cost about 1 ms a file to read)."""
    files = [f for f, text in shipped_files().items() if key in text]
    return tuple(a for a in map(_parsed, files) if key in a.affected)
