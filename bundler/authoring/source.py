"""A bundle source (``bundle.yaml`` and the files it names) -> a checked build plan.

Every problem is collected and reported at once, each with ``bundle.yaml:LINE``. The
source is translated into the manifest's shape first, so the manifest schema and the
manifest's consistency rules are the same rules the author meets at build time.
"""

from __future__ import annotations

import contextlib
import difflib
import os
import re
import unicodedata
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import checkers
from bundler.authoring import foreach
from bundler.authoring.sourcewords import (
    SOURCE_NAME,
    not_a_source,
    not_nfc,
    schema_hint,
    unlisted_input,
)
from bundler.errors import Problem, SourceError, did_you_mean
from bundler.format.advisories import of_checker
from bundler.format.manifest import (
    BUNDLED_PREFIX,
    FORMAT,
    MANIFEST_NAME,
    README_NAME,
    SIGNATURES_DIR,
    Case,
    Locator,
    dotted,
    format_for,
    schema_errors,
    unbuilt_environment,
)
from bundler.format.manifest import consistency_problems as manifest_consistency
from bundler.format.paths import path_problem
from bundler.format.preregistration import FILE_NAME as PREREGISTRATION_FILE
from bundler.format.preregistration import input_names
from bundler.run.runner import call
from checkers import yamlfile
from checkers.vacuity import same_file, vacuity

_BUNDLE_KEYS = ("name", "version", "title", "description")
_PLACEHOLDER_HASH = "0" * 64

_KEYS: Mapping[Locator, tuple[str, ...]] = {
    (): (
        "name",
        "version",
        "title",
        "description",
        "files",
        "cases",
        "claims",
        "scope",
        "code",
        "preregistration",
    ),
    ("code", "*"): ("name", "entry", "reasons"),
    ("cases", "*"): (
        "id",
        "checker",
        "inputs",
        "params",
        "expect",
        "expect_reasons",
        "kind",
        foreach.EACH,
    ),
    ("claims", "*"): ("id", "statement", "cases", "limits", "negative_control_waiver"),
    ("scope",): ("cannot_support",),
}


@dataclass(frozen=True)
class SourcePlan:
    """What to pack: the source root, the files (relative paths) and the manifest-shaped
    document without environment or files (hashing the files makes that list)."""

    root: Path
    files: tuple[str, ...]
    document: Mapping[str, Any]
    skipped: tuple[str, ...] = ()  # bundle files the patterns matched: never packed
    # the source's pre-registration (``preregistration: FILE``), packed as preregistration.json
    preregistration: str | None = None


# A built bundle (or build's own temporary file of one): packing it would nest each
# build in the next when the patterns match it (``files: ["**"]``, building in place).
_BUNDLE_FILE = re.compile(r"(^|/)[^/]*\.bundle\.tar\.[^/]*$")


def is_bundle_file(rel: str) -> bool:
    return _BUNDLE_FILE.search(rel) is not None


class _Collector:
    def __init__(self, marks: Mapping[Locator, int]) -> None:
        self.marks = marks
        self.problems: list[Problem] = []
        self.case_origin: list[int] = []  # expanded case index -> its case in bundle.yaml

    def add(self, where: Locator, code: str, message: str, expanded: bool = True) -> None:
        """``where`` locates the problem in the expanded cases unless ``expanded`` is
        false (a locator in bundle.yaml as written)."""
        if expanded and where[:1] == ("cases",) and len(where) > 1:
            index = where[1]
            if isinstance(index, int) and index < len(self.case_origin):
                where = ("cases", self.case_origin[index], *where[2:])
        self.problems.append(Problem(self.where(where), code, message))

    def where(self, where: Locator) -> str:
        # the nearest enclosing node that has a line
        for end in range(len(where), -1, -1):
            line = self.marks.get(where[:end])
            if line is not None:
                return f"{SOURCE_NAME}:{line}"
        return SOURCE_NAME


def read_source(
    root: Path,
    output: Path | None = None,
    evidence: bool = True,
    accepted_advisories: Collection[str] = (),
) -> SourcePlan:
    """Read and check a bundle source folder. Raises ``SourceError`` with every problem.
    A case naming a checker version with an advisory is refused (``case.advised_checker``,
    the line to write instead) unless the advisory is among ``accepted_advisories``.
    Bundle files, and ``output`` (the file being built), are never among the files.
    Without ``evidence`` (a pre-registration, made before the inputs exist) no file is
    looked for: the files are the inputs the cases name, and ``files`` is not read."""
    root = Path(root)
    source_file = root / SOURCE_NAME
    if not root.is_dir():
        raise SourceError(not_a_source(root))
    if source_file.is_symlink() or not source_file.is_file():
        what = (
            "is a symbolic link"
            if source_file.is_symlink()
            else (
                "is missing: it does not exist"
                if not source_file.exists()
                else "is not a regular file"
            )
        )
        raise SourceError(
            f"{source_file} {what}: a bundle source is a folder holding {SOURCE_NAME} "
            f"(`reprobundle init {root}` makes one)"
        )
    try:
        text = source_file.read_text("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise SourceError(f"cannot read {source_file}: {exc}") from None
    try:
        raw, marks = yamlfile.load(text)
    except yamlfile.YamlProblem as exc:
        where = f"{SOURCE_NAME}:{exc.line}" if exc.line else SOURCE_NAME
        raise SourceError(
            f"{source_file} cannot be read", [Problem(where, "yaml", exc.message)]
        ) from None
    if not isinstance(raw, dict):
        raise SourceError(f"{source_file} must be a mapping of keys (name, version, ...)")

    out = _Collector(marks)
    _unknown_keys(raw, (), out)
    files, skipped = (
        _resolve_files(root, raw.get("files"), out, _inside(root, output)) if evidence else ([], ())
    )
    raw = _expand_templates(raw, out)
    if not evidence and isinstance(raw.get("cases"), list):
        named = [
            c for c in raw["cases"] if isinstance(c, dict) and isinstance(c.get("inputs"), dict)
        ]
        files = sorted(input_names(named))
        # bundled code exists before the evidence: its entry files are named (and fixed by
        # the pre-registration's digests, ``authoring.preregistration``)
        entries = raw["code"] if isinstance(raw.get("code"), list) else []
        files += sorted(
            {
                c["entry"].rpartition(":")[0]
                for c in entries
                if isinstance(c, dict) and isinstance(c.get("entry"), str)
            }
            - set(files)
        )
    document = _as_manifest_document(raw, files)
    _schema_problems(document, out)
    if not out.problems:
        for locator, code, message in manifest_consistency(document):
            if code == "case.unlisted_input":
                message = unlisted_input(root, message)
            out.add(_source_locator(locator), code, message)
        _checker_problems(document, out)
        _advised_checkers(document, out, accepted_advisories)
        _claim_problems(document, out)
        _unnamed_reasons(root, document, out)
    if out.problems:
        raise SourceError(f"{source_file} has {len(out.problems)} problem(s)", out.problems)
    prereg = (
        _preregistration_file(root, raw.get("preregistration"), files, out) if evidence else None
    )
    if out.problems:
        raise SourceError(f"{source_file} has {len(out.problems)} problem(s)", out.problems)
    document = {key: value for key, value in document.items() if key != "files"}
    return SourcePlan(
        root=root, files=tuple(files), document=document, skipped=skipped, preregistration=prereg
    )


def _preregistration_file(root: Path, value: Any, packed: list[str], out: _Collector) -> str | None:
    """``preregistration: FILE``: a regular file inside the source, never one it packs."""
    if value is None:
        return None
    why = path_problem(value) if isinstance(value, str) else "is not a path"
    if not why and ((root / value).is_symlink() or not (root / value).is_file()):
        why = "is not a regular file in the source folder"
    if not why and value in packed:
        why = "is also one of the files: a pre-registration is packed apart from the evidence"
    if why:
        out.add(("preregistration",), "source.preregistration", f"{value!r} {why}")
        return None
    return str(value)


def _inside(root: Path, output: Path | None) -> str | None:
    """``output`` relative to ``root`` when it lies inside it."""
    if output is None:
        return None
    try:
        return output.absolute().relative_to(root.absolute()).as_posix()
    except ValueError:
        return None


def _expand_templates(raw: dict[str, Any], out: _Collector) -> dict[str, Any]:
    """``raw`` with every case template expanded (``foreach``) and every ``*`` pattern of a
    claim's cases replaced by the ids it matches."""
    cases, out.case_origin, problems = foreach.expand_cases(raw.get("cases"))
    ids = (
        [c["id"] for c in cases if isinstance(c, dict) and isinstance(c.get("id"), str)]
        if (isinstance(cases, list))
        else []
    )
    claims, claim_problems = foreach.expand_claim_cases(raw.get("claims"), ids)
    for where, code, message in problems + claim_problems:
        out.add(where, code, message, expanded=False)
    expanded = dict(raw)
    if "cases" in raw:
        expanded["cases"] = cases
    if "claims" in raw:
        expanded["claims"] = claims
    return expanded


def _unknown_keys(raw: Mapping[str, Any], where: Locator, out: _Collector) -> None:
    for pattern, allowed in _KEYS.items():
        for node_where, node in _match(raw, pattern):
            if not isinstance(node, dict):
                continue
            for key in node:
                if key not in allowed:
                    close = difflib.get_close_matches(str(key), allowed, n=1)
                    hint = (
                        f" (did you mean {close[0]!r}?)"
                        if close
                        else f" (known: {', '.join(allowed)})"
                    )
                    out.add((*node_where, key), "source.unknown_key", f"unknown key {key!r}{hint}")


def _match(value: Any, pattern: Locator, at: Locator = ()) -> list[tuple[Locator, Any]]:
    if not pattern:
        return [(at, value)]
    head, rest = pattern[0], pattern[1:]
    if head == "*":
        if isinstance(value, list):
            return [m for i, v in enumerate(value) for m in _match(v, rest, (*at, i))]
        return []
    if isinstance(value, dict) and head in value:
        return _match(value[head], rest, (*at, head))
    return []


def glob_regex(pattern: str) -> re.Pattern[str]:
    out = ""
    i = 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out += "(?:.*/)?"
            i += 3
        elif pattern.startswith("**", i):
            out += ".*"
            i += 2
        elif pattern[i] == "*":
            out += "[^/]*"
            i += 1
        elif pattern[i] == "?":
            out += "[^/]"
            i += 1
        else:
            out += re.escape(pattern[i])
            i += 1
    # a pattern naming a folder takes everything under it
    return re.compile(f"^{out}(?:/.*)?$", re.DOTALL)


def _walk(root: Path) -> tuple[list[str], dict[str, str]]:
    """Every regular file below root, and every entry that cannot be packed (with why).

    Each folder's entries in name order, then its folders in the order the system lists
    them (as ``os.walk`` visits them). An entry's type is the one the folder listing
    gives (no ``lstat`` per file where the file system reports types); no link is followed."""
    files: list[str] = []
    refused: dict[str, str] = {}
    try:
        top = list(os.scandir(root))
    except OSError:
        return files, refused  # (as os.walk: a folder that cannot be listed is passed over)
    stack = [("", top)]
    while stack:
        rel_folder, entries = stack.pop()
        subfolders = []
        for entry in sorted(entries, key=lambda e: e.name):
            rel = entry.name if not rel_folder else f"{rel_folder}/{entry.name}"
            if entry.is_symlink():
                refused[rel] = "is a link; bundles hold regular files only"
            elif entry.is_file(follow_symlinks=False):
                files.append(rel)
            elif not entry.is_dir(follow_symlinks=False):
                refused[rel] = "is not a regular file"
        for entry in entries:
            if entry.is_dir(follow_symlinks=False) and not entry.is_symlink():
                rel = entry.name if not rel_folder else f"{rel_folder}/{entry.name}"
                with contextlib.suppress(OSError):
                    subfolders.append((rel, list(os.scandir(entry.path))))
        stack.extend(reversed(subfolders))
    return sorted(files), refused


def _resolve_files(
    root: Path, patterns: Any, out: _Collector, output: str | None = None
) -> tuple[list[str], tuple[str, ...]]:
    if not isinstance(patterns, list) or not patterns:
        out.add(("files",), "source.files", "files must be a non-empty list of glob patterns")
        return [], ()
    present, refused = _walk(root)
    for rel in [rel for rel in present if unicodedata.normalize("NFC", rel) != rel]:
        present.remove(rel)
        out.add(("files",), "path.invalid", not_nfc(rel))
    bundles = {rel for rel in present if is_bundle_file(rel) or rel == output}
    present = [rel for rel in present if rel not in bundles]
    chosen: set[str] = set()
    skipped: set[str] = set()
    for i, pattern in enumerate(patterns):
        if not isinstance(pattern, str) or not pattern:
            out.add(("files", i), "source.files", "each files entry must be a glob pattern")
            continue
        why = path_problem(pattern.replace("*", "x").replace("?", "x"))
        if why:
            out.add(("files", i), "path.invalid", f"pattern {pattern!r} {why}")
            continue
        regex = glob_regex(pattern)
        for rel, reason in refused.items():
            if regex.match(rel):
                out.add(("files", i), "path.not_regular", f"{rel!r} {reason}")
        matched = [rel for rel in present if regex.match(rel) and rel != SOURCE_NAME]
        passed_over = {rel for rel in bundles if regex.match(rel)}
        skipped |= passed_over
        if not matched and not passed_over:
            out.add(("files", i), "source.files", f"pattern {pattern!r} matches no file")
        chosen.update(matched)
    for rel in sorted(chosen):
        top = rel.split("/")[0]
        if rel in (README_NAME, PREREGISTRATION_FILE) or top in (MANIFEST_NAME, SIGNATURES_DIR):
            out.add(
                ("files",),
                "path.reserved",
                f"{rel!r} is reserved for the bundle's own use; rename it",
            )
    return sorted(chosen), tuple(sorted(skipped))


def _as_manifest_document(raw: Mapping[str, Any], files: list[str]) -> dict[str, Any]:
    """The source in the manifest's shape, with the source's defaults filled in."""

    def with_default(items: Any, key: str, default: Any) -> Any:
        if not isinstance(items, list):
            return items
        return [{key: default, **item} if isinstance(item, dict) else item for item in items]

    doc: dict[str, Any] = {
        "format": FORMAT,
        "bundle": {"description": "", **{k: raw[k] for k in _BUNDLE_KEYS if k in raw}},
        "environment": unbuilt_environment(),
        "files": [{"path": f, "sha256": _PLACEHOLDER_HASH, "size": 0} for f in files],
        "scope": raw.get("scope", {"cannot_support": []}),
    }
    if "cases" in raw:
        doc["cases"] = with_default(raw["cases"], "params", {})
        if isinstance(doc["cases"], list):
            doc["cases"] = [_without_default_kind(c) for c in doc["cases"]]
    if "claims" in raw:
        doc["claims"] = with_default(raw["claims"], "limits", [])
    if "code" in raw:
        doc["code"] = with_default(raw["code"], "reasons", {})
    doc["format"] = format_for(doc.get("cases"), "code" in raw)
    return doc


def _without_default_kind(case: Any) -> Any:
    """``kind: control`` is what a case expecting fail is anyway: the manifest leaves it
    out, so such a bundle keeps the format older verifiers know."""
    if isinstance(case, dict) and case.get("kind") == "control" and case.get("expect") == "fail":
        return {k: v for k, v in case.items() if k != "kind"}
    return case


def _source_locator(where: Locator) -> Locator:
    """Map a manifest-document locator back onto bundle.yaml's structure."""
    if where[:1] == ("bundle",):
        return where[1:]
    if where[:1] == ("files",):
        return ("files",)
    return where


def _schema_problems(document: Mapping[str, Any], out: _Collector) -> None:
    # The file entries are ours (placeholder hashes); their paths are checked by the
    # consistency rules and _resolve_files, so one stands in for all (25,000 cost 1 s).
    shown = {**document, "files": document["files"][:1]}
    for error in schema_errors(shown):
        if error.validator == "additionalProperties" or list(error.path)[:1] == ["files"]:
            continue  # reported with more help by _unknown_keys and _resolve_files
        where = _source_locator(tuple(error.path))
        out.add(where, "source.schema", f"{dotted(where)}: {schema_hint(where, error)}")


def _checker_problems(document: Mapping[str, Any], out: _Collector) -> None:
    code = {c["name"]: c for c in document.get("code", ())}
    for i, case in enumerate(document["cases"]):
        if case["checker"].startswith(BUNDLED_PREFIX):
            declared = code.get(case["checker"][len(BUNDLED_PREFIX) :], {}).get("reasons", {})
            for reason in sorted(set(case.get("expect_reasons", ())) - set(declared)):
                out.add(
                    ("cases", i, "expect_reasons"),
                    "case.unknown_reason",
                    f"{case['checker']} does not declare reason {reason!r} in its code entry"
                    + did_you_mean(reason, declared),
                )
            continue
        found = checkers.get(case["checker"])
        if found is None:
            close = difflib.get_close_matches(case["checker"], list(checkers.registry()), n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else " (see `reprobundle checkers`)"
            out.add(
                ("cases", i, "checker"),
                "case.unknown_checker",
                f"unknown checker {case['checker']!r}{hint}",
            )
            continue
        for needed in found.roles:
            if needed.name not in case["inputs"] and not needed.optional:
                out.add(
                    ("cases", i, "inputs"),
                    "case.missing_role",
                    f"{found.key} needs input {needed.name!r} ({needed.doc})",
                )
        for role_name, ref in case["inputs"].items():
            role = found.role(role_name)
            if role is None:
                known = ", ".join(r.name for r in found.roles)
                out.add(
                    ("cases", i, "inputs", role_name),
                    "case.unknown_role",
                    f"{found.key} has no input {role_name!r} (it takes: {known})",
                )
            elif role.many != (not isinstance(ref, str)):
                want = "a list of paths" if role.many else "one path"
                out.add(
                    ("cases", i, "inputs", role_name),
                    "case.role_shape",
                    f"input {role_name!r} of {found.key} takes {want}",
                )
        bound = found.bind(case["params"])
        wrong = bound.problems
        for message in wrong:
            out.add(("cases", i, "params"), "case.params", message)
        outside = () if wrong else bound.outside
        for message in outside:
            out.add(("cases", i, "params"), "case.params_out_of_range", message)
        refused = None if wrong or outside else vacuity(found, case["params"], call)
        if refused is not None:
            out.add(("cases", i, "params"), f"case.{refused.codes[0]}", refused.message)
        twice = same_file(found, case["inputs"])
        if twice:
            out.add(("cases", i, "inputs"), "case.same_file", twice)
        unknown = set(case.get("expect_reasons", ())) - set(found.all_reasons)
        for code in sorted(unknown):
            out.add(
                ("cases", i, "expect_reasons"),
                "case.unknown_reason",
                f"{found.key} never returns reason {code!r}"
                + (did_you_mean(code, found.all_reasons) or " (see `reprobundle checkers`)"),
            )


def _advised_checkers(
    document: Mapping[str, Any], out: _Collector, accepted: Collection[str]
) -> None:
    """Each case naming an advised checker version, with the line that fixes it."""
    for i, case in enumerate(document["cases"]):
        for advisory in of_checker(case["checker"]):
            if advisory.id in accepted:
                continue
            newest = advisory.fixed_in[-1]
            out.add(
                ("cases", i, "checker"),
                "case.advised_checker",
                f"case {case['id']!r}: {case['checker']} has advisory {advisory.id} "
                f"({advisory.summary}); write `checker: {newest}` on this line (check its "
                f"params with `reprobundle checkers {newest}`), or give --accept-advisory "
                f"{advisory.id} to keep {case['checker']}",
            )


def _claim_problems(document: Mapping[str, Any], out: _Collector) -> None:
    # the same rules verify applies to the outcomes
    from bundler.format.claims import check_of, claims_something

    cases = {c["id"]: _case(c) for c in document["cases"]}
    for i, claim in enumerate(document["claims"]):
        mine = [cases[c] for c in claim["cases"] if c in cases]
        if len(mine) < len(claim["cases"]):
            continue  # a case id it names is unknown (claim.unknown_case): that first
        if mine and not claims_something(mine):
            out.add(
                ("claims", i),
                "claim.nothing_claimed",
                f"claim {claim['id']!r} names only planted controls "
                f"({', '.join(c.id for c in mine)}; patterns included): they show that a "
                "checker can fail, and nothing about the subject; add a case that expects "
                "pass, or mark a real output the author judges wrong as kind: finding",
            )
            continue
        controls = {check_of(c) for c in mine if c.is_negative_control}
        needed = dict.fromkeys(check_of(c) for c in mine if not c.is_negative_control)
        missing = [check for check in needed if check not in controls]
        if missing and not claim.get("negative_control_waiver"):
            out.add(
                ("claims", i),
                "claim.no_negative_control",
                f"claim {claim['id']!r} has no negative control that runs "
                f"{'; '.join(missing)} (a case that expects fail, with the same checker and "
                "params) and no negative_control_waiver: nothing shows that check can fail; "
                "add such a case on an input where the check fails",
            )


def _case(doc: Mapping[str, Any]) -> Case:
    return Case(
        doc["id"],
        doc["checker"],
        doc["inputs"],
        doc.get("params", {}),
        doc["expect"],
        tuple(doc.get("expect_reasons", ())),
        doc.get("kind", "control" if doc["expect"] == "fail" else None),
    )


def _unnamed_reasons(root: Path, document: Mapping[str, Any], out: _Collector) -> None:
    """Every case expected to fail names its expect_reasons: the problem gives the exact
    line to add, from the verdict the case gets on the source's files (run only when
    nothing else is wrong with the source)."""
    code = {c["name"]: c for c in document.get("code", ())}
    runs = not out.problems
    for i, doc in enumerate(document["cases"]):
        if doc["expect"] != "fail" or doc.get("expect_reasons"):
            continue
        if doc["checker"].startswith(BUNDLED_PREFIX):
            entry = code.get(doc["checker"][len(BUNDLED_PREFIX) :], {})
            declared = ", ".join(entry.get("reasons", {})) or "none declared"
            hint = f"name the ones it must fail with, from its code entry's reasons ({declared})"
        elif runs:
            hint = _reasons_line(root, _case(doc), document)
        else:
            hint = f"name the ones it must fail with (see `reprobundle checkers {doc['checker']}`)"
        out.add(
            ("cases", i),
            "case.no_expect_reasons",
            f"case {doc['id']!r} expects fail but names no expect_reasons, so nothing says "
            f"what its failure shows (a failure for an unrelated reason would count); {hint}",
        )


def expect_reasons_hint(codes: Sequence[str]) -> str:
    """The line that pins the reasons an expected failure failed with, for a case that
    names none (refused when the source is read) or others (refused at home)."""
    line = f"expect_reasons: [{', '.join(codes)}]"
    return f"if that is the failure it is meant to show, give the case this line: {line}"


def _reasons_line(root: Path, case: Case, document: Mapping[str, Any]) -> str:
    """The ``expect_reasons`` line with the codes the case fails with here, or why not."""
    from bundler.format.hashing import sha256_files
    from bundler.run.runner import run_case

    found = checkers.get(case.checker)
    if found is None:
        return "name the reason codes it must fail with"
    paths = [p for ref in case.inputs.values() for p in ([ref] if isinstance(ref, str) else ref)]
    folders = tuple(p.rstrip("/") + "/" for p in paths)
    used = [
        f["path"] for f in document["files"] if f["path"] in paths or f["path"].startswith(folders)
    ]
    try:
        hashes = sha256_files([str(root / path) for path in used])
    except OSError as exc:
        return f"name the reason codes it must fail with (its inputs cannot be read: {exc})"
    listed = {path: hashed[0] for path, hashed in zip(used, hashes, strict=True)}
    verdict = run_case(case, root, listed)
    if verdict.status == "fail":
        codes = verdict.codes
        return f"it fails here with {', '.join(codes)}; {expect_reasons_hint(codes)}"
    observed = "passes" if verdict.status == "pass" else f"errors ({verdict.message})"
    return (
        f"it {observed} here; name the reasons it must fail with (see `reprobundle checkers "
        f"{found.key}`)"
    )
