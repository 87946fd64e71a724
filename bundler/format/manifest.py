"""The manifest: the model, its exact TOML bytes, and the strict reader.

The manifest is what a signature and the bundle identity cover, so the reader never
"repairs" anything: unknown keys, wrong types, duplicate or non-portable paths and
non-finite numbers are refused with the manifest path of each problem.
"""

from __future__ import annotations

import functools
import json
import math
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, NamedTuple

import tomli

from bundler.errors import BundleRejected, Problem, did_you_mean
from bundler.format.hashing import sha256_bytes
from bundler.format.paths import fold, folders_of, path_problem
from bundler.format.schemafast import Check, compile_schema
from bundler.format.toml10 import feature_of_1_1, integer_beyond_64_bits

if TYPE_CHECKING:  # jsonschema is imported only to explain a manifest that fails
    from jsonschema import Draft202012Validator, ValidationError

FORMAT_MAJOR = 1
FORMAT_MINOR = 2
FORMAT = f"reprobundle/{FORMAT_MAJOR}"
FORMAT_WITH_CODE = f"reprobundle/{FORMAT_MAJOR}.1"  # bundles that declare bundled code
FORMAT_WITH_FINDINGS = f"reprobundle/{FORMAT_MAJOR}.2"  # bundles with a case of kind finding


def format_for(cases: Any, code: bool) -> str:
    """The lowest format that holds ``cases`` (a finding needs 1.2) and bundled code (1.1;
    1.2 includes it): what ``build`` writes, and what a pre-registration is read as."""
    if isinstance(cases, list) and any(
        isinstance(c, Mapping) and c.get("kind") == "finding" for c in cases
    ):
        return FORMAT_WITH_FINDINGS
    return FORMAT_WITH_CODE if code else FORMAT


BUNDLED_PREFIX = "bundle:"
MANIFEST_NAME = "manifest.toml"
README_NAME = "README.md"
SIGNATURES_DIR = "signatures"
# The latest mtime a ustar header holds (11 octal digits): later times cannot be packed.
MAX_EPOCH = 8**11 - 1
MAX_DEPTH = 32

_FORMAT_RE = re.compile(r"^reprobundle/([0-9]+)(?:\.([0-9]+))?\Z")

Expect = Literal["pass", "fail"]
# What an expected failure is: a control the author planted to show the check can fail,
# or a finding, a real output the author judges wrong.
FailKind = Literal["control", "finding"]
InputRef = str | tuple[str, ...]


class FileEntry(NamedTuple):
    path: str
    sha256: str
    size: int


class Case(NamedTuple):
    id: str
    checker: str
    inputs: Mapping[str, InputRef]
    params: Mapping[str, Any]
    expect: Expect
    expect_reasons: tuple[str, ...] = ()
    kind: FailKind | None = None  # set when expect is fail; control unless the source says

    @property
    def is_negative_control(self) -> bool:
        return self.expect == "fail"

    @property
    def is_finding(self) -> bool:
        return self.kind == "finding"


class BundledChecker(NamedTuple):
    """A checker implemented by the bundle's own code (``path.py:function``)."""

    name: str
    entry: str
    reasons: Mapping[str, str]

    @property
    def key(self) -> str:
        return f"{BUNDLED_PREFIX}{self.name}"

    @property
    def path(self) -> str:
        return self.entry.rpartition(":")[0]

    @property
    def function(self) -> str:
        return self.entry.rpartition(":")[2]

    def code_files(self, paths: Iterable[str]) -> list[str]:
        """Of the bundle's ``paths``, those this code runs with: every Python file in its
        entry's folder and below (the folder is on its import path), the entry among
        them. What the verifier copies for it, and what ``diff`` compares."""
        folder = self.path.rpartition("/")[0]
        prefix = f"{folder}/" if folder else ""
        return [p for p in paths if p.startswith(prefix) and p.endswith(".py")]


class Claim(NamedTuple):
    id: str
    statement: str
    cases: tuple[str, ...]
    limits: tuple[str, ...]
    negative_control_waiver: str | None = None


@dataclass(frozen=True)
class Manifest:
    """A bundle's manifest, read strictly (``parse``) or built (``to_bytes``)."""

    name: str
    version: str
    title: str
    description: str
    environment: Mapping[str, Any]
    files: tuple[FileEntry, ...]
    cases: tuple[Case, ...]
    claims: tuple[Claim, ...]
    cannot_support: tuple[str, ...]
    format: str = FORMAT
    warnings: tuple[str, ...] = field(default=(), compare=False)
    code: tuple[BundledChecker, ...] = ()

    @property
    def top(self) -> str:
        """The one top folder of the archive."""
        return f"{self.name}-{self.version}"

    def case(self, case_id: str) -> Case:
        return self._cases_by_id[case_id]

    @functools.cached_property
    def _cases_by_id(self) -> dict[str, Case]:
        """Made once: a claim naming 40,000 cases looks each up in constant time."""
        return {c.id: c for c in self.cases}

    def to_dict(self) -> dict[str, Any]:
        def case_dict(c: Case) -> dict[str, Any]:
            out: dict[str, Any] = {
                "id": c.id,
                "checker": c.checker,
                "expect": c.expect,
                "inputs": {k: v if isinstance(v, str) else list(v) for k, v in c.inputs.items()},
                "params": dict(c.params),
            }
            if c.expect_reasons:
                out["expect_reasons"] = list(c.expect_reasons)
            if c.is_finding:  # a control is what expect = "fail" means without a kind
                out["kind"] = "finding"
            return out

        def claim_dict(c: Claim) -> dict[str, Any]:
            out: dict[str, Any] = {
                "id": c.id,
                "statement": c.statement,
                "cases": list(c.cases),
                "limits": list(c.limits),
            }
            if c.negative_control_waiver:
                out["negative_control_waiver"] = c.negative_control_waiver
            return out

        return {
            "format": self.format,
            "bundle": {
                "name": self.name,
                "version": self.version,
                "title": self.title,
                "description": self.description,
            },
            "scope": {"cannot_support": list(self.cannot_support)},
            "environment": dict(self.environment),
            "files": [{"path": f.path, "sha256": f.sha256, "size": f.size} for f in self.files],
            "cases": [case_dict(c) for c in self.cases],
            "claims": [claim_dict(c) for c in self.claims],
        } | (
            {
                "code": [
                    {"name": b.name, "entry": b.entry, "reasons": dict(b.reasons)}
                    for b in self.code
                ]
            }
            if self.code
            else {}
        )

    def bundled(self, key: str) -> BundledChecker | None:
        return next((b for b in self.code if b.key == key), None)

    def to_bytes(self) -> bytes:
        """The exact manifest bytes: what is hashed, signed and packed (tomli_w's TOML)."""
        import tomli_w  # only a build writes a manifest

        doc = self.to_dict()
        files = _toml_file_tables(self.files)
        if files is None:
            return tomli_w.dumps(doc).encode("utf-8")
        # tomli_w writes the first entry, these tables the others. Where its text is not
        # this table (another tomli_w, a short hash written inline), tomli_w writes all.
        doc["files"] = doc["files"][:1]
        text = tomli_w.dumps(doc)
        if text.count(files[0]) != 1:
            return tomli_w.dumps(self.to_dict()).encode("utf-8")
        return text.replace(files[0], "\n".join(files), 1).encode("utf-8")


# A string tomli_w writes as it is, between quotes: printable ASCII but " and \
_TOML_PLAIN = re.compile(r"[ !#-\[\]-~]*")


def _toml_file_tables(files: tuple[FileEntry, ...]) -> list[str] | None:
    """The ``[[files]]`` tables of ``files`` as tomli_w writes them, made without it (it
    escapes a string a character at a time: 60% of building 20,000 tiny files went
    there); None when there are none, or a value is not a plain string or an int."""
    if not files:
        return None
    plain = _TOML_PLAIN.fullmatch
    tables = []
    for f in files:
        if not (plain(f.path) and plain(f.sha256) and type(f.size) is int):
            return None
        tables.append(f'[[files]]\npath = "{f.path}"\nsha256 = "{f.sha256}"\nsize = {f.size}\n')
    return tables


def unbuilt_environment() -> dict[str, Any]:
    """The environment fields of a manifest-shaped document no build has stamped yet (a
    source being checked, a pre-registration): every field present, every value empty."""
    return {
        "tool": "",
        "python": "",
        "implementation": "",
        "platform": "",
        "source_date_epoch": 0,
        "checkers": {},
        "libraries": {},
    }


def identity(manifest_bytes: bytes) -> str:
    """The bundle's identity: SHA-256 of the exact manifest bytes."""
    return sha256_bytes(manifest_bytes)


@cache
def schema() -> dict[str, Any]:
    """The machine-readable v1 schema in ``manifests/``: read beside the package's
    ``__init__.py`` (importlib.resources, and the zipfile it loads, cost a few ms of every
    run; reprobundle is installed as files)."""
    import manifests

    text = Path(manifests.__path__[0], "manifest-v1.schema.json").read_text("utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema


@cache
def schema_validator() -> Draft202012Validator:
    """jsonschema's validator of the v1 schema: it explains why a manifest fails."""
    from jsonschema import Draft202012Validator

    return Draft202012Validator(schema())


@cache
def _schema_check() -> Check:
    return compile_schema(schema())


def schema_errors(doc: Any) -> list[ValidationError]:
    """Every way ``doc`` breaks the v1 schema, in document order; a valid document is
    recognised by a compiled check, and only an invalid one is walked by jsonschema."""
    if _schema_check()(doc):
        return []
    return sorted(schema_validator().iter_errors(doc), key=lambda e: list(e.path))


def dotted(parts: Iterator[Any] | list[Any] | tuple[Any, ...], root: str = "(top level)") -> str:
    """``['cases', 1, 'id']`` -> ``cases[1].id``; no parts at all is ``root``."""
    out = ""
    for part in parts:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or root


_PLAIN = (str, int, bool)


def _plainly_fine(value: Any) -> bool:
    """True when nothing below ``value`` is too deep, non-finite or of an odd type: the
    usual answer, found without building the path of every value."""
    stack = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if item and depth >= MAX_DEPTH:
            return False
        for child in item.values() if isinstance(item, dict) else item:
            kind = type(child)
            if kind in _PLAIN:
                continue
            if kind is dict or kind is list:
                stack.append((child, depth + 1))
            elif kind is not float or not math.isfinite(child):
                return False
    return True


def _depth_and_numbers(value: Any, where: tuple[Any, ...], problems: list[Problem]) -> None:
    if isinstance(value, dict | list) and _plainly_fine(value):
        return
    stack: list[tuple[Any, tuple[Any, ...]]] = [(value, where)]
    while stack:
        item, at = stack.pop()
        if len(at) > MAX_DEPTH:
            problems.append(
                Problem(dotted(at), "manifest.too_deep", f"nested deeper than {MAX_DEPTH}")
            )
            return
        if isinstance(item, float) and not math.isfinite(item):
            problems.append(
                Problem(dotted(at), "manifest.not_finite", "NaN or infinity is not allowed")
            )
        elif isinstance(item, dict):
            stack.extend((v, (*at, k)) for k, v in item.items())
        elif isinstance(item, list):
            stack.extend((v, (*at, i)) for i, v in enumerate(item))
        elif not isinstance(item, str | int | float | bool):
            problems.append(
                Problem(dotted(at), "manifest.type", f"a {type(item).__name__} is not allowed")
            )


def parse(data: bytes) -> Manifest:
    """Read manifest bytes strictly. Raises ``BundleRejected`` listing every problem."""

    def reject(code: str, message: str) -> BundleRejected:
        return BundleRejected("the manifest is not valid", [Problem(MANIFEST_NAME, code, message)])

    if data.startswith(b"\xef\xbb\xbf"):
        raise reject("manifest.bom", "starts with a byte-order mark; it must be plain UTF-8")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise reject("manifest.encoding", f"is not UTF-8 (byte {exc.start})") from None
    try:
        doc = tomli.loads(text)
    except ValueError as exc:  # a TOMLDecodeError, or an integer of over 4,300 digits
        raise reject("manifest.toml", f"is not valid TOML: {exc}") from None
    except RecursionError:
        raise reject("manifest.too_deep", "is nested too deeply to read") from None
    not_1_0 = feature_of_1_1(text) or integer_beyond_64_bits(text, doc)
    if not_1_0 is not None:
        raise reject("manifest.toml", f"is not valid TOML 1.0: {not_1_0}")

    fmt = doc.get("format")
    match = _FORMAT_RE.match(fmt) if isinstance(fmt, str) else None
    if match is None:
        raise reject(
            "manifest.format", f"format is {fmt!r}; expected 'reprobundle/<major>[.<minor>]'"
        )
    major, minor = int(match.group(1)), int(match.group(2) or 0)
    if major != FORMAT_MAJOR:
        raise BundleRejected(
            f"this bundle uses format reprobundle/{major}; this verifier reads reprobundle/"
            f"{FORMAT_MAJOR} only (upgrade reprobundle to read it)",
            [Problem(MANIFEST_NAME, "manifest.unsupported_major", f"format = {fmt!r}")],
        )
    newer = minor > FORMAT_MINOR
    warnings: list[str] = []
    if newer:
        warnings.append(
            f"the bundle uses format {fmt}, newer than reprobundle/{FORMAT_MAJOR}.{FORMAT_MINOR} "
            "which this verifier knows; fields it does not know are ignored"
        )

    problems: list[Problem] = []
    _depth_and_numbers(doc, (), problems)
    if problems:
        raise BundleRejected("the manifest is not valid", problems)

    for error in schema_errors(doc):
        if newer and error.validator == "additionalProperties":
            warnings.append(f"{dotted(list(error.path))}: {error.message} (ignored)")
            continue
        problems.append(Problem(dotted(list(error.path)), "manifest.schema", error.message))
    if problems:
        raise BundleRejected("the manifest does not follow the format", problems)

    # the rules' codes under ``manifest.`` (``manifest.path.invalid``), once: the codes of
    # the manifest's own fields (``manifest.size``, ``manifest.epoch``) already are
    problems = [
        Problem(
            dotted(where), code if code.startswith("manifest.") else f"manifest.{code}", message
        )
        for where, code, message in consistency_problems(doc)
    ]
    if problems:
        raise BundleRejected("the manifest is not consistent", problems)
    return from_dict(doc, tuple(warnings))


def from_dict(doc: Mapping[str, Any], warnings: tuple[str, ...]) -> Manifest:
    bundle = doc["bundle"]
    return Manifest(
        format=doc["format"],
        name=bundle["name"],
        version=bundle["version"],
        title=bundle["title"],
        description=bundle["description"],
        environment=doc["environment"],
        files=tuple(FileEntry(f["path"], f["sha256"], f["size"]) for f in doc["files"]),
        cases=tuple(
            Case(
                id=c["id"],
                checker=c["checker"],
                inputs={k: v if isinstance(v, str) else tuple(v) for k, v in c["inputs"].items()},
                params=c["params"],
                expect=c["expect"],
                expect_reasons=tuple(c.get("expect_reasons", ())),
                kind=c.get("kind", "control") if c["expect"] == "fail" else None,
            )
            for c in doc["cases"]
        ),
        claims=tuple(
            Claim(
                id=c["id"],
                statement=c["statement"],
                cases=tuple(c["cases"]),
                limits=tuple(c["limits"]),
                negative_control_waiver=c.get("negative_control_waiver"),
            )
            for c in doc["claims"]
        ),
        cannot_support=tuple(doc["scope"]["cannot_support"]),
        warnings=warnings,
        code=tuple(
            BundledChecker(b["name"], b["entry"], dict(b["reasons"])) for b in doc.get("code", ())
        ),
    )


Locator = tuple[str | int, ...]
_Problems = list[tuple[Locator, str, str]]


def consistency_problems(doc: Mapping[str, Any]) -> _Problems:
    """Cross-references a schema cannot express, on a manifest-shaped dict.

    Shared by the manifest reader and the source reader (which maps each locator back
    to a line of bundle.yaml), so both apply exactly the same rules.
    """
    problems: _Problems = []
    _epoch_problems(doc, problems)
    listed, dirs = _file_problems(doc, problems)
    case_ids = _case_problems(doc, listed, dirs, problems)
    _code_problems(doc, listed, problems)
    _claim_problems(doc, case_ids, problems)
    return problems


def _epoch_problems(doc: Mapping[str, Any], problems: _Problems) -> None:
    epoch = doc["environment"]["source_date_epoch"]
    if type(epoch) is not int or epoch > MAX_EPOCH:  # 3.0 passes the schema's "integer"
        problems.append(
            (
                ("environment", "source_date_epoch"),
                "manifest.epoch",
                f"must be a whole number of seconds from 0 to {MAX_EPOCH} (what a tar "
                f"header holds), observed {epoch!r}",
            )
        )


def _file_problems(doc: Mapping[str, Any], problems: _Problems) -> tuple[set[str], set[str]]:
    """Each listed path valid, unreserved and unique (as the file system folds it), and
    none both a file and a folder; returns the files and the folders they make."""
    seen: dict[str, str] = {}
    listed: set[str] = set()
    for i, entry in enumerate(doc["files"]):
        path = entry["path"]
        if type(entry["size"]) is not int:
            problems.append(
                (
                    ("files", i, "size"),
                    "manifest.size",
                    f"must be a whole number of bytes, observed {entry['size']!r}",
                )
            )
        why = path_problem(path)
        if why:
            problems.append((("files", i, "path"), "path.invalid", f"{path!r} {why}"))
            continue
        if path.split("/")[0] in (MANIFEST_NAME, SIGNATURES_DIR):
            problems.append((("files", i, "path"), "path.reserved", f"{path!r} is a reserved name"))
        key = fold(path)
        if key in seen:
            problems.append(
                (("files", i, "path"), "path.duplicate", f"{path!r} collides with {seen[key]!r}")
            )
        seen[key] = path
        listed.add(path)
    dirs = folders_of(listed)
    for clash in sorted(listed & dirs):
        problems.append(
            (("files",), "path.file_and_folder", f"{clash!r} is both a file and a folder")
        )

    return listed, dirs


def _case_problems(
    doc: Mapping[str, Any], listed: set[str], dirs: set[str], problems: _Problems
) -> dict[str, int]:
    """Unique case ids, expectations that fit, inputs that are the bundle's own files;
    returns each case id's index."""
    case_ids: dict[str, int] = {}
    for i, case in enumerate(doc["cases"]):
        if case["id"] in case_ids:
            problems.append(
                (("cases", i, "id"), "id.duplicate", f"case id {case['id']!r} is used twice")
            )
        case_ids.setdefault(case["id"], i)
        if case.get("expect_reasons") and case["expect"] != "fail":
            problems.append(
                (
                    ("cases", i, "expect_reasons"),
                    "case.expect_reasons",
                    "only a case that expects fail can name the reasons it must fail with",
                )
            )
        if "kind" in case and case["expect"] != "fail":
            problems.append(
                (
                    ("cases", i, "kind"),
                    "case.kind",
                    "only a case that expects fail is a control or a finding; "
                    "remove kind, or expect fail",
                )
            )
        elif case.get("kind") == "finding" and doc.get("format") in (FORMAT, FORMAT_WITH_CODE):
            problems.append(
                (
                    ("cases", i, "kind"),
                    "case.format",
                    f"a finding needs format {FORMAT_WITH_FINDINGS!r}",
                )
            )
        for role, ref in case["inputs"].items():
            for path in [ref] if isinstance(ref, str) else ref:
                why = path_problem(path)
                if why:
                    problems.append(
                        (("cases", i, "inputs", role), "path.invalid", f"{path!r} {why}")
                    )
                elif path not in listed and path not in dirs:
                    problems.append(
                        (
                            ("cases", i, "inputs", role),
                            "case.unlisted_input",
                            f"{path!r} is not one of the bundle's files or folders",
                        )
                    )
    return case_ids


def _code_problems(doc: Mapping[str, Any], listed: set[str], problems: _Problems) -> None:
    """Bundled code only in its format, unique names, listed entry files, and every
    ``bundle:`` checker of a case named by a code entry."""
    code_names: set[str] = set()
    if doc.get("code") and doc.get("format") == FORMAT:
        problems.append(
            (("code",), "code.format", f"bundled code needs format {FORMAT_WITH_CODE!r}")
        )
    for i, code in enumerate(doc.get("code", ())):
        if code["name"] in code_names:
            problems.append(
                (("code", i, "name"), "id.duplicate", f"code name {code['name']!r} is used twice")
            )
        code_names.add(code["name"])
        path = code["entry"].rpartition(":")[0]
        if path not in listed:
            problems.append(
                (
                    ("code", i, "entry"),
                    "code.unlisted",
                    f"{path!r} is not one of the bundle's files",
                )
            )
    for i, case in enumerate(doc["cases"]):
        name = case["checker"]
        if name.startswith(BUNDLED_PREFIX) and name[len(BUNDLED_PREFIX) :] not in code_names:
            problems.append(
                (("cases", i, "checker"), "code.unknown", f"no code entry is named {name!r}")
            )


def _claim_problems(doc: Mapping[str, Any], case_ids: dict[str, int], problems: _Problems) -> None:
    claim_ids: set[str] = set()
    for i, claim in enumerate(doc["claims"]):
        if claim["id"] in claim_ids:
            problems.append(
                (("claims", i, "id"), "id.duplicate", f"claim id {claim['id']!r} is used twice")
            )
        claim_ids.add(claim["id"])
        for j, case_id in enumerate(claim["cases"]):
            if case_id not in case_ids:
                problems.append(
                    (
                        ("claims", i, "cases", j),
                        "claim.unknown_case",
                        f"no case has id {case_id!r}{did_you_mean(case_id, case_ids)}",
                    )
                )
